"""How relevant each surface node is to a fit's query.

The base's BM25 over the nodes' words (``ctxsdk.session.BM25``: stop words dropped,
inflections stripped so that a word's common forms meet, each stem cut to its first six
letters), with three additions that are not BM25's:

- a node's score is scaled by the share of the query's weight it matches, so a node that
  answers most of the question beats one that repeats a single rare word;
- one round of pseudo-relevance feedback adds the words the best first-round matches share,
  which reaches evidence that answers in other words than the question used;
- a question word says what kind of text answers it (when: a time, how many: a number,
  where / who: a name), and matches holding such text are raised.

Each score is then raised by a share of its best neighbour's (a conversation answers on the
next line).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..session import BM25

__all__ = ["Ranker"]

_FEEDBACK_DOCS = 3  # best first-round matches the feedback words come from
_FEEDBACK_TERMS = 8  # words added to the query
_FEEDBACK_WEIGHT = 0.3  # the weight of the strongest added word (a query word weighs 1)
_COORD = 0.5  # a score times (the share of the query's weight it matches) ** this
_TYPE_BOOST = 0.3  # a match that holds the kind of text the question asks for
_NEIGHBOUR = 0.35  # each score raised by this share of its best neighbour's

_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_TIME = re.compile(
    rf"\b(?:\d{{4}}|\d{{1,2}}[:/.]\d{{2}}|{_MONTHS}|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday|yesterday|today|tomorrow|tonight|ago|last|next|week|weekend|month|year|"
    r"morning|evening|night|since|recently|soon|earlier|later)\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(
    r"\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|twice|once|several|few)\b",
    re.IGNORECASE,
)
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]{2,}")


def _answer_type(query: str) -> re.Pattern[str] | None:
    """What kind of text answers the question, from its question word (when -> a time,
    how many -> a number, where / who -> a name)."""
    q = query.strip().lower()
    if q.startswith(("when", "what time", "what year", "what month", "what date", "how long ago")):
        return _TIME
    if q.startswith(("how many", "how much", "how old", "how often", "how long")):
        return _NUMBER
    if q.startswith(("where", "who")):
        return _NAME
    return None


class Ranker:
    """The base's BM25 over a fixed list of node texts, with the additions above."""

    def __init__(self, docs: Sequence[str]) -> None:
        self._bm = BM25(docs)
        self._text = list(docs)
        self._types: dict[re.Pattern[str], list[bool]] = {}

    def _score(self, query: dict[str, float]) -> list[float]:
        return self._bm.weighted(query, coordination=_COORD)

    def raw(self, query: str) -> list[float]:
        """BM25 with the feedback words, before the answer kind and the neighbours."""
        q = self._bm.query_terms(query)
        if not q:
            return [0.0] * len(self._bm)
        idf = self._bm.idf
        first = self._score(q)
        top = sorted(range(len(first)), key=lambda i: -first[i])[:_FEEDBACK_DOCS]
        top = [i for i in top if first[i] > 0]
        pool: dict[str, float] = {}
        for i in top:  # each word weighed by its tf-idf in the matches, and how well they match
            for t, f in self._bm.terms(i).items():
                if t not in q:
                    pool[t] = pool.get(t, 0.0) + f * idf[t] * first[i] / first[top[0]]
        extra = sorted(pool, key=lambda t: (-pool[t], t))[:_FEEDBACK_TERMS]
        if not extra:
            return first
        top_w = pool[extra[0]]
        expanded = dict(q)
        for t in extra:
            expanded[t] = _FEEDBACK_WEIGHT * pool[t] / top_w
        return self._score(expanded)

    def scores(self, query: str | None) -> list[float]:
        """Relevance per node, raised by a share of its best neighbour's."""
        if not query:
            return [0.0] * len(self._bm)
        rel = self.raw(query)
        want = _answer_type(query)
        if want is not None:
            has = self._types.get(want)
            if has is None:
                has = self._types[want] = [bool(want.search(t)) for t in self._text]
            rel = [r * (1 + _TYPE_BOOST) if r and h else r for r, h in zip(rel, has, strict=True)]
        n = len(rel)
        return [
            r + _NEIGHBOUR * max(rel[i - 1] if i else 0.0, rel[i + 1] if i + 1 < n else 0.0)
            for i, r in enumerate(rel)
        ]
