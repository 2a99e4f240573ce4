"""Merge packing: the utility is monotone and submodular, diversity beats repetition, the
solver never exceeds the budget, partial is never worse than density (and sometimes better),
a retracted slot is nearly worthless, the query steers the choice, and the stable-first
layout keeps a prompt-cache prefix when a volatile slot churns."""

from __future__ import annotations

import dataclasses
import itertools
import random
import time
from collections.abc import Mapping, Sequence

import pytest

from ctxsdk.errors import InvalidArgument
from ctxsdk.merge._beliefs import Derivation, Slot, SlotType, Trust, build_slots
from ctxsdk.merge._claims import Claim
from ctxsdk.merge._pack import (
    SEED_POOL,
    TYPE_STABILITY,
    TYPE_VALUE,
    agreement,
    pack,
    personal,
    preserved_prefix,
    query_terms,
    relevance,
    stability,
    utility,
)


def claim(
    key: str,
    value: str = "v",
    evidence: int = 2,
    source: str = "s1",
    *,
    text: str | None = None,
    kind: str = "fact",
    seq: int = 1,
    trust: int = 1,
) -> Claim:
    return Claim(
        key=key,
        value=value,
        evidence=evidence,
        text=text if text is not None else f"The {key} is {value}.",
        source=source,
        seq=seq,
        kind=kind,  # type: ignore[arg-type]
        trust=trust,
    )


def slot(
    key: str,
    *,
    evidence: int = 2,
    sources: int = 1,
    kind: str = "fact",
    slot_type: SlotType | None = None,
    text: str | None = None,
) -> Slot:
    claims = [
        claim(key, "v", evidence, f"s{i}", text=text, kind=kind, seq=i) for i in range(sources)
    ]
    types = {key: slot_type} if slot_type is not None else None
    (s,) = build_slots(claims, types=types)
    return s


def retracted(s: Slot) -> Slot:
    return dataclasses.replace(
        s, derivation=Derivation("retracted", routes=(("gone",),), unmet=("gone",))
    )


SIX = [
    slot("a", kind="fact", evidence=4),
    slot("b", kind="fact", evidence=2, sources=2),
    slot("c", kind="decision", evidence=3),
    slot("d", kind="constraint", evidence=1),
    slot("e", slot_type="question", evidence=2),
    retracted(slot("f", kind="decision", evidence=4)),
]
TRUSTS: Mapping[str, int] = {"a": 1, "b": 1, "c": 2, "d": 0, "e": 1, "f": 1}


def test_constants_are_the_seeds() -> None:
    assert dict(TYPE_VALUE) == {
        "constraint": 3,
        "goal": 3,
        "decision": 2.5,
        "refuted": 2,
        "fact": 1.5,
        "question": 1,
        "artifact": 1,
    }
    assert TYPE_STABILITY["constraint"] == 4 and TYPE_STABILITY["question"] == 0.5


def test_query_terms_are_distinct_lowercase_and_long_enough() -> None:
    assert query_terms(None) == ()
    assert query_terms("") == ()
    assert query_terms("What is the DATABASE and the database engine") == (
        "what",
        "the",
        "database",
        "and",
        "engine",
    )


def test_relevance_is_the_fraction_of_terms_found() -> None:
    s = slot("database", text="We keep PostgreSQL for the database.")
    assert relevance(s, ()) == 0.0
    assert relevance(s, ("postgresql", "redis")) == 0.5
    assert relevance(s, ("datab", "postgres")) == 1.0
    assert relevance(s, ("mysql",)) == 0.0


def test_personal_is_the_seed_formula() -> None:
    s = slot("k", kind="decision", evidence=3, sources=2)
    assert agreement(s) == 2  # two sources back the presented value: a cross-session fact
    # 2.5 + 3*3 + 2*2 + 4*1 + 2*relevance(1.0) + 12*agreement
    assert personal(s, 1, ("k",)) == pytest.approx(2.5 + 9 + 4 + 4 + 2 + 24)
    assert personal(s, 0) == pytest.approx(2.5 + 9 + 4 + 24)
    assert personal(retracted(s), 0) == pytest.approx((2.5 + 9 + 4 + 24) * 0.05)


def test_cross_session_facts_outrank_disputes_outrank_one_sessions_user() -> None:
    agreed = slot("a", kind="fact", evidence=2, sources=2)
    alone = slot("c", kind="fact", evidence=4, sources=1)
    assert (agreement(agreed), agreement(alone)) == (2, 0)
    assert personal(agreed, 1) > personal(alone, 1)


def test_stability_formula_and_unresolved_is_less_stable() -> None:
    s = slot("k", kind="constraint", evidence=4, sources=2)
    assert stability(s, 2) == pytest.approx(4 + 3 + 2 + 1 + 0.5 + 2 * 2)  # two sources agree
    tie = build_slots([claim("t", "x", 2, "s1"), claim("t", "y", 2, "s2")])[0]
    assert tie.status == "disputed"
    assert stability(tie, 1) < stability(slot("t", sources=2), 1)


