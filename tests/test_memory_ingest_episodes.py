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
