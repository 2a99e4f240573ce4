"""Writing logs safely: new files published atomically, batches appended under a lock.

A new file is written to a temp file, fsynced, then published with a no-overwrite hard link
(the harness's way) and the directory fsynced; if anything fails, the temp file and any
directory the write created are removed again. An append adds exactly one zstd frame (or a
run of lines) to the end, serialized with every other writer (v3: the ``session.lock``
lease; v0-v2: an flock on the log file itself) and only if the file still holds the bytes
the caller read; if anything fails the file is put back to its old bytes. Every ``OSError``
comes out as a ``WriteError`` that names the file.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ..errors import LockHeld, WriteError
from ._codec import Compression, Recovery, dumps_line, zstd_frame

__all__ = [
    "append_batch",
    "encode_batch",
    "is_shipped_sample",
    "refuse_shipped_sample",
    "session_lock",
    "write_new",
]

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


def _failed(exc: OSError, path: Path, what: str, *, left: str) -> WriteError:
    """A ``WriteError`` for an ``OSError`` hit while writing ``path``."""
    reason = exc.strerror or str(exc)
    return WriteError(exc.errno or errno.EIO, f"{path}: {what} failed ({reason}); {left}")


def is_shipped_sample(path: str | Path) -> bool:
    """Whether ``path`` is inside the samples shipped with the package (``ctxsdk.samples``),
    which stay as shipped (a path that cannot be resolved is not)."""
    try:
        return Path(path).expanduser().resolve().is_relative_to(_SHIPPED_SAMPLES)
    except OSError:
        return False


def refuse_shipped_sample(path: str | Path, *, instead: str) -> None:
    """Refuse to write into the samples shipped inside the package (``ctxsdk.samples``).

    They are part of the installed package and must stay as shipped; ``instead`` tells the
    caller how to work on a copy.
    """
    target = Path(path).expanduser()
    if is_shipped_sample(target):
        raise WriteError(
            errno.EROFS,
            f"{target} is a sample shipped with ctxsdk (inside the installed package) and is "
            f"read-only; {instead}",
        )


def write_new(
    path: str | Path,
    header: dict[str, Any],
    events: Iterable[dict[str, Any]],
    *,
    compression: Compression,
    batch_size: int = 64,
    overwrite: bool = False,
) -> Path:
    """Write a complete log: the header alone in the first frame, then one frame per batch.

    On any failure nothing is left behind: the temp file is removed, directories this call
    created are removed again, an existing file (``overwrite=True``) keeps its bytes, and an
    ``OSError`` becomes a ``WriteError`` that names ``path``.
    """
    dest = Path(path)
    created: list[Path] = []
    tmp: Path | None = None
    published = existed = False
    try:
        existed = dest.exists()
        if existed and not overwrite:
            raise WriteError(errno.EEXIST, f"{dest} exists; pass overwrite=True to replace it")
        created = [d for d in (dest.parent, *dest.parent.parents) if not d.exists()]
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
        tmp = Path(tmp_name)
        with os.fdopen(fd, "wb", buffering=0) as f:
            _write_all(f.fileno(), encode_batch([dumps_line(header)], compression))
            batch: list[bytes] = []
            for ev in events:
                batch.append(dumps_line(ev))
                if len(batch) >= batch_size:
                    _write_all(f.fileno(), encode_batch(batch, compression))
                    batch = []
            if batch:
                _write_all(f.fileno(), encode_batch(batch, compression))
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
            published = True
            tmp.unlink()
        published = True
        tmp = None
        _fsync_dir(dest.parent)
    except BaseException as exc:
        if tmp is not None:
            with contextlib.suppress(OSError):
                tmp.unlink()
        if not published:
            for d in created:  # innermost first; only while empty
                with contextlib.suppress(OSError):
                    d.rmdir()
        if isinstance(exc, OSError) and not isinstance(exc, WriteError):
            if published:
                left = "the file was published but may not be durable yet"
            elif existed:
                left = "the old file was left as it was"
            else:
                left = "nothing was written"
            raise _failed(exc, dest, "writing a new log", left=left) from exc
        raise
    return dest


def _write_all(fd: int, data: bytes, offset: int | None = None) -> None:
    """Write all of ``data`` (at ``offset``, or at the current position), across short writes."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view) if offset is None else os.pwrite(fd, view, offset)
        if n <= 0:  # pragma: no cover - a regular file never returns 0 for a non-empty write
            raise OSError(errno.EIO, "write returned 0")
        view = view[n:]
        if offset is not None:
            offset += n


def _read_all(fd: int, size: int) -> bytes:
    chunks: list[bytes] = []
    pos = 0
    while pos < size:
        chunk = os.pread(fd, min(size - pos, 1 << 20), pos)
        if not chunk:
            break
        chunks.append(chunk)
        pos += len(chunk)
    return b"".join(chunks)


