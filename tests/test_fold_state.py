"""The Fold state reducer: a pure function of the raw log (never of narrative), with the seed's
StateReducer rules, its authority gate, the lexical extraction rules, bounds, and the seed's
S01-S08 state cases and boundary-corpus anchors (B01-B05, B12) as machine oracles."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxsdk as cx
from ctxsdk import errors
from ctxsdk.fold._checkpoint import state_lines
from ctxsdk.fold._state import (
    ANCHOR_EVENT,
    ANCHOR_KINDS,
    AUTHORITIES,
    STATEMENT_KEY_PREFIX,
    Anchor,
    FoldState,
    StateLimits,
    anchor_event,
    reduce_events,
    state_metrics,
)
from ctxsdk.session.importers import from_aider
from ctxsdk.testing import LogBuilder, ToolOutput

CORPUS = (
    Path(__file__).resolve().parents[2]
    / "shared/data/seed-bench/epistemic-fold/boundary-corpus-B01-B12-X01-X06.json"
)
PLAIN_SYSTEM = "You are a coding agent."  # no normative cue: the system adds no constraint

Event = dict[str, Any]


def builder(name: str, **kw: Any) -> LogBuilder:
    return LogBuilder(session_id=name, system=kw.pop("system", PLAIN_SYSTEM), **kw)


def session(b: LogBuilder, *extra: Event, rename: Mapping[str, str] | None = None) -> cx.Session:
    """The builder's log as a validated Session (call ids renamed), with ``extra`` appended."""
    events = b.events
    if rename:
        text = json.dumps(events)
        for old, new in rename.items():
            text = text.replace(old, new)
        events = json.loads(text)
    s = cx.Session.from_events(b.header, events)
    return s.append(list(extra)) if extra else s


def reduce(b: LogBuilder, *extra: Event, **kw: Any) -> FoldState:
    return reduce_events(session(b, *extra).raw_events, **kw)


def one_turn(name: str, prompt: str, **kw: Any) -> LogBuilder:
    b = builder(name, **kw)
    b.turn(prompt).assistant(text="ok").end_turn()
    return b


def tool_turn(
    b: LogBuilder,
    prompt: str,
    calls: Sequence[tuple[str, Mapping[str, Any]]],
    results: Sequence[str | ToolOutput],
    reply: str = "ok",
) -> LogBuilder:
    b.turn(prompt).assistant(text="Working on it.", tool_calls=list(calls))
    b.tool_results(list(results)).next_step().assistant(text=reply).end_turn()
    return b


def last_call(b: LogBuilder) -> str:
    """The id of the latest tool call in the builder's log."""
    return str([e for e in b.events if e["type"] == "tool/call"][-1]["data"]["callId"])


def declare(
    aid: str, kind: str, value: Any, authority: str, refs: Sequence[int], key: str | None = None
) -> Event:
    anchor: dict[str, Any] = {"id": aid, "kind": kind, "value": value, "authority": authority}
    if key is not None:
        anchor["stateKey"] = key
    anchor["sourceRefs"] = list(refs)
    return anchor_event("declare", anchor=anchor)


def values(state: FoldState) -> list[str]:
    return [str(a.value) for a in state.active()]


# --- the contract --------------------------------------------------------------------------


def test_names_and_anchor_event_shape() -> None:
    assert ANCHOR_EVENT == "ctxsdk/fold-anchor"
    assert set(ANCHOR_KINDS) == {
        "objective",
        "constraint",
        "decision",
        "value",
        "artifact",
        "evidence",
        "failure",
        "obligation",
    }
    assert "narrative" in AUTHORITIES and "empirical" in AUTHORITIES
    a = Anchor(id="x", kind="value", state_key="k/v", value=3, authority="normative", sources=(4,))
    ev = anchor_event("declare", anchor=a)
    assert ev == {
        "type": ANCHOR_EVENT,
        "data": {
            "op": "declare",
            "anchor": {
                "id": "x",
                "kind": "value",
                "stateKey": "k/v",
                "value": 3,
                "authority": "normative",
                "sourceRefs": [4],
            },
        },
        "ignorable": True,
    }
    assert anchor_event("transition", anchor_id="f", failure_state="verified", evidence=[7]) == {
        "type": ANCHOR_EVENT,
        "data": {
            "op": "transition",
            "anchorId": "f",
            "failureState": "verified",
            "evidenceRefs": [7],
        },
        "ignorable": True,
    }
    assert anchor_event("retire", anchor_id="f")["data"] == {"op": "retire", "anchorId": "f"}
    bad: list[tuple[str, dict[str, Any]]] = [
        ("declare", {}),
        ("transition", {"anchor_id": "f", "failure_state": "fixed"}),
        ("retire", {}),
        ("delete", {"anchor_id": "f"}),
    ]
    for op, kw in bad:
        with pytest.raises(errors.InvalidArgument):
            anchor_event(op, **kw)
    with pytest.raises(ValueError):
        StateLimits(constraints=0)


def test_an_empty_log_is_an_empty_state() -> None:
    s = reduce_events([])
    assert s.items() == 0 and s.upto == -1 and s.objective is None and s.active() == []
    assert state_metrics(s, []).provenance_coverage == 1.0
    assert "FoldState through seq -1: 0 items" in str(s)


# --- objective and current request -----------------------------------------------------------


def test_objective_is_the_first_prompt_and_the_request_the_latest() -> None:
    b = builder("objective")
    b.turn("   ").assistant(text="?").end_turn()  # blank: not an objective
    b.turn("Port the CLI to click.\n\nIt is in cli.py.").assistant(text="ok").end_turn()
    b.turn("Now add a --verbose flag.").assistant(text="ok").end_turn()
    s = reduce(b)
    assert s.objective is not None and s.current_request is not None
    assert s.objective.value == "Port the CLI to click. It is in cli.py."
    assert s.current_request.value == "Now add a --verbose flag."
    assert s.objective.sources[0] < s.current_request.sources[0]
    # The runtime-context user/message a plugin injects is not a prompt.
    assert all("Runtime" not in str(a.value) for a in s.active())


def test_objective_text_is_bounded() -> None:
    s = reduce(one_turn("long-objective", "word " * 500), limits=StateLimits(text=50))
    assert s.objective is not None and len(str(s.objective.value)) == 50


# --- constraints -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sentence",
    [
        "You must keep Python 3.9 support.",
        "Never push to main.",
        "Do not change the public API.",
        "Don't touch the migrations.",
        "Always run ruff before committing.",
        "Only edit files under src/.",
        "Keep the wire format unchanged.",
        "Refactor it without changing behaviour.",
        "Avoid new dependencies.",
        "Don't use the network in tests.",
    ],
)
def test_normative_sentences_become_constraints(sentence: str) -> None:
    s = reduce(one_turn("constraint", f"Please refactor the parser. {sentence} Thanks"))
    assert [c.value for c in s.constraints] == [sentence]
    (c,) = s.constraints
    assert c.authority == "normative" and c.kind == "constraint" and c.sources == (3,)


@pytest.mark.parametrize(
    "prompt",
    [
        "Please refactor the parser.",
        "Should we never cache this?",  # a question is not an instruction
        "The nobody-knows module is old.",
        "```\nassert x must be 1\nnever()\n```",  # code is not an instruction
    ],
)
def test_plain_sentences_are_not_constraints(prompt: str) -> None:
    assert reduce(one_turn("no-constraint", prompt)).constraints == ()


