"""The model seam through httpx.MockTransport: routes, request settings, retries, the
degradation ladder, fenced JSON, validation failures, usage accounting, streaming, async."""

from __future__ import annotations

import asyncio
import dataclasses
import email.utils
import json
import logging
import random
import subprocess
import sys
import threading
import time
import typing
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from ctxsdk.errors import (
    LLM_FAILURES,
    CtxError,
    InvalidArgument,
    LLMAuthError,
    LLMCancelled,
    LLMError,
    LLMNotConfigured,
    LLMOutputError,
    LLMProviderError,
    LLMTimeout,
)
from ctxsdk.llm import (
    LADDER,
    LLM,
    NO_ROUTE,
    CallOptions,
    ChatResult,
    ModelProtocol,
    Outcome,
    RetryPolicy,
    Structured,
    TraceEvent,
    Usage,
    with_fallback,
)
from ctxsdk.llm._base import DegradedKind, parse_structured
from ctxsdk.session.kernel import TRUNCATION_MARKER, extract_json, truncate_keep_tail

BASE = "http://model.test/v1"
KEY = "sk-test-SECRET-0123456789"

Handler = Callable[[httpx.Request], httpx.Response]


class Capital(BaseModel):
    city: str
    population_m: float


def completion(
    text: str | None = "ok",
    *,
    finish: str = "stop",
    usage: dict[str, Any] | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    reasoning: str | None = None,
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    return {
        "id": "cmpl-1",
        "object": "chat.completion",
        "model": "m-served",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage or {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
    }


class Script:
    """A MockTransport handler that answers from a list and records every request."""

    def __init__(self, *responses: httpx.Response | dict[str, Any] | Exception) -> None:
        self.responses = list(responses)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        item = self.responses.pop(0) if len(self.responses) > 1 else self.responses[0]
        if isinstance(item, Exception):
            raise item
        if isinstance(item, dict):
            return httpx.Response(200, json=item)
        return item

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]


def make_llm(script: Handler, **kw: Any) -> tuple[LLM, list[float]]:
    sleeps: list[float] = []
    kw.setdefault("base_url", BASE)
    kw.setdefault("model", "m")
    kw.setdefault("env", {})
    kw.setdefault("seed", 7)
    kw.setdefault("sleep", sleeps.append)
    return LLM(transport=httpx.MockTransport(script), **kw), sleeps


# --- route resolution and secrets ------------------------------------------------------------


def test_no_route_configured() -> None:
    llm = LLM(env={})
    assert not llm.configured and llm.route is None
    assert repr(llm) == "LLM(no route configured)"
    assert LLM.from_env(env={}) is None
    with pytest.raises(LLMNotConfigured) as exc:
        llm.chat("hi")
    assert exc.value.reason == NO_ROUTE and "CTXSDK_LLM_BASE_URL" in str(exc.value)
    out = llm.structured("hi", Capital)
    assert not out.ok and out.degraded_reason == NO_ROUTE and out.kind == "no-route"
    assert out.value is None


def test_deepseek_is_the_default_route() -> None:
    llm = LLM(env={"DEEPSEEK_API_KEY": KEY})
    assert llm.base_url == "https://api.deepseek.com"
    assert llm.model == "deepseek-v4-flash"
    assert llm.provider == "deepseek" and llm.has_key
    assert llm.route == ("deepseek", "deepseek-v4-flash")
    assert LLM.from_env(env={"DEEPSEEK_API_KEY": KEY}) is not None


def test_ctxsdk_env_wins_and_deepseek_key_stays_home() -> None:
    env = {
        "CTXSDK_LLM_BASE_URL": "http://127.0.0.1:9999/v1/",
        "CTXSDK_LLM_MODEL": "local",
        "DEEPSEEK_API_KEY": KEY,
    }
    llm = LLM(env=env)
    assert llm.base_url == "http://127.0.0.1:9999/v1"
    assert llm.model == "local" and llm.provider == "openai-compatible"
    assert not llm.has_key  # a DeepSeek key is never sent to another server
    llm2 = LLM(env={**env, "CTXSDK_LLM_API_KEY": "k2"})
    assert llm2.has_key
    assert LLM("http://x/v1", "explicit", env=env).model == "explicit"


def test_base_url_without_model_is_not_configured() -> None:
    llm = LLM("http://127.0.0.1:1/v1", env={})
    assert not llm.configured
    with pytest.raises(LLMNotConfigured, match="no a model|model"):
        llm.chat("x")


def test_repr_and_errors_never_show_the_key(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="ctxsdk.llm")
    script = Script(httpx.Response(401, json={"error": {"message": f"bad key {KEY}"}}))
    llm, _ = make_llm(script, api_key=KEY)
    assert KEY not in repr(llm) and "api_key=<set>" in repr(llm)
    with pytest.raises(LLMAuthError) as exc:
        llm.chat("the prompt text PROMPT-42")
    assert KEY not in str(exc.value) and "[REDACTED]" in str(exc.value)
    assert script.requests[0].headers["authorization"] == f"Bearer {KEY}"
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert KEY not in logged and "PROMPT-42" not in logged


def test_no_authorization_header_without_key() -> None:
    script = Script(completion())
    llm, _ = make_llm(script)
    llm.chat("hi")
    assert "authorization" not in script.requests[0].headers
    assert str(script.requests[0].url) == f"{BASE}/chat/completions"


def test_llm_satisfies_the_engine_protocol() -> None:
    assert isinstance(LLM(env={}), ModelProtocol)


def test_importing_the_seam_does_not_import_httpx() -> None:
    code = (
        "import sys, ctxsdk.llm as l\n"
        "from ctxsdk.llm import with_fallback, ModelProtocol, Structured\n"
        "print('httpx' in sys.modules)\n"
        "l.LLM\n"
        "print('httpx' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]


def test_error_tree() -> None:
    for cls in (LLMNotConfigured, LLMAuthError, LLMProviderError, LLMTimeout, LLMCancelled):
        assert issubclass(cls, LLMError) and issubclass(cls, CtxError)
    assert issubclass(LLMAuthError, PermissionError)
    assert issubclass(LLMTimeout, TimeoutError)
    assert issubclass(LLMOutputError, ValueError)
    assert issubclass(LLMError, RuntimeError)


# --- request settings ------------------------------------------------------------------------


def test_default_call_settings_are_the_seeds() -> None:
    script = Script(completion())
    llm, _ = make_llm(script)
    llm.chat([{"role": "system", "content": "s"}, {"role": "user", "content": "u"}])
    body = script.bodies[0]
    assert body["temperature"] == 0
    assert body["max_tokens"] == 4000
    assert body["model"] == "m"
    assert "reasoning_effort" not in body and "thinking" not in body
    assert "stream" not in body
    assert body["messages"] == [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "u"},
    ]


def test_reasoning_effort_on_openai_compatible_servers() -> None:
    script = Script(completion())
    llm, _ = make_llm(script)
    llm.chat("x", reasoning_effort="high", max_tokens=50, stop=["\n"])
    body = script.bodies[0]
    assert body["reasoning_effort"] == "high"
    assert body["max_tokens"] == 50 and body["stop"] == ["\n"]


def test_reasoning_effort_on_deepseek() -> None:
    script = Script(completion())
    llm, _ = make_llm(script, base_url="https://api.deepseek.com", model=None, api_key=KEY)
    assert llm.provider == "deepseek" and llm.model == "deepseek-v4-flash"
    llm.chat("x")
    llm.chat("x", reasoning_effort="high")
    off, high = script.bodies
    assert off["thinking"] == {"type": "disabled"} and "reasoning_effort" not in off
    assert high["thinking"] == {"type": "enabled"} and high["reasoning_effort"] == "high"
    assert str(script.requests[0].url) == "https://api.deepseek.com/chat/completions"


def test_max_chars_per_input_keeps_the_tail() -> None:
    script = Script(completion())
    llm, _ = make_llm(script, max_chars_per_input=100)
    long = "HEAD " + "x" * 500 + " THE-TAIL"
    llm.chat(long)
    sent = script.bodies[0]["messages"][0]["content"]
    assert len(sent) <= 100 and sent.startswith(TRUNCATION_MARKER) and sent.endswith(" THE-TAIL")
    assert "HEAD" not in sent
    llm.chat(long, max_chars_per_input=1000)  # per call wins
    assert script.bodies[1]["messages"][0]["content"] == long


def test_structured_schema_instruction_survives_the_cap() -> None:
    script = Script(completion('{"city": "Paris", "population_m": 2.1}'))
    llm, _ = make_llm(script, max_chars_per_input=50)
    out = llm.structured("y" * 400 + " END", Capital)
    assert out.ok
    content = script.bodies[0]["messages"][-1]["content"]
    assert content.startswith(TRUNCATION_MARKER) and "END" in content
    assert '"population_m"' in content  # the schema itself is never cut


def test_redaction_hook_sees_every_text() -> None:
    script = Script(completion())
    seen: list[str] = []

    def redact(text: str) -> str:
        seen.append(text)
        return text.replace("hunter2", "[REDACTED:password]")

    llm, _ = make_llm(script, redact=redact)
    messages = [
        {"role": "user", "content": "my password is hunter2"},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "noted hunter2"}],
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "f", "arguments": '{"p": "hunter2"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "ok hunter2"},
    ]
    llm.chat(messages)
    raw = script.requests[0].content.decode()
    assert "hunter2" not in raw and raw.count("[REDACTED:password]") == 4
    assert messages[0]["content"] == "my password is hunter2"  # the caller's data is untouched


