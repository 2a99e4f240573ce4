"""Corrections as polarity: "it's not X; it's Y" is one key with X denied and Y asserted.

The key comes from the values' domain, the sentence's subject, or (a pronoun) the thing the
agent's last turn gave the denied value; without one there is no keyed fact. A format said
of a thing ("metrics are stored as JSONL files") gives the same key, so two sessions that
disagree meet in one slot and Merge shows the dispute."""

from __future__ import annotations

import pytest

import ctxsdk as cx
from ctxsdk.session._facts._corrections import correction
from ctxsdk.session._facts._formats import format_statement
from ctxsdk.session._facts._model import Fact
from ctxsdk.session._facts._text import text_facts
from ctxsdk.session._facts._topic import topic_of

from .conftest import SHARED

CORPUS = SHARED / "data" / "agent-sessions"
PROPOSAL = "1. Single file per session (`~/.app/metrics/{sessionId}.jsonl`)\n2. Backward compatible"


@pytest.mark.parametrize(
    ("text", "key", "value", "denied"),
    [
        ("it's not npm, it's pnpm", "package manager", "pnpm", "npm"),
        ("no, it's pnpm (not npm)", "package manager", "pnpm", "npm"),
        ("the port is not 8080, it's 8000", "port", "8000", "8080"),
        ("the config is TOML, not YAML", "configuration format", "TOML", "YAML"),
        ("the config file is not YAML but TOML", "configuration format", "TOML", "YAML"),
        ("it's not jsonl file; it's json file with a syncState", "metric format", "json", "jsonl"),
        ("ir's not jsonl file, it's json file", "metric format", "json", "jsonl"),  # a typo
        ("it's json, not jsonl", "metric format", "json", "jsonl"),
        ("数据库不是MySQL，是PostgreSQL", "database", "PostgreSQL", "MySQL"),
        ("是pnpm，不是npm", "package manager", "pnpm", "npm"),
        ("不是jsonl文件，是json文件", "metric format", "json", "jsonl"),
    ],
)
def test_correction_keys(text: str, key: str, value: str, denied: str) -> None:
    got = correction(text, previous=PROPOSAL)
    assert got is not None, text
    assert (got.key, got.value, got.rejected) == (key, value, (denied,))


@pytest.mark.parametrize(
    "text",
    [
        "it's not a bug, it's a feature",  # a pronoun, and no format or domain to key it
        "no, it's not phase 1, it's phase 4",
        "It's not the API, it's the database",
        "the problem is not X, it's Y",  # "problem" names no setting
        "is it json, not jsonl?",  # a question
        "这不是bug，是功能",
        "it's not jsonl, it's json",  # a format, but no previous turn names the thing
    ],
)
def test_no_key_no_correction(text: str) -> None:
    previous = "" if "jsonl" in text else PROPOSAL
    assert correction(text, previous=previous) is None


def test_pronoun_topic_from_the_previous_turn() -> None:
    assert topic_of(PROPOSAL, "jsonl") == "metrics"  # the placeholder's folder
    assert topic_of("Sessions go to `data/sessions.jsonl`.", "jsonl") == "sessions"
    assert topic_of("I'll write the events jsonl file next.", "jsonl") == "events"
    assert topic_of("Update the same metrics file.", "jsonl") == "metrics"
    assert topic_of("Use the metrics file or the audit file.", "jsonl") is None  # two things
    assert topic_of("Nothing named here.", "jsonl") is None


@pytest.mark.parametrize(
    ("text", "key", "fmt"),
    [
        ("Analytics: Aggregated metrics from JSONL session files", "metric format", "JSONL"),
        ("Sessions are stored as JSONL", "session format", "JSONL"),
        ("the config is a YAML file", "configuration format", "YAML"),
        ("logs are written to JSON files", "log format", "JSON"),
    ],
)
def test_format_statements(text: str, key: str, fmt: str) -> None:
    got = format_statement(text)
    assert got is not None and (got[0].key, got[1]) == (key, fmt)


@pytest.mark.parametrize(
    "text", ["We use a JSON parser", "Debug JSONL logger for sync", "it is a json file"]
)
def test_format_named_in_passing_is_no_statement(text: str) -> None:
    assert format_statement(text) is None


def _keyed(text: str, previous: str = "") -> list[Fact]:
    facts = text_facts(text, role="user", seq=3, session="s", previous=previous)
    return [f for f in facts if f.key]


def test_two_sentence_correction_is_one_keyed_fact_quoted_whole() -> None:
    text = "ir's not jsonl file. it's json file with strcuture and there is syncState there"
    keyed = _keyed(text, PROPOSAL)
    assert [(f.key, f.value, f.negated) for f in keyed] == [
        ("metric format", "jsonl", True),
        ("metric format", "json", False),  # the asserted value is the slot's latest
    ]
    assert all(f.source.quote == text for f in keyed)
    # the instruction is still there (its words, syncState, are what a reader looks for)
    said = [f for f in text_facts(text, role="user", seq=3, session="s", previous=PROPOSAL)]
    assert any(f.kind == "instruction" and "syncState" in f.text for f in said)


def test_assistant_explanations_are_no_corrections() -> None:
    facts = text_facts("It's not npm, it's pnpm.", role="assistant", seq=2, session="s")
    assert not [f for f in facts if f.key == "package manager" and f.negated]


def _session(*turns: tuple[str, str]) -> cx.Session:
    return cx.Session.from_messages([{"role": r, "content": c} for r, c in turns], format="openai")


def test_merge_disputes_a_corrected_format() -> None:
    a = _session(("user", "The metrics are stored as JSONL files."), ("assistant", "Noted."))
    b = _session(
        ("user", "Where do metrics go?"),
        ("assistant", f"Plan:\n{PROPOSAL}"),
        ("user", "it's not jsonl file. it's json file with a syncState field"),
        ("assistant", "You're right."),
    )
    result = cx.Merge([a, b]).run()
    slot = next(s for s in result.slots if s.key == "metric format")
    assert slot.status == "disputed"
    values = {c.value for c in slot.claims}
    assert {"jsonl", "json"} <= values


def test_merge_no_dispute_from_unrelated_sentences() -> None:
    a = _session(("user", "The metrics are stored as JSONL files."), ("assistant", "Noted."))
    b = _session(
        ("user", "Where do the logs go?"),
        ("assistant", "The audit log is `logs/audit.txt`."),
        ("user", "it's not a bug, it's a feature"),
        ("assistant", "Understood."),
    )
    result = cx.Merge([a, b]).run()
    assert not result.disputed


@pytest.mark.skipif(not CORPUS.is_dir(), reason="needs ../shared/data/agent-sessions")
def test_real_session_correction_meets_the_other_session() -> None:
    from ctxsdk.bench._realworld import load_session

    b = load_session(CORPUS, "claude-code/codemie__session-624a4a58.jsonl")
    keyed = [f for f in b.facts() if f.key == "metric format" and f.source.role == "user"]
    assert {(f.value, f.negated) for f in keyed} == {("jsonl", True), ("json", False)}
