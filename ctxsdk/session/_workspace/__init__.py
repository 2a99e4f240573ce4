"""``Workspace``: every session of a DSH home, listed, opened by id prefix, with lineage.

The harness keeps no index (spec §1): titles, lineage and event counts live only inside the
logs. Listing them therefore means reading every log once; a *derived* index caches what a
listing learned, keyed by file path with the file's size and ``mtime_ns``, so a warm listing
reads no log at all. The cache is never authoritative: an entry whose file changed is
recomputed, a removed file is dropped, a stale, foreign or corrupt cache file is ignored and
rebuilt, and ``sessions(refresh=True)`` ignores it altogether.

One bad entry never hangs or breaks a listing: a FIFO, device, socket, dangling or looping
symlink where a log should be is a row with an error and is never opened; a log is decoded
up to ``LISTING_MAX_BYTES`` (a zstd bomb is a row with an error); a poisoned cache entry is
dropped and its log read again; a log this process may not read is a row with an error.

Cache file: ``<home>/storages/ctxsdk/index.json`` (the harness's storage root is
``<home>/storages``; ctxsdk writes only inside its own ``ctxsdk`` subdirectory), written
atomically (temp file + ``os.replace``), and never inside the installed ctxsdk package (the
shipped samples home stays read-only).

The parts: ``_walk`` finds the session files under a home, ``_summary`` reads one log into a
listing row, ``_cache`` keeps those rows in the derived index, ``_columns`` turns rows into the
listing table, ``_lookup`` matches an id prefix, ``_lineage`` relates parents, forks and
subagents, and ``_facade`` holds ``Workspace``, which ties them together.
"""

from __future__ import annotations

from ._cache import CACHE_RELPATH
from ._columns import SESSION_COLUMNS
from ._facade import Workspace
from ._lineage import LineageNode, SessionTree
from ._summary import LISTING_MAX_BYTES

__all__ = [
    "CACHE_RELPATH",
    "LISTING_MAX_BYTES",
    "SESSION_COLUMNS",
    "LineageNode",
    "SessionTree",
    "Workspace",
]
