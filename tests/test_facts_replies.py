"""One-off replies vs durable rules: ``instruction_kind`` on what users answer the agent.

A reply leans on the agent's last turn ("it's bad idea", "no, …", "put into existing",
"the same value", "option 1"): an ask or correction about this turn. A sentence that says
when or where it holds, or states its whole content, stays a rule."""

from __future__ import annotations

import pytest

from ctxsdk.session._facts._replies import durable, refers_back
from ctxsdk.session._facts._text import text_facts
from ctxsdk.session.kernel import instruction_kind


@pytest.mark.parametrize(
    "text",
    [
        "it's bad idea, since entire conversation will be processed every time.",
        "no, it's not phase 1, there bunch of phases completed",
        "put into existing with conversation incremental",
        "let's set same value for conversation",
        "it's not valid to track all changes and gather under one session file.",
        "track it in the same file as metrics, just extend json",
        "No need to run it.",
        "No, I mean the other file!",
        "option 1 is not acceptable",
        "move it to the end",
        "that's wrong",
        "不对，用pnpm",
        "把它放到现有文档里",
        "不要这样做",
    ],
)
def test_replies_are_one_off(text: str) -> None:
    got = instruction_kind(text)
    assert got is not None and got[1] is False, (text, got)


@pytest.mark.parametrize(
    "text",
    [
        "don't produce code, design solution first",
        "be concise",
        "always run the tests",
        "don't create separate documents.",
        "don't overcomplicate",
        "don't do that again",  # a pronoun object, but "again" makes it standing
        "that's wrong, always use UTC in logs",
        "use pnpm",
        "use the same value for all timeouts",  # "same" with what it is the same as
        "put it in tests/ from now on",
        "never push to main",
        "use tabs for indentation in this repo",
        "以后都用 pnpm",
        "不要用npm",
    ],
)
def test_durable_rules_stay_rules(text: str) -> None:
    got = instruction_kind(text)
    assert got is not None and got[1] is True, (text, got)


def test_reply_features() -> None:
    assert refers_back("it's bad idea") and refers_back("go with option 2")
    assert not refers_back("go with option 2", picks=False)  # a pick is still a choice
    assert not refers_back("use pnpm for installs")
    assert durable("never do that") and durable("in tests, mock the clock")
    assert not durable("it's bad idea, since it runs every time")  # the reason is no rule


def test_a_reply_is_no_decision_but_a_pick_is() -> None:
    said = text_facts("let's set same value for conversation", role="user", seq=1, session="s")
    assert [f.kind for f in said] == ["instruction"]
    pick = text_facts("Go with option C for the cache.", role="user", seq=1, session="s")
    assert "decision" in {f.kind for f in pick}
