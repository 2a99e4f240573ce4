"""Packing a budget: which units stay full, become key or go off, with each off run charged
the marker it really costs.

Every movable unit starts off; units are then brought back one step at a time (off -> key ->
full, or off -> full) in order of value gained per token spent, where the tokens spent include
what the step does to the off runs around it: keeping a unit in the middle of a run splits it
and costs a second marker, keeping the last unit of a run saves the run's marker, keeping a
unit at a run's edge only costs the unit. So isolated low-value islands between two off runs
lose to longer kept stretches, by the score and not by a rule. Equal value goes to the more
recent unit, so with no query the most recent history stays.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, insort
from dataclasses import dataclass, field

__all__ = ["FULL", "KEY", "OFF", "UNCARRIED", "Packer"]

OFF, KEY, FULL = 0, 1, 2
_FREE = float("inf")  # a step that costs nothing or saves tokens: always worth taking
# In absorb mode a run nothing can carry costs its marker plus more than any budget, so every
# step that gives it a carrier is free and no plan that leaves one is preferred.
UNCARRIED = 10**7


@dataclass
class Packer:
    """A greedy packer over surface positions; ``total`` is the running token estimate."""

    cost: list[int]  # full tokens per position
    units: list[tuple[int, int]]  # movable units (first, last position)
    value: list[float]  # per unit, the value of keeping it full
    key_cost: dict[int, int]  # per unit index, where key is really shorter
    base_off: list[bool]  # positions already off (explicit or earlier): their run is paid for
    carrier: list[bool]  # positions that can carry an adjacent off run (absorb mode)
    lone_tool: list[bool]  # tool results: a run of exactly one is a rewrite, with its own cost
    marker: int  # an off run's message
    tool_marker: int  # an off tool-result rewrite
    absorb: bool
    total: int  # the estimate with every movable unit off
    state: list[int] = field(init=False)
    _unit_at: list[int] = field(init=False)
    _kept: list[int] = field(init=False)  # sorted positions that are not off
    _base: list[int] = field(init=False)  # prefix counts of base_off
    _heap: list[tuple[float, int, int, int]] = field(init=False)
    _skipped: list[int] = field(init=False)

    def __post_init__(self) -> None:
        n = len(self.cost)
        self.state = [OFF] * len(self.units)
        self._unit_at = [-1] * n
        for i, (a, b) in enumerate(self.units):
            for p in range(a, b + 1):
                self._unit_at[p] = i
        self._kept = [p for p in range(n) if self._unit_at[p] < 0 and not self.base_off[p]]
        self._base = [0]
        for off in self.base_off:
            self._base.append(self._base[-1] + off)
        self.total -= sum(sum(self.cost[a : b + 1]) for a, b in self.units)
        self.total += self._runs_cost()
        self._heap = []
        self._skipped = []
        for i in range(len(self.units)):
            self._push(i)

    # --- the off runs -------------------------------------------------------------------------

    def carries(self, p: int) -> bool:
        if not (self.absorb and 0 <= p < len(self.cost) and self.carrier[p]):
            return False
        u = self._unit_at[p]
        return u >= 0 and self.state[u] == FULL

    def run_cost(self, lo: int, hi: int) -> int:
        """The marker tokens of the off run ``lo..hi`` (nothing when empty or already paid)."""
        if lo > hi or self._base[hi + 1] > self._base[lo]:
            return 0
        if self.carries(hi + 1) or self.carries(lo - 1):
            return 0
        marker = self.tool_marker if lo == hi and self.lone_tool[lo] else self.marker
        return marker + UNCARRIED * self.absorb

    def _runs_cost(self) -> int:
        out, lo = 0, None
        kept = set(self._kept)
        for p in range(len(self.cost) + 1):
            off = p < len(self.cost) and p not in kept
            if off and lo is None:
                lo = p
            elif not off and lo is not None:
                out += self.run_cost(lo, p - 1)
                lo = None
        return out

    def runs(self) -> list[tuple[int, int]]:
        """The off runs now, as (first, last) positions."""
        out: list[tuple[int, int]] = []
        prev = -1
        for p in [*self._kept, len(self.cost)]:
            if p > prev + 1:
                out.append((prev + 1, p - 1))
            prev = p
        return out

    def _local(self, i: int, state: int) -> int:
        """Tokens of unit ``i`` in ``state`` plus the off runs that touch it."""
        a, b = self.units[i]
        at = bisect_left(self._kept, a)
        lo = (self._kept[at - 1] + 1) if at else 0
        after = bisect_left(self._kept, b + 1)
        hi = (self._kept[after] - 1) if after < len(self._kept) else len(self.cost) - 1
        was, self.state[i] = self.state[i], state
        try:
            if state == OFF:
                return self.run_cost(lo, hi)
            own = self.key_cost[i] if state == KEY else sum(self.cost[a : b + 1])
            return own + self.run_cost(lo, a - 1) + self.run_cost(b + 1, hi)
        finally:
            self.state[i] = was

    def delta(self, i: int, state: int) -> int:
        return self._local(i, state) - self._local(i, self.state[i])

    # --- the greedy steps ---------------------------------------------------------------------

    def _gain(self, i: int, state: int) -> float:
        if state == FULL:
            return self.value[i]
        a, b = self.units[i]
        return self.value[i] * self.key_cost[i] / max(1, sum(self.cost[a : b + 1]))

    def _steps(self, i: int) -> list[tuple[float, int, int]]:
        """(density, state, tokens) of the steps up from the unit's state, best first."""
        now = self.state[i]
        ups = [s for s in (KEY, FULL) if s > now and (s == FULL or i in self.key_cost)]
        out = []
        for s in ups:
            spend = self.delta(i, s)
            gain = self._gain(i, s) - (self._gain(i, now) if now != OFF else 0.0)
            out.append((_FREE if spend <= 0 else gain / spend, s, spend))
        out.sort(key=lambda t: (-t[0], -t[1]))
        return out

    def _push(self, i: int) -> None:
        steps = self._steps(i)
        if steps:
            heapq.heappush(self._heap, (-steps[0][0], -self.units[i][0], i, steps[0][1]))

    def _apply(self, i: int, state: int, spend: int) -> None:
        if self.state[i] == OFF:
            a, b = self.units[i]
            for p in range(a, b + 1):
                insort(self._kept, p)
        self.state[i] = state
        self.total += spend

    def grow(self, limit: int) -> bool:
        """Take the best steps that keep the estimate within ``limit``; whether any was taken."""
        for i in self._skipped:
            self._push(i)
        self._skipped = []
        took = False
        while self._heap:
            neg, _, i, _ = heapq.heappop(self._heap)
            steps = self._steps(i)
            if not steps:
                continue
            if steps[0][0] < -neg - 1e-12:  # worse than when it was queued: queue it again
                heapq.heappush(self._heap, (-steps[0][0], -self.units[i][0], i, steps[0][1]))
                continue
            fitting = [s for s in steps if s[2] <= 0 or self.total + s[2] <= limit]
            if not fitting:
                self._skipped.append(i)
                continue
            _, state, spend = fitting[0]
            self._apply(i, state, spend)
            took = True
            self._push(i)
            a, b = self.units[i]
            for p in (a - 1, b + 1):  # their runs changed: queue them at their new value
                if 0 <= p < len(self.cost) and self._unit_at[p] >= 0:
                    self._push(self._unit_at[p])
        return took

    def is_off(self, p: int) -> bool:
        u = self._unit_at[p]
        return self.base_off[p] or (u >= 0 and self.state[u] == OFF)

    def _drop(self, i: int) -> None:
        a, b = self.units[i]
        self.total += self.delta(i, OFF)
        self.state[i] = OFF
        for p in range(a, b + 1):
            self._kept.remove(p)

    def carriers(self) -> list[int]:
        """The kept messages that carry the off runs (absorb mode), one per replacement.

        The planner writes each stretch of contiguous off targets as one message, so a
        stretch may hold one carrier: a run is carried by the message after it or the one
        before it, and two runs whose carriers would touch share one. The assignment with
        the fewest uncarried stretches is found exactly (a pass over the runs); a stretch
        that still has none gets one by sending the lesser neighbour off too, merging it
        into a stretch that has one.
        """
        for _ in range(len(self.units) + 1):
            carried, bare = self._assign()
            if not bare:
                return carried
            lo, hi = bare[0]
            sides = [self._unit_at[p] for p in (lo - 1, hi + 1) if 0 <= p < len(self.cost)]
            movable = [i for i in sides if i >= 0 and self.state[i] != OFF]
            if not movable:
                return carried  # nothing around it can move: it keeps its marker
            self._drop(min(movable, key=lambda i: (self.value[i], i)))
        return self._assign()[0]

    def _assign(self) -> tuple[list[int], list[tuple[int, int]]]:
        """(carriers, stretches left without one), for the fewest such stretches.

        Each run takes the message after it (R), the one before it (L) or none (N). Two runs
        one kept message apart share a stretch when that message carries either; such a
        stretch may not hold two carriers, and carriers two messages apart would make two
        stretches touch (the planner would join them), so those choices are refused.
        """
        runs = self.runs()
        if not runs:
            return [], []
        paid = [self._base[hi + 1] > self._base[lo] for lo, hi in runs]
        # (last run took R, open stretch has a carrier, open stretch is paid) ->
        # (stretches closed bare, choices so far)
        State = tuple[bool, bool, bool]
        best: dict[State, tuple[int, list[str]]] = {}
        for k, (lo, hi) in enumerate(runs):
            ways = ["N"] + ["R"] * self.carries(hi + 1) + ["L"] * self.carries(lo - 1)
            if k == 0:
                best = {(y == "R", y != "N", paid[0]): (0, [y]) for y in ways}
                continue
            gap = lo - runs[k - 1][1] - 1
            nxt: dict[State, tuple[int, list[str]]] = {}
            for (x_r, has, was_paid), (bare, path) in best.items():
                for y in ways:
                    if gap == 1 and (x_r or y == "L"):  # one stretch with the run before
                        if (x_r and y == "R") or (not x_r and y == "L" and has):
                            continue
                        state: State = (False, True, was_paid or paid[k])
                        got = (bare, [*path, y])
                    else:
                        if gap == 2 and x_r and y == "L":
                            continue
                        state = (y == "R", y != "N", paid[k])
                        got = (bare + (not (has or was_paid)), [*path, y])
                    if state not in nxt or got[0] < nxt[state][0]:
                        nxt[state] = got
            best = nxt
        _, path = min(
            (
                (bare + (not (has or was_paid)), path)
                for (_, has, was_paid), (bare, path) in best.items()
            ),
            key=lambda t: t[0],
        )
        carried: list[int] = []
        stretches: list[tuple[int, int]] = []
        start, ok = runs[0][0], False
        for k, ((lo, hi), y) in enumerate(zip(runs, path, strict=True)):
            joined = k > 0 and lo - runs[k - 1][1] == 2 and (path[k - 1] == "R" or y == "L")
            if k > 0 and not joined:
                if not ok:
                    stretches.append((start, runs[k - 1][1]))
                start, ok = lo, False
            at = hi + 1 if y == "R" else lo - 1 if y == "L" else None
            if at is not None and at not in carried:
                carried.append(at)
            ok = ok or y != "N" or paid[k] or joined
        if not ok:
            stretches.append((start, runs[-1][1]))
        return carried, stretches

    def shrink(self, excess: int) -> bool:
        """Send kept units back off, least value per token saved first, until the estimate
        drops by ``excess``; whether any went."""
        freed = 0
        kept = [i for i, s in enumerate(self.state) if s != OFF]
        order = sorted(kept, key=lambda i: (self.value[i] / max(1, -self.delta(i, OFF)), i))
        for i in order:
            if freed >= excess:
                break
            spend = self.delta(i, OFF)
            if spend >= 0:
                continue
            a, b = self.units[i]
            self.state[i] = OFF
            for p in range(a, b + 1):
                self._kept.remove(p)
            self.total += spend
            freed -= spend
        self._heap = []
        self._skipped = []
        for i in range(len(self.units)):
            if self.state[i] == OFF:
                self._push(i)
        return freed > 0
