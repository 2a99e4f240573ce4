"""The agent loop: scripted model replies (MockTransport) over real sample sessions, recorded
as harness-valid v3 events that fold, save, reopen and pair on the wire."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

import ctxsdk as cx
from ctxsdk._agent import run_agent
from ctxsdk.errors import LLMNotConfigured, SurfaceError
from ctxsdk.llm import LLM
from ctxsdk.samples import sample
from ctxsdk.tools import ToolContext, ToolRegistry, default_registry

from .conftest import v3_raw_session


def reply(
    text: str | None = None,
    calls: list[tuple[str, str, dict[str, Any] | str]] | None = None,
    *,
    finish: str | None = None,
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [
            {
                "id": cid,
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": args if isinstance(args, str) else json.dumps(args),
                },
            }
            for cid, name, args in calls
        ]
    return {
        "id": "cmpl",
        "model": "scripted-model",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": finish or ("tool_calls" if calls else "stop"),
            }
        ],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "prompt_cache_hit_tokens": 40},
    }


class Model:
    """Scripted replies; records each request body the loop sent."""

    def __init__(self, *replies: dict[str, Any] | httpx.Response) -> None:
        self.replies = list(replies)
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(json.loads(request.content))
        item = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        return item if isinstance(item, httpx.Response) else httpx.Response(200, json=item)

    def llm(self, **kw: Any) -> LLM:
        kw.setdefault("sleep", lambda _d: None)
        return LLM(
            "http://model.test/v1",
            "scripted-model",
            env={},
            transport=httpx.MockTransport(self),
            **kw,
        )


@pytest.fixture(scope="module")
def flaky() -> cx.Session:
    return cx.Session.open(sample("fix-flaky-test"))


def new_types(before: cx.Session, after: cx.Session) -> list[str]:
    return [e["type"] for e in after.raw_events[len(before) :]]


def test_tool_call_then_answer(flaky: cx.Session, tmp_path: Path) -> None:
    model = Model(
        reply("Let me look.", [("call_1", "context_search", {"query": "xdist"})]),
        reply("CI runs pytest-xdist; the tests share one SQLite file."),
    )
    after = run_agent(flaky, model.llm(), "Why was CI flaky? Search your context.")
    assert new_types(flaky, after) == [
        "turn/start",
        "step/start",
        "user/message",
        "request/header",
        "request/context",
        "assistant/message",
        "tool/call",
        "tool/result",
        "step/end",
        "step/start",
        "assistant/message",
        "step/end",
        "turn/end",
    ]
    assert len(after.pending_events) == 13 and not after.is_interrupted
    after.validate()  # every new event matches its typed model

    turn = after.turns()[-1]
    assert turn.turn == len(flaky.turns()) + 1 == 4
    assert turn.reason == "completed" and len(turn.steps) == 2
    assert turn.prompt == "Why was CI flaky? Search your context."
    assert (
        turn.usage is not None
        and turn.usage.input_tokens == 120
        and turn.usage.cache_read_tokens == 80
    )

    # the model saw the whole session, with the tool result fed back in the second request
    first, second = model.bodies
    prompt = {"role": "user", "content": "Why was CI flaky? Search your context."}
    assert first["messages"] == [*flaky.wire("openai"), prompt]
    assert first["tools"] == default_registry().definitions()
    tool_msg = second["messages"][-1]
    assert tool_msg["role"] == "tool" and tool_msg["tool_call_id"] == "call_1"
    result = json.loads(tool_msg["content"])
    assert result["query"] == "xdist" and result["total"] >= 2

    # the surface grew by exactly the appended messages; wire() pairs the call and its result
    wire = after.wire("openai")
    calls = [(i, m) for i, m in enumerate(wire) if m.get("tool_calls")]
    i, msg = calls[-1]
    assert msg["tool_calls"][0]["id"] == "call_1" and msg["content"] == "Let me look."
    assert wire[i + 1] == {"role": "tool", "tool_call_id": "call_1", "content": tool_msg["content"]}
    assert wire[-1] == {
        "role": "assistant",
        "content": "CI runs pytest-xdist; the tests share one SQLite file.",
    }
    assert len(after.messages()) == len(flaky.messages()) + 4

    # the assistant event carries route, usage and a stream
    msgs = [e for e in after.raw_events[len(flaky) :] if e["type"] == "assistant/message"]
    data = msgs[0]["data"]
    assert data["message"]["source"] == {
        "kind": "model",
        "provider": "openai-compatible",
        "model": "scripted-model",
    }
    assert data["usage"] == {"inputTokens": 60, "outputTokens": 10, "cacheReadTokens": 40}
    kinds = [r.get("chunk", {}).get("type", r["type"]) for r in data["stream"]]
    assert kinds == [
        "block-start",
        "text-chunks",
        "block-end",
        "block-start",
        "tool-call-chunks",
        "block-end",
        "usage",
        "finish",
    ]
    assert data["stream"][-1]["chunk"]["reason"] == {"kind": "tool-calls"}
    header = next(e for e in after.raw_events[len(flaky) :] if e["type"] == "request/header")[
        "data"
    ]
    assert header["reason"] == "change"
    assert header["header"]["config"] == {
        "provider": "openai-compatible",
        "model": "scripted-model",
        "maxTokens": 1024,
        "temperature": 0.0,
    }
    assert {t["name"] for t in header["header"]["tools"]} == {
        "context_assembler",
        "context_messages",
        "context_search",
        "context_recall",
        "merge_sessions",
        "ctx_remember",
        "ctx_link",
        "ctx_find",
        "ctx_read",
        "ctx_edit",
        "ctx_delete",
    }
    assert after.route == ("openai-compatible", "scripted-model")

    # it saves, reopens strictly, and appends to a real log
    saved = cx.Session.open(after.save(tmp_path / "out"), strict=True)
    assert saved.raw_events == after.raw_events
    copy = tmp_path / "live" / sample("fix-flaky-test").name
    copy.parent.mkdir()
    shutil.copy(sample("fix-flaky-test"), copy)
    live = cx.Session.open(copy)
    appended = run_agent(live, model.llm(), "again?").append_to_log()
    assert len(appended) > len(live) and not appended.pending_events
    assert appended.turns()[-1].reason == "completed"


def test_max_steps_ends_the_turn(flaky: cx.Session) -> None:
    model = Model(reply(None, [("c", "context_messages", {"last": 1})]))
    after = run_agent(flaky, model.llm(), "loop forever", max_steps=2)
    events = after.raw_events[len(flaky) :]
    assert sum(e["type"] == "assistant/message" for e in events) == 2
    assert sum(e["type"] == "tool/result" for e in events) == 2
    assert events[-1]["data"]["reason"] == {
        "kind": "aborted",
        "reason": {"kind": "hook", "reason": "max_steps 2 reached"},
    }
    assert len(model.bodies) == 2
    # the same call id in two steps is fine; a repeat inside one reply gets a fresh id
    after.validate()


def test_repeated_call_ids_are_made_unique(flaky: cx.Session) -> None:
    model = Model(
        reply(None, [("dup", "context_messages", {}), ("dup", "context_search", {"query": "x"})]),
        reply("done"),
    )
    after = run_agent(flaky, model.llm(), "two calls")
    ids = [e["data"]["callId"] for e in after.raw_events[len(flaky) :] if e["type"] == "tool/call"]
    assert ids[0] == "dup" and ids[1] != "dup" and len(set(ids)) == 2
    wire = after.wire()
    assert [m["tool_call_id"] for m in wire if m["role"] == "tool"][-2:] == ids


def test_tool_errors_are_recorded_and_the_loop_goes_on(flaky: cx.Session) -> None:
    model = Model(
        reply(None, [("c1", "no_such_tool", {}), ("c2", "context_search", "{not json")]),
        reply("Sorry."),
    )
    after = run_agent(flaky, model.llm(), "try tools")
    results = [e for e in after.raw_events[len(flaky) :] if e["type"] == "tool/result"]
    assert [r["data"]["error"]["code"] for r in results] == ["UNKNOWN_TOOL", "BAD_JSON"]
    assert all(r["data"]["message"]["content"][0]["isError"] for r in results)
    assert after.turns()[-1].reason == "completed"
    after.validate()


def test_truncated_reply_ends_with_max_tokens(flaky: cx.Session) -> None:
    model = Model(reply("partial", [("c1", "context_search", '{"query": "x')], finish="length"))
    after = run_agent(flaky, model.llm(), "long answer", max_tokens=8)
    events = after.raw_events[len(flaky) :]
    result = next(e for e in events if e["type"] == "tool/result")
    assert result["data"]["error"]["code"] == "TOOL_NOT_RUN"
    assert events[-1]["data"]["reason"] == {"kind": "max-tokens"}
    assert model.bodies[0]["max_tokens"] == 8


def test_provider_failure_is_recorded_as_an_error_turn(flaky: cx.Session) -> None:
    model = Model(httpx.Response(500, json={"error": {"message": "overloaded"}}))
    after = run_agent(flaky, model.llm(max_retries=0), "hello?")
    types = new_types(flaky, after)
    assert types == [
        "turn/start",
        "step/start",
        "user/message",
        "request/header",
        "request/context",
        "assistant/attempt",
        "step/end",
        "turn/end",
    ]
    end = after.raw_events[-1]["data"]["reason"]
    assert end["kind"] == "error" and end["error"]["status"] == 500
    assert end["error"]["code"] == "PROVIDER_ERROR" and "overloaded" in end["error"]["message"]
    attempt = after.raw_events[-3]["data"]["stream"][0]["chunk"]
    assert attempt["type"] == "finish" and attempt["reason"]["kind"] == "error"
    after.validate()


def test_cancel_aborts_the_turn(flaky: cx.Session) -> None:
    cancel = threading.Event()
    cancel.set()
    after = run_agent(flaky, Model(reply("x")).llm(), "stop", cancel=cancel)
    assert after.raw_events[-1]["data"]["reason"] == {"kind": "aborted", "reason": {"kind": "user"}}


def test_fresh_session_with_a_system_prompt() -> None:
    header, _ = v3_raw_session("fresh")
    empty = cx.Session.from_events(header, [])
    model = Model(reply("Hello."))
    after = run_agent(empty, model.llm(), "hi", system="You are terse.", registry=ToolRegistry())
    assert new_types(empty, after) == [
        "turn/start",
        "step/start",
        "system/message",
        "user/message",
        "request/header",
        "request/context",
        "assistant/message",
        "step/end",
        "turn/end",
    ]
    assert after.system_prompt == "You are terse."
    assert model.bodies[0]["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "hi"},
    ]
    assert "tools" not in model.bodies[0]
    header_ev = next(e for e in after.raw_events if e["type"] == "request/header")
    assert header_ev["data"]["reason"] == "initial" and "tools" not in header_ev["data"]["header"]
    # a second turn with a new prompt replaces node 0; the unchanged header is not repeated
    again = run_agent(after, model.llm(), "again", system="Be verbose.", registry=ToolRegistry())
    types = new_types(after, again)
    assert "request/header" not in types and "request/context" not in types
    sys_ev = next(e for e in again.raw_events[len(after) :] if e["type"] == "system/message")
    assert sys_ev["surfaceOp"]["op"] == "replace" and again.system_prompt == "Be verbose."
    assert again.wire()[0] == {"role": "system", "content": "Be verbose."}


def test_tools_see_the_growing_session(flaky: cx.Session) -> None:
    seen: list[int] = []
    reg = default_registry()

    def probe(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        assert ctx.session is not None
        seen.append(len(ctx.session))
        return {"events": len(ctx.session), "who": ctx.extras.get("who")}

    reg.register("probe", "Count events.", {"type": "object"}, probe)
    model = Model(reply(None, [("p", "probe", {})]), reply("ok"))
    after = run_agent(flaky, model.llm(), "probe", registry=reg, extras={"who": "test"})
    assert seen[0] > len(flaky)  # includes this turn's events up to the call
    res = next(e for e in after.raw_events[len(flaky) :] if e["type"] == "tool/result")
    assert json.loads(res["data"]["message"]["content"][0]["content"][0]["text"]) == {
        "events": seen[0],
        "who": "test",
    }


def test_refusals(flaky: cx.Session) -> None:
    with pytest.raises(LLMNotConfigured):
        run_agent(flaky, LLM(env={}), "x")
    with pytest.raises(ValueError):
        run_agent(flaky, Model(reply("x")).llm(), "x", max_steps=0)
    header, _ = v3_raw_session("old")
    v2 = cx.Session.from_events({**header, "version": 2}, [])
    with pytest.raises(SurfaceError, match="v3"):
        run_agent(v2, Model(reply("x")).llm(), "x")


def test_an_interrupted_session_is_repaired_first(flaky: cx.Session) -> None:
    cut = cx.Session.from_events(
        flaky.header.model_dump(by_alias=True, exclude_none=True), flaky.raw_events[:10]
    )
    assert cut.is_interrupted
    after = run_agent(cut, Model(reply("fine")).llm(), "continue")
    assert not after.is_interrupted
    reasons = [t.reason for t in after.turns()]
    assert reasons == ["interrupted", "completed"]


def test_a_turn_is_appended_in_batches_not_event_by_event(
    flaky: cx.Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Events reach the session in a few batches: before each model call, before each tool
    runs (a tool sees the session it runs in) and when the turn ends."""
    batches: list[list[str]] = []
    original = cx.Session.append

    def counting(self: cx.Session, events: Any) -> cx.Session:
        events = list(events)
        batches.append([e["type"] for e in events])
        return original(self, events)

    monkeypatch.setattr(cx.Session, "append", counting)
    model = Model(
        reply(
            "Two searches.",
            [("c1", "context_search", {"query": "a"}), ("c2", "context_search", {"query": "b"})],
        ),
        reply("Done."),
    )
    after = run_agent(flaky, model.llm(), "Search twice.")
    assert sum(len(b) for b in batches) == len(after.pending_events) == 15
    # model call 1, tool 1, tool 2, model call 2, turn end
    assert len(batches) == 5
    assert batches[0] == [
        "turn/start",
        "step/start",
        "user/message",
        "request/header",
        "request/context",
    ]
    assert batches[1] == ["assistant/message"]
    assert batches[2] == ["tool/call", "tool/result"]
    assert batches[3] == ["tool/call", "tool/result", "step/end", "step/start"]
    assert batches[4] == ["assistant/message", "step/end", "turn/end"]
