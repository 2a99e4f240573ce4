"""A deterministic clock for logs written in code: seeded jitter, never the wall clock."""

from __future__ import annotations

import random

__all__ = ["Clock"]


class Clock:
    """A deterministic epoch-ms clock: seeded jitter, never the wall clock."""

    def __init__(self, start: int, seed: str = "") -> None:
        self.now = start
        self._rng = random.Random(f"ctxsdk-clock:{seed}")

    def jitter(self, lo: int, hi: int) -> int:
        """A seeded amount in ``[lo, hi]`` without moving the clock."""
        return self._rng.randint(lo, hi)

    def tick(self, lo: int = 80, hi: int = 400) -> int:
        """Advance a few hundred ms (by default) and return the new time."""
        self.now += self._rng.randint(lo, hi)
        return self.now

    def advance(self, ms: int) -> int:
        self.now += ms
        return self.now

    def advance_to(self, t: int) -> int:
        self.now = max(self.now, t)
        return self.now
