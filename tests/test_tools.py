"""Agent tools: registry, definitions, dispatch (every error shape), and the session tools."""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

import ctxsdk as cx
from ctxsdk.assemble import Rule
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
        "context_recall",
        "merge_sessions",
        "ctx_remember",
        "ctx_link",
        "ctx_find",
        "ctx_read",
        "ctx_edit",
        "ctx_delete",
    ]
    a.register("extra", "x", EchoArgs, echo)
    assert "extra" not in b and "extra" not in default_registry()
    c = a.copy()
    c.unregister("extra")
    assert "extra" in a
    assert isinstance(next(iter(a)), Tool)
    assert repr(b) == (
        "ToolRegistry(context_messages, context_search, context_assembler, context_recall, "
        "merge_sessions, ctx_remember, ctx_link, ctx_find, ctx_read, ctx_edit, ctx_delete)"
    )


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


# --- the package's names, schema checks, bad input ------------------------------------------


def test_exported_names_show_the_public_module() -> None:
    # Which names are exported is the public API snapshot's (tests/test_public_api.py).
    import ctxsdk.tools as tools

    assert "ToolRegistry" in tools.__all__
    for name in set(tools.__all__) - {"ToolFn"}:
        assert getattr(tools, name).__module__ == "ctxsdk.tools", name


def test_importing_tools_loads_no_engine() -> None:
    import subprocess
    import sys

    code = (
        "import sys, ctxsdk.tools; "
        "print(sorted(m for m in sys.modules if m.split('.')[1:2] in "
        "(['assemble'], ['fold'], ['merge'], ['memory'])))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_raw_schemas_are_checked_against_their_metaschema() -> None:
    reg = ToolRegistry()
    with pytest.raises(ToolError, match=r"not a valid JSON Schema .*2020-12.*properties\.a\.type"):
        reg.register("bad", "x", {"type": "object", "properties": {"a": {"type": "strng"}}}, echo)
    with pytest.raises(ToolError, match="not JSON"):
        reg.register("nan", "x", {"type": "object", "default": float("nan")}, echo)
    with pytest.raises(ToolError, match="not a valid JSON Schema"):  # a Tool built by hand, too
        ToolRegistry([Tool("t", "x", {"type": "object", "required": "a"}, echo)])
    # $schema picks the draft: a boolean exclusiveMinimum is Draft 4, not 2020-12
    old = {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 0, "exclusiveMinimum": True}},
    }
    with pytest.raises(ToolError, match="not a valid JSON Schema"):
        reg.register("new", "x", old, lambda a, c: a)
    reg.register("old", "x", {"$schema": "http://json-schema.org/draft-04/schema#", **old}, echo)
    out = reg.dispatch("old", '{"n": 0}')
    assert code(out) == "invalid_arguments" and "n: " in out["error"]["message"]
    assert "must be >=" not in out["error"]["message"]  # exclusive: jsonschema's own words
    assert "bad" not in reg and "new" not in reg


def test_raw_schema_arguments_in_depth() -> None:
    schema = {
        "type": "object",
        "$defs": {"item": {"type": "object", "required": ["name"]}},
        "properties": {
            "items": {"type": "array", "items": {"$ref": "#/$defs/item"}},
            "x": {"type": "number"},
            "word": {"type": "string", "pattern": "^[a-z]+$"},
        },
    }
    reg = ToolRegistry()
    reg.register("deep", "x", schema, lambda a, c: {"ok": True})
    assert reg.dispatch("deep", '{"items": [{"name": "a"}], "x": 1.5, "word": "ab"}') == {
        "ok": True
    }
    cases = {
        '{"items": [{"name": "a"}, {}]}': "items[1].name: field required",
        '{"x": NaN}': "x: expected number",  # JSON has no NaN
        '{"x": Infinity}': "x: expected number",
        '{"word": "AB"}': "word: 'AB' does not match",  # no own wording: jsonschema's message
    }
    for args, msg in cases.items():
        out = reg.dispatch("deep", args)
        assert code(out) == "invalid_arguments" and msg in out["error"]["message"], (args, out)
    many = reg.dispatch("deep", '{"items": [{}, {}, {}, {}, {}]}')
    assert many["error"]["message"].endswith("(+2 more)")