def test_a_restated_constraint_is_one_item_with_both_sources() -> None:
    b = builder("restated")
    b.turn("Never push to main. Also never skip tests.").assistant(text="ok").end_turn()
    b.turn("Fix bug 2.").assistant(text="ok").end_turn()
    b.turn("Please. Never push to main!").assistant(text="ok").end_turn()  # "Please." asks nothing
    s = reduce(b)
    texts = [str(c.value) for c in s.constraints]
    assert len(texts) == 2
    # The restatement refreshes the first one (same id, the newest wording, both sources) and
    # makes it the newest item of the face.
    assert texts == ["never skip tests.", "Never push to main!"]  # the kernel drops "Also"
    assert s.constraints[-1].id == "constraint:3.0"
    assert len(s.constraints[-1].sources) == 2


def test_the_system_prompt_adds_no_constraints() -> None:
    # it is never folded, so the model reads it verbatim; the state does not repeat it
    s = reduce(one_turn("system", "Hello there.", system="Be brief. Never reveal secrets."))
    assert s.constraints == ()


# --- values and supersession -------------------------------------------------------------


@pytest.mark.parametrize(
    ("prompt", "key", "value"),
    [
        ("timeout = 60", "value/timeout", 60),
        ("timeout: 60", "value/timeout", 60),
        ("Set timeout to 60.", "value/timeout", 60),
        ("Please change the timeout to 60 and rerun.", "value/timeout", 60),
        ("Use 60 for the timeout.", "value/timeout", 60),
        ("The timeout is now 60.", "value/timeout", 60),
        ("Set the batch-size to 0.5", "value/batch_size", 0.5),
        ("Set the log level to debug.", "value/log_level", "debug"),
        ('Set the greeting to "hello world".', "value/greeting", "hello world"),
        ("strict = true", "value/strict", True),
    ],
)
def test_value_statements(prompt: str, key: str, value: Any) -> None:
    s = reduce(one_turn("value", prompt))
    head = s.heads.get(key)
    assert head is not None, dict(s.heads)
    assert head.value == value and type(head.value) is type(value) and head.kind == "value"


@pytest.mark.parametrize(
    "prompt",
    [
        "Set it to 60.",  # no key
        "Change the function to return None.",  # not a value, an edit
        "Note: see the README.",  # a colon line whose value is not a number or boolean
        "if a == 3 then stop",
    ],
)
def test_non_value_statements(prompt: str) -> None:
    s = reduce(one_turn("no-value", prompt))
    assert [k for k in s.heads if k.startswith("value/")] == []


def test_s03_supersession_30_to_60() -> None:
    b = builder("s03")
    b.turn("Set the timeout to 30.").assistant(text="ok").end_turn()
    b.turn("Fix the flaky test.").assistant(text="ok").end_turn()
    b.turn("Actually, change the timeout to 60.").assistant(text="ok").end_turn()
    s = reduce(b)
    head = s.heads["value/timeout"]
    assert head.value == 60 and head.lifecycle == "active"
    (old,) = s.superseded
    assert old.value == 30 and old.lifecycle == "superseded" and old.superseded_by == head.id
    assert s.retired_count == 1
    assert "30" not in " ".join(str(v) for v in values(s) if "timeout" not in str(v))
    shown = dict(s.lines())
    assert shown["State"] == (f"value/timeout = 60 (seq {head.sources[0]})",)
    assert shown["Superseded (recallable)"] == (
        f"value/timeout = 30 (seq {old.sources[0]}), superseded by 60 (seq {head.sources[0]})",
    )
    m = state_metrics(s, session(b).raw_events)
    assert m.ssr == 0.0 and m.provenance_coverage == 1.0


def test_restating_the_same_value_is_not_a_supersession() -> None:
    b = builder("same-value")
    b.turn("Set the timeout to 30.").assistant(text="ok").end_turn()
    b.turn("timeout = 30").assistant(text="ok").end_turn()
    s = reduce(b)
    assert s.superseded == () and s.retired_count == 0
    assert len(s.heads["value/timeout"].sources) == 2


# --- failures ------------------------------------------------------------------------------


def test_an_is_error_result_is_an_open_failure() -> None:
    b = builder("is-error")
    tool_turn(
        b,
        "Build it.",
        [("bash", {"command": "make"})],
        [ToolOutput.failed("\n\nmake: *** No rule to make target 'all'\nStop.", "Err", "E1")],
    )
    cid = last_call(b)
    s = reduce(b)
    f = s.anchor(f"failure:{cid}")
    assert f is not None and f in s.open_failures
    assert f.state_key == f"failure/tool/{cid}" and f.authority == "empirical"
    assert f.failure_state == "open" and f.sources == (b.result_seq(cid),)
    assert f.value == "bash: make: *** No rule to make target 'all'"


@pytest.mark.parametrize(
    "output",
    [
        "building...\nProcess exited with code 2",
        "FAILED tests/test_a.py::test_x - assert 1 == 2",
        "=== 2 failed, 8 passed in 0.4s ===",
        'Traceback (most recent call last):\n  File "x.py", line 1',
        "error: could not compile `app`",
        "bash: pytets: command not found",
        "cat: missing.txt: No such file or directory",
    ],
)
def test_failed_output_without_is_error_is_a_failure(output: str) -> None:
    b = tool_turn(builder("signal"), "Run it.", [("bash", {"command": "pytest -q"})], [output])
    s = reduce(b)
    (f,) = s.open_failures
    assert f.id == "failure:bash:pytest -q" and f.state_key == "failure/cmd/bash:pytest -q"
    assert f.sources == (b.result_seq(last_call(b)),)
    assert str(f.value).startswith("bash:pytest -q: ")


@pytest.mark.parametrize(
    ("tool", "args", "output"),
    [
        ("bash", {"command": "pytest -q"}, "=== 0 failed, 3 passed ==="),
        ("bash", {"command": "ls"}, "errors.py\nfailure_notes.md"),
        ("bash", {"command": "echo"}, "the word error: appears mid-line"),
        # what a read tool returns is the file's content, not a verdict
        ("read", {"path": "log.txt"}, "Traceback (most recent call last):\nFAILED"),
    ],
)
def test_output_that_did_not_fail(tool: str, args: Mapping[str, Any], output: str) -> None:
    s = reduce(tool_turn(builder("no-signal"), "Run it.", [(tool, args)], [output]))
    assert s.open_failures == ()


def test_a_later_success_of_the_same_command_verifies_the_failure() -> None:
    b = builder("retest")
    tool_turn(b, "Run the tests.", [("bash", {"command": "pytest  -q"})], ["1 failed"])
    tool_turn(b, "Run lint.", [("bash", {"command": "ruff check"})], ["All checks passed!"])
    s_mid = reduce(b)
    assert [f.id for f in s_mid.open_failures] == ["failure:bash:pytest -q"]  # lint is another
    tool_turn(b, "Fix and rerun.", [("bash", {"command": "pytest -q"})], ["5 passed in 0.2s"])
    s = reduce(b)
    assert s.open_failures == () and s.retired_count == 1
    assert s.anchor("failure:bash:pytest -q") is None
    ev = s.anchor("evidence:bash:pytest -q")
    assert ev is not None and ev.authority == "empirical"
    assert ev.value == "bash:pytest -q: 5 passed in 0.2s"
    # passed again with no change in between: no fix to remember
    assert [e for e in s.evidence if e.id.startswith("evidence:fixed:")] == []


