"""A lone UTF-16 surrogate in a log line, as the harness (JavaScript) writes one when it cuts a
surrogate pair: ``"text":"ab\\ud800cd"``. ``JSON.parse`` reads it, so ctxsdk does; writing keeps
the escape byte for byte; display, the polars views and Rust tokenizers show U+FFFD."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
import zstandard

import ctxsdk as cx
from ctxsdk.errors import CorruptLog, SessionFormatError
from ctxsdk.session._codec import copy_json, dumps_json, dumps_line, loads_line
from ctxsdk.testing import LogBuilder

from .test_oracle import check, oracle_home  # noqa: F401  (a fixture)

HIGH = b"ab\\ud800cd"  # a lone high surrogate, as JSON.stringify writes it
LOW = b"x\\udc00y"  # a lone low one


def _log(tmp_path: Path, version: int, compression: str, *, inject: bytes = HIGH) -> Path:
    """A builder log whose prompt holds ``inject`` (and the reply a lone low surrogate)."""
    b = LogBuilder(version=version, cwd="/w")
    b.turn("Hello PROMPT there").assistant(
        text="Reply REPLY here", tool_calls=[("bash", {"command": "ls"})]
    )
    b.tool_results(["out"]).next_step().assistant(text="done").end_turn()
    path = b.write(b.canonical_path(tmp_path, compression="none"), compression="none")
    data = path.read_bytes().replace(b"PROMPT", inject).replace(b"REPLY", LOW)
    if compression == "zstd":
        cctx = zstandard.ZstdCompressor()
        data = b"".join(cctx.compress(line) for line in data.splitlines(keepends=True))
        path.unlink()
        path = path.with_name(path.name + ".zstd")
    path.write_bytes(data)
    return path


def _plain(path: Path) -> bytes:
    data = path.read_bytes()
    if data[:4] != b"\x28\xb5\x2f\xfd":
        return data
    out, dctx = [], zstandard.ZstdDecompressor()
    while data:
        obj = dctx.decompressobj()
        out.append(obj.decompress(data))
        data = obj.unused_data
    return b"".join(out)


@pytest.mark.parametrize("compression", ["none", "zstd"])
@pytest.mark.parametrize("version", [0, 1, 3])
def test_opens_and_saves_byte_identical(tmp_path: Path, version: int, compression: str) -> None:
    path = _log(tmp_path, version, compression)
    s = cx.Session.open(path)
    texts = [cx.session.kernel.message_text(m) for m in s.messages()]
    assert "Hello ab\ud800cd there" in texts and "Reply x\udc00y here" in texts
    out = s.save(tmp_path / "out", version=version, compression="none")
    original = _plain(path).splitlines()
    saved = out.read_bytes().splitlines()
    for marker in (HIGH, LOW):
        assert [x for x in saved if marker in x] == [x for x in original if marker in x] != []
    if version == 3:
        assert saved == original  # every other line byte-identical too
    again = cx.Session.open(out)
    assert [m.model_dump() for m in again.messages()] == [m.model_dump() for m in s.messages()]
    if version < 3:
        up = cx.Session.open(s.save(tmp_path / "v3", version=3, compression="zstd"))
        assert "Hello ab\ud800cd there" in [
            cx.session.kernel.message_text(m) for m in up.messages()
        ]


def test_every_public_view_takes_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s = cx.Session.open(_log(tmp_path, 3, "zstd"))
    assert HIGH in dumps_json(s.wire("openai"))  # sent as JSON.stringify sends it
    for tok in ("estimate", "cl100k_base"):
        assert s.tokens(tok).total > 0
    print(s)
    for m in s.messages():
        print(m)
    assert "ab\ufffdcd" in capsys.readouterr().out  # display shows U+FFFD
    assert "ab\ufffdcd" in str(s.messages_df()["text"].to_list())  # polars: U+FFFD too
    for view in (s.events_df, s.surface_df, s.turns_df, s.tokens_df, s.tools_df):
        assert len(view()) > 0
    child = s.fork(dest_root=tmp_path / "fork")
    assert child.title == s.title and HIGH in _plain(child.path)  # type: ignore[arg-type]


def test_estimate_counts_a_lone_surrogate_as_one_unit(tmp_path: Path) -> None:
    a = cx.Session.open(_log(tmp_path / "a", 3, "none", inject=b"abcd\\ud800"))
    b = cx.Session.open(_log(tmp_path / "b", 3, "none", inject=b"abcd!"))
    assert a.tokens("estimate").total == b.tokens("estimate").total


@pytest.mark.parametrize("compression", ["none", "zstd"])
def test_append_to_log(tmp_path: Path, compression: str) -> None:
    s = cx.Session.open(_log(tmp_path, 3, compression))
    node = s.surface()[-1]
    after = s.replace(node.seq, node.seq, "edited \ud83d tail").append_to_log()
    assert "edited \ud83d tail" in [cx.session.kernel.message_text(m) for m in after.messages()]
    assert b"edited \\ud83d tail" in _plain(after.path)  # type: ignore[arg-type]
    assert _plain(after.path).startswith(_plain(s.path))  # type: ignore[arg-type]


def test_the_harness_reads_both(
    oracle_home: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    for version in (0, 3):
        path = _log(tmp_path / f"in{version}", version, "none")
        verdict = check(oracle_home, path, kind="surrogate input")
        assert verdict["ok"], verdict.get("error")
        s = cx.Session.open(path)
        for compression in ("none", "zstd"):
            if compression == "zstd" and shutil.which("zstd") is None:
                continue
            out = s.save(tmp_path / f"v{version}{compression}", version=3, compression=compression)  # type: ignore[arg-type]
            verdict = check(oracle_home, out, kind="surrogate")
            assert verdict["ok"], (version, compression, verdict.get("error"))
            assert verdict["events"] == len(cx.Session.open(out))


@pytest.mark.parametrize("bad", [b"ab\\ud8", b"ab\\ud8zz", b"ab\\ud800\\x"])
@pytest.mark.parametrize("where", ["last", "middle"])
def test_a_truncated_escape_is_still_refused(tmp_path: Path, bad: bytes, where: str) -> None:
    path = _log(tmp_path, 3, "none", inject=bad)
    lines = path.read_bytes().splitlines(keepends=True)
    k = next(i for i, line in enumerate(lines) if bad in line)
    if where == "last":  # nothing committed after it: a torn tail, dropped as the harness does
        path.write_bytes(b"".join(lines[: k + 1]))
        with pytest.warns(UserWarning, match="torn tail"):
            s = cx.Session.open(path)
        assert s.recovery is not None and s.recovery.kind == "torn-tail"
        assert len(s.raw_events) == k - 1
        return
    with pytest.raises(CorruptLog, match="not valid JSON") as err:
        cx.Session.open(path)
    assert err.value.line == k + 1 and str(err.value.path) == str(path)


def test_zstd_bad_escape_names_the_line(tmp_path: Path) -> None:
    path = _log(tmp_path, 3, "zstd", inject=b"ab\\ud8")
    with pytest.raises(SessionFormatError, match="not valid JSON") as err:
        cx.Session.open(path)
    assert err.value.line is not None and err.value.frame is not None


def test_codec_helpers() -> None:
    line = b'{"a":"x\\ud800y","n":1.5,"k\\udc01":[1,"\\u00e9\\\\ud800",123456789012345678901234]}'
    value = loads_line(line)
    assert value == {
        "a": "x\ud800y",
        "n": 1.5,
        "k\udc01": [1, "\u00e9\\ud800", orjson.loads(b"123456789012345678901234")],
    }
    assert dumps_json(value) == line.replace(b"\\u00e9", "\u00e9".encode()).replace(
        b"123456789012345678901234", orjson.dumps(value["k\udc01"][2])
    )
    assert dumps_line(value) == dumps_json(value) + b"\n" and copy_json(value) == value
    assert dumps_line({"a": "é"}) == orjson.dumps({"a": "é"}) + b"\n"
    for bad in (b'{"a":"\\ud8"}', b'{"a":"\\ud800",NaN}', b'{"a":"\\ud800"', b'["\\ud800",1e400]'):
        with pytest.raises(orjson.JSONDecodeError):
            loads_line(bad)
    with pytest.raises(TypeError):
        dumps_json({"a": "\ud800", "b": object()})


def test_a_deep_line_with_a_surrogate_is_refused_as_deep(tmp_path: Path) -> None:
    path = _log(tmp_path, 3, "none")
    lines = path.read_bytes().splitlines(keepends=True)
    deep = b'{"type":"x","seq":0,"time":0,"d":' + b"[" * 200 + b'"\\ud800"' + b"]" * 200 + b"}\n"
    path.write_bytes(lines[0] + deep + b"".join(lines[1:]))
    with pytest.raises(SessionFormatError, match="MAX_JSON_DEPTH") as err:
        cx.Session.open(path)
    assert err.value.line == 2


def test_the_workspace_lists_it(tmp_path: Path) -> None:
    b = LogBuilder(version=3, cwd="/w")
    b.turn("Hello PROMPT", title="T PROMPT").assistant(text="x").end_turn()
    path = b.write(b.canonical_path(tmp_path / "sessions", compression="none"), compression="none")
    path.write_bytes(path.read_bytes().replace(b"PROMPT", HIGH))
    for _ in range(2):  # the first listing writes the index, the second reads it back
        df = cx.Workspace(dsh_home=tmp_path).sessions()
        assert df["title"].to_list() == ["T ab\ufffdcd"] and df["error"].to_list() == [None]
    assert cx.Workspace(dsh_home=tmp_path).open(df["id"][0]).title == "T ab\ud800cd"
