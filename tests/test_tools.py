"""Agent tools: registry, definitions, dispatch (every error shape), and the session tools."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, Field

import ctxsdk as cx
from ctxsdk.errors import NotFound, ToolError
from ctxsdk.samples import sample
from ctxsdk.tools import (
    ContextSearchArgs,
    Tool,
    ToolContext,
    ToolRegistry,
    default_registry,
    dispatch,
    is_error,
)


class EchoArgs(BaseModel):
    text: str = Field(min_length=1)
    times: int = Field(1, ge=1, le=3)


def echo(args: EchoArgs, ctx: ToolContext) -> dict[str, Any]:
    return {"echo": args.text * args.times, "extra": ctx.extras.get("who")}


@pytest.fixture
def reg() -> ToolRegistry:
    r = ToolRegistry()
    r.register("echo", "Echo a text.", EchoArgs, echo)
    return r


@pytest.fixture(scope="module")
def flaky() -> cx.Session:
    return cx.Session.open(sample("fix-flaky-test"))


def code(result: dict[str, Any]) -> str:
    assert is_error(result), result
    return str(result["error"]["code"])


def test_definitions_are_openai_function_calling(reg: ToolRegistry) -> None:
    (d,) = reg.definitions()
    assert d["type"] == "function"
    fn = d["function"]
    assert fn["name"] == "echo" and fn["description"] == "Echo a text."
    params = fn["parameters"]
    assert params["type"] == "object" and params["required"] == ["text"]
    assert params["properties"]["times"] == {
        "default": 1,
        "maximum": 3,
        "minimum": 1,
        "type": "integer",
    }
    assert "title" not in json.dumps(params)  # pydantic's auto titles are stripped
    assert reg.dsh_definitions() == [
        {"name": "echo", "description": "Echo a text.", "parameters": params}
    ]


def test_dispatch_ok(reg: ToolRegistry) -> None:
    ctx = ToolContext(extras={"who": "me"})
    assert reg.dispatch("echo", '{"text": "ab", "times": 2}', ctx) == {
        "echo": "abab",
        "extra": "me",
    }
    assert reg.dispatch("echo", {"text": "x"}) == {"echo": "x", "extra": None}


def test_dispatch_errors_are_structured_never_raised(reg: ToolRegistry) -> None:
    assert code(reg.dispatch("nope", "{}")) == "unknown_tool"
    assert "echo" in reg.dispatch("nope", "{}")["error"]["message"]
    assert code(reg.dispatch("echo", '{"text": ')) == "bad_json"
    assert code(reg.dispatch("echo", "[1, 2]")) == "invalid_arguments"
    bad = reg.dispatch("echo", '{"text": "", "times": 9}')
    assert code(bad) == "invalid_arguments"
    assert "text" in bad["error"]["message"] and "times" in bad["error"]["message"]
    assert code(reg.dispatch("echo", "")) == "invalid_arguments"  # empty = {} = text missing
    assert code(reg.dispatch("echo", "null")) == "invalid_arguments"


def test_tool_failures_and_bad_results(reg: ToolRegistry) -> None:
    def boom(args: dict[str, Any], ctx: ToolContext) -> Any:
        raise RuntimeError("disk on fire")

    reg.register("boom", "fails", {"type": "object"}, boom)
    out = reg.dispatch("boom", "{}")
    assert code(out) == "tool_failed" and "RuntimeError: disk on fire" in out["error"]["message"]
    reg.register("setty", "returns a set", {"type": "object"}, lambda a, c: {"s": {1, 2}})
    assert code(reg.dispatch("setty", "{}")) == "bad_result"
    reg.register("nan", "returns NaN", {"type": "object"}, lambda a, c: {"x": float("nan")})
    assert code(reg.dispatch("nan", "{}")) == "bad_result"


def test_results_are_json_objects(reg: ToolRegistry) -> None:
    reg.register("num", "a number", {"type": "object"}, lambda a, c: 42)
    assert reg.dispatch("num", "{}") == {"result": 42}

    class Out(BaseModel):
        a: int

    reg.register("model", "a model", {"type": "object"}, lambda a, c: Out(a=1))
    assert reg.dispatch("model", "{}") == {"a": 1}
    assert not is_error({"error": "not structured"}) and not is_error({"ok": 1})


def test_raw_json_schema_tools_are_checked() -> None:
    schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1},
            "limit": {"type": "integer", "minimum": 1, "maximum": 10},
            "mode": {"enum": ["fast", "slow"]},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
        },
        "required": ["path"],
        "additionalProperties": False,
    }
    reg = ToolRegistry()
    reg.register("read", "Read.", schema, lambda a, c: {"got": a})
    assert reg.dispatch("read", '{"path": "a", "limit": 2.0, "tags": ["x"]}') == {
        "got": {"path": "a", "limit": 2.0, "tags": ["x"]}
    }
    cases = {
        "{}": "path: field required",
        '{"path": ""}': "path: must have at least 1 characters",
        '{"path": "a", "limit": 0}': "limit: must be >= 1",
        '{"path": "a", "limit": true}': "limit: expected integer",
        '{"path": "a", "mode": "medium"}': "mode: must be one of",
        '{"path": "a", "tags": [1]}': "tags[0]: expected string",
        '{"path": "a", "tags": ["a", "b", "c"]}': "tags: must have at most 2 items",
        '{"path": "a", "other": 1}': "other: unexpected field",
    }
    for args, msg in cases.items():
        out = reg.dispatch("read", args)
        assert code(out) == "invalid_arguments" and msg in out["error"]["message"], (args, out)


def test_registration_errors() -> None:
    reg = ToolRegistry()
    reg.register("a", "A", EchoArgs, echo)
    with pytest.raises(ToolError, match="already registered"):
        reg.register("a", "A", EchoArgs, echo)
    reg.register("a", "A2", EchoArgs, echo, replace=True)
    assert reg.get("a").description == "A2"
    with pytest.raises(ToolError, match="invalid"):
        reg.register("has space", "x", EchoArgs, echo)
    with pytest.raises(ToolError, match="type 'object'"):
        reg.register("b", "x", {"type": "string"}, echo)
    with pytest.raises(NotFound):
        reg.get("zzz")
    with pytest.raises(NotFound):
        reg.unregister("zzz")
    reg.unregister("a")
    assert "a" not in reg and len(reg) == 0


def test_decorator_form() -> None:
    reg = ToolRegistry()

    @reg.tool()
    def shout(args: EchoArgs, ctx: ToolContext) -> dict[str, str]:
        """Upper-case a text."""
        return {"text": args.text.upper()}

    assert shout(EchoArgs(text="x"), ToolContext()) == {"text": "X"}  # still a plain function
    assert reg.get("shout").description == "Upper-case a text."
    assert reg.dispatch("shout", '{"text": "hi"}') == {"text": "HI"}

    @reg.tool("renamed", description="Other.")
    def f(args: EchoArgs, ctx: ToolContext) -> dict[str, str]:
        return {}

    assert reg.names() == ["shout", "renamed"]
    with pytest.raises(ToolError, match="pydantic model"):

        @reg.tool()
        def untyped(args: dict[str, Any], ctx: ToolContext) -> None: ...


def test_registries_are_independent() -> None:
    a, b = default_registry(), default_registry()
    assert a is not b and a.names() == b.names() == [
        "context_messages",
        "context_search",
        "context_assembler",
    ]
    a.register("extra", "x", EchoArgs, echo)
    assert "extra" not in b and "extra" not in default_registry()
    c = a.copy()
    c.unregister("extra")
    assert "extra" in a
    assert isinstance(next(iter(a)), Tool)
    assert repr(b) == "ToolRegistry(context_messages, context_search, context_assembler)"


# --- session tools --------------------------------------------------------------------------


def test_context_messages(flaky: cx.Session) -> None:
    out = dispatch("context_messages", '{"last": 3, "gist_chars": 40}', flaky)
    seqs = flaky.message_seqs()
    assert out["session"] == flaky.id and out["count"] == len(seqs) == len(flaky.messages())
    assert out["tokens"] == flaky.tokens("estimate").total > 0
    assert sum(out["by_role"].values()) == out["count"]
    assert set(out["by_role"]) <= {"system", "user", "assistant", "tool"}
    assert [m["seq"] for m in out["last"]] == seqs[-3:]
    assert all(len(m["gist"]) <= 40 for m in out["last"])
    assert dispatch("context_messages", "{}", flaky)["last"][-1]["seq"] == seqs[-1]
    assert dispatch("context_messages", '{"last": 0}', flaky)["last"] == []
    json.dumps(out)


def test_context_search(flaky: cx.Session) -> None:
    out = dispatch("context_search", '{"query": "xdist"}', flaky)
    assert out["total"] >= 2 and out["hits"]
    seqs = set(flaky.message_seqs())
    for hit in out["hits"]:
        assert hit["seq"] in seqs and "xdist" in hit["snippet"].lower()
        assert len(hit["snippet"]) <= len("xdist") + 130
    # tool calls and tool results are searched too
    roles = {
        h["role"]
        for h in dispatch("context_search", '{"query": "pytest", "limit": 100}', flaky)["hits"]
    }
    assert "tool" in roles
    limited = dispatch("context_search", '{"query": "xdist", "limit": 1}', flaky)
    assert len(limited["hits"]) == 1 and limited["total"] == out["total"]
    upper = dispatch("context_search", '{"query": "XDIST", "case_sensitive": true}', flaky)
    assert upper["total"] == 0 and upper["hits"] == []
    assert dispatch("context_search", '{"query": "zz-not-there-zz"}', flaky)["total"] == 0
    assert code(dispatch("context_search", '{"query": ""}', flaky)) == "invalid_arguments"


def test_session_tools_need_a_session() -> None:
    out = dispatch("context_search", '{"query": "x"}', None)
    assert code(out) == "no_session" and "session" in out["error"]["message"]
    assert ContextSearchArgs(query="x").limit == 10


def test_module_dispatch_with_a_registry(reg: ToolRegistry) -> None:
    assert dispatch("echo", '{"text": "z"}', registry=reg)["echo"] == "z"
    assert code(dispatch("echo", '{"text": "z"}')) == "unknown_tool"
