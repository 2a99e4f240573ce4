"""One-off asks and standing rules among a user's imperatives (``_facts/_asks``).

An ask that names where or how it acts ("in the tests", "to b.py", "the same … as …",
"only using css") is one piece of work; a rule says how work is done beyond it. Merge
shows rules, not the list of edits someone asked for; Fold keeps the asks as requests.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import ctxsdk as cx
from ctxsdk.session._facts._text import text_facts
from ctxsdk.session.kernel import instruction_kind

ASKS = [
    "make the header font color the same as the link color",
    "apply the same border around the table element",
    "add a caption along the top of the figure only using css",
    "make the changes described in the readme",
    "try using a temporary directory in the tests",
    "Please rename old_name.py to new_name.py",
    "In NOTES.md, sort the headings.",
    "leave a short comment above the loop",
    "change the footer background to a darker shade of the same grey as the text",
    "use the read tool to read settings.toml in the current directory.",
    "Use the bash tool exactly once to list the files.",
    "check if the old config was deleted on purpose and whether we need to restore it",
]

RULES = [
    "only edit main.py",
    "make all the edits to the inline script tag in the page",
    "use pnpm to install packages",
    "use the edit tool for every change",
    "always run ruff before committing",
    "put tests in tests/",
    "For code blocks, add the language after the fence.",
    "suggest changes and make sure each line stays under 80 columns",
    "Refactor it without changing behaviour.",
    "keep lines under 80 columns",
    "run the linter every time you change a file",
    "leave the migrations alone",
    "Leave the changelog for later.",
    "prefer dataclasses over dicts",
    "add type hints everywhere",
    "In tests, create the files under tmp_path.",
    "we need to keep Python 3.9 support",
    "check the logs and make sure we never need to restart the worker",
]


@pytest.mark.parametrize("sentence", ASKS)
def test_a_one_off_ask_that_names_its_place_or_manner_is_no_rule(sentence: str) -> None:
    assert instruction_kind(sentence) == ("instruction", False)


@pytest.mark.parametrize("sentence", RULES)
def test_a_rule_is_still_read_as_one(sentence: str) -> None:
    got = instruction_kind(sentence)
    assert got is not None and got[1], got


def test_a_one_off_asks_place_is_no_scope() -> None:
    """The file an ask acts on is where it acts, not where a rule holds: no scope."""
    facts = text_facts("Please rename old_name.py to new_name.py", role="user", seq=1, session="s")
    assert [(f.kind, f.scope) for f in facts] == [("instruction", None)]
    rule = text_facts("only edit main.py", role="user", seq=1, session="s")
    assert [(f.kind, f.scope) for f in rule] == [("instruction", "main.py")]


def _chat(*asks: str) -> cx.Session:
    msgs: list[dict[str, str]] = []
    for ask in asks:
        msgs += [{"role": "user", "content": ask}, {"role": "assistant", "content": "Done."}]
    return cx.Session.from_messages(msgs, format="openai")


def test_merge_shows_the_rules_not_the_edits_asked_for() -> None:
    a = _chat(
        "only edit page.html",
        "make the quote font color the same as the body color",
        "apply the same box around the h3 element",
    )
    b = _chat("make the changes described in the readme", "try using a fake clock in the tests")
    keys = " | ".join(slot.key for slot in cx.Merge([a, b]).run().slots)
    assert "only edit page.html" in keys
    for ask in ("font color", "h3 element", "described in the readme", "fake clock"):
        assert ask not in keys, keys


def test_fold_keeps_the_asks_as_requests_not_constraints(tmp_path: Path) -> None:
    s = _chat(
        "only edit page.html",
        "make the quote font color the same as the body color",
        "apply the same box around the h3 element",
    )
    state = cx.Fold(s, store=tmp_path).state
    constraints = " ".join(str(a.value) for a in state.constraints)
    requests = " ".join(str(a.value) for a in state.requests)
    assert "only edit page.html" in constraints
    assert "font color" not in constraints and "h3 element" not in constraints
    assert "font color" in requests and "h3 element" in requests


@pytest.mark.parametrize(
    "sentence",
    [
        "use pytest fixtures instead of setUp methods in the tests",
        "let's go with Redis instead of Memcached",
        "instead of mocking the clock, use a fake timer in the tests",
    ],
)
def test_a_choice_said_with_instead_of_stays_a_decision(sentence: str) -> None:
    facts = text_facts(sentence, role="user", seq=1, session="s")
    assert "decision" in [f.kind for f in facts], facts
