"""OpenHands trajectories: one JSON list of events, each an action or an observation.

- ``message`` actions are the user's prompts (``source: user``) or the agent's text
  (``source: agent``); a ``system`` action is the system prompt;
- every other agent action (``run``, ``read``, ``edit``, ``browse``, ``think`` ...) is a tool
  call: its id is ``tool_call_metadata.tool_call_id`` and its arguments are those the model
  wrote (the raw LiteLLM response in ``model_response``), else the action's ``args``; the
  model's text for the call (``thought``) comes first, reasoning (``reasoning_content``)
  before it. Adjacent actions from one model response (same response id) are one assistant
  message; when observations split them, usage and reasoning are counted once;
- an observation answers the call of the action its ``cause`` names (or its own
  ``tool_call_id``); an ``error`` observation is an error result, or, with no call, a notice
  the model saw; ``null`` observations, agent-state changes and actions of the user or the
  environment other than messages carry no message and are logged as skipped records;
- ``finish`` ends the run: its text is the final answer and the turn closes ``completed``
  (OpenHands sends the model no result for it; the call is kept in the provenance).

Message ids are ``oh:<file stem>:<event id>``, times are the events' timestamps, and the
title is the first prompt's first line (OpenHands prompts are the task itself).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ._common import (
    MAX_IMPORT_BYTES,
    JsonDict,
    cut_title,
    fail,
    iso_ms,
    json_arguments,
    media_block,
    parse_json,
    read_source,
    text_blocks,
)
from ._emit import ImportedLog, build_log
from ._items import (
    DEFAULT_CREATED_AT,
    AssistantItem,
    Item,
    Origin,
    ResultItem,
    SkipItem,
    SystemItem,
    UserItem,
)

__all__ = ["read_openhands"]

PROVIDER = "openhands"  # the trajectories name the model, not the provider (LiteLLM routes it)
_NOTICE = {"kind": "plugin", "plugin": "openhands", "form": "relay"}
# Action fields that are OpenHands bookkeeping, not arguments the model chose.
_NOT_ARGUMENTS = frozenset(
    {"thought", "impl_source", "translated_ipython_code", "confirmation_state", "hidden"}
)
_SILENT_OBSERVATIONS = frozenset({"null", "agent_state_changed", "recall", "user_rejected"})


def read_openhands(
    path: str | Path,
    *,
    session_id: str | None = None,
    max_bytes: int = MAX_IMPORT_BYTES,
) -> ImportedLog:
    """The v3 log ``ctxsdk.session.importers.from_openhands`` makes a session of (it documents
    the arguments), built and checked as the harness checks a log on load."""
    p, data = read_source(path, max_bytes)
    name = p.name
    doc = parse_json(data, name)
    if not isinstance(doc, list):
        fail(name, "an OpenHands trajectory is a JSON list of events", "is this the right format?")
    prefix = f"oh:{p.stem}"
    reader = _Reader(name, prefix)
    for i, raw in enumerate(doc):
        reader.event(i, raw)
    items = reader.items
    first = next((it for it in items if isinstance(it, UserItem) and it.prompt), None)
    title = _title(first) if first is not None else None
    start = next((it.time for it in items if getattr(it, "time", None) is not None), None)
    return build_log(
        items,
        fmt="openhands",
        source=name,
        session_id=session_id or prefix,
        created_at=start if start is not None else DEFAULT_CREATED_AT,
        final_reason={"kind": "completed"} if reader.finished else None,
        title=(title, {"kind": "fallback"}) if title else None,
    )


class _Reader:
    """Turns events into items, pairing observations with their actions' calls."""

    def __init__(self, name: str, prefix: str) -> None:
        self.name = name
        self.prefix = prefix
        self.items: list[Item] = []
        self.call_of: dict[int, str] = {}  # action event id -> its tool call id
        self.model = "unknown"
        self.last_response: str | None = None  # id of the model response of the last item
        self.finished = False
        self.responses: set[str] = set()  # model responses already logged

    def event(self, i: int, raw: Any) -> None:
        where = f"{self.name}, event {i}"
        if not isinstance(raw, dict):
            fail(where, "an event must be an object")
        eid = raw.get("id")
        if type(eid) is not int:
            fail(where, "an event needs an integer id")
        where = f"{self.name}, event {i} (id {eid})"
        t = iso_ms(raw.get("timestamp"), where)
        origin = Origin(eid, where, _meta(raw))
        if isinstance(raw.get("action"), str):
            self._action(raw, eid, t, origin)
        elif isinstance(raw.get("observation"), str):
            self._observation(raw, eid, t, origin)
        else:
            fail(where, "an event needs a string action or observation")

    # --- actions -----------------------------------------------------------------------------

    def _action(self, raw: JsonDict, eid: int, t: int | None, origin: Origin) -> None:
        kind, source, where = raw["action"], raw.get("source"), origin.where
        args = raw.get("args", {})
        if not isinstance(args, dict):
            fail(where, "an action's args must be an object")
        mid = f"{self.prefix}:{eid}"
        if kind == "system":
            self.items.append(SystemItem(mid, text_blocks(_str(args, "content", where)), origin))
        elif kind == "message" and source == "user":
            blocks = text_blocks(_message_text(raw, args, where))
            blocks += _images(args, origin)
            self.items.append(UserItem(mid, blocks, {"kind": "user"}, origin, t))
            self.last_response = None
        elif source != "agent":
            self.items.append(SkipItem(origin, f"{source} {kind} action", t))
        elif kind == "message":
            self._assistant(raw, mid, text_blocks(_message_text(raw, args, where)), origin, t)
        elif kind == "finish":
            text = _message_text(raw, args, where) or (_opt(args, "final_thought", where) or "")
            self._assistant(raw, mid, text_blocks(text), origin, t, finish=True)
            self.finished = True
        else:
            self._call(raw, kind, args, eid, mid, origin, t)

    def _call(
        self, raw: JsonDict, kind: str, args: JsonDict, eid: int, mid: str, origin: Origin, t: Any
    ) -> None:
        where = origin.where
        meta = _tool_meta(raw, where)
        call_id = _opt(meta, "tool_call_id", where) or f"{mid}:call"
        fname = _opt(meta, "function_name", where) or kind
        written = _written_call(meta, call_id)
        if written is not None:
            arguments = written
        else:
            arguments = json_arguments({k: v for k, v in args.items() if k not in _NOT_ARGUMENTS})
        call = {"type": "tool-call", "id": call_id, "name": fname, "arguments": arguments}
        self.call_of[eid] = call_id
        response = _response_id(meta)
        last = self.items[-1] if self.items else None
        if (
            response is not None
            and response == self.last_response
            and isinstance(last, AssistantItem)
        ):
            last.blocks.append(call)  # another call of the same model response
            last.origins.append(origin)
            return
        thought = _opt(args, "thought", where) or ""
        self._assistant(raw, mid, [*text_blocks(thought), call], origin, t)

    def _assistant(
        self,
        raw: JsonDict,
        mid: str,
        blocks: list[JsonDict],
        origin: Origin,
        t: int | None,
        *,
        finish: bool = False,
    ) -> None:
        meta = _tool_meta(raw, origin.where)
        response = _response(meta)
        model = response.get("model") if response else None
        if isinstance(model, str) and model:
            self.model = model
        rid = _response_id(meta)
        repeat = rid is not None and rid in self.responses
        self.responses.add(rid or "")
        # Calls of one response split by their observations: usage and reasoning count once.
        message = None if repeat else _choice_message(response)
        reasoning = message.get("reasoning_content") if message else None
        if isinstance(reasoning, str) and reasoning:
            blocks = [{"type": "reasoning", "text": reasoning}, *blocks]
        if finish and meta:
            extra = {**origin.extra, "finishCall": _opt(meta, "tool_call_id", origin.where)}
            origin = Origin(origin.record, origin.where, extra)
        usage = _usage(response.get("usage")) if response and not repeat else None
        self.items.append(AssistantItem(mid, blocks, [origin], PROVIDER, self.model, t, usage))
        self.last_response = rid

    # --- observations ------------------------------------------------------------------------

    def _observation(self, raw: JsonDict, eid: int, t: int | None, origin: Origin) -> None:
        kind, where = raw["observation"], origin.where
        if kind in _SILENT_OBSERVATIONS:
            self.items.append(SkipItem(origin, f"{kind} observation", t))
            return
        content = raw.get("content", "")
        if not isinstance(content, str):
            fail(where, "an observation's content must be a string")
        cause = raw.get("cause")
        call_id = self.call_of.pop(cause, None) if type(cause) is int else None
        if call_id is None:
            call_id = _opt(_tool_meta(raw, where), "tool_call_id", where)
        mid = f"{self.prefix}:{eid}"
        if call_id is not None:
            error = kind == "error"
            blocks = text_blocks(content or str(raw.get("message") or ""))
            self.items.append(ResultItem(mid, call_id, blocks, origin, t, is_error=error))
        elif kind == "error" and content:
            # An error the agent loop showed the model with no call to answer.
            notice = {**_NOTICE, "error": True}  # a relayed error: the kernel reads it as one
            self.items.append(UserItem(mid, text_blocks(content), notice, origin, t, False))
        else:
            self.items.append(SkipItem(origin, f"{kind} observation without an action", t))
        self.last_response = None


