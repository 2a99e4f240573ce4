"""Merge derivation (JTMS): conjunctions are not alternatives, an unsettled premise retracts
what rests on it (transitively), a cycle never supports itself, unknown premises are
reported, and the trust ceiling is the best route's weakest premise."""

from __future__ import annotations

import itertools
import random
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxsdk.merge._beliefs import Resolution, Slot, Trust, build_slots
from ctxsdk.merge._claims import Claim
from ctxsdk.merge._derive import DerivationReport, derive, routes_of

_seq = itertools.count()


def claim(
    key: str,
    value: str = "yes",
    *,
    source: str = "s1",
    evidence: int = 2,
    trust: Any = Trust.EXTERNAL,
    derived_from: Any = (),
    superseded: bool = False,
) -> Claim:
    return Claim(
        key=key,
        value=value,
        evidence=evidence,
        text=f"the {key} is {value}",
        source=source,
        seq=next(_seq),
        superseded=superseded,
        trust=None if trust is None else int(trust),
        derived_from=derived_from,
    )


def disputed(key: str, **kw: Any) -> list[Claim]:
    """Two sessions, equal evidence, different values: a true tie."""
    return [claim(key, "left", source="s1", **kw), claim(key, "right", source="s2", **kw)]


def by_key(report: DerivationReport) -> dict[str, Slot]:
    return {s.key: s for s in report.slots}


def status(report: DerivationReport, key: str) -> str:
    d = by_key(report)[key].derivation
    assert d is not None
    return d.status


def resolve(slots: list[Slot], key: str, resolution: Resolution) -> list[Slot]:
    return [replace(s, resolution=resolution) if s.key == key else s for s in slots]


# -- routes_of --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("raw", "routes"),
    [
        # a flat list is ONE conjunction, never two alternatives
        (["b", "a"], (("a", "b"),)),
        (("a", "b"), (("a", "b"),)),
        # a list containing a list is alternatives; bare strings there are singleton routes
        ([["a", "b"], ["c"]], (("a", "b"), ("c",))),
        (["c", ["a", "b"]], (("a", "b"), ("c",))),
        ((("b",), ("a",)), (("a",), ("b",))),
        # sorted + deduped within a route, deduped across routes by sorted signature
        ([["b", "a", "a"], ["a", "b"], ("b", "a")], (("a", "b"),)),
        ([["a"], "a", ["a"]], (("a",),)),
        # a bare string is one premise, not its characters
        ("ab", (("ab",),)),
        # surrounding whitespace does not make a new key
        ([" a ", "a"], (("a",),)),
        # junk
        (None, ()),
        (0, ()),
        (3.5, ()),
        ({"a": 1}, ()),
        ("", ()),
        ("   ", ()),
        ([], ()),
        ((), ()),
        ([[]], ()),
        ([[], [[]], ()], ()),
        ([None, 1, {}, ""], ()),
        ([None, "a", 2, "", {"b": 1}], (("a",),)),
        ([["a", None, 7], [None], ["", "  "], {"x": "y"}, 3], (("a",),)),
        ([["a", ["nested"]], "b"], (("a",), ("b",))),
        (b"ab", ()),
        ({"b", "a"}, (("a", "b"),)),
    ],
)
def test_routes_of_every_shape(raw: object, routes: tuple[tuple[str, ...], ...]) -> None:
    assert routes_of(raw) == routes


def test_routes_of_is_idempotent_and_order_free() -> None:
    raw = [["z", "y"], "x", ["y", "z"], [None], ["w", "x", "w"]]
    once = routes_of(raw)
    assert once == (("w", "x"), ("x",), ("y", "z"))
    assert routes_of(once) == once
    assert routes_of(list(reversed(raw))) == once


# -- conjunction vs alternatives --------------------------------------------------------------
def test_conjunction_needs_every_premise() -> None:
    slots = build_slots([claim("a"), *disputed("b"), claim("c", derived_from=(("a", "b"),))])
    report = derive(slots)
    c = by_key(report)["c"].derivation
    assert c is not None
    assert c.status == "retracted"
    assert c.routes == (("a", "b"),)
    assert c.unmet == ("b",)
    assert c.reason == "every supporting route is unmet (b)"
    assert by_key(report)["c"].status == "retracted"


