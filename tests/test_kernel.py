"""The base every engine shares: the text variants, the replacement markers, the read-only log
view, the surface primitives and the one event writer."""

from __future__ import annotations

from typing import Any

import pytest

import ctxsdk as cx
from ctxsdk import errors
from ctxsdk.samples import sample
from ctxsdk.session import LogView, TokenCounter
from ctxsdk.session.kernel import (
    EventWriter,
    digest_text,
    display_text,
    first_line,
    gist,
    message_of,
    message_text,
    node_tokens,
    read_marker,
    search_text,
    tool_groups,
)

CALL = {"type": "tool-call", "id": "c1", "name": "bash", "arguments": '{"command": "ls"}'}
RESULT = {
    "type": "tool-result",
    "toolCallId": "c1",
    "content": [{"type": "text", "text": "a.py\nb.py"}],
    "isError": False,
}
ASSISTANT = {
    "id": "m1",
    "role": "assistant",
    "source": {"kind": "model"},
    "content": [
        {"type": "reasoning", "text": "Look first."},
        {"type": "text", "text": "Listing."},
        CALL,
    ],
}
TOOL = {"id": "m2", "role": "user", "source": {"kind": "tool", "callId": "c1"}, "content": [RESULT]}


@pytest.fixture(scope="module")
def long() -> cx.Session:
    return cx.Session.open(sample("long-refactor"))


# --- text ----------------------------------------------------------------------------------------


def test_each_text_variant_includes_what_it_says() -> None:
    assert message_text(ASSISTANT) == "Listing."  # text blocks only
    assert display_text(TOOL) == "a.py\nb.py"  # the text inside tool results too
    assert search_text(ASSISTANT) == 'Look first.\nListing.\nbash({"command": "ls"})'
    assert digest_text(ASSISTANT) == 'Listing.\nbash {"command": "ls"}'  # no reasoning
    assert gist(ASSISTANT) == 'Listing. -> bash({"command": "ls"})'
    assert gist(TOOL) == "result: a.py b.py"
    assert gist({**TOOL, "content": [{**RESULT, "isError": True}]}).startswith("error: ")
    assert first_line('bash {"command": "ls"}\n\n  the real line  \nmore') == "the real line"


def test_typed_and_raw_messages_give_the_same_text(long: cx.Session) -> None:
    for seq in long.message_seqs():
        raw = message_of(long.raw_events[seq])
        typed = long.message_at(seq)
        for variant in (message_text, display_text, search_text, digest_text, gist):
            assert variant(typed) == variant(raw), (variant.__name__, seq)
    assert all(m.text == message_text(m) for m in long.messages())


def test_gists_are_one_line_and_cut_to_width(long: cx.Session) -> None:
    for m in long.messages():
        g = gist(m, 40)
        assert "\n" not in g and len(g) <= 40
        assert repr(m).endswith(f"{gist(m, 60)!r})")


def test_malformed_raw_content_contributes_nothing() -> None:
    bad: dict[str, Any] = {"content": [None, 3, {"type": "text"}, {"type": "text", "text": 5}]}
    for variant in (message_text, display_text, search_text, digest_text, gist):
        assert variant(bad) == ""
    assert message_text({"content": "not a list"}) == ""


# --- markers ---------------------------------------------------------------------------------------


def test_markers_name_who_wrote_each_replacement(long: cx.Session) -> None:
    kinds = {}
    for seq in long.index.replaced:  # on the surface or shadowed by a later replacement
        mark = read_marker(long.raw_events[seq])
        kinds[seq] = None if mark is None else mark.kind
    assert sorted(kinds.values()) == ["compaction", "prune"]
    collapsed = cx.Assembly(long).set("t6", "key", digest="done").apply(write=False)
    new = [read_marker(e) for e in collapsed.pending_events]
    assert [m.kind for m in new if m is not None] == ["assembly"]
    assert all(m is None or m.kind != "assembly" for m in map(read_marker, long.raw_events))
    assert read_marker({"type": "user/message", "data": "not a mapping"}) is None


