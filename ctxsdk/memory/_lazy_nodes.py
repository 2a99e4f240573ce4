"""``LazyNodes``: a memory's node cache that knows every indexed node's id but decodes a
node only when search asks for it (``Memory``'s cache after a saved index was loaded:
``_saved_index``). Reading every row into ``Node`` objects was the largest part of a first
``find`` on a large memory; a ``find`` looks at a few hundred of them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, MutableMapping

from ._index_doc import index_doc
from ._model import Node
from ._store import MemoryStore, nodes_at

__all__ = ["LazyNodes"]

_CHUNK = 500  # uris asked of the store in one statement


class LazyNodes(MutableMapping[str, Node]):
    """The active indexed nodes by id, in id order (as a full read gives them): ids and uris
    known, each node read from the store (by uri, in batches: ``prefetch``) the first time
    it is asked for, or given when it was written (``__setitem__``)."""

    def __init__(self, store: MemoryStore, ids: Iterable[str], uris: Iterable[str]) -> None:
        self._store = store
        self._uri: dict[str, str] = dict(zip(ids, uris, strict=True))  # the keys, in order
        self._given: dict[str, Node] = {}  # written by the sync: the index holds these
        self._got: dict[str, Node] = {}  # read from the store as asked (maybe newer)

    def prefetch(self, ids: Iterable[str]) -> None:
        """Read the nodes of ``ids`` not read yet, in a few statements."""
        want = [
            i
            for i in dict.fromkeys(ids)
            if i in self._uri and i not in self._given and i not in self._got
        ]
        for at in range(0, len(want), _CHUNK):
            part = want[at : at + _CHUNK]
            found = nodes_at(self._store, [self._uri[i] for i in part])
            for nid in part:
                node = found.get(self._uri[nid])
                if node is None or node.id != nid:  # its uri moved: by id
                    node = self._store.get(nid)
                # what the cache holds: active nodes of the indexed types (one the
                # store archived since the last sync is the next sync's to drop)
                if node is not None and index_doc(node) is not None:
                    self._got[nid] = node

    def uris(self) -> list[str]:
        """Each node's uri, in the ids' order."""
        return list(self._uri.values())

    def peek(self, node_id: str) -> Node | None:
        """The node as the sync gave it (None: not given, or only read from the store,
        which may hold a newer one than the index): what a sync compares a change with."""
        return self._given.get(node_id)

    def sort(self) -> None:
        """Put the ids in order again (after an id below the last one came)."""
        self._uri = dict(sorted(self._uri.items()))

    def __getitem__(self, key: str) -> Node:
        node = self._given.get(key) or self._got.get(key)
        if node is None:
            self.prefetch([key])
            node = self._got.get(key)
            if node is None:
                raise KeyError(key)
        return node

    def __setitem__(self, key: str, node: Node) -> None:
        self._uri[key] = node.uri
        self._given[key] = node
        self._got.pop(key, None)

    def __delitem__(self, key: str) -> None:
        del self._uri[key]
        self._given.pop(key, None)
        self._got.pop(key, None)

    def __contains__(self, key: object) -> bool:
        return key in self._uri

    def __iter__(self) -> Iterator[str]:
        return iter(self._uri)

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._uri)

    def __len__(self) -> int:
        return len(self._uri)

    def values(self) -> list[Node]:  # type: ignore[override]
        """Every node, read in batches (a walk over all of them: a map, a bench)."""
        self.prefetch(self._uri)
        given, got = self._given, self._got
        return [n for k in self._uri if (n := given.get(k) or got.get(k)) is not None]
