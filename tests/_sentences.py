"""Random sentences for the tests of a scan that rules tables out: each must answer as
trying every table does, for the sentences said and jumbles of their words."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence


def jumbled(
    said: Sequence[str],
    seed: int,
    n: int,
    *,
    extra: Sequence[str],
    forms: Sequence[Callable[[str], str]],
) -> list[str]:
    """``said``, then ``n`` random runs of 2 to 12 of its words (and the ``extra`` words),
    each in every one of ``forms``; the same ``seed``, the same sentences."""
    rng = random.Random(seed)
    words = [w for s in said for w in s.split()] + list(extra)
    out = list(said)
    for _ in range(n):
        s = " ".join(rng.choice(words) for _ in range(rng.randint(2, 12)))
        out += [form(s) for form in forms]
    return out