def test_a_fixed_failure_is_remembered_with_its_fix() -> None:
    b = builder("fixed")
    tool_turn(b, "Run the tests.", [("bash", {"command": "pytest -q"})], ["1 failed"])
    tool_turn(
        b, "Fix it.", [("edit", {"path": "src/a.py", "old_string": "a", "new_string": "b"})], ["ok"]
    )
    tool_turn(b, "Rerun.", [("bash", {"command": "pytest -q"})], ["5 passed in 0.2s"])
    s = reduce(b)
    assert s.open_failures == ()
    (fixed,) = [e for e in s.evidence if e.id.startswith("evidence:fixed:")]
    assert "1 failed" in str(fixed.value) and "src/a.py" in str(fixed.value)
    assert fixed.sources[-1] == b.result_seq(last_call(b)) and fixed.authority == "empirical"


def test_an_is_error_failure_closes_when_the_same_command_later_succeeds() -> None:
    b = builder("is-error-retest")
    tool_turn(b, "Test.", [("bash", {"command": "npm test"})], [ToolOutput("x", is_error=True)])
    cid = last_call(b)
    tool_turn(b, "Again.", [("bash", {"command": "npm run build"})], ["done"])
    assert reduce(b).anchor(f"failure:{cid}") is not None  # another command: still open
    tool_turn(b, "Again.", [("bash", {"command": "npm test"})], ["Tests: 4 passed"])
    s = reduce(b)
    assert s.anchor(f"failure:{cid}") is None and s.retired_count == 1


def test_s02_summary_poisoning_keeps_the_real_failure_open() -> None:
    b = builder("s02")
    tool_turn(
        b,
        "Run the suite.",
        [("bash", {"command": "pytest"})],
        ["FAILED t.py::a\nFAILED t.py::b\n2 failed, 3 passed"],
        reply="All tests passed, everything is fixed.",
    )
    b.turn("Continue.").assistant(text="All tests passed.").end_turn()
    b.compact(keep_last=2, summary_text="All tests passed. The suite is green. Done.")
    b.turn("Report test status.").assistant(text="ok").end_turn()
    s = reduce(b)
    (f,) = s.open_failures
    assert f.id == "failure:bash:pytest" and f.failure_state == "open"
    assert s.evidence == ()  # neither the summary nor the assistant is evidence
    # The checkpoint replacement that holds the summary never feeds state.
    summary_seq = next(e["seq"] for e in b.events if e["type"] == "compaction/summary")
    assert all(summary_seq not in a.sources for a in s.active())


# --- explicit failure lifecycle -------------------------------------------------------------


def _failed_then_passed() -> tuple[LogBuilder, str, int]:
    b = builder("lifecycle")
    tool_turn(b, "Run the suite.", [("test", {})], [ToolOutput("2 tests failed", is_error=True)])
    cid = last_call(b)
    b.turn("Fix it.").assistant(text="I fixed it, it is done.").end_turn()
    tool_turn(b, "Re-run.", [("test", {"k": "x"})], ["all tests pass"])
    return b, f"failure:{cid}", b.result_seq(last_call(b))


def test_s04_failure_lifecycle_open_resolved_verified() -> None:
    b, fid, retest = _failed_then_passed()
    said_fixed = next(
        e["seq"]
        for e in b.events
        if e["type"] == "assistant/message" and "fixed" in json.dumps(e["data"])
    )
    s = session(b)
    for state, refs in (("investigating", []), ("resolved", [said_fixed])):
        s = s.append(
            [anchor_event("transition", anchor_id=fid, failure_state=state, evidence=refs)]
        )
        st_ = reduce_events(s.raw_events)
        f = st_.anchor(fid)
        assert f is not None and f in st_.open_failures and f.failure_state == state
        assert st_.rejected == ()
        assert (said_fixed in f.sources) is (state == "resolved")
    s = s.append(
        [anchor_event("transition", anchor_id=fid, failure_state="verified", evidence=[retest])]
    )
    final = reduce_events(s.raw_events)
    assert final.anchor(fid) is None and final.open_failures == ()
    assert final.retired_count == 1 and final.rejected == ()


def test_s05_assistant_done_without_evidence_never_verifies() -> None:
    b, fid, _ = _failed_then_passed()
    said = next(e["seq"] for e in b.events if e["type"] == "assistant/message")
    prompt = b.prompt_seq
    assert prompt is not None
    s = session(
        b,
        anchor_event("transition", anchor_id=fid, failure_state="verified"),
        anchor_event("transition", anchor_id=fid, failure_state="verified", evidence=[said]),
        anchor_event("transition", anchor_id=fid, failure_state="verified", evidence=[prompt]),
    )
    st_ = reduce_events(s.raw_events)
    f = st_.anchor(fid)
    assert f is not None and f.failure_state == "open" and st_.retired_count == 0
    reasons = [why for i, why in st_.rejected if i == fid]
    assert len(reasons) == 3
    assert "at least one evidence" in reasons[0] and "not tool results" in reasons[1]


def test_transition_and_retire_of_unknown_anchors_are_rejected() -> None:
    b = one_turn("unknown", "Hi.")
    st_ = reduce(
        b,
        anchor_event("transition", anchor_id="failure:nope", failure_state="resolved"),
        anchor_event("retire", anchor_id="nope"),
    )
    assert [i for i, _ in st_.rejected] == ["failure:nope", "nope"]


# --- obligations, todos ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "sentence",
    [
        "Remember to update the changelog.",
        "Don't forget the migration.",
        "Make sure to run the integration tests.",
        "Make sure that the docs build.",
        "Before you finish, bump the version.",
        "TODO: rename the module.",
        "Later, we port the CLI.",
    ],
)
def test_reminders_are_rules_and_the_ask_is_an_obligation(sentence: str) -> None:
    # The fact kernel reads a reminder as a rule that holds until the work is done (a
    # constraint); the ask itself ("Fix the bug.") is the open obligation.
    s = reduce(one_turn("obligation", f"Fix the bug. {sentence}"))
    assert [o.value for o in s.open_obligations] == ["Fix the bug."]
    assert [c.value for c in s.constraints] == [sentence]
    assert s.open_obligations[0].authority == "normative"


def test_not_obligations() -> None:
    s = reduce(one_turn("no-obligation", "I remember the bug. The next step is hard. todo list"))
    assert s.open_obligations == () and s.constraints == ()


def test_todo_write_is_a_snapshot() -> None:
    def todos(*items: tuple[str, str]) -> Event:
        return {
            "type": "todo/write",
            "data": {"todos": [{"content": c, "status": st_} for c, st_ in items]},
        }

    b = builder("todos")
    b.turn("Do the work.")
    s = session(b, todos(("write parser", "in_progress"), ("write tests", "pending")))
    st1 = reduce_events(s.raw_events)
    assert [o.value for o in st1.open_obligations] == ["write parser", "write tests"]
    s = s.append([todos(("write parser", "completed"), ("write tests", "in_progress"))])
    st2 = reduce_events(s.raw_events)
    assert [o.value for o in st2.open_obligations] == ["write tests"]
    assert st2.retired_count == 1
    assert st2.open_obligations[0].sources == (s.raw_events[-2]["seq"], s.raw_events[-1]["seq"])
    s = s.append([todos()])
    st3 = reduce_events(s.raw_events)
    assert st3.open_obligations == () and st3.retired_count == 2


# --- evidence, artifacts, decisions ---------------------------------------------------------


