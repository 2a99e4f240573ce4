"""``from_messages``: an OpenAI or Anthropic chat history as a DSH session."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from ._anthropic import anthropic_items, anthropic_tool, system_blocks
from ._common import (
    MAX_IMPORT_BYTES,
    JsonDict,
    fail,
    load_json_line,
    parse_json,
    read_source,
    well_formed,
)
from ._emit import ImportedLog, build_log
from ._items import DEFAULT_CREATED_AT, Item, SystemItem, stable_id
from ._openai import openai_items, openai_tool

__all__ = ["ChatFormat", "load_chat_file", "read_messages"]

ChatFormat = Literal["openai", "anthropic"]
_UNKNOWN_MODEL = "unknown"


def read_messages(
    messages: Sequence[Any],
    format: ChatFormat = "openai",
    *,
    session_id: str | None = None,
    system: str | Sequence[Any] | None = None,
    tools: Sequence[Any] | None = None,
    model: str | None = None,
    created_at: int | None = None,
    source: str | None = None,
) -> ImportedLog:
    """The v3 log ``ctxsdk.session.importers.from_messages`` makes a session of (it documents
    the arguments), built and checked as the harness checks a log on load."""
    if format not in ("openai", "anthropic"):
        fail("read_messages", f"unknown chat format {format!r}", "use 'openai' or 'anthropic'")
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        fail(source or "read_messages", "messages must be a list of message objects")
    label = source or "messages"
    # What a log cannot hold becomes what it can: a lone surrogate U+FFFD, a >64-bit int a float.
    messages, system, tools = (
        [well_formed(m) for m in messages],
        well_formed(system),
        well_formed(tools),
    )
    if model is not None and not isinstance(model, str):
        fail(label, f"model must be a string, got {type(model).__name__}")
    default_model = model or _UNKNOWN_MODEL
    items: list[Item] = []
    if system is not None:
        items.append(
            SystemItem(f"{format}:system", system_blocks(system, f"{label}, system"), None)
        )
    if format == "openai":
        items += openai_items(messages, label=label, model=default_model)
    else:
        items += anthropic_items(messages, label=label, model=default_model)
    defs = [_tool(t, f"{label}, tools[{k}]") for k, t in enumerate(tools or ())]
    sid = session_id or stable_id(format, _fingerprint([system, list(messages), defs]))
    return build_log(
        items,
        fmt=format,
        source=source,
        session_id=sid,
        created_at=DEFAULT_CREATED_AT if created_at is None else created_at,
        tools=defs,
    )


def _tool(tool: Any, where: str) -> JsonDict:
    if isinstance(tool, dict) and "function" in tool:
        return openai_tool(tool, where)
    return anthropic_tool(tool, where)


def _fingerprint(value: Any) -> str:
    # Input order is already deterministic; skipkeys/repr so odd extra fields never raise.
    return json.dumps(value, ensure_ascii=False, skipkeys=True, default=repr)


def load_chat_file(
    format: ChatFormat, path: str | Path, *, max_bytes: int = MAX_IMPORT_BYTES, **options: Any
) -> ImportedLog:
    """A JSON file holding a list of messages, or an object ``{messages, system?, tools?,
    model?}``; ``.jsonl``: one message per line. At most ``max_bytes`` of it are read."""
    p, data = read_source(path, max_bytes)
    name = p.name
    if p.suffix == ".jsonl":
        messages: Any = []
        for n, raw in enumerate(data.split(b"\n"), 1):
            if not raw.strip():
                continue
            messages.append(load_json_line(raw, f"{name}, line {n}"))
        doc: Any = {"messages": messages}
    else:
        doc = parse_json(data, name)
    if isinstance(doc, list):
        doc = {"messages": doc}
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        fail(str(name), "expected a list of messages or an object with a 'messages' list")
    for key in ("system", "tools", "model"):
        if key in doc and key not in options:
            options[key] = doc[key]
    options.setdefault("source", name)
    return read_messages(doc["messages"], format, **options)
