"""The fold bundle store: exact round trips, verification that catches damage, lineage-scoped
reads, and writes that a real fault (a file size limit, a killed process) leaves invisible."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import zstandard

from ctxsdk import errors
from ctxsdk.fold import Bundle, FileBundleStore
from ctxsdk.fold.kernel import canonical_json

REPO = Path(__file__).resolve().parents[1]

MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": "parse PARSE-7741 — naïve café, 日本語, emoji 😀"},
    {
        "role": "assistant",
        "content": "",
        "toolCalls": [{"id": "c1", "name": "read", "arguments": '{"path": "a.py"}'}],
    },
    {"role": "tool", "toolCallId": "c1", "content": "x = 1\n\ty = 2 \u2028", "isError": False},
    {"role": "assistant", "content": None, "nested": {"z": [1, 2.5, True], "a": {}}},
]


def _bundle(
    cp: str = "cp-1", session: str = "s-1", msgs: list[dict[str, Any]] | None = None
) -> Bundle:
    return Bundle.build(
        checkpoint_id=cp,
        session_id=session,
        ordered_surface_seqs=[3, 4, 5, 6],
        messages=MESSAGES if msgs is None else msgs,
        created_at="2025-01-01T00:00:00.000+00:00",
    )


def test_round_trip_is_exact(tmp_path: Path) -> None:
    store = FileBundleStore(tmp_path / "bundles")
    rec = store.put(_bundle())
    assert rec.path == tmp_path / "bundles" / "s-1" / "cp-1.bundle.zst"
    assert rec.message_count == 4 and rec.bytes == rec.path.stat().st_size
    back = store.get("s-1", "cp-1", file_sha256=rec.file_sha256)
    assert list(back.messages) == MESSAGES
    assert back == _bundle()
    # The file is zstd of the canonical JSON, readable without ctxsdk.
    doc = json.loads(zstandard.ZstdDecompressor().decompress(rec.path.read_bytes()))
    assert doc["format"] == "ctxsdk-fold-bundle" and doc["format_version"] == 1
    assert doc["archive"]["messages"] == MESSAGES
    status = store.verify("s-1", "cp-1", file_sha256=rec.file_sha256)
    assert status.ok and status.record == rec


def test_hashes_are_over_canonical_json() -> None:
    import hashlib

    b = _bundle()
    assert canonical_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'.encode()
    assert b.logical_hash == hashlib.sha256(canonical_json(MESSAGES)).hexdigest()
    assert b.source_digest == hashlib.sha256(b"[3,4,5,6]").hexdigest()


def test_a_lone_surrogate_round_trips(tmp_path: Path) -> None:
    # The session codec keeps lone surrogates (the harness writes them); so must the archive.
    msgs = [{"role": "user", "content": "cut pair \ud83d here"}]
    store = FileBundleStore(tmp_path)
    store.put(_bundle(msgs=msgs))
    assert list(store.get("s-1", "cp-1").messages) == msgs


def test_permissions_are_private(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        rec = FileBundleStore(tmp_path / "root").put(_bundle())
    finally:
        os.umask(old)
    assert stat.S_IMODE(rec.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(rec.path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "root").stat().st_mode) == 0o700


def test_put_is_idempotent(tmp_path: Path) -> None:
    store = FileBundleStore(tmp_path)
    first = store.put(_bundle())
    data = first.path.read_bytes()
    assert store.put(_bundle()) == first
    assert first.path.read_bytes() == data
    # A retried fold with a new timestamp but the same archive keeps the first file.
    retry = Bundle.build(
        checkpoint_id="cp-1", session_id="s-1", ordered_surface_seqs=[3, 4, 5, 6], messages=MESSAGES
    )
    assert store.put(retry) == first
    assert first.path.read_bytes() == data
    assert os.listdir(first.path.parent) == ["cp-1.bundle.zst"]


def test_a_different_bundle_under_a_stored_id_is_refused(tmp_path: Path) -> None:
    store = FileBundleStore(tmp_path)
    rec = store.put(_bundle())
    data = rec.path.read_bytes()
    with pytest.raises(errors.BundleConflict) as info:
        store.put(_bundle(msgs=[{"role": "user", "content": "other"}]))
    assert str(rec.path) in str(info.value) and info.value.path == str(rec.path)
    assert isinstance(info.value, errors.BundleError) and isinstance(info.value, ValueError)
    assert rec.path.read_bytes() == data


def _flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("where", ["middle", "last"])
def test_a_flipped_byte_is_corrupt(tmp_path: Path, where: str) -> None:
    store = FileBundleStore(tmp_path)
    rec = store.put(_bundle())
    _flip(rec.path, rec.bytes // 2 if where == "middle" else rec.bytes - 1)
    status = store.verify("s-1", "cp-1")
    assert status.state == "corrupt" and not status.ok
    assert status.problem == "undecodable" and status.reason  # zstd's frame checksum catches it
    with pytest.raises(errors.CorruptBundle) as info:
        store.get("s-1", "cp-1")
    assert info.value.problem == "undecodable" and str(rec.path) in str(info.value)
    # With the hash a checkpoint recorded, the file hash is checked first.
    status = store.verify("s-1", "cp-1", file_sha256=rec.file_sha256)
    assert status.problem == "file-hash"


def test_a_truncated_file_is_corrupt(tmp_path: Path) -> None:
    store = FileBundleStore(tmp_path)
    rec = store.put(_bundle())
    rec.path.write_bytes(rec.path.read_bytes()[: rec.bytes - 7])
    assert store.verify("s-1", "cp-1").problem == "undecodable"
    with pytest.raises(errors.CorruptBundle, match="undecodable"):
        store.get("s-1", "cp-1")


def _rewrite(path: Path, edit: Any) -> None:
    doc = json.loads(zstandard.ZstdDecompressor().decompress(path.read_bytes()))
    edit(doc)
    path.write_bytes(zstandard.ZstdCompressor().compress(canonical_json(doc)))


def test_a_well_formed_file_with_other_messages_fails_the_logical_hash(tmp_path: Path) -> None:
    store = FileBundleStore(tmp_path)
    rec = store.put(_bundle())
    _rewrite(rec.path, lambda d: d["archive"]["messages"][0].update(content="edited"))
    status = store.verify("s-1", "cp-1")
    assert (status.state, status.problem) == ("corrupt", "logical-hash")
    with pytest.raises(errors.CorruptBundle, match="logical hash"):
        store.get("s-1", "cp-1")


def test_a_bundle_copied_under_another_id_is_corrupt(tmp_path: Path) -> None:
    store = FileBundleStore(tmp_path)
    rec = store.put(_bundle())
    other = tmp_path / "s-2" / "cp-9.bundle.zst"
    other.parent.mkdir()
    other.write_bytes(rec.path.read_bytes())
    status = store.verify("s-2", "cp-9")
    assert status.problem == "wrong-id" and "'cp-1'" in status.reason


def test_non_canonical_json_is_corrupt(tmp_path: Path) -> None:
    store = FileBundleStore(tmp_path)
    rec = store.put(_bundle())
    doc = json.loads(zstandard.ZstdDecompressor().decompress(rec.path.read_bytes()))
    rec.path.write_bytes(zstandard.ZstdCompressor().compress(json.dumps(doc, indent=1).encode()))
    assert store.verify("s-1", "cp-1").problem == "not-canonical"


def test_missing_is_missing(tmp_path: Path) -> None:
    store = FileBundleStore(tmp_path)
    status = store.verify("s-1", "nope")
    assert status.state == "missing" and status.path == tmp_path / "s-1" / "nope.bundle.zst"
    with pytest.raises(errors.BundleMissing) as info:
        store.get("s-1", "nope")
    assert isinstance(info.value, KeyError) and "nope" in str(info.value)


def test_reads_are_scoped_to_the_lineage(tmp_path: Path) -> None:
    store = FileBundleStore(tmp_path)
    store.put(_bundle("cp-parent", "parent"))
    store.put(_bundle("cp-child", "child"))
    store.put(_bundle("cp-sibling", "sibling"))
    child = store.reader(lineage=["child", "parent"])
    assert child.get("cp-parent").session_id == "parent"  # an ancestor's: visible
    assert child.verify("cp-child").ok
    assert child.verify("cp-sibling").state == "missing"  # a sibling's: absent
    with pytest.raises(errors.BundleMissing):
        child.get("cp-sibling")
    parent = store.reader(lineage=["parent"])
    assert parent.verify("cp-child").state == "missing"  # a child's: absent
    assert [b.checkpoint_id for b in child.bundles()] == ["cp-child", "cp-parent"]


@pytest.mark.parametrize(
    "bad", ["../x", "a/b", ".hidden", "", "x" * 200, "a..b"], ids=lambda s: repr(s[:8])
)
def test_ids_that_cannot_name_a_file_are_refused(tmp_path: Path, bad: str) -> None:
    with pytest.raises(errors.InvalidArgument):
        _bundle(cp=bad)
    with pytest.raises(errors.InvalidArgument):
        FileBundleStore(tmp_path).verify(bad, "cp-1")


def test_messages_that_are_not_json_are_refused() -> None:
    with pytest.raises(errors.InvalidArgument, match="plain JSON"):
        _bundle(msgs=[{"role": "user", "content": float("nan")}])
    with pytest.raises(errors.InvalidArgument):
        _bundle(msgs=[{"role": "user", "content": object()}])


def test_orphans_are_bundles_no_checkpoint_references(tmp_path: Path) -> None:
    store = FileBundleStore(tmp_path)
    for cp in ("cp-1", "cp-2", "cp-3"):
        store.put(_bundle(cp))
    store.put(_bundle("cp-4", "s-2"))
    assert [o.checkpoint_id for o in store.orphans(["cp-1", "cp-3"])] == ["cp-2", "cp-4"]
    assert [o.checkpoint_id for o in store.orphans(["cp-1"], session_id="s-1")] == ["cp-2", "cp-3"]
    assert store.orphans(["cp-1", "cp-2", "cp-3", "cp-4"]) == []


# --- real faults --------------------------------------------------------------------------

_CHILD = r"""
import json, resource, signal, sys
from ctxsdk.fold import Bundle, FileBundleStore
from ctxsdk.errors import WriteError

