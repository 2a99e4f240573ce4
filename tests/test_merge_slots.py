"""Merge slots: the union is a join, select never guesses, join merging is confluent while
the lossy representations are not, and the T1 experiment reproduces the published file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxsdk.bench._t1 import compare_t1, t1_experiment
from ctxsdk.errors import InvalidArgument, UnknownName
from ctxsdk.merge import Decision, Evidence, SlotState
from ctxsdk.merge._slots import (
    MERGED_SOURCE,
    SCORES,
    WEIGHTS,
    decision_key,
    is_confluent,
    merge_incremental,
    merge_nary,
    merge_streaming,
    repr_collapse,
    repr_count,
    select,
)
from ctxsdk.merge.kernel import egalitarian, elitist

_env = os.environ.get("CTXSDK_SHARED_DATA")
SHARED_DATA = Path(_env) if _env else Path(__file__).resolve().parents[2] / "shared" / "data"
T1_FILE = SHARED_DATA / "seed-bench" / "belief-merge" / "t1_results.json"

items = st.tuples(
    st.sampled_from("abc"), st.sampled_from(["b0", "b1", "b2", "b3"]), st.integers(1, 4)
)
states = st.lists(items, max_size=6).map(lambda xs: SlotState(tuple(xs)))


def _branch(source: str) -> st.SearchStrategy[SlotState]:
    # a well-formed branch: at most one opinion, from its own source
    return st.one_of(
        st.just(SlotState()),
        st.tuples(st.sampled_from("abc"), st.integers(1, 4)).map(
            lambda ve: SlotState.from_opinions(source, [ve])
        ),
    )


def _any_branch(source: str) -> st.SearchStrategy[SlotState]:
    return st.dictionaries(st.sampled_from("abc"), st.integers(1, 4), max_size=3).map(
        lambda d: SlotState.from_opinions(source, d)
    )


profiles = st.tuples(_any_branch("b0"), _any_branch("b1"), _any_branch("b2"), _any_branch("b3"))


def test_evidence_levels_and_weights() -> None:
    assert [int(e) for e in Evidence] == [1, 2, 3, 4]
    assert Evidence.USER_STATED == 4 and Evidence.SPECULATIVE == 1
    assert dict(WEIGHTS) == {1: 1, 2: 2, 3: 4, 4: 8}
    assert set(SCORES) == {"egalitarian", "elitist"}


def test_state_is_canonical_and_checked() -> None:
    s = SlotState.of(("b", "s2", 1), ("a", "s1", 2), ("a", "s1", 2), ("a", "s0", 3))
    assert s.items == (("a", "s0", 3), ("a", "s1", 2), ("b", "s2", 1))
    assert s.per_value() == {"a": (("s0", 3), ("s1", 2)), "b": (("s2", 1),)}
    assert s == SlotState.from_opinions("s0", {"a": 3}).union(
        SlotState.of(("b", "s2", 1), ("a", "s1", 2))
    )
    assert str(s) == "{a@2(s1), a@3(s0), b@1(s2)}" and str(SlotState()) == "<empty>"
    with pytest.raises(InvalidArgument, match="evidence"):
        SlotState.of(("a", "s0", 5))
    with pytest.raises(UnknownName, match="egalitarian"):
        select(s, "nope")


@given(states, states, states)
def test_union_is_associative_commutative_idempotent(
    a: SlotState, b: SlotState, c: SlotState
) -> None:
    assert a.union(b).union(c) == a.union(b.union(c))
    assert a.union(b) == b.union(a)
    assert a.union(a) == a
    assert hash(a.union(b)) == hash(b.union(a))


@given(states, st.integers(1, 3))
def test_streaming_is_idempotent_on_a_repeated_branch(a: SlotState, n: int) -> None:
    once = merge_streaming([a])
    again = merge_streaming([a] * (n + 1))
    assert again.state == once.state and again.decision == once.decision


def test_ties_are_never_guessed() -> None:
    s = SlotState.of(("a", "s0", 2), ("b", "s1", 1), ("b", "s2", 1))
    d = select(s, egalitarian)
    assert d == Decision("disputed", None, ("a", "b"))
    assert decision_key(d) == "disputed||a,b"
    # elitist: (2,) beats (1, 1)
    assert select(s, elitist) == Decision("resolved", "a")
    assert select(SlotState()) == Decision("empty")
    # a prefix loses under elitist (a missing position is -inf)
    t = SlotState.of(("a", "s0", 2), ("b", "s1", 2), ("b", "s2", 1))
    assert select(t, "elitist").winner == "b"
    assert select(SlotState.of(("a", "s0", 2), ("b", "s1", 2)), "elitist").outcome == "disputed"


def test_the_minimal_counterexample() -> None:
    b0 = SlotState.from_opinions("b0", {"a": 1})
    b1 = SlotState.from_opinions("b1", {"a": 1})
    b2 = SlotState.from_opinions("b2", {"b": 2})
    nary = merge_nary([b0, b1, b2], "egalitarian")
    assert nary.decision == Decision("disputed", None, ("a", "b"))  # 2 vs 2
    collapsed = merge_incremental([b0, b1, b2], "egalitarian", repr_collapse)
    assert collapsed.decision == Decision("resolved", "b")
    assert collapsed.state == SlotState.of(("b", MERGED_SOURCE, 2))
    assert merge_streaming([b0, b1, b2]).decision == nary.decision
    assert is_confluent([b0, b1, b2], "egalitarian")
    assert not is_confluent([b0, b1, b2], "egalitarian", "collapse")
    assert not is_confluent([b0, b2, b1], "egalitarian", repr_count)


def test_count_keeps_the_multiset_and_the_tie() -> None:
    s = SlotState.of(("a", "s0", 1), ("a", "s1", 2), ("b", "s2", 2), ("b", "s3", 1), ("c", "s4", 1))
    got = repr_count(s, egalitarian)  # a: 3, b: 3, c: 1 -> tie kept, loser dropped
    assert got.items == (
        ("a", "*merged*:0", 2),
        ("a", "*merged*:1", 1),
        ("b", "*merged*:0", 2),
        ("b", "*merged*:1", 1),
    )
    assert repr_collapse(s, egalitarian).items == (("a", "*merged*", 2), ("b", "*merged*", 2))


@settings(max_examples=300)
@given(profiles, st.sampled_from(["egalitarian", "elitist"]))
def test_join_is_confluent_over_random_profiles(
    branches: tuple[SlotState, ...], score: str
) -> None:
    assert is_confluent(list(branches), score, "join")


def test_collapse_is_not_confluent_somewhere() -> None:
    found = [
        p
        for p in (
            [SlotState.from_opinions(f"b{i}", {v: e}) for i, (v, e) in enumerate(combo)]
            for combo in [
                (("a", 1), ("a", 1), ("b", 2)),
                (("a", 1), ("a", 1), ("b", 1)),
            ]
        )
        if not is_confluent(p, "egalitarian", "collapse")
    ]
    assert len(found) == 2


def test_a_user_supplied_score_works() -> None:
    # "most distinct sources wins", evidence ignored
    def by_sources(supports: object) -> int:
        return len({s for s, _ in supports})  # type: ignore[attr-defined]

    s = SlotState.of(("a", "s0", 4), ("b", "s1", 1), ("b", "s2", 1))
    assert select(s, by_sources) == Decision("resolved", "b")
    assert select(s, egalitarian) == Decision("resolved", "a")
    branches = [SlotState.from_opinions(f"b{i}", {v: 1}) for i, v in enumerate("aab")]
    assert merge_nary(branches, by_sources).decision.winner == "a"
    assert is_confluent(branches, by_sources)


@pytest.mark.skipif(not T1_FILE.is_file(), reason=f"{T1_FILE} is not available")
def test_t1_reproduction_equals_the_published_file() -> None:
    published = json.loads(T1_FILE.read_text(encoding="utf-8"))
    ours = t1_experiment()
    assert set(ours) == set(published)
    assert compare_t1(ours, published) == []
    assert ours == published  # field by field, exactly
    join = [r for r in ours["confluence"] if r["representation"] == "JOIN"]
    assert sum(r["total"] for r in join) == 72_760 and all(r["failures"] == 0 for r in join)


def test_compare_t1_reports_a_difference() -> None:
    a = {"confluence": [{"failures": 1, "rate": 0.5}], "extra": 1}
    b = {"confluence": [{"failures": 2, "rate": 0.5}]}
    assert compare_t1(a, b) == ["confluence[0].failures: 1 != 2"]
