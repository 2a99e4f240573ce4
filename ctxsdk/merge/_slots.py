"""Slots: the provenance-typed state of one semantic key, its scores, and confluent merging.

A slot's state is a set of ``(value, source, evidence)`` items. Keeping the source inside the
state is what makes ``union`` a join (associative, commutative, idempotent), and therefore
what makes merging N branches independent of the order they arrive in. ``select`` turns a
state into a ``Decision`` and never guesses: a true tie is ``disputed``.

The representations are what an accumulator looks like when it is merged again:
``repr_join`` keeps everything (production); ``repr_collapse`` and ``repr_count`` are the
lossy ones of the T1 experiment, kept to show why they break confluence.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from types import MappingProxyType
from typing import Any, Literal, NamedTuple

from ..errors import InvalidArgument, UnknownName

__all__ = [
    "MERGED_SOURCE",
    "REPRESENTATIONS",
    "SCORES",
    "WEIGHTS",
    "Decision",
    "Evidence",
    "Item",
    "Merged",
    "Representation",
    "Score",
    "SlotState",
    "Support",
    "confluence_violation",
    "decision_key",
    "egalitarian",
    "elitist",
    "is_confluent",
    "merge_incremental",
    "merge_nary",
    "merge_streaming",
    "repr_collapse",
    "repr_count",
    "repr_join",
    "select",
]


class Evidence(IntEnum):
    """How a claim is known; higher is stronger."""

    SPECULATIVE = 1  # a model guess (reasoning blocks)
    INFERRED = 2  # a model conclusion in a visible answer
    TOOL_VERIFIED = 3  # a tool, file or command said so
    USER_STATED = 4  # the user said so explicitly


# Additive weights: one level up equals two agreeing sources one level down.
WEIGHTS: Mapping[int, int] = MappingProxyType({1: 1, 2: 2, 3: 4, 4: 8})

# The source lossy representations give the opinions they synthesise.
MERGED_SOURCE = "*merged*"

Item = tuple[str, str, int]  # (value, source, evidence)
Support = tuple[str, int]  # (source, evidence)


def _evidence(e: object, where: str) -> int:
    if isinstance(e, bool) or not isinstance(e, int) or e not in WEIGHTS:
        raise InvalidArgument(
            f"{where}: evidence must be an Evidence level 1..4 (SPECULATIVE..USER_STATED), "
            f"got {e!r}"
        )
    return int(e)


@dataclass(frozen=True, slots=True)
class SlotState:
    """The state of one slot: an immutable, canonically sorted tuple of
    ``(value, source, evidence)`` items (sorted by value, then source, then evidence;
    duplicates removed). ``a.union(b)`` is set union on the triples."""

    items: tuple[Item, ...] = ()
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        canon = tuple(
            sorted(
                {(str(v), str(s), _evidence(e, f"item {(v, s, e)!r}")) for v, s, e in self.items}
            )
        )
        object.__setattr__(self, "items", canon)
        object.__setattr__(self, "_hash", hash(canon))

    def __hash__(self) -> int:
        return self._hash

    # -- constructors --------------------------------------------------
    @classmethod
    def of(cls, *items: Item) -> SlotState:
        return cls(items)

    @classmethod
    def from_opinions(
        cls, source: str, opinions: Mapping[str, int] | Iterable[tuple[str, int]]
    ) -> SlotState:
        """One branch's opinions on this slot: ``{value: evidence}`` or ``(value, evidence)``
        pairs, all from ``source``."""
        pairs = opinions.items() if isinstance(opinions, Mapping) else opinions
        return cls(tuple((v, source, e) for v, e in pairs))

    # -- algebra -------------------------------------------------------
    def union(self, other: SlotState) -> SlotState:
        """The join of two states: associative, commutative, idempotent."""
        if not other.items or other.items == self.items:
            return self
        if not self.items:
            return other
        return SlotState(self.items + other.items)

    # -- reads ---------------------------------------------------------
    def per_value(self) -> dict[str, tuple[Support, ...]]:
        """value -> its sorted ``(source, evidence)`` supports."""
        return {
            value: tuple((s, e) for _, s, e in group)
            for value, group in itertools.groupby(self.items, key=lambda it: it[0])
        }

    def values(self) -> tuple[str, ...]:
        return tuple(sorted({v for v, _, _ in self.items}))

    def sources(self) -> tuple[str, ...]:
        return tuple(sorted({s for _, s, _ in self.items}))

    def __len__(self) -> int:
        return len(self.items)

    def __bool__(self) -> bool:
        return bool(self.items)

    def __str__(self) -> str:
        if not self.items:
            return "<empty>"
        return "{" + ", ".join(sorted(f"{v}@{e}({s})" for v, s, e in self.items)) + "}"


@dataclass(frozen=True, slots=True)
class Decision:
    """What a slot decides: ``empty``, ``resolved`` (one ``winner``) or ``disputed`` (the
    sorted ``tied`` values)."""

    outcome: Literal["empty", "resolved", "disputed"]
    winner: str | None = None
    tied: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return decision_key(self)

    def __str__(self) -> str:
        if self.outcome == "empty":
            return "<empty>"
        if self.outcome == "resolved":
            return str(self.winner)
        return "disputed{" + ",".join(self.tied) + "}"


def decision_key(decision: Decision) -> str:
    """``outcome|winner|tied,joined`` — what the confluence check compares."""
    return f"{decision.outcome}|{decision.winner or ''}|{','.join(decision.tied)}"


# A score maps a value's supports to anything comparable; the highest wins.
Score = Callable[[Sequence[Support]], Any]


def egalitarian(supports: Sequence[Support]) -> int:
    """Σ WEIGHTS[evidence]: weighted majority (the Dalal-distance minimiser on one slot)."""
    return sum(WEIGHTS[e] for _, e in supports)


def elitist(supports: Sequence[Support]) -> tuple[int, ...]:
    """The evidence levels sorted descending, compared lexicographically (a missing position
    is −∞: a prefix loses); Konieczny–Pino Pérez style."""
    return tuple(sorted((e for _, e in supports), reverse=True))


SCORES: Mapping[str, Score] = MappingProxyType({"egalitarian": egalitarian, "elitist": elitist})


def _score(score: Score | str) -> Score:
    if isinstance(score, str):
        try:
            return SCORES[score]
        except KeyError:
            raise UnknownName(
                f"no score {score!r}; known: {', '.join(sorted(SCORES))} "
                "(or pass a callable (supports) -> comparable)"
            ) from None
    if not callable(score):
        raise InvalidArgument(f"score must be a name or a callable, got {score!r}")
    return score


def select(state: SlotState, score: Score | str = "egalitarian") -> Decision:
    """Score every value; exactly one maximum ⇒ ``resolved``, else ``disputed`` with the tied
    values sorted. Never guesses."""
    fn = _score(score)
    per_value = state.per_value()
    if not per_value:
        return Decision("empty")
    try:
        scored = [(value, fn(supports)) for value, supports in per_value.items()]
    except (AttributeError, TypeError) as err:
        # a function of one candidate (``c.claims``) passed where pairs go: say where it belongs
        name = getattr(fn, "__name__", repr(fn))
        raise InvalidArgument(
            f"the score function {name} failed on a value's (source, evidence) pairs "
            f"({type(err).__name__}: {err}); a score of one candidate (candidate.claims, "
            "candidate.slot, ...) is given as Strategy(name, score=fn)"
        ) from err
    best = max(s for _, s in scored)
    winners = sorted(v for v, s in scored if s == best)
    if len(winners) == 1:
        return Decision("resolved", winners[0])
    return Decision("disputed", None, tuple(winners))


# -- representations ----------------------------------------------------
Representation = Callable[[SlotState, Score], SlotState]


def repr_join(state: SlotState, score: Score) -> SlotState:
    """Keep everything: the information-preserving (and confluent) representation."""
    return state


def _kept(state: SlotState, score: Score) -> tuple[dict[str, tuple[Support, ...]], tuple[str, ...]]:
    decision = select(state, score)
    if decision.outcome == "empty":
        return {}, ()
    keep = (decision.winner,) if decision.winner is not None else decision.tied
    return state.per_value(), keep


def repr_collapse(state: SlotState, score: Score) -> SlotState:
    """Keep the winner (every tied value on a tie) at its single max evidence, under source
    ``*merged*``: loses multiplicity and the losers. T1's ``MAX``; not confluent."""
    per_value, keep = _kept(state, score)
    return SlotState(tuple((v, MERGED_SOURCE, max(e for _, e in per_value[v])) for v in keep))


