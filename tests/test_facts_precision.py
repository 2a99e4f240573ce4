"""Precision of the fact kernel on real-shaped logs: what it must not take for a fact.

A setting's key names a setting and its value is a value; a question put as an imperative
is no instruction; a sentence cut before its list is no instruction; a plan's criteria are
no outcome; a harness's compaction request is not the user; a thing said twice is one fact.
"""

from __future__ import annotations

import dataclasses
import json

import ctxsdk as cx
from ctxsdk.session import read_facts
from ctxsdk.session._facts._keys import key_phrase
from ctxsdk.session._facts._model import Fact, FactSource
from ctxsdk.session._facts._sieve import once, sound
from ctxsdk.session._facts._text import closing_facts, text_facts
from ctxsdk.session.kernel import FactReader

from .conftest import SHARED


def _said(text: str, role: str = "user") -> list[tuple[str, str | None, str | None, str]]:
    return [
        (f.kind, f.key, f.value, f.text) for f in text_facts(text, role=role, seq=1, session="s")
    ]


def _fact(kind: str, text: str, seq: int, key: str | None = None, value: str | None = None) -> Fact:
    src = FactSource("s", seq, "user", text)
    return Fact(kind=kind, text=text, source=src, key=key, value=value)  # type: ignore[arg-type]


# --- keys and values ----------------------------------------------------------------------


def test_a_key_that_starts_with_a_count_or_an_action_or_holds_an_article_is_no_key() -> None:
    for phrase in ("fourteen payment tests", "create a new folder", "run the build", "add a cache"):
        assert key_phrase(phrase, allow_code=True) is None, phrase
    for phrase in ("request timeout", "build command", "test command", "go version"):
        assert key_phrase(phrase, allow_code=True) is not None, phrase


def test_an_ask_with_a_path_is_an_instruction_not_a_setting() -> None:
    got = _said("Create a new folder: dist/dags/")
    assert [k for k, *_ in got] == ["instruction"]


def test_tests_that_pass_under_a_runner_set_nothing() -> None:
    assert _said("Fourteen payment tests pass with pytest", "assistant") == []
    assert _said("The payment tests pass on pytest.", "assistant") == []
    # a relation of another subject is still read
    assert _said("Requests pass through the proxy.")[0][1:3] == ("request pass", "proxy")


def test_a_value_that_is_only_the_redaction_marker_is_no_value() -> None:
    assert not sound(
        _fact("setting", "api token = [REDACTED:github]", 1, "api token", "[REDACTED:github]")
    )
    assert not sound(_fact("instruction", "[REDACTED:labelled]", 1))
    assert sound(_fact("setting", "request timeout = 60 seconds", 1, "request timeout", "60"))


# --- questions and fragments --------------------------------------------------------------


def test_a_question_put_as_an_imperative_is_no_instruction() -> None:
    for ask in (
        "Tell me what you know about this.",
        "show me json structure for session tracking",
        "Explain why the test fails",
        "I want to understand how the sync works",
    ):
        assert _said(ask) == [], ask
    # an ask joined to an action is read whole; an imperative that is no question stays
    assert _said("Tell me the tools you have and save them to tools.md")[0][0] == "instruction"
    assert _said("Explain the auth module in README.md")[0][0] == "instruction"


def test_a_sentence_cut_before_its_list_is_no_instruction() -> None:
    text = "I want to create a VueJS app that allows me to:\n* add a new item to the list\n"
    got = _said(text)
    assert all(not t.endswith(" to") for *_, t in got)
    assert ("instruction", None, None, "add a new item to the list") in got


def test_a_path_is_not_an_imperative() -> None:
    assert _said("Look in:\n- lib/spotter/services/tmux.ex\n- test/support/") == []
    assert _said("test the parser.")[0][0] == "instruction"


def test_a_plans_criteria_and_open_boxes_are_no_outcome() -> None:
    plan = (
        "## Implementation Plan: session transitions\n\n### Step 1.6: Test core abstractions\n"
        "**Action:**\n- [ ] Create test file\n\n**Acceptance Criteria:**\n- All tests pass\n"
        "- End-to-end test passes\n\n---\n\nReady to start with Phase 1?"
    )
    assert closing_facts(plan, seq=9, session="s") == []
    done = "I have fixed the parser.\n\nAll 12 tests pass."
    assert [f.kind for f in closing_facts(done, seq=9, session="s")] == ["outcome", "outcome"]


