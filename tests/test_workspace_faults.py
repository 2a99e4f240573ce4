"""A workspace listing never hangs and never dies on one bad entry (issue 9).

Every case uses real files: symlink loops, a FIFO made with ``os.mkfifo``, ``/dev/zero``
behind a symlink, zstd bombs (a hand-built frame of RLE blocks, and zeros compressed by the
zstandard package), poisoned index caches, and a log this process may not read. Cases that
could hang or eat memory if the code regressed run where a timeout (and, for memory, an
address-space limit) stops them: a thread for FIFOs (unblocked by opening the write end), a
child process for ``/dev/zero`` and the bombs.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import zstandard

import ctxsdk.session._workspace._cache as cache_mod
import ctxsdk.session._workspace._summary as summary_mod
from ctxsdk import errors
from ctxsdk.samples import SAMPLES_HOME
from ctxsdk.session._codec import read_log
from ctxsdk.session._session import Session
from ctxsdk.session._workspace import Workspace

TIMEOUT = 60.0  # seconds a listing may take here before it counts as hung


@pytest.fixture
def home(tmp_path: Path) -> Path:
    dest = tmp_path / "home"
    shutil.copytree(SAMPLES_HOME, dest)
    return dest


def _project(home: Path) -> Path:
    return next(p for p in sorted((home / "sessions").iterdir()) if p.is_dir())


def _sample_log(home: Path) -> Path:
    return sorted((home / "sessions").rglob("session*.jsonl*"))[0]


def _within(fn: Callable[[], Any], *, unblock: Callable[[], None] | None = None) -> Any:
    """``fn()`` in a thread; fail (instead of hanging the suite) when it does not return."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = fn()
        except BaseException as exc:  # re-raised below, in the test's thread
            out["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(TIMEOUT)
    if t.is_alive():
        if unblock is not None:
            unblock()
            t.join(5)
        pytest.fail(f"did not return within {TIMEOUT:.0f} s (hung)")
    if "error" in out:
        raise out["error"]
    return out["value"]


def _release_fifo(path: Path) -> Callable[[], None]:
    """Open a FIFO's write end (non-blocking) so a reader stuck in ``open`` gets EOF."""

    def release() -> None:
        with contextlib.suppress(OSError):
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))

    return release


def _bad_rows(df: Any) -> dict[str, dict[str, Any]]:
    return {r["path"]: r for r in df.to_dicts() if not r["readable"]}


# --- symlinks ----------------------------------------------------------------------------------


def test_symlink_loops_are_rows_not_a_dead_listing(home: Path) -> None:
    root = home / "sessions"
    proj = _project(home)
    os.symlink("loop-project", root / "loop-project")  # a project dir that loops
    os.symlink("loop-session", proj / "loop-session")  # a session dir that loops
    (proj / "loop-log").mkdir()
    os.symlink("session.v3.jsonl", proj / "loop-log" / "session.v3.jsonl")  # a log that loops
    df = Workspace(home, cache=False).sessions()
    bad = _bad_rows(df)
    for path in (
        root / "loop-project",
        proj / "loop-session",
        proj / "loop-log" / "session.v3.jsonl",
    ):
        row = bad[str(path)]
        assert "symlink" in row["error"] and str(path) in row["error"], row
    assert df["readable"].sum() == 4  # the good sessions are all still there


def test_a_dangling_symlink_log_is_a_row_not_hidden(home: Path) -> None:
    proj = _project(home)
    (proj / "gone").mkdir()
    os.symlink(str(home / "nowhere" / "session.v3.jsonl"), proj / "gone" / "session.v3.jsonl")
    os.symlink("nowhere-dir", proj / "gone-dir")
    df = Workspace(home, cache=False).sessions()
    bad = _bad_rows(df)
    log = bad[str(proj / "gone" / "session.v3.jsonl")]
    assert "dangling symlink" in log["error"] and log["id"] == "gone"
    assert "dangling symlink" in bad[str(proj / "gone-dir")]["error"]
    assert df["readable"].sum() == 4