def test_json_mode_sends_response_format() -> None:
    script = Script(completion('{"city": "Paris", "population_m": 2}'))
    llm, _ = make_llm(script)
    assert llm.structured("capital?", Capital, json_mode=True).ok
    assert script.bodies[0]["response_format"] == {"type": "json_object"}


# --- results and usage -----------------------------------------------------------------------


def test_chat_result_and_usage_accounting() -> None:
    deepseek_usage = {
        "prompt_tokens": 100,
        "completion_tokens": 20,
        "prompt_cache_hit_tokens": 60,
        "prompt_cache_miss_tokens": 40,
        "completion_tokens_details": {"reasoning_tokens": 5},
    }
    openai_usage = {
        "prompt_tokens": 50,
        "completion_tokens": 7,
        "prompt_tokens_details": {"cached_tokens": 10},
    }
    script = Script(
        completion("hello", usage=deepseek_usage, reasoning="thinking..."),
        completion("again", usage=openai_usage),
    )
    llm, _ = make_llm(script)
    first = llm.chat("hi")
    assert isinstance(first, ChatResult)
    assert first.text == "hello" and first.reasoning == "thinking..."
    assert first.usage == Usage(
        input_tokens=40, cache_hit_tokens=60, output_tokens=20, reasoning_tokens=5, calls=1
    )
    assert first.usage.prompt_tokens == 100 and first.usage.total_tokens == 120
    assert first.usage.to_token_usage() == {
        "inputTokens": 40,
        "outputTokens": 20,
        "cacheReadTokens": 60,
        "reasoningTokens": 5,
    }
    assert first.model == "m-served" and first.request_id == "cmpl-1" and first.attempts == 1
    assert first.finish_kind == "stop" and not first.truncated
    second = llm.chat("hi")
    assert second.usage.input_tokens == 40 and second.usage.cache_hit_tokens == 10
    total = llm.usage_total
    assert total.calls == 2 and total.input_tokens == 80 and total.output_tokens == 27
    assert total.cache_hit_tokens == 70
    assert llm.usage_calls == (first.usage, second.usage)
    assert "2 calls" in repr(total)
    llm.reset_usage()
    assert llm.usage_total == Usage() and llm.usage_calls == ()