def test_utility_is_monotone_over_all_subsets() -> None:
    five = SIX[:5]
    checks = 0
    for r in range(len(five) + 1):
        for subset in itertools.combinations(five, r):
            base = utility(subset, TRUSTS)
            for v in five:
                if v in subset:
                    continue
                assert utility([*subset, v], TRUSTS) >= base
                checks += 1
    assert checks == 5 * 2**4  # each slot added to every subset without it


def test_utility_is_submodular_over_all_nested_pairs() -> None:
    checks = 0
    for v in SIX:
        rest = [s for s in SIX if s is not v]
        for t_mask in range(2 ** len(rest)):
            t = [s for i, s in enumerate(rest) if t_mask >> i & 1]
            gain_t = utility([*t, v], TRUSTS) - utility(t, TRUSTS)
            # every S ⊆ T: the submasks of t_mask
            s_mask = t_mask
            while True:
                s = [x for i, x in enumerate(rest) if s_mask >> i & 1]
                gain_s = utility([*s, v], TRUSTS) - utility(s, TRUSTS)
                assert gain_s >= gain_t - 1e-12
                checks += 1
                if s_mask == 0:
                    break
                s_mask = (s_mask - 1) & t_mask
    assert checks > 1000


def test_diversity_beats_repetition() -> None:
    c1 = slot("c1", kind="constraint")
    c2 = slot("c2", kind="constraint")
    g = slot("g", slot_type="goal")
    trusts = {"c1": 1, "c2": 1, "g": 1}
    # same personal value (constraint and goal are both worth 3) ...
    assert personal(c2, 1) == personal(g, 1)
    # ... but a second type adds more coverage than a second constraint
    assert utility([c1, g], trusts) > utility([c1, c2], trusts)
    p = pack([c1, c2, g], 2, {"c1": 1, "c2": 1, "g": 1}, trusts=trusts)
    assert {s.key for s in p.selected} == {"c1", "g"}


def _random_slots(rng: random.Random, n: int) -> list[Slot]:
    kinds = ["fact", "decision", "constraint"]
    claims = []
    for i in range(n):
        for j in range(rng.randint(1, 3)):
            claims.append(
                claim(
                    f"k{i:03d}",
                    rng.choice("xyz"),
                    rng.randint(1, 4),
                    f"s{j}",
                    kind=rng.choice(kinds),
                    seq=j,
                    trust=rng.randint(0, 2),
                )
            )
    slots = build_slots(claims)
    return [retracted(s) if rng.random() < 0.1 else s for s in slots]


def _naive_density(slots: Sequence[Slot], budget: int, costs: Mapping[str, int]) -> list[str]:
    """The seed's greedy written the slow, obvious way (the reference for the lazy one)."""
    trusts: dict[str, int] = {}
    chosen: list[Slot] = []
    left = budget
    rest = [s for s in slots if costs[s.key] <= budget]
    while True:
        fits = [s for s in rest if costs[s.key] <= left]
        if not fits:
            return [s.key for s in chosen]
        base = utility(chosen, trusts)
        best = min(
            fits,
            key=lambda s: (-(utility([*chosen, s], trusts) - base) / costs[s.key], s.key),
        )
        chosen.append(best)
        rest.remove(best)
        left -= costs[best.key]


def test_lazy_density_greedy_equals_the_naive_one() -> None:
    rng = random.Random(7)
    for _ in range(60):
        slots = _random_slots(rng, rng.randint(1, 12))
        costs = {s.key: rng.randint(1, 30) for s in slots}
        budget = rng.randint(0, 120)
        p = pack(slots, budget, costs, trusts={}, algorithm="density")
        assert sorted(p.keys) == sorted(_naive_density(slots, budget, costs))
        assert p.algorithm == "density"


def test_packer_never_exceeds_budget_and_partial_never_loses() -> None:
    rng = random.Random(2024)
    partial_won = 0
    for _ in range(200):
        slots = _random_slots(rng, rng.randint(1, 15))
        costs = {s.key: rng.randint(1, 40) for s in slots}
        budget = rng.randint(0, 150)
        d = pack(slots, budget, costs, trusts={}, algorithm="density")
        p = pack(slots, budget, costs, trusts={}, algorithm="partial")
        for got in (d, p):
            assert got.cost == sum(costs[k] for k in got.keys) <= budget
            assert got.utility == pytest.approx(utility(got.selected, {}))
            assert {k for k, _ in got.dropped} | set(got.keys) == {s.key for s in slots}
            assert not set(got.keys) & {k for k, _ in got.dropped}
        assert p.utility >= d.utility - 1e-9
        partial_won += p.algorithm == "partial"
    assert partial_won > 0  # the random instances include density's knapsack traps