def _meta(raw: JsonDict) -> JsonDict:
    """Event fields kept in the provenance: source, kind, cause and a command's exit code."""
    out: JsonDict = {}
    for key in ("source", "action", "observation", "cause", "timestamp"):
        if isinstance(raw.get(key), str | int) and type(raw.get(key)) is not bool:
            out[key] = raw[key]
    extras = raw.get("extras")
    metadata = extras.get("metadata") if isinstance(extras, dict) else None
    if isinstance(metadata, dict) and type(metadata.get("exit_code")) is int:
        out["exitCode"] = metadata["exit_code"]
    return out


def _str(obj: JsonDict, key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        fail(where, f"{key!r} must be a string")
    return value


def _opt(obj: JsonDict | None, key: str, where: str) -> str | None:
    value = obj.get(key) if obj else None
    if value is not None and not isinstance(value, str):
        fail(where, f"{key!r} must be a string when present")
    return value


def _message_text(raw: JsonDict, args: JsonDict, where: str) -> str:
    """A message's text: ``args.content`` (what the model saw), else the event's message."""
    text = _opt(args, "content", where)
    return text if text is not None else _opt(raw, "message", where) or ""


def _images(args: JsonDict, origin: Origin) -> list[JsonDict]:
    urls = args.get("image_urls")
    if urls is None:
        return []
    if not isinstance(urls, list) or not all(isinstance(u, str) for u in urls):
        fail(origin.where, "'image_urls' must be a list of strings")
    return [media_block("image", u, None, [origin.record, k]) for k, u in enumerate(urls)]


def _tool_meta(raw: JsonDict, where: str) -> JsonDict | None:
    meta = raw.get("tool_call_metadata")
    if meta is not None and not isinstance(meta, dict):
        fail(where, "'tool_call_metadata' must be an object")
    return meta


def _response(meta: JsonDict | None) -> JsonDict | None:
    response = meta.get("model_response") if meta else None
    return response if isinstance(response, dict) else None


def _response_id(meta: JsonDict | None) -> str | None:
    response = _response(meta)
    rid = response.get("id") if response else None
    return rid if isinstance(rid, str) else None


def _choice_message(response: JsonDict | None) -> JsonDict | None:
    choices = response.get("choices") if response else None
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, dict) else None
    return message if isinstance(message, dict) else None