def test_tool_calls_are_parsed() -> None:
    calls = [
        {
            "id": "call_a",
            "type": "function",
            "function": {"name": "context_search", "arguments": '{"query": "x"}'},
        },
        {"type": "function", "function": {"name": "context_messages", "arguments": {"last": 2}}},
    ]
    script = Script(completion(None, finish="tool_calls", tool_calls=calls))
    llm, _ = make_llm(script)
    tools = [
        {
            "type": "function",
            "function": {"name": "context_search", "parameters": {"type": "object"}},
        }
    ]
    result = llm.chat("find x", tools=tools)
    assert script.bodies[0]["tools"] == tools
    assert result.text == "" and result.finish_kind == "tool-calls"
    assert [c.name for c in result.tool_calls] == ["context_search", "context_messages"]
    assert (
        result.tool_calls[0].id == "call_a" and result.tool_calls[0].arguments == '{"query": "x"}'
    )
    assert result.tool_calls[1].id.startswith("call_01_")  # minted when the server gave none
    assert json.loads(result.tool_calls[1].arguments) == {"last": 2}


def test_usage_is_not_counted_for_failed_calls() -> None:
    script = Script(httpx.Response(500))
    llm, _ = make_llm(script, max_retries=0)
    assert not llm.structured("x", Capital).ok
    assert llm.usage_total.calls == 0


# --- retries -----------------------------------------------------------------------------------


def test_retries_5xx_with_capped_jittered_backoff() -> None:
    script = Script(
        httpx.Response(503), httpx.Response(502), httpx.Response(500), completion("fine")
    )
    llm, sleeps = make_llm(script, max_retries=3, backoff_base=0.5, backoff_cap=1.5)
    result = llm.chat("x")
    assert result.text == "fine" and result.attempts == 4 and len(script.requests) == 4
    assert len(sleeps) == 3
    for delay, ceiling in zip(sleeps, [0.5, 1.0, 1.5], strict=True):  # 2.0 capped at 1.5
        assert ceiling / 2 <= delay <= ceiling


def test_gives_up_after_max_retries() -> None:
    script = Script(httpx.Response(500, json={"error": {"message": "overloaded"}}))
    llm, sleeps = make_llm(script, max_retries=2)
    with pytest.raises(LLMProviderError) as exc:
        llm.chat("x")
    assert exc.value.status == 500 and exc.value.reason == "provider returned 500"
    assert "overloaded" in str(exc.value) and "after 3 attempts" in str(exc.value)
    assert len(script.requests) == 3 and len(sleeps) == 2


def test_retry_after_seconds_is_honoured() -> None:
    script = Script(httpx.Response(429, headers={"Retry-After": "2"}), completion("ok"))
    llm, sleeps = make_llm(script)
    assert llm.chat("x").text == "ok"
    assert sleeps == [2.0]


def test_retry_after_ms_is_honoured() -> None:
    script = Script(httpx.Response(429, headers={"retry-after-ms": "250"}), completion("ok"))
    llm, sleeps = make_llm(script)
    llm.chat("x")
    assert sleeps == [0.25]


def test_retry_after_http_date_is_honoured() -> None:
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    script = Script(httpx.Response(503, headers={"Retry-After": when}), completion("ok"))
    llm, sleeps = make_llm(script)
    llm.chat("x")
    assert len(sleeps) == 1 and 25 <= sleeps[0] <= 30


def test_retry_after_beyond_the_cap_is_not_waited_for() -> None:
    script = Script(httpx.Response(429, headers={"Retry-After": "3600"}), completion("ok"))
    llm, sleeps = make_llm(script, retry_after_cap=60)
    with pytest.raises(LLMProviderError) as exc:
        llm.chat("x")
    assert exc.value.status == 429 and exc.value.retry_after == 3600
    assert sleeps == [] and len(script.requests) == 1


