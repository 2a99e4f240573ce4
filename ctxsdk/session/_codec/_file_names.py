"""Canonical log file names: ``session.jsonl[.zstd]`` for v0, ``session.v<N>.jsonl[.zstd]``
from v1 on; the generation and compression a name says."""

from __future__ import annotations

import re

from ...errors import InvalidArgument
from ._decoded import Compression

__all__ = ["canonical_file_name", "is_session_file_name", "version_from_filename"]

_FILE_RE = re.compile(r"^session(?:\.v(\d+))?\.jsonl(\.zstd)?$")


def version_from_filename(name: str) -> tuple[int | None, Compression] | None:
    """(generation, compression) named by a canonical session file name, or None."""
    m = _FILE_RE.match(name)
    if not m:
        return None
    return (int(m.group(1)) if m.group(1) else 0), ("zstd" if m.group(2) else "none")


def canonical_file_name(version: int, compression: Compression = "zstd") -> str:
    """The log file name of a format generation: ``session.jsonl[.zstd]`` for v0,
    ``session.v<N>.jsonl[.zstd]`` from v1 on.

    >>> canonical_file_name(3)
    'session.v3.jsonl.zstd'
    >>> canonical_file_name(0, "none")
    'session.jsonl'
    """
    if type(version) is not int or version < 0:
        raise InvalidArgument(f"a format version is a non-negative integer, not {version!r}")
    if compression not in ("zstd", "none"):
        raise InvalidArgument(f"compression is 'zstd' or 'none', not {compression!r}")
    gen = f".v{version}" if version else ""
    return f"session{gen}.jsonl" + (".zstd" if compression == "zstd" else "")


def is_session_file_name(name: str) -> bool:
    """True for a canonical session log name (any generation, either encoding).

    ``session.v0.jsonl`` is not canonical (v0 has no ``.v0``), so it is not one.
    """
    named = version_from_filename(name)
    return named is not None and name == canonical_file_name(named[0] or 0, named[1])
