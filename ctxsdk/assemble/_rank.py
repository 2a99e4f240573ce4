"""How relevant each surface node is to a fit's query.

BM25 over the nodes' words (stop words dropped, inflections stripped so that a word's common
forms meet: class / classes, game / games / gaming, then each stem cut to its first six
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

import math
import re
from collections import Counter
from collections.abc import Sequence

__all__ = ["Ranker"]

_PREFIX = 6  # letters a word is cut to after its suffix is stripped
_FEEDBACK_DOCS = 3  # best first-round matches the feedback words come from
_FEEDBACK_TERMS = 8  # words added to the query
_FEEDBACK_WEIGHT = 0.3  # the weight of the strongest added word (a query word weighs 1)
_COORD = 0.5  # a score times (the share of the query's weight it matches) ** this
_TYPE_BOOST = 0.3  # a match that holds the kind of text the question asks for
_NEIGHBOUR = 0.35  # each score raised by this share of its best neighbour's
_K1, _B = 1.2, 0.75

_WORD = re.compile(r"[a-z0-9]+|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_STOP = frozenset(
    "a about after again all also am an and any are as at be because been before being both but "
    "by can could did do does doing down during each few for from further had has have having he "
    "her here hers herself him himself his how i if in into is it its itself just me more most "
    "my myself no nor not now of off on once only or other our ours out over own same she "
    "should so some such than that the their theirs them then there these they this those "
    "through to too under until up very was we were what when where which while who whom why "
    "will with would you your yours".split()
)


def _stem(word: str) -> str:
    """A light stemmer that sends a word's common forms to one stem (class / classes, game /
    games / gaming, stop / stopped), then the first ``_PREFIX`` letters of it."""
    w = word
    if len(w) > 4 and w.endswith(("ies", "ied")):
        w = w[:-3] + "y"
    elif len(w) > 4 and w.endswith(("sses", "xes", "zes", "ches", "shes")):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix in ("ingly", "edly", "ing", "ed", "ly"):
        if len(w) > len(suffix) + 2 and w.endswith(suffix):
            w = w[: -len(suffix)]
            if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
                w = w[:-1]  # stopped -> stop
            break
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]  # game / gaming, like / liked
    return w[:_PREFIX]


def _terms(text: str) -> list[str]:
    """Index terms: words without stop words, suffix-stripped and cut to a prefix; CJK text
    as character bigrams."""
    out: list[str] = []
    for token in _WORD.findall(text.lower()):
        if _CJK.match(token):
            out += [token[i : i + 2] for i in range(max(1, len(token) - 1))]
        elif token not in _STOP:
            out.append(_stem(token))
    return out


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
    """BM25 over a fixed list of node texts, with weighted queries."""

    def __init__(self, docs: Sequence[str]) -> None:
        self._tf = [Counter(_terms(d)) for d in docs]
        self._text = list(docs)
        self._types: dict[re.Pattern[str], list[bool]] = {}
        self._len = [sum(tf.values()) for tf in self._tf]
        self._avg = (sum(self._len) / len(self._len)) if self._len else 0.0
        df: Counter[str] = Counter()
        for tf in self._tf:
            df.update(tf.keys())
        n = len(docs)
        self._idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def _score(self, query: dict[str, float]) -> list[float]:
        out = []
        total = sum(w * self._idf[t] for t, w in query.items()) or 1.0
        for tf, length in zip(self._tf, self._len, strict=True):
            norm = _K1 * (1 - _B + _B * length / self._avg) if self._avg else _K1
            s = 0.0
            hit = 0.0
            for t, w in query.items():
                f = tf.get(t)
                if f:
                    s += w * self._idf[t] * f * (_K1 + 1) / (f + norm)
                    hit += w * self._idf[t]
            if s:
                s *= (hit / total) ** _COORD
            out.append(s)
        return out

    def raw(self, query: str) -> list[float]:
        """BM25 with the feedback words, before the answer kind and the neighbours."""
        q = {t: 1.0 for t in set(_terms(query)) if t in self._idf}
        if not q:
            return [0.0] * len(self._tf)
        first = self._score(q)
        top = sorted(range(len(first)), key=lambda i: -first[i])[:_FEEDBACK_DOCS]
        top = [i for i in top if first[i] > 0]
        pool: dict[str, float] = {}
        for i in top:  # each word weighed by its tf-idf in the matches, and how well they match
            for t, f in self._tf[i].items():
                if t not in q:
                    pool[t] = pool.get(t, 0.0) + f * self._idf[t] * first[i] / first[top[0]]
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
            return [0.0] * len(self._tf)
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