# --- FIFOs and devices ---------------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_named_like_a_log_never_hangs_the_listing(home: Path) -> None:
    proj = _project(home)
    (proj / "pipe").mkdir()
    fifo = proj / "pipe" / "session.v3.jsonl"
    os.mkfifo(fifo)
    flat = proj / "flat.jsonl"  # a FIFO where the walk would report a flat log
    os.mkfifo(flat)
    ws = Workspace(home)

    def release() -> None:
        _release_fifo(fifo)()
        _release_fifo(flat)()

    df = _within(ws.sessions, unblock=release)
    bad = _bad_rows(df)
    assert "FIFO" in bad[str(fifo)]["error"] and str(fifo) in bad[str(fifo)]["error"]
    assert bad[str(fifo)]["id"] == "pipe"
    assert "FIFO" in bad[str(flat)]["error"]
    assert df["readable"].sum() == 4
    assert _within(ws.sessions, unblock=release).equals(df)  # warm: the same, still no hang

    # Opening it is a clear error too, never a blocked open().
    with pytest.raises(errors.SessionFormatError, match="FIFO"):
        _within(lambda: ws.open("pipe"), unblock=release)
    with pytest.raises(errors.SessionFormatError, match="FIFO"):
        _within(lambda: Session.open(fifo), unblock=release)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_session_dir_whose_log_is_a_fifo_is_refused_naming_it(home: Path) -> None:
    """``Session.open(dir)`` picks the log by its name, the highest canonical generation, as
    the harness and the listing do; a FIFO there is refused naming it, not passed over."""
    proj = _project(home)
    alone = proj / "alone"  # the FIFO is the only log
    alone.mkdir()
    os.mkfifo(alone / "session.v3.jsonl")
    above = proj / "above"  # a readable v3 log, and a FIFO named like a later generation
    above.mkdir()
    shutil.copy(_sample_log(home), above / "session.v3.jsonl.zstd")
    os.mkfifo(above / "session.v4.jsonl.zstd")
    for d, fifo in ((alone, alone / "session.v3.jsonl"), (above, above / "session.v4.jsonl.zstd")):
        with pytest.raises(errors.SessionFormatError) as err:
            _within(lambda d=d: Session.open(d), unblock=_release_fifo(fifo))
        assert str(err.value).startswith(f"{fifo}: is a FIFO (named pipe), not a regular file")
        row = _bad_rows(Workspace(home, cache=False).sessions())[str(fifo)]  # the listing agrees
        assert "FIFO" in row["error"], row
    below = proj / "below"  # a FIFO named like an older generation: never read, as by the harness
    below.mkdir()
    shutil.copy(_sample_log(home), below / "session.v3.jsonl.zstd")
    os.mkfifo(below / "session.v2.jsonl")
    assert _within(lambda: Session.open(below)).path == below / "session.v3.jsonl.zstd"


def test_a_session_dir_log_is_found_by_its_canonical_name_only(home: Path) -> None:
    # As the harness's parseSessionFormatLogFilename: no ".v0", no leading zeros.
    d = _project(home) / "odd-names"
    d.mkdir()
    for name in ("session.v0.jsonl.zstd", "session.v03.jsonl.zstd"):
        shutil.copy(_sample_log(home), d / name)
    with pytest.raises(errors.SessionFormatError, match="no session.jsonl"):
        Session.open(d)
    shutil.copy(_sample_log(home), d / "session.v3.jsonl.zstd")
    assert Session.open(d).path == d / "session.v3.jsonl.zstd"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_index_cache_is_not_waited_on(home: Path) -> None:
    ws = Workspace(home)
    expected = ws.sessions()
    assert ws.cache_path is not None
    ws.cache_path.unlink()
    os.mkfifo(ws.cache_path)
    df = _within(ws.sessions, unblock=_release_fifo(ws.cache_path))
    assert df.equals(expected)
    assert ws.cache_path.is_file()  # replaced by a real index file


# The cases below could read without end if they regressed: they run in a child process with a
# timeout and an address-space limit, and report what the listing (and an open) gave.

_CHILD = r"""
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
import ctxsdk as cx
from ctxsdk.session import read_log
home, target = sys.argv[1], sys.argv[2]
df = cx.Workspace(home, cache=False, progress=False).sessions()
rows = {r["path"]: {"readable": r["readable"], "error": r["error"]} for r in df.to_dicts()}
opened = None
if target:
    try:
        read_log(target)
    except Exception as exc:
        opened = [type(exc).__name__, str(exc), isinstance(exc, cx.errors.CtxError)]
# the peak of this process's own memory (VmHWM): ru_maxrss would carry the parent's peak
# across exec (a forked pytest process of a gigabyte)
peak_mb = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")) // 1024
print(json.dumps({"rows": rows, "opened": opened, "peak_mb": peak_mb}))
"""


