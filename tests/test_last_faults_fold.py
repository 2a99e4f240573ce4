"""Faults of the fold bundle store and of Fold on hostile input, each with real files.

- a bundle path that is a FIFO (``os.mkfifo``), a symlink to ``/dev/zero``, a directory or a
  file this process may not read is a ``CorruptBundle`` naming the path (recall), an
  unavailable checkpoint (search) and an unhealthy bundle (status): never a hang, never a
  raw ``MemoryError`` / ``IsADirectoryError`` / ``PermissionError``;
- a zstd bomb bundle (which a v0-v2 log, recording no file hash, cannot catch by its hash)
  and deeply nested JSON are refused under a limit the caller can raise
  (``FileBundleStore(root, max_bytes=...)``), not inflated or parsed into a RecursionError;
- a message source whose ``plugin`` holds an object or an array makes Fold refuse with a
  located ``SessionFormatError`` where it needs the message, never a ``TypeError``.

Reads that could hang or eat memory if they regressed run in a child process with a timeout
and an address-space limit. We run as root here, and root reads a ``chmod 000`` file: the
unreadable case drops the capabilities that let root bypass file modes
(``setpriv --bounding-set -dac_override,-dac_read_search``), so the kernel really refuses.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import zstandard

import ctxsdk as cx
from ctxsdk import errors
from ctxsdk.fold import Bundle, FileBundleStore
from ctxsdk.session.kernel import read_marker
from ctxsdk.testing import LogBuilder

from ._logs import small_v3

TIMEOUT = 120.0  # seconds a child may take before it counts as hung


def _folded(tmp_path: Path, version: int) -> tuple[Path, Path, str, Path]:
    """A session log with one fold: (log, store root, checkpoint ref, bundle file)."""
    b = LogBuilder(version, session_id=f"faults-v{version}")
    for i in range(10):
        b.turn(f"step {i}: note MARK-{i:04d} " + "detail " * 40).assistant(text="noted " * 30)
        b.end_turn()
    log = b.write(b.canonical_path(tmp_path / "home" / "sessions"))
    store = tmp_path / "bundles"
    f = cx.Fold(cx.Session.open(log), store=store, window=60_000)
    seqs = f.session.index.surface_seqs()
    at = f.frontier().first_open
    rec = f.fold((seqs[at], seqs[at + 5])).record
    assert rec is not None
    bundle = f.store.path(f.session.id, rec.checkpoint_id)
    assert bundle.is_file()
    assert cx.Fold(cx.Session.open(log), store=store).recall(f"cp:{rec.checkpoint_id}", "exact")
    return log, store, f"cp:{rec.checkpoint_id}", bundle


_CHILD = r"""
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
import ctxsdk as cx
from ctxsdk.fold import FileBundleStore
log, store, ref, limit = sys.argv[1:5]
root = FileBundleStore(store) if limit == "default" else FileBundleStore(store, max_bytes=int(limit))
f = cx.Fold(cx.Session.open(log), store=root)
out = {}
def run(name, fn):
    try:
        out[name] = ["ok", fn()]
    except BaseException as exc:
        out[name] = ["raised", type(exc).__name__, str(exc),
                     isinstance(exc, cx.errors.BundleError), getattr(exc, "problem", None)]
run("recall", lambda: len(f.recall(ref, "exact").messages))
run("search", lambda: [list(u) for u in f.search("MARK").unavailable])
run("status", lambda: [f.status().healthy,
                       [[b.state, b.problem, b.reason] for b in f.status().bundles]])
