"""A fold killed at each durable step, two folds racing, a fold that runs out of room: real
processes, real faults (the seed's T01-T24 crash points, seed-algorithms §4(c)).

Each fold runs in a child process on a copy of a real log (the ``long-refactor`` sample, and
LogBuilder logs: v2 zstd, v3 plain JSONL, v0 plain JSONL). Its tracer SIGKILLs the child at
one point of the transaction: after the bundle's temp file is fsynced, after the bundle is
published, after the surface batch is appended. Afterwards, in this process: the log opens
with no recovery, the fold is wholly on disk or wholly absent (never a ``compaction/start``
without its end), an orphan bundle is reported by ``status().orphans`` and a temp file is
never taken for a bundle, every message of the old surface is on the new surface or in a
verified bundle a record names, and a fold after the crash succeeds. Damaged bundles make
recall refuse (never other bytes), search list them as unavailable and status report them.
Two processes folding one session at once: exactly one wins, the other gets ``FoldConflict``
and leaves no bundle. A file size limit (``RLIMIT_FSIZE``) that stops the bundle or the log
append: nothing half-written, the log byte-identical, a clear error.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import ctxsdk as cx
from ctxsdk import errors
from ctxsdk.fold import FileBundleStore
from ctxsdk.fold._recall import checked_bundle
from ctxsdk.fold.kernel import canonical_json
from ctxsdk.samples import sample
from ctxsdk.session.kernel import message_of
from ctxsdk.testing import LogBuilder

REPO = Path(__file__).resolve().parents[1]
LOGS = ("long-refactor", "builder-v2-zstd", "builder-v3-none", "builder-v0-none")
POINTS = ("bundle-temp-written", "bundle-published", "surface-appended")
FOLD_BATCH = [
    "compaction/start",
    "ctxsdk/fold-checkpoint",
    "compaction/summary",
    "user/message",
    "compaction/end",
]


def _batch(session: cx.Session) -> list[str]:
    """A fold's batch: v0-v2 validators refuse unknown event types, so only v3 carries the
    record (elsewhere the fold is read from the transaction itself)."""
    return FOLD_BATCH if session.version >= 3 else [t for t in FOLD_BATCH if t != FOLD_BATCH[1]]


# --- logs ------------------------------------------------------------------------------------


def _builder(version: int, turns: int = 10) -> LogBuilder:
    b = LogBuilder(version=version, cwd="/home/dev/app")
    for t in range(turns):
        b.turn(f"Step {t}: read mod{t}.py and note MARK-{t:04d}").assistant(
            f"Reading mod{t}.py.", tool_calls=[("read", {"path": f"mod{t}.py"})]
        )
        body = "".join(
            f"{t}:{i}\tdef f{t}_{i}(x): return x * {i + t}  # k{i * 7 + t}\n" for i in range(60)
        )
        b.tool_results([body]).next_step()
        b.assistant(text=f"mod{t}.py defines 60 functions; MARK-{t:04d} noted.").end_turn()
    return b


def _log(tmp_path: Path, which: str) -> Path:
    """A fresh copy of log ``which`` under ``tmp_path``, in a folder of its own."""
    if which == "long-refactor":
        src = Path(sample("long-refactor"))
        dest = tmp_path / "log" / src.name
        dest.parent.mkdir(parents=True)
        shutil.copyfile(src, dest)
        return dest
    _, v, compression = which.split("-")
    b = _builder(int(v[1:]))
    return b.write(b.canonical_path(tmp_path / "log", compression), compression)  # type: ignore[arg-type]


def _window(path: Path) -> int:
    """A window the log is over the fold threshold of, but under: a plain leaf fold."""
    total = cx.Fold(cx.Session.open(path), store=path.parent / "probe").pressure().total
    return int(total / 0.9)


def _opened(path: Path) -> cx.Session:
    """The log read as a reader must read it after a crash: no exception, no torn tail."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        s = cx.Session.open(path).validate()
    recovered = [w for w in seen if issubclass(w.category, errors.LogRecoveryWarning)]
    assert not recovered, [str(w.message) for w in recovered]
    assert s.recovery is None
    return s


def _types_after(s: cx.Session, n: int) -> list[str]:
    return [str(e["type"]) for e in s.raw_events[n:]]


def _brackets_closed(s: cx.Session) -> None:
    kinds = Counter(e["type"] for e in s.raw_events)
    assert kinds["compaction/start"] == kinds["compaction/end"], kinds
    ids = [e["data"]["compactionId"] for e in s.raw_events if e["type"] == "compaction/start"]
    ends = [e["data"]["compactionId"] for e in s.raw_events if e["type"] == "compaction/end"]
    assert ids == ends