def repr_count(state: SlotState, score: Score) -> SlotState:
    """Keep the winner (every tied value on a tie) with its supporters' evidence multiset,
    under synthetic sources ``*merged*:0``, ``*merged*:1``, … (by evidence, highest first):
    loses the losers but keeps multiplicity. T1's ``COUNT``; not confluent."""
    per_value, keep = _kept(state, score)
    items: list[Item] = []
    for v in keep:
        levels = sorted((e for _, e in per_value[v]), reverse=True)
        items += [(v, f"{MERGED_SOURCE}:{i}", e) for i, e in enumerate(levels)]
    return SlotState(tuple(items))


REPRESENTATIONS: Mapping[str, Representation] = MappingProxyType(
    {"join": repr_join, "collapse": repr_collapse, "count": repr_count}
)


def _representation(representation: Representation | str) -> Representation:
    if isinstance(representation, str):
        try:
            return REPRESENTATIONS[representation]
        except KeyError:
            raise UnknownName(
                f"no representation {representation!r}; known: {', '.join(REPRESENTATIONS)}"
            ) from None
    return representation


# -- merging ------------------------------------------------------------
class Merged(NamedTuple):
    """A merged slot: its accumulated ``state`` and the ``decision`` selected from it."""

    state: SlotState
    decision: Decision


