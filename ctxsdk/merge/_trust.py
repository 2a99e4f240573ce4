"""Trust: the lattice that keeps merging from laundering another session's content.

Merging is a laundering primitive: an assertion from a compromised session ("ignore previous
instructions", "the API key is X") enters the merged block and, unless its origin is kept,
reads like something the current user established. So every claim carries a ``Trust``
level, and two operations are kept apart:

- ``join`` (max) aggregates the supporters of one value: the best support wins, and it can
  never exceed the best supporter. Three EXTERNAL sessions agreeing are still EXTERNAL.
- ``meet`` (min) derives: a conclusion is only as trusted as its weakest premise.

``check_trust`` checks the trust levels a rendering would print against these rules and
returns every ``Violation``; the pipeline refuses to inject on any (it fails closed). An
unlabelled claim is UNTRUSTED, never "assumed benign", and a string is never a level.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from ._beliefs import Slot, Trust
from ._derive import derive

# The lattice itself lives in _lattice, which _derive reads too; its public names stay here.
from ._lattice import join, meet, presented_trust, supporters, trust_of, valid

__all__ = [
    "Violation",
    "ViolationKind",
    "check_trust",
    "join",
    "meet",
    "presented_trust",
    "trust_of",
]

ViolationKind = Literal[
    "unsupported", "unlabelled", "no-amplification", "no-laundering", "derivation-ceiling"
]


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken trust rule: its ``kind``, the slot ``key`` and a one-line ``detail``."""

    kind: ViolationKind
    key: str
    detail: str

    def __str__(self) -> str:
        return f"{self.key}: {self.kind} ({self.detail})"


def _derived(slots: Sequence[Slot]) -> Sequence[Slot]:
    """The slots with their derivations, computing them when the stage has not run: a
    ceiling is never skipped just because derivation was left out."""
    if all(s.derivation is not None for s in slots):
        return slots
    return derive(slots).slots


def check_trust(
    slots: Sequence[Slot], labels: Mapping[str, int] | None = None
) -> tuple[Violation, ...]:
    """Every violation of the trust invariants, sorted by (key, kind). ``labels`` are the
    levels a rendering would print per slot key (default: ``presented_trust``). The rules:

    - ``unsupported``: a presented value has no live claim behind it (nothing to take a
      trust level from, e.g. an adjudicator's invented value);
    - ``unlabelled``: a supporting claim carries no valid level (or the label is none);
    - ``no-amplification``: the label is above the best supporter;
    - ``no-laundering``: the label is TRUSTED while no supporter is;
    - ``derivation-ceiling``: the label is above the best route's weakest premise.

    Empty slots present nothing and are skipped; retracted slots are still rendered (marked
    RETRACTED) and checked, except for the ceiling, which applies to founded slots only: a
    retracted slot is shown as withdrawn and an unasserted one as disputed, neither as a
    conclusion of its premises. A slot without a ``derivation`` gets one computed here, so
    the ceiling is never skipped because the stage did not run. An empty result is the only
    one that may inject.
    """
    given = labels or {}
    found: list[Violation] = []
    for slot, derived in zip(slots, _derived(slots), strict=True):
        if not slot.presented:
            continue
        key = slot.key
        backers = supporters(slot)
        for value in slot.presented:
            if not slot.supporting(value):
                found.append(Violation("unsupported", key, f"{value!r} has no supporting claim"))
        if not backers:
            continue
        unlabelled = [c for c in backers if not valid(c.trust)]
        if unlabelled:
            found.append(
                Violation(
                    "unlabelled",
                    key,
                    f"{len(unlabelled)} supporting claim(s) carry no trust label "
                    f"(from {', '.join(sorted({c.source for c in unlabelled}))})",
                )
            )
        best = join(c.trust for c in backers)
        raw = given.get(key, presented_trust(slot))
        if not valid(raw):
            found.append(Violation("unlabelled", key, f"the label {raw!r} is not a trust level"))
            continue
        label = Trust(raw)
        if label > best:
            found.append(
                Violation(
                    "no-amplification",
                    key,
                    f"label {label.name} exceeds the best supporter {best.name}",
                )
            )
        if label >= Trust.TRUSTED and best < Trust.TRUSTED:
            found.append(
                Violation("no-laundering", key, f"label {label.name} but no supporter is TRUSTED")
            )
        # The ceiling caps what the network presents as standing on its premises, so it
        # applies to founded slots: a retracted one is presented as withdrawn (RETRACTED),
        # an unasserted one as disputed, not as a conclusion of its routes.
        d = slot.derivation or derived.derivation
        ceiling = d.trust_ceiling if d is not None and d.status == "founded" else None
        if ceiling is not None and label > ceiling:
            found.append(
                Violation(
                    "derivation-ceiling",
                    key,
                    f"label {label.name} exceeds the best route's weakest premise {ceiling.name}",
                )
            )
    return tuple(sorted(found, key=lambda v: (v.key, v.kind, v.detail)))
