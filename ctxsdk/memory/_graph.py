"""The memory graph as a ``networkx.MultiDiGraph``: for analysis and drawing in a notebook
(centrality, components, paths) with the whole networkx toolbox, not for the engine's own
search, which walks the store directly."""

from __future__ import annotations

import networkx as nx  # type: ignore[import-untyped]  # networkx ships no type hints

from ._store import MemoryStore

__all__ = ["to_networkx"]

_NODE_ATTRS = (
    "type",
    "name",
    "text",
    "uri",
    "status",
    "until",
    "until_at",
    "fail",
    "fix",
    "created_at",
    "updated_at",
)


def to_networkx(store: MemoryStore, *, include_archived: bool = False) -> nx.MultiDiGraph:
    """A snapshot of ``store``: nodes keyed by id with their scalar fields as attributes
    (plus ``aliases`` as a list), edges keyed by label with ``label`` and ``weight``. Edges
    touching a node left out (archived, unless asked for) are left out too, so the graph
    never holds an attribute-less node. Read as one consistent state: in a read snapshot
    when the store has one (``SQLiteStore.snapshot``: writers are not held up), else in a
    ``batch()``."""
    graph = nx.MultiDiGraph()
    snapshot = getattr(store, "snapshot", None)
    with snapshot() if callable(snapshot) else store.batch():
        nodes = store.nodes(include_archived=include_archived)
        edges = store.edges()
    for node in nodes:
        attrs = {a: getattr(node, a) for a in _NODE_ATTRS}
        graph.add_node(node.id, aliases=list(node.aliases), **attrs)
    for edge in edges:
        if edge.src in graph and edge.dst in graph:
            graph.add_edge(edge.src, edge.dst, key=edge.label, label=edge.label, weight=edge.weight)
    return graph