@pytest.mark.parametrize("status", [400, 404, 422])
def test_client_errors_are_not_retried(status: int) -> None:
    script = Script(httpx.Response(status, json={"error": {"message": "bad request"}}))
    llm, sleeps = make_llm(script)
    with pytest.raises(LLMProviderError, match=f"provider returned {status}: bad request"):
        llm.chat("x")
    assert len(script.requests) == 1 and sleeps == []


@pytest.mark.parametrize("status", [401, 403])
def test_auth_failure_is_a_clear_error_and_not_retried(status: int) -> None:
    script = Script(httpx.Response(status, json={"error": {"message": "invalid api key"}}))
    llm, sleeps = make_llm(script, api_key=KEY)
    with pytest.raises(LLMAuthError) as exc:
        llm.chat("x")
    assert exc.value.reason == "auth failed" and exc.value.status == status
    assert "check the api key" in str(exc.value).lower()
    assert len(script.requests) == 1 and sleeps == []


def test_timeouts_and_connection_errors_are_retried() -> None:
    script = Script(httpx.ReadTimeout("slow"), httpx.ConnectError("refused"), completion("ok"))
    llm, sleeps = make_llm(script)
    assert llm.chat("x").text == "ok" and len(sleeps) == 2


def test_non_json_body_is_a_provider_error() -> None:
    script = Script(httpx.Response(200, text="<html>gateway</html>"))
    llm, _ = make_llm(script)
    out = llm.structured("x", Capital)
    assert out.degraded_reason == "provider returned an invalid response" and out.kind == "provider"


# --- the degradation ladder ------------------------------------------------------------------


def _ladder_case(name: str) -> tuple[Script, dict[str, Any]]:
    kw: dict[str, Any] = {"max_retries": 1}
    if name == "provider":
        return Script(httpx.Response(500)), kw
    if name == "auth":
        return Script(httpx.Response(401)), kw
    if name == "timeout":
        return Script(httpx.ReadTimeout("slow")), kw
    if name == "unreachable":
        return Script(httpx.ConnectError("refused")), kw
    if name == "truncated":
        return Script(completion('{"city": "Par', finish="length")), kw
    if name == "malformed":
        return Script(completion("I think the capital is Paris.")), kw
    if name == "broken-json":
        return Script(completion('{"city": "Paris", population_m: 2}')), kw
    if name == "schema":
        return Script(completion('{"city": "Paris", "population_m": "many"}')), kw
    raise AssertionError(name)


@pytest.mark.parametrize(
    ("name", "reason", "kind"),
    [
        ("provider", "provider returned 500", "provider"),
        ("auth", "auth failed", "auth"),
        ("timeout", "timeout", "timeout"),
        ("unreachable", "provider unreachable: ConnectError", "provider"),
        ("truncated", "max-tokens truncation", "truncated"),
        ("malformed", "malformed JSON: no JSON object in the reply", "malformed-json"),
        (
            "broken-json",
            "malformed JSON: Expecting property name enclosed in double quotes",
            "malformed-json",
        ),
        (
            "schema",
            "schema validation failed: population_m: Input should be a valid number",
            "schema",
        ),
    ],
)
def test_every_rung_of_the_ladder_degrades_with_its_reason(
    name: str, reason: str, kind: str
) -> None:
    script, kw = _ladder_case(name)
    llm, _ = make_llm(script, **kw)
    out = llm.structured("capital of France?", Capital)
    assert not out.ok and out.value is None
    assert out.degraded_reason is not None and out.degraded_reason.startswith(reason)
    assert out.kind == kind
    assert kind in {k for k, _ in LADDER}
    assert repr(out) == f"Structured(degraded: {out.degraded_reason})"
    with pytest.raises(LLMError) as exc:
        out.unwrap()
    assert exc.value.reason == out.degraded_reason
    # the same failure through the engines' pattern lands on the heuristic, with the reason
    got = with_fallback(
        llm, lambda m: m.structured("capital?", Capital), lambda: Capital(city="?", population_m=0)
    )
    assert got.value.city == "?" and got.reason is not None and got.reason.startswith(reason)


def test_cancelled_before_the_call() -> None:
    script = Script(completion('{"city": "Paris", "population_m": 2}'))
    llm, _ = make_llm(script)
    cancel = threading.Event()
    cancel.set()
    out = llm.structured("x", Capital, cancel=cancel)
    assert out.degraded_reason == "cancelled" and out.kind == "cancelled"
    assert script.requests == []
    with pytest.raises(LLMCancelled):
        llm.chat("x", cancel=cancel)


def test_cancelled_during_backoff() -> None:
    cancel = threading.Event()
    script = Script(httpx.Response(503), completion("never"))
    llm, _ = make_llm(script, sleep=lambda _delay: cancel.set())
    with pytest.raises(LLMCancelled):
        llm.chat("x", cancel=cancel)
    assert len(script.requests) == 1