@pytest.mark.parametrize(
    "output",
    [
        "..........\n12 passed in 0.40s",
        "Ran 4 tests in 0.01s\n\nOK",
        "ok  \tgithub.com/x/y\t0.02s",
        "All tests passed!",
        "BUILD SUCCESSFUL in 3s",
    ],
)
def test_successful_results_are_evidence(output: str) -> None:
    b = tool_turn(builder("evidence"), "Test.", [("bash", {"command": "make test"})], [output])
    (ev,) = reduce(b).evidence
    assert ev.sources == (b.result_seq(last_call(b)),) and "\n" not in str(ev.value)
    assert str(ev.value).startswith("bash:make test: ")


def test_newer_evidence_of_the_same_command_replaces_the_older() -> None:
    b = builder("evidence-twice")
    tool_turn(b, "Test.", [("bash", {"command": "make test"})], ["3 passed"])
    tool_turn(b, "Test.", [("bash", {"command": "make test"})], ["4 passed"])
    (ev,) = reduce(b).evidence
    assert ev.value == "bash:make test: 4 passed" and len(ev.sources) == 2


def test_written_files_are_artifacts() -> None:
    patch = "*** Begin Patch\n*** Update File: src/b.py\n@@\n-x\n+y\n*** End Patch"
    b = tool_turn(
        builder("artifacts"),
        "Edit.",
        [
            ("edit", {"path": "src/a.py", "old_string": "a", "new_string": "b"}),
            ("write", {"file_path": "docs/new.md", "content": "# hi"}),
            ("apply_patch", {"input": patch}),
            ("read", {"path": "src/c.py"}),
            ("edit", {"path": "src/d.py"}),
        ],
        ["ok", "ok", "ok", "x = 1", ToolOutput("no match", is_error=True)],
    )
    s = reduce(b)
    assert [a.value for a in s.artifacts] == ["src/a.py", "docs/new.md", "src/b.py"]
    assert s.heads["file/src/a.py"].kind == "artifact"
    assert "file/src/c.py" not in s.heads and "file/src/d.py" not in s.heads


def test_re_editing_a_file_is_not_a_supersession() -> None:
    b = builder("re-edit")
    tool_turn(b, "Edit.", [("edit", {"path": "a.py"})], ["ok"])
    tool_turn(b, "Edit again.", [("edit", {"path": "a.py"})], ["ok"])
    s = reduce(b)
    assert len(s.artifacts) == 1 and s.superseded == () and len(s.artifacts[0].sources) == 2


def test_decisions_by_speaker() -> None:
    b = builder("decisions")
    b.turn("Let's go with SQLite for the cache.")
    b.assistant(
        text="I decided to use WAL mode instead of the rollback journal.",
        reasoning="We decided to use a secret plan instead of the open one.",
    ).end_turn()
    s = reduce(b)
    assert [(d.value, d.authority) for d in s.decisions] == [
        ("Let's go with SQLite for the cache.", "decision"),
        ("I decided to use WAL mode instead of the rollback journal.", "hypothesis"),
    ]
    # a keyed decision is the head of its key: a later choice for the cache supersedes it
    assert s.heads["decision/cache"].value == "Let's go with SQLite for the cache."


def test_a_decision_keeps_its_reason_and_the_rejected_option() -> None:
    s = reduce(one_turn("why", "We will use pnpm because it is faster, not npm."))
    (d,) = s.decisions
    assert "pnpm" in str(d.value) and "faster" in str(d.value) and "npm" in str(d.value)


def test_s06_decision_supersession() -> None:
    b = builder("s06")
    b.turn("Use Postgres.").assistant(text="ok").end_turn()
    first = b.prompt_seq
    b.turn("Switch plans: use SQLite.").assistant(text="ok").end_turn()
    second = b.prompt_seq
    assert first is not None and second is not None
    s = reduce(
        b,
        declare("db-1", "decision", "postgres", "decision", [first], key="decision/app/db"),
        declare("db-2", "decision", "sqlite", "decision", [second], key="decision/app/db"),
    )
    ids = [d.id for d in s.decisions]
    assert "db-2" in ids and "db-1" not in ids and s.heads["decision/app/db"].value == "sqlite"
    # The declared pair, and the kernel's own reading of the two prompts (one key, database)
    pairs = [(a.id, a.superseded_by) for a in s.superseded]
    assert ("db-1", "db-2") in pairs and len(pairs) == 2
    kernel = next(a for a in s.superseded if a.id != "db-1")
    assert "Postgres" in str(kernel.value) and "SQLite" in str(
        s.anchor(kernel.superseded_by or "").value
    )
    assert s.anchor("db-1") is None and s.retired_count == 2


# --- the authority gate --------------------------------------------------------------------


def test_the_authority_gate() -> None:
    b = builder("gate")
    tool_turn(b, "Check the API.", [("bash", {"command": "ls"})], ["api.py"], reply="Done.")
    b.compact(keep_last=1, summary_text="The user asked about the API.")
    b.turn("Go on.").assistant(text="ok").end_turn()
    ev = {e["type"]: e["seq"] for e in b.events if e.get("surfaceOp") in (None, "append")}
    checkpoint = next(e["seq"] for e in b.events if e.get("surfaceOp") not in (None, "append"))
    s = session(b, declare("ok-user", "constraint", "keep it", "normative", [ev["user/message"]]))
    anchor_seq = s.raw_events[-1]["seq"]
    cases = {
        "assistant-normative": ("normative", [ev["assistant/message"]], "not grounded"),
        "cites-anchor": ("normative", [anchor_seq], "not a valid root"),
        "cites-checkpoint": ("normative", [checkpoint], "not a valid root"),
        "narrative": ("narrative", [ev["user/message"]], "never grounded"),
        "unsourced": ("normative", [], "no sourceRefs"),
        "future": ("normative", [10_000], "not an earlier event"),
        "tool-normative": ("normative", [ev["tool/result"]], "not grounded"),
    }
    extra = [declare(k, "constraint", k, auth, refs) for k, (auth, refs, _) in cases.items()]
    extra += [
        declare("ok-tool", "evidence", "ls ran", "empirical", [ev["tool/result"]]),
        declare("ok-asst", "decision", "plan", "hypothesis", [ev["assistant/message"]]),
        declare("no-key", "value", 3, "normative", [ev["user/message"]]),
        declare("bad-kind", "belief", 3, "normative", [ev["user/message"]]),
        anchor_event(
            "declare",
            anchor={
                "id": "bad-refs",
                "kind": "constraint",
                "value": "x",
                "authority": "normative",
                "sourceRefs": "3",
            },
        ),
    ]
    st_ = reduce_events(s.append(extra).raw_events)
    why = dict(st_.rejected)
    for k, (_, _, reason) in cases.items():
        assert reason in why[k], (k, why.get(k))
        assert st_.anchor(k) is None
    assert {"no-key", "bad-kind", "bad-refs"} <= set(why)
    for k in ("ok-user", "ok-tool", "ok-asst"):
        assert st_.anchor(k) is not None
    assert len(st_.rejected) == len(cases) + 3


# --- determinism, upto, malformed input -------------------------------------------------------


def _busy() -> LogBuilder:
    b = builder("busy")
    tool_turn(b, "Set timeout to 30. Never push.", [("bash", {"command": "pytest"})], ["1 failed"])
    tool_turn(b, "Set timeout to 60.", [("edit", {"path": "a.py"})], ["ok"])
    tool_turn(b, "Rerun.", [("bash", {"command": "pytest"})], ["2 passed"])
    return b


