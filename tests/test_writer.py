"""Writing: save round-trips, one-frame appends, the v3 lease, atomic failure (§1, §2.2)."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ctxsdk as cx
from ctxsdk.errors import LockHeld, LogRecoveryWarning, WriteError
from ctxsdk.session._codec import frame_spans

from ._fixtures import filled_fixture
from ._logs import FIXTURES, small_v3


def _v3_file(tmp_path: Path) -> Path:
    return cx.Session.from_events(*small_v3()).save(tmp_path / "s1")


def test_save_names_the_canonical_file_and_round_trips(tmp_path: Path) -> None:
    s = cx.Session.from_events(*small_v3())
    p = s.save(tmp_path / "s1")
    assert p.name == "session.v3.jsonl.zstd"
    back = cx.Session.open(p)
    assert back.raw_events == s.raw_events and back.events == s.events
    spans, torn = frame_spans(p.read_bytes())
    assert torn is None and len(spans) >= 2
    first = p.read_bytes()[spans[0][0] : spans[0][1]]
    import zstandard

    assert zstandard.ZstdDecompressor().decompressobj().decompress(first).count(b"\n") == 1
    plain = s.save(tmp_path / "copy.jsonl")
    assert cx.Session.open(plain).raw_events == s.raw_events
    with pytest.raises(WriteError, match="exists"):
        s.save(p)


@pytest.mark.skipif(not FIXTURES.is_dir(), reason="shared/data is not present")
@pytest.mark.parametrize(
    "name", sorted(p.name for p in FIXTURES.glob("*.jsonl")) if FIXTURES.is_dir() else []
)
def test_fixtures_round_trip_and_upgrade(tmp_path: Path, name: str) -> None:
    # {{cwd}} / {{tools}} filled in: the harness's migration chain refuses the placeholders.
    s = cx.Session.open(filled_fixture(FIXTURES / name, tmp_path / "src"), normalized=True)
    for target in ("a/session.jsonl", "b/session.jsonl.zstd"):
        back = cx.Session.open(s.save(tmp_path / target))
        assert back.raw_events == s.raw_events
        assert back.messages() == s.messages()
    v3 = cx.Session.open(s.save(tmp_path / "c", version=3))
    assert v3.version == 3
    assert [m.id for m in v3.messages()][1:] == [m.id for m in s.messages()]
    assert v3.messages()[0].role == "system" and v3.system_prompt == s.system_prompt


def test_append_adds_exactly_one_frame(tmp_path: Path) -> None:
    p = _v3_file(tmp_path)
    before = p.read_bytes()
    s = cx.Session.open(p)
    s2 = s.replace(3, 9, "The user asked for a listing; it showed README.md and src.", time=7)
    s3 = s2.append_to_log()
    after = p.read_bytes()
    assert after.startswith(before)
    spans_before, _ = frame_spans(before)
    spans_after, _ = frame_spans(after)
    assert len(spans_after) == len(spans_before) + 1
    assert len(s3) == len(s) + 1 and s3.pending_events == []
    assert s3.messages() == s2.messages()
    assert (p.parent / "session.lock").exists()


def test_append_refuses_a_file_changed_since_read(tmp_path: Path) -> None:
    p = _v3_file(tmp_path)
    s = cx.Session.open(p).replace(3, 3, "x")
    with p.open("ab") as f:
        f.write(b"\x00")
    changed = p.read_bytes()
    with pytest.raises(WriteError, match="changed since it was read"):
        s.append_to_log()
    assert p.read_bytes() == changed


def test_append_refuses_while_another_process_holds_the_lease(tmp_path: Path) -> None:
    p = _v3_file(tmp_path)
    lock = p.parent / "session.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl,os,sys,time\n"
            f"fd=os.open({str(lock)!r}, os.O_RDWR|os.O_CREAT)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\ntime.sleep(30)\n",
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"held"
        s = cx.Session.open(p).replace(3, 3, "x")
        before = p.read_bytes()
        with pytest.raises(LockHeld, match="held by another process"):
            s.append_to_log()
        assert p.read_bytes() == before
    finally:
        holder.kill()
        holder.wait()
    fd = os.open(lock, os.O_RDWR)  # released with the process: we can take it now
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.close(fd)


def test_failed_append_leaves_the_file_byte_identical(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = _v3_file(tmp_path)
    s = cx.Session.open(p).replace(3, 9, "x")
    before = p.read_bytes()
    real_fsync = os.fsync
    calls = {"n": 0}

    def failing_fsync(fd: int) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError(5, "simulated I/O error")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(WriteError, match="simulated"):
        s.append_to_log()
    assert p.read_bytes() == before


def test_append_repairs_a_torn_tail(tmp_path: Path) -> None:
    p = _v3_file(tmp_path)
    whole = p.read_bytes()
    spans, _ = frame_spans(whole)
    a, b = spans[1]
    p.write_bytes(whole + whole[a : b - 6])  # a torn frame after the last complete one
    with pytest.warns(LogRecoveryWarning):
        s = cx.Session.open(p)
    s2 = s.replace(3, 3, "x", time=int(time.time() * 1000))
    s3 = s2.append_to_log()
    assert s3.recovery is None
    assert p.read_bytes().startswith(whole) and len(s3) == len(s) + 1


def test_readers_never_write(tmp_path: Path) -> None:
    p = _v3_file(tmp_path)
    stat = p.stat()
    s = cx.Session.open(p)
    s.messages(), s.wire(), s.surface(), s.tokens(), s.turns(), s.validate()
    assert p.stat().st_mtime_ns == stat.st_mtime_ns and p.stat().st_size == stat.st_size
    assert sorted(x.name for x in p.parent.iterdir()) == [p.name]


def _holding(argv_code: str) -> subprocess.Popen[bytes]:
    """A child process that takes a lock (``argv_code``) and holds it until killed."""
    holder = subprocess.Popen(
        [sys.executable, "-c", argv_code + "print('held', flush=True)\ntime.sleep(30)\n"],
        stdout=subprocess.PIPE,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == b"held"
    return holder


@pytest.mark.parametrize("version", [0, 2])
def test_v0_to_v2_appends_lock_the_log_file_itself(tmp_path: Path, version: int) -> None:
    # The v0-v2 harness has no lease file; the append locks the log (flock) instead, so
    # two writers never both append at the offset they read.
    from ctxsdk.testing import LogBuilder

    b = LogBuilder(version=version)
    b.turn("hello").assistant("hi").end_turn()
    p = b.write(tmp_path / "s" / ("session" + (f".v{version}" if version else "") + ".jsonl.zstd"))
    s = cx.Session.open(p).append([{"type": "turn/start", "data": {"turn": 2}}])
    holder = _holding(
        f"import fcntl,os,time\nfd=os.open({str(p)!r}, os.O_RDONLY)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\n"
    )
    try:
        before = p.read_bytes()
        with pytest.raises(LockHeld, match="another process") as info:
            s.append_to_log()
        assert str(p) in str(info.value) and "again" in str(info.value)
        assert p.read_bytes() == before
    finally:
        holder.kill()
        holder.wait()
    after = s.append_to_log()
    assert len(after) == len(s) and after.pending_events == []
    assert sorted(x.name for x in p.parent.iterdir()) == [p.name]  # no lease file below v3


@pytest.mark.parametrize("dangling", [True, False])
def test_a_symlink_at_the_lock_path_is_refused_not_followed(tmp_path: Path, dangling: bool) -> None:
    p = _v3_file(tmp_path)
    target = tmp_path / "elsewhere" / "victim"
    target.parent.mkdir()
    if not dangling:
        target.write_bytes(b"keep me")
    (p.parent / "session.lock").symlink_to(target)
    s = cx.Session.open(p).replace(3, 3, "x")
    before = p.read_bytes()
    with pytest.raises(WriteError, match="symbolic link") as info:
        s.append_to_log()
    assert str(p.parent / "session.lock") in str(info.value)
    assert p.read_bytes() == before
    if dangling:
        assert not target.exists()  # not created through the link
    else:
        assert target.read_bytes() == b"keep me"
        fcntl.flock(os.open(target, os.O_RDONLY), fcntl.LOCK_EX | fcntl.LOCK_NB)  # never taken


def test_a_lock_path_that_is_not_a_file_is_refused(tmp_path: Path) -> None:
    p = _v3_file(tmp_path)
    os.mkfifo(p.parent / "session.lock")
    s = cx.Session.open(p).replace(3, 3, "x")
    before = p.read_bytes()
    with pytest.raises(WriteError, match="not a regular file"):
        s.append_to_log()
    assert p.read_bytes() == before


# --- the shipped samples are read-only -------------------------------------------------------


def _sample_tree() -> dict[str, bytes]:
    from ctxsdk.samples import SAMPLES_HOME

    return {str(x): x.read_bytes() for x in SAMPLES_HOME.rglob("*") if x.is_file()}


def test_appending_to_a_shipped_sample_is_refused() -> None:
    from ctxsdk.samples import SAMPLES_HOME, sample

    before = _sample_tree()
    s = cx.Session.open(sample("fix-flaky-test"))
    last = s.surface().seqs[-1]
    with pytest.raises(WriteError, match="read-only") as info:
        s.replace(last, last, "x").append_to_log()
    assert "s.save(" in str(info.value) and str(sample("fix-flaky-test")) in str(info.value)
    # Assembly.apply() appends through the same call, so it is refused the same way.
    a = cx.Session.open(sample("long-refactor")).assemble()
    tool = next(n for n in a.session.surface() if n.message.tool_results)
    with pytest.raises(WriteError, match="read-only"):
        a.set(tool.seq, "off").apply()
    # Through a workspace over the samples' own home, too.
    ws_session = cx.Workspace(SAMPLES_HOME, cache=False).open("5f0c9a7e")
    with pytest.raises(WriteError, match="read-only"):
        ws_session.replace(last, last, "x").append_to_log()
    assert _sample_tree() == before  # not a byte written, no lease file made


def test_save_and_fork_into_the_shipped_samples_are_refused(tmp_path: Path) -> None:
    from ctxsdk.samples import sample

    before = _sample_tree()
    s = cx.Session.open(sample("fix-flaky-test"))
    with pytest.raises(WriteError, match="read-only"):
        s.save(sample("fix-flaky-test").parent / "copy.jsonl.zstd")
    with pytest.raises(WriteError, match="dest_root="):
        s.fork(child_id="kid")  # "next to the parent" is inside the package
    assert _sample_tree() == before
    child = s.fork(child_id="kid", dest_root=tmp_path / "sessions")
    assert child.parent_id == s.id and tmp_path in child.path.parents  # type: ignore[union-attr]


def test_a_copy_of_a_sample_is_writable(tmp_path: Path) -> None:
    # What the refusal tells you to do: save a copy, open it, append to it.
    from ctxsdk.samples import sample

    s = cx.Session.open(sample("fix-flaky-test"))
    copy = cx.Session.open(s.save(tmp_path / "copy"))
    last = copy.surface().seqs[-1]
    after = copy.replace(last, last, "x").append_to_log()
    assert len(after) == len(s) + 1 and after.path == copy.path