def test_structured_accepts_fenced_and_embedded_json() -> None:
    replies = [
        '{"city": "Paris", "population_m": 2.1}',
        'Sure! Here it is:\n```json\n{"city": "Paris", "population_m": 2.1}\n```\nAnything else?',
        'The answer is {"city": "Paris", "population_m": 2.1} as requested.',
        '```\n{"city": "Paris", "population_m": 2.1}\n```',
        'Note {not json} then {"city": "Paris", "population_m": 2.1} and {"x": 1}',
    ]
    for reply in replies:
        llm, _ = make_llm(Script(completion(reply)))
        out = llm.structured("capital?", Capital)
        assert out.ok, (reply, out.degraded_reason)
        assert out.value == Capital(city="Paris", population_m=2.1)
        assert out.unwrap().city == "Paris" and out.usage.calls == 1
        assert repr(out).startswith("Structured(ok, ")


def test_a_valid_object_before_the_cut_is_accepted() -> None:
    reply = '{"city": "Paris", "population_m": 2.1}\n\nAnd another thing, the'
    llm, _ = make_llm(Script(completion(reply, finish="length")))
    out = llm.structured("capital?", Capital)
    assert out.ok and out.result is not None and out.result.truncated


def test_structured_request_carries_the_schema() -> None:
    script = Script(completion('{"city": "Paris", "population_m": 2}'))
    llm, _ = make_llm(script)
    llm.structured(
        [{"role": "system", "content": "sys"}, {"role": "user", "content": "Q"}], Capital
    )
    msgs = script.bodies[0]["messages"]
    assert msgs[0] == {"role": "system", "content": "sys"}
    assert msgs[1]["content"].startswith("Q\n\nAnswer with one JSON object only")
    assert json.loads(msgs[1]["content"].split("\n")[-1])["required"] == ["city", "population_m"]


# --- helpers ---------------------------------------------------------------------------------


def test_truncate_keep_tail() -> None:
    assert truncate_keep_tail("abc", None) == "abc"
    assert truncate_keep_tail("abc", 3) == "abc"
    text = "0123456789" * 10
    cut = truncate_keep_tail(text, 50)
    assert (
        len(cut) == 50
        and cut.startswith(TRUNCATION_MARKER)
        and text.endswith(cut[len(TRUNCATION_MARKER) :])
    )
    assert truncate_keep_tail(text, 5) == "56789"  # no room for the marker: the bare tail
    assert truncate_keep_tail(text, 0) == ""
    with pytest.raises(ValueError):
        truncate_keep_tail(text, -1)


def test_extract_json_errors_say_what_was_wrong() -> None:
    assert extract_json('  {"a": 1}  ') == {"a": 1}
    with pytest.raises(ValueError, match="empty"):
        extract_json("   ")
    with pytest.raises(ValueError, match="no JSON object"):
        extract_json("just prose")
    with pytest.raises(ValueError, match="not an object"):
        extract_json("[1, 2]")
    with pytest.raises(ValueError, match="Expecting"):
        extract_json('{"a": 1,')


def test_parse_structured_without_http() -> None:
    ok = parse_structured(ChatResult(text='{"city": "Oslo", "population_m": 0.7}'), Capital)
    assert ok.ok and ok.value is not None and ok.value.city == "Oslo"
    bad = parse_structured(ChatResult(text='{"city": "Oslo"}'), Capital)
    assert bad.degraded_reason == "schema validation failed: population_m: Field required"


def test_with_fallback() -> None:
    assert with_fallback(None, lambda m: 1, lambda: 2) == Outcome(2, NO_ROUTE)
    value, reason = with_fallback(None, lambda m: 1, lambda: 2)
    assert (value, reason) == (2, "no route configured")
    ok_llm, _ = make_llm(Script(completion('{"city": "Rome", "population_m": 2.8}')))
    got = with_fallback(
        ok_llm, lambda m: m.structured("q", Capital), lambda: Capital(city="?", population_m=0)
    )
    assert got.value.city == "Rome" and got.reason is None and got.source == "model"
    assert repr(got).startswith("Outcome(model, ")
    down, _ = make_llm(Script(httpx.Response(500)), max_retries=0)
    got2 = with_fallback(
        down, lambda m: m.structured("q", Capital), lambda: Capital(city="?", population_m=0)
    )
    assert got2.degraded and got2.source == "heuristic"
    assert repr(got2).startswith("Outcome(heuristic: provider returned 500, ")
    # a plain (non-Structured) return value is the model's answer; chat errors are caught
    assert with_fallback(ok_llm, lambda m: "model says hi", lambda: "h") == ("model says hi", None)
    assert with_fallback(down, lambda m: m.chat("q").text, lambda: "h") == (
        "h",
        "provider returned 500",
    )

    # an engine that rejects a validated answer raises LLMOutputError itself
    def reject(m: ModelProtocol) -> Structured[Capital]:
        raise LLMOutputError("zero usable slots", reason="model output unusable: zero usable slots")

    assert (
        with_fallback(ok_llm, reject, lambda: None).reason
        == "model output unusable: zero usable slots"
    )

    def bug(m: ModelProtocol) -> int:
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        with_fallback(ok_llm, bug, lambda: 0)