arg = json.loads(sys.argv[1])
store = FileBundleStore(arg["root"])
store.put(Bundle.build(checkpoint_id="small", session_id="s-1", ordered_surface_seqs=[1],
                       messages=[{"role": "user", "content": "hi"}]))
big = Bundle.build(checkpoint_id="big", session_id="s-1", ordered_surface_seqs=[2],
                   messages=[{"role": "tool", "content": arg["blob"]}])
# Ignored (Python's default): EFBIG. Default action: the kernel kills the writer.
signal.signal(signal.SIGXFSZ, signal.SIG_DFL if arg["kill"] else signal.SIG_IGN)
_, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (arg["limit"], hard))
try:
    store.put(big)
except WriteError as exc:
    print(json.dumps({"error": str(exc), "errno": exc.errno}))
else:
    print(json.dumps({"error": None}))
"""


def _child(root: Path, *, kill: bool) -> subprocess.CompletedProcess[str]:
    arg = {"root": str(root), "kill": kill, "limit": 4096, "blob": os.urandom(20000).hex()}
    return subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(arg)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        cwd=REPO,
        timeout=120,
        check=False,
    )


def test_a_put_that_fails_mid_write_leaves_nothing(tmp_path: Path) -> None:
    proc = _child(tmp_path, kill=False)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["error"] is not None and "big.bundle.zst" in out["error"]
    assert out["errno"] == 27  # EFBIG, from the kernel
    store = FileBundleStore(tmp_path)
    assert os.listdir(tmp_path / "s-1") == ["small.bundle.zst"]  # no temp file left either
    assert store.verify("s-1", "big").state == "missing"
    assert store.verify("s-1", "small").ok


def test_a_writer_killed_mid_write_leaves_no_bundle(tmp_path: Path) -> None:
    # SIGXFSZ not ignored: the kernel kills the writer inside write(), no cleanup runs.
    proc = _child(tmp_path, kill=True)
    assert proc.returncode == -signal.SIGXFSZ and proc.stdout == ""
    store = FileBundleStore(tmp_path)
    left = sorted(os.listdir(tmp_path / "s-1"))
    assert "big.bundle.zst" not in left and any(n.startswith(".big.") for n in left)
    assert store.verify("s-1", "big").state == "missing"
    assert [b.checkpoint_id for b in store.bundles()] == ["small"]
    assert store.orphans([]) == store.bundles()  # a torn temp file is never reported as a bundle
    # A retry after the crash succeeds and is durable.
    big = json.loads(json.dumps([{"role": "tool", "content": "retry"}]))
    rec = store.put(
        Bundle.build(checkpoint_id="big", session_id="s-1", ordered_surface_seqs=[2], messages=big)
    )
    assert store.verify("s-1", "big", file_sha256=rec.file_sha256).ok
