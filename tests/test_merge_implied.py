"""A language the block's file lines already show (``ctxsdk.merge._implied``): left out when
each session backing it has a shown file the kernel read it from, kept otherwise."""

from __future__ import annotations

import pytest

import ctxsdk as cx
from ctxsdk.merge._implied import IMPLIED, same_file
from ctxsdk.testing import LogBuilder

from .conftest import SHARED


def _session(sid: str, edited: str, command: str) -> cx.Session:
    b = LogBuilder(session_id=sid, runtime_context=None, cwd=None)
    edit = {"file_path": edited, "old_string": "x = 1", "new_string": "x = 2"}
    b.turn("Tidy this up.").assistant(text="Editing.", tool_calls=[("Edit", edit)])
    b.tool_results(["ok"]).next_step()
    b.assistant(text="Checking.", tool_calls=[("bash", {"command": command})])
    b.tool_results(["done"]).next_step().assistant(text="Done.").end_turn()
    return cx.Session.from_events(b.header, b.events)


def _why(r: cx.MergeResult, key: str) -> str:
    row = r.to_polars().filter(key=key).row(0, named=True)
    return "" if row["in_block"] else str(row["why_not"])


def test_a_shared_language_each_sessions_shown_file_says_stays_out() -> None:
    a = _session("svc-a", "api/models.py", "git status")
    b = _session("svc-b", "tools/export_csv.py", "git status")
    r = cx.Merge([a, b]).run()
    assert r.slot("language").decision.winner == "python"
    assert _why(r, "language") == IMPLIED
    assert "api/models.py" in r.text and "tools/export_csv.py" in r.text


def test_a_language_one_backer_shows_no_file_of_stays_in() -> None:
    # the second session's Python is read from the test runner it ran, not from a file
    a = _session("svc-a", "api/models.py", "git status")
    b = _session("svc-b", "notes/plan.md", "pytest -q tests/")
    r = cx.Merge([a, b]).run()
    assert r.slot("language").decision.winner == "python"
    assert _why(r, "language") == ""


def test_same_file_by_a_trailing_path() -> None:
    assert same_file("metrics/types.ts", "src/agents/core/metrics/types.ts")
    assert not same_file("types.ts", "src/mytypes.ts")


AGENTS = SHARED / "data" / "agent-sessions"


@pytest.mark.skipif(not AGENTS.is_dir(), reason="the agent-sessions corpus is absent")
def test_a_language_read_at_the_event_a_shared_file_line_quotes_stays_out() -> None:
    from ctxsdk.bench._realworld import load_session

    # 196820da's TypeScript is read where it opened conversation-processor.ts, which the
    # kernel lists as no file of its own but the shared file line quotes (its seq)
    rels = [
        "claude-code/codemie__session-196820da.jsonl",
        "claude-code/codemie__session-624a4a58.jsonl",
    ]
    r = cx.Merge([load_session(AGENTS, rel) for rel in rels]).run()
    assert r.slot("language").decision.winner == "typescript"
    assert len(r.slot("language").sources) == 2
    assert _why(r, "language") == IMPLIED
    assert "conversation-processor.ts" in r.text
