"""The derived index: listing rows cached by file path, size and ``mtime_ns``; never
authoritative (a changed, removed or misplaced file is read again)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any

import orjson

from .._codec import KNOWN_VERSIONS
from ._summary import SUMMARY_KEYS

CACHE_RELPATH = Path("storages") / "ctxsdk" / "index.json"
"""Where the derived index lives, relative to the DSH home."""

_CACHE_FORMAT = "ctxsdk.workspace-index"
_CACHE_VERSION = 1  # bump when what a summary holds, or how it is computed, changes


def _reader_tag() -> str:
    """What a cached summary depends on besides the file: this reader's version."""
    from ... import __version__

    return f"{__version__}/{_CACHE_VERSION}/{','.join(map(str, KNOWN_VERSIONS))}"


class Index:
    """The derived index file: ``{rel path: {size, mtime_ns, problem, row}}``; never
    authoritative. ``problem`` is what the walk found wrong with the file's place (a flat
    file, a second encoding): an entry only holds while that is unchanged too."""

    def __init__(self, path: Path | None, root: Path) -> None:
        self.path = path
        self.root = root
        self.entries: dict[str, dict[str, Any]] = {}
        self.dirty = False

    def load(self) -> None:
        if self.path is None:
            return
        try:
            doc = orjson.loads(self.path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return  # missing or corrupt: start empty, rebuild
        if (
            not isinstance(doc, dict)
            or doc.get("format") != _CACHE_FORMAT
            or doc.get("reader") != _reader_tag()
            or doc.get("root") != str(self.root)
            or not isinstance(doc.get("entries"), dict)
        ):
            self.dirty = True  # foreign, stale or for another root: rewrite it
            return
        self.entries = doc["entries"]

    def get(self, rel: str, st: os.stat_result, problem: str | None) -> dict[str, Any] | None:
        entry = self.entries.get(rel)
        if not isinstance(entry, dict):
            return None
        if entry.get("size") != st.st_size or entry.get("mtime_ns") != st.st_mtime_ns:
            return None
        if entry.get("problem") != problem:  # the file is fine but its place changed, or back
            return None
        row = entry.get("row")
        if not isinstance(row, dict) or not all(k in row for k in SUMMARY_KEYS):
            return None
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
            "reader": _reader_tag(),
            "root": str(self.root),
            "entries": self.entries,
        }
        tmp: str | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".index.", suffix=".tmp", dir=self.path.parent)
            with os.fdopen(fd, "wb") as f:
                f.write(orjson.dumps(doc))
            os.replace(tmp, self.path)
            tmp = None
            self.dirty = False
        except OSError:
            pass
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
