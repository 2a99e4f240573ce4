"""The session map's tail after ingest: the latest thing the person said, in their own
words: a harness template's wrapper removed, a message that is boilerplate only skipped."""

from __future__ import annotations

import ctxsdk as cx
from ctxsdk.memory._episodes import session_episodes
from ctxsdk.testing import LogBuilder


def _tail(*said: str) -> str:
    b = LogBuilder(session_id="t", runtime_context=None)
    for text in said:
        b.turn(text).assistant(text="Working on it.").end_turn()
    return session_episodes(cx.Session.from_events(b.header, b.events))[-1].summary


def test_the_tail_skips_a_message_that_is_boilerplate_only() -> None:
    ask = "Make the transcript rows keep their semantic classes."
    assert _tail(ask, "[Request interrupted by user for tool use]") == ask


def test_the_tail_is_the_task_inside_a_harness_template() -> None:
    task = (
        "<pr_description>\nConsider the following PR description:\n"
        "units.quantity_input decorator fails for constructors with type hinted return "
        "value -> None\n</pr_description>\n\n<instructions>\nMake changes to non-test files "
        "in the current directory.\n</instructions>"
    )
    got = _tail(task)
    assert got.startswith("units.quantity_input decorator fails"), got
    assert "pr_description" not in got and "instructions" not in got


def test_the_tail_ends_with_where_the_work_stood() -> None:
    """The tail is the ask and, after an arrow, the assistant's last reply (40+ characters):
    the session's outcome as it ended; a short acknowledgement adds nothing."""
    b = LogBuilder(session_id="t2", runtime_context=None)
    b.turn("Add a /fibonacci/X endpoint.").assistant(
        text="I added /fibonacci/<int:x> to app.py; /fibonacci/5 returns 3."
    ).end_turn()
    b.turn("Remove the hello endpoint.").assistant(text="Working on it.").next_step()
    b.assistant(text="The /hello endpoint has been removed from app.py; 2 routes remain.")
    b.end_turn()
    got = session_episodes(cx.Session.from_events(b.header, b.events))[-1].summary
    assert got == (
        "Remove the hello endpoint. → The /hello endpoint has been removed from app.py; "
        "2 routes remain."
    )
    assert _tail("Ship it.") == "Ship it."  # "Working on it." is no reply worth keeping
