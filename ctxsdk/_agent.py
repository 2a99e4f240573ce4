"""A minimal agent loop: a model with tools over a Session, recorded as real DSH v3 events.

``run_agent`` appends one turn the way the harness writes it (spec §5-§6):

    turn/start
      step/start  [system/message]  user/message  [request/header]  [request/context]
                  assistant/message (with its stream)  (tool/call  tool/result)*  step/end
      step/start  assistant/message  (tool/call  tool/result)*  step/end
      ...
    turn/end

Events are written by the one ``EventWriter`` and appended to the session in batches with
``Session.append`` (before each model call, before each tool runs, at the end of the turn),
so the harness's validation applies to every one. The
returned Session holds them as pending events: show it, ``save()`` it, or
``append_to_log()`` it.

How the turn ends (``turn/end.reason``):

- ``completed``: the model answered without calling a tool;
- ``max-tokens``: a reply was cut at ``max_tokens`` (its tool calls, if any, are answered
  with a ``TOOL_NOT_RUN`` error result and not run);
- ``aborted`` ``{kind: "hook", reason: "max_steps N reached"}``: the step budget ran out
  while the model still wanted tools (their results are recorded first);
- ``aborted`` ``{kind: "user"}``: the ``cancel`` event was set;
- ``error`` ``{error: {message, code, status?}}``: the model call failed (no route, auth,
  provider error, timeout); the failed attempt is logged as ``assistant/attempt``.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ctxsdk.llm import NO_ROUTE, ChatResult, ReasoningEffort

from .errors import (
    LLM_FAILURES,
    InvalidArgument,
    LLMCancelled,
    LLMError,
    LLMNotConfigured,
    LogTooOld,
    SurfaceError,
)
from .session.kernel import EventWriter, now_ms
from .tools import ToolContext, ToolRegistry, default_registry, is_error

if TYPE_CHECKING:
    from ctxsdk.llm import LLM
    from ctxsdk.session import Session

    from .assemble import Rule

__all__ = ["run_agent"]

_FAILURE_CODES = {f.kind: f.code for f in LLM_FAILURES if f.code is not None}
"""The ``turn/end`` error code for each kind of model failure a chat call raises."""


def _stream_records(blocks: list[dict[str, Any]], usage: dict[str, int], finish: str) -> list[Any]:
    """A minimal valid v2+ stream: each block whole, as one run, then usage and finish."""
    t = now_ms()
    out: list[dict[str, Any]] = []
    for index, block in enumerate(blocks):
        kind = block["type"]
        out.append(
            {
                "type": "chunk",
                "time": t,
                "chunk": {"type": "block-start", "index": index, "blockType": kind},
            }
        )
        if kind == "tool-call":
            out.append(
                {
                    "type": "tool-call-chunks",
                    "time0": t,
                    "index": index,
                    "dt": [],
                    "id": block["id"],
                    "name": block["name"],
                    "args": [block["arguments"]],
                }
            )
        else:
            out.append(
                {
                    "type": f"{kind}-chunks",
                    "time0": t,
                    "index": index,
                    "dt": [],
                    "texts": [block["text"]],
                }
            )
        out.append(
            {
                "type": "chunk",
                "time": t,
                "chunk": {"type": "block-end", "index": index, "block": dict(block)},
            }
        )
    out.append({"type": "chunk", "time": t, "chunk": {"type": "usage", "usage": usage}})
    out.append(
        {"type": "chunk", "time": t, "chunk": {"type": "finish", "reason": {"kind": finish}}}
    )
    return out


class _Turn:
    """The turn being written: the session so far, and a writer holding the events not yet
    appended to it. Events are appended in batches: before the model is called, before a
    tool runs (a tool sees the session it runs in), and when the turn ends."""

    def __init__(self, session: Session, provider: str, model: str) -> None:
        self.session = session
        self.provider = provider
        self.model = model
        self.w = EventWriter.after(session)

    def flush(self) -> Session:
        """Append the written events to the session (validated as the harness would)."""
        new = self.w.take()
        if new:
            self.session = self.session.append(new)
        return self.session

    def adopt(self, session: Session) -> None:
        """Take a session a tool derived from ours (its extra events are already validated)."""
        self.flush()
        if session.raw_events[: len(self.session)] != self.session.raw_events:
            raise SurfaceError("a tool returned a session that does not extend this one")
        self.session = session
        self.w = EventWriter.after(session)

    def emit(self, etype: str, data: dict[str, Any], **envelope: Any) -> int:
        return self.w.emit(etype, data, **envelope)

    @property
    def step(self) -> int:
        return self.w.step

    def system(self, text: str) -> None:
        """The system prompt as node 0: appended when there is none, else node 0 replaced."""
        # The events not yet appended (turn and step starts) change neither the system prompt
        # nor the request envelope, so both are read from the session as it is.
        if text == (self.session.system_prompt or ""):
            return
        message = {
            "id": str(uuid.uuid4()),
            "role": "system",
            "content": [{"type": "text", "text": text}] if text else [],
            "source": {"kind": "plugin", "plugin": "ctxsdk"},
        }
        try:
            self.w.system_message(message)
        except SurfaceError:
            raise SurfaceError(
                "this session's first surface node is not a system message, so a system prompt "
                "cannot be added in front of it; run without system="
            ) from None

    def user(self, prompt: str) -> None:
        message = {
            "content": [{"type": "text", "text": prompt}],
            "source": {"kind": "user"},
            "role": "user",
            "id": str(uuid.uuid4()),
        }
        self.emit("user/message", message, op="append")

    def injected(self, message: Mapping[str, Any]) -> None:
        """A turn-context hook's message: a user message a plugin wrote."""
        src = message.get("source")
        if message.get("role") != "user" or not (
            isinstance(src, Mapping) and src.get("kind") == "plugin"
        ):
            raise InvalidArgument(
                "an inject hook returns a user message whose source is {kind: 'plugin', ...}"
            )
        self.emit("user/message", dict(message), op="append")

    def request(self, config: dict[str, Any], tools: list[dict[str, Any]]) -> None:
        header: dict[str, Any] = {"config": config}
        if tools:
            header["tools"] = tools
        headers = self.session.request_headers()
        if not headers or headers[-1][1].header != header:
            reason = "change" if headers else "initial"
            self.emit("request/header", {"header": header, "reason": reason})
        if not self._has_context():  # once per route, as the harness writes it
            self.emit("request/context", {"provider": self.provider, "model": self.model})

    def _has_context(self) -> bool:
        for raw in reversed(self.session.raw_events):
            if raw["type"] == "request/context":
                data = raw["data"]
                return bool(
                    data.get("provider") == self.provider and data.get("model") == self.model
                )
        return False

    def assistant(self, result: ChatResult, call_ids: list[str]) -> None:
        blocks: list[dict[str, Any]] = []
        if result.reasoning:
            blocks.append({"type": "reasoning", "text": result.reasoning})
        if result.text:
            blocks.append({"type": "text", "text": result.text})
        for call, cid in zip(result.tool_calls, call_ids, strict=True):
            blocks.append(
                {"type": "tool-call", "id": cid, "name": call.name, "arguments": call.arguments}
            )
        usage = result.usage.to_token_usage()
        message = {
            "role": "assistant",
            "content": blocks,
            "source": {"kind": "model", "provider": self.provider, "model": self.model},
            "id": str(uuid.uuid4()),
        }
        data = {
            "turn": self.w.turn,
            "step": self.w.step,
            "message": message,
            "stream": _stream_records(blocks, usage, result.finish_kind),
            "usage": usage,
        }
        self.emit("assistant/message", data, op="append")

    def end_turn(self, reason: dict[str, Any]) -> Session:
        """Close the open step and the turn; returns the session with the whole turn."""
        self.w.end_turn(reason)
        return self.flush()

    def attempt(self, finish: dict[str, Any]) -> None:
        """A failed attempt with no message (log-only ``assistant/attempt``)."""
        record = {"type": "chunk", "time": now_ms(), "chunk": {"type": "finish", "reason": finish}}
        self.emit(
            "assistant/attempt", {"turn": self.w.turn, "step": self.w.step, "stream": [record]}
        )

    def tool(self, call_id: str, name: str, arguments: str, result: dict[str, Any]) -> None:
        call_seq = self.emit(
            "tool/call",
            {
                "turn": self.w.turn,
                "step": self.w.step,
                "callId": call_id,
                "name": name,
                "arguments": arguments,
            },
        )
        failed = is_error(result)
        block = {
            "type": "tool-result",
            "toolCallId": call_id,
            "content": [{"type": "text", "text": json.dumps(result, ensure_ascii=False)}],
            "isError": failed,
        }
        data: dict[str, Any] = {
            "turn": self.w.turn,
            "step": self.w.step,
            "message": {
                "source": {"kind": "tool", "callId": call_id},
                "content": [block],
                "role": "user",
                "id": str(uuid.uuid4()),
            },
        }
        if failed:
            data["error"] = {
                "name": "ToolDispatchError",
                "code": str(result["error"]["code"]).upper(),
            }
        self.emit("tool/result", data, sources=[call_seq], op="append")


