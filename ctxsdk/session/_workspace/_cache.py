"""The derived index: listing rows cached by file path, size and ``mtime_ns``; never
authoritative (a changed, removed or misplaced file is read again)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any

import orjson

from ..._version import __version__
from .._codec import KNOWN_VERSIONS, dumps_json, loads_line
from .._files import FileRefusal, read_regular_file
from ._summary import SUMMARY_KEYS

CACHE_RELPATH = Path("storages") / "ctxsdk" / "index.json"
"""Where the derived index lives, relative to the DSH home."""

_CACHE_FORMAT = "ctxsdk.workspace-index"
_CACHE_VERSION = 3  # bump when what a summary holds, or how it is computed, changes
_MAX_CACHE_BYTES = 256 << 20  # a larger index file is not read (it is rebuilt)

_LO, _HI = -(2**63), 2**63 - 1  # a cached int must fit the listing's Int64 columns


def valid_row(row: Any) -> bool:
    """A cached row has exactly the summary keys, in order, each of the type a summary gives
    it (str or None, bool or None, an int that fits Int64 or None; ``id`` a str, ``readable``
    a bool), and ``error`` set iff it is unreadable. Written out field by field: it runs for
    every row of a warm listing."""
    if type(row) is not dict or tuple(row) != SUMMARY_KEYS:
        return False
    (sid, title, events, created, updated, parent, origin, depth, version, seeded, cwd,
     interrupted, readable, error, fmt) = row.values()  # fmt: skip
    return (
        type(sid) is str
        and (fmt is None or type(fmt) is str)
        and (title is None or type(title) is str)
        and (parent is None or type(parent) is str)
        and (origin is None or type(origin) is str)
        and (cwd is None or type(cwd) is str)
        and (seeded is None or type(seeded) is bool)
        and (interrupted is None or type(interrupted) is bool)
        and type(readable) is bool
        and (error is None) is readable
        and (error is None or type(error) is str)
        and (events is None or (type(events) is int and _LO <= events <= _HI))
        and (created is None or (type(created) is int and _LO <= created <= _HI))
        and (updated is None or (type(updated) is int and _LO <= updated <= _HI))
        and (depth is None or (type(depth) is int and _LO <= depth <= _HI))
        and (version is None or (type(version) is int and _LO <= version <= _HI))
    )


def _reader_tag(max_bytes: int, kind: str) -> str:
    """What a cached summary depends on besides the file: this reader's version, the
    listing's decompression cap (a log refused under one cap may be read under another) and
    what the root is (``dsh``, or the agent format its files are read as)."""
    versions = ",".join(map(str, KNOWN_VERSIONS))
    tag = f"{__version__}/{_CACHE_VERSION}/{versions}/{max_bytes}"
    return tag if kind == "dsh" else f"{tag}/{kind}"


class _Stale(Exception):
    """An index file that is not read (not a regular file, or too large): it is rebuilt."""


def _stale(problem: FileRefusal, detail: str) -> _Stale:
    return _Stale(detail)


def _read_index_file(path: Path) -> bytes | None:
    """The index file's bytes, or None when it is not a regular file (a FIFO is never waited
    on), larger than ``_MAX_CACHE_BYTES`` or unreadable; a missing one raises
    ``FileNotFoundError``."""
    try:
        return read_regular_file(path, _MAX_CACHE_BYTES, _stale)
    except FileNotFoundError:
        raise
    except (OSError, _Stale):
        return None


class Index:
    """The derived index file: ``{rel path: {size, mtime_ns, problem, row}}``; never
    authoritative. ``problem`` is what the walk found wrong with the file's place (a flat
    file, a second encoding): an entry only holds while that is unchanged too.

    A poisoned file is stale, never trusted: one that is not a regular file, too large,
    not JSON or for another reader, root or cap is ignored whole; an entry whose fields
    have the wrong types or keys is dropped (and its log read again)."""

    def __init__(self, path: Path | None, root: Path, max_bytes: int, kind: str = "dsh") -> None:
        self.path = path
        self.root = root
        self.tag = _reader_tag(max_bytes, kind)
        self.entries: dict[str, Any] = {}
        self.dirty = False

    def load(self) -> None:
        if self.path is None:
            return
        try:
            data = _read_index_file(self.path)
        except FileNotFoundError:
            return  # no index yet
        if data is None:
            self.dirty = True  # not a file this reader takes: replace it
            return
        try:
            doc = loads_line(data)
        except orjson.JSONDecodeError:
            self.dirty = True  # corrupt: start empty, rebuild
            return
        if (
            not isinstance(doc, dict)
            or doc.get("format") != _CACHE_FORMAT
            or doc.get("reader") != self.tag
            or doc.get("root") != str(self.root)
            or not isinstance(doc.get("entries"), dict)
        ):
            self.dirty = True  # foreign, stale or for another root: rewrite it
            return
        self.entries = doc["entries"]

    def get(self, rel: str, st: os.stat_result, problem: str | None) -> dict[str, Any] | None:
        entry = self.entries.get(rel)
        if entry is None:
            return None
        if (
            type(entry) is not dict
            or type(entry.get("size")) is not int
            or type(entry.get("mtime_ns")) is not int
            or type(entry.get("problem")) not in (str, type(None))
            or not valid_row(entry.get("row"))
        ):
            del self.entries[rel]  # poisoned: drop it, the log is read again
            self.dirty = True
            return None
        if entry["size"] != st.st_size or entry["mtime_ns"] != st.st_mtime_ns:
            return None
        if entry["problem"] != problem:  # the file is fine but its place changed, or back
            return None
        row: dict[str, Any] = entry["row"]
        return row

    def put(self, rel: str, st: os.stat_result, problem: str | None, row: dict[str, Any]) -> None:
        self.entries[rel] = {
            "size": st.st_size,
            "mtime_ns": st.st_mtime_ns,
            "problem": problem,
            "row": {k: row.get(k) for k in SUMMARY_KEYS},
        }
        self.dirty = True

    def keep_only(self, live: set[str]) -> None:
        gone = [k for k in self.entries if k not in live]
        for k in gone:
            del self.entries[k]
        self.dirty = self.dirty or bool(gone)

    def save(self) -> None:
        """Write atomically (temp file + ``os.replace``); any failure leaves the cache as it
        was and is otherwise ignored (the cache is an optimisation)."""
        if self.path is None or not self.dirty:
            return
        doc = {
            "format": _CACHE_FORMAT,
            "reader": self.tag,
            "root": str(self.root),
            "entries": self.entries,
        }
        tmp: str | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".index.", suffix=".tmp", dir=self.path.parent)
            with os.fdopen(fd, "wb") as f:
                f.write(dumps_json(doc))
            os.replace(tmp, self.path)
            tmp = None
            self.dirty = False
        except OSError:
            pass
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
