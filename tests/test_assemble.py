"""Assembly: the tree, the planner's ops, apply/expand round trips, presets, drafts, fit."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ctxsdk as cx
from ctxsdk.assemble import DigestConfig, DraftStore, Rule, Target
from ctxsdk.assemble._modes import collapse_mark as parse_fold_mark
from ctxsdk.assemble._planner import apply_ops, compile_plan, current_modes
from ctxsdk.samples import sample
from ctxsdk.session._tokens import TokenCounter
from ctxsdk.testing import LogBuilder


@pytest.fixture(scope="module")
def long() -> cx.Session:
    return cx.Session.open(sample("long-refactor"))


def _pairs_whole(s: cx.Session) -> None:
    """Every tool call in the wire is answered right after its assistant message."""
    wire = s.wire("openai")
    for i, m in enumerate(wire):
        if m["role"] == "assistant" and m.get("tool_calls"):
            ids = [c["id"] for c in m["tool_calls"]]
            answered = []
            j = i + 1
            while j < len(wire) and wire[j]["role"] == "tool":
                answered.append(wire[j]["tool_call_id"])
                j += 1
            assert answered == ids, f"calls {ids} answered by {answered}"
        if m["role"] == "tool":
            assert i > 0 and wire[i - 1]["role"] in ("assistant", "tool")


def test_tree_files_folds_where_their_history_was(long: cx.Session) -> None:
    tree = long.assemble().tree()
    turns = [r for r in tree.children if r.kind == "turn"]
    first = turns[0]
    # The compaction (written in turn 5) shadows turn-1 history, so it is filed under turn 1.
    fold = next(r for r in first.walk() if r.kind == "replacement")
    assert fold.mode == "key" and fold.seq is not None and len(fold.shadowed) > 10
    assert fold.seq > turns[1].leaves()[0].seq  # written later than the next turn's first node
    # Reading the leaves top to bottom is reading the surface.
    assert [r.seq for r in tree.leaves()] == long.surface().seqs
    # Containers never take their gist from the system prompt; tool steps name their tool.
    assert not first.gist.startswith("You are")
    tool_only = next(r for r in tree.walk() if r.kind == "step" and r.children[0].calls_only)
    assert tool_only.gist.startswith("tool ")  # a tool-only step: named by tool and result line
    tool_leaf = next(r for r in tree.leaves() if r.kind == "tool")
    assert tool_leaf.gist.startswith(f"tool {tool_leaf.tool} · ")
    assert tree.tokens == sum(r.tokens for r in tree.leaves())


def _with_long_output() -> cx.Session:
    b = LogBuilder(session_id="long-output")
    b.turn("Run the whole test suite and tell me what failed.")
    b.assistant(text="Running it.", tool_calls=[("bash", {"command": "pytest -q"})])
    b.tool_results(["\n".join(f"tests/test_mod_{i}.py::test_case_{i} PASSED" for i in range(200))])
    b.next_step()
    b.assistant(text="All 200 tests passed.")
    b.end_turn()
    return cx.Session.from_events(b.header, b.events)


def test_single_tool_result_fold_is_a_content_rewrite() -> None:
    s = _with_long_output()
    a = s.assemble()
    big = next(r for r in a.tree().leaves() if r.kind == "tool")
    a.set(big.seq, "key")
    ops, _ = a.plan()
    assert len(ops) == 1 and ops[0].kind == "tool-rewrite" and ops[0].shadowed == (big.seq,)
    assert ops[0].text.startswith("⟨assembled:key items=1")
    assert "(184 lines omitted)" in ops[0].text
    assert ops[0].tokens_after < ops[0].tokens_before / 2
    after = a.apply(write=False)
    pos = s.surface().seqs.index(big.seq)
    node = after.surface()[pos]
    assert node.type == "tool/result" and node.message.id == s.surface()[pos].message.id
    assert current_modes(after, list(after.surface()))[pos] == "key"
    _pairs_whole(after)


def test_key_without_a_digest_is_shorter_than_a_run_of_short_members(long: cx.Session) -> None:
    # turn 6 of the long sample: 13 members, each under the head + tail lines kept whole; the
    # automatic digest was longer than the run (900 -> 936 tokens)
    a = long.assemble()
    a.set("t6", "key")
    ops, _ = a.plan()
    (op,) = ops
    assert op.mode == "key" and op.tokens_after < 0.8 * op.tokens_before
    assert op.text.count("▸ ") == len(op.shadowed)  # every member still has its heading


def test_folding_everything_off_never_covers_the_system_head(long: cx.Session) -> None:
    a = long.assemble()
    a.set(a.tree(), "off")
    p = a.preview()
    assert p.ops and p.ops[0].start_seq != long.surface()[0].seq
    assert p.messages[0].role == "system"
    assert any("never collapsed" in n for n in p.notes)
    assert p.tokens_after < p.tokens_before / 5


def test_folding_a_calling_assistant_widens_to_its_results(long: cx.Session) -> None:
    a = long.assemble()
    caller = next(
        n for n in long.surface() if n.message.tool_calls and len(n.message.tool_calls) > 2
    )
    a.set(caller.seq, "key", digest="edited the call sites")
    ops, notes = a.plan()
    assert len(ops) == 1
    ids = {c.id for c in caller.message.tool_calls}
    results = [
        n.seq
        for n in long.surface()
        if n.message.tool_results and n.message.tool_results[0].tool_call_id in ids
    ]
    assert set(results) <= set(ops[0].shadowed)
    assert any("widened" in n for n in notes)
    assert "edited the call sites" in ops[0].text
    _pairs_whole(apply_ops(long, ops))


def test_no_change_no_ops(long: cx.Session) -> None:
    a = long.assemble()
    a.set(long.surface()[3].seq, "full")
    assert a.plan()[0] == []
    # The existing compaction is "key" already: asking for key again changes nothing.
    fold = next(n for n in long.surface() if n.op == "replace" and n.type == "user/message")
    assert a.set(fold.seq, "key").plan()[0] == []


def test_apply_then_expand_round_trips(tmp_path: Path, long: cx.Session) -> None:
    s = cx.Session.open(long.save(tmp_path / "copy"))
    a = s.assemble()
    tool = next(
        n
        for n in s.surface()
        if n.message.tool_results and len(n.message.tool_results[0].text) > 500
    )
    user = next(n for n in s.surface() if n.message.source.kind == "user")
    a.set(tool.seq, "key").set(user.seq, "off")
    folded = a.apply()  # written to the file
    # Two replacements, inside the edit turn a tool-result rewrite needs between turns.
    assert folded.path == s.path and len(folded) == len(s) + 4
    reread = cx.Session.open(s.path)
    written = reread.raw_events[len(s) :]
    assert [e["type"] for e in (written[0], written[-1])] == ["turn/start", "turn/end"]
    marks = [parse_fold_mark(dict(reread.raw_events[x])) for x in range(len(s), len(reread))]
    assert sorted(m[0] for m in marks if m) == ["key", "off"]
    # Expand both: the tool result comes back byte for byte, the user message verbatim.
    b = reread.assemble()
    for n in reread.surface():
        if parse_fold_mark(dict(reread.raw_events[n.seq])):
            b.set(n.seq, "full")
    restored = b.apply(write=False)
    by_pos = dict(zip(s.surface().seqs, s.messages(), strict=False))
    again = {m.id: m for m in restored.messages()}
    assert again[tool.message.id].content == by_pos[tool.seq].content
    texts = [m.text for m in restored.messages()]
    assert user.message.text in texts
    assert len(restored.messages()) == len(s.messages())


def test_multi_node_expand_is_one_replay_message(long: cx.Session) -> None:
    a = long.assemble()
    nodes = [n for n in long.surface() if n.message.source.kind == "user"][1:2]
    span = long.surface().seqs.index(nodes[0].seq)
    a.set(long.surface()[span].seq, "off").set(long.surface()[span + 1].seq, "off")
    folded = a.apply(write=False)
    fold = next(n for n in folded.surface() if parse_fold_mark(dict(folded.raw_events[n.seq])))
    b = folded.assemble().set(fold.seq, "full")
    ops, _ = b.plan()
    assert len(ops) == 1 and ops[0].kind == "expand"
    assert ops[0].text.startswith("⟨assembled:full items=")
    assert "Replayed verbatim" in ops[0].text and f"--- seq {nodes[0].seq}" in ops[0].text
    _pairs_whole(apply_ops(folded, ops))


def test_empty_off_marker_folds_to_zero_tokens(long: cx.Session) -> None:
    a = long.assemble(config=DigestConfig(off_marker=""))
    user = next(n for n in long.surface() if n.message.source.kind == "user")
    a.set(user.seq, "off")
    ops, _ = a.plan()
    assert ops[0].text == "" and ops[0].message is not None and ops[0].message["content"] == []


def test_presets_match_kind_tool_and_failure() -> None:
    s = cx.Session.open(sample("fix-flaky-test"))
    rules = [
        Rule(mode="key", kind="tool", failed=True, template="failed {tool} run, see turn {turn}"),
        Rule(mode="off", kind="tool", tool="grep"),
    ]
    a = s.assemble(rules=rules).apply_rules()
    leaves = {r.seq: r for r in a.tree().leaves()}
    for seq, t in a.draft.items():
        row = leaves[seq]
        if row.failed:
            assert t.mode == "key" and t.digest == f"failed {row.tool} run, see turn {row.turn}"
        else:
            assert (t.mode, row.tool) == ("off", "grep")
    assert any(leaves[s].failed for s in a.draft)
    # auto_only applies only auto rules.
    assert s.assemble(rules=rules).apply_rules(auto_only=True).draft == {}


def test_drafts_persist_and_follow_fork_lineage(tmp_path: Path) -> None:
    store = DraftStore(tmp_path)
    parent = cx.Session.open(sample("fix-flaky-test"))
    child = cx.Session.open(sample("fix-flaky-test-fork"))
    seq = parent.surface().seqs[3]
    parent.assemble(drafts=store).set(seq, "off").save_draft()
    inherited = child.assemble(drafts=store)
    assert inherited.draft == {seq: Target("off")} and inherited.draft_source == parent.id
    inherited.reset().save_draft()  # an explicit empty draft stops inheritance
    assert child.assemble(drafts=store).draft == {}
    assert parent.assemble(drafts=store).draft == {seq: Target("off")}


def test_fit_keeps_what_the_next_step_needs(long: cx.Session) -> None:
    for budget in (5000, 2500, 1200):
        a = long.assemble()
        r = a.fit(budget, query="trial balance report")
        assert r.fits, r
        p = a.preview()
        assert p.tokens_after == r.tokens_after <= budget
        kept = set(r.kept)
        assert set(r.protected) <= kept
        assert p.messages[0].role == "system"
        last_user = [
            n
            for n in long.surface()
            if n.type == "user/message" and n.message.source.kind == "user"
        ][-1]
        assert last_user.message.id in {m.id for m in p.messages}
        _pairs_whole(apply_ops(long, list(p.ops)))


def test_fit_prefers_key_when_it_is_shorter() -> None:
    s = _with_long_output()
    total = s.tokens().total
    r = s.assemble().fit(total - 100)
    assert r.fits and [op.mode for op in r.ops] == ["key"]
    assert r.ops[0].kind == "tool-rewrite"


def test_fit_reports_an_impossible_budget(long: cx.Session) -> None:
    r = long.assemble().fit(50)
    assert not r.fits and any("cannot fit" in n for n in r.notes)


@st.composite
def _sessions(draw: st.DrawFn) -> cx.Session:
    b = LogBuilder(session_id=f"prop-{draw(st.integers(0, 10**6))}")
    for t in range(draw(st.integers(1, 4))):
        b.turn(f"task {t}: " + "word " * draw(st.integers(1, 30)))
        for step in range(draw(st.integers(0, 3))):
            if step:
                b.next_step()
            n = draw(st.integers(1, 3))
            b.assistant(
                text="thinking " * draw(st.integers(0, 5)) or None,
                tool_calls=[("bash", {"command": f"echo {i}"}) for i in range(n)],
            )
            b.tool_results(["line\n" * draw(st.integers(1, 40)) for _ in range(n)])
        b.next_step()
        b.assistant(text="done " * draw(st.integers(1, 10)))
        b.end_turn()
        if draw(st.booleans()) and len(b.surface) > 8:
            # The harness refuses a checkpoint that is not smaller; so does the builder.
            with contextlib.suppress(ValueError):
                b.compact(keep_last=4, summary_text="summary of the work so far")
    return cx.Session.from_events(b.header, b.events)


_COUNTER = TokenCounter("estimate")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_sessions(), st.data())
def test_planner_ops_are_always_accepted(s: cx.Session, data: st.DataObject) -> None:
    seqs = s.surface().seqs
    modes = data.draw(
        st.lists(st.sampled_from(["full", "key", "off"]), min_size=len(seqs), max_size=len(seqs))
    )
    targets = {q: Target(m) for q, m in zip(seqs, modes, strict=True)}  # type: ignore[arg-type]
    ops, _ = compile_plan(s, targets, counter=_COUNTER)
    folded = apply_ops(s, ops)  # every op is validated by the harness's surface rules
    _pairs_whole(folded)
    if seqs and s.raw_events[seqs[0]]["type"] == "system/message":
        assert folded.surface().seqs[0] == seqs[0]
    # Expanding every own fold restores single nodes exactly and never loses a message id.
    b = folded.assemble(tokenizer="estimate")
    for n in folded.surface():
        if parse_fold_mark(dict(folded.raw_events[n.seq])):
            b.set(n.seq, "full")
    back = b.apply(write=False)
    _pairs_whole(back)
    original = {m.id: m for m in s.messages()}
    for op in ops:
        if op.kind == "tool-rewrite":
            mid = s.event(op.start_seq).message.id  # type: ignore[union-attr]
            restored = {m.id: m for m in back.messages()}[mid]
            assert restored.content == original[mid].content


def test_an_agent_folds_its_own_context_with_the_tool() -> None:
    """A scripted model calls context_assembler through the real agent loop and tool registry;
    the fold lands in the same turn as valid events and the wire stays paired."""
    import httpx

    from ctxsdk._agent import run_agent
    from ctxsdk.llm import LLM
    from ctxsdk.tools import default_registry

    s = cx.Session.open(sample("fix-flaky-test"))
    old = next(
        n
        for n in s.surface()
        if n.message.tool_results and len(n.message.tool_results[0].text) > 300
    )
    replies = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {
                        "name": "context_assembler",
                        "arguments": json.dumps(
                            {
                                "action": "set",
                                "dryRun": False,
                                "ops": [
                                    {
                                        "surfaceSeq": old.seq,
                                        "mode": "key",
                                        "digest": "read tests/conftest.py: db_path fixture found",
                                    }
                                ],
                            }
                        ),
                    },
                }
            ],
        },
        {"role": "assistant", "content": "Folded the old read."},
    ]

    def handler(request: httpx.Request) -> httpx.Response:
        message = replies.pop(0)
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        return httpx.Response(
            200,
            json={
                "id": "x",
                "model": "m",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5},
            },
        )

    llm = LLM("http://model.test/v1", "m", env={}, transport=httpx.MockTransport(handler))
    out = run_agent(s, llm, "Tidy your context.", registry=default_registry())
    pos = s.surface().seqs.index(old.seq)
    folded = out.surface()[pos]
    assert (
        folded.type == "tool/result"
        and "db_path fixture found" in folded.message.tool_results[0].text
    )
    result = json.loads(
        next(m for m in out.messages() if m.tool_results and m.tool_results[0].tool_call_id == "c1")
        .tool_results[0]
        .text
    )
    assert result["applied"] is True and result["ops"][0]["kind"] == "tool-rewrite"
    assert out.turns()[-1].reason == "completed"
    _pairs_whole(out)
    cx.Session.from_events(dict(out.header.to_json_dict()), [dict(e) for e in out.raw_events])


def _real_logs() -> list[tuple[str, cx.Session]]:
    from ctxsdk.session.importers import from_claude_code, from_swe_agent

    from ._logs import FIXTURES, SHARED

    if not SHARED.is_dir():
        return []
    out = [(p.name, cx.Session.open(p, normalized=True)) for p in sorted(FIXTURES.glob("*.jsonl"))]
    for p in sorted((SHARED / "data" / "swe-agent-trajectories").glob("*.traj")):
        out.append((p.name, from_swe_agent(p)))
    cc = SHARED / "data" / "claude-code-transcript"
    for p in sorted(cc.glob("*.jsonl")):
        out.append((p.name, from_claude_code(p).repaired()))
    return out


@pytest.mark.parametrize("pattern", ["all-key", "all-off", "alternate", "thirds"])
def test_planner_over_real_logs(pattern: str) -> None:
    logs = _real_logs()
    if not logs:
        pytest.skip("shared/data is not present")
    for name, s in logs:
        seqs = s.surface().seqs
        modes = {
            "all-key": ["key"] * len(seqs),
            "all-off": ["off"] * len(seqs),
            "alternate": ["off" if i % 2 else "full" for i in range(len(seqs))],
            "thirds": [("full", "key", "off")[i % 3] for i in range(len(seqs))],
        }[pattern]
        targets = {q: Target(m) for q, m in zip(seqs, modes, strict=True)}  # type: ignore[arg-type]
        ops, _ = compile_plan(s, targets, counter=_COUNTER)
        folded = apply_ops(s, ops)
        _pairs_whole(folded)
        b = folded.assemble(tokenizer="estimate")
        for n in folded.surface():
            if parse_fold_mark(dict(folded.raw_events[n.seq])):
                b.set(n.seq, "full")
        back = b.apply(write=False)
        _pairs_whole(back)
        assert len(back.messages()) >= len(folded.messages()), name


def test_folds_expand_to_what_they_cover_and_subagents_nest(long: cx.Session) -> None:
    from ctxsdk.samples import SAMPLES_HOME

    tree = long.assemble(workspace=cx.Workspace(SAMPLES_HOME, cache=False)).tree()
    fold = next(r for r in tree.walk() if r.kind == "replacement")
    covered = [c.event_seq for c in fold.children]
    assert covered == list(long.surface()[[n.seq for n in long.surface()].index(fold.seq)].shadowed)
    assert all(c.state == "shadowed" and c.tokens == 0 for c in fold.children)
    assert fold.tokens > 0  # a fold keeps its own cost
    assert any(c.gist.startswith("tool read") for c in fold.children)
    child = cx.Session.open(sample("long-refactor-docs-audit"))
    host = next(r for r in tree.walk() if any(c.id == child.id for c in r.children))
    assert host.kind == "tool" and host.tool == "subagent"
    assert [r.seq for r in tree.leaves()] == long.surface().seqs  # nesting adds no surface rows


def test_auto_rules_fold_at_turn_end() -> None:
    import httpx

    from ctxsdk._agent import run_agent
    from ctxsdk.llm import LLM

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200,
            json={
                "id": "x",
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "ok"},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 1},
            },
        )

    s = cx.Session.open(sample("fix-flaky-test"))
    llm = LLM("http://model.test/v1", "m", env={}, transport=httpx.MockTransport(handler))
    rules = [Rule(mode="off", kind="tool", failed=True, auto=True), Rule(mode="off", kind="tool")]
    out = run_agent(s, llm, "thanks", auto_rules=rules)
    # The folds are tool-result rewrites, written inside an edit turn after the agent's turn.
    agent_turn = out.index.turns[-2]
    assert agent_turn.steps and not out.index.turns[-1].steps
    assert agent_turn.end_seq is not None
    folds = [e for e in out.raw_events[agent_turn.end_seq + 1 :] if e.get("surfaceOp")]
    failed = [
        n for n in s.surface() if n.message.tool_results and n.message.tool_results[0].is_error
    ]
    assert failed and len(folds) == len(failed)  # only the auto rule acted
    assert all(parse_fold_mark(dict(e)) == ("off", 1) for e in folds)
    _pairs_whole(out)


def test_planner_says_what_it_cannot_or_should_not_do(long: cx.Session) -> None:
    compaction = next(n for n in long.surface() if n.message.source.plugin == "compact")
    _, notes = long.assemble().set(compaction.seq, "full").plan()
    assert any(f"seq {compaction.seq} is a replacement ctxsdk did not write" in n for n in notes)
    s = _with_long_output()
    prompt = next(n for n in s.surface() if n.message.source.kind == "user")
    ops, notes = s.assemble().set(prompt.seq, "key").plan()
    assert ops and any("is not shorter" in n for n in notes)


# --- written so the harness accepts it (tests/test_oracle.py runs the harness on these) --------


def test_a_tool_rewrite_between_turns_is_written_in_an_edit_turn(long: cx.Session) -> None:
    node = next(n for n in long.surface() if n.type == "tool/result" and n.op == "append")
    prompt = [n for n in long.surface() if n.message.source.kind == "user"][2]
    a = long.assemble().set(node.seq, "off").set(prompt.seq, "key", digest="the ask")
    ops, notes = a.plan()
    assert {op.kind for op in ops} == {"tool-rewrite", "collapse"}
    assert any("edit turn" in n for n in notes)
    out = a.apply(write=False)
    written = out.raw_events[len(long) :]
    assert [e["type"] for e in written] == ["turn/start", "tool/result", "user/message", "turn/end"]
    edit = out.index.turns[-1]
    assert edit.turn == long.index.last_turn + 1 and not edit.steps
    assert edit.reason == {"kind": "completed"}
    # Nothing the model receives changes but the two edits; the tree has no row for the turn.
    assert len(out.messages()) == len(long.messages())
    assert [r.turn for r in out.assemble().tree().children if r.kind == "turn"] == [
        r.turn for r in long.assemble().tree().children if r.kind == "turn"
    ]
    _pairs_whole(out)
    # A batch without a tool rewrite needs no turn; one inside an open turn uses that turn.
    plain = long.assemble().set(prompt.seq, "off").apply(write=False)
    assert [e["type"] for e in plain.raw_events[len(long) :]] == ["user/message"]
    b = LogBuilder(session_id="open-turn")
    b.turn("Run it").assistant(tool_calls=[("bash", {"command": "ls"})]).tool_results(["a\nb"])
    b.next_step()
    s = cx.Session.from_events(b.header, b.events)
    assert s.index.open_turn == 1
    result = next(n for n in s.surface() if n.type == "tool/result")
    a = s.assemble().set(result.seq, "off")
    assert not any("edit turn" in n for n in a.plan()[1])
    inside = a.apply(write=False)
    assert [e["type"] for e in inside.raw_events[len(s) :]] == ["tool/result"]


def test_edit_turns_do_not_age_rows_for_rules() -> None:
    b = LogBuilder(session_id="ages")
    for i in range(3):
        b.turn(f"Step {i}").assistant(tool_calls=[("bash", {"command": f"echo {i}"})])
        b.tool_results([f"out {i}"]).next_step().assistant(text="ok").end_turn()
    s = cx.Session.from_events(b.header, b.events)
    rule = [Rule("off", kind="tool", older_than_turns=2)]
    before = set(s.assemble().apply_rules(rule).draft)
    assert len(before) == 1  # turn 1's output only
    last = [n for n in s.surface() if n.type == "tool/result"][-1]
    edited = s.assemble().set(last.seq, "key", digest="out 2").apply(write=False)
    assert edited.index.last_turn == 4  # the edit turn
    after = set(edited.assemble().apply_rules(rule).draft)
    assert after == before


def test_expanding_a_collapsed_checkpoint_rebrackets_it(long: cx.Session) -> None:
    ck = next(
        n for n in long.surface() if n.op == "replace" and n.message.source.plugin == "compact"
    )
    pos = long.surface().seqs.index(ck.seq)
    folded = long.assemble().set(ck.seq, "off").apply(write=False)
    assert current_modes(folded, list(folded.surface()))[pos] == "off"
    a = folded.assemble().set(folded.surface()[pos].seq, "full")
    ops, notes = a.plan()
    assert len(ops) == 1 and ops[0].kind == "expand" and ops[0].compaction is not None
    assert any("fresh compaction" in n for n in notes)
    out = a.apply(write=False)
    start, summary, checkpoint, end = out.raw_events[len(folded) :]
    assert [start["type"], summary["type"], checkpoint["type"], end["type"]] == [
        "compaction/start",
        "compaction/summary",
        "user/message",
        "compaction/end",
    ]
    cid = start["data"]["compactionId"]
    old = long.raw_events[ck.seq]["data"]
    assert cid != old["source"]["compactionId"]
    assert start["data"]["turn"] is None and end["data"] == {"compactionId": cid, "turn": None}
    assert summary["data"]["shadowedSeqs"] == [folded.surface()[pos].seq]
    assert "rawOutput" not in summary["data"] and "usage" not in summary["data"]
    assert checkpoint["data"]["source"] == {**old["source"], "compactionId": cid}
    assert checkpoint["data"]["content"] == old["content"]
    assert checkpoint["data"]["id"] != old["id"]
    assert {start["seq"], summary["seq"]} <= set(out.index.source_seqs[checkpoint["seq"]])
    assert current_modes(out, list(out.surface()))[pos] == "key"  # a harness checkpoint again
    assert out.messages()[pos].content == ck.message.content


# --- issue 9 §4: shadowed rows, explicit choices, what cannot move, one token count ------------


def test_a_shadowed_row_addresses_the_replacement_that_covers_it(long: cx.Session) -> None:
    folded = long.assemble().set("t6", "key").apply(write=False)
    tree = folded.assemble().tree()
    collapse = next(r for r in tree.walk() if r.seq is not None and r.seq >= len(long))
    assert collapse.kind == "replacement" and collapse.mode == "key"
    inner = collapse.children[0]
    assert inner.state == "shadowed" and inner.event_seq is not None
    assert f"({inner.event_seq})" in tree.render()
    # The seq shown in parentheses, and its row id, both address the collapse over it.
    for target in (inner.event_seq, inner.id):
        a = folded.assemble().set(target, "full")
        assert a.draft == {collapse.seq: Target("full")}
        ops, _ = a.plan()
        assert [(op.kind, op.start_seq) for op in ops] == [("expand", collapse.seq)]
    out = folded.assemble().set(inner.event_seq, "full").apply(write=False)
    assert f"--- seq {inner.event_seq} · " in "".join(m.text for m in out.messages())
    # key/off on a shadowed seq re-mode the collapse that covers it.
    assert folded.assemble().set(inner.event_seq, "off").draft == {collapse.seq: Target("off")}


def test_a_shadowed_row_under_a_compaction_says_it_cannot_be_expanded(long: cx.Session) -> None:
    ck = next(n for n in long.surface() if n.message.source.plugin == "compact")
    under = long.index.covered(ck.seq)[3]
    with pytest.raises(cx.errors.InvalidArgument) as got:
        long.assemble().set(under, "full")
    msg = str(got.value)
    assert f"seq {under} is covered by the harness compaction checkpoint at seq {ck.seq}" in msg
    assert "cannot expand" in msg and f"message_at({under})" in msg
    # Under an own collapse of that checkpoint: the way back ends at the checkpoint, and the
    # message says which collapse can be expanded.
    folded = long.assemble().set(ck.seq, "off").apply(write=False)
    top = folded.index.shadowed_by[ck.seq]
    with pytest.raises(cx.errors.InvalidArgument, match=rf"set\({top}, 'full'\) expands"):
        folded.assemble().set(under, "full")
    assert folded.assemble().set(ck.seq, "full").draft == {top: Target("full")}
    # A seq that is no message at all is still not found, and says what it is.
    call = next(i for i, e in enumerate(long.raw_events) if e["type"] == "tool/call")
    with pytest.raises(cx.errors.NotFound, match="tool/call event"):
        long.assemble().set(call, "full")


def test_fit_never_overrides_an_explicit_choice(long: cx.Session) -> None:
    rows = next(r for r in long.assemble().tree().walk() if r.id == "t6").leaves()
    seqs = {r.seq for r in rows}
    a = long.assemble().set("t6", "full")
    r = a.fit(3000)
    assert r.fits and seqs <= set(r.kept)
    assert all(a.draft[s] == Target("full") for s in seqs)
    assert not any(set(op.shadowed) & seqs for op in a.preview().ops)
    # An explicit off stays off, even where the budget needs no collapse at all.
    prompt = [n for n in long.surface() if n.message.source.kind == "user"][1]
    b = long.assemble().set(prompt.seq, "off")
    r = b.fit(20_000)
    assert b.draft[prompt.seq] == Target("off")
    assert any(prompt.seq in op.shadowed and op.mode == "off" for op in r.ops)
    r = long.assemble().set(prompt.seq, "off").fit(2500)
    assert r.fits and r.targets[prompt.seq] == Target("off")
    # When the explicit choices alone exceed the budget, the notes say so.
    r = long.assemble().set("t6", "full").fit(500)
    assert not r.fits and seqs <= set(r.kept)
    assert any("explicit choices alone" in n and "set full" in n for n in r.notes), r.notes
    # What an earlier fit chose is not an explicit choice: fitting again re-plans it.
    c = long.assemble()
    c.fit(1200)
    assert c.fit(5000).tokens_after == long.assemble().fit(5000).tokens_after


def test_a_budget_that_cannot_be_met_names_what_cannot_move(long: cx.Session) -> None:
    ck = next(n for n in long.surface() if n.message.source.plugin == "compact")
    full = dict(zip(long.surface().seqs, cx.Assembly(long)._surface_tokens(), strict=True))
    system = long.surface()[0]
    prompt = [n for n in long.surface() if n.message.source.kind == "user"][-1]
    r = long.assemble().fit(50)
    note = next(n for n in r.notes if n.startswith("cannot fit 50 tokens"))
    assert f"a {full[ck.seq]:,}-token harness compaction checkpoint (seq {ck.seq})" in note
    assert f"the system prompt ({full[system.seq]:,} tokens)" in note
    assert f"the latest user prompt (seq {prompt.seq}, {full[prompt.seq]} tokens)" in note
    assert "protected nodes" not in note
    r = long.assemble().set("t6", "full").fit(1000)
    assert any("your explicit choices (13 nodes set full" in n for n in r.notes), r.notes


def _tiny(version: int, system: str) -> cx.Session:
    b = LogBuilder(version=version, session_id=f"tiny-{version}-{len(system)}", system=system)
    b.turn("Say hello.").assistant(text="Hello.").end_turn()
    return cx.Session.from_events(b.header, b.events)


@pytest.mark.parametrize(
    "make",
    [
        lambda: cx.Session.open(sample("long-refactor")),
        lambda: cx.Session.open(sample("fix-flaky-test")),
        lambda: _tiny(3, ""),
        lambda: _tiny(3, "You are a careful engineer."),
        lambda: _tiny(2, ""),
        lambda: _tiny(2, "You are a careful engineer."),
    ],
    ids=["long-refactor", "fix-flaky-test", "v3-empty-system", "v3", "v2-empty-system", "v2"],
)
def test_the_tree_counts_what_session_tokens_counts(make: object) -> None:
    s = make()  # type: ignore[operator]
    for tokenizer in ("cl100k_base", "estimate"):
        a = s.assemble(tokenizer=tokenizer)
        total = s.tokens(tokenizer).total
        assert a.tree().tokens == total
        assert a.preview().tokens_before == total
        assert a.fit(10**6).tokens_before == total
    tree = s.assemble().tree()
    if s.version < 3 and s.system_prompt:  # sent with each request, counted in its own row
        row = tree.children[0]
        assert row.kind == "system" and row.seq is None and row.tokens == s.tokens().system
        with pytest.raises(cx.errors.InvalidArgument, match="request header"):
            s.assemble().set("system", "off")
    if s.version >= 3 and not s.system_prompt:  # an empty system node is not sent: it costs 0
        assert tree.leaves()[0].kind == "system" and tree.leaves()[0].tokens == 0


@pytest.mark.parametrize("budget", [0, -5, 2.5, "4000", True, None])
def test_a_fit_budget_is_a_positive_whole_number(long: cx.Session, budget: object) -> None:
    with pytest.raises(cx.errors.InvalidArgument, match="positive whole number"):
        long.assemble().fit(budget)  # type: ignore[arg-type]
    assert long.assemble().fit(1).budget == 1


def test_an_empty_system_prompt_row_says_the_log_holds_none() -> None:
    from ctxsdk.samples import real_samples

    s = cx.Session.open_any(real_samples()["claude-code"].path)  # Claude Code records no prompt
    system = [r for r in cx.Assembly(s).tree().walk() if r.kind == "system"]
    assert system and system[0].tokens == 0
    assert system[0].gist == "(empty: the log does not hold the system prompt)"