def _child_listing(home: Path, open_too: Path | None = None) -> dict[str, Any]:
    """The default listing of ``home`` in a child (and ``read_log(open_too)`` if given)."""
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, str(home), str(open_too or "")],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the listing did not return within {TIMEOUT:.0f} s (hung)")
    assert proc.returncode == 0, proc.stderr[-3000:]
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
def test_dev_zero_behind_a_log_name_is_never_read(home: Path) -> None:
    proj = _project(home)
    (proj / "zero").mkdir()
    log = proj / "zero" / "session.v3.jsonl"
    os.symlink("/dev/zero", log)
    out = _child_listing(home, open_too=log)
    row = out["rows"][str(log)]
    assert not row["readable"] and "character device" in row["error"], row
    assert sum(r["readable"] for r in out["rows"].values()) == 4
    name, message, is_ctx = out["opened"]
    assert is_ctx and name == "SessionFormatError" and "character device" in message


# --- decompression bombs -----------------------------------------------------------------------


def _rle_bomb(total: int) -> bytes:
    """One zstd frame of RLE blocks: 4 bytes per 128 KiB of zeros (a 128 KB file inflates to
    4 GiB), no declared content size, so only counting what it decodes catches it."""
    block = 1 << 17
    n = -(-total // block)
    body = ((block << 3) | 2).to_bytes(3, "little") + b"\0"  # an RLE block, not the last
    last = ((block << 3) | 3).to_bytes(3, "little") + b"\0"
    return b"\x28\xb5\x2f\xfd\x00\x38" + body * (n - 1) + last  # window 128 KiB


def _streamed_bomb(total: int) -> bytes:
    """Zeros compressed in a stream by the zstandard package at a high level."""
    buf = io.BytesIO()
    zeros = b"\0" * (1 << 20)
    with zstandard.ZstdCompressor(level=19).stream_writer(buf, closefd=False) as w:
        for _ in range(total >> 20):
            w.write(zeros)
    return buf.getvalue()


def _bombed_session(home: Path, bomb: bytes, name: str = "bomb") -> Path:
    """A real session's log with a bomb frame appended after its complete frames."""
    proj = _project(home)
    src = _sample_log(home)
    (proj / name).mkdir()
    dest = proj / name / src.name
    dest.write_bytes(src.read_bytes() + bomb)
    return dest


def test_a_zstd_bomb_is_a_row_under_the_default_listing_cap(home: Path) -> None:
    bomb = _rle_bomb((4 << 30) + (1 << 20))
    assert len(bomb) < 140_000
    log = _bombed_session(home, bomb)
    out = _child_listing(home)
    row = out["rows"][str(log)]
    assert not row["readable"], row
    assert str(log) in row["error"] and "1 GiB" in row["error"] and "bomb" in row["error"]
    assert sum(r["readable"] for r in out["rows"].values()) == 4
    assert out["peak_mb"] < 2048  # stopped at the 1 GiB cap, not at the bomb's 4 GiB
    assert summary_mod.LISTING_MAX_BYTES == 1 << 30


def test_the_cap_is_a_parameter_of_listing_and_reading(home: Path) -> None:
    bomb = _streamed_bomb(64 << 20)
    assert len(bomb) < 64 << 10  # 64 MiB of zeros in a few KB
    log = _bombed_session(home, bomb)
    ws = Workspace(home, max_bytes=1 << 20)
    row = _bad_rows(ws.sessions())[str(log)]
    assert str(log) in row["error"] and "1 MiB" in row["error"]
    with pytest.raises(errors.SessionFormatError, match=r"more than 1 MiB") as info:
        read_log(log, max_bytes=1 << 20)
    assert info.value.path == str(log)
    # The same log under a cap above the bomb decodes its text (and then fails as a log
    # whose last frame has no newline): the cap, not the content, refused it above.
    with pytest.raises(errors.CorruptLog):
        read_log(log, max_bytes=128 << 20)
    # A plain log larger than the cap is refused before it is read.
    plain = home / "plain.jsonl"
    plain.write_bytes(b"{}\n" * 1000)
    with pytest.raises(errors.SessionFormatError, match=r"max_bytes=100\b"):
        read_log(plain, max_bytes=100)
    with pytest.raises(errors.InvalidArgument):
        Workspace(home, max_bytes=0)


def test_a_torn_bomb_frame_is_capped_too(home: Path) -> None:
    bomb = _rle_bomb(64 << 20)
    log = _bombed_session(home, bomb[:-4])  # the last block cut off: a torn final frame
    with pytest.raises(errors.SessionFormatError, match=r"more than 1 MiB"):
        read_log(log, max_bytes=1 << 20)


def test_a_cached_row_does_not_outlive_a_different_cap(home: Path) -> None:
    log = _bombed_session(home, _streamed_bomb(8 << 20))
    assert not _bad_rows(Workspace(home, max_bytes=1 << 20).sessions())[str(log)]["readable"]
    row = _bad_rows(Workspace(home, max_bytes=64 << 20).sessions())[str(log)]
    assert "max_bytes" not in row["error"]  # read again under the new cap


# --- a poisoned index cache --------------------------------------------------------------------


def _poison_first(doc: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> str:
    rel = sorted(doc["entries"])[0]
    change(doc["entries"][rel])
    return rel


def _set_row(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda e: e["row"].__setitem__(key, value)


POISONS: dict[str, Callable[[dict[str, Any]], None]] = {
    "events-a-string": _set_row("events", "many"),
    "events-huge": _set_row("events", 2**70),
    "events-u64": _set_row("events", 2**64 - 1),
    "created-huge": _set_row("created", 10**30),
    "created-negative-huge": _set_row("created", -(2**64)),
    "id-an-int": _set_row("id", 5),
    "title-a-list": _set_row("title", ["x"]),
    "seeded-a-string": _set_row("seeded", "yes"),
    "readable-an-int": _set_row("readable", 1),
    "version-a-bool": _set_row("version", True),
    "events-a-float": _set_row("events", 12.0),
    "readable-with-an-error": _set_row("error", "made up"),
    "row-missing-a-key": lambda e: e["row"].pop("version"),
    "row-extra-key": _set_row("extra", 1),
    "row-a-list": lambda e: e.__setitem__("row", [1, 2]),
    "size-a-float": lambda e: e.__setitem__("size", float(e["size"])),
    "mtime-a-string": lambda e: e.__setitem__("mtime_ns", str(e["mtime_ns"])),
    "problem-an-int": lambda e: e.__setitem__("problem", 3),
    "entry-empty": lambda e: e.clear(),
}


@pytest.mark.parametrize("poison", sorted(POISONS))
def test_a_poisoned_cache_entry_is_dropped_and_reread(
    home: Path, poison: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = Workspace(home)
    expected = ws.sessions()
    assert ws.cache_path is not None
    doc = orjson.loads(ws.cache_path.read_bytes())
    rel = _poison_first(doc, POISONS[poison])
    ws.cache_path.write_text(json.dumps(doc))  # json: ints past 64 bits too
    reads: list[Path] = []

    def counting(path: Any, **kw: Any) -> Any:
        reads.append(Path(path))
        return read_log(path, **kw)

    monkeypatch.setattr(summary_mod, "read_log", counting)
    assert ws.sessions().equals(expected)
    assert [str(p).endswith(rel) for p in reads] == [True]  # only the poisoned entry re-read
    healed = orjson.loads(ws.cache_path.read_bytes())["entries"][rel]
    assert healed == orjson.loads(orjson.dumps(healed)) and cache_mod.valid_row(healed["row"])


def test_a_cached_row_for_a_path_that_is_now_a_directory(home: Path) -> None:
    ws = Workspace(home)
    ws.sessions()
    assert ws.cache_path is not None
    log = _sample_log(home)
    rel = str(log.relative_to(home / "sessions"))
    log.unlink()
    log.mkdir()  # the log's path is now a directory; make the cache claim it is unchanged
    st = log.stat()
    doc = orjson.loads(ws.cache_path.read_bytes())
    doc["entries"][rel].update(size=st.st_size, mtime_ns=st.st_mtime_ns)
    ws.cache_path.write_bytes(orjson.dumps(doc))
    row = _bad_rows(ws.sessions())[str(log)]
    assert "a directory, not a regular file" in row["error"]


def test_a_poisoned_cache_file_is_ignored_whole(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = Workspace(home)
    expected = ws.sessions()
    assert ws.cache_path is not None
    doc = orjson.loads(ws.cache_path.read_bytes())
    for bad in ({**doc, "entries": [1, 2]}, {**doc, "reader": 7}, [doc], "x" * 100):
        ws.cache_path.write_bytes(orjson.dumps(bad))
        assert ws.sessions().equals(expected)
    monkeypatch.setattr(cache_mod, "_MAX_CACHE_BYTES", 64)  # a cache file too large to load
    ws.cache_path.write_bytes(orjson.dumps(doc))
    assert ws.sessions().equals(expected)


# --- a log this process may not read -----------------------------------------------------------

_UNREADABLE_CHILD = r"""
import json, os, sys
import ctxsdk as cx
from ctxsdk.session._session import Session
home, log, locked_dir = sys.argv[1], sys.argv[2], sys.argv[3]
ws = cx.Workspace(home, cache=False, progress=False)
ws.sessions()
try:
    Session.open(sys.argv[4]).messages()  # load what opening and failing imports lazily
    "".encode("utf-16-le").decode("utf-16-le", "surrogatepass")  # codecs load lazily
    cx.Workspace("/nonexistent-home", cache=False).sessions()
except Exception as exc:
    str(exc)
if os.geteuid() == 0:  # root reads any file: look at the files as an unprivileged user
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)

def attempt(fn):
    try:
        fn()
        return None
    except Exception as exc:
        return [type(exc).__name__, str(exc), isinstance(exc, cx.errors.CtxError),
                isinstance(exc, PermissionError)]

rows = {r["path"]: [r["readable"], r["error"], r["id"]] for r in ws.sessions().to_dicts()}
locked_id = os.path.basename(os.path.dirname(log))
out = {
    "rows": rows,
    "ws_open": attempt(lambda: ws.open(locked_id)),
    "session_open": attempt(lambda: Session.open(log)),
    "dir_open": attempt(lambda: Session.open(locked_dir)),
}
print(json.dumps(out))
"""


@pytest.fixture
def shared_home() -> Iterator[Path]:
    """A home every user can traverse (pytest's tmp_path is private to its owner)."""
    base = Path(tempfile.mkdtemp(prefix="ctxsdk-perm-"))
    try:
        base.chmod(0o755)
        home = base / "home"
        shutil.copytree(SAMPLES_HOME, home)
        for p in [home, *home.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)
        yield home
    finally:
        for p in base.rglob("*"):
            if p.is_dir() and not p.is_symlink():
                p.chmod(0o755)
        shutil.rmtree(base)


def test_a_log_nobody_may_read_is_a_row_and_an_unreadable_error(shared_home: Path) -> None:
    """chmod 000 on a log (and a session dir without search permission). Root ignores file
    modes, so under root the checks run in a child that drops to uid 65534 (nobody) after
    loading its modules; the test skips only when that is impossible."""
    if os.geteuid() == 0 and not hasattr(os, "setuid"):
        pytest.skip("running as root without a way to drop privileges")
    logs = sorted((shared_home / "sessions").rglob("session*.jsonl*"))
    locked, other, spare = logs[0], logs[1], logs[2]
    locked.chmod(0o000)
    locked_dir = other.parent
    locked_dir.chmod(0o000)
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            _UNREADABLE_CHILD,
            str(shared_home),
            str(locked),
            str(locked_dir),
            str(spare),
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd="/",
    )
    if proc.returncode != 0 and "PermissionError" in proc.stderr and "import" in proc.stderr:
        pytest.skip(f"the unprivileged child cannot load its modules: {proc.stderr[-500:]}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    readable, error, _ = out["rows"][str(locked)]
    assert not readable and "Permission denied" in error and str(locked) in error
    readable, error, _ = out["rows"][str(locked_dir)]
    assert not readable and "Permission denied" in error
    for key in ("ws_open", "session_open", "dir_open"):
        name, message, is_ctx, is_perm = out[key]
        assert (name, is_ctx, is_perm) == ("Unreadable", True, True), out[key]
        assert "permission denied" in message
    assert str(locked) in out["session_open"][1]
