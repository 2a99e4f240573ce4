"""Writing logs safely: new files published atomically, batches appended under the lease.

A new file is written to a temp file, fsynced, then published with a no-overwrite hard link
(the harness's way) and the directory fsynced. An append adds exactly one zstd frame (or a
run of lines) to the end; if anything fails the file is truncated back to its old length, so
it is byte-identical to before.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ..errors import LockHeld, WriteError
from ._codec import Compression, Recovery, dumps_line, zstd_frame

__all__ = ["append_batch", "encode_batch", "session_lock", "write_new"]

LOCK_NAME = "session.lock"


def encode_batch(lines: Iterable[bytes], compression: Compression) -> bytes:
    """One append batch: a single zstd frame, or the plain lines."""
    data = b"".join(lines)
    return zstd_frame(data) if compression == "zstd" and data else data


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_new(
    path: str | Path,
    header: dict[str, Any],
    events: Iterable[dict[str, Any]],
    *,
    compression: Compression,
    batch_size: int = 64,
    overwrite: bool = False,
) -> Path:
    """Write a complete log: the header alone in the first frame, then one frame per batch."""
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists() and not overwrite:
        raise WriteError(errno.EEXIST, f"{dest} exists; pass overwrite=True to replace it")
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(encode_batch([dumps_line(header)], compression))
            batch: list[bytes] = []
            for ev in events:
                batch.append(dumps_line(ev))
                if len(batch) >= batch_size:
                    f.write(encode_batch(batch, compression))
                    batch = []
            if batch:
                f.write(encode_batch(batch, compression))
            f.flush()
            os.fsync(f.fileno())
        if overwrite:
            os.replace(tmp, dest)
        else:
            try:
                os.link(tmp, dest)  # fails instead of replacing a file that appeared meanwhile
            except FileExistsError:
                raise WriteError(
                    errno.EEXIST, f"{dest} appeared while writing; not replaced"
                ) from None
            tmp.unlink()
        _fsync_dir(dest.parent)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return dest


@contextlib.contextmanager
def session_lock(session_dir: Path) -> Iterator[None]:
    """Hold the v3 ``session.lock`` single-writer lease (non-blocking flock) for a write."""
    lock_path = session_dir / LOCK_NAME
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise WriteError(exc.errno, f"{lock_path}: cannot open the session lock ({exc})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LockHeld(
                errno.EWOULDBLOCK,
                f"{lock_path} is held by another process (a live harness session?); "
                "close it or wait, then append again",
            ) from None
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def append_batch(
    path: str | Path,
    lines: list[bytes],
    *,
    compression: Compression,
    expected: bytes,
    recovery: Recovery | None = None,
    use_lock: bool,
) -> int:
    """Append one batch to an existing log; returns the new file size.

    ``expected`` is the file's content as the caller read it: if the file changed since
    (even to the same size), nothing is written. A torn tail reported in ``recovery`` is
    repaired as the harness does (truncate at the torn frame or line, re-append its complete
    lines in this batch).
    """
    target = Path(path)
    lock = session_lock(target.parent) if use_lock else contextlib.nullcontext()
    with lock:
        try:
            f = open(target, "r+b")  # noqa: SIM115 - closed in finally below
        except OSError as exc:
            raise WriteError(exc.errno, f"{target}: cannot open for append ({exc})") from None
        try:
            size = os.fstat(f.fileno()).st_size
            if size != len(expected) or f.read() != expected:
                raise WriteError(
                    errno.ESTALE,
                    f"{target} changed since it was read ({len(expected)} -> {size} bytes); "
                    "open it again before appending",
                )
            keep = recovery.truncate_at if recovery is not None else size
            prefix = list(recovery.kept_lines) if recovery is not None else []
            payload = encode_batch(prefix + lines, compression)
            try:
                f.seek(keep)
                f.truncate(keep)
                f.write(payload)
                f.flush()
                os.fsync(f.fileno())
            except BaseException as exc:
                # Put the old bytes back: cut what we added and re-write a torn tail we cut.
                _restore(f, keep, size, target, recovery)
                if isinstance(exc, OSError):
                    raise WriteError(exc.errno, f"{target}: append failed ({exc})") from exc
                raise
            return keep + len(payload)
        finally:
            f.close()


def _restore(f: Any, keep: int, size: int, target: Path, recovery: Recovery | None) -> None:
    with contextlib.suppress(OSError):
        f.truncate(keep)
        if recovery is not None and recovery.torn_bytes:
            f.seek(keep)
            f.write(recovery.torn_bytes)
        f.flush()
        os.fsync(f.fileno())
