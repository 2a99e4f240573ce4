"""Layout (spec §1: DSH home, projectKey, encodeSegment, file generations) and Workspace:
listing with a derived, never-authoritative index, unreadable sessions, open by prefix, lineage."""

from __future__ import annotations

import doctest
import os
import re
import shutil
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ctxsdk.session._workspace._summary as summary_mod
from ctxsdk.errors import NotFound, SessionFormatError, UnsupportedVersion
from ctxsdk.samples import SAMPLES_HOME
from ctxsdk.session import _layout as layout
from ctxsdk.session._codec import (
    canonical_file_name,
    dumps_line,
    frame_spans,
    is_session_file_name,
    read_log,
    zstd_frame,
)
from ctxsdk.session._file_writer import write_new
from ctxsdk.session._layout import (
    decode_segment,
    dsh_home,
    encode_segment,
    project_key,
    session_dir,
    sessions_root,
)
from ctxsdk.session._session import Session
from ctxsdk.session._workspace import CACHE_RELPATH, SESSION_COLUMNS, Workspace
from ctxsdk.testing import LogBuilder

FLAKY = "5f0c9a7e-2d41-4b8e-9c3a-71e2d4b6f018"
FORK = "2a7d5c90-8e34-4c1b-b6f9-0d3e82a41c75"
REFACTOR = "b93e27d4-6a15-4f0e-8d72-c40a19e5f3b6"
AUDIT = "e41b08f6-97c2-4a5d-83e0-6f1d2b9c7a34"


# --- layout: projectKey ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cwd", "key"),
    [
        ("/home/mira/src/invoicer", "--home-mira-src-invoicer--"),
        ("/home/mira/src/ledger-service", "--home-mira-src-ledger-service--"),
        ("C:\\x", "--C-x--"),  # drive colon and backslash are one separator run
        ("C:\\Users\\mira\\app", "--C-Users-mira-app--"),
        ("//srv//share:/x", "--srv-share-x--"),  # runs of separators fold to one '-'
        ("/", "--root--"),  # nothing left after stripping the leading '-'
        ("///:\\", "--root--"),
        ("-lead", "--lead--"),  # leading '-' is stripped even when it is literal
        ("a-", "--a---"),  # trailing '-' is kept
        ("~/proj", "--~007E-proj--"),  # '~' is always escaped
        ("/home/mira/my project", "--home-mira-my~0020project--"),
        ("/tmp/é", "--tmp-~00E9--"),
        ("/tmp/😀", "--tmp-~D83D~DE00--"),  # non-BMP: both surrogates escaped
        ("/home/u/.config", "--home-u-.config--"),
        ("/x/..", "--x-..--"),  # no '..' special case in projectKey
    ],
)
def test_project_key(cwd: str, key: str) -> None:
    assert project_key(cwd) == key


def test_project_key_no_cwd_and_empty() -> None:
    assert project_key(None) == "_no-cwd" == layout.NO_CWD
    with pytest.raises(ValueError, match="empty project path"):
        project_key("")


def test_project_key_truncates_the_slug_to_251() -> None:
    long = "/" + "a" * 400
    key = project_key(long)
    assert key == "--" + "a" * 251 + "--"
    assert len(key) == 255  # fits a 255-byte file name component
    # The cut is by characters of the escaped slug and may split an escape, as upstream.
    key = project_key("/" + "é" * 100)
    assert len(key) == 255
    assert key.endswith("~00--") or not key[2:-2].endswith("~00E9")
    assert key[2:-2] == ("~00E9" * 100)[:251]
    # Different long cwds can share a project dir (lossy by design).
    assert project_key("/" + "a" * 300 + "/x") == project_key("/" + "a" * 300 + "/y")


# --- layout: encodeSegment ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "encoded"),
    [
        ("5f0c9a7e-2d41-4b8e-9c3a-71e2d4b6f018", "5f0c9a7e-2d41-4b8e-9c3a-71e2d4b6f018"),
        (".", "~002E"),
        ("..", "~002E~002E"),
        ("...", "..."),  # only the whole '.' and '..' are special
        (".hidden", ".hidden"),
        ("a~b", "a~007Eb"),
        ("~002E", "~007E002E"),  # an id that looks like an escape stays distinct
        ("a/b", "a~002Fb"),
        ("..\\..\\etc", "..~005C..~005Cetc"),
        ("C:\\x", "C~003A~005Cx"),  # no separator folding in encodeSegment
        ("a//b", "a~002F~002Fb"),
        ("a\x00b", "a~0000b"),
        ("😀", "~D83D~DE00"),
        ("\ud800x", "~D800x"),  # a lone surrogate (valid in a JS string) survives
        ("{{sessionId}}", "~007B~007BsessionId~007D~007D"),
    ],
)
def test_encode_segment(raw: str, encoded: str) -> None:
    assert encode_segment(raw) == encoded
    assert decode_segment(encoded) == raw


def test_encode_segment_rejects_an_empty_id() -> None:
    with pytest.raises(ValueError, match="empty"):
        encode_segment("")


