"""OpenAI chat messages -> items: ``system``/``developer``, ``user``, ``assistant`` with
``tool_calls`` (and DeepSeek's ``reasoning_content``), ``tool`` results by ``tool_call_id``;
content as a string or a list of parts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._common import (
    JsonDict,
    content_blocks,
    fail,
    get_dict,
    get_list,
    get_str,
    media_block,
    opt_str,
    text_blocks,
    verbatim_block,
)
from ._items import AssistantItem, Item, Origin, ResultItem, SystemItem, UserItem, chat_messages

__all__ = ["openai_items", "openai_tool"]

PROVIDER = "openai"


def openai_items(messages: Sequence[Any], *, label: str, model: str) -> list[Item]:
    """One item per message (ids ``openai:<index>``); ``label`` names the input in errors."""
    items: list[Item] = []
    for raw, origin, mid in chat_messages(messages, label, "openai"):
        where = origin.where
        role = raw.get("role")
        if role in ("system", "developer"):
            items.append(SystemItem(mid, _parts(raw.get("content"), where), origin))
        elif role == "user":
            source: JsonDict = {"kind": "user"}
            name = opt_str(raw, "name", where)
            if name is not None:
                source["name"] = name  # a multi-party chat's speaker
            items.append(UserItem(mid, _parts(raw.get("content"), where), source, origin))
        elif role == "assistant":
            items.append(_assistant(raw, mid, origin, model))
        elif role == "tool":
            call_id = get_str(raw, "tool_call_id", where)
            blocks = _parts(raw.get("content"), where)
            items.append(ResultItem(mid, call_id, blocks, origin))
        elif role == "function":
            fail(
                where, "legacy function messages are not supported", "use tool_calls / role 'tool'"
            )
        else:
            fail(where, f"unknown role {role!r}", "use system, developer, user, assistant or tool")
    return items


def _assistant(raw: JsonDict, mid: str, origin: Origin, model: str) -> AssistantItem:
    where = origin.where
    if raw.get("function_call") is not None:
        fail(where, "legacy function_call is not supported", "use tool_calls / role 'tool'")
    blocks: list[JsonDict] = []
    reasoning = opt_str(raw, "reasoning_content", where)
    if reasoning:
        blocks.append({"type": "reasoning", "text": reasoning})
    blocks += _parts(raw.get("content"), where)
    refusal = opt_str(raw, "refusal", where)
    if refusal:
        blocks += text_blocks(refusal)
    calls = raw.get("tool_calls")
    for k, call in enumerate(get_list(raw, "tool_calls", where) if calls is not None else []):
        at = f"{where}, tool_calls[{k}]"
        fn = get_dict(call, "function", at)
        args = fn.get("arguments") if fn else None
        if not isinstance(args, str):
            fail(at, "function.arguments must be the JSON text the model wrote (a string)")
        blocks.append(
            {
                "type": "tool-call",
                "id": get_str(call, "id", at),
                "name": get_str(fn, "name", at),
                "arguments": args,
            }
        )
    return AssistantItem(mid, blocks, [origin], PROVIDER, opt_str(raw, "model", where) or model)


def _parts(content: Any, where: str) -> list[JsonDict]:
    """A string, null or list of parts as DSH blocks; unknown parts are kept verbatim."""
    if content is None:
        return []
    return content_blocks(content, where, _part, "a string, null or a list of parts")


def _part(kind: Any, part: Any, at: str) -> list[JsonDict]:
    if kind == "refusal":
        return text_blocks(get_str(part, "refusal", at))
    if kind == "image_url":
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, dict) else image
        if not isinstance(url, str):
            fail(at, "image_url part needs image_url.url")
        return [media_block("image", url, None, part)]
    return [verbatim_block(part, at)]


def openai_tool(tool: Any, where: str) -> JsonDict:
    """``{"type": "function", "function": {name, description, parameters}}`` as a DSH tool."""
    fn = get_dict(tool, "function", where)
    out: JsonDict = {"name": get_str(fn, "name", where)}
    if isinstance(fn, dict) and isinstance(fn.get("description"), str):
        out["description"] = fn["description"]
    out["parameters"] = (fn or {}).get("parameters") or {"type": "object"}
    return out
