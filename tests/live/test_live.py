"""Real round trips against a local llama-cpp-python server with gemma-3-270m, a BASE model:
these check the plumbing (HTTP, usage, streaming, timeouts, the ladder), not answer quality."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

import ctxsdk as cx
from ctxsdk._agent import run_agent
from ctxsdk.errors import LLMTimeout
from ctxsdk.llm import LADDER, LLM, Structured
from ctxsdk.tools import ToolRegistry

from ..conftest import v3_raw_session
from .conftest import BASE_URL, MODEL

pytestmark = pytest.mark.live

LADDER_KINDS = {kind for kind, _ in LADDER}


class Capital(BaseModel):
    city: str


def _report(name: str, out: Structured[Capital]) -> None:
    got = f"ok {out.value!r}" if out.ok else f"degraded: {out.degraded_reason}"
    print(f"\n[{name}] {got}; reply {out.text[:80]!r}; {out.usage!r}")


def test_round_trip_returns_text_and_usage(llm: LLM) -> None:
    result = llm.chat("Reply with exactly: PONG", max_tokens=16)
    print(f"\n[round trip] {result!r}")
    assert result.text.strip()
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    assert result.finish_reason in ("stop", "length")
    assert llm.usage_total.calls == 1 and llm.usage_total == result.usage


def test_structured_validates_or_degrades_with_a_ladder_reason(llm: LLM) -> None:
    prompt = "What is the capital of France? Give the city."
    plain = llm.structured(prompt, Capital, max_tokens=48)
    _report("structured", plain)
    constrained = llm.structured(prompt, Capital, max_tokens=48, json_mode=True)
    _report("structured json_mode", constrained)
    for out in (plain, constrained):
        if out.ok:
            assert isinstance(out.value, Capital)
        else:
            assert out.kind in LADDER_KINDS and out.degraded_reason
            assert out.kind in {"truncated", "malformed-json", "schema"}  # the server answered
    assert llm.usage_total.calls == 2


def test_streaming_yields_chunks(llm: LLM) -> None:
    stream = llm.stream("Count from one to ten: one, two,", max_tokens=24)
    deltas = [d.text for d in stream if d.kind == "text"]
    print(f"\n[stream] {len(deltas)} chunks: {''.join(deltas)!r}")
    assert len(deltas) >= 2
    assert stream.result.text == "".join(deltas)


def test_stop_sequence(llm: LLM) -> None:
    result = llm.chat("List: a, b, c, d, e, f", max_tokens=32, stop=[","])
    print(f"\n[stop] {result!r}")
    assert "," not in result.text


def test_tiny_timeout_degrades_with_timeout() -> None:
    assert BASE_URL
    slow = LLM(BASE_URL, MODEL, env={}, timeout=0.001, max_retries=0)
    out = slow.structured("Write a long story about a lighthouse.", Capital, max_tokens=256)
    print(f"\n[timeout] {out!r}")
    assert out.degraded_reason == "timeout" and out.kind == "timeout"
    with pytest.raises(LLMTimeout):
        slow.chat("Write a long story.", max_tokens=256)


def test_async_round_trip(llm: LLM) -> None:
    result = asyncio.run(llm.achat("Say hello.", max_tokens=8))
    print(f"\n[async] {result!r}")
    assert result.usage.output_tokens > 0


def test_agent_turn_over_the_real_server(llm: LLM) -> None:
    header, _ = v3_raw_session("live-agent")
    empty = cx.Session.from_events(header, [])
    after = run_agent(empty, llm, "Say hello.", max_tokens=16, registry=ToolRegistry())
    after.validate()
    turn = after.turns()[-1]
    print(f"\n[agent] turn ended {turn.reason}; wire tail {after.wire()[-1]!r}")
    assert turn.reason in ("completed", "max-tokens")
    assert turn.usage is not None and turn.usage.output_tokens > 0


def test_merge_with_a_real_model_is_validated_or_falls_back(llm: LLM) -> None:
    """A tiny real model aligning two sessions: whatever it answers, the merge keeps only
    opinions of the real branches, quoted from them, and the block stays within budget; a
    useless answer falls back to the deterministic path and says why."""
    from ctxsdk.testing import LogBuilder

    sessions = []
    for sid, text in (
        ("live-m-a", "The database is PostgreSQL."),
        ("live-m-b", "Logs go to stdout."),
    ):
        b = LogBuilder(session_id=sid, runtime_context=None)
        b.turn(text).assistant(text="Noted.").end_turn()
        sessions.append(cx.Session.from_events(b.header, b.events))
    r = cx.Merge(sessions, llm=llm, max_slots=8).budget(300).run()
    print(f"\n[merge] alignment {r.alignment.mode} ({r.alignment.reason}); {len(r.slots)} slots")
    assert r.block.tokens <= 300
    assert {c.source for s in r.slots for c in s.claims} <= {"live-m-a", "live-m-b"}
    if r.alignment.mode == "heuristic":
        assert r.alignment.reason
        assert r.slot("database").presented == ("postgresql",)
