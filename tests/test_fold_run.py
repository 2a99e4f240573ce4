"""What the harness stated for the run, in the fold's state: a task template's rules are
constraints (the template's message folds away, its rules still bind the run), the run's
settings (its model) are ``run/<key>`` heads, shown apart from the work's values, retired
(never superseded) by a switch, and copied into a checkpoint only when a message the fold
takes away told the model (Codex's environment context): a request header's model the
harness keeps to itself."""

from __future__ import annotations

from typing import Any

import ctxsdk as cx
from ctxsdk.fold._checkpoint import state_lines, told_run
from ctxsdk.fold._state import FoldState, StateLimits, reduce_events
from ctxsdk.testing import LogBuilder

# The shape of SWE-agent's instance template: the task, then the harness's numbered tips.
from .test_checkpoint_graph import _turns
from .test_facts_harness import SWE_TEMPLATE

PLAIN_SYSTEM = "You are a coding agent."


def reduce(b: LogBuilder) -> FoldState:
    return reduce_events(cx.Session.from_events(b.header, b.events).raw_events)


def _header(seq: int, model: str) -> dict[str, Any]:
    cfg = {"provider": "p", "model": model}
    return {"type": "request/header", "seq": seq, "data": {"header": {"config": cfg}}}


def _user(seq: int, text: str) -> dict[str, Any]:
    msg = {"role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": "user"}}
    return {"type": "user/message", "seq": seq, "data": msg}


def test_a_templates_rules_are_constraints_with_the_templates_seq() -> None:
    b = LogBuilder(session_id="swe", system=PLAIN_SYSTEM)
    b.turn(SWE_TEMPLATE).assistant(text="THOUGHT: I will look at the parser.").end_turn()
    s = reduce(b)
    rules = [str(c.value) for c in s.constraints]
    assert any("`-c` flag" in r for r in rules)
    assert any("nc -w5" in r for r in rules)
    assert not [r for r in rules if "THOUGHT" in r or "format_example" in r]  # not its format
    tips = [c for c in s.constraints if "`-c` flag" in str(c.value) or "nc -w5" in str(c.value)]
    assert all(c.sources == (b.prompt_seq,) and c.authority == "normative" for c in tips)


def test_the_same_rules_in_the_system_prompt_add_no_constraint() -> None:
    b = LogBuilder(session_id="swe-system", system=SWE_TEMPLATE)
    b.turn("Fix the date parser.").assistant(text="ok").end_turn()
    assert not [c for c in reduce(b).constraints if "`-c` flag" in str(c.value)]


def test_the_runs_model_is_a_run_head_a_switch_retires_it() -> None:
    events = [
        _header(1, "gpt-4o"),
        _user(2, "Add a --verbose flag to the CLI."),
        _header(3, "gpt-4.1"),
        _user(4, "Now document it in the README."),
    ]
    s = reduce_events(events)
    head = s.heads["run/model"]
    assert head.value == "gpt-4.1" and head.sources == (3,)
    assert [a.value for a in s.run] == ["gpt-4.1"]
    assert s.superseded == () and s.retired_count == 1  # retired, not superseded
    assert not [a for a in s.values if a.state_key == "run/model"]  # not a value of the work
    assert dict(s.lines())["Run (the harness's settings)"] == ("run/model = gpt-4.1 (seq 3)",)
    assert "gpt-4.1" in str(s.to_json()["heads"]["run/model"])


def test_model_switches_never_push_the_works_superseded_values_out() -> None:
    events = [
        _user(1, "Set the timeout to 30 seconds."),
        _user(2, "Set the timeout to 60 seconds."),
    ]
    events += [_header(3 + i, f"model-{i}") for i in range(40)]  # more switches than the cap
    s = reduce_events(events, limits=StateLimits(superseded=4))
    assert [(a.state_key, a.value) for a in s.superseded] == [("value/timeout", "30 seconds")]
    assert s.heads["run/model"].value == "model-39" and "superseded" not in s.dropped


def test_a_checkpoint_never_copies_the_runs_settings() -> None:
    events = [_header(1, "gpt-4o"), _user(2, "Set the timeout to 60 seconds.")]
    shown = "\n".join(state_lines(reduce_events(events)))
    assert "timeout = 60 seconds" in shown
    assert "gpt-4o" not in shown


CODEX_ENV = (
    "<environment_context>\n  <cwd>/repo</cwd>\n  <approval_policy>never</approval_policy>\n"
    "  <sandbox_mode>workspace-write</sandbox_mode>\n  <shell>zsh</shell>\n"
    "</environment_context>"
)


