"""Surface fold and validated edits: every rule of spec §7, crash repair of §9."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import ctxsdk as cx
from ctxsdk.errors import SessionFormatError, SurfaceError, UnknownEventType

from ._logs import V3, header, small_v3


def _session() -> cx.Session:
    return cx.Session.from_events(*small_v3())


def test_replace_spans_by_surface_position() -> None:
    s = _session()
    nodes = s.surface().seqs  # [system 2, user 3, assistant 7, result 9, assistant 12]
    s2 = s.replace(nodes[1], nodes[3], "summary of the first step", time=5)
    assert s2.surface().seqs == [nodes[0], len(s), nodes[4]]
    assert s2.surface()[1].shadowed == tuple(nodes[1:4])
    assert s2.messages()[1].text == "summary of the first step"
    # The replacement now sits where seq 3 was: a span from it to seq 12 is valid although
    # its seq is numerically larger than 12.
    s3 = s2.replace(len(s), nodes[4], "everything after the prompt", time=6)
    assert [m.role for m in s3.messages()] == ["system", "user"]
    # ... and the reverse order is refused, by position not by number.
    with pytest.raises(SurfaceError, match="after end"):
        s2.replace(nodes[4], len(s), "x")
    assert s.pending_events == [] and len(s2.pending_events) == 1 and len(s3.pending_events) == 2


def test_replace_needs_bounds_on_the_surface() -> None:
    s = _session()
    with pytest.raises(SurfaceError, match="not a span"):
        s.replace(0, 3, "x")  # turn/start is not a surface node
    s2 = s.replace(3, 3, "shorter prompt")
    with pytest.raises(SurfaceError, match="not a span"):
        s2.replace(3, 9, "x")  # 3 was shadowed


def test_replacement_must_cite_every_shadowed_node() -> None:
    s = _session()
    with pytest.raises(SurfaceError, match="does not cover"):
        s.replace(3, 9, "x", sources=[3, 7])


def test_v3_system_head_is_protected() -> None:
    s = _session()
    with pytest.raises(SurfaceError, match="system head"):
        s.replace(2, 3, "merged system and prompt")
    new_prompt = {"role": "system", "content": [{"type": "text", "text": "Be terse."}]}
    s2 = s.replace(2, 2, new_prompt)
    assert s2.system_prompt == "Be terse." and s2.messages()[0].role == "system"


def test_assistant_messages_never_replace() -> None:
    s = _session()
    msg = {"role": "assistant", "content": [{"type": "text", "text": "x"}]}
    with pytest.raises(SurfaceError, match="assistant"):
        s.replace(7, 7, msg)
    # The same op, written into a log by hand, is refused on load.
    hdr, events = small_v3()
    events.append(
        {
            "type": "assistant/message",
            "seq": len(events),
            "time": 1,
            "data": {**events[7]["data"], "stream": []},
            "surfaceOp": {"op": "replace", "startSeq": 7, "endSeq": 7},
        }
    )
    with pytest.raises(SessionFormatError, match="never replaces"):
        cx.Session.from_events(hdr, events)


def test_tool_result_rewrite_is_content_only() -> None:
    s = _session()
    s2 = s.rewrite_tool_result(9, "[pruned]")
    assert s2.messages()[3].tool_results[0].text == "[pruned]"
    assert s2.messages()[3].id == s.messages()[3].id
    hdr, events = small_v3()
    bad = copy.deepcopy(events[9])
    bad.update(
        seq=len(events),
        sourceEventSeqs=[9],
        surfaceOp={"op": "replace", "startSeq": 9, "endSeq": 9},
    )
    bad["data"]["message"]["content"][0]["isError"] = True
    with pytest.raises(SessionFormatError, match="only message.content"):
        cx.Session.from_events(hdr, [*events, bad])
    with pytest.raises(SurfaceError, match="not a tool/result"):
        s.rewrite_tool_result(7, "x")


def test_replace_op_shape_is_exact() -> None:
    hdr, events = small_v3()
    ev = copy.deepcopy(events[3])
    ev.update(
        seq=len(events), sourceEventSeqs=[3], surfaceOp={"op": "replace", "start": 3, "end": 3}
    )
    with pytest.raises(SessionFormatError, match="startSeq"):
        cx.Session.from_events(hdr, [*events, ev])


def test_unknown_events_need_ignorable() -> None:
    hdr, events = small_v3()
    extra = {"type": "future/thing", "seq": len(events), "time": 1, "data": {}}
    with pytest.raises(UnknownEventType, match="future/thing"):
        cx.Session.from_events(hdr, [*events, extra])
    s = cx.Session.from_events(hdr, [*events, {**extra, "ignorable": True}])
    assert s.event(len(events)).data == {}


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda e: e[3].update(seq=4), "contiguous"),
        (lambda e: e[3].update(time="now"), "time"),
        (lambda e: e[3].update(colour="red"), "envelope"),
        (lambda e: e[1].update(surfaceOp="append"), "not a surface type"),
        (lambda e: e[3]["data"].update(role="assistant"), "role 'user'"),
        (lambda e: e[7]["data"]["message"]["source"].update(kind="user"), "kind:'model'"),
        (lambda e: e[7]["data"].pop("stream"), "stream"),
        (lambda e: e[9]["data"]["message"]["content"][0].update(toolCallId="other"), "tool-result"),
        (lambda e: e[10]["data"].update(step=2), "step/end"),
        (lambda e: e[11]["data"].update(step=3), "step/start 3"),
        (lambda e: e[0]["data"].update(turn=2), "turn/start 2"),
    ],
)
def test_load_rules(mutate: Any, message: str) -> None:
    hdr, events = small_v3()
    mutate(events)
    with pytest.raises(SessionFormatError, match=message) as err:
        cx.Session.from_events(hdr, events)
    assert err.value.seq is not None


def test_result_without_its_call_is_refused() -> None:
    b = V3()
    b.add("turn/start", {"turn": 1})
    b.add("step/start", {"turn": 1, "step": 1})
    b.assistant(1, 1, "a", "", ("c1",))
    b.tool(1, 1, "c2", "out")
    with pytest.raises(SessionFormatError, match="answers no tool-call block"):
        cx.Session.from_events(header(), b.events)


def test_step_end_with_unanswered_call_is_refused() -> None:
    b = V3()
    b.add("turn/start", {"turn": 1})
    b.add("step/start", {"turn": 1, "step": 1})
    b.assistant(1, 1, "a", "", ("c1",))
    b.add("step/end", {"turn": 1, "step": 1})
    with pytest.raises(SessionFormatError, match="unanswered"):
        cx.Session.from_events(header(), b.events)


def _interrupted(started: bool) -> cx.Session:
    b = V3()
    b.add("turn/start", {"turn": 1})
    b.add("step/start", {"turn": 1, "step": 1})
    b.user("run it", "u")
    b.assistant(1, 1, "a", "running", ("c1",))
    if started:
        b.add(
            "tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "bash", "arguments": "{}"}
        )
    return cx.Session.from_events(header(), b.events)


@pytest.mark.parametrize("started", [True, False])
def test_crash_repair_closes_the_open_turn(started: bool) -> None:
    s = _interrupted(started)
    assert s.is_interrupted
    r = s.repaired()
    assert not r.is_interrupted
    kinds = [e["type"] for e in r.pending_events]
    # the harness's closers, then the resume marker its Session constructor appends
    assert kinds == ["tool/result", "step/end", "turn/end", "session/end-seed"]
    assert r.pending_events[-1]["data"] == {}
    result = r.event(len(s))
    code = "TOOL_OUTCOME_UNKNOWN" if started else "TOOL_NOT_STARTED"
    name = "ToolOutcomeUnknownError" if started else "ToolNotStartedError"
    assert result.data.error == {"name": name, "code": code}
    assert result.data.message.id == f"interrupted-tool-result-c1-{len(s)}"
    assert result.data.message.tool_results[0].is_error is True
    # repair.ts words the results; the harness's loader checks the not-started one exactly
    text = (
        "The tool call was interrupted after it was recorded, but no result was durably "
        "recorded. Its outcome is unknown. Decide whether to retry from the tool semantics: "
        "retry only if the operation is read-only or idempotent; if it may have side effects, "
        "first verify external state or ask the user. Do not retry blindly."
        if started
        else "The tool call was interrupted before the Harness recorded it as started. "
        "Retry it if it is still needed."
    )
    assert r.pending_events[0]["data"]["message"]["content"][0]["content"] == [
        {"type": "text", "text": text}
    ]
    assert all(e["time"] == s.raw_events[-1]["time"] for e in r.pending_events[:3])
    assert (result.source_event_seqs == [len(s) - 1]) is started
    assert r.turns()[0].reason == "interrupted"
    # The wire view repairs by itself, so a provider sees every call answered.
    wire = s.wire("openai")
    assert wire[-1]["role"] == "tool" and wire[-1]["tool_call_id"] == "c1"
    assert s.messages()[-1].role == "assistant"  # the stored surface is left as logged


def test_empty_assistant_and_empty_system_are_not_derived() -> None:
    b = V3()
    b.add("turn/start", {"turn": 1})
    b.add("step/start", {"turn": 1, "step": 1})
    sys_seq = b.system(1, 1, "")
    b.events[sys_seq]["data"]["message"]["content"] = []
    b.user("hi", "u")
    b.assistant(1, 1, "a")  # no text: a max-tokens host
    b.add("step/end", {"turn": 1, "step": 1})
    b.add("turn/end", {"turn": 1, "reason": {"kind": "max-tokens"}})
    s = cx.Session.from_events(header(), b.events)
    assert len(s.surface()) == 3
    assert [m.id for m in s.messages()] == ["u"]
    assert s.system_prompt is None