# the peak of this process's own memory (VmHWM): ru_maxrss would carry the parent's peak
# across exec (a forked pytest process of a gigabyte)
out["peak_mb"] = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")) // 1024
print(json.dumps(out))
"""


def _child(
    log: Path, store: Path, ref: str, *, limit: str = "default", prefix: list[str] | None = None
) -> dict[str, Any]:
    """Recall, search and status of ``ref`` in a child process that must not hang."""
    cmd = [*(prefix or []), sys.executable, "-c", _CHILD, str(log), str(store), ref, limit]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"recall/search/status did not return within {TIMEOUT:.0f} s (hung)")
    assert proc.returncode == 0, proc.stderr[-3000:]
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _cli(*args: str, prefix: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [*(prefix or []), sys.executable, "-m", "ctxsdk", *args],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"ctxsdk {args[0]} did not return within {TIMEOUT:.0f} s (hung)")


def _refused(out: dict[str, Any], bundle: Path, *words: str) -> None:
    """Recall raised a CorruptBundle naming the bundle and ``words``; search reports the
    checkpoint unavailable and status the bundle unhealthy, for the same reason."""
    recall = out["recall"]
    assert recall[0] == "raised", out
    _, name, message, is_bundle_error, _problem = recall
    assert name == "CorruptBundle" and is_bundle_error, out
    assert str(bundle) in message, message
    for w in words:
        assert w in message, (w, message)
    kind, unavailable = out["search"]
    assert kind == "ok" and len(unavailable) == 1, out
    assert all(w in unavailable[0][1] for w in words), out
    kind, (healthy, bundles) = out["status"]
    assert kind == "ok" and healthy is False and bundles[0][0] == "corrupt", out
    assert all(w in bundles[0][2] for w in words), out


def _cli_refuses(log: Path, store: Path, ref: str, bundle: Path, *words: str, **kw: Any) -> None:
    for args in (
        ("recall", str(log), ref, "--depth", "exact"),
        ("fold-search", str(log), "MARK"),
        ("fold-status", str(log)),
    ):
        proc = _cli(*args, "--store", str(store), **kw)
        assert proc.returncode == 1, (args, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr, proc.stderr
        assert proc.stderr.startswith("ctxsdk: error:"), proc.stderr
        if args[0] == "recall":  # one line naming the bundle
            assert bundle.name in proc.stderr and all(w in proc.stderr for w in words)


# --- 1. a bundle path that is not a regular readable file ----------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
@pytest.mark.parametrize("version", [2, 3])
def test_a_fifo_bundle_is_refused_not_waited_on(tmp_path: Path, version: int) -> None:
    log, store, ref, bundle = _folded(tmp_path, version)
    bundle.unlink()
    os.mkfifo(bundle)
    _refused(_child(log, store, ref), bundle, "FIFO")
    _cli_refuses(log, store, ref, bundle, "FIFO")
    assert bundle.exists() and not bundle.is_file()  # left as it was


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
@pytest.mark.parametrize("version", [2, 3])
def test_dev_zero_behind_a_bundle_name_is_never_read(tmp_path: Path, version: int) -> None:
    log, store, ref, bundle = _folded(tmp_path, version)
    bundle.unlink()
    os.symlink("/dev/zero", bundle)
    out = _child(log, store, ref)
    _refused(out, bundle, "character device")
    assert out["peak_mb"] < 1024, out
    _cli_refuses(log, store, ref, bundle, "character device")


@pytest.mark.parametrize("version", [2, 3])
def test_a_directory_at_a_bundle_path_is_refused(tmp_path: Path, version: int) -> None:
    log, store, ref, bundle = _folded(tmp_path, version)
    bundle.unlink()
    bundle.mkdir()
    _refused(_child(log, store, ref), bundle, "directory")
    _cli_refuses(log, store, ref, bundle, "directory")


def _unprivileged() -> list[str]:
    """A command prefix under which ``chmod 000`` really refuses a read: none for a normal
    user; for root, the DAC capabilities dropped from the bounding set (root otherwise reads
    any file whatever its mode)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: a chmod 000 file is readable here")
    prefix = [setpriv, "--bounding-set", "-dac_override,-dac_read_search"]
    probe = Path(os.environ.get("TMPDIR", "/tmp")) / f"ctxsdk-probe-{os.getpid()}"
    probe.write_text("x")
    probe.chmod(0)
    try:
        if subprocess.run([*prefix, "cat", str(probe)], capture_output=True).returncode == 0:
            pytest.skip("cannot drop root's DAC capabilities here: chmod 000 is readable")
    finally:
        probe.unlink()
    return prefix


@pytest.mark.parametrize("version", [2, 3])
def test_an_unreadable_bundle_is_refused(tmp_path: Path, version: int) -> None:
    log, store, ref, bundle = _folded(tmp_path, version)
    prefix = _unprivileged()
    bundle.chmod(0)
    _refused(_child(log, store, ref, prefix=prefix), bundle, "permission")
    _cli_refuses(log, store, ref, bundle, "permission", prefix=prefix)
    assert bundle.stat().st_mode & 0o777 == 0  # left as it was


