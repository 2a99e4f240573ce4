"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``): one
``{timestamp, type, payload}`` record per line.

- ``session_meta`` gives the session id, cwd, provider and (0.125+) the base instructions,
  which become the system head; ``turn_context`` gives the model of the records after it.
- ``response_item`` records are what the model saw and wrote. Consecutive model outputs
  (``reasoning``, assistant ``message``, ``function_call``, ``custom_tool_call`` such as
  ``apply_patch``, ``local_shell_call``, ``web_search_call``) are one response, so they become
  one assistant message; ``function_call_output`` / ``custom_tool_call_output`` are the tool
  results of the call with the same ``call_id``. ``developer`` messages are system messages.
- A ``user`` message is a prompt when Codex also logged it as an ``event_msg``
  ``user_message`` (what the person typed); the others (AGENTS.md, ``<environment_context>``)
  are context Codex injected, kept with source ``{kind: plugin, plugin: codex}``.
- ``event_msg`` records are UI events that mirror the items (and ``token_count`` usage, which
  is attached to the assistant message it counts): kept as skipped provenance only, like
  ``ghost_snapshot``. A ``compacted`` record is a compaction (spec §10).
- Reasoning: the readable summary (or raw reasoning text) is kept; encrypted content is not.
  A web search runs on the server and its results are not in the rollout, so it stays a
  verbatim ``codex-web-search`` block of the assistant message, not a call with a result.

The session ends as its last turn did: ``completed`` after a final answer, open when the file
stops after a call (crash repair answers it), ``aborted`` after a ``turn_aborted`` event.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._common import (
    MAX_IMPORT_BYTES,
    JsonDict,
    cut_title,
    fail,
    get_dict,
    get_str,
    iso_ms,
    json_arguments,
    load_json_line,
    media_block,
    opt_str,
    read_source,
    text_blocks,
    verbatim_block,
)
from ._emit import ImportedLog, build_log
from ._items import (
    DEFAULT_CREATED_AT,
    AssistantItem,
    CompactItem,
    Item,
    Origin,
    ResultItem,
    SkipItem,
    SystemItem,
    UserItem,
)

__all__ = ["read_codex"]

