"""The one model seam (``ctxsdk.model``): ``LLM`` satisfies its protocol and drives its
helpers over real HTTP (a local OpenAI-compatible server) and through httpx.MockTransport;
every failure becomes a degraded ``Answer`` with the reason the engines record."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

import ctxsdk.llm
from ctxsdk.errors import LLMError, LLMOutputError
from ctxsdk.llm import LLM, Structured
from ctxsdk.model import Answer, ModelProtocol, Outcome, ask_json, ask_text, with_fallback

from ._openai_server import openai_server

BASE = "http://model.test/v1"


class Plan(BaseModel):
    steps: list[str]


def _mock(*replies: httpx.Response | dict[str, Any]) -> tuple[LLM, list[dict[str, Any]]]:
    """An LLM over MockTransport answering ``replies`` in turn; the request bodies it sent."""
    queue, sent = list(replies), []

    def handle(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        item = queue.pop(0)
        return item if isinstance(item, httpx.Response) else httpx.Response(200, json=item)

    llm = LLM(base_url=BASE, model="m", env={}, transport=httpx.MockTransport(handle), seed=7)
    return llm, sent


def _completion(text: str, finish: str = "stop") -> dict[str, Any]:
    return {
        "id": "c1",
        "model": "m-served",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3},
    }


def test_llm_is_a_model_and_the_llm_names_are_the_seams() -> None:
    assert isinstance(LLM(env={}), ModelProtocol)
    assert ctxsdk.llm.ModelProtocol is ModelProtocol
    assert ctxsdk.llm.with_fallback is with_fallback and ctxsdk.llm.Outcome is Outcome
    assert issubclass(Structured, Answer)  # LLM.structured's result is an Answer too


def test_an_llm_drives_ask_json_over_real_http() -> None:
    with openai_server() as server:
        server.replies.append('Here it is:\n```json\n{"steps": ["read", "fix"]}\n```')
        llm = LLM(server.url, server.model, api_key="k", env={})
        got = ask_json(llm, "Plan the fix.", max_tokens=50, validate=Plan.model_validate)
        body = server.requests[-1]
    assert got.ok and got.value == Plan(steps=["read", "fix"])
    assert got.text.startswith("Here it is")
    # one deterministic call: temperature 0, no reasoning, JSON mode
    assert body["temperature"] == 0 and body["max_tokens"] == 50
    assert body["response_format"] == {"type": "json_object"}
    usage = got.usage
    assert usage is not None and getattr(usage, "calls", 0) == 1


def test_ask_text_over_real_http_and_its_usage() -> None:
    with openai_server() as server:
        llm = LLM(server.url, server.model, api_key="k", env={})
        got = ask_text(llm, [{"role": "user", "content": "hello there"}], max_tokens=20)
        body = server.requests[-1]
    assert got.ok and got.value == "ok: hello there"
    assert "response_format" not in body  # prose: only the options given


def test_every_failure_is_a_degraded_answer_with_the_engines_reason() -> None:
    down, _ = _mock(httpx.Response(401, json={"error": {"message": "bad key"}}))
    failed = ask_json(down, "x", max_tokens=10)
    assert not failed.ok and failed.value is None and failed.result is None
    assert failed.degraded_reason == "the model call failed: auth failed"
    assert failed.kind == "auth" and isinstance(failed.error, LLMError)
    with pytest.raises(LLMError, match="auth"):
        failed.unwrap()

    prose, _ = _mock(_completion("no json here"))
    bad = ask_json(prose, "x", max_tokens=10)
    assert bad.kind == "malformed-json" and (bad.degraded_reason or "").startswith("malformed JSON")
    assert bad.text == "no json here" and bad.result is not None

    cut, _ = _mock(_completion('{"steps": ["re', finish="length"))
    got = ask_json(cut, "x", max_tokens=10)
    assert got.kind == "truncated"
    assert (got.degraded_reason or "").startswith("the reply was cut at max_tokens (malformed JSON")

    # a reply that parses is used even when it was cut afterwards
    whole, _ = _mock(_completion('{"steps": []}', finish="length"))
    assert ask_json(whole, "x", max_tokens=10).value == {"steps": []}

    schema, _ = _mock(_completion('{"steps": 3}'))
    refused = ask_json(schema, "x", max_tokens=10, validate=Plan.model_validate)
    assert refused.kind == "schema"
    assert (refused.degraded_reason or "").startswith("schema validation failed: steps")

    text_cut, _ = _mock(_completion("## Primary", finish="length"))
    assert ask_text(text_cut, "x").degraded_reason == "the model's reply was cut at max_tokens"
    empty, _ = _mock(_completion("   "))
    assert ask_text(empty, "x").degraded_reason == "the model returned no text"


def test_a_validator_refusing_an_answer_degrades_it() -> None:
    llm, _ = _mock(_completion('{"slots": []}'))

    def usable(obj: dict[str, Any]) -> list[Any]:
        if not obj.get("slots"):
            raise LLMOutputError("no slot", reason="zero usable slots")
        return list(obj["slots"])

    got = ask_json(llm, "x", max_tokens=10, validate=usable)
    assert got.degraded_reason == "zero usable slots" and got.value is None


def test_with_fallback_reads_a_degraded_answer() -> None:
    ok, _ = _mock(_completion('{"steps": ["a"]}'))
    out = with_fallback(ok, lambda m: ask_json(m, "x", max_tokens=9), lambda: {"steps": []})
    assert out == ({"steps": ["a"]}, None) and out.source == "model"
    bad, _ = _mock(_completion("prose"))
    out = with_fallback(bad, lambda m: ask_json(m, "x", max_tokens=9), lambda: {"steps": []})
    assert out.value == {"steps": []} and (out.reason or "").startswith("malformed JSON")
    assert (
        with_fallback(None, lambda m: ask_text(m, "x"), lambda: "h").reason == "no route configured"
    )


def test_options_override_the_json_defaults() -> None:
    llm, sent = _mock(_completion("{}"))
    ask_json(llm, "x", max_tokens=10, json_mode=False, temperature=0.5)
    assert "response_format" not in sent[0] and sent[0]["temperature"] == 0.5