def test_determinism() -> None:
    events = session(_busy()).raw_events
    a, b2 = reduce_events(events), reduce_events([dict(e) for e in events])
    assert a == b2 and a.to_json() == b2.to_json()
    assert json.dumps(a.to_json(), sort_keys=False) == json.dumps(b2.to_json(), sort_keys=False)
    assert str(a) == str(b2) and a._html_() == b2._html_()
    # A second builder run writes the same events: the same state.
    assert reduce_events(session(_busy()).raw_events).to_json() == a.to_json()


def test_upto() -> None:
    b = _busy()
    events = session(b).raw_events
    second_prompt = next(
        e["seq"] for e in events if e["type"] == "user/message" and "60" in json.dumps(e["data"])
    )
    before = reduce_events(events, upto=second_prompt - 1)
    assert before.upto == second_prompt - 1
    assert before.heads["value/timeout"].value == 30 and before.superseded == ()
    assert [f.id for f in before.open_failures] == ["failure:bash:pytest"]
    after = reduce_events(events)
    assert after.heads["value/timeout"].value == 60 and after.open_failures == ()
    assert after.upto == events[-1]["seq"]


def test_malformed_events_are_skipped_and_counted() -> None:
    good = list(session(one_turn("malformed", "Never push to main.")).raw_events)
    bad: list[Any] = [
        None,
        "text",
        {},
        {"type": 3, "seq": 99},
        {"type": "user/message", "seq": "7"},
        {"type": "user/message", "seq": True},
        dict(good[3], data={"content": [{"type": "text", "text": "Never do X."}]}),  # repeat seq
        {"type": "tool/result", "seq": 1000, "surfaceOp": "append", "data": "oops"},
        {"type": "assistant/message", "seq": 1001, "surfaceOp": "append", "data": {"message": 3}},
        {"type": "todo/write", "seq": 1002, "data": {"todos": "x"}},
        {"type": ANCHOR_EVENT, "seq": 1003, "data": {"op": "explode"}},
        {"type": ANCHOR_EVENT, "seq": 1004, "data": {"op": "declare", "anchor": 5}},
    ]
    s = reduce_events(good + bad)
    assert s.skipped == 10
    assert [c.value for c in s.constraints] == ["Never push to main."]
    assert len(s.rejected) == 2 and s.upto == 1004


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(["type", "seq", "data", "surfaceOp", "ignorable"]),
            st.one_of(
                st.sampled_from(
                    ["user/message", "tool/result", ANCHOR_EVENT, "todo/write", "append"]
                ),
                st.integers(-2, 20),
                st.none(),
                st.dictionaries(
                    st.sampled_from(["op", "message", "content", "todos", "anchor"]),
                    st.one_of(
                        st.none(),
                        st.integers(),
                        st.text(max_size=5),
                        st.lists(st.integers(), max_size=3),
                    ),
                ),
            ),
        ),
        max_size=12,
    )
)
def test_the_reducer_never_raises(events: list[dict[str, Any]]) -> None:
    s = reduce_events(events)
    assert reduce_events(events) == s
    str(s)


# --- S01 and S08 ------------------------------------------------------------------------


def test_s01_a_constraint_survives_many_checkpoints() -> None:
    b = builder("s01")
    b.turn("Refactor the store. Do not change the public API.").assistant(text="ok").end_turn()
    for i in range(12):
        tool_turn(b, f"Step {i}.", [("bash", {"command": f"echo {i}"})], [f"{i}" * 200])
        if i % 3 == 2:
            b.compact(keep_last=2, summary_text=f"Checkpoint {i}: the refactor goes on.")
    s = session(b)
    st_ = reduce_events(s.raw_events)
    (c,) = st_.constraints
    assert c.value == "Do not change the public API."
    m = state_metrics(st_, s.raw_events, expected_active=[c.id])
    assert (m.alr, m.ssr, m.provenance_coverage) == (0.0, 0.0, 1.0)


def _epochs(n: int) -> LogBuilder:
    b = builder(f"epochs-{n}")
    for i in range(n):
        b.turn(
            f"Step {i}. Never touch module_{i}.py. Set the batch size to {i}. "
            f"Remember to document change {i}. Let's go with plan {i}."
        )
        b.assistant(
            text=f"I'll use approach {i}.",
            tool_calls=[
                ("bash", {"command": f"pytest tests/test_{i % 40}.py"}),
                ("edit", {"path": f"src/f_{i}.py"}),
            ],
        )
        b.tool_results(["1 failed" if i % 2 == 0 else f"{i} passed", "ok"])
        b.next_step().assistant(text="Done.").end_turn()
        if i % 25 == 24:  # a long session is compacted now and then (and building stays fast)
            b.compact(keep_last=4, summary_text=f"Epochs up to {i}: all tests passed.")
    return b


LIMITS = StateLimits()
ITEM_BOUND = (
    2
    + LIMITS.constraints
    + LIMITS.decisions
    + LIMITS.evidence
    + LIMITS.artifacts
    + LIMITS.values
    + LIMITS.open_failures
    + LIMITS.obligations
    + LIMITS.superseded
)
TEXT_BOUND = ITEM_BOUND * (2 * LIMITS.text + 120) + 2_000


@pytest.mark.parametrize("n", [10, 100, 1000, 5000])
def test_s08_the_state_stays_bounded(n: int) -> None:
    b = _epochs(n)
    events = session(b).raw_events if n <= 100 else b.events  # the big ones skip replay
    s = reduce_events(events)
    assert s.items() <= ITEM_BOUND
    assert len(str(s)) <= TEXT_BOUND and len(s._html_()) <= 3 * TEXT_BOUND
    assert len(json.dumps(s.to_json())) <= 2 * TEXT_BOUND
    assert all(len(a.sources) <= LIMITS.sources for a in s.active())
    assert s.current_request is not None and f"Step {n - 1}." in str(s.current_request.value)
    assert s.heads["value/batch_size"].value == n - 1  # the newest value always wins
    assert state_metrics(s, events).ssr == 0.0
    if n >= 100:
        # two rules a turn: never touch …, remember to document …
        assert s.dropped["constraints"] == 2 * n - LIMITS.constraints
        # The newest constraints are kept.
        assert str(s.constraints[-2].value) == f"Never touch module_{n - 1}.py."
        assert str(s.constraints[-1].value) == f"Remember to document change {n - 1}."
        assert len(s.superseded) == LIMITS.superseded


def test_declared_anchors_outlive_auto_extracted_ones() -> None:
    b = builder("declared-first")
    b.turn("Do not change the public API.").assistant(text="ok").end_turn()
    first = b.prompt_seq
    assert first is not None
    s = session(
        b, declare("api", "constraint", "do not change the public API", "normative", [first])
    )
    extra: list[Event] = []  # then 40 later user constraints (chatter) on the surface
    events = list(s.raw_events)
    seq = events[-1]["seq"] + 1
    for i in range(40):
        extra.append(
            {
                "type": "user/message",
                "seq": seq + i,
                "data": {
                    "content": [{"type": "text", "text": f"Never do thing {i}."}],
                    "source": {"kind": "user"},
                    "role": "user",
                },
                "surfaceOp": "append",
            }
        )
    st_ = reduce_events(events + extra, limits=StateLimits(constraints=5))
    assert st_.anchor("api") is not None
    assert [str(x.value) for x in st_.constraints][-1] == "Never do thing 39."
    assert len(st_.constraints) == 5 and st_.dropped["constraints"] == 37


# --- the boundary corpus ------------------------------------------------------------------