def _written_call(meta: JsonDict | None, call_id: str) -> str | None:
    """The arguments the model wrote for ``call_id``, from the raw response."""
    message = _choice_message(_response(meta))
    calls = message.get("tool_calls") if message else None
    for call in calls if isinstance(calls, list) else []:
        fn = call.get("function") if isinstance(call, dict) else None
        if isinstance(fn, dict) and call.get("id") == call_id:
            args = fn.get("arguments")
            if isinstance(args, str):
                return args
            if isinstance(args, dict):
                return json.dumps(args, ensure_ascii=False, separators=(",", ":"))
    return None


def _usage(usage: Any) -> JsonDict | None:
    """LiteLLM usage as DSH ``TokenUsage``: ``prompt_tokens`` includes the cache buckets,
    which DSH counts apart."""
    if not isinstance(usage, dict):
        return None
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if type(prompt) is not int or type(completion) is not int:
        return None
    read = usage.get("cache_read_input_tokens")
    write = usage.get("cache_creation_input_tokens")
    read = read if type(read) is int else 0
    write = write if type(write) is int else 0
    out: JsonDict = {"inputTokens": max(prompt - read - write, 0), "outputTokens": completion}
    if read:
        out["cacheReadTokens"] = read
    if write:
        out["cacheWriteTokens"] = write
    return out


def _title(prompt: UserItem) -> str | None:
    """The first prompt's first non-empty line, at most 80 bytes."""
    text = "".join(b.get("text", "") for b in prompt.blocks if b.get("type") == "text")
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    if not line:
        return None
    return cut_title(line)