def _open_lock_file(lock_path: Path) -> int:
    """Open (creating) the lease file without following a symlink planted at its path."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(lock_path, flags, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP or lock_path.is_symlink():
            raise WriteError(
                errno.ELOOP,
                f"{lock_path} is a symbolic link; the session lock is never followed through "
                "a link. Remove the link (nothing was written), then append again",
            ) from None
        raise WriteError(
            exc.errno, f"{lock_path}: cannot open the session lock ({exc}); nothing was written"
        ) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise WriteError(
            errno.EINVAL,
            f"{lock_path} is not a regular file; remove it (nothing was written), then append "
            "again",
        )
    return fd


def _lock_now(fd: int, held: str) -> None:
    """An exclusive flock on ``fd`` without waiting; ``LockHeld(held)`` if another has it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise LockHeld(errno.EWOULDBLOCK, held) from None


@contextlib.contextmanager
def session_lock(session_dir: Path) -> Iterator[None]:
    """Hold the v3 ``session.lock`` single-writer lease (non-blocking flock) for a write.

    The lock file is opened with ``O_NOFOLLOW``: a symlink at its path is refused.
    """
    lock_path = session_dir / LOCK_NAME
    fd = _open_lock_file(lock_path)
    try:
        _lock_now(
            fd,
            f"{lock_path} is held by another process (a live harness session?); "
            "close it or wait, then open the session again and append again",
        )
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

    Every append is serialized: with ``use_lock`` (v3) under the harness's ``session.lock``
    lease, otherwise (v0-v2, whose harness has no lease file) under an exclusive flock on the
    log file itself. Either is taken without waiting; if another process holds it,
    ``LockHeld`` is raised and nothing is written.

    ``expected`` is the file's content as the caller read it; it is compared under the lock,
    and if the file changed since (even to the same size), nothing is written. A torn tail
    reported in ``recovery`` is repaired as the harness does (truncate at the torn frame or
    line, re-append its complete lines in this batch). If the write fails (ENOSPC, EFBIG, an
    I/O error) the file is put back to its old bytes and ``WriteError`` names it.
    """
    target = Path(path)
    refuse_shipped_sample(
        target,
        instead="save a copy (s.save(some_dir / 'copy')) and append to the copy "
        "(cx.Session.open(copy).append_to_log())",
    )
    lock = session_lock(target.parent) if use_lock else contextlib.nullcontext()
    with lock:
        try:
            fd = os.open(target, os.O_RDWR | os.O_CLOEXEC)
        except OSError as exc:
            raise WriteError(
                exc.errno, f"{target}: cannot open for append ({exc}); nothing was written"
            ) from None
        try:
            if not use_lock:
                _lock_now(
                    fd,
                    f"{target} is being appended to by another process; nothing was "
                    "written. Open the session again and append again",
                )
            size = os.fstat(fd).st_size
            if size != len(expected) or _read_all(fd, size) != expected:
                raise WriteError(
                    errno.ESTALE,
                    f"{target} changed since it was read ({len(expected)} -> {size} bytes; "
                    "another writer?); nothing was written. Open it again "
                    "(cx.Session.open) and append again",
                )
            keep = recovery.truncate_at if recovery is not None else size
            prefix = list(recovery.kept_lines) if recovery is not None else []
            payload = encode_batch(prefix + lines, compression)
            end = keep + len(payload)
            try:
                # Overwrite a torn tail in place (no truncate first: the old bytes stay until
                # the new ones are there), cut what is left of it, then make it durable.
                _write_all(fd, payload, keep)
                if end < size:
                    os.ftruncate(fd, end)
                os.fsync(fd)
            except BaseException as exc:
                restored = _restore(fd, size, recovery)
                if isinstance(exc, OSError):
                    left = (
                        "the file was put back to its old bytes"
                        if restored
                        else "putting the old bytes back failed too; the log may need repair"
                    )
                    raise _failed(exc, target, "append", left=left) from exc
                raise
            return end
        finally:
            os.close(fd)


def _restore(fd: int, size: int, recovery: Recovery | None) -> bool:
    """Put the old bytes back after a failed append: re-write a torn tail the batch
    overwrote, cut what the batch added. True when that worked."""
    try:
        if recovery is not None and recovery.torn_bytes:
            _write_all(fd, recovery.torn_bytes, recovery.truncate_at)
        os.ftruncate(fd, size)
        os.fsync(fd)
    except OSError:
        return False
    return True


# the whole samples package: the DSH home and the bundled real sessions (real/)
_SHIPPED_SAMPLES = Path(__file__).resolve().parents[1] / "samples"