def _codex_env(seq: int) -> dict[str, Any]:
    msg = {
        "role": "user",
        "content": [{"type": "text", "text": CODEX_ENV}],
        "source": {"kind": "plugin", "plugin": "codex", "form": "instructions"},
    }
    return {"type": "user/message", "seq": seq, "data": msg}


def test_run_settings_a_folded_message_told_the_model_reach_the_checkpoint() -> None:
    """Codex's environment context is a message the model reads, and a fold takes it away:
    the checkpoint says the sandbox, approval policy and shell; a request header's model,
    which the model never read as a message, stays out."""
    # a log's events, each at its seq
    events = [_header(0, "gpt-4o"), _codex_env(1), _user(2, "Set the timeout to 60 seconds.")]
    s = reduce_events(events)
    assert {"run/sandbox_mode", "run/approval_policy", "run/shell"} <= set(s.heads)
    told = told_run(s, events, last_seq=2)
    assert told == {"run/sandbox_mode", "run/approval_policy", "run/shell"}
    shown = "\n".join(state_lines(s, told=told))
    assert "sandbox_mode = workspace-write" in shown and "approval_policy = never" in shown
    assert "gpt-4o" not in shown
    # the environment message still on the surface (after the folded span): nothing to repeat
    assert told_run(s, events, last_seq=0) == frozenset()
    assert "workspace-write" not in "\n".join(state_lines(s))


def test_a_banner_the_user_pasted_tells_the_model_its_settings() -> None:
    """A setting read from the harness's banner is told when a user message the fold takes
    away holds its value (Aider users paste the banner); a message that only shares a short
    word with it does not tell it, nor does a paste the fold leaves on the surface."""
    model = "gemini/gemini-2.5-flash-preview-04-17"
    events = [
        _header(0, model),
        _user(1, f"It fails again:\nAider v0.84.0\nMain model: {model} with diff edit format"),
        _user(2, "Set the timeout to 60 seconds."),
    ]
    s = reduce_events(events)
    assert told_run(s, events, last_seq=2) == {"run/model"}
    assert model in "\n".join(state_lines(s, told=told_run(s, events, last_seq=2)))
    assert told_run(s, events, last_seq=0) == frozenset()  # the paste is still on the surface
    short = [_header(0, "gpt-4o"), _user(1, "Is gpt-4o cheaper?"), _user(2, "ok, go on.")]
    assert told_run(reduce_events(short), short, last_seq=2) == frozenset()


def test_a_fold_of_a_codex_log_keeps_its_sandbox_in_the_checkpoint(tmp_path: Any) -> None:
    b = LogBuilder(session_id="codex-env", system=PLAIN_SYSTEM)
    b.turn(CODEX_ENV).assistant(text="Ready.").end_turn()
    for i in range(12):
        b.turn(f"Step {i}: rename helper_{i} in src/util_{i}.py to helper_{i}_v2.")
        b.assistant(text=f"Renamed helper_{i} in src/util_{i}.py. " + "Details. " * 40).end_turn()
    events = b.events
    # the harness's message, as Codex's importer marks it
    env = events[b.surface[1]]
    assert env["type"] == "user/message" and "environment_context" in str(env["data"])
    env["data"]["source"] = {"kind": "plugin", "plugin": "codex", "form": "instructions"}
    session = cx.Session.from_events(b.header, events)
    f = cx.Fold(session, store=tmp_path / "bundles", window=1024)
    done = f.run(force=True)
    assert done.folded and done.record is not None
    assert "sandbox_mode = workspace-write" in done.record.text
    assert "approval_policy = never" in done.record.text


def _checkpoint_of(f: cx.Fold) -> str:
    return next(m.text for m in f.session.messages() if "cx-fold" in m.text)


def test_a_short_span_folds_without_the_derived_groups_a_long_one_keeps(tmp_path: Any) -> None:
    """The derived groups (earlier requests, key names, findings) have a share of the folded
    tokens of their own; where they would make the checkpoint no smaller than the span it
    folds, the span is folded without them (the state is still all shown), not refused."""
    for messages, derived in ((3, False), (40, True)):
        b = _turns(44)
        s = cx.Session.from_events(b.header, b.events)
        f = cx.Fold(s, store=tmp_path / f"b{messages}", window=8192, write=False)
        seqs = f.session.index.surface_seqs()
        lo = f.frontier().first_open
        r = f.fold((seqs[lo], seqs[lo + messages]))
        assert r.folded and r.tokens_after < r.tokens_before
        text = _checkpoint_of(f)
        assert "Current values:" in text
        assert ("Earlier requests:" in text) is derived and ("Key names:" in text) is derived