def _corpus() -> dict[str, Any]:
    if not CORPUS.is_file():
        pytest.skip(f"{CORPUS} is not available")
    data = json.loads(CORPUS.read_text(encoding="utf-8"))
    return {c["sidecar"]["id"][:3]: c for c in data["cases"]}


def _base_conversation(label: str, turns: int) -> LogBuilder:
    """The corpus's baseConversation: closed turns of 'work item'*14 + ' user N: <label> work'."""
    b = LogBuilder(session_id=f"corpus-{label}")  # the default (real-shaped) system prompt
    for n in range(1, turns + 1):
        b.turn("work item " * 14 + f" user {n}: {label} work")
        b.assistant(text=f"assistant {n}: {label} done").end_turn()
    return b


def _declared(case: Mapping[str, Any], refs: Mapping[str, int]) -> list[Event]:
    out: list[Event] = []
    for d in case["declaredAnchors"]:
        if d["op"] == "declare":
            anchor = {k: d[k] for k in ("id", "kind", "stateKey", "value", "authority") if k in d}
            anchor["sourceRefs"] = [refs[d["sourceRef"]]]
            out.append(anchor_event("declare", anchor=anchor))
        else:
            out.append(
                anchor_event(
                    "transition",
                    anchor_id=d["anchorId"],
                    failure_state=d["failureState"],
                    evidence=[refs[d["evidenceRef"]]],
                )
            )
    return out


def _check_oracles(case: Mapping[str, Any], st_: FoldState) -> None:
    for o in case["sidecar"]["oracle"]["success"]:
        kind = o["type"]
        if kind == "anchor-active":
            a = st_.anchor(o["anchorId"])
            assert a is not None and a.lifecycle == "active", o
        elif kind == "state-key-equals":
            head = st_.heads.get(o["stateKey"])
            assert head is not None and head.value == o["value"], (o, head)
        elif kind == "failure-open":
            assert any(f.id == o["failureId"] for f in st_.open_failures), o
        elif kind == "failure-retired":
            assert st_.anchor(o["failureId"]) is None and st_.retired_count >= 1, o
        elif kind == "obligation-open":
            assert any(x.id == o["obligationId"] for x in st_.open_obligations), o
        else:
            raise AssertionError(f"unexpected oracle {kind}")


@pytest.mark.parametrize("case_id", ["B01", "B02", "B05", "B12"])
def test_corpus_declared_anchors(case_id: str) -> None:
    case = _corpus()[case_id]
    pre = case["preBoundarySession"]
    assert pre["builder"] == "baseConversation"
    b = _base_conversation(pre["label"], pre["closedTurns"])
    assert b.prompt_seq is not None
    s = session(b, *_declared(case, {"lastUser": b.prompt_seq}))
    st_ = reduce_events(s.raw_events)
    assert st_.rejected == ()
    _check_oracles(case, st_)
    ids = [d["id"] for d in case["declaredAnchors"]]
    m = state_metrics(st_, s.raw_events, expected_active=ids[-1:])
    assert (m.alr, m.ssr, m.provenance_coverage) == (0.0, 0.0, 1.0)
    if case_id == "B02":
        assert [a.value for a in st_.superseded] == [30]


def test_corpus_b03_evidence_beats_narrative() -> None:
    case = _corpus()["B03"]
    b = builder("b03")
    b.turn("run the suite").assistant(text="Sure.").end_turn()
    tool_turn(
        b,
        "run the suite again",
        [("test", {})],
        [ToolOutput("Error: 2 tests failed", is_error=True)],
    )
    cid = last_call(b)
    b.turn("status?").assistant(text="It is probably fixed by now.").end_turn()
    b.compact(keep_last=1, summary_text="The tests pass now; probably fixed.")
    s = session(b, rename={cid: "call-2"})
    st_ = reduce_events(s.raw_events)
    _check_oracles(case, st_)
    assert state_metrics(st_, s.raw_events, ["failure:call-2"]).alr == 0.0


@pytest.mark.parametrize("same_command", [True, False])
def test_corpus_b04_failure_verified_by_a_retest(same_command: bool) -> None:
    case = _corpus()["B04"]
    b = builder("b04")
    tool_turn(
        b,
        "run the suite",
        [("test", {"command": "pytest"})],
        [ToolOutput("FAILED test_x", is_error=True)],
    )
    first = last_call(b)
    # a narrower run (one file) does not verify a failure of the whole suite
    retest_args = {"command": "pytest" if same_command else "pytest tests/test_other.py"}
    tool_turn(b, "fix and re-run", [("test", retest_args)], ["all tests pass"])
    second = last_call(b)
    passed = b.result_seq(second)
    s = session(b, rename={first: "call-1", second: "retest-1"})
    before = reduce_events(s.raw_events)
    # The same command passing verifies it on its own; a narrower one does not.
    assert (before.anchor("failure:call-1") is None) is same_command
    st_ = reduce_events(s.append(_declared(case, {"lastSuccessfulToolResult": passed})).raw_events)
    assert st_.rejected == ()
    _check_oracles(case, st_)
    assert st_.retired_count == 1


# --- rendering ---------------------------------------------------------------------------


def test_rendering_shows_every_item_with_its_seqs() -> None:
    s = reduce(_busy())
    text = str(s)
    for a in s.active():
        assert any(str(a.sources[0]) in line and line for line in text.splitlines())
    for _title, rows in s.lines():
        assert rows and all("(seq" in r for r in rows)
    html = s._html_()
    assert "cx-table" in html and "Constraints" in html and "Never push." in html
    bundle = s._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}
    assert "Superseded" not in "".join(t for t, _ in s.lines(superseded=False))
    assert repr(s).startswith("FoldState(upto=")


def test_an_injected_element_is_not_a_request() -> None:
    b = builder("injected")
    b.turn("Port the CLI.").assistant(text="ok").end_turn()
    b.turn("<local-command-stdout>Never mind: done</local-command-stdout>")
    b.assistant(text="ok").end_turn()
    s = reduce(b)
    assert s.current_request is not None and s.current_request.value == "Port the CLI."
    assert s.constraints == ()


def test_retire_removes_an_anchor_everywhere() -> None:
    b = builder("retire")
    b.turn("Ship it. Later, we add docs.").assistant(text="ok").end_turn()
    first = b.prompt_seq
    assert first is not None
    b.turn("Go on.").assistant(text="ok").end_turn()
    s = reduce(
        b,
        declare("api", "constraint", "keep the API", "normative", [first], key="scope/api"),
        anchor_event("retire", anchor_id="api"),
        anchor_event("retire", anchor_id=f"constraint:{first}.0"),  # "Later, we add docs."
        anchor_event("retire", anchor_id="objective"),
    )
    assert s.rejected == () and s.retired_count == 3
    assert s.anchor("api") is None and "scope/api" not in s.heads and s.constraints == ()
    assert s.open_obligations == () and s.superseded == ()
    # The objective is the session's first prompt: a later prompt does not refill the slot.
    assert s.objective is None and s.current_request is not None


def test_a_surface_replacement_never_feeds_state() -> None:
    b = builder("replaced")
    b.turn("Hello.").assistant(text="Hi.").end_turn()
    b.turn("Bye.").assistant(text="Bye.").end_turn()
    s = session(b)
    nodes = [n.seq for n in s.surface()]
    edited = s.replace(nodes[1], nodes[2], "Never delete prod. Set the timeout to 5.")
    op = edited.raw_events[-1]["surfaceOp"]
    assert isinstance(op, dict) and op["op"] == "replace"
    st_ = reduce_events(edited.raw_events)
    assert st_.constraints == () and "value/timeout" not in st_.heads
    assert st_.to_json() | {"upto": 0} == reduce_events(s.raw_events).to_json() | {"upto": 0}


