"""The items importers read their formats into; ``build_session`` writes them
as DSH events. Each item carries its ``Origin``, the source record it came from."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._common import JsonDict, fail

__all__ = [
    "DEFAULT_CREATED_AT",
    "AssistantItem",
    "CompactItem",
    "EditItem",
    "Item",
    "Origin",
    "ResultItem",
    "SkipItem",
    "SystemItem",
    "UserItem",
    "chat_messages",
    "run_end",
    "stable_id",
]

DEFAULT_CREATED_AT = 1_700_000_000_000  # 2023-11-14T22:13:20Z: the clock of sources without times
_ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://ctxsdk.dev/importers")


def stable_id(*parts: object) -> str:
    """A deterministic UUID for a session built from ``parts`` (the same input, the same id).

    ``uuid.uuid5`` of the joined parts, with a lone surrogate (which a ``str`` from ``json``
    may hold) hashed as its own code unit instead of failing to encode as UTF-8."""
    name = "\x1f".join(str(p) for p in parts).encode("utf-8", "surrogatepass")
    digest = hashlib.sha1(_ID_NAMESPACE.bytes + name, usedforsecurity=False).digest()
    return str(uuid.UUID(bytes=digest[:16], version=5))


@dataclass(frozen=True)
class Origin:
    """The source record an item came from. ``where`` is how an error names it
    (``file, line 12``); ``extra`` goes into the provenance event (line numbers, dia_id ...)."""

    record: str | int | None
    where: str
    extra: Mapping[str, Any] = field(default_factory=dict)


def chat_messages(
    messages: Sequence[Any], label: str, prefix: str
) -> Iterator[tuple[JsonDict, Origin, str]]:
    """Each message of a chat list as (message, origin, id ``<prefix>:<index>``); a message
    that is not an object is refused with its position."""
    for i, raw in enumerate(messages):
        where = f"{label}, message {i}"
        if not isinstance(raw, dict):
            fail(where, "a message must be an object")
        yield raw, Origin(i, where), f"{prefix}:{i}"


@dataclass
class SystemItem:
    id: str
    blocks: list[JsonDict]
    origin: Origin | None
    time: int | None = None


@dataclass
class UserItem:
    id: str
    blocks: list[JsonDict]
    source: JsonDict
    origin: Origin
    time: int | None = None
    prompt: bool = True  # False: an observation or notice that never opens a new turn


@dataclass
class AssistantItem:
    id: str
    blocks: list[JsonDict]
    origins: list[Origin]
    provider: str
    model: str
    time: int | None = None
    usage: JsonDict | None = None
    finish: str | None = None  # stop | tool-calls | max-tokens; None: from the blocks


@dataclass
class ResultItem:
    id: str
    call_id: str
    blocks: list[JsonDict]
    origin: Origin
    time: int | None = None
    is_error: bool = False


@dataclass
class CompactItem:
    """A compaction the source agent ran: the whole current surface after the system head
    is replaced by a checkpoint framed as the harness frames it (spec §10)."""

    compaction_id: str
    summary_id: str
    summary_text: str
    start: Origin
    summary: Origin
    provider: str
    model: str
    time: int | None = None
    summary_time: int | None = None


@dataclass
class EditItem:
    """The source agent showed an earlier message to the model in a new form (SWE-agent's
    elided observations): a content-only ``tool/result`` rewrite, or a 1:1 ``user/message``
    replacement, of the message with id ``target``."""

    target: str
    blocks: list[JsonDict]
    origin: Origin
    new_id: str
    time: int | None = None


@dataclass
class SkipItem:
    """A source record that carries no message (a snapshot, a hook notice, another branch):
    logged as provenance only, so every record of the source is accounted for."""

    origin: Origin
    reason: str
    time: int | None = None


Item = SystemItem | UserItem | AssistantItem | ResultItem | CompactItem | EditItem | SkipItem


def run_end(
    info: Any, keys: Sequence[str], name: str, **more: Any
) -> tuple[list[Item], JsonDict | None]:
    """An agent trajectory's ``info`` object (its ``keys`` that are there, then ``more``) as
    provenance logged after the end, and the session's final reason: ``completed`` when it
    has an exit status, for the agent ended the run itself and no reply is owed. Without an
    ``info`` object: nothing, and no final reason."""
    if not isinstance(info, dict):
        return [], None
    kept = {k: info[k] for k in keys if k in info} | more
    trailing: list[Item] = [
        SkipItem(Origin("info", f"{name}, info", {"info": kept}), "run metadata")
    ]
    ended = isinstance(info.get("exit_status"), str)
    return trailing, ({"kind": "completed"} if ended else None)