def test_the_harness_compaction_request_is_not_the_user() -> None:
    text = (
        "Your task is to create a detailed summary of the conversation so far, paying close "
        "attention to the user's explicit requests and your previous actions.\n"
        "Your summary should include the following sections:\n1. Primary Request and Intent\n"
        "Include file names and code snippets where applicable."
    )
    s = cx.Session.from_messages([{"role": "user", "content": text}])
    assert len(s.facts()) == 0


# --- a thing said twice -------------------------------------------------------------------


def test_a_sentence_said_twice_is_one_fact_with_the_repeat_as_evidence() -> None:
    s = cx.Session.from_messages(
        [
            {"role": "user", "content": "Comment on my CONVENTIONS.md"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "Comment on my CONVENTIONS.md"},
        ]
    )
    got = s.facts().of("instruction")
    assert len(got) == 1
    assert got[0].evidence and got[0].evidence[0] > got[0].source.seq


def test_a_value_said_again_is_a_repeat_but_a_value_changed_back_is_not() -> None:
    a = _fact("setting", "timeout = 30", 1, "timeout", "30")
    a2 = _fact("setting", "timeout: 30", 2, "timeout", "30")
    b = _fact("setting", "timeout = 60", 3, "timeout", "60")
    a3 = _fact("setting", "timeout = 30", 4, "timeout", "30")
    got = once([a, a2, b, a3])
    assert [f.source.seq for f in got] == [1, 3, 4]
    assert got[0].evidence == (2,)
    assert [f.value for f in cx.session.Facts("s", tuple(got)).current()] == ["30"]


def test_the_incremental_reader_keeps_repeats_for_its_engine() -> None:
    # Fold refreshes a restated item itself (newest wording, both sources)
    s = cx.Session.from_messages(
        [
            {"role": "user", "content": "Never push to main."},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "Never push to main."},
        ]
    )
    reader = FactReader(s.id)
    fed = [f for ev in s.raw_events for f in reader.feed(ev)]
    assert len([f for f in fed if f.kind == "instruction"]) == 2
    assert len(read_facts(s.raw_events, session=s.id).of("instruction")) == 1


def test_a_real_aider_log_resent_after_a_failed_call_gives_each_ask_once() -> None:
    path = SHARED / "data" / "agent-sessions" / "aider" / "Monochromatic__.aider.chat.history.md"
    if not path.exists():
        import pytest

        pytest.skip("shared corpus absent")
    from ctxsdk.session.importers import import_file

    facts = import_file("aider", path).facts()
    texts = [(f.kind, f.text.casefold()) for f in facts]
    assert len(texts) == len(set(texts))
    dumped = json.dumps([f.text for f in facts])
    assert "Tell me what you know" not in dumped


def test_a_chinese_request_noun_is_not_please() -> None:
    # 请求 ("request") starts many keys; 请 alone ("please") starts an ask
    assert [k for k, *_ in _said("请求超时：30秒")] == ["setting"]
    assert "instruction" in [k for k, *_ in _said("请把超时设为30秒")]


def test_a_repeated_error_keeps_its_passing_run_last_in_its_evidence() -> None:
    src = FactSource("s", 1, "tool", "q")
    first = Fact(kind="error", text="E: boom — fixed by a.py", source=src, evidence=(5,))
    again = Fact(kind="error", text="E: boom — fixed by a.py", source=src, evidence=(6,))
    again = dataclasses.replace(again, source=FactSource("s", 3, "tool", "q"))
    (got,) = once([first, again])
    assert got.evidence == (3, 5)


def test_an_aside_in_parentheses_is_no_open_work() -> None:
    text = "Fixed the parser (although I couldn't run the GUI test)."
    assert [f.kind for f in closing_facts(text, seq=9, session="s")] == ["outcome"]
    assert [f.kind for f in closing_facts("I could not run the GUI test.", seq=9, session="s")] == [
        "open_work"
    ]


def test_the_assistants_account_of_code_it_marked_as_code_sets_nothing() -> None:
    for said in (
        "And `curl` uses quotes.",
        "The `capfd` fixture uses `FDCapture`.",
        "`encoding` defaults to 'ascii'.",
    ):
        assert not [k for k, *_ in _said(said, "assistant") if k == "setting"], said
    # a constant's name is a setting's name; the user's words are read as said
    assert _said("`REQUEST_TIMEOUT` is now 30 seconds.", "assistant")[0][1:3] == (
        "request timeout",
        "30",
    )
    assert _said("Constructor: set historyPath to `~/.claude/history.jsonl`", "assistant")
