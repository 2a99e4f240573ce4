"""Small readers of the raw JSON shapes of a log (events the replay validated, messages it did
not): anything malformed reads as nothing (an empty list, ``None``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

Block = Mapping[str, Any]


def str_or_none(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def int_or_none(v: Any) -> int | None:
    return v if type(v) is int else None


def blocks(msg: Mapping[str, Any] | None) -> list[Block]:
    """The content blocks of a message (or of a tool-result block) that are objects."""
    content = msg.get("content") if msg is not None else None
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, Mapping)]


def of_type(blocks: Sequence[Block], kind: str) -> list[Block]:
    """The blocks of one ``type`` (``tool-call``, ``reasoning``, ...), in order."""
    return [b for b in blocks if b.get("type") == kind]


def strings(blocks: Iterable[Block], key: str) -> list[str]:
    """``b[key]`` of each block where it is a string."""
    return [v for v in (b.get(key) for b in blocks) if isinstance(v, str)]


def tool_result(blocks: Sequence[Block]) -> Block | None:
    """The first tool-result block, or None."""
    for b in blocks:
        if b.get("type") == "tool-result":
            return b
    return None


def field_of(objs: Iterable[Mapping[str, Any] | None], key: str) -> list[str | None]:
    """``obj[key]`` of each object where it is a string, else None."""
    return [str_or_none(o.get(key)) if o is not None else None for o in objs]
