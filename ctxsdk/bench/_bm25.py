"""An independent BM25 baseline for ``bench fit``: its own tokenizer, Porter stemmer, scoring and
neighbour smoothing, none of it shared with ``fit``'s ranking.

It is held to fit's constraints: the same budget, counted the same way (its plan goes through
the exact planner), the same protected nodes and collapse units, the same markers for what it
drops. It keeps the best-scored units that fit (the marker of every off run counted), then
the most recent; a plan the exact planner finds over budget drops its lowest-ranked units
until it fits.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from ctxsdk.assemble import Target, compile_plan

from ..assemble import DigestConfig
from ..assemble.kernel import FitIndex
from ..session import TokenCounter
from ..session.kernel import digest_text

__all__ = ["Bm25Baseline", "porter", "terms"]

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a about after all also am an and any are as at be because been before being but by can "
    "could did do does doing for from had has have having he her here hers him his how i if in "
    "into is it its just me more most my no nor not of off on once only or other our out over "
    "own same she should so some such than that the their them then there these they this "
    "those through to too under until up very was we were what when where which while who whom "
    "why will with would you your".split()
)


def _m(stem: str) -> int:
    """Porter's measure: the number of vowel-consonant sequences in ``stem``."""
    form = "".join("v" if _is_vowel(stem, i) else "c" for i in range(len(stem)))
    return len(re.findall(r"v+c+", form))


def _is_vowel(word: str, i: int) -> bool:
    ch = word[i]
    if ch in "aeiou":
        return True
    return ch == "y" and i > 0 and not _is_vowel(word, i - 1)


def _has_vowel(stem: str) -> bool:
    return any(_is_vowel(stem, i) for i in range(len(stem)))


def _cvc(word: str) -> bool:
    """Ends consonant-vowel-consonant, the last not w, x or y (hop, not hoe or how)."""
    n = len(word)
    return (
        n >= 3
        and not _is_vowel(word, n - 3)
        and _is_vowel(word, n - 2)
        and not _is_vowel(word, n - 1)
        and word[-1] not in "wxy"
    )


_STEP2 = (
    ("ational", "ate"),
    ("tional", "tion"),
    ("enci", "ence"),
    ("anci", "ance"),
    ("izer", "ize"),
    ("abli", "able"),
    ("alli", "al"),
    ("entli", "ent"),
    ("eli", "e"),
    ("ousli", "ous"),
    ("ization", "ize"),
    ("ation", "ate"),
    ("ator", "ate"),
    ("alism", "al"),
    ("iveness", "ive"),
    ("fulness", "ful"),
    ("ousness", "ous"),
    ("aliti", "al"),
    ("iviti", "ive"),
    ("biliti", "ble"),
)
_STEP3 = (
    ("icate", "ic"),
    ("ative", ""),
    ("alize", "al"),
    ("iciti", "ic"),
    ("ical", "ic"),
    ("ful", ""),
    ("ness", ""),
)
_STEP4 = "al ance ence er ic able ible ant ement ment ent ion ou ism ate iti ous ive ize".split()


