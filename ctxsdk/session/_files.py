"""Opening a file that a reader was given: only a regular file, never blocking, never unbounded.

A path may name a FIFO (an ``open`` for reading waits for a writer for ever), a device such
as ``/dev/zero`` behind a symlink (a read never ends), a directory or a socket. Every reader
of a file it was handed (the log reader, the importers, the fold bundle store, the memory
store) opens it here: ``stat`` first (it follows symlinks), then a non-blocking ``open`` and
``fstat`` again (a FIFO swapped in meanwhile does not block either), and reads at most
``max_bytes``, counted as it streams (a file that grows while it is read is refused too).

Each caller says what a refusal is in its own terms (``refuse(problem, detail)`` builds the
error raised); what the operating system says (``FileNotFoundError``, ``PermissionError``,
a symlink loop) propagates unchanged, for the caller to name.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal, TypeAlias

__all__ = [
    "OPEN_FLAGS",
    "FileRefusal",
    "check_byte_limit",
    "file_kind",
    "open_regular_file",
    "read_regular_file",
    "size_text",
]

OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
"""Read-only, non-blocking (a FIFO opens at once instead of waiting for a writer), not
inherited by child processes."""

_CHUNK = 1 << 20  # bytes read at a time while counting against the limit

FileRefusal: TypeAlias = Literal["not-a-file", "too-large"]
"""Why ``open_regular_file`` / ``read_regular_file`` refuse a path: it is not a regular file
(``detail`` says what it is: "a FIFO (named pipe)", "a directory", ...), or it holds more
than the limit (``detail`` says how much: "1,234 bytes", or "at least 1,234 bytes" for a
file that grew past the limit while it was read)."""

Refuse: TypeAlias = Callable[[FileRefusal, str], Exception]


def file_kind(mode: int) -> str | None:
    """What a file that is not a regular file is ("a FIFO (named pipe)", "a directory",
    ...), None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "a special file"


def check_byte_limit(max_bytes: object, default_name: str, default: int) -> int:
    """``max_bytes`` if it is a positive whole number of bytes, else ``InvalidArgument``
    saying what the default (``default_name``) is."""
    if type(max_bytes) is not int or max_bytes <= 0:
        from ..errors import InvalidArgument

        raise InvalidArgument(
            f"max_bytes must be a positive number of bytes, not {max_bytes!r} (the default "
            f"is {default_name} = {default}, {size_text(default)})"
        )
    return max_bytes


def size_text(n: int) -> str:
    """``n`` bytes as a person reads a limit: ``256 MiB`` when it is a whole number of a
    unit, else ``1234 bytes``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} bytes"


@contextmanager
def open_regular_file(path: str | os.PathLike[str], refuse: Refuse) -> Iterator[int]:
    """A read-only descriptor of ``path``, opened only if it is a regular file (checked with
    ``stat``, opened non-blocking, checked again with ``fstat``); closed on exit. A path that
    is not one raises ``refuse("not-a-file", what it is)``; an ``OSError`` from the system
    (no such file, permission denied, a symlink loop) propagates, and a name the file
    system cannot encode (a lone surrogate) is ``FileNotFoundError``: no file has it."""
    p = Path(path)
    try:
        os.fsencode(p)
    except UnicodeEncodeError:  # a lone surrogate: os.stat would raise a bare ValueError
        raise FileNotFoundError(
            errno.ENOENT, "no file has this name: the file system cannot encode it", str(p)
        ) from None
    kind = file_kind(os.stat(p).st_mode)
    if kind is not None:
        raise refuse("not-a-file", kind)
    fd = os.open(p, OPEN_FLAGS)
    try:
        kind = file_kind(os.fstat(fd).st_mode)
        if kind is not None:
            raise refuse("not-a-file", kind)
        yield fd
    finally:
        os.close(fd)


def read_regular_file(path: str | os.PathLike[str], max_bytes: int, refuse: Refuse) -> bytes:
    """The bytes of ``path``, read only if it is a regular file (``open_regular_file``) of at
    most ``max_bytes``: a larger size on disk, or more bytes than that while it is read,
    raises ``refuse("too-large", "<n> bytes")`` before the rest is read."""
    with open_regular_file(path, refuse) as fd:
        size = os.fstat(fd).st_size
        if size > max_bytes:
            raise refuse("too-large", f"{size:,} bytes")
        parts: list[bytes] = []
        total = 0
        # First the size fstat gave and a byte (that byte: it grew) in one read, so a file
        # is one buffer, never chunks joined (half the time of a 36 MB log's read); whatever
        # follows is read in chunks.
        step = size + 1
        while chunk := os.read(fd, min(step, max_bytes + 1 - total)):
            total += len(chunk)
            if total > max_bytes:  # it grew while being read
                raise refuse("too-large", f"at least {total:,} bytes")
            parts.append(chunk)
            step = _CHUNK
        return parts[0] if len(parts) == 1 else b"".join(parts)
