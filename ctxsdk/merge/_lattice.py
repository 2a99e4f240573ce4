"""The trust lattice: ``join`` (max) aggregates the supporters of one value, ``meet`` (min)
derives a conclusion from its premises; unlabelled or invalid levels count as UNTRUSTED.

In a module of its own because both the derivation network (``_derive``: a conclusion's
ceiling) and the trust check (``_trust``, which derives when the stage has not run) read it.
"""

from __future__ import annotations

from collections.abc import Iterable

from ._beliefs import Slot, Trust
from ._claims import Claim

__all__ = ["join", "level", "meet", "presented_trust", "supporters", "trust_of", "valid"]

_LEVELS = frozenset(int(t) for t in Trust)


def valid(value: object) -> bool:
    """Whether ``value`` is a trust level (an int of ``Trust``, not a bool, not a string)."""
    # bool is an int subclass, but True is no more a trust level than "trusted" is
    return isinstance(value, int) and not isinstance(value, bool) and value in _LEVELS


def level(value: object) -> Trust:
    """``value`` as a ``Trust``; UNTRUSTED when it is not one."""
    return Trust(value) if valid(value) else Trust.UNTRUSTED  # type: ignore[arg-type]


def join(levels: Iterable[int | None]) -> Trust:
    """Aggregation (max). Unlabelled or invalid counts as UNTRUSTED, so adding an
    unlabelled supporter never raises trust; nothing at all is UNTRUSTED (the bottom)."""
    return max((level(x) for x in levels), default=Trust.UNTRUSTED)


def meet(levels: Iterable[int | None]) -> Trust:
    """Derivation (min). Unlabelled or invalid counts as UNTRUSTED; nothing at all is
    TRUSTED, the lattice top and the identity of min (a conjunction of no premises)."""
    return min((level(x) for x in levels), default=Trust.TRUSTED)


def trust_of(claim: Claim) -> Trust:
    """A claim's level: its label, UNTRUSTED when it has none or it is not a level."""
    return level(claim.trust)


def supporters(slot: Slot) -> tuple[Claim, ...]:
    """The live claims behind the values ``slot`` presents."""
    return tuple(c for v in slot.presented for c in slot.supporting(v))


def presented_trust(slot: Slot) -> Trust:
    """The join over the live claims behind the values the slot presents (the winner, the
    chosen value, or every tied one): a loser's trust never lends itself to the winner."""
    return join(c.trust for c in supporters(slot))