def porter(word: str) -> str:
    """The Porter (1980) stemmer, steps 1a-5b."""
    if len(word) <= 2:
        return word
    w = word
    # 1a
    if w.endswith(("sses", "ies")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    # 1b
    again = False
    if w.endswith("eed"):
        if _m(w[:-3]) > 0:
            w = w[:-1]
    else:
        for suffix in ("ed", "ing"):
            if w.endswith(suffix) and _has_vowel(w[: -len(suffix)]):
                w, again = w[: -len(suffix)], True
                break
    if again:
        if w.endswith(("at", "bl", "iz")):
            w += "e"
        elif len(w) > 1 and w[-1] == w[-2] and w[-1] not in "lsz" and not _is_vowel(w, len(w) - 1):
            w = w[:-1]
        elif _m(w) == 1 and _cvc(w):
            w += "e"
    # 1c
    if w.endswith("y") and _has_vowel(w[:-1]):
        w = w[:-1] + "i"
    for table in (_STEP2, _STEP3):
        for suffix, repl in table:
            if w.endswith(suffix):
                if _m(w[: -len(suffix)]) > 0:
                    w = w[: -len(suffix)] + repl
                break
    # 4
    for suffix in sorted(_STEP4, key=len, reverse=True):
        if w.endswith(suffix):
            stem = w[: -len(suffix)]
            if _m(stem) > 1 and (suffix != "ion" or stem.endswith(("s", "t"))):
                w = stem
            break
    # 5a, 5b
    if w.endswith("e"):
        stem = w[:-1]
        if _m(stem) > 1 or (_m(stem) == 1 and not _cvc(stem)):
            w = stem
    if _m(w) > 1 and w.endswith("ll"):
        w = w[:-1]
    return w


def terms(text: str) -> list[str]:
    return [porter(t) for t in _WORD.findall(text.lower()) if t not in _STOP]


class _Index:
    """Okapi BM25 (k1 = 1.2, b = 0.75)."""

    def __init__(self, docs: Sequence[str]) -> None:
        self.tf = [Counter(terms(d)) for d in docs]
        self.length = [sum(tf.values()) for tf in self.tf]
        self.avg = sum(self.length) / max(1, len(self.length))
        df: Counter[str] = Counter()
        for tf in self.tf:
            df.update(tf.keys())
        n = len(docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def scores(self, query: str) -> list[float]:
        q = [t for t in set(terms(query)) if t in self.idf]
        out = []
        for tf, length in zip(self.tf, self.length, strict=True):
            norm = 1.2 * (0.25 + 0.75 * length / self.avg) if self.avg else 1.2
            out.append(sum(self.idf[t] * tf[t] * 2.2 / (tf[t] + norm) for t in q if t in tf))
        return out


_SMOOTH = 0.3  # each score raised by this share of its two neighbours' scores


class Bm25Baseline:
    """The baseline for one session, built once and planned per query and budget."""

    def __init__(self, ix: FitIndex, counter: TokenCounter, config: DigestConfig) -> None:
        self.ix, self.counter, self.config = ix, counter, config
        self.index = _Index([digest_text(n.message) for n in ix.surface])
        self.fixed = sum(ix.full) + ix.system - sum(sum(ix.full[a : b + 1]) for a, b in ix.units)

    def ranked(self, query: str) -> list[tuple[int, int]]:
        """Collapse units, best first: smoothed score, then the most recent."""
        raw = self.index.scores(query)
        n = len(raw)
        smooth = [
            s + _SMOOTH * ((raw[i - 1] if i else 0.0) + (raw[i + 1] if i + 1 < n else 0.0))
            for i, s in enumerate(raw)
        ]
        return sorted(self.ix.units, key=lambda u: (-max(smooth[u[0] : u[1] + 1]), -u[0]))

    def plan(self, query: str, budget: int) -> tuple[set[int], int]:
        """(surface seqs kept verbatim, exact tokens of the plan)."""
        ix = self.ix
        ranked = self.ranked(query)
        movable = {p for a, b in ix.units for p in range(a, b + 1)}
        kept = [p not in movable for p in range(len(ix.surface))]
        runs = _runs(kept)
        total = self.fixed + runs * ix.off_cost
        chosen: list[tuple[int, int]] = []
        for a, b in ranked:
            left = a > 0 and not kept[a - 1]
            right = b + 1 < len(kept) and not kept[b + 1]
            change = sum(ix.full[a : b + 1]) + ix.off_cost * (
                int(left and right) - int(not left and not right)
            )
            if total + change > budget:
                continue
            total += change
            kept[a : b + 1] = [True] * (b - a + 1)
            chosen.append((a, b))
        while True:
            targets = {
                ix.seqs[p]: Target("off")
                for a, b in ix.units
                for p in range(a, b + 1)
                if not kept[p]
            }
            ops, _ = compile_plan(ix.session, targets, counter=self.counter, config=self.config)
            after = sum(ix.full) + ix.system - sum(op.saved for op in ops)
            if after <= budget or not chosen:
                shadowed = {s for op in ops for s in op.shadowed}
                return {s for s in ix.seqs if s not in shadowed}, after
            a, b = chosen.pop()
            kept[a : b + 1] = [False] * (b - a + 1)


def _runs(kept: list[bool]) -> int:
    return sum(1 for p, k in enumerate(kept) if not k and (p == 0 or kept[p - 1]))
