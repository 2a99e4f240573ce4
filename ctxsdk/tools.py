"""Agent tools: JSON-Schema definitions (OpenAI function-calling shape) and a dispatcher.

A ``ToolRegistry`` holds tools; ``ToolRegistry.dispatch`` validates a call's
arguments, runs the tool and returns a JSON object, or a structured error
``{"error": {"code", "message"}}``; it never raises for a bad call:

    reg = default_registry()               # a fresh registry with ctxsdk's own tools
    reg.definitions()                      # -> the "tools" list of a chat request
    reg.dispatch("context_search", '{"query": "flaky"}', session)

    @reg.tool()
    def shout(args: ShoutArgs, ctx: ToolContext) -> dict[str, str]:
        '''Upper-case a text.'''
        return {"text": args.text.upper()}

Error codes: ``unknown_tool``, ``bad_json``, ``invalid_arguments``, ``no_session``,
``tool_failed`` (the tool raised), ``bad_result`` (not JSON-serialisable).

There is no module-level registry to mutate: ``default_registry`` builds a new one each
call. Engines add their tools to ``_BUILTIN`` (``context_assembler``, ``context_recall``,
``merge_sessions``, ``ctx_remember`` / ``ctx_link`` / ``ctx_find`` / ``ctx_read``) as they
arrive.
"""

from __future__ import annotations

import inspect
import json
import math
import re
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from pydantic import BaseModel, Field, ValidationError

from .errors import NotFound, ToolError
from .session.session import message_of

if TYPE_CHECKING:
    from .session.session import Session

__all__ = [
    "ContextMessagesArgs",
    "ContextSearchArgs",
    "Tool",
    "ToolContext",
    "ToolFn",
    "ToolRegistry",
    "default_registry",
    "dispatch",
    "is_error",
]

ToolFn: TypeAlias = Callable[[Any, "ToolContext"], Any]
"""``fn(arguments, context)``: arguments are the validated pydantic model (or a dict for a
tool registered with a raw JSON Schema); the return value is a JSON object or a pydantic
model (any other JSON value is wrapped as ``{"result": value}``)."""

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True)
class ToolContext:
    """What a tool may use: the session being worked on, and anything else the caller adds."""

    session: Session | None = None
    extras: Mapping[str, Any] = field(default_factory=dict)
    # A tool that edits the session (context_assembler) hands the new one back through this;
    # the agent loop adopts it, so the edit's events land in the same log.
    commit: Callable[[Session], None] | None = None

    def require_session(self) -> Session:
        if self.session is None:
            raise _NoSession("this tool needs a session; dispatch it with a Session context")
        return self.session


class _NoSession(Exception):
    pass


@dataclass(frozen=True)
class Tool:
    """One registered tool."""

    name: str
    description: str
    parameters: dict[str, Any]
    fn: ToolFn
    model: type[BaseModel] | None = None

    def definition(self) -> dict[str, Any]:
        """The OpenAI function-calling shape (``{"type": "function", "function": {...}}``)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    def dsh_definition(self) -> dict[str, Any]:
        """The DSH ``request/header`` shape (``{name, description, parameters}``)."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


def _error(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


def is_error(result: Mapping[str, Any]) -> bool:
    """True for a dispatch result that is a structured error."""
    err = result.get("error")
    return isinstance(err, Mapping) and "code" in err and len(result) == 1


def _strip_titles(schema: Any) -> Any:
    """pydantic's JSON Schema without its auto-generated ``title`` strings (fewer tokens)."""
    if isinstance(schema, dict):
        return {
            k: _strip_titles(v)
            for k, v in schema.items()
            if not (k == "title" and isinstance(v, str))
        }
    if isinstance(schema, list):
        return [_strip_titles(v) for v in schema]
    return schema


def _check_schema(name: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        raise ToolError(
            f"tool {name!r}: parameters must be a JSON Schema with type 'object' "
            "(or a pydantic model class)"
        )
    try:
        return dict(json.loads(json.dumps(schema, allow_nan=False)))
    except (TypeError, ValueError) as exc:
        raise ToolError(f"tool {name!r}: parameters are not JSON: {exc}") from None


# --- a small JSON Schema checker for tools registered with a raw schema -----------------------

_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v),
}