@pytest.mark.parametrize(
    "name",
    ["", "a/b", "a b", "~002e", "~00", "~00G0", "~0041", ".", "..", "~", "a~"],
)
def test_decode_segment_rejects_names_encode_never_writes(name: str) -> None:
    with pytest.raises(ValueError):
        decode_segment(name)


_units = st.lists(st.integers(0, 0xFFFF), min_size=1, max_size=40)


@given(_units)
def test_encode_segment_round_trips_any_utf16_string(units: list[int]) -> None:
    raw = b"".join(u.to_bytes(2, "little") for u in units).decode("utf-16-le", "surrogatepass")
    encoded = encode_segment(raw)
    assert decode_segment(encoded) == raw
    assert encoded not in (".", "..")
    assert "/" not in encoded and "\\" not in encoded and "\x00" not in encoded
    assert set(encoded) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-~")


@given(_units, _units)
def test_encode_segment_is_injective(a: list[int], b: list[int]) -> None:
    sa = b"".join(u.to_bytes(2, "little") for u in a).decode("utf-16-le", "surrogatepass")
    sb = b"".join(u.to_bytes(2, "little") for u in b).decode("utf-16-le", "surrogatepass")
    assert (encode_segment(sa) == encode_segment(sb)) == (sa == sb)


# --- layout: files, dirs, home -----------------------------------------------------------------


def test_canonical_file_names() -> None:
    assert canonical_file_name(0) == "session.jsonl.zstd"
    assert canonical_file_name(0, "none") == "session.jsonl"
    assert canonical_file_name(1, "none") == "session.v1.jsonl"
    assert canonical_file_name(3) == "session.v3.jsonl.zstd"
    assert canonical_file_name(12) == "session.v12.jsonl.zstd"
    with pytest.raises(ValueError):
        canonical_file_name(-1)
    for ok in ("session.jsonl", "session.jsonl.zstd", "session.v2.jsonl", "session.v3.jsonl.zstd"):
        assert is_session_file_name(ok)
    for bad in (
        "session.v0.jsonl",
        "session.v03.jsonl",
        "s.jsonl",
        "session.jsonl.gz",
        "x.v3.jsonl",
    ):
        assert not is_session_file_name(bad)


def test_session_dir_matches_the_samples_layout(tmp_path: Path) -> None:
    assert session_dir(tmp_path, "/home/mira/src/invoicer", FLAKY) == (
        tmp_path / "--home-mira-src-invoicer--" / FLAKY
    )
    assert session_dir(tmp_path, None, "..") == tmp_path / "_no-cwd" / "~002E~002E"
    log = session_dir(sessions_root(SAMPLES_HOME), "/home/mira/src/invoicer", FLAKY)
    assert (log / canonical_file_name(3)).is_file()


