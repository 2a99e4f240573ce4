"""Format detection (``detect_format``), ``Session.open_any`` and ``ctxsdk import PATH``:
every real file of the agent-sessions corpus is detected as its folder's format and opens;
hostile input gets a located ``ImportFormatError``, never a traceback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import zstandard

from ctxsdk import Session
from ctxsdk.errors import CtxError, ImportFormatError, NotFound
from ctxsdk.session._foreign._detect import DETECT_BYTES, DETECTABLE
from ctxsdk.session.importers import FORMATS, detect_format

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "data" / "agent-sessions"
_NOT_LOGS = (
    "README",
    "PROVENANCE",
    "FORMAT.md",
    "LICENSES",
    "manifest.json",
    "results_summary.json",
    ".input.json",
    "FIXTURES_README",
    "FIXTURE_README",
)


def _corpus_files() -> list[str]:
    if not CORPUS.is_dir():
        return []
    out = []
    for p in sorted(CORPUS.rglob("*")):
        rel = p.relative_to(CORPUS).as_posix()
        if p.is_file() and not any(n in rel for n in _NOT_LOGS):
            out.append(rel)
    return out


REAL = _corpus_files()
needs_corpus = pytest.mark.skipif(not REAL, reason="the shared agent-sessions corpus is absent")


def test_the_corpus_has_every_format() -> None:
    if not REAL:
        pytest.skip("the shared agent-sessions corpus is absent")
    folders = {rel.split("/")[0] for rel in REAL}
    assert folders == {
        "aider",
        "claude-code",
        "codex",
        "dsh",
        "gemini-cli",
        "mini-swe-agent",
        "openhands",
        "swe-agent",
    }
    assert len(REAL) >= 90


@needs_corpus
@pytest.mark.parametrize("rel", REAL)
def test_every_real_file_is_detected_as_its_folder(rel: str) -> None:
    assert detect_format(CORPUS / rel) == rel.split("/")[0]


@needs_corpus
@pytest.mark.parametrize("rel", REAL)
def test_every_real_file_opens_with_open_any(rel: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DSH fixtures' invariant notes are not the point
        s = Session.open_any(CORPUS / rel)
    assert len(s) > 0 and s.messages()


def test_a_dsh_session_directory_and_a_zstd_log(tmp_path: Path) -> None:
    s = Session.open_any(_dsh_log(tmp_path))
    d = tmp_path / "sess"
    d.mkdir()
    s.save(d / "session.v3.jsonl.zstd")
    assert detect_format(d) == "dsh"
    assert detect_format(d / "session.v3.jsonl.zstd") == "dsh"
    assert Session.open_any(d).id == s.id


def _dsh_log(tmp_path: Path) -> Path:
    msgs = [{"role": "user", "content": "Say hello"}, {"role": "assistant", "content": "Hello."}]
    return Session.from_messages(msgs).save(tmp_path / "one.jsonl")


# --- shapes without the corpus -----------------------------------------------------------------


def _write(tmp_path: Path, name: str, doc: object) -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return p


@pytest.mark.parametrize(
    ("doc", "fmt"),
    [
        ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}], "openai"),
        ({"messages": [{"role": "system", "content": "be brief"}]}, "openai"),
        (
            [
                {"role": "user", "content": "ls"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t", "name": "ls", "input": {}}],
                },
            ],
            "anthropic",
        ),
        ({"system": "be brief", "messages": [{"role": "user", "content": "hi"}]}, "anthropic"),
        ([{"sample_id": "conv-1", "conversation": {}, "qa": []}], "locomo"),
        ([{"id": 0, "source": "user", "action": "message", "args": {}}], "openhands"),
        ({"sessionId": "s", "projectHash": "h", "messages": []}, "gemini-cli"),
        ({"info": {"mini_version": "1.0"}, "messages": []}, "mini-swe-agent"),
        ({"environment": "x", "trajectory": [], "history": []}, "swe-agent"),
    ],
)
def test_json_shapes(tmp_path: Path, doc: object, fmt: str) -> None:
    assert detect_format(_write(tmp_path, "any-name.json", doc)) == fmt


def test_the_name_does_not_decide(tmp_path: Path) -> None:
    doc = [{"role": "user", "content": "hi"}]
    assert detect_format(_write(tmp_path, "rollout-x.traj", doc)) == "openai"


def test_json_lines_shapes(tmp_path: Path) -> None:
    p = tmp_path / "chat.jsonl"
    p.write_text('{"role": "user", "content": "hi"}\n{"role": "tool", "content": "ok"}\n')
    assert detect_format(p) == "openai"
    p.write_text('{"type":"summary","summary":"x","leafUuid":"u"}\n{"type":"x"}\n')
    assert detect_format(p) == "claude-code"
    p.write_text('{"timestamp":"t","type":"session_meta","payload":{}}\n{"type":"event_msg"')
    assert detect_format(p) == "codex"  # a torn last line is the importer's to report


def test_a_document_longer_than_the_prefix_is_read_leniently(tmp_path: Path) -> None:
    pad = "x" * (DETECT_BYTES + 10)
    cases = {
        "openhands": [{"id": 0, "source": "user", "action": "message", "args": {"content": pad}}],
        "swe-agent": {"trajectory": [{"action": "ls", "observation": pad}], "history": []},
        "gemini-cli": {"sessionId": "s", "startTime": "t", "messages": [{"content": pad}]},
        "mini-swe-agent": {"info": {"mini_version": "1"}, "messages": [{"content": pad}]},
    }
    for fmt, doc in cases.items():
        assert detect_format(_write(tmp_path, f"{fmt}.json", doc)) == fmt
    p = tmp_path / "long-first-line.jsonl"  # a Claude Code record longer than the prefix
    p.write_text(json.dumps({"parentUuid": None, "uuid": "u", "message": {"content": pad}}) + "\n")
    assert detect_format(p) == "claude-code"


# --- hostile input -----------------------------------------------------------------------------


HOSTILE: dict[str, bytes] = {
    "empty": b"",
    "whitespace": b"  \n\t\n",
    "binary": bytes(range(256)) * 4,
    "not-utf8": b"\xff\xfe\xfd plain",
    "a-number": b"42",
    "a-string": b'"hello"',
    "an-empty-list": b"[]",
    "a-list-of-ints": b"[1, 2, 3]",
    "another-shape": json.dumps({"total": 3, "passed": 3, "instances": {}}).encode(),
    "truncated-first-line": b'{"type":"session","version":3,"id":"ab',
    "truncated-list": b'[{"role": "user", "content": "hi"}, {"role": ',
    "broken-json-lines": b'{"a": 1}\n{nope}\n{"b": 2}\n',
    "markdown": b"# A README\n\nNothing here.\n",
    "zstd-junk": b"\x28\xb5\x2f\xfd" + b"\x00" * 64,
    "zstd-not-dsh": zstandard.ZstdCompressor().compress(b'{"role":"user"}\n'),
    "deep": b"[" * 100_000,
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_input_gets_a_located_error(tmp_path: Path, name: str) -> None:
    p = tmp_path / f"{name}.json"
    p.write_bytes(HOSTILE[name])
    with pytest.raises(ImportFormatError) as caught:
        detect_format(p)
    text = str(caught.value)
    assert str(p) in text and "Known formats" in text and "--format NAME" in text
    assert "\n" not in text
    with pytest.raises(ImportFormatError):
        Session.open_any(p)


def test_an_empty_directory_and_one_of_other_files(tmp_path: Path) -> None:
    d = tmp_path / "nothing"
    d.mkdir()
    with pytest.raises(ImportFormatError, match="an empty directory.*agent_home"):
        detect_format(d)
    (d / "notes.txt").write_text("x")
    with pytest.raises(ImportFormatError, match="a directory of 1 entries"):
        Session.open_any(d)


def test_a_missing_path_and_a_fifo(tmp_path: Path) -> None:
    with pytest.raises(NotFound, match="no such file"):
        detect_format(tmp_path / "absent.json")
    if not hasattr(os, "mkfifo"):
        return
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(ImportFormatError, match="FIFO"):
        detect_format(fifo)  # refused at once, never waited on


def test_a_named_format_skips_detection(tmp_path: Path) -> None:
    p = _write(tmp_path, "chat.json", [{"role": "user", "content": "hi"}])
    assert Session.open_any(p, format="anthropic").messages()
    with pytest.raises(ImportFormatError, match="unknown format 'nope'"):
        Session.open_any(p, format="nope")
    with pytest.raises(ImportFormatError, match="Gemini CLI"):
        Session.open_any(p, format="gemini-cli")  # the importer says what it cannot read


def test_detectable_covers_the_importers() -> None:
    assert set(FORMATS) | {"dsh"} == set(DETECTABLE)
    assert issubclass(ImportFormatError, CtxError)


# --- the CLI -----------------------------------------------------------------------------------


def _cli(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctxsdk", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


def test_cli_import_detects_the_format(tmp_path: Path) -> None:
    chat = _write(tmp_path, "chat.json", [{"role": "user", "content": "hi"}])
    done = _cli("import", chat, "-o", tmp_path / "a.jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert Session.open(tmp_path / "a.jsonl").messages()
    named = _cli("import", "--format", "anthropic", chat, "-o", tmp_path / "b.jsonl", cwd=tmp_path)
    assert named.returncode == 0, named.stderr
    legacy = _cli("import", "openai", chat, "-o", tmp_path / "c.jsonl", cwd=tmp_path)
    assert legacy.returncode == 0, legacy.stderr
    dsh = _cli("import", _dsh_log(tmp_path), "-o", tmp_path / "d.jsonl", cwd=tmp_path)
    assert dsh.returncode == 0, dsh.stderr


def test_cli_import_errors_are_one_line(tmp_path: Path) -> None:
    chat = _write(tmp_path, "chat.json", [{"role": "user", "content": "hi"}])
    empty = tmp_path / "empty.json"
    empty.write_bytes(b"")
    out = tmp_path / "x.jsonl"
    for args, expect in (
        ((empty, "-o", out), "cannot tell which agent"),
        (("openai", chat, "--format", "openai", "-o", out), "give the format once"),
        (("nope", chat, "-o", out), "unknown import format 'nope'"),
        ((chat, chat, chat, "-o", out), "one PATH"),
    ):
        done = _cli("import", *args, cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert expect in done.stderr and "Traceback" not in done.stderr
    assert not out.exists()


@needs_corpus
def test_cli_import_a_real_codex_rollout(tmp_path: Path) -> None:
    src = next(p for p in (CORPUS / "codex").glob("rollout-*.jsonl"))
    shutil.copy(src, tmp_path / "log")  # no name to go by
    done = _cli("import", tmp_path / "log", "-o", tmp_path / "out.jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert Session.open(tmp_path / "out.jsonl").messages()
