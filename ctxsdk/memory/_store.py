"""The store protocol: what the Memory engine needs from a database, and nothing more.

``SQLiteStore`` (``_sqlite.py``) is the one implementation; a server database can be added
behind the same protocol without touching the engine. Every write is a transaction: a single
call commits on its own, and ``with store.batch():`` makes the calls inside it one
transaction (all or nothing). Readers never see half a batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, NamedTuple, Protocol, runtime_checkable

from ._model import Edge, Node

__all__ = [
    "BatchStore",
    "Changes",
    "MaintainedStore",
    "MemoryStore",
    "link_all",
    "nodes_at",
    "put_all",
]


class Changes(NamedTuple):
    """What ``changes(since)`` read: every node written after revision ``since`` (archived
    ones and every type included, in id order) and the ids of the nodes deleted after it
    (and not written again since)."""

    nodes: list[Node]
    gone: list[str]


@runtime_checkable
class MemoryStore(Protocol):
    """A persistent graph of ``Node``s and ``Edge``s (see the module docs)."""

    @property
    def location(self) -> str:
        """Where the data lives (a file path, or a URL for a server database)."""
        ...

    def batch(self) -> AbstractContextManager[None]:
        """One transaction around the writes inside it (nestable: the outermost commits)."""
        ...

    def revision(self) -> int:
        """A number that changes whenever any process commits a write (caches key on it)."""
        ...

    def changes(self, since: int) -> Changes | None:
        """The nodes written and deleted after revision ``since`` (a number ``revision()``
        gave), so a reader that holds the nodes of ``since`` reads only what changed; None
        when the store cannot tell (``since`` is older than what it remembers of deletes):
        read every node again. A write that commits while this runs may be included too."""
        ...

    # -- nodes -----------------------------------------------------------------------------
    def put(self, node: Node) -> Node:
        """Insert ``node`` (an empty ``id`` gets a new one, an empty ``uri`` its default,
        times are stamped) or replace the node with its id; returns what was stored."""
        ...

    def get(self, node_id: str) -> Node | None: ...

    def by_uri(self, uri: str) -> Node | None: ...

    def nodes(
        self, *, types: Iterable[str] | None = None, include_archived: bool = False
    ) -> list[Node]:
        """Nodes in id order, of ``types`` (all when None), archived ones only if asked."""
        ...

    def count(self, *, include_archived: bool = False) -> dict[str, int]:
        """Nodes per type."""
        ...

    def delete(self, node_id: str) -> bool:
        """Remove a node for good with every edge into or out of it; False when there is
        no such node."""
        ...

    # -- edges -----------------------------------------------------------------------------
    def link(self, edge: Edge) -> bool:
        """Add ``edge``; False (and nothing written) when the same src/dst/label exists."""
        ...

    def unlink(self, src: str, dst: str, label: str) -> bool: ...

    def edges(
        self,
        *,
        src: str | None = None,
        dst: str | None = None,
        labels: Sequence[str] | None = None,
    ) -> list[Edge]:
        """Edges out of ``src`` and/or into ``dst``, of ``labels`` (all when None)."""
        ...

    def edges_touching(self, ids: Iterable[str]) -> list[Edge]:
        """Every edge into or out of any node in ``ids``, in (src, dst, label) order, each
        once: what ``find`` reads of its candidates' edges, in one call."""
        ...

    # -- embeddings (a cache of the search index's vectors, one per node and embedder) ----
    def vectors(self, model: str, ids: Iterable[str] | None = None) -> dict[str, tuple[str, bytes]]:
        """Stored vectors of ``model`` (the embedder's name, dimension and version): node
        id -> (hash of the embedded text, float32 little-endian bytes), for ``ids`` (all
        when None). A vector goes with its node: ``delete`` removes it, a ``put`` that
        changes the node's indexed text (name, text, aliases, fail, fix, until) drops it."""
        ...

    def put_vectors(self, model: str, rows: Iterable[tuple[str, str, bytes]]) -> int:
        """Store ``(node id, text hash, vector bytes)`` rows in one transaction, replacing
        each node's vector of ``model``; rows of nodes that do not exist are skipped.
        Returns how many were written."""
        ...

    # -- small keyed values (settings, pins, what was ingested) ---------------------------
    def get_meta(self, key: str) -> Any: ...

    def set_meta(self, key: str, value: Any) -> None:
        """Store a JSON-serialisable ``value`` under ``key`` (None deletes it)."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class MaintainedStore(MemoryStore, Protocol):
    """A store that maintenance can rewrite (``Memory.scrub``) or copy (``copy_memory``):
    every stored value read as it is, updated or loaded exactly, and the old bytes compacted
    away. ``SQLiteStore`` and ``PostgresStore`` are two."""

    def snapshot(self) -> AbstractContextManager[None]:
        """A consistent read of several calls, without the write lock."""
        ...

    @property
    def in_batch(self) -> bool:
        """Whether this store object is inside a batch or a snapshot."""
        ...

    def rows(self, table: str) -> list[dict[str, Any]]:
        """Every row of ``nodes``, ``edges`` or ``meta``, JSON columns decoded."""
        ...

    def update(self, table: str, key: Sequence[str], values: Mapping[str, Any]) -> None:
        """Set ``values`` in one row exactly (no time stamped)."""
        ...

    def load(self, table: str, rows: Iterable[Mapping[str, Any]]) -> int:
        """Write rows of ``nodes``, ``edges`` or ``meta`` as ``rows(table)`` returns them,
        exactly (nothing stamped), for a copy or a restore; new rows only (one that would
        replace a row is ``InvalidArgument``), in one transaction or the caller's batch.
        Returns how many were written."""
        ...

    def compact(self) -> bool:
        """Drop the bytes no row holds any more; False when they may remain (another reader)."""
        ...


@runtime_checkable
class BatchStore(MemoryStore, Protocol):
    """A store that writes many rows in one statement each (``SQLiteStore``): what a long
    session's ingest writes, without a round of statements per node. Each call is one
    transaction (or part of the caller's batch) and means exactly what the same calls one
    by one would (``put`` per node, ``link`` per edge, ``by_uri`` per uri). The engine uses
    it when the store offers it, and the one-by-one calls otherwise."""

    def put_many(self, nodes: Sequence[Node]) -> list[Node]:
        """``[put(n) for n in nodes]`` in one transaction: what was stored, in order."""
        ...

    def link_many(self, edges: Sequence[Edge]) -> int:
        """``link`` each edge in one transaction; how many were new (a src/dst/label
        already there, or given twice, counts once)."""
        ...

    def by_uris(self, uris: Iterable[str]) -> dict[str, Node]:
        """The nodes holding ``uris``, by uri (a uri no node holds is left out)."""
        ...


def put_all(store: MemoryStore, nodes: Sequence[Node]) -> list[Node]:
    """``store.put_many(nodes)`` when the store has it, else ``put`` one by one (the caller
    holds the batch that makes them one transaction)."""
    if isinstance(store, BatchStore):
        return store.put_many(nodes)
    return [store.put(n) for n in nodes]


def link_all(store: MemoryStore, edges: Sequence[Edge]) -> int:
    """``store.link_many(edges)`` when the store has it, else ``link`` one by one."""
    if isinstance(store, BatchStore):
        return store.link_many(edges)
    return sum(1 for e in edges if store.link(e))


def nodes_at(store: MemoryStore, uris: Iterable[str]) -> dict[str, Node]:
    """``store.by_uris(uris)`` when the store has it (a ``BatchStore``, or a store with
    that one method: ``PostgresStore``), else ``by_uri`` one by one."""
    by_uris = getattr(store, "by_uris", None)
    if callable(by_uris):
        found: dict[str, Node] = by_uris(uris)
        return found
    return {u: n for u in dict.fromkeys(uris) if (n := store.by_uri(u)) is not None}
