"""Lexical relevance: word tokens and a BM25 index, with no model and no dependencies.

Used wherever a query has to rank texts (budget fitting, and search to come). Words are
lowercased and stop words dropped; inflections are stripped so a word's common forms meet
(class / classes, game / games / gaming, stop / stopped) and each stem is cut to its first six
letters; CJK text is indexed by character bigrams.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import cast

__all__ = ["BM25", "term_counts", "words"]

_PREFIX = 6  # letters a word is cut to after its suffix is stripped
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


@lru_cache(maxsize=1 << 17)
def _terms(token: str) -> tuple[str, ...]:
    """The index terms of one token (a word's stem, none for a stop word, a CJK run's
    bigrams): a memory's texts repeat their words, each is stemmed once."""
    if _CJK.match(token):
        return tuple(token[i : i + 2] for i in range(max(1, len(token) - 1)))
    if token in _STOP:
        return ()
    return (_stem(token),)


def words(text: str) -> list[str]:
    """Index terms of a text: words without stop words, suffix-stripped and cut to a prefix;
    CJK text as character bigrams."""
    out: list[str] = []
    for token in _WORD.findall(text.lower()):
        out += _terms(token)
    return out


# An ASCII text's bytes with A-Z lowered and every other byte but a-z and 0-9 made a space:
# its split() gives the tokens ``_WORD`` finds in the lowered text, without the pattern.
_ASCII_WORDS = bytes(
    b if 97 <= b <= 122 or 48 <= b <= 57 else b + 32 if 65 <= b <= 90 else 32 for b in range(256)
)
# an ASCII token -> its one index term (" ", which no term holds, for a stop word)
_ONE: dict[bytes, str] = {}
_ONE_MAX = 1 << 18  # tokens held before the table starts again (bounded memory)


def term_counts(text: str) -> Counter[str]:
    """``Counter(words(text))``, its terms in the same order, counted without a pattern or
    a list of terms for an ASCII text (most of a memory's): its tokens are cut by a byte
    table and looked up in a table of the tokens seen before (a memory's texts repeat
    their words), and counted by ``Counter`` in one call. Any other text, or one with a
    token not seen yet (then put in the table), is counted from ``words``."""
    if text.isascii():
        tokens = text.encode().translate(_ASCII_WORDS).split()
        counts: Counter[str | None] = Counter(map(_ONE.get, tokens))
        if None not in counts:
            counts.pop(" ", None)
            return cast("Counter[str]", counts)
        if len(_ONE) > _ONE_MAX:
            _ONE.clear()
        for token in tokens:
            if token not in _ONE:
                got = _terms(token.decode())
                _ONE[token] = got[0] if got else " "
    return Counter(words(text))


class BM25:
    """Okapi BM25 over a fixed list of documents (k1 = 1.2, b = 0.75)."""

    def __init__(self, docs: Sequence[str], *, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self._tf = [Counter(words(d)) for d in docs]
        self._len = [sum(tf.values()) for tf in self._tf]
        self._avg = (sum(self._len) / len(self._len)) if self._len else 0.0
        df: Counter[str] = Counter()
        for tf in self._tf:
            df.update(tf.keys())
        n = len(docs)
        self._idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def __len__(self) -> int:
        return len(self._tf)

    @property
    def idf(self) -> Mapping[str, float]:
        """Each indexed term's inverse document frequency."""
        return self._idf

    def terms(self, doc: int) -> Mapping[str, int]:
        """The term frequencies of document ``doc``."""
        return self._tf[doc]

    def query_terms(self, query: str) -> dict[str, float]:
        """The query's indexed terms, each with weight 1."""
        return {t: 1.0 for t in set(words(query)) if t in self._idf}

    def weighted(self, query: Mapping[str, float], *, coordination: float = 0.0) -> list[float]:
        """Scores for weighted query terms (indexed ones). With ``coordination`` > 0 a score
        is scaled by (the share of the query's idf weight it matches) ** coordination, so a
        document matching most of the query beats one repeating a single rare term."""
        total = sum(w * self._idf[t] for t, w in query.items()) or 1.0
        out = []
        for tf, length in zip(self._tf, self._len, strict=True):
            norm = self.k1 * (1 - self.b + self.b * length / self._avg) if self._avg else self.k1
            s = 0.0
            hit = 0.0
            for t, w in query.items():
                f = tf.get(t)
                if f:
                    s += w * self._idf[t] * f * (self.k1 + 1) / (f + norm)
                    hit += w * self._idf[t]
            if s and coordination:
                s *= (hit / total) ** coordination
            out.append(s)
        return out

    def scores(self, query: str) -> list[float]:
        """Plain BM25 scores of ``query`` for every document."""
        return self.weighted(self.query_terms(query))