def test_flat_list_is_a_conjunction_not_alternatives() -> None:
    # The seed's live defect: ["a", "b"] read as "a or b" would found c on a alone.
    flat = claim("c", derived_from=["a", "b"])
    report = derive(build_slots([claim("a"), *disputed("b"), flat]))
    assert status(report, "c") == "retracted"


def test_alternatives_need_one_route() -> None:
    slots = build_slots([claim("a"), *disputed("b"), claim("c", derived_from=(("b",), ("a",)))])
    report = derive(slots)
    c = by_key(report)["c"].derivation
    assert c is not None
    assert c.status == "founded"
    assert c.satisfied_by == ("a",)
    assert c.unmet == () and c.reason is None


def test_satisfied_by_is_the_first_satisfied_route_in_sorted_order() -> None:
    slots = build_slots([claim("a"), claim("b"), claim("c", derived_from=(("b",), ("a",)))])
    c = by_key(derive(slots))["c"].derivation
    assert c is not None and c.satisfied_by == ("a",) and c.routes == (("a",), ("b",))


# -- premises the merge did or did not settle -------------------------------------------------
def test_disputed_premise_retracts() -> None:
    report = derive(build_slots([*disputed("p"), claim("c", derived_from=(("p",),))]))
    assert status(report, "p") == "unasserted"
    assert status(report, "c") == "retracted"
    assert report.retracted_count == 1 and report.in_count == 0


def test_unresolvable_premise_retracts() -> None:
    slots = build_slots([*disputed("p"), claim("c", derived_from=(("p",),))])
    slots = resolve(slots, "p", Resolution("unresolvable", rationale="no basis"))
    report = derive(slots)
    assert status(report, "p") == "unasserted"
    assert status(report, "c") == "retracted"


@pytest.mark.parametrize(
    "resolution",
    [
        Resolution("choose", value="left"),
        Resolution("both"),
        Resolution("conditional", guard="in production"),
    ],
)
def test_adjudicated_premise_stands(resolution: Resolution) -> None:
    slots = build_slots([*disputed("p"), claim("c", derived_from=(("p",),))])
    report = derive(resolve(slots, "p", resolution))
    assert status(report, "p") == "axiom"
    assert status(report, "c") == "founded"
    assert report.in_count == 2 and report.retracted_count == 0


def test_transitive_retraction() -> None:
    slots = build_slots(
        [
            *disputed("a"),
            claim("b", derived_from=(("a",),)),
            claim("c", derived_from=(("b",),)),
            claim("d", derived_from=(("c",),)),
        ]
    )
    report = derive(slots)
    assert [status(report, k) for k in "abcd"] == [
        "unasserted",
        "retracted",
        "retracted",
        "retracted",
    ]
    d = by_key(report)["d"].derivation
    assert d is not None and d.unmet == ("c",)
    assert report.retracted_count == 3


def test_transitive_support_is_restored_by_settling_the_root() -> None:
    claims = [
        *disputed("a"),
        claim("b", derived_from=(("a",),)),
        claim("c", derived_from=(("b",),)),
    ]
    slots = resolve(build_slots(claims), "a", Resolution("choose", value="right"))
    report = derive(slots)
    assert [status(report, k) for k in "abc"] == ["axiom", "founded", "founded"]


def test_a_retracted_slot_is_not_a_premise_even_though_asserted() -> None:
    # b is asserted (resolved) but retracted; c resting on b must fall too.
    slots = build_slots(
        [*disputed("a"), claim("b", derived_from=(("a",),)), claim("c", derived_from=("b",))]
    )
    b = by_key(derive(slots))["b"]
    assert b.asserted and status(derive(slots), "c") == "retracted"


# -- cycles ----------------------------------------------------------------------------------
def test_cycle_without_external_support_never_enters() -> None:
    slots = build_slots([claim("a", derived_from=(("b",),)), claim("b", derived_from=(("a",),))])
    report = derive(slots)
    assert status(report, "a") == "retracted" and status(report, "b") == "retracted"
    assert report.in_count == 0
    a = by_key(report)["a"].derivation
    assert a is not None and a.unmet == ("b",)


def test_self_supporting_slot_never_enters() -> None:
    report = derive(build_slots([claim("a", derived_from=(("a",),))]))
    assert status(report, "a") == "retracted"


