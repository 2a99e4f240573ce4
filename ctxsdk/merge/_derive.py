"""Derivation: a justification network (JTMS) over the merged slots.

Merging conclusions is not merging reasoning. If a session concluded X *because of* Y and
the merge left Y disputed, presenting X as established presents a claim whose support is
gone, and nothing in X's own evidence notices. So claims may name the premises they rest
on (``Claim.derived_from``: alternatives, each a conjunction of premise keys), and
``derive`` computes which slots still stand:

- ``axiom``: asserted (resolved, or adjudicated choose / both / conditional), no routes;
- ``founded``: asserted, and some route has every premise IN;
- ``retracted``: asserted, but every route has a premise that is not IN;
- ``unasserted``: the merge did not settle it (empty, disputed, unresolvable).

IN is the least fixpoint of "asserted, and an axiom or some route fully IN": monotone and
cycle-safe, so a circular argument with no outside support never enters. Several routes
are independent justifications, so losing one premise does not retract a conclusion that
another route still holds up; that is why this is a graph and not a flag.

A derived slot's ``trust_ceiling`` is the best route's weakest premise (join over routes
of the meet over premises): derivation may only lower trust, and one weak alternative may
not drag down a conclusion a strong one fully supports.
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from dataclasses import dataclass, replace

from ._beliefs import Derivation, Slot, Trust
from ._lattice import join, meet, presented_trust

__all__ = ["DerivationReport", "derive", "routes_of"]

Route = tuple[str, ...]
_COLLECTIONS = (list, tuple, set, frozenset)


def _premise(entry: object) -> str | None:
    if isinstance(entry, str) and entry.strip():
        return entry.strip()
    return None


def _route(entries: object) -> Route:
    if isinstance(entries, str):
        entries = (entries,)
    if not isinstance(entries, _COLLECTIONS):
        return ()
    return tuple(sorted({p for e in entries if (p := _premise(e)) is not None}))


def routes_of(derived_from: object) -> tuple[Route, ...]:
    """Normalize any ``derived_from`` shape to sorted, deduplicated routes.

    A flat list of strings is ONE conjunction (all its premises are needed); a list that
    contains a list is alternatives, and a bare string in it is a singleton route. Reading
    the flat form as alternatives would turn "both must hold" into "either is enough", the
    opposite meaning (a defect the seed shipped). A bare string is one premise, never its
    characters. Non-strings, empty strings, empty routes and dicts are dropped."""
    if isinstance(derived_from, str):
        raw: list[object] = [derived_from]
    elif isinstance(derived_from, _COLLECTIONS):
        entries = list(derived_from)
        nested = any(isinstance(e, _COLLECTIONS) for e in entries)
        raw = entries if nested else [entries]
    else:
        return ()
    routes = {r for e in raw if (r := _route(e))}
    return tuple(sorted(routes))


def _routes(slot: Slot) -> tuple[Route, ...]:
    # Only the claims behind the presented values justify them: a losing value's premises
    # say nothing about why the winner holds.
    found: set[Route] = set()
    for value in slot.presented:
        for claim in slot.supporting(value):
            found.update(routes_of(claim.derived_from))
    return tuple(sorted(found))


@dataclass(frozen=True, slots=True)
class DerivationReport:
    """``slots`` in input order, each with its ``derivation``; ``in_count`` (axiom or
    founded), ``retracted_count``, ``derived_count`` (slots with routes: 0 means the
    mechanism was inert, not that nothing fell) and the ``unknown`` premise keys."""

    slots: tuple[Slot, ...]
    in_count: int
    retracted_count: int
    derived_count: int
    unknown: tuple[str, ...]


def _fixpoint(slots: Sequence[Slot], routes: dict[str, tuple[Route, ...]]) -> Set[str]:
    """The least set of asserted keys closed under "no routes, or some route fully IN"."""
    inside: set[str] = set()
    changed = True
    while changed:
        changed = False
        for slot in slots:
            if slot.key in inside or not slot.asserted:
                continue
            rs = routes[slot.key]
            if not rs or any(all(p in inside for p in r) for r in rs):
                inside.add(slot.key)
                changed = True
    return inside


def derive(slots: Sequence[Slot]) -> DerivationReport:
    """Attach a ``Derivation`` to every slot (see the module docs). Run it after
    adjudication, so a tie the adjudicator settled counts as an established premise."""
    by_key: dict[str, Slot] = {}
    for s in slots:
        by_key.setdefault(s.key, s)
    routes = {s.key: _routes(s) for s in slots}
    inside = _fixpoint(slots, routes)

    def trust(key: str) -> Trust:
        premise = by_key.get(key)
        return presented_trust(premise) if premise is not None else Trust.UNTRUSTED

    out: list[Slot] = []
    unknown_all: set[str] = set()
    for slot in slots:
        rs = routes[slot.key]
        premises = {p for r in rs for p in r}
        unknown = tuple(sorted(p for p in premises if p not in by_key))
        unknown_all.update(unknown)
        ceiling = join(meet(trust(p) for p in r) for r in rs) if rs else None
        d: Derivation
        if not rs:
            d = Derivation("axiom" if slot.asserted else "unasserted")
        elif not slot.asserted:
            d = Derivation(
                "unasserted",
                rs,
                unknown=unknown,
                reason="the merge did not settle this slot",
                trust_ceiling=ceiling,
            )
        else:
            satisfied = next((r for r in rs if all(p in inside for p in r)), None)
            if satisfied is not None:
                d = Derivation(
                    "founded", rs, satisfied_by=satisfied, unknown=unknown, trust_ceiling=ceiling
                )
            else:
                unmet = tuple(sorted(p for p in premises if p not in inside))
                d = Derivation(
                    "retracted",
                    rs,
                    unmet=unmet,
                    unknown=unknown,
                    reason=f"every supporting route is unmet ({', '.join(unmet)})",
                    trust_ceiling=ceiling,
                )
        out.append(replace(slot, derivation=d))
    statuses = [s.derivation.status for s in out if s.derivation is not None]
    return DerivationReport(
        slots=tuple(out),
        in_count=sum(st in ("axiom", "founded") for st in statuses),
        retracted_count=statuses.count("retracted"),
        derived_count=sum(bool(routes[s.key]) for s in slots),
        unknown=tuple(sorted(unknown_all)),
    )
