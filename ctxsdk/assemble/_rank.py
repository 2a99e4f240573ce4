"""How relevant each surface node is to a fit's query: the base's shared ``Retriever``.

Fit ranks with the same retrieval Memory uses (``ctxsdk.session.Retriever``, its defaults):
BM25 over the nodes' words (stop words dropped, inflections stripped, each stem cut to its
first six letters) with three additions that are not BM25's:

- a node's score is scaled by the share of the query's weight it matches, so a node that
  answers most of the question beats one that repeats a single rare word;
- one round of pseudo-relevance feedback adds the words the best first-round matches share,
  which reaches evidence that answers in other words than the question used;
- a question word says what kind of text answers it (when: a time, how many: a number,
  who: a name, where: a name or a file path, which file / path: a path), and matches
  holding such text are raised.

Each score is then raised by a share of its better neighbour's (a conversation answers on the
next line). With an :class:`~ctxsdk.session.Embedder` the lexical score is fused with the
cosine similarity of the node's embedding (a weighted sum, the base's default), so a node
that answers in other words still ranks.

Fit's own copy of this ranking (before it delegated here) weighed each query word once; the
Retriever weighs a word the question repeats ("my daughter's ... her daughter's") by its
count. That reorders 43 of LoCoMo's 1,986 questions, and on those fit keeps more evidence at
every budget; every other ordering is the same.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..session import Embedder, Retriever
from ..session.kernel import Doc

__all__ = ["Ranker"]


class Ranker:
    """The base's retriever over a fixed list of node texts, in order (one conversation:
    each node's neighbours are the nodes before and after it; ``sections`` are their turns)."""

    def __init__(
        self,
        docs: Sequence[str],
        *,
        sections: Sequence[int | None] | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        self._n = len(docs)
        of = list(sections) if sections is not None else [None] * len(docs)
        self.retriever = Retriever(
            (Doc(str(i), t, group=0, order=float(i), section=of[i]) for i, t in enumerate(docs)),
            embedder=embedder,
        )

    @property
    def embedder(self) -> Embedder | None:
        return self.retriever.embedder

    def scores(self, query: str | None) -> list[float]:
        """Relevance per node (after the neighbour step; with an embedder the fused score),
        0 for every node when there is no query."""
        if not query or not self._n:
            return [0.0] * self._n
        return list(self.retriever.scores(query).values())
