"""The economics part of ``bench fold``: real sessions, real folds, prefix-cache pricing."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxsdk.bench._fold_economics import (
    HEADLINE_H,
    PROFILE_KEYS,
    WINDOW,
    ArmRun,
    economics_suite,
    price,
    run_arm,
)
from ctxsdk.fold import PROFILES
from ctxsdk.fold.kernel import locate_frontier, prefix_split


@pytest.fixture(scope="module")
def w3(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ArmRun]:
    root: Path = tmp_path_factory.mktemp("econ")
    return {arm: run_arm("w3", arm, 32, store=root / arm) for arm in ("basic", "economy")}


def test_folds_really_happen_and_every_step_is_a_request(w3: dict[str, ArmRun]) -> None:
    for arm, run in w3.items():
        assert len(run.requests) == 32, arm
        assert len(run.folds) >= 2, (arm, run.no_fold_reasons[-3:])
        # a fold reclaims: the request after it is smaller than the one before
        for step, _, reclaimed in run.folds:
            assert reclaimed > 0
            assert run.requests[step].tokens < run.requests[step - 1].tokens + 1200
        assert max(r.tokens for r in run.requests) <= WINDOW, arm


def test_prefix_split_arithmetic_on_a_hand_made_pair() -> None:
    prev = [("0", 100), ("5", 40), ("9", 30), ("12", 20)]
    cur = [("0", 100), ("5", 40), ("31", 7), ("12", 20), ("40", 5)]
    split = prefix_split(prev, cur)
    assert (split.nodes, split.warm_tokens, split.invalidated_tokens) == (2, 140, 50)
    # the first request has nothing warm
    assert prefix_split([], cur).warm_tokens == 0
    # priced: warm tokens at h, the rest at the miss price
    flash = PROFILES[PROFILE_KEYS["flash"]]
    prompt = sum(t for _, t in cur)
    got = flash.request_cost(prompt, split.warm_tokens, h=HEADLINE_H)
    hit = split.warm_tokens * HEADLINE_H
    want = (hit * flash.input_hit_per_m + (prompt - hit) * flash.input_miss_per_m) / 1e6
    assert got == pytest.approx(want)
    assert got < flash.request_cost(prompt, 0, h=HEADLINE_H)


def test_bcr_of_basic_against_itself_is_one_and_costs_are_positive(
    w3: dict[str, ArmRun],
) -> None:
    basic = price(w3["basic"], 32)
    again = price(w3["basic"], 32)
    economy = price(w3["economy"], 32)
    for key in PROFILE_KEYS:
        c = basic.cost[(key, HEADLINE_H, True)]
        assert c > 0 and economy.cost[(key, HEADLINE_H, True)] > 0
        assert again.cost[(key, HEADLINE_H, True)] / c == 1.0
    # basic's summary is priced as a model call; economy's state checkpoints cost none
    assert basic.aux_in > 0 and basic.aux_out > 0
    assert economy.aux_in == economy.aux_out == 0
    assert basic.cost[("flash", HEADLINE_H, True)] > basic.cost[("flash", HEADLINE_H, False)]
    # no cache, no discount: the no-cache profile prices every token the same
    nc = economy.cost[("nocache", HEADLINE_H, False)]
    assert nc == pytest.approx(economy.prompt_total / 1e6)


def test_economy_keeps_its_frozen_prefix_byte_identical_across_leaf_folds(
    w3: dict[str, ArmRun],
) -> None:
    run = w3["economy"]
    assert run.session is not None
    raws = run.session.raw_events
    leaf_steps = {s for s, mode, _ in run.folds if mode == "leaf"}
    assert len(leaf_steps) >= 2
    seen_with_checkpoints = 0
    for step in sorted(leaf_steps):
        prev, cur = run.requests[step - 1], run.requests[step]
        prev_seqs = [int(s) for s, _ in prev.nodes]
        frontier = locate_frontier(run.session, prev_seqs)
        frozen_end = frontier.first_open  # system head + every earlier checkpoint
        split = prefix_split(prev.nodes, cur.nodes)
        # every earlier checkpoint is still there, the same node, so its bytes are unchanged
        assert split.nodes >= frozen_end, step
        assert split.warm_tokens >= sum(t for _, t in prev.nodes[:frozen_end])
        if frontier.frozen:
            seen_with_checkpoints += 1
            for c in frontier.frozen:
                assert raws[c.seq]["seq"] == c.seq  # a seq is one immutable event
    assert seen_with_checkpoints >= 1
    # basic re-folds its head-anchored summary: its split falls to the system head
    basic = w3["basic"]
    later = [s for s, _, _ in basic.folds][1:]
    assert later
    for step in later:
        split = prefix_split(basic.requests[step - 1].nodes, basic.requests[step].nodes)
        assert split.nodes <= 1


def test_recall_uses_the_engines_search_and_exact_recall(tmp_path: Path) -> None:
    run = run_arm("w4", "economy", 32, store=tmp_path)
    assert run.folds
    assert run.recalls, "no needed fact had left the surface in 32 steps"
    assert run.recall_misses == []
    assert all(tokens > 0 for _, tokens in run.recalls)


def test_the_quick_suite_reports_metrics_targets_and_published() -> None:
    out = economics_suite(quick=True, progress=False)
    m = out["metrics"]
    assert set(out) >= {"metrics", "baselines", "published", "targets", "met"}
    assert m["bcr_basic_w3_32"] == 1.0
    assert m["folds_basic_w3_32"] >= 1
    assert 0 < m["bcr_economy_w3_32"] < 10
    assert out["published"]["bcr_economy_mean_flash"] == pytest.approx(0.99, abs=0.005)
    assert set(out["met"]) == set(out["targets"])
    for name, t in out["targets"].items():
        assert t["metric"] in name
        assert isinstance(out["met"][name], bool)
    # the headline comes first: economy's prompt-token cost over basic's (basic's summary
    # call left out), per workload and on average, then the folds of each arm
    head = out["headline"]
    assert list(m)[: len(head)] == head
    assert head[0] == "prompt_cost_ratio_economy_mean"
    for wl in ("w1", "w2", "w3", "w4", "w5"):
        assert m[f"prompt_cost_ratio_economy_{wl}"] == m[f"prompt_cost_ratio_economy_{wl}_32"]
        assert {f"folds_basic_{wl}", f"folds_economy_{wl}"} <= set(head)
        # every workload is built so that a fold is needed within the quick run's 32 steps
        assert m[f"folds_basic_{wl}"] >= 1, wl
    ratios = [m[f"prompt_cost_ratio_economy_{wl}"] for wl in ("w1", "w2", "w3", "w4", "w5")]
    assert m["prompt_cost_ratio_economy_mean"] == pytest.approx(sum(ratios) / 5)
    names = {t["metric"] for t in out["targets"].values()}
    assert {
        "prompt_cost_ratio_economy_mean",
        "prompt_cost_ratio_economy_w1",
        "fold_excess_over_basic_economy_w4_32",
        "folds_basic_w1",
    } <= names
    # the prompt-token ratio prices no summary call: basic's aux makes the other one lower
    assert m["bcr_economy_w3_32"] < m["prompt_cost_ratio_economy_w3_32"]
