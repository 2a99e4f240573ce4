"""The open + messages() path's shortcuts give what the long ways give: messages() types the
surface's messages found in one pass (equal to typing each event's message, cached, the same
located error for a malformed one), and the replace-op checks refuse a bad op, an uncited
prune and a rewrite that changes more than the result's content with the harness's reasons."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

import ctxsdk as cx
from ctxsdk.errors import SessionFormatError
from ctxsdk.session import Message
from ctxsdk.session._replay import replay_log
from ctxsdk.session._text import message_of
from ctxsdk.testing import LogBuilder

_OUTPUT = "\n".join(f"src/mod_{i}.py:{i}: a line of tool output" for i in range(40))


def _builder() -> LogBuilder:
    b = LogBuilder(version=3, session_id="messages-path")
    b.turn("Read the parser.", system="You are careful.")
    b.assistant(text="Reading.", reasoning="look first", tool_calls=[("read", {"p": "a.py"})])
    b.tool_results([_OUTPUT])
    b.next_step()
    b.assistant(text="", tool_calls=[("grep", {"q": "x"}), ("bash", {"c": "ls"})])
    b.tool_results([_OUTPUT, "short"])
    b.next_step()
    b.assistant(text="Done.")
    b.end_turn()
    b.turn("And the tests?")
    b.assistant(text="Running them.", tool_calls=[("bash", {"c": "pytest"})])
    b.tool_results([_OUTPUT])
    b.prune_tool_result(b.result_seq(b.last_call_ids[0]), 200, 80)
    b.next_step()
    b.assistant(text="All pass.")
    b.end_turn()
    b.turn("Stop.")
    b.assistant(text="")  # an empty reply (max tokens): on the surface, never a message
    b.end_turn()
    return b


def test_messages_are_each_surface_events_message_typed(tmp_path: Path) -> None:
    path = _builder().write(tmp_path / "s.jsonl.zstd")
    s = cx.Session.open(path)
    got = s.messages()
    seqs = s.message_seqs()
    expected = [Message.model_validate(message_of(s.raw_events[q])) for q in seqs]
    assert got == expected and len(got) == len(seqs) == 14
    empty = [n.seq for n in s.surface() if not n.message.content]
    assert len(empty) == 1 and empty[0] not in seqs  # on the surface, not among the messages
    assert [m.model_dump() for m in got] == [m.model_dump() for m in expected]
    assert s.messages() == got  # from the cache: the same models
    assert all(a is b for a, b in zip(s.messages(), got, strict=True))
    surface = {n.seq: n.message for n in s.surface()}
    assert all(surface[q] is m for q, m in zip(seqs, got, strict=True))
    # a session that typed one message first types the rest on the way, equal again
    t = cx.Session.open(path)
    one = t.message_at(seqs[3])
    assert t.messages() == got and t.messages()[3] is one


def test_a_malformed_surface_message_is_the_same_located_error(tmp_path: Path) -> None:
    b = _builder()
    events = [copy.deepcopy(e) for e in b.events]
    seq = next(i for i, e in enumerate(events) if e["type"] == "assistant/message")
    events[seq]["data"]["message"]["content"][0] = {"type": "text", "text": 7}
    s = cx.Session.from_events(b.header, events)
    where = r"assistant/message data does not match its schema at \d+\.content\.0\."
    with pytest.raises(SessionFormatError, match=where) as got:
        s.messages()
    assert got.value.seq == seq
    assert str(got.value).endswith("text: Input should be a valid string")
    with pytest.raises(SessionFormatError, match=where) as again:
        s.surface()  # the same check, by the other way in
    assert again.value.seq == seq


def _replaced(events: list[dict[str, Any]]) -> int:
    return next(i for i, e in enumerate(events) if isinstance(e.get("surfaceOp"), dict))


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({}, None),
        ({"extra": 1}, "exactly the keys op, startSeq, endSeq"),
        ({"endSeq": None}, "exactly the keys op, startSeq, endSeq"),  # dropped below
        ({"op": "prune"}, "exactly the keys op, startSeq, endSeq"),
        ({"sources": []}, "does not cover shadowed node"),
        ({"sources": None}, "must cite every shadowed node"),
        ({"isError": True}, "may change only message.content"),
        ({"toolCallId": "other"}, "may change only message.content"),  # another call
    ],
)
def test_a_prune_is_checked_as_the_harness_checks_it(
    change: dict[str, Any], reason: str | None
) -> None:
    events = [copy.deepcopy(e) for e in _builder().events]
    seq = _replaced(events)
    ev = events[seq]
    op = ev["surfaceOp"]
    if "extra" in change or "op" in change:
        op.update(change)
    elif "endSeq" in change:
        del op["endSeq"]
    elif "sources" in change:
        if change["sources"] is None:
            del ev["sourceEventSeqs"]
        else:
            ev["sourceEventSeqs"] = [seq - 1]  # the prune event: earlier, not the node
    elif change:
        block = ev["data"]["message"]["content"][0]
        block.update(change)
        if "toolCallId" in change:
            ev["data"]["message"]["source"]["callId"] = "other"
    if reason is None:
        index = replay_log(events, 3)
        assert index.replaced[seq] == [op["startSeq"]]
        return
    with pytest.raises(SessionFormatError, match=reason) as got:
        replay_log(events, 3)
    assert got.value.seq == seq
