"""A passing conclusion (``ctxsdk.merge._unverified``): what one session's model said once,
which no other message of the merged sessions names, stays out of the block; a value the
work comes back to, a tool shows or another session names stays in."""

from __future__ import annotations

import pytest

import ctxsdk as cx
from ctxsdk.merge._unverified import PASSING
from ctxsdk.testing import LogBuilder

from .conftest import SHARED

AGENTS = SHARED / "data" / "agent-sessions"

_DESIGN = "Here is the design.\n\n**Storage**: `~/.myapp/events.jsonl`\n**Concurrency**: File-based locking"


def _plan(sid: str, later: str) -> cx.Session:
    b = LogBuilder(session_id=sid, runtime_context=None)
    b.turn("Design the event store.").assistant(text=_DESIGN).end_turn()
    b.turn("Looks fine, go on.").assistant(text=later).end_turn()
    return cx.Session.from_events(b.header, b.events)


def _why(r: cx.MergeResult, key: str) -> str:
    row = r.to_polars().filter(key=key).row(0, named=True)
    return "" if row["in_block"] else str(row["why_not"])


def test_a_conclusion_said_once_stays_out_and_one_the_work_returns_to_stays_in() -> None:
    r = cx.Merge([_plan("plan-a", "It lives in `~/.myapp/events.jsonl`.")]).run()
    assert r.slot("concurrency").max_evidence == 2  # the assistant's word alone
    assert _why(r, "concurrency") == PASSING
    assert "File-based locking" not in r.text
    assert _why(r, "storage") == ""  # named again in a later message
    assert "~/.myapp/events.jsonl" in r.text


def test_a_conclusion_another_session_names_stays_in() -> None:
    b = LogBuilder(session_id="ops-b", runtime_context=None)
    b.turn("We use file-based locking for the store, right?").assistant(text="Yes.").end_turn()
    other = cx.Session.from_events(b.header, b.events)
    r = cx.Merge([_plan("plan-a", "Done."), other]).run()
    assert _why(r, "concurrency") == ""
    assert _why(r, "storage") == PASSING


@pytest.mark.skipif(not AGENTS.is_dir(), reason="the agent-sessions corpus is absent")
def test_real_design_remarks_stay_out_and_a_path_the_design_keeps_naming_stays() -> None:
    from ctxsdk.bench._realworld import load_session

    s = load_session(AGENTS, "claude-code/codemie__session-196820da.jsonl")
    r = cx.Merge([s]).run()
    assert _why(r, "concurrency") == PASSING
    assert "~/.claude/history.jsonl" in r.text  # named in five of its messages
    assert "HistoryParser" in r.text  # a tool's output shows the class


def test_a_finding_in_prose_said_once_stays_in() -> None:
    # what the model found ("The port is 8080.") is no item of a plan it laid out
    b = LogBuilder(session_id="find-a", runtime_context=None)
    b.turn("Check the service.").assistant(text="The port is 8080.").end_turn()
    r = cx.Merge([cx.Session.from_events(b.header, b.events)]).run()
    assert r.slot("port").max_evidence == 2
    assert _why(r, "port") == ""