def _call_ids(result: ChatResult, taken: set[str]) -> list[str]:
    """The model's call ids, with a fresh one for any that is empty or repeated."""
    out: list[str] = []
    for i, call in enumerate(result.tool_calls):
        cid = call.id
        if not cid or cid in taken:
            cid = f"call_{i:02d}_{uuid.uuid4().hex[:16]}"
        taken.add(cid)
        out.append(cid)
    return out


def _failure(exc: LLMError) -> dict[str, Any]:
    failure: dict[str, Any] = {
        "message": str(exc),
        "code": _FAILURE_CODES.get(getattr(exc, "kind", "provider"), "PROVIDER_ERROR"),
    }
    if exc.status is not None:
        failure["status"] = exc.status
    if exc.retry_after is not None:
        failure["providerRetryAfterMs"] = int(exc.retry_after * 1000)
    if exc.request_id is not None:
        failure["requestId"] = exc.request_id
    return failure


def run_agent(
    session: Session,
    llm: LLM,
    prompt: str,
    *,
    registry: ToolRegistry | None = None,
    max_steps: int = 8,
    max_tokens: int = 1024,
    system: str | None = None,
    temperature: float = 0.0,
    reasoning_effort: ReasoningEffort = "off",
    cancel: threading.Event | None = None,
    extras: Mapping[str, Any] | None = None,
    auto_rules: Sequence[Rule] = (),
    inject: Sequence[Callable[[Session], Mapping[str, Any] | None]] = (),
) -> Session:
    """Run ``prompt`` as one new turn of ``session``: call the model with the registry's
    tools, dispatch each call (with the session as the tools' context), feed the results back,
    until the model stops or ``max_steps`` model calls were made.

    Returns the new Session with the turn as pending events (see the module docstring for how
    a turn ends). The model sees ``session.wire("openai")`` of the growing session. A session
    that ends inside a turn is crash-repaired first (the repair events are pending too).
    ``system`` sets the system prompt (node 0) for this turn and after. Only v3 logs can be
    written to (``session.save(path, version=3)`` upgrades older ones). ``auto_rules`` are
    assembly presets applied when the turn ends (only rules with ``auto=True`` act), their
    folds appended after ``turn/end``. ``inject`` are turn-context hooks (a ``cx.Merge`` is
    one): each is called once per turn with the session holding the new prompt and returns a
    plugin-sourced user message (or None), appended after the prompt, as a harness plugin's
    per-turn context is.
    """
    if session.version < 3:
        raise LogTooOld(
            f"run_agent writes v3 events and this log is v{session.version}; "
            "upgrade it with session.save(path, version=3) and open the result"
        )
    if max_steps < 1:
        raise InvalidArgument(f"max_steps must be >= 1, not {max_steps}")
    route = llm.route
    if route is None:
        raise LLMNotConfigured(
            f"{NO_ROUTE}: run_agent needs a model; pass LLM(base_url=..., model=...) or set "
            "CTXSDK_LLM_BASE_URL / CTXSDK_LLM_MODEL",
            reason=NO_ROUTE,
        )
    provider, model = route
    reg = registry if registry is not None else default_registry()
    base = session.repaired() if session.is_interrupted else session
    t = _Turn(base, provider, model)
    config: dict[str, Any] = {
        "provider": provider,
        "model": model,
        "maxTokens": max_tokens,
        "temperature": temperature,
    }
    if reasoning_effort != "off":
        config["reasoningEffort"] = reasoning_effort

    t.w.start_turn()
    t.w.start_step()
    if system is not None:
        t.system(system)
    t.user(prompt)
    t.request(config, reg.dsh_definitions())
    for hook in inject:
        message = hook(t.flush())
        if message is not None:
            t.injected(message)

    definitions = reg.definitions() or None

    def ask(wire: list[dict[str, Any]]) -> ChatResult:
        return llm.chat(
            wire,
            max_tokens=max_tokens,
            temperature=temperature,
            reasoning_effort=reasoning_effort,
            tools=definitions,
            cancel=cancel,
        )

    out = t.end_turn(_steps(t, ask, reg, max_steps, cancel, extras or {}))
    if auto_rules:
        from .assemble import Assembly

        out = Assembly(out, rules=auto_rules).apply_rules(auto_only=True).apply(write=False)
    return out


