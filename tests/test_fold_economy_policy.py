"""The economy policy's own decisions: a pressure fold keeps a short verbatim tail (a fold you
ask for keeps ``retain_ratio``), a fold over earlier checkpoints merges them into one root
checkpoint when that pays back, nothing is lost either way; and the bench's held-out
workloads (another seed, real sessions replayed) are built the way the bench plays them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import ctxsdk as cx
from ctxsdk.bench._fold_economics import (
    _Call,
    _Clock,
    _reply,
    _Step,
    _user_turn,
    replay_steps,
    run_arm,
    workload_step,
)
from ctxsdk.bench._fold_economics import _start as _start_session
from ctxsdk.errors import InvalidArgument
from ctxsdk.fold import resolve_policy
from ctxsdk.fold.kernel import locate_frontier
from ctxsdk.session.kernel import message_of

SESSIONS = Path(__file__).resolve().parents[2] / "shared" / "data" / "agent-sessions"


def _start() -> tuple[cx.Session, _Clock]:
    return _start_session("t", "economy", 6000, _Step("step 0: start", ""))


def _grow(s: cx.Session, clock: _Clock, turns: int, start: int) -> cx.Session:
    """``turns`` more turns appended to ``s``: a prompt, a long tool result."""
    for i in range(start, start + turns):
        s = _user_turn(s, clock, f"step {i}: read module_{i}.py", i)
        body = "\n".join(f"def f_{i}_{k}(x): return x * {k}  # {i}.{k}" for k in range(40))
        s = _reply(s, clock, i, f"Reading module_{i}.py.", [_Call("read", {"p": i}, body)])
    return s


def _to_threshold(s: cx.Session, clock: _Clock, start: int) -> tuple[cx.Session, int]:
    """Turns appended one at a time until the surface reaches the fold threshold (under the
    window: a pressure fold, not an emergency)."""
    i = start
    while True:
        p = cx.Fold(s, store="unused", window=6000, write=False).pressure()
        if p.total >= p.threshold:
            assert p.total < p.capacity
            return s, i
        s = _grow(s, clock, 1, i)
        i += 1


def _exact(f: cx.Fold, checkpoint_id: str) -> list[dict[str, Any]]:
    """Every message a checkpoint archived, page by page, each page verified."""
    got: list[dict[str, Any]] = []
    offset: int | None = 0
    while offset is not None:
        page = f.recall(f"cp:{checkpoint_id}", "exact", offset=offset, limit=20)
        assert page.verified
        got.extend(page.messages)
        offset = page.next_offset
    return got


def _messages(s: cx.Session, seqs: Any) -> list[dict[str, Any]]:
    return [message_of(s.raw_events[q]) or {} for q in seqs]


def test_a_pressure_fold_keeps_the_short_tail_and_an_asked_one_the_retain_ratio(
    tmp_path: Path,
) -> None:
    s, clock = _start()
    s, _ = _to_threshold(s, clock, 1)
    f = cx.Fold(s, store=tmp_path, window=6000, write=False)
    assert f.policy.pressure_retain_ratio == 0.04 and f.policy.retain_ratio == 0.16
    assert f.pressure().total >= f.pressure().threshold
    own, asked = f.plan(), f.plan(force=True)
    assert own.action == asked.action == "leaf"
    assert own.span is not None and asked.span is not None
    tokens = f._tokens()
    kept_own = sum(tokens[own.span[1] :])
    kept_asked = sum(tokens[asked.span[1] :])
    # the policy's own fold cuts deeper: a tail of at least 4% of the window, not 16%
    assert 240 <= kept_own < kept_asked and kept_asked >= 960
    # a tail you name is the tail you get, under pressure too
    named = resolve_policy("economy", retain_ratio=0.2)
    assert named.pressure_retain_ratio is None
    assert resolve_policy("economy", retain_tokens=500).pressure_retain_ratio is None
    assert resolve_policy("balanced").pressure_retain_ratio is None
    g = cx.Fold(s, store=tmp_path, window=6000, write=False, retain_ratio=0.16)
    assert g.plan().span == asked.span
    with pytest.raises(InvalidArgument, match="pressure_retain_ratio"):
        resolve_policy("economy", pressure_retain_ratio=0.9)


def test_a_fold_over_earlier_checkpoints_merges_them_when_it_pays_and_loses_nothing(
    tmp_path: Path,
) -> None:
    s, clock = _start()
    s, i = _to_threshold(s, clock, 1)
    f = cx.Fold(s, store=tmp_path, window=6000, write=False)
    first = f.run()
    assert first.folded and first.action == "leaf" and first.record is not None
    # leaf folds while the frozen prefix is small; once merging it pays back, a root
    for _ in range(6):
        f.session, i = _to_threshold(f.session, clock, i)
        plan = f.plan()
        if plan.action == "root":
            break
        assert plan.action == "leaf"
        f.run()
    before = f.session
    shown_before = list(before.index.surface_seqs())
    assert plan.action == "root" and plan.span is not None
    assert "pays back in" in plan.reason
    frontier = locate_frontier(before)
    # the merged span starts after the system head: the checkpoint and the open span with it
    assert plan.span[0] == frontier.head < frontier.first_open < plan.span[1]
    # against the leaf it would be: the same cut, a smaller surface after
    leaf = cx.Fold(before, store=tmp_path / "x", window=6000, write=False, root="never")
    leaf_plan = leaf.plan()
    assert leaf_plan.action == "leaf" and leaf_plan.span is not None
    assert leaf_plan.span[1] == plan.span[1]
    r = f.run()
    assert r.folded and r.action == "root" and r.record is not None
    assert first.record.checkpoint_id in r.record.children
    assert set(r.record.children) == set(frontier.checkpoint_ids)
    after_leaf = leaf.run()
    assert r.tokens_after < after_leaf.tokens_after
    # lossless: every message it took off the surface comes back exactly
    shadowed = list(r.record.shadowed)
    assert shadowed == shown_before[plan.span[0] : plan.span[1]]
    assert _exact(f, r.record.checkpoint_id) == _messages(before, shadowed)
    # and the first leaf's bundle is still there, recallable, under the root
    assert _exact(f, first.record.checkpoint_id) == _messages(s, first.record.shadowed)
    fr = locate_frontier(f.session)
    assert fr.consistent and len(fr.frozen) == 1 and fr.frozen[0].mode == "root"
    # the state is the raw log's, whatever the surface became (the fold's own events aside)
    now = {k: v for k, v in f.state.to_json().items() if k != "upto"}
    was = cx.Fold(before, store=tmp_path, write=False).state.to_json()
    assert now == {k: v for k, v in was.items() if k != "upto"}


def test_an_asked_fold_that_the_policy_answers_with_a_rebase_rebases(tmp_path: Path) -> None:
    """Two checkpoints and nothing open to fold: ``fold()`` asks the policy, which answers
    with a root rebase; the fold is that rebase (one root checkpoint over both), never a
    leaf checkpoint laid over the checkpoints."""
    s, clock = _start()
    s, i = _to_threshold(s, clock, 1)
    f = cx.Fold(s, store=tmp_path, window=6000, write=False, root="never")
    assert f.run().action == "leaf"
    f.session, i = _to_threshold(f.session, clock, i)
    assert f.run().action == "leaf"
    g = cx.Fold(f.session, store=tmp_path, window=6000, write=False)
    before = locate_frontier(g.session)
    assert len(before.frozen) == 2
    plan = g.plan(force=True)
    assert plan.action == "root"
    r = g.fold()
    assert r.folded and r.action == "root" and r.record is not None
    assert set(r.record.children) == set(before.checkpoint_ids)
    after = locate_frontier(g.session)
    assert after.consistent and [c.mode for c in after.frozen] == ["root"]


def test_a_harness_compaction_is_not_merged_by_a_pressure_fold(tmp_path: Path) -> None:
    from ctxsdk.samples import sample

    s = cx.Session.open(sample("long-refactor"))
    f = cx.Fold(s, store=tmp_path, window=8192, write=False)
    fr = f.frontier()
    assert fr.frozen and fr.frozen[0].checkpoint_id is None  # the harness's own summary
    assert f.plan().action == "leaf"


def test_a_held_out_seed_is_another_instance_of_the_same_workload() -> None:
    for wl in ("w1", "w2", "w3", "w4", "w5"):
        for i in (0, 9, 31):
            a, b = workload_step(wl, i), workload_step(wl, i, seed=":held-out")
            assert [c.name for c in a.calls] == [c.name for c in b.calls]
            assert (a.text, [c.result for c in a.calls]) != (b.text, [c.result for c in b.calls])
            assert workload_step(wl, i) == a  # the default instance is unchanged
    # W1 grows like a writing session: three 4-sentence paragraphs a step
    assert workload_step("w1", 5).text.count("\n\n") == 2


@pytest.mark.skipif(not SESSIONS.is_dir(), reason="shared data is not available")
def test_a_real_session_replays_as_a_workload(tmp_path: Path) -> None:
    path = SESSIONS / "mini-swe-agent" / "django__django-11163.traj.json"
    steps = replay_steps(path)
    import json

    msgs = json.loads(path.read_text())["messages"]
    assert len(steps) == sum(m["role"] == "assistant" for m in msgs)
    assert steps[0].prompt == next(m["content"] for m in msgs if m["role"] == "user")
    assert all(s.prompt == "Continue." for s in steps[1:])
    first = next(m["content"] for m in msgs if m["role"] == "assistant")
    call = steps[0].calls[0]
    assert call.name == "bash" and call.args["command"] in first
    assert "```" not in steps[0].text
    # the observation that followed the command is its result
    assert (
        call.result
        == msgs[msgs.index(next(m for m in msgs if m["role"] == "assistant")) + 1]["content"]
    )
    run = run_arm("mswe", "basic", 1000, store=tmp_path, script=steps)
    assert len(run.requests) == len(steps) and run.folds