def test_partial_rescues_the_expensive_valuable_slot() -> None:
    big = slot("big", kind="constraint", evidence=4, sources=3)
    small = slot("small", slot_type="question", evidence=1)
    costs = {"big": 10, "small": 1}
    trusts = {"big": 1, "small": 1}
    d = pack([big, small], 10, costs, trusts=trusts, algorithm="density")
    p = pack([big, small], 10, costs, trusts=trusts)
    assert d.keys == ("small",) and d.algorithm == "density"
    assert p.keys == ("big",) and p.algorithm == "partial"
    assert p.utility > d.utility
    assert dict(p.dropped)["small"] == "left out for budget (utility/cost lower)"


def test_slots_costlier_than_the_budget_are_dropped_up_front() -> None:
    a, b = slot("a"), slot("b")
    p = pack([a, b], 5, {"a": 6, "b": 5}, trusts={})
    assert p.keys == ("b",)
    assert dict(p.dropped) == {"a": "costs 6 tokens, more than the 5 the budget leaves for slots"}
    assert p.budget == 5 and p.cost == 5


def test_bad_input_is_refused() -> None:
    a = slot("a")
    with pytest.raises(InvalidArgument, match="no cost"):
        pack([a], 5, {}, trusts={})
    with pytest.raises(InvalidArgument, match="distinct"):
        pack([a, a], 5, {"a": 1}, trusts={})
    with pytest.raises(InvalidArgument, match="negative"):
        pack([a], 5, {"a": -1}, trusts={})
    with pytest.raises(InvalidArgument, match="algorithm"):
        pack([a], 5, {"a": 1}, trusts={}, algorithm="exact")  # type: ignore[arg-type]


def test_retracted_utility_is_below_a_tenth_of_live() -> None:
    live = slot("k", kind="decision", evidence=4, sources=2)
    gone = retracted(live)
    assert gone.status == "retracted"
    assert personal(gone, 1) < personal(live, 1) / 10
    assert utility([gone], {"k": 1}) < utility([live], {"k": 1}) / 10
    # and the packer prefers a weak live slot to a strong retracted one
    weak = slot("w", evidence=1)
    p = pack([gone, weak], 1, {"k": 1, "w": 1}, trusts={"k": 1, "w": 1})
    assert p.keys == ("w",)


def test_query_aware_packing_prefers_relevant_slots() -> None:
    db = slot("database", text="The database is PostgreSQL.")
    ui = slot("frontend", text="The frontend is React.")
    costs, trusts = {"database": 5, "frontend": 5}, {"database": 1, "frontend": 1}
    assert pack([db, ui], 5, costs, trusts=trusts).keys == ("database",)  # tie: smaller key
    got = pack([db, ui], 5, costs, trusts=trusts, query="Which frontend library, React?")
    assert got.keys == ("frontend",)
    got = pack([db, ui], 5, costs, trusts=trusts, query="postgresql version")
    assert got.keys == ("database",)


def test_trust_falls_back_to_the_supporting_claims() -> None:
    trusted = build_slots([claim("a", trust=int(Trust.TRUSTED))])[0]
    untrusted = build_slots([claim("b", trust=int(Trust.UNTRUSTED))])[0]
    assert utility([trusted], {}) == pytest.approx(utility([trusted], {"a": 2}))
    assert utility([trusted], {}) - utility([untrusted], {}) == pytest.approx(8)


def test_stable_first_layout_preserves_the_prefix_when_a_volatile_slot_churns() -> None:
    stable = [
        slot("m-rule", kind="constraint", evidence=4, sources=2),
        slot("n-goal", slot_type="goal", evidence=4),
        slot("o-choice", kind="decision", evidence=3),
    ]

    def volatile(key: str) -> Slot:
        return build_slots([claim(key, "x", 1, "s1"), claim(key, "y", 1, "s2")])[0]

    before_slots = [*stable, volatile("a-open")]
    after_slots = [*stable, volatile("b-open")]
    costs = {s.key: 1 for s in [*before_slots, *after_slots]}
    before = pack(before_slots, 10, costs, trusts={}).keys
    after = pack(after_slots, 10, costs, trusts={}).keys
    assert before[-1] == "a-open" and after[-1] == "b-open"
    assert preserved_prefix(before, after) == 3
    naive_before = sorted(s.key for s in before_slots)
    naive_after = sorted(s.key for s in after_slots)
    assert preserved_prefix(naive_before, naive_after) == 0


def test_preserved_prefix() -> None:
    assert preserved_prefix([], ["a"]) == 0
    assert preserved_prefix(["a", "b", "c"], ["a", "b", "d"]) == 2
    assert preserved_prefix(["a", "b"], ["a", "b", "c"]) == 2


def test_five_hundred_slots_pack_quickly_with_capped_seeds() -> None:
    rng = random.Random(5)
    slots = _random_slots(rng, 500)
    costs = {s.key: rng.randint(5, 60) for s in slots}
    t0 = time.perf_counter()
    p = pack(slots, 4000, costs, trusts={})
    elapsed = time.perf_counter() - t0
    d = pack(slots, 4000, costs, trusts={}, algorithm="density")
    assert p.cost <= 4000 and p.utility >= d.utility
    assert SEED_POOL == 30
    assert elapsed < 20  # ~1 s here; uncapped pair seeding would be ~125k greedy runs