def test_cycle_with_external_support_enters() -> None:
    slots = build_slots(
        [
            claim("x"),
            claim("a", derived_from=(("b",), ("x",))),
            claim("b", derived_from=(("a",),)),
        ]
    )
    report = derive(slots)
    assert [status(report, k) for k in "abx"] == ["founded", "founded", "axiom"]
    assert report.in_count == 3


def test_cycle_with_external_support_falls_with_it() -> None:
    slots = build_slots(
        [
            *disputed("x"),
            claim("a", derived_from=(("b",), ("x",))),
            claim("b", derived_from=(("a",),)),
        ]
    )
    report = derive(slots)
    assert status(report, "a") == "retracted" and status(report, "b") == "retracted"
    a = by_key(report)["a"].derivation
    assert a is not None and a.unmet == ("b", "x")
    assert a.reason == "every supporting route is unmet (b, x)"


# -- unknown premises, counts, which claims count ---------------------------------------------
def test_unknown_premises_are_reported_and_unmet() -> None:
    slots = build_slots(
        [
            claim("a"),
            claim("c", derived_from=(("a", "ghost"),)),
            claim("d", derived_from=(("zombie",), ("a",))),
        ]
    )
    report = derive(slots)
    assert report.unknown == ("ghost", "zombie")
    c = by_key(report)["c"].derivation
    d = by_key(report)["d"].derivation
    assert c is not None and c.status == "retracted" and c.unmet == ("ghost",)
    assert c.unknown == ("ghost",)
    assert d is not None and d.status == "founded" and d.unknown == ("zombie",)


def test_derived_count_is_zero_when_inert() -> None:
    slots = build_slots([claim("a"), claim("b"), *disputed("c")])
    report = derive(slots)
    assert report.derived_count == 0
    assert report.retracted_count == 0 and report.unknown == ()
    assert report.in_count == 2
    assert [status(report, k) for k in "abc"] == ["axiom", "axiom", "unasserted"]
    assert all(
        s.derivation is not None and s.derivation.trust_ceiling is None for s in report.slots
    )


def test_counts_and_order_and_nothing_else_changes() -> None:
    slots = build_slots(
        [
            claim("b"),
            *disputed("a"),
            claim("c", derived_from=("a",)),
            claim("d", derived_from=("b",)),
        ]
    )
    shuffled = [slots[i] for i in (3, 0, 2, 1)]
    report = derive(shuffled)
    assert [s.key for s in report.slots] == [s.key for s in shuffled]
    for before, after in zip(shuffled, report.slots, strict=True):
        assert replace(after, derivation=None) == before
    assert (report.in_count, report.retracted_count, report.derived_count) == (2, 1, 2)


def test_empty_input() -> None:
    report = derive([])
    assert report == DerivationReport((), 0, 0, 0, ())


def test_empty_slot_is_unasserted() -> None:
    slots = build_slots([claim("a", superseded=True)])
    assert slots[0].decision.outcome == "empty"
    assert status(derive(slots), "a") == "unasserted"


def test_disputed_slot_with_routes_is_unasserted_not_retracted() -> None:
    slots = build_slots([claim("a"), *disputed("c", derived_from=(("a",),))])
    report = derive(slots)
    c = by_key(report)["c"].derivation
    assert c is not None and c.status == "unasserted" and c.routes == (("a",),)
    assert report.retracted_count == 0 and report.derived_count == 1


def test_routes_come_only_from_claims_behind_the_presented_value() -> None:
    # The winner (evidence 4) has no premises; the loser says it rests on a disputed key
    # and a superseded claim of the winner names one too: neither may retract the winner.
    slots = build_slots(
        [
            *disputed("p"),
            claim("c", "pg", source="s1", evidence=4),
            claim("c", "pg", source="s3", evidence=2, derived_from=("p",), superseded=True),
            claim("c", "mysql", source="s2", evidence=1, derived_from=("p",)),
        ]
    )
    report = derive(slots)
    assert status(report, "c") == "axiom" and report.derived_count == 0


def test_routes_union_across_sessions() -> None:
    slots = build_slots(
        [
            claim("a"),
            *disputed("b"),
            claim("c", source="s1", derived_from=("b",)),
            claim("c", source="s2", derived_from=[["a"], ["b"]]),
        ]
    )
    c = by_key(derive(slots))["c"].derivation
    assert c is not None and c.routes == (("a",), ("b",)) and c.status == "founded"