def test_remote_refs_are_never_fetched() -> None:
    reg = ToolRegistry()
    schema = {"type": "object", "properties": {"a": {"$ref": "https://example.invalid/a.json"}}}
    reg.register("remote", "x", schema, lambda a, c: a)
    out = reg.dispatch("remote", '{"a": 1}')
    assert code(out) == "tool_failed" and "$ref" in out["error"]["message"]
    assert reg.dispatch("remote", "{}") == {}  # nothing to resolve: the call runs


def test_bad_input_raises_ctxsdk_errors_or_returns_structured_ones() -> None:
    reg = ToolRegistry()
    with pytest.raises(NotFound, match="the tools are: none"):
        reg.get("zzz")
    with pytest.raises(ToolError, match="invalid"):
        reg.register(7, "x", EchoArgs, echo)  # type: ignore[arg-type]
    with pytest.raises(ToolError, match="type 'object'"):
        reg.register("s", "x", "not a schema", echo)  # type: ignore[arg-type]

    class Thing:
        pass

    class Weird(BaseModel):
        model_config = ConfigDict(arbitrary_types_allowed=True)
        thing: Thing

    with pytest.raises(ToolError, match="Weird has no JSON Schema"):
        reg.register("w", "x", Weird, echo)

    def local(args: Later, ctx: ToolContext) -> None: ...  # type: ignore[name-defined]  # noqa: F821

    with pytest.raises(ToolError, match="annotations cannot be read"):
        reg.tool()(local)
    with pytest.raises(ToolError, match="no __name__"):
        reg.tool()(functools.partial(echo))
    reg.register("echo", "Echo.", EchoArgs, echo)
    assert code(reg.dispatch("echo", 5)) == "invalid_arguments"  # type: ignore[arg-type]
    assert code(reg.dispatch("echo", "[" * 100_000)) == "bad_json"
    assert code(reg.dispatch(["echo"], "{}")) == "unknown_tool"  # type: ignore[arg-type]
    assert reg.dispatch("echo", b'{"text": "b"}')["echo"] == "b"  # type: ignore[arg-type]
    assert not is_error([])  # type: ignore[arg-type]


def test_an_error_that_quotes_the_arguments_withholds_credentials_and_controls() -> None:
    reg = default_registry()
    name = next(iter(reg)).name
    token = "gh" + "p_" + "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0zC3dE5"
    out = reg.dispatch(name, json.dumps([f"use {token}\x1b[2J\u202e now"]))
    message = out["error"]["message"]
    assert token not in message and "[REDACTED:github]" in message
    assert "\x1b" not in message and "\u202e" not in message


def test_the_assembler_applies_the_callers_presets(flaky: cx.Session) -> None:
    reg = default_registry()
    args = '{"action": "preset"}'
    bare = reg.dispatch("context_assembler", args, ToolContext(flaky))
    assert bare["ops"] == [] and any("no rules" in n for n in bare["notes"])
    ctx = ToolContext(flaky, extras={"assembly_rules": [Rule("off", kind="tool")]})
    ruled = reg.dispatch("context_assembler", args, ctx)
    assert ruled["ops"] and all(op["mode"] == "off" for op in ruled["ops"])


def test_each_memory_tool_without_a_memory_says_so_in_its_own_name() -> None:
    reg = default_registry()
    arguments = {
        "ctx_remember": {"text": "Use pnpm."},
        "ctx_link": {"source": "n1", "target": "pnpm"},
        "ctx_find": {"query": "pnpm"},
        "ctx_read": {"id": "n1"},
        "ctx_edit": {"id": "n1", "text": "Use yarn."},
        "ctx_delete": {"id": "n1"},
    }
    assert [t.name for t in reg if t.name.startswith("ctx_")] == list(arguments)
    for name, args in arguments.items():
        out = reg.dispatch(name, json.dumps(args), ToolContext(None))
        assert out == {"tool": name, "unavailable": "no memory is configured for this session"}
