"""A key as the sessions wrote it: the kernel compares ``conversation id``, a reader knows
``conversationId``.

Slots stay keyed by the kernel's normalised form (lowercase words: camelCase, ``_`` and
``-`` split), so ``conversationId`` in one session and ``conversation_id`` in another meet
in one slot. A line shows the key as written: the spelling in the claims' own words that
normalises to the key, the most common one, else the first; the key itself when the words
hold none (a tool fact's ``test command``) or only its plain words (``Storage``). A key
qualified by ``_projects`` or ``_measures`` (``language (2048-game)``) is written the same
way before its qualifier.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

__all__ = ["normal_key", "written_key"]

_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[_\-.][A-Za-z0-9]+)*")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def normal_key(text: str) -> str:
    """``text`` as a key is compared: camelCase, ``_``, ``-`` and ``.`` split, lowercase."""
    return " ".join(_CAMEL.sub(" ", re.sub(r"[_\-.]+", " ", text)).lower().split())


def _spellings(key: str, text: str) -> Iterable[str]:
    """Each run of words in ``text`` (spaces between them) that normalises to ``key``."""
    tokens = list(_TOKEN.finditer(text))
    want = len(key.split())
    for i, first in enumerate(tokens):
        for j in range(i, min(i + want, len(tokens))):
            gap = text[tokens[j - 1].end() : tokens[j].start()] if j > i else ""
            if gap and gap.strip():
                break  # the words of a key are separated by spaces alone
            span = text[first.start() : tokens[j].end()]
            if normal_key(span) == key:
                yield span
                break


def written_key(key: str, texts: Iterable[str]) -> str:
    """``key`` as ``texts`` (the claims' words, in order) wrote it (see the module docs)."""
    base, sep, qualifier = key.partition(" (")
    seen: Counter[str] = Counter()
    first: list[str] = []
    for t in texts:
        for s in _spellings(base, t):
            seen[s] += 1
            first.append(s)
    if not seen:
        return key
    best = max(seen, key=lambda s: (seen[s], -first.index(s)))
    if best.lower() == base:
        return key  # plain words ("Storage"): the key already reads as written
    return f"{best}{sep}{qualifier}"