def test_with_fallback_logs_the_reason(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="ctxsdk.llm")
    with_fallback(None, lambda m: 1, lambda: 2)
    assert caplog.text == ""  # no model is the normal deterministic path, not a warning
    down, _ = make_llm(Script(httpx.Response(503)), max_retries=0)
    with_fallback(down, lambda m: m.chat("q").text, lambda: "h")
    assert "degraded to the heuristic: provider returned 503" in caplog.text


# --- streaming -------------------------------------------------------------------------------


def _sse(*chunks: dict[str, Any]) -> httpx.Response:
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    return httpx.Response(200, text=body, headers={"content-type": "text/event-stream"})


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "s1",
        "model": "m-served",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


STREAM = (
    _chunk({"role": "assistant"}),
    _chunk({"reasoning_content": "hmm"}),
    _chunk({"content": "Hel"}),
    _chunk({"content": "lo"}),
    _chunk(
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_s",
                    "function": {"name": "context_search", "arguments": ""},
                }
            ]
        }
    ),
    _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"query"'}}]}),
    _chunk({"tool_calls": [{"index": 0, "function": {"arguments": ': "x"}'}}]}),
    _chunk({}, "tool_calls"),
    {"id": "s1", "choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 4}},
)


def test_stream_yields_deltas_and_assembles_the_result() -> None:
    script = Script(_sse(*STREAM))
    llm, _ = make_llm(script)
    stream = llm.stream("hi")
    deltas = list(stream)
    body = script.bodies[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert [d.text for d in deltas if d.kind == "text"] == ["Hel", "lo"]
    assert [d.kind for d in deltas][:1] == ["reasoning"]
    tool_deltas = [d for d in deltas if d.kind == "tool-call"]
    assert tool_deltas[0].call_id == "call_s" and tool_deltas[0].name == "context_search"
    result = stream.result
    assert result.text == "Hello" and result.reasoning == "hmm"
    assert result.tool_calls[0].arguments == '{"query": "x"}' and result.finish_kind == "tool-calls"
    assert result.usage.input_tokens == 9 and result.usage.output_tokens == 4
    assert llm.usage_total.calls == 1


def test_stream_result_consumes_the_rest() -> None:
    llm, _ = make_llm(Script(_sse(*STREAM)))
    assert llm.stream("hi").text() == "Hello"


def test_stream_retries_before_the_first_byte() -> None:
    script = Script(httpx.Response(503), _sse(*STREAM))
    llm, sleeps = make_llm(script)
    stream = llm.stream("hi")
    assert stream.text() == "Hello" and len(sleeps) == 1 and stream.result.attempts == 2


def test_stream_errors_raise() -> None:
    llm, _ = make_llm(Script(httpx.Response(401)))
    with pytest.raises(LLMAuthError):
        list(llm.stream("hi"))
    llm2, _ = make_llm(Script(httpx.Response(200, text="data: {not json\n\n")))
    with pytest.raises(LLMProviderError, match="not JSON"):
        list(llm2.stream("hi"))


def test_stream_cancel_between_chunks() -> None:
    llm, _ = make_llm(Script(_sse(*STREAM)))
    cancel = threading.Event()
    got = []
    with pytest.raises(LLMCancelled):
        for d in llm.stream("hi", cancel=cancel):
            got.append(d)
            cancel.set()
    assert len(got) == 1


# --- async -----------------------------------------------------------------------------------


def test_achat_and_astructured() -> None:
    script = Script(
        completion("async hello"),
        httpx.Response(500),
        completion('{"city": "Lima", "population_m": 10}'),
    )
    llm, _ = make_llm(script)
    slept: list[float] = []

    async def asleep(d: float) -> None:
        slept.append(d)

    llm._asleep = asleep  # same knob as the constructor's asleep=

    async def main() -> tuple[ChatResult, Structured[Capital]]:
        return await llm.achat("hi"), await llm.astructured("capital?", Capital)

    chat, structured = asyncio.run(main())
    assert chat.text == "async hello"
    assert structured.ok and structured.value is not None and structured.value.city == "Lima"
    assert len(slept) == 1 and llm.usage_total.calls == 2


def test_astructured_degrades() -> None:
    llm, _ = make_llm(Script(httpx.Response(401)), asleep=None)
    out = asyncio.run(llm.astructured("x", Capital))
    assert out.degraded_reason == "auth failed"
    none = asyncio.run(LLM(env={}).astructured("x", Capital))
    assert none.degraded_reason == NO_ROUTE


def test_async_task_cancellation_propagates() -> None:
    async def slow(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(30)
        return httpx.Response(200, json=completion())

    llm = LLM(BASE, "m", env={}, transport=httpx.MockTransport(slow))

    async def main() -> float:
        task = asyncio.create_task(llm.achat("hi"))
        await asyncio.sleep(0.05)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - started

    assert asyncio.run(main()) < 5


def test_async_timeout() -> None:
    async def slow(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(30)
        return httpx.Response(200, json=completion())

    llm = LLM(BASE, "m", env={}, transport=httpx.MockTransport(slow), timeout=0.05, max_retries=0)
    with pytest.raises(LLMTimeout):
        asyncio.run(llm.achat("hi"))
    assert asyncio.run(llm.astructured("hi", Capital)).degraded_reason == "timeout"


def test_astream() -> None:
    llm, _ = make_llm(Script(_sse(*STREAM)))

    async def main() -> tuple[list[str], str]:
        stream = llm.astream("hi")
        texts = [d.text async for d in stream if d.kind == "text"]
        return texts, (await stream.aresult()).text

    texts, text = asyncio.run(main())
    assert texts == ["Hel", "lo"] and text == "Hello"


def test_close_and_context_manager() -> None:
    script = Script(completion())
    with make_llm(script)[0] as llm:
        llm.chat("a")
        llm.chat("b")
    assert len(script.requests) == 2
    llm.close()  # idempotent


# --- call options, retry policy, tracer ------------------------------------------------------


def _kinds(events: list[TraceEvent]) -> list[tuple[str, int]]:
    return [(e.kind, e.attempt) for e in events]


RETRIED = [("request", 1), ("retry", 1), ("request", 2), ("response", 2)]


def test_tracer_sees_request_retry_response_in_order() -> None:
    events: list[TraceEvent] = []
    script = Script(httpx.Response(500), completion("fine"))
    llm, sleeps = make_llm(script, tracer=events.append)
    assert llm.chat("x").text == "fine"
    assert _kinds(events) == RETRIED
    retry, response = events[1], events[3]
    assert retry.status == 500 and retry.reason == "provider returned 500"
    assert retry.delay == sleeps[0]
    assert response.status == 200 and response.usage is not None and response.usage.calls == 1
    assert all(e.url == f"{BASE}/chat/completions" and e.model == "m" for e in events)
    assert not any(e.stream for e in events)
    assert str(retry).startswith("retry #1 http://model.test/v1/chat/completions -> 500")


def test_tracer_async() -> None:
    events: list[TraceEvent] = []
    script = Script(httpx.Response(500), completion("fine"))
    slept: list[float] = []

    async def asleep(d: float) -> None:
        slept.append(d)

    llm, _ = make_llm(script, tracer=events.append, asleep=asleep)
    assert asyncio.run(llm.achat("x")).text == "fine"
    assert _kinds(events) == RETRIED and events[1].delay == slept[0]


def test_tracer_stream_and_astream() -> None:
    events: list[TraceEvent] = []
    llm, _ = make_llm(Script(httpx.Response(503), _sse(*STREAM)), tracer=events.append)
    assert llm.stream("hi").text() == "Hello"
    assert _kinds(events) == RETRIED and all(e.stream for e in events)
    assert events[-1].usage is not None and events[-1].usage.output_tokens == 4

    events.clear()
    llm2, _ = make_llm(Script(httpx.Response(503), _sse(*STREAM)), tracer=events.append)

    async def asleep(d: float) -> None:
        pass

    llm2._asleep = asleep

    async def main() -> str:
        return (await llm2.astream("hi").aresult()).text

    assert asyncio.run(main()) == "Hello"
    assert _kinds(events) == RETRIED


def test_tracer_reports_the_final_error() -> None:
    events: list[TraceEvent] = []
    llm, _ = make_llm(Script(httpx.Response(500)), max_retries=1, tracer=events.append)
    assert not llm.structured("x", Capital).ok
    assert _kinds(events) == [("request", 1), ("retry", 1), ("request", 2), ("error", 2)]
    assert events[-1].status == 500 and events[-1].reason == "provider returned 500"
    events.clear()
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(LLMCancelled):
        llm.chat("x", cancel=cancel)
    assert [(e.kind, e.reason) for e in events] == [("error", "cancelled")]
    events.clear()
    with pytest.raises(LLMProviderError):
        list(
            make_llm(Script(httpx.Response(200, text="data: {x\n\n")), tracer=events.append)[
                0
            ].stream("q")
        )
    assert [e.kind for e in events] == ["request", "error"]


def test_the_key_never_appears_in_a_trace_event() -> None:
    events: list[TraceEvent] = []
    script = Script(
        httpx.Response(500, json={"error": {"message": f"overloaded, key {KEY}"}}),
        httpx.Response(401, json={"error": {"message": f"bad key {KEY}"}}),
    )
    llm, _ = make_llm(script, api_key=KEY, tracer=events.append)
    with pytest.raises(LLMAuthError):
        llm.chat("x")
    assert script.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert [e.kind for e in events] == ["request", "retry", "request", "error"]
    for event in events:
        assert KEY not in repr(event) and KEY not in str(event)


def test_tracer_is_settable_and_optional() -> None:
    llm, _ = make_llm(Script(completion()))
    assert llm.tracer is None
    llm.chat("x")  # no tracer: nothing to call
    seen: list[TraceEvent] = []
    llm.tracer = seen.append
    llm.chat("x")
    assert [e.kind for e in seen] == ["request", "response"]


def test_call_options_are_checked_once() -> None:
    opts = CallOptions(max_tokens=50, stop=["\n"])
    assert opts.stop == ("\n",) and opts.temperature == 0.0 and opts.reasoning_effort == "off"
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.max_tokens = 1  # type: ignore[misc]
    assert opts.resolved(max_tokens=4000, max_chars_per_input=10) == CallOptions(
        max_tokens=50, stop=("\n",), max_chars_per_input=10
    )
    with pytest.raises(InvalidArgument, match="max_tokens must be > 0"):
        CallOptions(max_tokens=0)
    llm, _ = make_llm(Script(completion()))
    with pytest.raises(ValueError, match="max_tokens"):
        llm.chat("x", max_tokens=0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'json_mode'"):
        llm.stream("x", json_mode=True)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'tools'"):
        llm.structured("x", Capital, tools=[])  # type: ignore[call-arg]


def test_bad_input_raises_the_error_tree() -> None:
    with pytest.raises(InvalidArgument, match="timeout"):
        LLM(BASE, "m", env={}, timeout=0)
    with pytest.raises(InvalidArgument, match="max_retries"):
        LLM(BASE, "m", env={}, max_retries=-1)
    with pytest.raises(InvalidArgument, match="max_chars_per_input"):
        LLM(BASE, "m", env={}, max_chars_per_input=-5)
    llm, _ = make_llm(Script(completion()))
    with pytest.raises(InvalidArgument, match=r"messages\[1\] is a int"):
        llm.chat([{"role": "user", "content": "a"}, 1])  # type: ignore[list-item]
    with pytest.raises(LLMOutputError):
        extract_json("prose only")
    with pytest.raises(InvalidArgument):
        truncate_keep_tail("abc", -1)


def test_retry_policy() -> None:
    policy = RetryPolicy(max_retries=1, backoff_base=1.0, backoff_cap=1.0)
    rng = random.Random(0)
    busy = LLMProviderError("x", status=503)
    assert 0.5 <= (policy.delay(busy, 1, rng) or 0) <= 1.0
    assert policy.delay(busy, 2, rng) is None  # no retry left
    assert policy.delay(LLMProviderError("x", status=404), 1, rng) is None
    assert policy.delay(LLMAuthError("x", status=401), 1, rng) is None
    assert policy.delay(LLMTimeout("slow"), 1, rng) is not None
    assert policy.delay(LLMProviderError("x", status=429, retry_after=3.0), 1, rng) == 3.0
    with pytest.raises(InvalidArgument):
        RetryPolicy(backoff_cap=-1)
    script = Script(httpx.Response(503), completion("ok"))
    llm, sleeps = make_llm(script, retry=RetryPolicy(max_retries=0))
    assert llm.max_retries == 0 and llm.retry.max_retries == 0
    with pytest.raises(LLMProviderError):
        llm.chat("x")
    assert sleeps == []
    llm.max_retries = 2  # replaces the policy with one that differs there
    assert llm.retry == RetryPolicy(max_retries=2) and llm.chat("x").text == "ok"
    assert LLM(BASE, "m", env={}, retry=policy, backoff_cap=4.0).retry == RetryPolicy(
        max_retries=1, backoff_base=1.0, backoff_cap=4.0
    )


def test_the_failure_vocabulary_is_defined_once() -> None:
    kinds = tuple(k for k, _ in LADDER)
    assert kinds == tuple(f.kind for f in LLM_FAILURES) == typing.get_args(DegradedKind)
    assert dict(LADDER)["no-route"] == NO_ROUTE
    for cls in (LLMNotConfigured, LLMAuthError, LLMProviderError, LLMTimeout, LLMCancelled):
        assert cls.kind in kinds
    assert LLMOutputError.kind in kinds
    # a kind with one fixed ladder text records it without reason=
    assert LLMAuthError("refused").reason == "auth failed"
    assert LLMTimeout("slow").reason == "timeout"
    assert LLMProviderError("boom").reason == "boom"


def test_public_names_live_in_ctxsdk_llm() -> None:
    import ctxsdk.llm as seam

    for name in (
        "LLM",
        "ChatStream",
        "AsyncChatStream",
        "CallOptions",
        "RetryPolicy",
        "TraceEvent",
        "Usage",
        "ChatResult",
        "Structured",
    ):
        assert getattr(seam, name).__module__ == "ctxsdk.llm", name
    # the engines' seam lives below them; ctxsdk.llm re-exports the same objects
    import ctxsdk.model as below

    for name in ("ModelProtocol", "Outcome", "with_fallback"):
        assert getattr(seam, name) is getattr(below, name)
        assert getattr(below, name).__module__ == "ctxsdk.model", name
    for name in seam.__all__:
        assert getattr(seam, name) is not None
    assert repr(LLM).startswith("<class 'ctxsdk.llm.LLM'")


def test_a_transport_error_mid_stream_is_an_llm_error_and_traced() -> None:
    class Broken(httpx.SyncByteStream):
        def __iter__(self) -> Any:
            yield b'data: {"id": "s1", "choices": [{"delta": {"content": "Hel"}}]}\n\n'
            raise httpx.ReadError("connection reset")

    events: list[TraceEvent] = []
    script = Script(httpx.Response(200, stream=Broken()))
    llm, sleeps = make_llm(script, tracer=events.append)
    got: list[str] = []
    with pytest.raises(LLMProviderError, match="provider unreachable: ReadError"):
        got.extend(d.text for d in llm.stream("hi"))
    assert got == ["Hel"] and sleeps == [] and len(script.requests) == 1  # not retried
    assert [e.kind for e in events] == ["request", "error"]
    assert events[-1].reason == "provider unreachable: ReadError"