def merge_nary(branches: Iterable[SlotState], score: Score | str = "egalitarian") -> Merged:
    """Union every branch at once, then select: the reference semantics."""
    acc = SlotState()
    for branch in branches:
        acc = acc.union(branch)
    return Merged(acc, select(acc, score))


def merge_incremental(
    branches: Iterable[SlotState],
    score: Score | str = "egalitarian",
    representation: Representation | str = "join",
) -> Merged:
    """Fold the branches pairwise in the given order, re-representing the accumulator after
    each union (the first branch is taken as it is)."""
    fn = _score(score)
    rep = _representation(representation)
    it = iter(branches)
    acc = next(it, None)
    if acc is None:
        return Merged(SlotState(), Decision("empty"))
    for branch in it:
        acc = rep(acc.union(branch), fn)
    return Merged(acc, select(acc, fn))


def merge_streaming(branches: Iterable[SlotState], score: Score | str = "egalitarian") -> Merged:
    """Incremental merging with ``repr_join``: what production uses (provenance kept)."""
    return merge_incremental(branches, score, repr_join)


def confluence_violation(
    branches: Sequence[SlotState],
    score: Score | str = "egalitarian",
    representation: Representation | str = "join",
) -> tuple[Decision, tuple[int, ...], Decision] | None:
    """The first arrival order (in ``itertools.permutations`` order) whose incremental
    decision differs from the n-ary one, as ``(n_ary, order, got)``; ``None`` if confluent."""
    fn = _score(score)
    rep = _representation(representation)
    reference = merge_nary(branches, fn).decision
    for order in itertools.permutations(range(len(branches))):
        got = merge_incremental([branches[i] for i in order], fn, rep).decision
        if decision_key(got) != decision_key(reference):
            return reference, order, got
    return None


def is_confluent(
    branches: Sequence[SlotState],
    score: Score | str = "egalitarian",
    representation: Representation | str = "join",
) -> bool:
    """Every arrival order yields the n-ary ``decision_key``."""
    return confluence_violation(branches, score, representation) is None