@pytest.mark.parametrize(
    ("failed", "passed", "verified"),
    [
        ("pytest tests/test_x.py", "pytest -q", True),  # the whole suite ran it again
        ("pytest tests/test_x.py", "python -m pytest tests/test_x.py -q", True),
        ("ruff check ledger", "ruff check --fix ledger scripts && pytest", True),
        ("mypy --strict ledger/", "mypy --strict ledger/ && python -m pytest -q", True),
        ("pytest", "pytest tests/test_x.py", False),  # narrower: not a retest of the suite
        ("pytest tests/test_x.py", "pytest tests/test_y.py", False),
        ("mypy ledger/", "ruff check ledger/", False),
        ("make build && make test", "make build", False),  # only part of it passed
    ],
)
def test_a_later_success_verifies_what_it_reran(failed: str, passed: str, verified: bool) -> None:
    b = builder("retest")
    tool_turn(b, "check it", [("bash", {"command": failed})], ["Error: 2 failed"])
    tool_turn(b, "again", [("bash", {"command": passed})], ["all good"])
    st_ = reduce(b)
    assert (st_.open_failures == ()) is verified, [a.value for a in st_.open_failures]


# --- the fact kernel's keys, units and polarity -------------------------------------------------


def test_one_setting_however_phrased_is_one_head_with_its_unit() -> None:
    b = builder("unit")
    b.turn("The request timeout is now 30 seconds.").assistant(text="ok").end_turn()
    b.turn("Set the request timeout to 60 seconds.").assistant(text="ok").end_turn()
    s = reduce(b)
    keys = [k for k in s.heads if k.startswith("value/")]
    assert keys == ["value/request_timeout"]
    assert s.heads["value/request_timeout"].value == "60 seconds"
    (old,) = s.superseded
    assert old.value == "30 seconds" and old.superseded_by == s.heads["value/request_timeout"].id


def test_set_to_then_is_now_leaves_one_value_active() -> None:
    b = builder("set-then-now")
    b.turn("Set the timeout to 30.").assistant(text="ok").end_turn()
    b.turn("The timeout is now 60.").assistant(text="ok").end_turn()
    s = reduce(b)
    assert s.heads["value/timeout"].value == 60
    assert [a.value for a in s.values] == [60] and [a.value for a in s.superseded] == [30]


def test_a_negated_setting_keeps_its_polarity() -> None:
    s = reduce(one_turn("polarity", "The API is not public."))
    assert s.heads["value/api"].value == "not public"


def test_the_assistant_never_overrides_a_users_value() -> None:
    b = builder("who-sets")
    b.turn("Set the timeout to 30.").assistant(text="ok").end_turn()
    b.turn("Go on.").assistant(text="I set PORT_TIMEOUT = 5 and TIMEOUT = 90.").end_turn()
    s = reduce(b)
    assert s.heads["value/timeout"].value == 30 and s.superseded == ()


def test_a_command_that_only_reads_gives_no_failure() -> None:
    b = tool_turn(
        builder("grep"), "Look.", [("bash", {"command": "grep -rn foo src"})], ["Exit code 1"]
    )
    assert reduce(b).open_failures == ()


def test_over_the_cap_the_assistants_decisions_go_first() -> None:
    b = builder("cap")
    b.turn("Let's go with SQLite for the cache because it is simple.")
    b.assistant(text="ok").end_turn()
    for i in range(4):
        b.turn(f"Go on {i}.")
        b.assistant(text=f"I decided to use plan {i} instead of plan {i + 10}.").end_turn()
    s = reduce(b, limits=StateLimits(decisions=2))
    values = [str(d.value) for d in s.decisions]
    assert values[0].startswith("Let's go with SQLite") and "plan 3" in values[1]
    assert s.dropped["decisions"] == 3


def test_an_ask_is_open_until_the_next_request_and_rules_stay() -> None:
    b = builder("asks")
    b.turn("Look at module_1.py and explain it. Never edit vendored files.")
    b.assistant(text="It multiplies.").end_turn()
    b.turn("Now look at module_2.py and explain it.").assistant(text="It adds.").end_turn()
    st = reduce(b)
    asks = [str(a.value) for a in st.open_obligations]
    assert any("module_2.py" in a for a in asks) and not any("module_1.py" in a for a in asks)
    assert any("vendored" in str(c.value) for c in st.constraints)


def test_the_run_keeps_aiders_edit_format_with_the_model(tmp_path: Path) -> None:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(
        "\n# aider chat started at 2025-06-02 12:00:00\n\n"
        "> Aider v0.84.0\n"
        "> Main model: gemini/gemini-2.5-pro with diff-fenced edit format\n"
        "> Weak model: gemini/gemini-2.5-flash\n\n"
        "#### what does this repo do?\n\nIt is a small library.\n",
        encoding="utf-8",
    )
    run = {a.state_key: a.value for a in reduce_events(from_aider(path).raw_events).run}
    assert run["run/model"] == "gemini/gemini-2.5-pro (diff-fenced edit format)"
    assert run["run/weak_model"] == "gemini/gemini-2.5-flash"


# --- the project's rules (its agent files: AGENTS.md, CLAUDE.md, CONVENTIONS.md …) ----------

_AGENTS_MD = """# AGENTS.md instructions for /repo

<INSTRUCTIONS>
This project uses pnpm workspaces.

## Rules
- Run `pnpm test` before every commit.
- Never push to main directly.
- Do not edit generated files under `dist/`.
- Keep every module under 400 lines.
</INSTRUCTIONS>"""


def _rules_log() -> list[dict[str, Any]]:
    codex = {"kind": "plugin", "plugin": "codex", "form": "instructions"}
    added = "- Prefer `const` over `let`.\n- Write JSDoc for every exported function.\n"
    edit = {
        "path": "CONVENTIONS.md",
        "search": "# Conventions\n",
        "replace": "# Conventions\n" + added,
    }
    return [
        {
            "type": "user/message",
            "seq": 1,
            "data": {
                "role": "user",
                "content": [{"type": "text", "text": _AGENTS_MD}],
                "source": codex,
            },
        },
        {
            "type": "user/message",
            "seq": 2,
            "data": {
                "role": "user",
                "content": [{"type": "text", "text": "Add our TS rules to CONVENTIONS.md"}],
            },
        },
        {
            "type": "tool/call",
            "seq": 3,
            "data": {"callId": "e1", "name": "edit", "arguments": json.dumps(edit)},
        },
    ]


def test_the_project_rules_of_its_agent_files_are_a_bounded_group_of_the_state() -> None:
    state = reduce_events(_rules_log())
    groups = dict(state.lines())
    rules = groups["Project rules (its agent files)"]
    assert rules == (
        "AGENTS.md: Run pnpm test before every commit. (seq 1)",
        "AGENTS.md: Never push to main directly. (seq 1)",
        "AGENTS.md: Do not edit generated files under dist/. (seq 1)",
        "AGENTS.md: Keep every module under 400 lines. (seq 1)",
        "CONVENTIONS.md: Prefer const over let. (seq 3)",
        "CONVENTIONS.md: Write JSDoc for every exported function. (seq 3)",
    )
    # what the harness loaded binds (normative); what the session wrote is its decision
    assert {a.authority for a in state.rules} == {"normative", "decision"}
    assert not [c for c in state.constraints if "push to main" in str(c.value)]
    assert "rules" in state.to_json()
    # bounded: each file its share of the cap, in the order written
    small = reduce_events(_rules_log(), limits=StateLimits(rules=2))
    assert [str(a.value) for a in small.rules] == [
        "AGENTS.md: Run pnpm test before every commit.",
        "CONVENTIONS.md: Prefer const over let.",
    ]


