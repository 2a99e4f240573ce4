"""The tool registry: ``Tool``, ``ToolContext``, ``ToolRegistry`` and its ``dispatch``, which
turns every bad call into a structured error (``is_error``) instead of raising."""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from pydantic import BaseModel, ValidationError

from ..errors import NotFound, ToolError
from ..session.kernel import model_safe
from ._schema import check_schema, schema_errors

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["Tool", "ToolContext", "ToolFn", "ToolRegistry", "is_error"]

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
    # A message may quote the model's arguments or an exception's text: both can hold a
    # credential or control characters, and both go back to the model.
    return {"error": {"code": code, "message": model_safe(message)}}


def is_error(result: Mapping[str, Any]) -> bool:
    """True for a dispatch result that is a structured error."""
    if not isinstance(result, Mapping):
        return False
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
            if t.model is None:  # a raw JSON Schema: checked as register() checks it
                t = dataclasses.replace(t, parameters=check_schema(t.name, t.parameters))
            self._add(t, replace=False)

    def _add(self, tool: Tool, *, replace: bool) -> Tool:
        if not isinstance(tool.name, str) or not _NAME.match(tool.name):
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
        it) or an object JSON Schema (checked against its draft's metaschema, Draft 2020-12
        unless ``$schema`` names another; arguments are validated against it and passed as a
        dict). A bad name, schema or model raises ToolError.
        """
        if isinstance(parameters, type) and issubclass(parameters, BaseModel):
            try:
                schema = _strip_titles(parameters.model_json_schema())
            except Exception as exc:  # pydantic: a field type with no JSON Schema
                raise ToolError(
                    f"tool {name!r}: {parameters.__name__} has no JSON Schema: {exc}"
                ) from None
            tool = Tool(name, description, schema, fn, parameters)
        else:
            tool = Tool(name, description, check_schema(name, parameters), fn, None)
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
            label = getattr(fn, "__name__", None)
            if not isinstance(label, str):
                raise ToolError(f"@tool: {fn!r} has no __name__; use register(name, ...)")
            try:
                hints = typing.get_type_hints(fn)
                params = list(inspect.signature(fn).parameters)
            except Exception as exc:  # NameError for an annotation out of scope, ValueError...
                raise ToolError(
                    f"@tool {label}: its annotations cannot be read ({type(exc).__name__}: "
                    f"{exc}); define the pydantic model at module level"
                ) from None
            model = hints.get(params[0]) if params else None
            if not (isinstance(model, type) and issubclass(model, BaseModel)):
                raise ToolError(
                    f"@tool {label}: annotate the first parameter with a pydantic model"
                )
            desc = description or inspect.getdoc(fn) or ""
            self.register(name or label, desc, model, fn, replace=replace)
            return fn

        return deco

    def _unknown(self, name: object) -> str:
        return f"no tool named {name!r}; the tools are: {', '.join(self._tools) or 'none'}"

    def unregister(self, name: str) -> None:
        """Remove a tool; NotFound if there is none of that name."""
        if name not in self:
            raise NotFound(self._unknown(name))
        del self._tools[name]

    def get(self, name: str) -> Tool:
        """The tool of that name; NotFound if there is none."""
        if name not in self:
            raise NotFound(self._unknown(name))
        return self._tools[name]

    def names(self) -> list[str]:
        return list(self._tools)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._tools

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
        if name not in self:
            return _error("unknown_tool", self._unknown(name))
        tool = self._tools[name]
        if isinstance(arguments_json, Mapping):
            args: Any = dict(arguments_json)
        elif arguments_json is None or isinstance(arguments_json, str | bytes | bytearray):
            text = (arguments_json or "").strip()
            try:
                args = json.loads(text) if text else {}
            except json.JSONDecodeError as exc:
                return _error(
                    "bad_json",
                    f"arguments of {name} are not JSON: {exc.msg} at column {exc.colno}",
                )
            except (UnicodeDecodeError, RecursionError) as exc:
                return _error("bad_json", f"arguments of {name} are not JSON: {exc}")
            if args is None:
                args = {}
        else:
            return _error(
                "invalid_arguments",
                f"arguments of {name} must be JSON text or a mapping, "
                f"not {type(arguments_json).__name__}",
            )
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
            try:
                errs = schema_errors(args, tool.parameters)
            except ToolError as exc:
                return _error("tool_failed", f"{name} failed: {exc}")
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


Tool.__module__ = "ctxsdk.tools"
ToolContext.__module__ = "ctxsdk.tools"
ToolRegistry.__module__ = "ctxsdk.tools"
is_error.__module__ = "ctxsdk.tools"