# -- the trust ceiling ------------------------------------------------------------------------
def test_ceiling_is_the_weakest_premise_of_a_route() -> None:
    slots = build_slots(
        [
            claim("a", trust=Trust.TRUSTED),
            claim("u", trust=Trust.UNTRUSTED),
            claim("c", trust=Trust.EXTERNAL, derived_from=(("a", "u"),)),
        ]
    )
    c = by_key(derive(slots))["c"].derivation
    assert c is not None and c.trust_ceiling == Trust.UNTRUSTED


def test_ceiling_takes_the_best_route_not_the_worst() -> None:
    slots = build_slots(
        [
            claim("a", trust=Trust.TRUSTED),
            claim("u", trust=Trust.UNTRUSTED),
            claim("c", derived_from=(("u",), ("a",))),
        ]
    )
    c = by_key(derive(slots))["c"].derivation
    assert c is not None and c.trust_ceiling == Trust.TRUSTED


def test_unknown_premise_counts_untrusted_in_the_ceiling() -> None:
    slots = build_slots([claim("a", trust=Trust.TRUSTED), claim("c", derived_from=("a", "ghost"))])
    c = by_key(derive(slots))["c"].derivation
    assert c is not None and c.trust_ceiling == Trust.UNTRUSTED


def test_ceiling_uses_the_premise_presented_trust() -> None:
    # p's winner is EXTERNAL; a TRUSTED loser must not raise the ceiling of what rests on p.
    slots = build_slots(
        [
            claim("p", "x", source="s1", evidence=4, trust=Trust.EXTERNAL),
            claim("p", "y", source="s2", evidence=1, trust=Trust.TRUSTED),
            claim("c", derived_from=("p",)),
        ]
    )
    c = by_key(derive(slots))["c"].derivation
    assert c is not None and c.trust_ceiling == Trust.EXTERNAL


# -- properties -------------------------------------------------------------------------------
KEYS = "abcde"
route = st.lists(st.sampled_from(KEYS + "z"), min_size=1, max_size=2).map(tuple)
graph = st.lists(
    st.tuples(
        st.sampled_from(KEYS),
        st.booleans(),  # asserted (resolved) or disputed
        st.lists(route, max_size=2).map(tuple),
    ),
    min_size=1,
    max_size=6,
    unique_by=lambda t: t[0],
)


def _slots(spec: list[tuple[str, bool, tuple[tuple[str, ...], ...]]]) -> list[Slot]:
    claims: list[Claim] = []
    for key, asserted, routes in spec:
        if asserted:
            claims.append(claim(key, derived_from=routes))
        else:
            claims += disputed(key, derived_from=routes)
    return build_slots(claims)


def _proved(slots: list[Slot]) -> set[str]:
    """An independent reference: a slot is IN iff it has a finite proof (well-founded by
    depth), computed by bounded unfolding rather than a worklist."""
    routes = {s.key: routes_of([r for c in s.live for r in c.derived_from]) for s in slots}
    asserted = {s.key for s in slots if s.asserted}
    proved: set[str] = set()
    for _ in range(len(slots) + 1):
        proved = {
            k
            for k in asserted
            if not routes[k] or any(all(p in proved for p in r) for r in routes[k])
        }
    return proved


@settings(max_examples=300, deadline=None)
@given(graph, st.randoms(use_true_random=False))
def test_derivation_is_the_least_fixpoint_and_order_free(
    spec: list[tuple[str, bool, tuple[tuple[str, ...], ...]]], rnd: random.Random
) -> None:
    slots = _slots(spec)
    report = derive(slots)
    inside = {
        s.key
        for s in report.slots
        if s.derivation is not None and s.derivation.status in ("axiom", "founded")
    }
    assert inside == _proved(slots)
    assert report.in_count == len(inside)
    for s in report.slots:
        d = s.derivation
        assert d is not None
        if d.status == "founded":
            assert d.satisfied_by is not None and set(d.satisfied_by) <= inside
        if d.status == "retracted":
            assert s.asserted and all(set(r) - inside for r in d.routes)
            assert set(d.unmet) == {p for r in d.routes for p in r} - inside
    shuffled = list(slots)
    rnd.shuffle(shuffled)
    again = {s.key: s.derivation for s in derive(shuffled).slots}
    assert again == {s.key: s.derivation for s in report.slots}
