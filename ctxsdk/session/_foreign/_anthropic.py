"""Anthropic Messages -> items: the ``system`` parameter, ``user``/``assistant`` messages with
content blocks (text, image, document, thinking, tool_use, tool_result with ``is_error``).

The same block reader serves Claude Code transcripts, whose records wrap Anthropic messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._common import (
    JsonDict,
    content_blocks,
    fail,
    get_str,
    json_arguments,
    media_block,
    text_blocks,
    verbatim_block,
)
from ._items import AssistantItem, Item, Origin, ResultItem, SystemItem, UserItem, chat_messages

__all__ = [
    "FINISH",
    "PROVIDER",
    "anthropic_items",
    "anthropic_tool",
    "assistant_blocks",
    "system_blocks",
    "usage_of",
    "user_blocks",
    "user_items",
]

PROVIDER = "anthropic"
FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool-calls",
    "max_tokens": "max-tokens",
}


def anthropic_items(messages: Sequence[Any], *, label: str, model: str) -> list[Item]:
    """Items for Anthropic messages (ids ``anthropic:<index>``; a user message holding
    several tool results gives ``anthropic:<index>``, ``anthropic:<index>#1`` ...)."""
    items: list[Item] = []
    for raw, origin, mid in chat_messages(messages, label, "anthropic"):
        where = origin.where
        role = raw.get("role")
        if role == "user":
            items += user_items(raw.get("content"), mid, origin, {"kind": "user"})
        elif role == "assistant":
            blocks = assistant_blocks(raw.get("content"), where)
            m = raw.get("model")
            items.append(
                AssistantItem(
                    mid,
                    blocks,
                    [origin],
                    PROVIDER,
                    m if isinstance(m, str) and m else model,
                    usage=usage_of(raw.get("usage")),
                    finish=FINISH.get(str(raw.get("stop_reason"))),
                )
            )
        elif role == "system":  # not an API role, but exports often keep it as a message
            items.append(SystemItem(mid, system_blocks(raw.get("content"), where), origin))
        else:
            fail(where, f"unknown role {role!r}", "Anthropic messages are user or assistant")
    return items


def user_items(
    content: Any, mid: str, origin: Origin, source: JsonDict, *, time: int | None = None
) -> list[Item]:
    """A user message's tool results (in their order), then its other blocks as one user
    message. Results come first because they answer the previous step; text sent with them
    stays in the same turn (it is not a new prompt)."""
    results, others = user_blocks(content, origin.where)
    items: list[Item] = []
    for k, (call_id, blocks, is_error) in enumerate(results):
        rid = mid if k == 0 else f"{mid}#{k}"
        items.append(ResultItem(rid, call_id, blocks, origin, time=time, is_error=is_error))
    if others or not results:
        uid = mid if not results else f"{mid}#{len(results)}"
        items.append(UserItem(uid, others, source, origin, time=time, prompt=not results))
    return items


def user_blocks(
    content: Any, where: str
) -> tuple[list[tuple[str, list[JsonDict], bool]], list[JsonDict]]:
    """(tool results as (call id, blocks, is_error), other blocks) of a user message."""
    if isinstance(content, str):
        return [], text_blocks(content)
    if not isinstance(content, list):
        fail(where, "content must be a string or a list of blocks")
    results: list[tuple[str, list[JsonDict], bool]] = []
    others: list[JsonDict] = []
    for k, block in enumerate(content):
        at = f"{where}, content[{k}]"
        if isinstance(block, dict) and block.get("type") == "tool_result":
            is_error = block.get("is_error")
            if is_error is not None and not isinstance(is_error, bool):
                fail(at, "tool_result.is_error must be a boolean")
            inner = block.get("content")
            blocks = [] if inner is None else _plain_blocks(inner, at)
            results.append((get_str(block, "tool_use_id", at), blocks, bool(is_error)))
        else:
            others += _plain_blocks([block], at)
    return results, others


def _plain_blocks(content: Any, where: str) -> list[JsonDict]:
    """Text, image and document blocks (or a plain string) as DSH blocks."""
    if isinstance(content, str):
        return text_blocks(content)
    if not isinstance(content, list):
        fail(where, "content must be a string or a list of blocks")
    out: list[JsonDict] = []
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            out += text_blocks(get_str(block, "text", where))
        elif kind in ("image", "document"):
            src = block.get("source")
            src = src if isinstance(src, dict) else {}
            url = src.get("url") if isinstance(src.get("url"), str) else None
            media = src.get("media_type") if isinstance(src.get("media_type"), str) else None
            out.append(media_block("image" if kind == "image" else "file", url, media, block))
        else:
            out.append(verbatim_block(block, where))
    return out


def assistant_blocks(content: Any, where: str) -> list[JsonDict]:
    """text -> text, thinking -> reasoning (its signature is not kept), tool_use -> tool-call
    (``input`` written as compact JSON); other blocks verbatim."""
    return content_blocks(content, where, _assistant_part)


def _assistant_part(kind: Any, block: Any, at: str) -> list[JsonDict]:
    if kind == "thinking":
        thinking = get_str(block, "thinking", at)
        return [{"type": "reasoning", "text": thinking}] if thinking else []
    if kind == "tool_use":
        if not isinstance(block.get("input", {}), dict | list | str):
            fail(at, "tool_use.input must be an object")
        return [
            {
                "type": "tool-call",
                "id": get_str(block, "id", at),
                "name": get_str(block, "name", at),
                "arguments": json_arguments(block.get("input", {})),
            }
        ]
    return [verbatim_block(block, at)]


def system_blocks(system: Any, where: str) -> list[JsonDict]:
    """The ``system`` parameter: a string or a list of text blocks (kept block by block)."""
    if isinstance(system, str):
        return text_blocks(system)
    if not isinstance(system, list):
        fail(where, "system must be a string or a list of text blocks")
    out: list[JsonDict] = []
    for k, block in enumerate(system):
        if not isinstance(block, dict) or block.get("type") != "text":
            fail(f"{where}[{k}]", "system blocks must be text blocks")
        out += text_blocks(get_str(block, "text", f"{where}[{k}]"))
    return out


def usage_of(usage: Any) -> JsonDict | None:
    """Anthropic usage as DSH ``TokenUsage`` (disjoint buckets, as both count them)."""
    if not isinstance(usage, dict):
        return None
    keys = (
        ("inputTokens", "input_tokens"),
        ("outputTokens", "output_tokens"),
        ("cacheReadTokens", "cache_read_input_tokens"),
        ("cacheWriteTokens", "cache_creation_input_tokens"),
    )
    out = {k: usage[src] for k, src in keys if type(usage.get(src)) is int}
    return out if "inputTokens" in out and "outputTokens" in out else None


def anthropic_tool(tool: Any, where: str) -> JsonDict:
    """``{name, description, input_schema}`` as a DSH tool."""
    out: JsonDict = {"name": get_str(tool, "name", where)}
    if isinstance(tool.get("description"), str):
        out["description"] = tool["description"]
    out["parameters"] = tool.get("input_schema") or {"type": "object"}
    return out