def _steps(
    t: _Turn,
    ask: Callable[[list[dict[str, Any]]], ChatResult],
    reg: ToolRegistry,
    max_steps: int,
    cancel: threading.Event | None,
    extras: Mapping[str, Any],
) -> dict[str, Any]:
    """Model call, tool calls, next step, until the turn ends; returns the turn's end reason."""
    taken: set[str] = set()
    while True:
        try:
            result = ask(t.flush().wire("openai", repair=False))
        except LLMCancelled as exc:
            t.attempt({"kind": "aborted", "failure": _failure(exc)})
            return {"kind": "aborted", "reason": {"kind": "user"}}
        except LLMError as exc:
            t.attempt({"kind": "error", "failure": _failure(exc)})
            return {"kind": "error", "error": _failure(exc)}
        ids = _call_ids(result, taken)
        t.assistant(result, ids)
        step_extras = dict(extras)  # each step's tools share one copy, as they always have
        for call, cid in zip(result.tool_calls, ids, strict=True):
            if result.truncated:
                out: dict[str, Any] = {
                    "error": {
                        "code": "tool_not_run",
                        "message": "not run: the reply was cut at max_tokens",
                    }
                }
            else:
                ctx = ToolContext(session=t.flush(), extras=step_extras, commit=t.adopt)
                out = reg.dispatch(call.name, call.arguments, ctx)
            t.tool(cid, call.name, call.arguments, out)
        t.w.end_step()
        if result.truncated:
            return {"kind": "max-tokens"}
        if not result.tool_calls:
            return {"kind": "completed"}
        if t.step >= max_steps:
            return {
                "kind": "aborted",
                "reason": {"kind": "hook", "reason": f"max_steps {max_steps} reached"},
            }
        if cancel is not None and cancel.is_set():
            return {"kind": "aborted", "reason": {"kind": "user"}}
        t.w.start_step()