# --- the read-only log view ------------------------------------------------------------------------


def test_the_log_view_is_read_only_and_consistent(long: cx.Session) -> None:
    view = long.index
    assert isinstance(view, LogView) and view is long.index
    with pytest.raises(TypeError):
        view.replaced[1] = (2,)  # type: ignore[index]
    assert view.surface_seqs() == tuple(long.surface().seqs)
    for rep, shadowed in view.replaced.items():
        assert view.originals(rep) == shadowed
        assert all(view.shadowed_by[s] == rep for s in shadowed)
        covered = view.covered(rep)
        assert covered and all(s not in view.replaced for s in covered)
        assert view.origin(rep) == covered[0]
    for turn in view.turns:
        assert view.turn_of(turn.start_seq) == turn
        assert turn.end_seq is None or view.turn_of(turn.end_seq) == turn


# --- surface primitives ---------------------------------------------------------------------------


def test_tool_groups_keep_every_call_with_its_results(long: cx.Session) -> None:
    surface = list(long.surface())
    for first, last in tool_groups(surface):
        calls = {c.id for c in surface[first].message.tool_calls}
        answered = {
            r.tool_call_id for n in surface[first + 1 : last + 1] for r in n.message.tool_results
        }
        assert calls & answered and first < last


def test_node_tokens_match_the_token_table(long: cx.Session) -> None:
    counts = node_tokens(long, TokenCounter("cl100k_base"))
    assert len(counts) == len(long.surface())
    table = {r.seq: r.tokens for r in long.tokens("cl100k_base").rows}
    seqs = long.surface().seqs
    assert all(counts[seqs.index(s)] == t for s, t in table.items())


# --- the event writer ------------------------------------------------------------------------------


def test_the_writer_keeps_turns_steps_and_the_surface() -> None:
    w = EventWriter(3, clock=lambda: 7)
    w.start_turn()
    w.start_step()
    head = w.system_message(
        {"id": "s", "role": "system", "content": [], "source": {"kind": "plugin"}}
    )
    user = w.emit(
        "user/message",
        {"id": "u", "role": "user", "content": [], "source": {"kind": "user"}},
        op="append",
    )
    assert w.nodes == [head, user]
    again = w.system_message(
        {
            "id": "s2",
            "role": "system",
            "content": [{"type": "text", "text": "Be brief."}],
            "source": {"kind": "plugin"},
        }
    )
    assert w.nodes == [again, user] and w.event(again)["surfaceOp"] == {
        "op": "replace",
        "startSeq": head,
        "endSeq": head,
    }
    w.end_turn({"kind": "completed"})  # closes the open step first
    events = w.take()
    assert [e["type"] for e in events][-2:] == ["step/end", "turn/end"]
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert all(e["time"] == 7 for e in events) and w.take() == []
    s = cx.Session.from_events(
        {
            "type": "session",
            "version": 3,
            "id": "w",
            "createdAt": 1,
            "isSeeded": False,
            "delegationDepth": 0,
        },
        events,
    )
    assert [n.seq for n in s.surface()] == [again, user]


def test_the_writer_continues_a_session_and_refuses_a_foreign_head(long: cx.Session) -> None:
    w = EventWriter.after(long)
    assert w.next_seq == len(long) and w.nodes == list(long.surface().seqs)
    assert w.turn == long.turns()[-1].turn and not w.turn_open
    w.start_turn()
    assert w.take()[0]["data"] == {"turn": w.turn} and len(long) == w.next_seq - 1
    fresh = EventWriter(3)
    fresh.emit("user/message", {"id": "u", "role": "user", "content": []}, op="append")
    with pytest.raises(errors.SurfaceError, match="not a system message"):
        fresh.system_message({"id": "s", "role": "system", "content": []})
    with pytest.raises(errors.SurfaceError):
        fresh.replace("user/message", {}, [])


def test_below_v3_the_writer_uses_the_old_replace_keys() -> None:
    assert EventWriter(2).replace_op(4, 9) == {"op": "replace", "start": 4, "end": 9}
