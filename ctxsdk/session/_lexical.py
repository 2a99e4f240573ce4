"""Lexical relevance: word tokens and a BM25 index, with no model and no dependencies.

Used wherever a query has to rank texts (budget fitting, search). Words are lowercased,
stop words dropped and lightly stemmed; CJK text is indexed by character bigrams.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

__all__ = ["BM25", "words"]

_WORD = re.compile(r"[a-z0-9]+|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_STOP = frozenset(
    "a an and are as at be been but by can could did do does for from had has have he her his "
    "how i if in into is it its me my of on or our she so than that the their them then there "
    "they this to was we were what when where which who why will with would you your".split()
)
_SUFFIXES = ("ingly", "edly", "ing", "ies", "ied", "ed", "es", "ly", "s")


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
    return word


def words(text: str) -> list[str]:
    """Index terms of a text: stemmed words without stop words; CJK as character bigrams."""
    out: list[str] = []
    for token in _WORD.findall(text.lower()):
        if _CJK.match(token):
            out += [token[i : i + 2] for i in range(max(1, len(token) - 1))]
        elif token not in _STOP:
            out.append(_stem(token))
    return out


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

    def scores(self, query: str) -> list[float]:
        terms = [t for t in set(words(query)) if t in self._idf]
        out = []
        for tf, length in zip(self._tf, self._len, strict=True):
            norm = self.k1 * (1 - self.b + self.b * length / self._avg) if self._avg else self.k1
            s = 0.0
            for t in terms:
                f = tf.get(t)
                if f:
                    s += self._idf[t] * f * (self.k1 + 1) / (f + norm)
            out.append(s)
        return out
