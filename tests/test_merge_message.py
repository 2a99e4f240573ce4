"""One user message, one statement (``ctxsdk.merge._message``): the sentences one session's
user said in one message are one statement slot; what another session also said keeps its
own slot, and an opening request stays sentence by sentence."""

from __future__ import annotations

import pytest

import ctxsdk as cx
from ctxsdk.merge._claims import Claim
from ctxsdk.merge._message import SAID_JOIN, one_per_message
from ctxsdk.testing import LogBuilder

from .conftest import SHARED

AGENTS = SHARED / "data" / "agent-sessions"


def _session(sid: str, turns: list[tuple[str, str]]) -> cx.Session:
    b = LogBuilder(session_id=sid, runtime_context=None)
    for user, assistant in turns:
        b.turn(user).assistant(text=assistant).end_turn()
    return cx.Session.from_events(b.header, b.events)


def _said(key: str, source: str, seq: int, kind: str = "constraint") -> Claim:
    text = key.partition(": ")[2]
    return Claim(
        key=key,
        value="stated",
        evidence=4,
        text=text,
        source=source,
        seq=seq,
        kind=kind,  # type: ignore[arg-type]
        origin="user",
        shown=text,
        statement=True,
    )


def test_the_sentences_of_one_message_are_one_claim_in_their_order() -> None:
    claims = [
        _said("preference: performance is crucial", "a", 7),
        _said("instruction: track the latest synced message id", "a", 7),
        _said("instruction: don't overcomplicate", "a", 9),
    ]
    out = one_per_message(claims)
    assert len(out) == 2
    joined = out[0]
    assert joined.text == f"performance is crucial{SAID_JOIN}track the latest synced message id"
    # a message that instructs is an instruction
    assert joined.key.startswith("instruction: performance is crucial")
    assert out[1] is claims[2]


def test_a_sentence_another_session_said_keeps_its_own_claim() -> None:
    claims = [
        _said("instruction: never push to main", "a", 3),
        _said("instruction: keep the changelog short", "a", 3),
        _said("instruction: never push to main", "b", 5),
    ]
    assert one_per_message(claims) == claims
    # nor is an opening request merged: its task and its constraints part ways
    two = [_said("instruction: fix the parser", "a", 1), _said("instruction: no new deps", "a", 1)]
    assert one_per_message(two, {("a", 1)}) == two


def test_one_message_is_one_line_of_the_block() -> None:
    said = "Don't create separate documents. Performance is crucial."
    a = _session("msg-a", [("Review the sync design.", "Reading it."), (said, "Noted.")])
    b = _session("msg-b", [("Review the metrics.", "Reading them.")])
    r = cx.Merge([a, b]).run()
    (slot,) = [s for s in r.block.slots if s.statement]
    assert "don't create separate documents" in slot.key and "performance is crucial" in slot.key
    assert r.text.count("(evidence 4; from msg-a)") == 1
    assert f"Don't create separate documents.{SAID_JOIN}Performance is crucial." in r.text


@pytest.mark.skipif(not AGENTS.is_dir(), reason="the agent-sessions corpus is absent")
def test_real_message_of_two_sentences_reads_as_one_directive() -> None:
    from ctxsdk.bench._realworld import load_session

    s = load_session(AGENTS, "claude-code/codemie__session-196820da.jsonl")
    r = cx.Merge([s]).run()
    line = next(x for x in r.text.splitlines() if "periodically track changes" in x)
    assert "if /clear is found - finalize session" in line
