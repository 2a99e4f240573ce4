"""What the harness stated for the run, in the fold's state: a task template's rules are
constraints (the template's message folds away, its rules still bind the run), the run's
settings (its model) are ``run/<key>`` heads, shown apart from the work's values, retired
(never superseded) by a switch, and never copied into a checkpoint (the harness states them
to itself)."""

from __future__ import annotations

from typing import Any

import ctxsdk as cx
from ctxsdk.fold._checkpoint import state_lines
from ctxsdk.fold._state import FoldState, StateLimits, reduce_events
from ctxsdk.testing import LogBuilder

# The shape of SWE-agent's instance template: the task, then the harness's numbered tips.
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