def test_dsh_home_resolution(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.delenv("DSH_HOME", raising=False)
    assert dsh_home() == tmp_path / "user" / ".dsh"
    for blank in ("", "   ", "\t\n"):
        monkeypatch.setenv("DSH_HOME", blank)
        assert dsh_home() == tmp_path / "user" / ".dsh"
    monkeypatch.setenv("DSH_HOME", f"  {tmp_path / 'h'}  ")
    assert dsh_home() == tmp_path / "h"
    assert dsh_home(tmp_path / "explicit") == tmp_path / "explicit"
    assert dsh_home("~/x") == tmp_path / "user" / "x"
    assert Workspace().root == tmp_path / "h" / "sessions"


def test_layout_doctests() -> None:
    result = doctest.testmod(layout)
    assert result.attempted > 5 and result.failed == 0


# --- helpers -----------------------------------------------------------------------------------


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A writable copy of the samples home."""
    dest = tmp_path / "home"
    shutil.copytree(SAMPLES_HOME, dest)
    return dest


class Reads:
    """Counts the log files the workspace decodes (a patched ``read_log``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.paths: list[Path] = []

        def counting(path: Any, **kw: Any) -> Any:
            self.paths.append(Path(path))
            return read_log(path, **kw)

        monkeypatch.setattr(summary_mod, "read_log", counting)

    def take(self) -> int:
        n = len(self.paths)
        self.paths.clear()
        return n


def _write(root: Path, b: LogBuilder, compression: Any = "zstd") -> Path:
    return b.write(b.canonical_path(root, compression), compression)


def _simple(session_id: str, *, cwd: str | None = "/w", version: int = 3, **kw: Any) -> LogBuilder:
    b = LogBuilder(version, session_id=session_id, cwd=cwd, **kw)
    return b.turn("Say hello", title="Hello").assistant(text="Hello.").end_turn()


def _rewrite_header(src: Path, dest: Path, **changes: Any) -> None:
    """Copy a zstd log with a new header frame (the header is alone in frame 1)."""
    data = src.read_bytes()
    spans, _ = frame_spans(data)
    header = {**read_log(src).header, **changes}
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(zstd_frame(dumps_line(header)) + data[spans[0][1] :])


# --- listing -----------------------------------------------------------------------------------


def test_samples_listing_columns_and_order(home: Path) -> None:
    df = Workspace(home).sessions()
    assert df.columns == list(SESSION_COLUMNS)
    utc_ms = pl.Datetime("ms", "UTC")
    assert dict(df.schema) == {
        "id": pl.Utf8,
        "title": pl.Utf8,
        "events": pl.Int64,
        "bytes": pl.Int64,
        "created": utc_ms,
        "updated": utc_ms,
        "parent": pl.Utf8,
        "origin": pl.Utf8,
        "delegation_depth": pl.Int64,
        "version": pl.Int64,
        "seeded": pl.Boolean,
        "cwd": pl.Utf8,
        "interrupted": pl.Boolean,
        "project": pl.Utf8,
        "path": pl.Utf8,
        "readable": pl.Boolean,
        "error": pl.Utf8,
        "format": pl.Utf8,
    }
    assert set(df["format"]) == {"dsh"}  # a DSH home's logs (agent homes: their format)
    assert df["id"].to_list() == [REFACTOR, AUDIT, FORK, FLAKY]  # newest last event first
    updated = df["updated"].to_list()
    assert updated == sorted(updated, reverse=True)
    rows = {r["id"]: r for r in df.to_dicts()}
    for sid, row in rows.items():
        s = Session.open(row["path"])
        assert row["title"] == s.title
        assert row["events"] == len(s)
        assert row["bytes"] == Path(row["path"]).stat().st_size
        assert row["created"].timestamp() * 1000 == s.header.created_at
        assert row["updated"].timestamp() * 1000 == s.raw_events[-1]["time"]
        assert row["parent"] == s.parent_id and row["origin"] == s.origin
        assert row["delegation_depth"] == s.delegation_depth and row["version"] == 3
        assert row["seeded"] == s.is_seeded and row["cwd"] == s.header.cwd
        assert row["project"] == project_key(s.header.cwd)
        assert row["readable"] is True and row["error"] is None
        assert row["interrupted"] is False
        assert sid == s.id
    assert rows[FORK]["seeded"] and rows[FORK]["parent"] == FLAKY
    assert rows[AUDIT]["origin"] == "subagent" and rows[AUDIT]["delegation_depth"] == 1


def test_samples_home_is_never_written(monkeypatch: pytest.MonkeyPatch) -> None:
    ws = Workspace(SAMPLES_HOME)
    assert ws.cache_path is None  # never inside the installed package
    before = sorted(p.relative_to(SAMPLES_HOME) for p in SAMPLES_HOME.rglob("*"))
    assert len(ws.sessions()) == 4
    assert sorted(p.relative_to(SAMPLES_HOME) for p in SAMPLES_HOME.rglob("*")) == before


def test_missing_home_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotFound, match="does not exist"):
        Workspace(tmp_path / "nope").sessions()
    (tmp_path / "empty").mkdir()
    df = Workspace(tmp_path / "empty").sessions()
    assert df.is_empty() and df.columns == list(SESSION_COLUMNS)


# --- the derived index -------------------------------------------------------------------------


def test_warm_listing_reads_no_log(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads = Reads(monkeypatch)
    ws = Workspace(home)
    cold = ws.sessions()
    assert reads.take() == 4
    assert ws.cache_path == home / CACHE_RELPATH and ws.cache_path.is_file()
    warm = Workspace(home).sessions()
    assert reads.take() == 0
    assert warm.equals(cold)


def test_index_file_format(home: Path) -> None:
    ws = Workspace(home)
    ws.sessions()
    assert ws.cache_path is not None
    doc = orjson.loads(ws.cache_path.read_bytes())
    assert doc["format"] == "ctxsdk.workspace-index"
    assert doc["root"] == str(home / "sessions")
    assert len(doc["entries"]) == 4
    rel = f"--home-mira-src-invoicer--/{FLAKY}/session.v3.jsonl.zstd"
    entry = doc["entries"][rel]
    st = (home / "sessions" / rel).stat()
    assert entry["size"] == st.st_size and entry["mtime_ns"] == st.st_mtime_ns
    assert entry["row"]["id"] == FLAKY and entry["row"]["events"] == 77
    # Only the index itself is in the ctxsdk dir: the temp file was renamed over it.
    assert sorted(p.name for p in ws.cache_path.parent.iterdir()) == ["index.json"]
    # Nothing was written outside <home>/storages/ctxsdk.
    assert sorted(p.name for p in home.iterdir()) == ["sessions", "storages"]
    assert sorted(p.name for p in (home / "storages").iterdir()) == ["ctxsdk"]


def test_changed_files_are_recomputed_and_removed_dropped(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = Workspace(home)
    ws.sessions()
    reads = Reads(monkeypatch)
    # Append a batch to one log (its size and mtime change).
    s = ws.open(FLAKY[:8])
    s2 = s.append(
        [
            {
                "type": "session/title",
                "data": {"title": "Renamed", "messageSeqs": [], "source": {"kind": "user"}},
            }
        ]
    )
    s2.append_to_log()
    df = ws.sessions()
    assert reads.paths == [s.path]
    reads.take()
    row = df.filter(pl.col("id") == FLAKY).row(0, named=True)
    assert row["title"] == "Renamed" and row["events"] == 78
    # Remove a session: it disappears from the listing and from the index.
    shutil.rmtree(home / "sessions" / "--home-mira-src-invoicer--" / FORK)
    df = ws.sessions()
    assert reads.take() == 0
    assert FORK not in df["id"].to_list()
    assert ws.cache_path is not None
    entries = orjson.loads(ws.cache_path.read_bytes())["entries"]
    assert len(entries) == 3 and not any(FORK in k for k in entries)


def test_same_size_rewrite_is_seen_through_mtime(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = Workspace(home)
    ws.sessions()
    reads = Reads(monkeypatch)
    path = Path(ws.find(AUDIT)["path"])
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    ws.sessions()
    assert reads.paths == [path]


@pytest.mark.parametrize(
    "garbage",
    [b"", b"{not json", b"[]", b'{"format":"other"}', b'{"format":"ctxsdk.workspace-index"}'],
)
def test_corrupt_or_foreign_index_is_ignored_and_rebuilt(
    home: Path, monkeypatch: pytest.MonkeyPatch, garbage: bytes
) -> None:
    ws = Workspace(home)
    expected = ws.sessions()
    assert ws.cache_path is not None
    ws.cache_path.write_bytes(garbage)
    reads = Reads(monkeypatch)
    assert ws.sessions().equals(expected)
    assert reads.take() == 4
    assert orjson.loads(ws.cache_path.read_bytes())["format"] == "ctxsdk.workspace-index"
    assert ws.sessions().equals(expected)
    assert reads.take() == 0


def test_bad_entries_are_recomputed(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = Workspace(home)
    expected = ws.sessions()
    assert ws.cache_path is not None
    doc = orjson.loads(ws.cache_path.read_bytes())
    keys = sorted(doc["entries"])
    doc["entries"][keys[0]] = "junk"
    doc["entries"][keys[1]]["row"] = {"id": "x"}  # missing fields
    ws.cache_path.write_bytes(orjson.dumps(doc))
    reads = Reads(monkeypatch)
    assert ws.sessions().equals(expected)
    assert reads.take() == 2


def test_refresh_ignores_the_index(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = Workspace(home)
    ws.sessions()
    assert ws.cache_path is not None
    # An entry that lies while its stat still matches is trusted (the index is keyed by
    # size + mtime_ns) until refresh=True reads the logs again.
    doc = orjson.loads(ws.cache_path.read_bytes())
    for entry in doc["entries"].values():
        entry["row"]["title"] = "stale"
    ws.cache_path.write_bytes(orjson.dumps(doc))
    assert set(ws.sessions()["title"]) == {"stale"}
    reads = Reads(monkeypatch)
    fresh = ws.sessions(refresh=True)
    assert reads.take() == 4
    assert "stale" not in set(fresh["title"])
    assert ws.sessions().equals(fresh)  # and the index was rewritten
    assert reads.take() == 0


def test_no_cache_and_explicit_cache_path(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = Reads(monkeypatch)
    ws = Workspace(home, cache=False)
    ws.sessions()
    ws.sessions()
    assert reads.take() == 8
    assert not (home / "storages").exists()
    elsewhere = tmp_path / "idx" / "my-index.json"
    Workspace(home, cache=elsewhere).sessions()
    assert elsewhere.is_file() and not (home / "storages").exists()


def test_unwritable_index_dir_does_not_break_listing(home: Path) -> None:
    (home / "storages").write_text("a file where the storages dir would be")
    df = Workspace(home).sessions()
    assert len(df) == 4 and df["readable"].all()


def test_progress_reports_only_the_sessions_read(home: Path) -> None:
    calls: list[tuple[int, int, str]] = []
    ws = Workspace(home, progress=lambda d, t, w: calls.append((d, t, w)))
    ws.sessions()
    assert calls[0] == (0, 4, "reading sessions") and calls[-1] == (4, 4, "reading sessions")
    assert [c[0] for c in calls] == [0, 1, 2, 3, 4]
    calls.clear()
    ws.sessions()
    assert calls == []
    _write(home / "sessions", _simple("new-one"))
    ws.sessions()
    assert calls == [(0, 1, "reading sessions"), (1, 1, "reading sessions")]


def test_thousand_sessions_cold_then_warm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """1,000 generated sessions (a sample log with rewritten headers): the cold listing reads
    each once, the warm one reads none (timings are in the report, never asserted)."""
    from ctxsdk.samples import sample

    src = sample("fix-flaky-test")
    root = tmp_path / "home" / "sessions"
    for i in range(1000):
        sid = f"gen-{i:04d}"
        cwd = f"/home/dev/p{i % 7}"
        _rewrite_header(
            src,
            session_dir(root, cwd, sid) / "session.v3.jsonl.zstd",
            id=sid,
            cwd=cwd,
            createdAt=1_790_000_000_000 + i,
        )
    reads = Reads(monkeypatch)
    cold = Workspace(tmp_path / "home").sessions()
    assert len(cold) == 1000 and cold["readable"].all()
    assert reads.take() == 1000
    warm = Workspace(tmp_path / "home").sessions()
    assert reads.take() == 0
    assert warm.equals(cold)
    assert cold["project"].n_unique() == 7


# --- unreadable sessions -----------------------------------------------------------------------


def _row(df: pl.DataFrame, sid: str) -> dict[str, Any]:
    rows = df.filter(pl.col("id") == sid).to_dicts()
    assert len(rows) == 1, rows
    return rows[0]


def test_unreadable_sessions_are_listed_with_their_error(home: Path) -> None:
    root = home / "sessions"
    proj = root / "--w--"
    # An unknown (newer) format generation is chosen (highest) and refused with "upgrade".
    v4 = proj / "v4-session" / "session.v4.jsonl.zstd"
    _rewrite_header(_write(root, _simple("v4-session")), v4, version=4)
    # Corrupt: a damaged byte inside a complete zstd frame before the end.
    bad = _write(root, _simple("corrupt-one"))
    data = bytearray(bad.read_bytes())
    spans, _ = frame_spans(bytes(data))
    a, b = spans[1]
    data[(a + b) // 2] ^= 0xFF
    bad.write_bytes(bytes(data))
    # Broken beyond repair: a bad JSON line in the middle of a plain log.
    plain = _write(root, _simple("broken-plain"), "none")
    lines = plain.read_bytes().split(b"\n")
    lines[3] = b'{"type": "turn/st'
    plain.write_bytes(b"\n".join(lines))
    # A torn last line is repaired on read: still readable.
    torn = _write(root, _simple("torn-tail"), "none")
    torn.write_bytes(torn.read_bytes() + b'{"type":"turn/sta')
    # A flat file and an empty session dir, both rejected by the harness.
    _write(root, _simple("flat-one"), "none").rename(proj / "flat-one.jsonl")
    (proj / "flat-one").rmdir()
    (proj / "empty-dir").mkdir()

    df = Workspace(home).sessions()
    assert len(df) == 4 + 6
    r = _row(df, "v4-session")
    assert not r["readable"] and "upgrade" in r["error"] and r["version"] == 4
    assert r["created"] is not None and r["cwd"] == "/w"  # what the header still says
    assert r["path"] == str(v4) and r["bytes"] == v4.stat().st_size
    r = _row(df, "corrupt-one")
    assert not r["readable"] and "zstd frame 2" in r["error"] and str(bad) in r["error"]
    assert r["title"] is None and r["events"] is None  # unknown, not zero
    r = _row(df, "broken-plain")
    assert not r["readable"] and "line 4" in r["error"] and "not valid JSON" in r["error"]
    r = _row(df, "torn-tail")
    assert r["readable"] and r["error"] is None and r["title"] == "Hello"
    r = _row(df, "flat-one")
    assert not r["readable"] and "flat session file" in r["error"]
    r = _row(df, "empty-dir")
    assert (
        not r["readable"]
        and "no session log" in r["error"]
        and r["path"] == str(proj / "empty-dir")
    )
    for r in df.filter(~pl.col("readable")).to_dicts():
        assert "\n" not in r["error"]
    # The reader's own error when opening one.
    ws = Workspace(home)
    with pytest.raises(UnsupportedVersion):
        ws.open("v4-")
    with pytest.raises(SessionFormatError):
        ws.open("corrupt-one")


def test_unreadable_results_are_cached_too(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = home / "sessions"
    _rewrite_header(
        _write(root, _simple("v4-session")),
        root / "--w--" / "v4-session" / "session.v4.jsonl.zstd",
        version=4,
    )
    _write(root, _simple("flat"), "none").rename(root / "--w--" / "flat.jsonl")
    (root / "--w--" / "flat").rmdir()
    _write(root, _simple("both"))
    _write(root, _simple("both"), "none")
    ws = Workspace(home)
    first = ws.sessions()
    assert (~first["readable"]).sum() == 3  # v4 (its dir keeps a v3 too: not chosen), flat, both
    reads = Reads(monkeypatch)
    peeks: list[Path] = []
    real_peek = summary_mod._peek_header

    def counting_peek(path: Path) -> dict[str, Any]:
        peeks.append(path)
        return real_peek(path)

    monkeypatch.setattr(summary_mod, "_peek_header", counting_peek)
    assert ws.sessions().equals(first)
    assert reads.take() == 0 and peeks == []
    # A problem of place is part of the entry: fix it and the same file is read again.
    (root / "--w--" / "both" / "session.v3.jsonl").unlink()
    r = _row(ws.sessions(), "both")
    assert r["readable"] and r["title"] == "Hello"
    assert reads.take() == 1


def test_fold_errors_make_a_session_unreadable(home: Path) -> None:
    """Readable means Session.open would succeed: the validating fold runs too."""
    b = _simple("bad-fold")
    path = _write(home / "sessions", b)
    log = read_log(path)
    events = [*log.events, {"type": "mystery/event", "seq": len(log.events), "time": 1, "data": {}}]
    write_new(path, log.header, events, compression="zstd", overwrite=True)
    r = _row(Workspace(home).sessions(), "bad-fold")
    assert not r["readable"] and "mystery/event" in r["error"]
    with pytest.raises(SessionFormatError):
        Session.open(path)


def test_highest_generation_wins(home: Path) -> None:
    root = home / "sessions"
    v2 = _write(root, _simple("gens", version=2))
    v3 = (
        LogBuilder(3, session_id="gens", cwd="/w")
        .turn("One", title="Newer")
        .assistant(text="A")
        .end_turn()
    )
    v3.turn("Two").assistant(text="B").end_turn()
    v3path = _write(root, v3)
    assert v2.parent == v3path.parent
    r = _row(Workspace(home).sessions(), "gens")
    assert r["path"] == str(v3path) and r["version"] == 3 and r["title"] == "Newer"


def test_one_encoding_per_root(home: Path) -> None:
    root = home / "sessions"
    z = _write(root, _simple("both"))
    n = _write(root, _simple("both"), "none")
    r = _row(Workspace(home).sessions(), "both")
    assert not r["readable"] and "a root has one encoding" in r["error"]
    r = _row(Workspace(home, compression="zstd").sessions(), "both")
    assert r["readable"] and r["path"] == str(z)
    r = _row(Workspace(home, compression="none").sessions(), "both")
    assert r["readable"] and r["path"] == str(n)
    # In a zstd root, a plain-only session dir is rejected (not silently skipped).
    df = Workspace(home, compression="none").sessions()
    assert not _row(df, FLAKY)["readable"]
    assert "other encoding" in _row(df, FLAKY)["error"]


def test_root_level_intents_are_ignored(home: Path) -> None:
    (home / "sessions" / ".relocate.abc123.json").write_text("{}")
    assert len(Workspace(home).sessions()) == 4


# --- open by prefix ----------------------------------------------------------------------------


def test_open_by_unique_prefix(home: Path) -> None:
    ws = Workspace(home)
    s = ws.open("5f0c")
    assert s.id == FLAKY and s.path is not None
    assert ws.open(FLAKY).id == FLAKY


def test_open_unknown_prefix_names_it(home: Path) -> None:
    with pytest.raises(NotFound, match="'zzz'") as exc:
        Workspace(home).open("zzz")
    assert isinstance(exc.value, KeyError)
    with pytest.raises(NotFound):
        Workspace(home).open("")


def test_open_ambiguous_prefix_lists_the_candidates(home: Path) -> None:
    root = home / "sessions"
    for sid in ("abc-1", "abc-2", "abc"):
        _write(root, _simple(sid))
    ws = Workspace(home)
    with pytest.raises(NotFound, match="ambiguous") as exc:
        ws.open("ab")
    msg = str(exc.value)
    assert "abc-1" in msg and "abc-2" in msg and "'Hello'" in msg and "3 sessions" in msg
    assert ws.open("abc").id == "abc"  # an exact id wins over the ids it prefixes
    assert ws.open("abc-2").id == "abc-2"


def test_duplicate_ids_are_reported(home: Path) -> None:
    src = home / "sessions" / "--home-mira-src-invoicer--" / FLAKY
    shutil.copytree(src, home / "sessions" / "--elsewhere--" / FLAKY)
    with pytest.raises(NotFound, match="2 sessions have the id"):
        Workspace(home).open(FLAKY)


# --- lineage -----------------------------------------------------------------------------------


def test_children_with_kind(home: Path) -> None:
    ws = Workspace(home)
    kids = ws.children(FLAKY[:6])
    assert kids["id"].to_list() == [FORK] and kids["kind"].to_list() == ["fork"]
    kids = ws.children(REFACTOR)
    assert kids["id"].to_list() == [AUDIT] and kids["kind"].to_list() == ["subagent"]
    assert ws.children(AUDIT).is_empty()
    assert "kind" in ws.children(AUDIT).columns


def test_parents_chain(home: Path) -> None:
    root = home / "sessions"
    # A subagent of the fork: chain subagent -> fork -> root.
    grand = LogBuilder(
        3,
        session_id="grandchild",
        cwd="/home/mira/src/invoicer",
        parent=FORK,
        origin="subagent",
        delegation_depth=1,
        created_at=1_790_300_000_000,
    )
    _write(root, grand.turn("Check").assistant(text="ok").end_turn())
    ws = Workspace(home)
    chain = ws.parents("grandchild")
    assert chain["id"].to_list() == [FORK, FLAKY]
    assert chain["depth"].to_list() == [1, 2]
    assert ws.parents(FLAKY).is_empty()
    assert ws.children(FORK)["kind"].to_list() == ["subagent"]


def test_missing_parent_is_shown_not_hidden(home: Path) -> None:
    root = home / "sessions"
    _write(
        root,
        LogBuilder(3, session_id="orphan", cwd="/w", parent="gone-parent")
        .turn("x")
        .assistant(text="y")
        .end_turn(),
    )
    ws = Workspace(home)
    chain = ws.parents("orphan")
    assert chain["id"].to_list() == ["gone-parent"]
    assert chain["readable"].to_list() == [False]
    assert "not in this workspace" in chain["error"][0]
    # children() of an id only a child still names works too.
    assert ws.children("gone-parent")["id"].to_list() == ["orphan"]
    tree = ws.tree("orphan")
    assert tree.missing_parent == "gone-parent" and tree.root.id == "orphan"
    assert "gone-parent: parent not in this workspace" in str(tree)


def test_parent_cycle_terminates(home: Path) -> None:
    root = home / "sessions"
    for sid, parent in (("cyc-a", "cyc-b"), ("cyc-b", "cyc-a")):
        _write(
            root,
            LogBuilder(3, session_id=sid, cwd="/w", parent=parent)
            .turn("x")
            .assistant(text="y")
            .end_turn(),
        )
    ws = Workspace(home)
    assert ws.parents("cyc-a")["id"].to_list() == ["cyc-b"]
    assert len(ws.tree("cyc-a")) == 2


def test_tree(home: Path) -> None:
    root = home / "sessions"
    grand = LogBuilder(
        3,
        session_id="grandchild",
        cwd="/home/mira/src/invoicer",
        parent=FORK,
        origin="subagent",
        delegation_depth=1,
        created_at=1_790_300_000_000,
    )
    _write(root, grand.turn("Check").assistant(text="ok").end_turn())
    ws = Workspace(home)
    tree = ws.tree("grandchild")
    assert tree.root.id == FLAKY and tree.focus == "grandchild" and tree.missing_parent is None
    assert [(d, n.id, n.kind) for d, n in tree.root.walk()] == [
        (0, FLAKY, "root"),
        (1, FORK, "fork"),
        (2, "grandchild", "subagent"),
    ]
    text = str(tree)
    assert text.splitlines()[0].startswith("5f0c9a7e")
    assert "[fork] 2a7d5c90" in text and "[subagent] grandchi " in text and "<--" in text
    df = tree.to_polars()
    assert df["parent"].to_list() == [None, FLAKY, FORK] and df["depth"].to_list() == [0, 1, 2]
    sub = ws.tree(FORK, from_root=False)
    assert sub.root.id == FORK and len(sub) == 2
    assert tree.find(FORK).kind == "fork"
    with pytest.raises(NotFound):
        tree.find(AUDIT)
    assert [n.id for n in ws.tree(AUDIT)] == [REFACTOR, AUDIT]


def test_public_classes_name_their_public_module() -> None:
    import ctxsdk as cx
    from ctxsdk.session._workspace import LineageNode, SessionTree

    assert Workspace.__module__ == "ctxsdk" and cx.Workspace is Workspace
    assert LineageNode.__module__ == SessionTree.__module__ == "ctxsdk.session"


def test_unusable_homes_raise_not_found(tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    (tmp_path / "flat" / "sessions").parent.mkdir()
    (tmp_path / "flat" / "sessions").write_bytes(b"")  # the session root is a file
    for home in (loop, tmp_path / "nul\0byte", tmp_path / "flat"):
        with pytest.raises(NotFound) as err:
            Workspace(home).sessions()
        assert "DSH home" in str(err.value) or "session root" in str(err.value)


@pytest.mark.parametrize("bad", ["", None, 5, ["x"]])
def test_lineage_of_a_non_id_is_not_found(home: Path, bad: Any) -> None:
    ws = Workspace(home)
    for call in (ws.children, ws.parents, ws.tree, ws.find):
        with pytest.raises(NotFound):
            call(bad)


# --- adding a session --------------------------------------------------------------------------


def _raw(s: Session) -> list[dict[str, Any]]:
    return [dict(e) for e in s.raw_events]


def test_add_places_an_imported_session_where_the_harness_keeps_it(tmp_path: Path) -> None:
    from ctxsdk.session.importers import from_messages

    s = from_messages(
        [{"role": "user", "content": "Place me"}, {"role": "assistant", "content": "OK"}]
    )
    assert s.path is None  # in memory, straight from an importer
    ws = Workspace(tmp_path / "home")  # a home that does not exist yet
    added = ws.add(s)
    expected = session_dir(ws.root, s.header.cwd, s.id) / canonical_file_name(3)
    assert added.path == expected and expected.is_file()
    assert _raw(added) == _raw(s)
    rows = ws.sessions().to_dicts()
    assert [r["id"] for r in rows] == [s.id] and rows[0]["path"] == str(expected)
    assert rows[0]["readable"] and ws.open(s.id[:8]).id == s.id


def test_add_from_a_file_lays_it_out_as_the_samples_are(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "home")
    for p in sorted((SAMPLES_HOME / "sessions").rglob("session.v3.jsonl.zstd")):
        added = ws.add(p)  # a path: opened, then placed
        assert added.path is not None
        assert added.path.relative_to(ws.root) == p.relative_to(SAMPLES_HOME / "sessions")
        assert _raw(added) == _raw(Session.open(p))
    assert sorted(ws.sessions()["id"]) == sorted(Workspace(SAMPLES_HOME).sessions()["id"])
    assert [len(ws.children(FLAKY)), len(ws.children(REFACTOR))] == [1, 1]  # lineage holds


def test_add_writes_pending_events_too(tmp_path: Path) -> None:
    s = Session.open(SAMPLES_HOME / "sessions" / "--home-mira-src-invoicer--" / FLAKY)
    edited = s.assemble().set("t1", "off").apply(write=False)  # not written anywhere yet
    assert edited.pending_events
    added = Workspace(tmp_path / "home").add(edited)
    assert len(added) == len(edited) and not added.pending_events
    assert added.tokens().total == edited.tokens().total < s.tokens().total


def test_add_refuses_an_existing_id_unless_overwrite(tmp_path: Path) -> None:
    from ctxsdk.errors import WriteError

    ws = Workspace(tmp_path / "home")
    first = ws.add(Session.from_events(*_built(_simple("same-id"))))
    assert first.path is not None
    before = first.path.read_bytes()
    two = _simple("same-id")
    two.turn("And again").assistant(text="Again.").end_turn()
    second = Session.from_events(*_built(two))
    with pytest.raises(WriteError, match="already exists at .*pass overwrite=True") as info:
        ws.add(second)
    assert str(first.path) in str(info.value)
    assert first.path.read_bytes() == before  # untouched
    replaced = ws.add(second, overwrite=True)
    assert replaced.path == first.path and len(replaced) == len(second) > len(first)
    assert len(ws.sessions()) == 1 and ws.sessions()["events"][0] == len(second)
    leftovers = [p.name for p in first.path.parent.iterdir()]
    assert sorted(leftovers) == ["session.lock", "session.v3.jsonl.zstd"]  # no temp file


def test_add_never_makes_a_home_hold_an_id_twice(home: Path) -> None:
    from ctxsdk.errors import WriteError

    ws = Workspace(home)
    flaky = ws.open(FLAKY)
    elsewhere = _simple(FLAKY, cwd="/somewhere/else")  # same id, another project dir
    moved = Session.from_events(*_built(elsewhere))
    for overwrite in (False, True):
        with pytest.raises(WriteError, match=f"already exists at {re.escape(str(flaky.path))}"):
            ws.add(moved, overwrite=overwrite)
    assert not (ws.root / project_key("/somewhere/else")).exists()
    # The other encoding beside it, or a lower generation than the log there: refused too.
    with pytest.raises(WriteError, match="other encoding"):
        ws.add(flaky, compression="none", overwrite=True)
    v2 = _simple(FLAKY, cwd=flaky.header.cwd, version=2)
    with pytest.raises(WriteError, match="a higher generation"):
        ws.add(Session.from_events(*_built(v2)), overwrite=True)
    assert len(ws.sessions(refresh=True)) == 4 and ws.open(FLAKY).path == flaky.path


def test_add_beside_a_lower_generation_is_what_a_migration_does(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "home")
    v2 = ws.add(Session.from_events(*_built(_simple("gen", version=2))))
    assert v2.path is not None
    before = v2.path.read_bytes()
    upgraded = Session.open(v2.save(tmp_path / "upgraded", version=3))
    v3 = ws.add(upgraded, overwrite=True)
    assert v3.path is not None and v3.path.parent == v2.path.parent and v3.version == 3
    assert v2.path.read_bytes() == before  # the older generation stays, as the harness keeps it
    assert _row(ws.sessions(), "gen")["path"] == str(v3.path)


def _built(b: LogBuilder) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    return b.header, b.events


def test_add_to_the_samples_home_is_refused(tmp_path: Path) -> None:
    from ctxsdk.errors import WriteError
    from ctxsdk.session.importers import from_messages

    before = sorted(p.relative_to(SAMPLES_HOME) for p in SAMPLES_HOME.rglob("*"))
    s = from_messages([{"role": "user", "content": "not into the package"}])
    with pytest.raises(WriteError, match="read-only; add it to a DSH home of your own"):
        Workspace(SAMPLES_HOME).add(s)
    assert sorted(p.relative_to(SAMPLES_HOME) for p in SAMPLES_HOME.rglob("*")) == before


def test_a_failed_add_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    import ctxsdk.session._file_writer as fw
    from ctxsdk.errors import WriteError

    def full(fd: int, data: bytes, offset: int | None = None) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fw, "_write_all", full)
    home = tmp_path / "home"
    (home / "sessions").mkdir(parents=True)
    s = Session.from_events(*_built(_simple("no-space")))
    with pytest.raises(WriteError) as info:
        Workspace(home).add(s)
    assert "session.v3.jsonl.zstd" in str(info.value)
    assert list((home / "sessions").iterdir()) == []  # no project dir, no temp file


def test_overwriting_a_live_v3_session_waits_for_no_one(home: Path) -> None:
    from ctxsdk.errors import LockHeld
    from ctxsdk.session._file_writer import session_lock

    ws = Workspace(home)
    s = ws.open(FLAKY)
    assert s.path is not None
    before = s.path.read_bytes()
    with session_lock(s.path.parent), pytest.raises(LockHeld, match="held by another process"):
        ws.add(s, overwrite=True)
    assert s.path.read_bytes() == before