_CONTEXT = {"kind": "plugin", "plugin": "codex", "form": "instructions"}
_MODEL_OUTPUTS = frozenset(
    {"reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
)
_RESULTS = frozenset({"function_call_output", "custom_tool_call_output"})
# Context Codex injects as user messages (used only when a file logs no user_message events).
_INJECTED = ("<", "# AGENTS.md instructions")
_EXIT = re.compile(r"^Process exited with code (-?\d+)$", re.MULTILINE)

_Record = tuple[int, JsonDict]  # (1-based line, record)


@dataclass
class _Group:
    """The model outputs of one response, gathered into one assistant message."""

    blocks: list[JsonDict] = field(default_factory=list)
    origins: list[Origin] = field(default_factory=list)
    time: int | None = None
    line: int = 0
    usage: JsonDict | None = None


def read_codex(
    path: str | Path, *, session_id: str | None = None, max_bytes: int = MAX_IMPORT_BYTES
) -> ImportedLog:
    """The v3 log ``ctxsdk.session.importers.from_codex`` makes a session of (it documents
    the arguments), built and checked as the harness checks a log on load."""
    p, data = read_source(path, max_bytes)
    name = p.name
    records = _read(data, name)
    if not records or records[0][1].get("type") != "session_meta":
        fail(
            f"{name}, line {records[0][0] if records else 1}",
            "a Codex rollout starts with a session_meta record",
            "is this a Codex CLI rollout-*.jsonl file?",
        )
    first_line, first = records[0]
    meta = get_dict(first, "payload", f"{name}, line {first_line}")
    assert meta is not None  # get_dict raises when required
    where_meta = f"{name}, line {first_line}"
    sid = get_str(meta, "id", where_meta)
    provider = opt_str(meta, "model_provider", where_meta) or "openai"
    reader = _Reader(name, f"codex:{sid}", provider, _prompts(records, name))
    items = reader.items(records)
    created = iso_ms(meta.get("timestamp"), where_meta) or iso_ms(
        first.get("timestamp"), where_meta
    )
    return build_log(
        items,
        fmt="codex",
        source=name,
        session_id=session_id or sid,
        created_at=created if created is not None else DEFAULT_CREATED_AT,
        cwd=opt_str(meta, "cwd", where_meta),
        title=reader.title(),
        final_reason=reader.final_reason,
    )


def _read(data: bytes, name: str) -> list[_Record]:
    out: list[_Record] = []
    for n, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        where = f"{name}, line {n}"
        rec = load_json_line(raw, where, "is the line torn (the file truncated)?")
        if not isinstance(rec, dict):
            fail(where, "a rollout record must be a JSON object")
        if not isinstance(rec.get("type"), str) or not isinstance(rec.get("payload"), dict):
            fail(
                where,
                "a rollout record needs a string 'type' and an object 'payload'",
                "is this a Codex CLI rollout-*.jsonl file?",
            )
        out.append((n, rec))
    return out


def _prompts(records: list[_Record], name: str) -> set[str] | None:
    """What the person typed (``event_msg`` ``user_message``), or None if none is logged."""
    out: set[str] = set()
    for n, rec in records:
        payload = rec["payload"]
        if rec["type"] == "event_msg" and payload.get("type") == "user_message":
            out.add(get_str(payload, "message", f"{name}, line {n}"))
    return out or None


class _Reader:
    def __init__(self, name: str, prefix: str, provider: str, prompts: set[str] | None) -> None:
        self.name = name
        self.prefix = prefix
        self.provider = provider
        self.prompts = prompts
        self.model = "unknown"
        self.out: list[Item] = []
        self.group: _Group | None = None
        self.deferred: list[Item] = []  # skipped records seen while a response is open
        self.last: AssistantItem | None = None
        self.prompt_texts: list[str] = []
        self.final_reason: JsonDict | None = None

    def where(self, n: int) -> str:
        return f"{self.name}, line {n}"

    def origin(self, n: int, payload: JsonDict, **extra: Any) -> Origin:
        kind = payload.get("type")
        return Origin(n, self.where(n), {"line": n, "type": kind, **extra})

    def items(self, records: list[_Record]) -> list[Item]:
        for n, rec in records:
            where = self.where(n)
            t = iso_ms(rec.get("timestamp"), where)
            kind, payload = rec["type"], rec["payload"]
            if kind == "response_item":
                self.response_item(n, payload, t)
            elif kind == "turn_context":
                model = opt_str(payload, "model", where)
                self.model = model or self.model
                self.skip(n, payload, "turn_context")
            elif kind == "event_msg":
                self.event(n, payload)
            elif kind == "session_meta" and n == records[0][0]:
                self.session_meta(n, payload)
            elif kind == "compacted":
                self.flush()
                self.compacted(n, payload, t)
            else:
                self.skip(n, payload, kind)
        self.flush()
        return self.out

    # --- records -----------------------------------------------------------------------------

    def session_meta(self, n: int, payload: JsonDict) -> None:
        base = payload.get("base_instructions")
        text = base.get("text") if isinstance(base, dict) else None
        origin = Origin(n, self.where(n), {"line": n, "type": "session_meta"})
        if isinstance(text, str) and text:
            self.out.append(SystemItem(f"{self.prefix}:system", text_blocks(text), origin))
        else:  # 0.77 logs no base instructions; its ``instructions`` are repeated as a message
            self.out.append(SkipItem(origin, "session_meta"))

    def skip(self, n: int, payload: JsonDict, reason: str) -> None:
        item = SkipItem(self.origin(n, payload), reason)  # no time: it never moves the clock
        (self.deferred if self.group is not None else self.out).append(item)

    def event(self, n: int, payload: JsonDict) -> None:
        kind = payload.get("type")
        where = self.where(n)
        extra: JsonDict = {}
        if kind == "token_count":
            info = payload.get("info")
            usage = _usage(info.get("last_token_usage") if isinstance(info, dict) else None)
            # The first count after a response is its usage; Codex repeats it unchanged.
            if usage is not None and self.group is not None:
                self.group.usage = self.group.usage or usage
            elif usage is not None and self.last is not None and self.last.usage is None:
                self.last.usage = usage
        elif kind == "task_complete":
            self.final_reason = None
        elif kind == "turn_aborted":
            self.final_reason = {"kind": "aborted", "reason": {"kind": "user"}}
        elif kind in ("error", "stream_error", "warning"):
            message = opt_str(payload, "message", where)
            extra = {"message": message} if message is not None else {}
        item = SkipItem(self.origin(n, payload, **extra), f"event_msg/{kind}")
        (self.deferred if self.group is not None else self.out).append(item)

    def response_item(self, n: int, payload: JsonDict, t: int | None) -> None:
        kind = payload.get("type")
        where = self.where(n)
        if kind == "message":
            role = payload.get("role")
            blocks = _content(payload.get("content"), where)
            if role == "assistant":
                self.model_output(n, payload, t, blocks)
                return
            self.flush()
            mid = f"{self.prefix}:{n}"
            origin = self.origin(n, payload, role=role)
            if role in ("developer", "system"):
                self.out.append(SystemItem(mid, blocks, origin, t))
            elif role == "user":
                text = "".join(b.get("text", "") for b in blocks if b["type"] == "text")
                if self.is_prompt(text):
                    self.prompt_texts.append(text)
                    self.out.append(UserItem(mid, blocks, {"kind": "user"}, origin, t))
                else:
                    self.out.append(UserItem(mid, blocks, dict(_CONTEXT), origin, t))
            else:
                fail(
                    where, f"unknown message role {role!r}", "roles are developer, user, assistant"
                )
        elif kind in _MODEL_OUTPUTS:
            self.model_output(n, payload, t, _output_blocks(kind, payload, where))
        elif kind in _RESULTS:
            self.flush()
            call_id = get_str(payload, "call_id", where)
            blocks, is_error = _result(payload.get("output"), where)
            origin = self.origin(n, payload, callId=call_id)
            self.out.append(
                ResultItem(f"{self.prefix}:{n}", call_id, blocks, origin, t, is_error=is_error)
            )
        else:  # ghost_snapshot and kinds newer than this importer: no model input
            self.skip(n, payload, f"response_item/{kind}")

    def is_prompt(self, text: str) -> bool:
        if self.prompts is not None:
            return text in self.prompts
        return not text.lstrip().startswith(_INJECTED)

    def model_output(
        self, n: int, payload: JsonDict, t: int | None, blocks: list[JsonDict]
    ) -> None:
        if self.group is None:
            self.group = _Group(time=t, line=n)
        self.group.blocks += blocks
        extra: JsonDict = {}
        if payload.get("type") == "reasoning" and payload.get("encrypted_content"):
            extra["encrypted"] = True  # opaque: not imported
        call_id = payload.get("call_id")
        if isinstance(call_id, str):
            extra["callId"] = call_id
        self.group.origins.append(self.origin(n, payload, **extra))

    def flush(self) -> None:
        """Close the open response: its assistant message, then the records logged inside it."""
        g = self.group
        if g is None:
            return
        if g.blocks:
            self.last = AssistantItem(
                f"{self.prefix}:{g.line}",
                g.blocks,
                g.origins,
                self.provider,
                self.model,
                g.time,
                g.usage,
            )
            self.out.append(self.last)
        else:  # only encrypted reasoning: nothing readable, provenance only
            self.out += [SkipItem(o, "encrypted reasoning") for o in g.origins]
        self.group = None
        self.out += self.deferred
        self.deferred = []

    def compacted(self, n: int, payload: JsonDict, t: int | None) -> None:
        where = self.where(n)
        summary = get_str(payload, "message", where)
        origin = self.origin(n, payload)
        self.out.append(
            CompactItem(
                compaction_id=f"{self.prefix}:compact:{n}",
                summary_id=f"{self.prefix}:{n}",
                summary_text=summary,
                start=origin,
                summary=origin,
                provider=self.provider,
                model=self.model,
                time=t,
                summary_time=t,
            )
        )

    def title(self) -> tuple[str, JsonDict] | None:
        """The first line of the first prompt that states a task (four words or more; a
        ``show tools`` aside does not name the session), else of the first prompt. Never
        injected context: only what the person typed is a prompt."""
        if not self.prompt_texts:
            return None
        task = next((p for p in self.prompt_texts if len(p.split()) >= 4), self.prompt_texts[0])
        line = next((s.strip() for s in task.splitlines() if s.strip()), "")
        if not line:
            return None
        return cut_title(line), {"kind": "fallback"}


def _content(content: Any, where: str) -> list[JsonDict]:
    """Message content parts: input_text / output_text -> text, input_image -> image."""
    if isinstance(content, str):
        return text_blocks(content)
    if not isinstance(content, list):
        fail(where, "message content must be a list of parts")
    out: list[JsonDict] = []
    for k, part in enumerate(content):
        at = f"{where}, content[{k}]"
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in ("input_text", "output_text", "text"):
            out += text_blocks(get_str(part, "text", at))
        elif kind == "input_image":
            url = opt_str(part, "image_url", at)
            out.append(media_block("image", url, None, part))
        else:
            out.append(verbatim_block(part, at))
    return out


def _output_blocks(kind: str, payload: JsonDict, where: str) -> list[JsonDict]:
    if kind == "reasoning":
        texts = [
            get_str(part, "text", f"{where}, {key}[{k}]")
            for key in ("summary", "content")
            for k, part in enumerate(_list(payload.get(key), key, where))
        ]
        text = "\n\n".join(t for t in texts if t)
        return [{"type": "reasoning", "text": text}] if text else []
    if kind == "function_call":
        args = payload.get("arguments")
        if not isinstance(args, str | dict):
            fail(where, "'arguments' must be a string")
        return [_call(payload, where, json_arguments(args))]
    if kind == "custom_tool_call":  # freeform input (apply_patch's patch text), kept as written
        return [_call(payload, where, get_str(payload, "input", where))]
    if kind == "local_shell_call":
        action = payload.get("action")
        call = {**payload, "name": "local_shell"}
        return [_call(call, where, json_arguments(action if action is not None else {}))]
    # web_search_call: server-side, no call id, no result in the rollout
    kept = {k: v for k, v in payload.items() if k not in ("type", "id")}
    return [{"type": "codex-web-search", **kept}]


def _list(value: Any, key: str, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        fail(where, f"{key!r} must be a list, got {type(value).__name__}")
    return value


def _call(payload: JsonDict, where: str, arguments: str) -> JsonDict:
    call_id = payload.get("call_id")
    if not isinstance(call_id, str) or not call_id:
        fail(where, f"{payload.get('type')} without a call_id", "calls pair with outputs by id")
    return {
        "type": "tool-call",
        "id": call_id,
        "name": get_str(payload, "name", where),
        "arguments": arguments,
    }


def _result(output: Any, where: str) -> tuple[list[JsonDict], bool]:
    """A tool output as the model saw it, and whether it reports a failure: a
    ``success: false``, a non-zero ``exit_code`` (0.77's JSON envelope) or a non-zero
    ``Process exited with code N`` (0.125's PTY header)."""
    if isinstance(output, dict):  # {content, success}
        content = output.get("content")
        blocks = _result(content, where)[0] if content is not None else []
        return blocks, output.get("success") is False
    if isinstance(output, list):
        return _content(output, where), False
    if not isinstance(output, str):
        fail(where, "'output' must be a string, a list of parts or an object")
    return text_blocks(output), _failed(output)


def _failed(text: str) -> bool:
    if text.startswith("{"):
        try:
            doc = json.loads(text)
        except ValueError:
            doc = None
        meta = doc.get("metadata") if isinstance(doc, dict) else None
        code = meta.get("exit_code") if isinstance(meta, dict) else None
        if type(code) is int:
            return code != 0
    head = text.split("\nOutput:\n", 1)[0]
    m = _EXIT.search(head)
    return m is not None and int(m.group(1)) != 0


def _usage(usage: Any) -> JsonDict | None:
    """OpenAI usage (input includes the cached part) as DSH's disjoint buckets."""
    if not isinstance(usage, dict):
        return None
    inp, out = usage.get("input_tokens"), usage.get("output_tokens")
    if type(inp) is not int or type(out) is not int:
        return None
    cached = usage.get("cached_input_tokens")
    cached = cached if type(cached) is int and 0 <= cached <= inp else 0
    result: JsonDict = {"inputTokens": inp - cached, "outputTokens": out}
    if cached:
        result["cacheReadTokens"] = cached
    return result
