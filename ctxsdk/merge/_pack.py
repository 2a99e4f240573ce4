"""Packing: which merged slots fit a token budget, and in what order they are laid out.

The objective is the seed's monotone submodular utility

    U(S) = Σ_{v∈S} personal(v) + Σ_t w_t · (1 − e^(−γ·n_t(S)))

where ``personal`` values a slot on its own (type, evidence, corroboration, trust, relevance
to the query; a retracted slot keeps 5 %) and the coverage term rewards a block that covers
several slot types instead of repeating one (``w_t = 6 · TYPE_VALUE[t] · 0.1``, ``γ = 0.7``).
Submodularity is what makes density greedy a sound heuristic for this knapsack.

The solver is the seed's: items costlier than the whole budget are dropped up front; density
greedy adds the best marginal-gain/cost item that still fits (ties to the smaller key);
``partial`` also seeds greedy with small subsets and keeps the best utility, so it is never
worse than density. Unlike the seed, the seeds are drawn only from the ``SEED_POOL`` slots of
highest personal value, fewer with many slots (``SEED_WORK``; the seed enumerated every pair:
125k greedy runs for 500 slots);
partial enumeration exists to rescue valuable-but-expensive slots that density skips, and
those are the high-value ones. Greedy is lazy (a heap of stale densities, which are upper
bounds because gains only shrink), so one run is O(n log n).

The selected slots are laid out stable-first (``stability`` desc, key asc): the slots least
likely to change lead, so a provider's prompt cache keeps the longest prefix when a volatile
slot churns (``preserved_prefix`` measures it).
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from ..errors import InvalidArgument
from ._beliefs import Slot
from ._slots import Evidence
from ._trust import presented_trust
from ._work import only_read

__all__ = [
    "SEED_POOL",
    "TYPE_STABILITY",
    "TYPE_VALUE",
    "Packing",
    "Single",
    "agreement",
    "blockable",
    "pack",
    "personal",
    "preserved_prefix",
    "query_terms",
    "relevance",
    "stability",
    "utility",
]

TYPE_VALUE: Mapping[str, float] = MappingProxyType(
    {
        "constraint": 3.0,
        "goal": 3.0,
        "decision": 2.5,
        "refuted": 2.0,
        "fact": 1.5,
        "question": 1.0,
        "artifact": 1.0,
    }
)
"""What a slot of each type is worth on its own (an unknown type is worth 1)."""

TYPE_STABILITY: Mapping[str, float] = MappingProxyType(
    {
        "constraint": 4.0,
        "goal": 4.0,
        "decision": 3.0,
        "refuted": 2.0,
        "fact": 2.0,
        "artifact": 1.0,
        "question": 0.5,
    }
)
"""How unlikely a slot of each type is to change between turns (layout order)."""

SEED_POOL = 30
"""``partial`` seeds greedy only with subsets of the SEED_POOL slots of highest personal value."""
SEED_WORK = 20_000
"""... and fewer when there are many slots: about SEED_WORK slot evaluations in all (seed runs
times slots), so re-packing 250 slots in a widget stays interactive."""


def _pool_size(n_items: int, seed_size: int) -> int:
    if n_items == 0 or seed_size == 0:
        return 0
    k = SEED_POOL
    while k > 4 and sum(math.comb(k, j) for j in range(1, seed_size + 1)) * n_items > SEED_WORK:
        k -= 1
    return k


_TYPE_BASE = 1.0
_COVERAGE = 6.0
_GAMMA = 0.7
_RETRACTED_PENALTY = 0.05
_ONLY_READ = 0.5
_AGREEMENT = 12.0


def query_terms(query: str | None) -> tuple[str, ...]:
    """The distinct lowercase whitespace-split terms of ``query`` of length >= 3, in order
    (short words such as "is" or "a" would match every slot)."""
    if not query:
        return ()
    return tuple(dict.fromkeys(t for t in query.lower().split() if len(t) >= 3))


def relevance(slot: Slot, terms: Sequence[str]) -> float:
    """The fraction of ``terms`` found as substrings of the key and the live claims' texts
    (lowercased); 0 with no terms. Superseded claims do not count: they are not shown."""
    if not terms:
        return 0.0
    hay = " ".join([slot.key, *(c.text for c in slot.live)]).lower()
    return sum(1 for t in terms if t.lower() in hay) / len(terms)


def _trust_of(slot: Slot, trusts: Mapping[str, int]) -> int:
    """The slot's trust from ``trusts`` (by key); else the join (max) over the live claims
    supporting its presented values, an unlabelled claim counting as UNTRUSTED."""
    if slot.key in trusts:
        return int(trusts[slot.key])
    return int(presented_trust(slot))


def agreement(slot: Slot) -> int:
    """How far a slot reaches across sessions: 2 when two or more sources back its
    presented value (a cross-session fact), 1 when two or more sources hold it in dispute
    (unresolved or adjudicated), else 0."""
    if slot.decision.outcome == "resolved":
        backers = {c.source for v in slot.presented for c in slot.supporting(v)}
        return 2 if len(backers) >= 2 else 0
    return 1 if len(slot.sources) >= 2 else 0


Single = Literal["user", "all"]
"""Which single-session slots a block may carry: ``"all"`` every one (the default; packing
ranks them after the cross-session slots), ``"user"`` only those a user stated."""


def blockable(slot: Slot, single: Single = "all") -> bool:
    """Whether the block may carry ``slot``: a fact two or more sessions agree on, a
    dispute across sessions, and a single session's slot when its user stated the presented
    value (``single="user"``) or always (``single="all"``). The rest stay in the result's
    slots (and the widget), out of the block."""
    if slot.decision.outcome == "empty":
        return False
    if single == "all" or agreement(slot) > 0:
        return True
    return slot.max_evidence >= int(Evidence.USER_STATED)


def personal(slot: Slot, trust: int, terms: Sequence[str] = ()) -> float:
    """A slot's value on its own: type value + 3·max evidence + 2·#sources + 4·trust +
    2·relevance + 12·agreement (facts agreed by two or more sessions first, then disputes
    across sessions, then what one session's user said), times 0.5 for a file its sessions
    only read (``_work.only_read``) and 0.05 when retracted (scaled, not subtracted, so it
    stays >= 0)."""
    value = (
        TYPE_VALUE.get(slot.type, _TYPE_BASE)
        + 3 * slot.max_evidence
        + 2 * len(slot.sources)
        + 4 * int(trust)
        + 2 * relevance(slot, terms)
        + _AGREEMENT * agreement(slot)
    )
    if only_read(slot):
        # a file its sessions only read says where they looked, not what they did or found
        value *= _ONLY_READ
    return value * _RETRACTED_PENALTY if slot.status == "retracted" else value


def _weight(slot_type: str) -> float:
    return _COVERAGE * TYPE_VALUE.get(slot_type, _TYPE_BASE) * 0.1


def _coverage_gain(slot_type: str, n: int) -> float:
    """What the (n+1)-th slot of a type adds to the coverage term."""
    return _weight(slot_type) * (math.exp(-_GAMMA * n) - math.exp(-_GAMMA * (n + 1)))


def utility(slots: Sequence[Slot], trusts: Mapping[str, int], terms: Sequence[str] = ()) -> float:
    """U(S) = Σ personal + Σ_t w_t (1 − e^(−0.7·n_t(S))), w_t = 6 · TYPE_VALUE[t] · 0.1."""
    total = sum(personal(s, _trust_of(s, trusts), terms) for s in slots)
    counts: dict[str, int] = {}
    for s in slots:
        counts[s.type] = counts.get(s.type, 0) + 1
    for t in sorted(counts):
        total += _weight(t) * (1 - math.exp(-_GAMMA * counts[t]))
    return total


def stability(slot: Slot, trust: int) -> float:
    """How unlikely the slot is to change: type stability + 3 if resolved + 0.5·max evidence
    + 0.5·#sources + 0.25·trust + 2·agreement (what several sessions agree on leads the
    block)."""
    return (
        TYPE_STABILITY.get(slot.type, _TYPE_BASE)
        + (3.0 if slot.decision.outcome == "resolved" else 0.0)
        + 0.5 * slot.max_evidence
        + 0.5 * len(slot.sources)
        + 0.25 * int(trust)
        + 2.0 * agreement(slot)
    )


@dataclass(frozen=True)
class Packing:
    """What the solver chose: ``selected`` in layout order (stability desc, key asc), a
    ``(key, why)`` for every slot left out, the utility and total cost of the selection, and
    which ``algorithm`` produced it (``partial`` only when strictly better than density)."""

    selected: tuple[Slot, ...]
    dropped: tuple[tuple[str, str], ...]
    utility: float
    cost: int
    budget: int
    algorithm: Literal["density", "partial"]

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(s.key for s in self.selected)


class _Item:
    __slots__ = ("cost", "i", "key", "personal", "type")

    def __init__(self, i: int, key: str, slot_type: str, value: float, cost: int) -> None:
        self.i, self.key, self.type, self.personal, self.cost = i, key, slot_type, value, cost


def _density(item: _Item, n: int) -> float:
    gain = item.personal + _coverage_gain(item.type, n)
    return gain / item.cost if item.cost > 0 else math.inf


def _greedy(items: Sequence[_Item], budget: int, seed: Sequence[_Item] = ()) -> list[_Item]:
    """Lazy density greedy from ``seed``: pop the best stale density; if it was computed at
    the current count of its type it is the true best (stale values only over-estimate)."""
    chosen = list(seed)
    left = budget - sum(it.cost for it in seed)
    counts: dict[str, int] = {}
    for it in seed:
        counts[it.type] = counts.get(it.type, 0) + 1
    taken = {it.i for it in seed}
    heap: list[tuple[float, str, int, int]] = []
    for it in items:
        if it.i not in taken and it.cost <= left:
            n = counts.get(it.type, 0)
            heap.append((-_density(it, n), it.key, n, it.i))
    heapq.heapify(heap)
    by_i = {it.i: it for it in items}
    cheapest = min((it.cost for it in items), default=0)
    while heap and left >= cheapest:  # below the cheapest cost nothing can be added
        _, key, n, i = heapq.heappop(heap)
        it = by_i[i]
        if it.cost > left:
            continue  # the budget only shrinks: it never fits again
        now = counts.get(it.type, 0)
        if now != n:
            heapq.heappush(heap, (-_density(it, now), key, now, i))
            continue
        chosen.append(it)
        left -= it.cost
        counts[it.type] = now + 1
    return chosen


def _value(chosen: Sequence[_Item]) -> float:
    total = sum(it.personal for it in chosen)
    counts: dict[str, int] = {}
    for it in chosen:
        counts[it.type] = counts.get(it.type, 0) + 1
    for t in sorted(counts):
        total += _weight(t) * (1 - math.exp(-_GAMMA * counts[t]))
    return total


def pack(
    slots: Sequence[Slot],
    budget: int,
    costs: Mapping[str, int],
    *,
    trusts: Mapping[str, int],
    query: str | None = None,
    algorithm: Literal["density", "partial"] = "partial",
    seed_size: int = 2,
) -> Packing:
    """Choose the slots to show within ``budget`` (``costs`` by key, in tokens) to maximise
    ``utility``; see the module docs for the solver. Raises ``InvalidArgument`` for a
    duplicate key, a missing or negative cost, or an unknown algorithm."""
    if algorithm not in ("density", "partial"):
        raise InvalidArgument(f"algorithm must be 'density' or 'partial', got {algorithm!r}")
    if seed_size < 0:
        raise InvalidArgument(f"seed_size must be >= 0, got {seed_size!r}")
    terms = query_terms(query)
    keys = [s.key for s in slots]
    if len(set(keys)) != len(keys):
        raise InvalidArgument("pack: slot keys must be distinct")
    for k in keys:
        if k not in costs:
            raise InvalidArgument(f"pack: no cost for slot {k!r}")
        if costs[k] < 0:
            raise InvalidArgument(f"pack: cost of {k!r} is negative ({costs[k]})")
    trust = {s.key: _trust_of(s, trusts) for s in slots}
    dropped: dict[str, str] = {}
    items: list[_Item] = []
    for i, s in enumerate(slots):
        c = int(costs[s.key])
        if c > budget:
            dropped[s.key] = f"costs {c} tokens, more than the {budget} the budget leaves for slots"
        else:
            items.append(_Item(i, s.key, s.type, personal(s, trust[s.key], terms), c))

    best = _greedy(items, budget)
    best_value = _value(best)
    won: Literal["density", "partial"] = "density"
    if algorithm == "partial" and seed_size > 0:
        pool = sorted(items, key=lambda it: (-it.personal, it.key))[
            : _pool_size(len(items), seed_size)
        ]
        pool.sort(key=lambda it: it.key)
        for size in range(1, seed_size + 1):
            for seed in itertools.combinations(pool, size):
                if sum(it.cost for it in seed) > budget:
                    continue
                chosen = _greedy(items, budget, seed)
                value = _value(chosen)
                if value > best_value + 1e-9:
                    best, best_value, won = chosen, value, "partial"

    picked = {it.i for it in best}
    for i, s in enumerate(slots):
        if i not in picked and s.key not in dropped:
            dropped[s.key] = "left out for budget (utility/cost lower)"
    layout = sorted((slots[i] for i in picked), key=lambda s: (-stability(s, trust[s.key]), s.key))
    return Packing(
        selected=tuple(layout),
        dropped=tuple(sorted(dropped.items())),
        utility=best_value,
        cost=sum(it.cost for it in best),
        budget=budget,
        algorithm=won,
    )


def preserved_prefix(before: Sequence[str], after: Sequence[str]) -> int:
    """The length of the common prefix of two key layouts: how much of a cached prompt
    prefix survives the change."""
    n = 0
    for a, b in zip(before, after, strict=False):
        if a != b:
            break
        n += 1
    return n
