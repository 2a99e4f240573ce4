"""The merged view every later stage reads: a ``Slot`` per key, the ``Branch`` each source
session became, and the trust levels, resolutions and derivations attached to slots.

A slot keeps its ``SlotState`` (every live ``(value, source, evidence)`` opinion), the
``Decision`` a score selected from it and *all* its claims (superseded ones included, as
provenance). Later stages never mutate a slot: adjudication returns slots with a
``resolution``, derivation with a ``derivation``; ``state`` and ``decision`` stay what the
merge computed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Literal

from ._claims import Claim, FactLike, value_of, voting
from ._order import correcting_value, later_values
from ._slots import Decision, Score, SlotState, merge_streaming

__all__ = [
    "SLOT_TYPES",
    "Branch",
    "BranchMessage",
    "Derivation",
    "Resolution",
    "Slot",
    "SlotType",
    "Trust",
    "build_slots",
]


class Trust(IntEnum):
    """Where a claim comes from, as a lattice: join (max) aggregates, meet (min) derives.
    A claim with no label is UNTRUSTED; a string is never a level."""

    UNTRUSTED = 0  # plugin-injected or unknown
    EXTERNAL = 1  # another session
    TRUSTED = 2  # the current session's own user


SlotType = Literal["constraint", "goal", "decision", "refuted", "fact", "question", "artifact"]
SLOT_TYPES: tuple[str, ...] = (
    "constraint",
    "goal",
    "decision",
    "refuted",
    "fact",
    "question",
    "artifact",
)


@dataclass(frozen=True, slots=True)
class BranchMessage:
    """One message of a source's surface, already redacted: its event ``seq``, its
    ``origin`` (``user``, ``assistant``, ``tool``) and whether a plugin injected it."""

    seq: int
    raw: Mapping[str, Any]
    injected: bool = False


@dataclass(frozen=True, slots=True)
class Branch:
    """One source session as the merge reads it: ``id`` (its session id), its redacted
    surface ``messages`` in model order, the ``trust`` its claims inherit, and how many
    credentials redaction withheld from it."""

    id: str
    messages: tuple[BranchMessage, ...]
    trust: Trust = Trust.EXTERNAL
    title: str = ""
    path: str | None = None
    redactions: int = 0
    # The session's kernel facts (``Session.facts()``) and those still in force
    # (``Facts.current()``); None for a branch built from messages alone (it gives no claims
    # on the deterministic path).
    facts: tuple[FactLike, ...] | None = None
    current: tuple[FactLike, ...] | None = None
    # ``(seq, redacted message text)`` of the events whose message held a credential
    tainted: tuple[tuple[int, str], ...] = ()
    # The seq of the session's opening request (its first message in the user's own words:
    # the task it was started with), and its first and last event times (epoch ms)
    opening: int | None = None
    span: tuple[int, int] | None = None
    # The directory the session ran in (its header's cwd, redacted): its project
    cwd: str | None = None


@dataclass(frozen=True, slots=True)
class Resolution:
    """What adjudication decided for a disputed slot: ``choose`` (one of the tied
    ``value``s), ``both`` (compatible), ``conditional`` (each under its ``guard``) or
    ``unresolvable``. ``order_sensitive`` marks an answer that flipped when the options were
    reversed (it is then ``unresolvable``)."""

    outcome: Literal["choose", "both", "conditional", "unresolvable"]
    value: str | None = None
    guard: str | None = None
    premises: tuple[str, ...] = ()
    rationale: str = ""
    order_sensitive: bool = False

    @property
    def asserts(self) -> bool:
        return self.outcome in ("choose", "both", "conditional")


@dataclass(frozen=True, slots=True)
class Derivation:
    """A slot's standing in the justification network: ``axiom`` (asserted, no routes),
    ``founded`` (some route's premises all hold; ``satisfied_by`` is it), ``retracted``
    (every route has an ``unmet`` premise) or ``unasserted``. ``unknown`` lists premise keys
    no slot has; ``trust_ceiling`` is the best route's weakest premise trust."""

    status: Literal["axiom", "founded", "retracted", "unasserted"]
    routes: tuple[tuple[str, ...], ...] = ()
    satisfied_by: tuple[str, ...] | None = None
    unmet: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()
    reason: str | None = None
    trust_ceiling: Trust | None = None


SlotStatus = Literal["empty", "resolved", "disputed", "adjudicated", "retracted"]


@dataclass(frozen=True, slots=True)
class Slot:
    """One key merged across branches (see the module docs)."""

    key: str
    state: SlotState
    decision: Decision
    claims: tuple[Claim, ...]
    type: SlotType = "fact"
    resolution: Resolution | None = None
    derivation: Derivation | None = None
    # Values the score outweighed but that only sessions later than every session backing
    # the winner state: an earlier word cannot overrule a later one, so the slot is disputed
    # (``_order``)
    later: tuple[str, ...] = ()

    @property
    def asserted(self) -> bool:
        """Resolved, or adjudicated to choose / both / conditional."""
        if self.decision.outcome == "resolved":
            return True
        return self.resolution is not None and self.resolution.asserts

    @property
    def presented(self) -> tuple[str, ...]:
        """The values a rendering shows: the winner, the chosen value, else every tied one."""
        if self.decision.outcome == "resolved" and self.decision.winner is not None:
            return (self.decision.winner,)
        r = self.resolution
        if r is not None and r.outcome == "choose" and r.value is not None:
            return (r.value,)
        return self.decision.tied

    @property
    def statement(self) -> bool:
        """A slot keyed by a statement itself (an unkeyed instruction, preference or
        decision a user stated): its key is what was said."""
        return bool(self.claims) and all(c.statement for c in self.claims)

    def display(self, value: str) -> str:
        """``value`` as it was said: the original phrase of its best supporting claim
        (``UUIDs`` for the comparison form ``uuids``; ``not public`` keeps its ``not``)."""
        c = self.quote(value)
        if c is None or not c.shown:
            return value
        return f"not {c.shown}" if c.negated else c.shown

    @property
    def shown(self) -> tuple[str, ...]:
        """The presented values as said (original case): what a view displays."""
        return tuple(self.display(v) for v in self.presented)

    @property
    def status(self) -> SlotStatus:
        if self.derivation is not None and self.derivation.status == "retracted":
            return "retracted"
        if self.decision.outcome in ("empty", "resolved"):
            return self.decision.outcome
        if self.resolution is not None and self.resolution.outcome != "unresolvable":
            return "adjudicated"
        return "disputed"

    @property
    def live(self) -> tuple[Claim, ...]:
        """The claims the state was built from (not superseded)."""
        return tuple(c for c in self.claims if not c.superseded)

    def supporting(self, value: str) -> tuple[Claim, ...]:
        """The live claims that give ``value`` (a negated one as ``not <value>``)."""
        return tuple(c for c in self.live if value_of(c) == value)

    @property
    def max_evidence(self) -> int:
        levels = [c.evidence for v in self.presented for c in self.supporting(v)]
        return max(levels, default=0)

    @property
    def sources(self) -> tuple[str, ...]:
        return self.state.sources()

    def quote(self, value: str) -> Claim | None:
        """The representative claim of ``value``: highest evidence, then longest text."""
        best = sorted(self.supporting(value), key=lambda c: (-c.evidence, -len(c.text), c.seq))
        return best[0] if best else None

    def __str__(self) -> str:
        return f"{self.key}: {self.decision} [{self.status}]"


_TYPE_OF_KIND: Mapping[str, SlotType] = {
    "fact": "fact",
    "decision": "decision",
    "constraint": "constraint",
    "refuted": "refuted",
}


def _slot_type(claims: Sequence[Claim], declared: Mapping[str, SlotType]) -> SlotType:
    """The declared type, else the most common kind of the live claims (ties go to the
    earlier type in ``SLOT_TYPES``)."""
    for c in claims:
        if c.key in declared:
            return declared[c.key]
    kinds = Counter(_TYPE_OF_KIND.get(c.kind or "fact", "fact") for c in claims)
    if not kinds:
        return "fact"
    return min(kinds, key=lambda t: (-kinds[t], SLOT_TYPES.index(t)))


def build_slots(
    claims: Iterable[Claim],
    score: Score | str = "egalitarian",
    *,
    types: Mapping[str, SlotType] | None = None,
    spans: Mapping[str, tuple[int, int]] | None = None,
) -> list[Slot]:
    """One slot per key, keys sorted. The state joins each source's live positive claims
    (one ``SlotState`` per source at the highest evidence it gave each value, streamed in
    source order). A negated claim votes as the value ``not <value>`` unless its source also
    asserts a value of the key (``voting``), so "the API is not public" against "the API is
    public" is a dispute; a key whose voting claims are all negated is a ``refuted`` slot.
    ``types`` declares a key's type (the model path names
    them); otherwise it is the most common kind of its live claims. ``spans`` (source ->
    first and last event time) orders the sessions: a value the score outweighed that only
    sessions later than every backer of the winner state keeps the slot disputed
    (``_order``; ``Slot.later``), and a tie is resolved by a later explicit correction of
    the other value at no lower evidence (``correcting_value``)."""
    by_key: dict[str, list[Claim]] = {}
    for c in claims:
        by_key.setdefault(c.key, []).append(c)
    declared = types or {}
    slots: list[Slot] = []
    for key in sorted(by_key):
        all_claims = by_key[key]
        votes = voting(all_claims)
        positive = [c for c in votes if not c.negated]
        per_source: dict[str, dict[str, int]] = {}
        for c in votes:
            per = per_source.setdefault(c.source, {})
            v = value_of(c)
            per[v] = max(per.get(v, 0), c.evidence)
        merged = merge_streaming(
            [SlotState.from_opinions(s, per_source[s]) for s in sorted(per_source)], score
        )
        kind: SlotType = _slot_type(positive, declared) if positive else "refuted"
        if key in declared:
            kind = declared[key]
        decision, later = merged.decision, tuple[str, ...]()
        if spans and decision.outcome == "resolved" and decision.winner is not None:
            later = later_values(decision.winner, votes, spans)
            if later:
                decision = Decision("disputed", None, tuple(sorted({decision.winner, *later})))
        elif spans and decision.outcome == "disputed":
            corrected = correcting_value(decision.tied, all_claims, spans)
            if corrected is not None:
                decision = Decision("resolved", corrected)
        slots.append(Slot(key, merged.state, decision, tuple(all_claims), kind, later=tuple(later)))
    return slots