def _key(message: Any) -> bytes:
    return canonical_json(message)


def _nothing_lost(before: cx.Session, after: cx.Session, store: Path) -> None:
    """Every message of ``before``'s surface is on ``after``'s surface, or in a verified
    bundle that one of ``after``'s records names, byte for byte."""
    on_surface = {_key(message_of(after.raw_events[n])) for n in after.index.surface_seqs()}
    f = cx.Fold(after, store=store)
    archived: set[bytes] = set()
    for rec in f.records:
        bundle = checked_bundle(rec, f.reader(), after.raw_events)
        assert bundle.logical_hash == rec.logical_hash or not rec.logical_hash
        archived |= {_key(m) for m in bundle.messages}
    for seq in before.index.surface_seqs():
        msg = _key(message_of(before.raw_events[seq]))
        assert msg in on_surface or msg in archived, f"seq {seq} is neither shown nor archived"


def _files(directory: Path) -> list[str]:
    if not directory.exists():
        return []
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file())


def _run_child(body: str, arg: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", body, json.dumps(arg)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        cwd=REPO,
        timeout=180,
        check=False,
    )


def _last_json(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


# --- crash points ----------------------------------------------------------------------------

_KILLED = r"""
import json, os, signal, sys
import ctxsdk as cx

arg = json.loads(sys.argv[1])

def tracer(point, detail):
    with open(arg["trace"], "a") as t:
        t.write(json.dumps({"point": point, **{k: str(v) for k, v in detail.items()}}) + "\n")
    if point == arg["kill_at"]:
        os.kill(os.getpid(), signal.SIGKILL)  # no cleanup, no atexit, no finally

f = cx.Fold(cx.Session.open(arg["path"]), store=arg["store"], window=arg["window"], tracer=tracer)
r = f.run(force=True)
print(json.dumps({"folded": r.folded, "reason": r.reason}))
"""


def _trace(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("point", POINTS)
@pytest.mark.parametrize("which", LOGS)
def test_a_fold_killed_at_each_step(tmp_path: Path, which: str, point: str) -> None:
    path = _log(tmp_path, which)
    store = tmp_path / "bundles"
    window = _window(path)
    before_bytes = path.read_bytes()
    before = _opened(path)
    trace = tmp_path / "trace.jsonl"
    proc = _run_child(
        _KILLED,
        {
            "path": str(path),
            "store": str(store),
            "window": window,
            "kill_at": point,
            "trace": str(trace),
        },
    )
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, proc.stderr[-2000:])
    seen = [t["point"] for t in _trace(trace)]
    assert seen == list(POINTS[: POINTS.index(point) + 1])  # it died where it was told to

    after = _opened(path)
    _brackets_closed(after)
    bundles = FileBundleStore(store)
    st = cx.Fold(after, store=store, window=window).status()
    if point == "surface-appended":
        # The fold is whole: the old bytes, then exactly one fold batch.
        assert path.read_bytes().startswith(before_bytes)
        assert _types_after(after, len(before)) == _batch(after)
        rec = cx.Fold(after, store=store).records[-1]
        assert st.orphans == () and st.healthy and len(st.bundles) == 1
        assert [b.checkpoint_id for b in bundles.bundles()] == [rec.checkpoint_id]
        assert rec.checkpoint_seq in after.index.surface_seqs()
        for seq in rec.shadowed:
            assert seq not in after.index.surface_seqs()
    else:
        # The fold is wholly absent: the log is byte-identical, the surface the same.
        assert path.read_bytes() == before_bytes
        assert after.index.surface_seqs() == before.index.surface_seqs()
        assert cx.Fold(after, store=store).records == []
        on_disk = _files(store)
        if point == "bundle-temp-written":
            # A temp file is left behind; it is no bundle and no orphan.
            assert len(on_disk) == 1 and Path(on_disk[0]).name.startswith(".cp-"), on_disk
            assert on_disk[0].endswith(".tmp")
            assert bundles.bundles() == [] and st.orphans == ()
        else:
            # The bundle was published but nothing names it: an orphan, reported.
            published = Path(_trace(trace)[-1]["path"])
            assert [b.path for b in bundles.bundles()] == [published]
            assert [o.path for o in st.orphans] == [published]
            assert [o.session_id for o in st.orphans] == [after.id]
            assert bundles.verify(after.id, st.orphans[0].checkpoint_id).ok  # durable, intact
            assert "orphan bundles" in str(st) and st.orphans[0].checkpoint_id in str(st)
        assert st.bundles == ()
    _nothing_lost(before, after, store)

    # A fold after the crash goes through, and the log stays whole (a short tail, so that
    # there is something left to fold after a fold that did land).
    f = cx.Fold(after, store=store, window=window, retain_ratio=0.02)
    r = f.run(force=True)
    assert r.folded, r.reason
    again = _opened(path)
    _brackets_closed(again)
    _nothing_lost(before, again, store)
    f2 = cx.Fold(again, store=store, window=window)
    assert f2.status().healthy
    for rec in f2.records:
        page = f2.recall(f"cp:{rec.checkpoint_id}", "exact")
        assert page.verified and page.total == len(rec.shadowed)
        assert page.seqs == rec.shadowed[: len(page.seqs)]
        assert [_key(m) for m in page.messages] == [
            _key(message_of(before.raw_events[s])) for s in page.seqs
        ]
    orphans = {o.checkpoint_id for o in f2.status().orphans}
    assert orphans == {o.checkpoint_id for o in st.orphans}  # the old orphan is still reported


# --- damaged bundles -------------------------------------------------------------------------


def _two_folds(tmp_path: Path) -> tuple[Path, Path, cx.Fold]:
    """A v3 log with two leaf checkpoints, folded in this process."""
    path = _log(tmp_path, "builder-v3-zstd")
    store = tmp_path / "bundles"
    f = cx.Fold(cx.Session.open(path), store=store)
    prompts = [
        n.seq
        for n in f.session.surface()
        if n.type == "user/message" and n.message.source.kind == "user"
    ]
    seqs = list(f.session.index.surface_seqs())
    for lo, hi in ((0, 3), (3, 6)):  # turns 1-3, then turns 4-6
        end = seqs[seqs.index(prompts[hi]) - 1]
        assert f.fold((prompts[lo], end)).folded
    assert len(f.checkpoints) == 2
    return path, store, cx.Fold(cx.Session.open(path), store=store)


def _damage(path: Path, how: str, other: Path) -> None:
    data = path.read_bytes()
    if how == "flip":
        b = bytearray(data)
        b[len(b) // 2] ^= 0x20
        path.write_bytes(bytes(b))
    elif how == "flip-last":
        b = bytearray(data)
        b[-1] ^= 0x01
        path.write_bytes(bytes(b))
    elif how == "truncate":
        path.write_bytes(data[: len(data) - 9])
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "delete":
        path.unlink()
    elif how == "swap":  # another checkpoint's intact, valid bundle under this name
        path.write_bytes(other.read_bytes())
    else:  # pragma: no cover
        raise AssertionError(how)


@pytest.mark.parametrize("how", ["flip", "flip-last", "truncate", "empty", "delete", "swap"])
def test_a_damaged_bundle_is_refused_never_read_around(tmp_path: Path, how: str) -> None:
    path, store, f = _two_folds(tmp_path)
    first, second = f.records
    bundles = FileBundleStore(store)
    good = f.recall(f"cp:{second.checkpoint_id}", "exact")
    target = bundles.path(f.session.id, first.checkpoint_id)
    _damage(target, how, bundles.path(f.session.id, second.checkpoint_id))
    log_bytes = path.read_bytes()

    f = cx.Fold(cx.Session.open(path), store=store)
    expected = errors.BundleMissing if how == "delete" else errors.CorruptBundle
    with pytest.raises(expected) as info:
        f.recall(f"cp:{first.checkpoint_id}", "exact")
    assert first.checkpoint_id in str(info.value)
    if how != "delete":
        assert str(target) in str(info.value)
        assert info.value.problem in ("file-hash", "undecodable", "wrong-id")  # type: ignore[attr-defined]
    with pytest.raises(expected):  # by an archived seq too
        f.recall(first.shadowed[0], "exact")
    # The summary is the checkpoint's text on the surface: still there, and not the bundle.
    summary = f.recall(f"cp:{first.checkpoint_id}")
    assert summary.depth == "summary" and summary.text and summary.messages == ()
    # The other checkpoint is untouched.
    assert f.recall(f"cp:{second.checkpoint_id}", "exact") == good

    found = f.search("MARK-0001")  # only in the damaged checkpoint's archive
    assert [cid for cid, _ in found.unavailable] == [first.checkpoint_id]
    reason = dict(found.unavailable)[first.checkpoint_id]
    assert reason and first.checkpoint_id in reason
    assert all(h.checkpoint_id != first.checkpoint_id for h in found.hits)
    assert f.search("MARK-0004").hits[0].checkpoint_id == second.checkpoint_id

    st = f.status()
    assert not st.healthy
    states = {b.checkpoint_id: b.state for b in st.bundles}
    assert states == {
        first.checkpoint_id: "missing" if how == "delete" else "corrupt",
        second.checkpoint_id: "verified",
    }
    bad = next(b for b in st.bundles if not b.ok)
    assert f"{first.checkpoint_id} {bad.state}" in str(st)
    if how != "delete":
        assert bad.reason and bad.problem is not None
    assert st.orphans == ()
    assert path.read_bytes() == log_bytes  # reading never writes


# --- two folds at once -----------------------------------------------------------------------

_RACER = r"""
import json, os, sys, time
import ctxsdk as cx
from ctxsdk.errors import FoldConflict, LockHeld

arg = json.loads(sys.argv[1])
f = cx.Fold(cx.Session.open(arg["path"]), store=arg["store"], window=arg["window"])
f.plan(force=True)  # tokenizer loaded, spans measured: the race is the write alone
open(arg["ready"], "w").close()
while not os.path.exists(arg["go"]):
    time.sleep(0.001)
try:
    r = f.run(force=True)
except (FoldConflict, LockHeld) as exc:
    out = {"won": False, "type": type(exc).__name__, "message": str(exc)}
else:
    out = {"won": r.folded, "checkpoint": r.checkpoint_id, "reason": r.reason}
print(json.dumps(out))
"""


def _race(path: Path, store: Path, window: int, tmp_path: Path, n: int) -> list[dict[str, Any]]:
    go = tmp_path / f"go{n}"
    ready = [tmp_path / f"ready{n}-{i}" for i in range(2)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                _RACER,
                json.dumps(
                    {
                        "path": str(path),
                        "store": str(store),
                        "window": window,
                        "ready": str(r),
                        "go": str(go),
                    }
                ),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=REPO,
        )
        for r in ready
    ]
    try:
        while not all(r.exists() for r in ready):  # both have read the log: line them up
            if any(p.poll() is not None for p in procs):
                break
            time.sleep(0.005)
        go.touch()
        results = []
        for p in procs:
            out, err = p.communicate(timeout=180)
            assert p.returncode == 0, err
            results.append(json.loads(out.strip().splitlines()[-1]))
        return results
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


@pytest.mark.parametrize("which", ["long-refactor", "builder-v2-zstd", "builder-v0-none"])
def test_two_processes_folding_one_session(tmp_path: Path, which: str) -> None:
    for n in range(3):  # three rounds, each on a fresh copy
        path = _log(tmp_path / f"round{n}", which)
        store = tmp_path / f"round{n}" / "bundles"
        window = _window(path)
        before_bytes = path.read_bytes()
        before = _opened(path)
        results = _race(path, store, window, tmp_path, n)
        winners = [r for r in results if r["won"]]
        losers = [r for r in results if not r["won"]]
        assert len(winners) == 1 and len(losers) == 1, results
        lost = losers[0]
        assert lost["type"] == "FoldConflict", lost
        assert str(path) in lost["message"] and "was not written" in lost["message"], lost
        assert "was removed" in lost["message"] and "Open the session again" in lost["message"], (
            lost
        )

        after = _opened(path)
        _brackets_closed(after)
        assert path.read_bytes().startswith(before_bytes)
        assert _types_after(after, len(before)) == _batch(after)  # one fold, not two
        f = cx.Fold(after, store=store)
        assert f.records[-1].checkpoint_id == winners[0]["checkpoint"]
        st = f.status()
        assert st.orphans == () and st.healthy  # the loser removed its bundle
        assert {b.checkpoint_id for b in FileBundleStore(store).bundles()} == {
            r.checkpoint_id for r in f.records
        }
        assert not any(name.endswith(".tmp") for name in _files(store))
        _nothing_lost(before, after, store)


# --- a write that runs out of room -------------------------------------------------------------

_LIMITED = r"""
import json, resource, signal, sys
import ctxsdk as cx
from ctxsdk.errors import CtxError

arg = json.loads(sys.argv[1])
f = cx.Fold(cx.Session.open(arg["path"]), store=arg["store"], window=arg["window"])
f.plan(force=True)  # everything loaded before the limit: only the fold's own writes hit it
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a killed process
_, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (arg["limit"], hard))
try:
    r = f.run(force=True)
except CtxError as exc:
    out = {"type": type(exc).__name__, "errno": getattr(exc, "errno", None), "message": str(exc),
           "write_error": isinstance(exc, OSError)}
else:
    out = {"type": None, "folded": r.folded}
print(json.dumps(out))
"""


@pytest.mark.parametrize("fails", ["bundle", "log"])
@pytest.mark.parametrize("which", ["long-refactor", "builder-v2-zstd", "builder-v3-none"])
def test_a_fold_that_runs_out_of_room(tmp_path: Path, which: str, fails: str) -> None:
    path = _log(tmp_path, which)
    window = _window(path)
    # How big this fold's bundle is: the same fold, on a scratch copy.
    scratch = tmp_path / "scratch" / path.name
    scratch.parent.mkdir()
    shutil.copyfile(path, scratch)
    probe = cx.Fold(cx.Session.open(scratch), store=tmp_path / "scratch-bundles", window=window)
    bundle_bytes = probe.run(force=True).record.bytes  # type: ignore[union-attr]
    before = path.read_bytes()
    if fails == "bundle":
        limit = bundle_bytes // 2
    else:
        limit = len(before) + 16  # room for the bundle, not for the log's new batch
        assert bundle_bytes < limit, (bundle_bytes, limit)
    store = tmp_path / "bundles"
    out = _last_json(
        _run_child(
            _LIMITED, {"path": str(path), "store": str(store), "window": window, "limit": limit}
        )
    )
    if fails == "bundle":
        assert out["type"] == "WriteError" and out["write_error"], out
        assert out["errno"] == errno.EFBIG, out
        assert ".bundle.zst" in out["message"] and str(store) in out["message"], out
        assert "not stored" in out["message"], out
    else:
        # a full disk is a failed write, not another writer: WriteError, not FoldConflict
        assert out["type"] == "WriteError" and out["write_error"], out
        assert out["errno"] == errno.EFBIG, out
        assert str(path) in out["message"] and "was not written" in out["message"], out
        assert "File too large" in out["message"] or "EFBIG" in out["message"], out
        assert "was removed" in out["message"], out
    assert path.read_bytes() == before  # nothing half-written
    assert _files(store) == []  # no bundle, no temp file
    s = _opened(path)
    _brackets_closed(s)
    f = cx.Fold(s, store=store, window=window)
    assert f.records == [] and f.status().orphans == ()
    assert f.run(force=True).folded  # with room again, the same fold goes through
    _brackets_closed(_opened(path))


# --- killed inside the log append: a torn tail, repaired by the next write ---------------------

_KILLED_MID_APPEND = r"""
import json, resource, signal, sys
import ctxsdk as cx

arg = json.loads(sys.argv[1])
f = cx.Fold(cx.Session.open(arg["path"]), store=arg["store"], window=arg["window"])
f.plan(force=True)
signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # the kernel kills the writer inside write()
_, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (arg["limit"], hard))
f.run(force=True)
print(json.dumps({"survived": True}))
"""


@pytest.mark.parametrize("which", ["long-refactor", "builder-v2-zstd", "builder-v3-none"])
def test_a_fold_killed_inside_the_log_append(tmp_path: Path, which: str) -> None:
    path = _log(tmp_path, which)
    store = tmp_path / "bundles"
    window = _window(path)
    before_bytes = path.read_bytes()
    before = _opened(path)
    proc = _run_child(
        _KILLED_MID_APPEND,
        {"path": str(path), "store": str(store), "window": window, "limit": len(before_bytes) + 16},
    )
    assert proc.returncode == -signal.SIGXFSZ and proc.stdout == "", proc.stderr[-2000:]
    torn = path.read_bytes()
    assert torn.startswith(before_bytes) and len(torn) == len(before_bytes) + 16

    # The reader drops the torn tail, as the harness does, and says so; the fold is absent.
    with pytest.warns(errors.LogRecoveryWarning):
        after = cx.Session.open(path).validate()
    assert after.recovery is not None and not after.is_interrupted
    assert len(after) == len(before) and after.raw_events == before.raw_events
    _brackets_closed(after)
    st = cx.Fold(after, store=store, window=window).status()
    assert len(st.orphans) == 1 and st.bundles == ()  # the bundle is there, named by nothing
    assert FileBundleStore(store).verify(after.id, st.orphans[0].checkpoint_id).ok
    _nothing_lost(before, after, store)

    # The next fold repairs the tail in the same write and lands whole.
    f = cx.Fold(after, store=store, window=window)
    assert f.run(force=True).folded
    again = _opened(path)
    assert path.read_bytes().startswith(before_bytes)
    assert _types_after(again, len(before)) == _batch(again)
    _brackets_closed(again)
    _nothing_lost(before, again, store)
