"""What a user states, not instructs (``_facts/_statements``): a fact about the code, context
for the task in hand, what the design being discussed needs and a choice among the agent's
options are no standing rules; the rules said beside them stay rules.

The sentences paraphrase the users of the real sessions (Claude Code's codemie sessions,
OpenHands, Aider, DSH): none is a verbatim copy.
"""

from __future__ import annotations

import pytest

import ctxsdk as cx
from ctxsdk.session._facts._text import text_facts
from ctxsdk.session.kernel import instruction_kind


def _kinds(text: str) -> list[str]:
    return [f.kind for f in text_facts(text, role="user", seq=1, session="s")]


PROJECT = [
    "there is already a parser for the history file",
    "we already have a helper that loads the settings",
    "keep in mind that the new log file lands in the same directory as the old one",
    "bear in mind that the endpoint returns at most fifty rows per page",
    "note that the reset marker carries a timestamp and the session id",
]

DECISIONS = [
    "there is a need to store the last synced record id so the next run reads only the delta.",
    "there is a need to - poll the history file every few seconds.",
    "there is no need to watch the old session, once the marker is seen - start a new one",
    "the bug has to be fixed, option 2 is not acceptable.",
    "approach B is fine for the cache layer",
]

RULES = [
    "don't create extra documents.",
    "don't overcomplicate",
    "don't write code yet, design the solution first",
    "important not to push anything until the last step.",
    "keep in mind that you must not touch the migrations",
    "there is a need to keep the public API backwards compatible",
    "Do not use any tools.",
    "only edit index.html",
]


@pytest.mark.parametrize("sentence", PROJECT)
def test_a_fact_or_context_the_user_offers_is_a_project_fact(sentence: str) -> None:
    assert _kinds(sentence) == ["project"]
    assert instruction_kind(sentence) is None


@pytest.mark.parametrize("sentence", DECISIONS)
def test_a_need_of_the_design_or_a_choice_of_option_is_a_decision(sentence: str) -> None:
    assert _kinds(sentence) == ["decision"]


@pytest.mark.parametrize("sentence", RULES)
def test_the_rules_said_beside_them_stay_rules(sentence: str) -> None:
    assert "instruction" in _kinds(sentence)
    got = instruction_kind(sentence)
    assert got is not None and got[1], got


def test_a_need_for_the_agents_own_work_is_a_one_off_ask() -> None:
    ask = "there is a need to come up with a plan for tracking the reset step"
    assert instruction_kind(ask) == ("instruction", False)


def test_a_choice_keeps_the_option_it_turns_down() -> None:
    (f,) = text_facts(
        "the bug has to be fixed, option 2 is not acceptable.", role="user", seq=1, session="s"
    )
    assert f.rejected == ("option 2",)


def test_a_condition_after_a_need_says_how_the_design_does_it() -> None:
    said = (
        "there is a need to - poll the history file every few seconds.\n"
        "if a reset marker is found - close the session and open a new one from the next file"
    )
    assert _kinds(said) == ["decision", "decision"]
    # on its own, or after a rule, a condition is a rule of how to work
    assert _kinds("if the build fails, rerun it once") == ["instruction"]
    assert _kinds("don't push.\nif the build fails, rerun it once") == ["instruction"] * 2


def test_context_that_holds_a_setting_is_only_the_setting() -> None:
    facts = text_facts(
        "Remember this fact for later: the project codeword is HERON.",
        role="user",
        seq=1,
        session="s",
    )
    assert [(f.kind, f.key, f.value) for f in facts] == [("setting", "project codeword", "HERON")]


def _chat(*said: str) -> cx.Session:
    msgs: list[dict[str, str]] = []
    for text in said:
        msgs += [{"role": "user", "content": text}, {"role": "assistant", "content": "Noted."}]
    return cx.Session.from_messages(msgs, format="openai")


def test_merge_labels_only_the_rules_as_instructions() -> None:
    a = _chat(
        "Review the sync code.",
        "there is already a parser for the history file",
        "keep in mind that the new log file lands in the same directory as the old one",
        "don't create extra documents.",
    )
    b = _chat(
        "Look at the metrics writer.",
        "there is a need to store the last synced record id so the next run reads only the delta.",
        "the bug has to be fixed, option 2 is not acceptable.",
        "don't overcomplicate",
    )
    keys = [slot.key for slot in cx.Merge([a, b]).run().slots if slot.statement]
    instructions = sorted(k for k in keys if k.startswith("instruction:"))
    assert instructions == [
        "instruction: don't create extra documents",
        "instruction: don't overcomplicate",
    ], keys
    assert any(k.startswith("project: there is already a parser") for k in keys), keys
    assert any(k.startswith("decision: there is a need to store") for k in keys), keys
    assert any(k.startswith("decision: the bug has to be fixed") for k in keys), keys
