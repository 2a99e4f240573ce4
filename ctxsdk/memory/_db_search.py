"""Search inside the database: the lexical ranking run by a store that keeps its own index
(``PostgresStore``, schema version 5), so a process asks the database instead of reading
every node of a namespace and indexing it itself.

The index is derived from the nodes, as the engine's in-process one is (``index_doc``,
``lexical_row``), and brought up to the store's revision by whichever process searches
next (``catch_up``): it reads the store's change feed since the index's revision, computes
the rows of what changed here (the tokenizer is Python's) and writes them in one call that
never changes the memory's revision. A whole rebuild happens once per namespace, and again
only when ``INDEX_VERSION`` (what a node is indexed as) changes. The matches of a query
and their scores come from SQL over that index (``_pg_lexical``: BM25 and the engine's
factors); the steps that join each match with its neighbours and its section run here, over
the matches and the documents beside them, read by key. Together they are the engine's
lexical ranking with the memory's settings, step for step: the tests ask both on one
namespace, and ``bench memory --store postgres`` measures that both stores answer alike.

With an embedder the engine ranks (its dense channel scores the stored vectors beside the
query): the database has no vector type here.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ..errors import InvalidArgument
from ..session import Hit, Retriever
from ..session.kernel import answer_kind
from ._index_doc import LexicalRanking, LexicalRow, index_doc, lexical_row
from ._model import Node
from ._store import Changes

__all__ = ["INDEX_VERSION", "DatabaseSearch", "IndexedStore", "StoreNodes"]

# What a node is indexed as: bump it whenever index_doc, lexical_row, index_text or the
# tokenizer change a row (a stored index of another version is rebuilt). The test
# ``test_the_index_version_names_what_is_indexed`` holds the rows of a fixed set of nodes.
INDEX_VERSION = "lexical-1"
_REBUILD_CHUNK = 20_000  # nodes tokenized per batch while rebuilding (bounded memory)
_LEAST_SENT = 256  # documents the database sends at least for a search (see search)
_SENT_PER_HIT = 8  # and per hit asked for
_KEPT_PER_SENT = 8  # matches scored exactly per document sent, at first (see search)


@runtime_checkable
class IndexedStore(Protocol):
    """A store that keeps a lexical index of its own (``PostgresStore``)."""

    def revision(self) -> int: ...

    def changes(self, since: int) -> Changes | None: ...

    def nodes(
        self, *, types: Iterable[str] | None = None, include_archived: bool = False
    ) -> list[Node]: ...

    def lexical_state(self) -> tuple[int, str, int, int]: ...

    def write_lexical(
        self,
        upto: int,
        version: str,
        rows: Sequence[LexicalRow],
        drop: Sequence[str],
        *,
        rebuild: bool = False,
    ) -> int: ...

    def lexical_matches(
        self,
        terms: Mapping[str, float],
        *,
        want: int,
        settings: Mapping[str, float],
        k: int,
        limit: int | None = None,
        keep: int | None = None,
    ) -> LexicalRanking: ...

    def section_members(self, sections: Iterable[str]) -> dict[str, list[str]]: ...

    def marked_nodes(self, ids: Iterable[str]) -> dict[str, tuple[Node, bool]]: ...

    def anchor_nodes(self) -> list[Node]: ...


class DatabaseSearch:
    """The lexical ranking of a store's own index, with the engine's settings (those of
    ``retriever``: k1, b, coordination, answer boost, neighbours, sections). It answers
    ``search(query, k)`` like ``Retriever.search`` in lexical mode."""

    embedder = None  # lexical only: find's degraded path never applies

    def __init__(self, store: IndexedStore, retriever: Retriever) -> None:
        if retriever.smoothing != "max" or retriever.feedback:
            raise InvalidArgument("the database ranks with max smoothing and no feedback words")
        self.store = store
        self.tokenize: Callable[[str], list[str]] = retriever.tokenize
        self._settings = {
            "k1": retriever.k1,
            "b": retriever.b,
            "coordination": retriever.coordination,
            "boost": retriever.answer_boost,
            "share": retriever.neighbour,
            "section_boost": retriever.section_boost,
        }
        self._section_boost = retriever.section_boost
        # the bound of a match's score read from its postings holds for these settings
        self._prunable = (
            retriever.k1 >= 0
            and 0 <= retriever.b <= 1
            and retriever.answer_boost >= 0
            and retriever.neighbour >= 0
        )
        self.rebuilt = 0  # whole rebuilds this object made (for reports and tests)
        self.asked_again = 0  # searches whose cut could hide a best one (asked for all)
        self.scored_all = 0  # searches whose kept matches' cut could (every match scored)

    def rows(self, nodes: Iterable[Node]) -> tuple[list[LexicalRow], list[str]]:
        """The index rows of ``nodes``, and the ids of those the index leaves out."""
        rows: list[LexicalRow] = []
        out: list[str] = []
        for node in nodes:
            row = lexical_row(node, self.tokenize)
            if row is None:
                out.append(node.id)
            else:
                rows.append(row)
        return rows, out

    def catch_up(self) -> int:
        """Bring the store's index to its current revision (see the module docs); returns
        that revision (the caller's caches key on it: no second read)."""
        rev = -1
        for _ in range(3):  # another process may rebuild or catch up at the same moment
            at, version, _docs, _total = self.store.lexical_state()
            rev = self.store.revision()
            if version == INDEX_VERSION and at >= rev:
                return rev
            delta = self.store.changes(at) if version == INDEX_VERSION and at >= 0 else None
            if delta is None:
                self._rebuild(rev)
                return rev
            rows, left_out = self.rows(delta.nodes)
            got = self.store.write_lexical(rev, INDEX_VERSION, rows, [*delta.gone, *left_out])
            if got != -2:  # written, or another process got there first
                return rev
        return rev

    def _rebuild(self, rev: int) -> None:
        nodes = [n for n in self.store.nodes() if index_doc(n) is not None]
        rows: list[LexicalRow] = []
        for at in range(0, len(nodes), _REBUILD_CHUNK):
            rows.extend(self.rows(nodes[at : at + _REBUILD_CHUNK])[0])
        self.store.write_lexical(rev, INDEX_VERSION, rows, [], rebuild=True)
        self.rebuilt += 1

    def search(self, query: str, k: int = 10, *, mode: str | None = None) -> list[Hit]:
        """The ``k`` best nodes for ``query`` by the engine's lexical ranking: the scores
        after the neighbour step from the database, then its section step and the top k here
        (``Retriever._smooth`` and ``_lexical``), ties to the smaller id.

        The database sends the ``max(8k, 256)`` documents that the section step can raise
        highest, not every match of a common word; what it leaves out scores at most
        ``cut``. When the k-th best found beats it, the answer is the one over every match;
        else (a tie at the cut) the search asks again for all. Before that it scores
        exactly only the ``8 * max(8k, 256)`` matches of the best bound read from their
        postings, with their neighbours (``PRUNED_SQL``: no other match's document row is
        read), the cut bounding the rest too; when that cut is not beaten, it scores every
        match as above."""
        if mode not in (None, "lexical"):
            raise InvalidArgument(f"the database ranks lexically, not {mode!r}")
        terms = Counter(self.tokenize(query))
        if k <= 0 or not terms or not query.strip():
            return []
        weights = {t: float(n) for t, n in terms.items()}
        want = answer_kind(query)
        # a whole section's unmatched members score boost * its best, under the cut only
        # while boost < 1
        cut_ok = 0.0 <= self._section_boost < 1.0
        limit: int | None = max(_SENT_PER_HIT * k, _LEAST_SENT) if cut_ok else None
        keep = _KEPT_PER_SENT * limit if limit is not None and self._prunable else None
        while True:
            got = self.store.lexical_matches(
                weights, want=want, settings=self._settings, k=k, limit=limit, keep=keep
            )
            lifted = self._sections(got, k)
            best = heapq.nsmallest(k, ((-v, doc) for doc, v in lifted.items() if v > 0))
            if limit is None or got.total <= limit:
                break
            if len(best) == k and -best[-1][0] > _above(got.cut):
                break
            if keep is not None:  # a match not kept could be among the best: score them all
                keep = None
                self.scored_all += 1
                continue
            limit = None  # a tie at the cut: the k best are in doubt, ask for every one
            self.asked_again += 1
        return [Hit(doc, -neg, {"lexical": -neg}) for neg, doc in best]

    def _sections(self, got: LexicalRanking, k: int) -> dict[str, float]:
        """The scores after the section step: each section raised by ``section_boost`` of
        its best, and its unmatched members joining only when that lift reaches the k-th
        best score before lifting (``got.floor``). Members left out by the cut are known
        to score no more than it, so their lift never matters."""
        scores = {m.id: m.score for m in got.matches}
        boost = self._section_boost
        if not boost:
            return scores
        best: dict[str, float] = {}
        matched: dict[str, list[str]] = {}
        for m in got.matches:
            if m.section is not None and m.section_best is not None:
                matched.setdefault(m.section, []).append(m.id)
                best[m.section] = m.section_best
        floor = got.floor
        whole = self.store.section_members(s for s, top in best.items() if boost * top >= floor)
        out = dict(scores)
        for sec, top in best.items():
            lift = boost * top
            for doc in whole.get(sec, matched[sec]) if lift >= floor else matched[sec]:
                out[doc] = out.get(doc, 0.0) + lift
        return out


def _above(bound: float) -> float:
    """``bound`` nudged up past the rounding of the sums that made it."""
    return bound + abs(bound) * 1e-9


class StoreNodes(Mapping[str, Node]):
    """The indexed nodes ``find`` looks at, read from the store as it asks for them (in
    batches: ``prefetch``), each with whether it is boilerplate (``hidden``): what the
    engine's whole node cache gives it, without reading the whole namespace."""

    def __init__(self, store: IndexedStore) -> None:
        self._store = store
        self._got: dict[str, Node | None] = {}
        self._boilerplate: set[str] = set()
        self.hidden: Collection[str] = _Hidden(self)

    def prefetch(self, ids: Iterable[str]) -> None:
        want = [i for i in dict.fromkeys(ids) if i not in self._got]
        if not want:
            return
        found = self._store.marked_nodes(want)
        for nid in want:
            node, boilerplate = found.get(nid, (None, False))
            # what the engine's cache holds: active nodes of the indexed types
            self._got[nid] = node if node is not None and index_doc(node) is not None else None
            if boilerplate:
                self._boilerplate.add(nid)

    def get(self, key: str, default: Any = None) -> Any:
        if key not in self._got:
            self.prefetch([key])
        node = self._got[key]
        return default if node is None else node

    def __getitem__(self, key: str) -> Node:
        node = self.get(key)
        if node is None:
            raise KeyError(key)
        return node  # type: ignore[no-any-return]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def __iter__(self) -> Iterator[str]:  # what was read so far: find never walks it all
        return (k for k, v in self._got.items() if v is not None)

    def __len__(self) -> int:
        return sum(1 for v in self._got.values() if v is not None)

    def is_boilerplate(self, node_id: str) -> bool:
        self.get(node_id)
        return node_id in self._boilerplate


class _Hidden(Collection[str]):
    """``find``'s hidden ids over a ``StoreNodes``: the boilerplate among what it reads."""

    def __init__(self, view: StoreNodes) -> None:
        self._view = view

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._view.is_boilerplate(key)

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._view._boilerplate))

    def __len__(self) -> int:
        return len(self._view._boilerplate)