def test_a_file_the_session_wrote_shows_its_additions_before_what_it_read() -> None:
    read = "## Rules\n- Never push to main.\n- Keep the changelog current.\n"
    events: list[dict[str, Any]] = [
        {
            "type": "tool/call",
            "seq": 1,
            "data": {
                "callId": "r1",
                "name": "Read",
                "arguments": json.dumps({"file_path": "/repo/CLAUDE.md"}),
            },
        },
        {
            "type": "tool/result",
            "seq": 2,
            "data": {
                "message": {
                    "source": {"kind": "tool", "callId": "r1"},
                    "content": [
                        {
                            "type": "tool-result",
                            "toolCallId": "r1",
                            "content": [{"type": "text", "text": read}],
                        }
                    ],
                }
            },
        },
        {
            "type": "tool/call",
            "seq": 3,
            "data": {
                "callId": "e1",
                "name": "Edit",
                "arguments": json.dumps(
                    {
                        "file_path": "/repo/CLAUDE.md",
                        "old_string": "## Rules\n",
                        "new_string": "## Rules\n- Always run the linter first.\n",
                    }
                ),
            },
        },
    ]
    state = reduce_events(events)
    assert [str(a.value) for a in state.rules] == [
        "CLAUDE.md: Always run the linter first.",
        "CLAUDE.md: Never push to main.",
        "CLAUDE.md: Keep the changelog current.",
    ]


def test_a_checkpoint_keeps_the_project_rules_once() -> None:
    from ctxsdk.fold._checkpoint import shown_key, state_lines, unshown

    state = reduce_events(_rules_log())
    lines = state_lines(state)
    at = lines.index("Project rules:")
    assert lines[at + 1].startswith("- AGENTS.md: Run pnpm test before every commit.")
    # a later checkpoint does not repeat what an earlier one showed
    again = unshown(state, {shown_key(a) for a in state.active()})
    assert "Project rules:" not in state_lines(again)


def _resume_log() -> list[dict[str, Any]]:
    """A session whose state derives every group: earlier requests, a written file's outline,
    the names the work keeps naming, the assistant's findings."""
    b = LogBuilder(session_id="resume", system="You are a coding agent.")
    b.turn("Add a retry to the sync client in sync_client.py.")
    b.assistant(
        text="The SyncClient in sync_client.py has no retry; retryAttempts is read nowhere.",
        tool_calls=[
            (
                "Write",
                {
                    "file_path": "sync_client.py",
                    "content": "class SyncClient:\n    def push(self, batch, retries=3):\n"
                    "        return send(batch)\n",
                },
            )
        ],
    )
    b.tool_results(["ok"]).next_step().assistant(text="SyncClient.push now retries.").end_turn()
    b.turn("Now make retryAttempts configurable through SYNC_RETRY_ATTEMPTS.")
    b.assistant(text="SYNC_RETRY_ATTEMPTS is read in sync_client.py with a default of 3.")
    b.end_turn()
    b.turn("Good. Commit it.")
    b.assistant(text="Committed.").end_turn()
    return cx.Session.from_events(b.header, b.events).raw_events


def test_a_checkpoint_shows_every_group_the_state_derives() -> None:
    """What the state holds reaches the model: the checkpoint shows the earlier requests,
    what the files hold, the key names and the findings, not the slots and values alone."""
    from ctxsdk.fold._checkpoint import state_lines

    state = reduce_events(_resume_log())
    assert state.requests and state.files and state.names and state.findings
    text = "\n".join(state_lines(state))
    for title in ("Earlier requests:", "What the files hold:", "Key names:", "Findings"):
        assert title in text, title
    assert "SYNC_RETRY_ATTEMPTS" in text and "SyncClient" in text


def test_a_checkpoints_derived_groups_fit_its_budget() -> None:
    """The derived groups share the budget, each its share; the rest of the state is shown
    whatever the budget, and however long it is it leaves the derived groups their budget
    (a long task template's rules no longer starve the findings)."""
    from ctxsdk.fold._checkpoint import state_lines
    from ctxsdk.session.kernel import estimate_text

    state = reduce_events(_resume_log())
    full = state_lines(state)
    core = state_lines(state, budget=0)
    assert len(core) < len(full)
    assert not any(t in "\n".join(core) for t in ("What the files hold:", "Key names:"))
    assert all(line in full for line in core)  # the rest is shown whatever the budget
    budget = 50
    assert estimate_text("\n".join(core)) > budget  # the rest alone is over the budget
    some = state_lines(state, budget=budget)
    assert len(core) < len(some) < len(full)
    derived = [line for line in some if line not in core]
    assert derived and estimate_text("\n".join(derived)) <= budget


def test_what_a_checkpoint_showed_is_what_its_text_holds() -> None:
    """A later checkpoint leaves out what an earlier one showed, and only that: an item the
    earlier checkpoint's budget left out is not counted as shown."""
    from ctxsdk.fold._checkpoint import shown_in, shown_key, state_lines, unshown

    state = reduce_events(_resume_log())
    core = state_lines(state, budget=0)
    text = "\n".join(core)
    shown = shown_in(state, text)
    derived = [*state.files, *state.names, *state.findings]
    assert derived and not any(shown_key(a) in shown for a in derived)
    core_items = [state.objective, *state.artifacts]
    assert state.artifacts and all(shown_key(a) in shown for a in core_items if a is not None)
    later = "\n".join(state_lines(unshown(state, shown)))
    assert "What the files hold:" in later and "Key names:" in later  # still to show
    # an earlier request the first checkpoint showed is not repeated by the next
    full = "\n".join(state_lines(state))
    assert "Earlier requests:" in full
    assert "Earlier requests:" not in "\n".join(state_lines(unshown(state, shown_in(state, full))))
    # a text not known counts every active item as shown
    assert shown_in(state, "") == {shown_key(a) for a in state.active()}


def test_every_project_statement_without_a_key_is_kept_in_the_order_said() -> None:
    # None of these replaces another: each stays a current value, and saying one again
    # adds no second line.
    said = (
        "There is existing logic for scanning history.",
        "We don't control the deploy process - it's a third-party tool that the CLI calls.",
        "keep in mind that the new file will be in the same folder as the old one",
    )
    b = builder("statements")
    for text in (*said, said[0]):
        b.turn(text).assistant(text="ok").end_turn()
    s = reduce(b)
    kept = sorted(
        (a for a in s.values if (a.state_key or "").startswith(STATEMENT_KEY_PREFIX)),
        key=lambda a: a.sources[0],
    )
    assert [a.value for a in kept] == list(said)
    assert not any((a.state_key or "").startswith("project/") for a in s.superseded)
    lines = state_lines(s)
    values = lines[lines.index("Current values:") + 1 :]
    values = values[: next(i for i, line in enumerate(values) if not line.startswith("- "))]
    assert [next(t for t in said if v.startswith(f"- {t} ")) for v in values] == list(said)
    assert not any(STATEMENT_KEY_PREFIX in line for line in lines)  # the words alone