def _schema_errors(value: Any, schema: Mapping[str, Any], path: str = "") -> list[str]:
    """Errors of ``value`` against the subset of JSON Schema tools use: type, enum, const,
    properties, required, additionalProperties, items, min/max, minLength/maxLength,
    minItems/maxItems. Unknown keywords are ignored."""
    where = path or "(root)"
    errs: list[str] = []
    t = schema.get("type")
    if t is not None:
        types = t if isinstance(t, list) else [t]
        if not any(_TYPES.get(str(x), lambda v: True)(value) for x in types):
            return [f"{where}: expected {' or '.join(map(str, types))}"]
    if "enum" in schema and value not in schema["enum"]:
        errs.append(f"{where}: must be one of {schema['enum']!r}")
    if "const" in schema and value != schema["const"]:
        errs.append(f"{where}: must be {schema['const']!r}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errs.append(f"{where}: must be >= {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errs.append(f"{where}: must be <= {schema['maximum']}")
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            errs.append(f"{where}: must have at least {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errs.append(f"{where}: must have at most {schema['maxLength']} characters")
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            errs.append(f"{where}: must have at least {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errs.append(f"{where}: must have at most {schema['maxItems']} items")
        items = schema.get("items")
        if isinstance(items, Mapping):
            for i, item in enumerate(value):
                errs.extend(_schema_errors(item, items, f"{path}[{i}]"))
    if isinstance(value, dict):
        props = schema.get("properties")
        props = props if isinstance(props, Mapping) else {}
        for key in schema.get("required") or []:
            if key not in value:
                errs.append(f"{path + '.' if path else ''}{key}: field required")
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            sub = f"{path}.{key}" if path else str(key)
            if key in props and isinstance(props[key], Mapping):
                errs.extend(_schema_errors(item, props[key], sub))
            elif extra is False:
                errs.append(f"{sub}: unexpected field")
            elif isinstance(extra, Mapping):
                errs.extend(_schema_errors(item, extra, sub))
    return errs


def _pydantic_detail(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        loc = ".".join(str(p) for p in err["loc"]) or "(root)"
        parts.append(f"{loc}: {err['msg']}")
    more = len(exc.errors()) - 3
    return "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")


def _jsonable(value: Any) -> dict[str, Any]:
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    out = value if isinstance(value, dict) else {"result": value}
    json.dumps(out, allow_nan=False)  # raises TypeError / ValueError when not JSON
    return out


class ToolRegistry:
    """A set of tools by name. Registries are independent: build one per agent or test."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for t in tools:
            self._add(t, replace=False)

    def _add(self, tool: Tool, *, replace: bool) -> Tool:
        if not _NAME.match(tool.name):
            raise ToolError(
                f"tool name {tool.name!r} is invalid: use 1-64 letters, digits, '_' or '-'"
            )
        if tool.name in self._tools and not replace:
            raise ToolError(f"a tool named {tool.name!r} is already registered (replace=True)")
        self._tools[tool.name] = tool
        return tool

    def register(
        self,
        name: str,
        description: str,
        parameters: Mapping[str, Any] | type[BaseModel],
        fn: ToolFn,
        *,
        replace: bool = False,
    ) -> Tool:
        """Add a tool. ``parameters`` is a pydantic model class (arguments are validated into
        it) or an object JSON Schema (arguments are checked against it and passed as a dict).
        """
        if isinstance(parameters, type) and issubclass(parameters, BaseModel):
            schema = _strip_titles(parameters.model_json_schema())
            tool = Tool(name, description, schema, fn, parameters)
        else:
            tool = Tool(name, description, _check_schema(name, parameters), fn, None)
        return self._add(tool, replace=replace)

    def tool(
        self,
        name: str | None = None,
        *,
        description: str | None = None,
        replace: bool = False,
    ) -> Callable[[Callable[[Any, ToolContext], Any]], Callable[[Any, ToolContext], Any]]:
        """Decorator form of ``register``: the function's first parameter must be
        annotated with a pydantic model; its docstring is the description by default."""

        def deco(fn: Callable[[Any, ToolContext], Any]) -> Callable[[Any, ToolContext], Any]:
            hints = typing.get_type_hints(fn)
            params = list(inspect.signature(fn).parameters)
            model = hints.get(params[0]) if params else None
            if not (isinstance(model, type) and issubclass(model, BaseModel)):
                raise ToolError(
                    f"@tool {fn.__name__}: annotate the first parameter with a pydantic model"
                )
            desc = description or inspect.getdoc(fn) or ""
            self.register(name or fn.__name__, desc, model, fn, replace=replace)
            return fn

        return deco

    def unregister(self, name: str) -> None:
        if self._tools.pop(name, None) is None:
            raise NotFound(f"no tool named {name!r}; registered: {', '.join(self._tools)}")

    def get(self, name: str) -> Tool:
        try:
            return self._tools[name]
        except KeyError:
            raise NotFound(
                f"no tool named {name!r}; registered: {', '.join(self._tools)}"
            ) from None

    def names(self) -> list[str]:
        return list(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def copy(self) -> ToolRegistry:
        return ToolRegistry(list(self._tools.values()))

    def definitions(self) -> list[dict[str, Any]]:
        """Every tool in the OpenAI function-calling shape: a chat request's ``tools``."""
        return [t.definition() for t in self._tools.values()]

    def dsh_definitions(self) -> list[dict[str, Any]]:
        """Every tool in the DSH ``request/header.tools`` shape."""
        return [t.dsh_definition() for t in self._tools.values()]

    def dispatch(
        self,
        name: str,
        arguments_json: str | Mapping[str, Any] | None,
        context: ToolContext | Session | None = None,
    ) -> dict[str, Any]:
        """Run one call: a JSON object result, or ``{"error": {"code", "message"}}``.

        ``arguments_json`` is the model's raw arguments text (empty or ``null`` means no
        arguments) or an already-decoded mapping; ``context`` a ``ToolContext`` or a
        Session.
        """
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(self._tools) or "none"
            return _error("unknown_tool", f"no tool named {name!r}; the tools are: {known}")
        if isinstance(arguments_json, Mapping):
            args: Any = dict(arguments_json)
        else:
            text = (arguments_json or "").strip()
            try:
                args = json.loads(text) if text else {}
            except json.JSONDecodeError as exc:
                return _error(
                    "bad_json",
                    f"arguments of {name} are not JSON: {exc.msg} at column {exc.colno}",
                )
            if args is None:
                args = {}
        if not isinstance(args, dict):
            return _error(
                "invalid_arguments", f"arguments of {name} must be a JSON object, not {args!r}"
            )
        if tool.model is not None:
            try:
                value: Any = tool.model.model_validate(args)
            except ValidationError as exc:
                return _error("invalid_arguments", f"{name}: {_pydantic_detail(exc)}")
        else:
            errs = _schema_errors(args, tool.parameters)
            if errs:
                more = f" (+{len(errs) - 3} more)" if len(errs) > 3 else ""
                return _error("invalid_arguments", f"{name}: {'; '.join(errs[:3])}{more}")
            value = args
        ctx = context if isinstance(context, ToolContext) else ToolContext(session=context)
        try:
            out = tool.fn(value, ctx)
        except _NoSession as exc:
            return _error("no_session", str(exc))
        except Exception as exc:
            return _error("tool_failed", f"{name} failed: {type(exc).__name__}: {exc}")
        try:
            return _jsonable(out)
        except (TypeError, ValueError) as exc:
            return _error("bad_result", f"{name} returned a value that is not JSON: {exc}")

    def __repr__(self) -> str:
        return f"ToolRegistry({', '.join(self._tools) or 'empty'})"


# --- built-in session tools ----------------------------------------------------------------


def _message_or_empty(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    return message_of(raw) or {}


def _block_text(block: Any) -> str:
    if not isinstance(block, Mapping):
        return ""
    kind = block.get("type")
    if kind in ("text", "reasoning"):
        return str(block.get("text", ""))
    if kind == "tool-call":
        return f"{block.get('name', '')}({block.get('arguments', '')})"
    if kind == "tool-result":
        return "\n".join(_block_text(b) for b in block.get("content") or [])
    return ""


def _message_text(msg: Mapping[str, Any]) -> str:
    return "\n".join(t for t in (_block_text(b) for b in msg.get("content") or []) if t)


def _gist(msg: Mapping[str, Any], chars: int) -> str:
    parts: list[str] = []
    for b in msg.get("content") or []:
        if not isinstance(b, Mapping):
            continue
        kind = b.get("type")
        if kind == "text":
            parts.append(str(b.get("text", "")))
        elif kind == "tool-call":
            parts.append(f"-> {b.get('name', '')}({b.get('arguments', '')})")
        elif kind == "tool-result":
            parts.append("<- " + _block_text(b))
    text = " ".join(" ".join(parts).split())
    return text if len(text) <= chars else text[: max(chars - 1, 0)] + "…"


def _role(raw: Mapping[str, Any], msg: Mapping[str, Any]) -> str:
    return "tool" if raw.get("type") == "tool/result" else str(msg.get("role", ""))


class ContextMessagesArgs(BaseModel):
    """Arguments of ``context_messages``."""

    last: int = Field(5, ge=0, le=50, description="How many of the latest messages to show.")
    gist_chars: int = Field(160, ge=20, le=2000, description="Characters per message gist.")


class ContextSearchArgs(BaseModel):
    """Arguments of ``context_search``."""

    query: str = Field(min_length=1, description="Exact text to look for.")
    limit: int = Field(10, ge=1, le=100, description="At most this many hits.")
    case_sensitive: bool = Field(False, description="Match case exactly.")


def context_messages(args: ContextMessagesArgs, ctx: ToolContext) -> dict[str, Any]:
    """The messages the model receives in this session: how many, how many tokens
    (the harness's chars/4 estimate), by role, and a gist of the last few."""
    session = ctx.require_session()
    seqs = session.message_seqs()
    raws = session.raw_events
    table = session.tokens("estimate")
    last = []
    for seq in seqs[len(seqs) - args.last :] if args.last else []:
        msg = _message_or_empty(raws[seq])
        last.append(
            {"seq": seq, "role": _role(raws[seq], msg), "gist": _gist(msg, args.gist_chars)}
        )
    by_role: dict[str, int] = {}
    for seq in seqs:
        role = _role(raws[seq], _message_or_empty(raws[seq]))
        by_role[role] = by_role.get(role, 0) + 1
    return {
        "session": session.id,
        "count": len(seqs),
        "tokens": table.total,
        "tokenizer": "estimate",
        "by_role": by_role,
        "last": last,
    }


def context_search(args: ContextSearchArgs, ctx: ToolContext) -> dict[str, Any]:
    """Exact substring search over the messages the model receives (text, reasoning, tool
    calls and results); each hit is the message's seq, role and a snippet around the match."""
    session = ctx.require_session()
    raws = session.raw_events
    needle = args.query if args.case_sensitive else args.query.lower()
    hits: list[dict[str, Any]] = []
    total = 0
    for seq in session.message_seqs():
        msg = _message_or_empty(raws[seq])
        text = _message_text(msg)
        hay = text if args.case_sensitive else text.lower()
        at = hay.find(needle)
        if at < 0:
            continue
        total += 1
        if len(hits) < args.limit:
            lo, hi = max(at - 60, 0), min(at + len(needle) + 60, len(text))
            snippet = ("…" if lo else "") + text[lo:hi] + ("…" if hi < len(text) else "")
            hits.append(
                {"seq": seq, "role": _role(raws[seq], msg), "snippet": " ".join(snippet.split())}
            )
    return {"query": args.query, "total": total, "hits": hits}


def _register_session_tools(reg: ToolRegistry) -> None:
    reg.register(
        "context_messages",
        "Summarise the messages you currently receive in this session: count, estimated "
        "tokens, counts by role and a gist of the last N messages (with their seq numbers).",
        ContextMessagesArgs,
        context_messages,
    )
    reg.register(
        "context_search",
        "Search the messages you currently receive in this session for an exact text; "
        "returns each matching message's seq, role and a snippet.",
        ContextSearchArgs,
        context_search,
    )


def _register_assembler(reg: ToolRegistry) -> None:
    from .assemble.tool import DESCRIPTION, AssemblerArgs, context_assembler

    def run(args: AssemblerArgs, ctx: ToolContext) -> dict[str, Any]:
        session = ctx.require_session()
        result, new = context_assembler(session, args, protect_current_step=True)
        if new is not None:
            if ctx.commit is None:
                result["applied"] = False
                result["notes"].append("no way to write the edit from here: dry run only")
            else:
                ctx.commit(new)
        return result

    reg.register("context_assembler", DESCRIPTION, AssemblerArgs, run)


_BUILTIN: tuple[Callable[[ToolRegistry], None], ...] = (
    _register_session_tools,
    _register_assembler,
)


def default_registry() -> ToolRegistry:
    """A new registry holding ctxsdk's own tools (a fresh object each call)."""
    reg = ToolRegistry()
    for add in _BUILTIN:
        add(reg)
    return reg


def dispatch(
    name: str,
    arguments_json: str | Mapping[str, Any] | None,
    context: ToolContext | Session | None = None,
    *,
    registry: ToolRegistry | None = None,
) -> dict[str, Any]:
    """Dispatch one call through ``registry`` (default: ``default_registry``)."""
    return (registry or default_registry()).dispatch(name, arguments_json, context)
