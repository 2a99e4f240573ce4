"""Copying a memory from one store to another, exactly: a SQLite file into a PostgreSQL
namespace and back, one namespace into another, a file into a new file.

    report = copy_memory(SQLiteStore("work/memory.db"), PostgresStore(url, namespace="team-a"))
    mem.copy_to("postgresql://alice@db/mem", namespace="team-a")   # the same, from a Memory

Every row of the source (``MaintainedStore.rows``: nodes, edges, meta) is read in one
consistent snapshot and written as it is (``MaintainedStore.load``): ids, uris, sources,
status and both times of every node, archived ones too; every edge with its weight and time;
every meta value. So the copy's ``rows(table)`` and ``Memory.export_json()`` equal the
source's. The destination must hold no node (a copy never merges into a memory:
``Memory.import_json`` does that), and the whole copy is one transaction there: a row it
refuses leaves it as empty as it was. The embedding cache (``vectors``) is not copied: it is
the store's own cache, and each node is embedded again at the destination's next search.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._display import Rendered, esc, plural
from .._progress import Progress, resolve_progress
from ..errors import InvalidArgument
from ._store import MaintainedStore, MemoryStore

__all__ = ["CHUNK", "TABLES", "CopyReport", "copy_memory"]

TABLES = ("nodes", "edges", "meta")  # in the order a copy loads them: an edge needs its ends
CHUNK = 500  # rows per load() call, and between two progress reports
_NOT_COPIED = "embeddings are not copied: each node is embedded again at the next search"


@dataclass(frozen=True)
class CopyReport(Rendered):
    """What one ``copy_memory`` wrote: the rows copied per table (``nodes`` counts archived
    ones too, ``archived`` says how many), from ``source`` to ``destination`` (their
    locations: a path, or a PostgreSQL URL without its password and with the namespace)."""

    source: str
    destination: str
    nodes: int
    edges: int
    meta: int
    archived: int = 0

    @property
    def rows(self) -> int:
        """Rows copied, over every table."""
        return self.nodes + self.edges + self.meta

    def counts(self) -> dict[str, int]:
        """Rows copied per table (``nodes``, ``edges``, ``meta``)."""
        return {"nodes": self.nodes, "edges": self.edges, "meta": self.meta}

    def __repr__(self) -> str:
        return f"CopyReport({self.nodes} nodes, {self.edges} edges, {self.meta} meta)"

    def _headline(self) -> str:
        archived = f" ({self.archived:,} archived)" if self.archived else ""
        return (
            f"copy {self.source} -> {self.destination}: {plural(self.nodes, 'node')}{archived}, "
            f"{plural(self.edges, 'edge')}, {plural(self.meta, 'meta value')} copied"
        )

    def _text_(self) -> str:
        return f"{self._headline()}\n  {_NOT_COPIED}"

    def _html_(self) -> str:
        return f"<div class='cx-title'>{esc(self._headline())}</div><div>{esc(_NOT_COPIED)}</div>"


def _maintained(store: MemoryStore, role: str) -> MaintainedStore:
    if not isinstance(store, MaintainedStore):
        raise InvalidArgument(
            f"the {role} of a copy is a store that reads and loads its rows (SQLiteStore, "
            f"PostgresStore), not {type(store).__name__}"
        )
    return store


def copy_memory(
    src: MemoryStore,
    dst: MemoryStore,
    *,
    progress: Progress | bool | None = None,
) -> CopyReport:
    """Copy every node, edge and meta value of ``src`` into ``dst``, exactly (see the module
    docs). ``dst`` must hold no node (``InvalidArgument`` naming it and how many it holds);
    the copy is one transaction there, so a failure leaves it empty. ``progress(done, total,
    "copy")`` is called every ``CHUNK`` rows (``None``: a bar on a terminal, else silence;
    ``False``: silence). The embedding cache is not copied."""
    src, dst = _maintained(src, "source"), _maintained(dst, "destination")
    report = resolve_progress(progress)
    with src.snapshot():  # nodes, edges and meta of one moment
        rows: dict[str, list[dict[str, Any]]] = {t: src.rows(t) for t in TABLES}
    total = sum(len(r) for r in rows.values())
    done = 0
    with dst.batch():
        held = sum(dst.count(include_archived=True).values())
        if held:
            raise InvalidArgument(
                f"{dst.location}: the destination already holds {plural(held, 'node')}; a "
                "memory is copied into an empty one only (Memory.import_json merges by uri)"
            )
        report(0, total, "copy")
        for table in TABLES:
            for at in range(0, len(rows[table]), CHUNK):
                chunk = rows[table][at : at + CHUNK]
                dst.load(table, chunk)
                done += len(chunk)
                report(done, total, "copy")
    return CopyReport(
        source=src.location,
        destination=dst.location,
        nodes=len(rows["nodes"]),
        edges=len(rows["edges"]),
        meta=len(rows["meta"]),
        archived=sum(1 for n in rows["nodes"] if _archived(n)),
    )


def _archived(row: Mapping[str, Any]) -> bool:
    return row.get("status") == "archived"