def test_a_fifo_at_a_bundle_path_does_not_hang_a_fold_that_stores_there(tmp_path: Path) -> None:
    # A fold whose checkpoint id is taken by a FIFO: put() checks what is there first.
    b = LogBuilder(3, session_id="fifo-put")
    for i in range(10):
        b.turn(f"step {i}: " + "detail " * 40).assistant(text="noted " * 30).end_turn()
    log = b.write(b.canonical_path(tmp_path / "home" / "sessions"))
    store = FileBundleStore(tmp_path / "bundles")
    target = store.path("fifo-put", "cp-taken")
    target.parent.mkdir(parents=True)
    os.mkfifo(target)
    code = (
        "import sys, ctxsdk as cx\n"
        "from ctxsdk.fold import FileBundleStore\n"
        "f = cx.Fold(cx.Session.open(sys.argv[1]), store=FileBundleStore(sys.argv[2]),"
        " window=60_000, id_factory=lambda: 'cp-taken')\n"
        "seqs, at = f.session.index.surface_seqs(), f.frontier().first_open\n"
        "try:\n"
        "    f.fold((seqs[at], seqs[at + 5]))\n"
        "except cx.errors.CtxError as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code, str(log), str(store.root)],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("a fold storing over a FIFO hung")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "FIFO" in proc.stdout and str(target) in proc.stdout, proc.stdout
    assert not [e for e in cx.Session.open(log).raw_events if e["type"] == "compaction/start"]


# --- 2. bombs and deep nesting in a bundle -------------------------------------------------------


def _rle_bomb(total: int) -> bytes:
    """One zstd frame of RLE blocks with no declared content size (4 bytes per 128 KiB)."""
    block = 1 << 17
    n = -(-total // block)
    body = ((block << 3) | 2).to_bytes(3, "little") + b"\0"
    last = ((block << 3) | 3).to_bytes(3, "little") + b"\0"
    return b"\x28\xb5\x2f\xfd\x00\x38" + body * (n - 1) + last


@pytest.mark.parametrize("version", [2, 3])
def test_a_bomb_bundle_is_refused_under_the_limit(tmp_path: Path, version: int) -> None:
    log, store, ref, bundle = _folded(tmp_path, version)
    bundle.write_bytes(_rle_bomb(4 << 30))  # ~131 KB that inflate to 4 GiB
    out = _child(log, store, ref)
    if version == 2:  # no file hash in the log: only the limit stops it
        _refused(out, bundle, "256 MiB", "max_bytes=")
        assert out["recall"][4] == "too-large"
    else:  # the hash the log recorded refuses it before anything is decoded
        _refused(out, bundle, "sha256")
    assert out["peak_mb"] < 900, out  # never near the bomb's 4 GiB, nor a 1 GiB buffer


def test_a_bundle_declaring_a_huge_size_is_refused_before_decoding(tmp_path: Path) -> None:
    log, store, ref, bundle = _folded(tmp_path, 2)
    with bundle.open("wb") as fh:  # zeros that declare their 300 MiB in the frame header
        cctx = zstandard.ZstdCompressor(level=1, write_checksum=True)
        with cctx.stream_writer(fh, size=300 << 20, closefd=False) as w:
            for _ in range(300):
                w.write(b"\0" * (1 << 20))
    assert zstandard.frame_content_size(bundle.read_bytes()[:18]) == 300 << 20
    out = _child(log, store, ref)
    _refused(out, bundle, "256 MiB", "max_bytes=")


def test_the_bundle_limit_is_a_parameter_the_caller_can_raise(tmp_path: Path) -> None:
    log, store, ref, bundle = _folded(tmp_path, 2)
    size = len(zstandard.ZstdDecompressor().decompress(bundle.read_bytes()))
    small = _child(log, store, ref, limit=str(size - 1))
    _refused(small, bundle, f"max_bytes={size - 1}", "FileBundleStore")
    assert small["recall"][4] == "too-large"
    enough = _child(log, store, ref, limit=str(size))
    assert enough["recall"][0] == "ok" and enough["recall"][1] > 0, enough
    with pytest.raises(errors.InvalidArgument, match="max_bytes"):
        FileBundleStore(store, max_bytes=0)


def _canon(value: Any) -> bytes:
    """Canonical JSON written here, without the store's own checks."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")


def _nested(depth: int) -> Any:
    deep: Any = "x"
    for _ in range(depth):
        deep = [deep]
    return deep


@pytest.mark.parametrize("depth", [400, 200_000])
def test_deeply_nested_bundle_json_is_refused_not_a_recursion_error(
    tmp_path: Path, depth: int
) -> None:
    log, store, ref, bundle = _folded(tmp_path, 2)
    if depth > 10_000:  # past any parser: raw brackets
        raw = b"[" * depth + b"]" * depth
        bundle.write_bytes(zstandard.ZstdCompressor(write_checksum=True).compress(raw))
    else:  # a well-formed bundle (its own hashes right) whose message nests that deep
        doc = json.loads(zstandard.ZstdDecompressor().decompress(bundle.read_bytes()))
        msgs = doc["archive"]["messages"]
        msgs[0] = {**msgs[0], "deep": _nested(depth)}
        doc["archive"]["logical_hash"] = hashlib.sha256(_canon(msgs)).hexdigest()
        raw = _canon(doc)
        bundle.write_bytes(zstandard.ZstdCompressor(write_checksum=True).compress(raw))
    out = _child(log, store, ref)
    _refused(out, bundle, "nest")
    assert out["recall"][4] == "undecodable"


@pytest.mark.parametrize("depth", [300, 5000])
def test_a_bundle_nested_past_the_limit_is_never_built_or_stored(
    tmp_path: Path, depth: int
) -> None:
    messages = [{"role": "user", "content": _nested(depth)}]
    with pytest.raises(errors.InvalidArgument, match="nest"):
        Bundle.build(
            checkpoint_id="cp-deep", session_id="s", ordered_surface_seqs=[1], messages=messages
        )
    store = FileBundleStore(tmp_path / "bundles")
    made = Bundle(  # built by hand, around the checks of build
        checkpoint_id="cp-deep",
        session_id="s",
        created_at="2026-01-01T00:00:00.000+00:00",
        ordered_surface_seqs=(1,),
        source_digest="0" * 64,
        messages=tuple(messages),
        logical_hash="0" * 64,
    )
    with pytest.raises(errors.InvalidArgument, match="nest"):
        store.put(made)
    assert not store.path("s", "cp-deep").exists()
    ok = Bundle.build(  # as deep as a log's message may be: stored and read back
        checkpoint_id="cp-ok",
        session_id="s",
        ordered_surface_seqs=[1],
        messages=[{"role": "user", "content": _nested(120)}],
    )
    store.put(ok)
    assert store.get("s", "cp-ok") == ok


def test_a_bundle_over_the_store_limit_is_not_stored(tmp_path: Path) -> None:
    store = FileBundleStore(tmp_path / "bundles", max_bytes=1000)
    b = Bundle.build(
        checkpoint_id="cp-big",
        session_id="s",
        ordered_surface_seqs=[1],
        messages=[{"role": "user", "content": "y" * 5000}],
    )
    with pytest.raises(errors.BundleError, match="max_bytes=1000"):
        store.put(b)
    assert not store.path("s", "cp-big").exists()


# --- 3. a plugin field holding an object or an array ---------------------------------------------


@pytest.mark.parametrize("plugin", [{"name": "x"}, ["x"], {}, []])
def test_fold_refuses_a_plugin_object_with_a_located_error(tmp_path: Path, plugin: Any) -> None:
    head, events = small_v3()
    events[3]["data"]["source"] = {"kind": "plugin", "plugin": plugin}
    path = tmp_path / "s" / "session.v3.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(r) + "\n" for r in [head, *events]))
    before = path.read_bytes()
    assert read_marker(events[3]) is None
    s = cx.Session.open(path)
    f = cx.Fold(s, store=tmp_path / "bundles", window=100)
    st = f.status()  # the markers read no checkpoint there; nothing is on the surface yet
    assert st.healthy and st.on_surface == ()
    assert f.state is not None  # reduced from the raw log: a plugin message is not the user's
    for attempt in (lambda: f.run(force=True), lambda: f.plan(force=True)):
        with pytest.raises(errors.SessionFormatError, match="plugin") as info:
            attempt()
        assert info.value.seq == 3 and info.value.path == str(path)
    with pytest.raises(errors.SessionFormatError, match="plugin"):
        cx.Session.open(path, strict=True)
    assert path.read_bytes() == before  # the log was not touched


def test_corrupt_bundle_documents_every_problem_a_store_raises() -> None:
    from typing import get_args

    from ctxsdk.fold._bundles import Problem

    doc = errors.CorruptBundle.__doc__ or ""
    missing = [p for p in get_args(Problem) if f"``{p}``" not in doc]
    assert missing == [], f"CorruptBundle's docstring does not list {missing}"
