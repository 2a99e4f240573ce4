"""The model seam: one OpenAI-compatible client, and what engines need to use it safely.

Engines never need a model. They take ``llm: ModelProtocol | None = None`` and wrap each
model call in ``with_fallback``, so every failure (the *degradation ladder*, see
``LADDER``) leads to their deterministic path with the reason recorded:

    from ctxsdk.llm import LLM, with_fallback

    llm = LLM.from_env()                       # None when no route is configured
    out = with_fallback(
        llm,
        lambda m: m.structured(prompt, Slots, max_tokens=4000),
        lambda: heuristic_slots(branches),
    )
    out.value, out.reason                      # reason: None, or e.g. "provider returned 500"

Importing this package does not import httpx: ``LLM`` (and its streams) load on first
use, so engines can depend on ``ModelProtocol``, ``Structured`` and
``with_fallback`` without pulling in HTTP code.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._base import (
    LADDER,
    NO_ROUTE,
    TRUNCATION_MARKER,
    ChatResult,
    DegradedKind,
    Delta,
    Messages,
    ModelProtocol,
    Outcome,
    ReasoningEffort,
    Structured,
    ToolCall,
    Usage,
    extract_json,
    parse_structured,
    truncate_keep_tail,
    with_fallback,
)

if TYPE_CHECKING:
    from ._client import (
        DEEPSEEK_BASE_URL,
        DEEPSEEK_DEFAULT_MODEL,
        LLM,
        AsyncChatStream,
        ChatStream,
    )

__all__ = [
    "DEEPSEEK_BASE_URL",
    "DEEPSEEK_DEFAULT_MODEL",
    "LADDER",
    "LLM",
    "NO_ROUTE",
    "TRUNCATION_MARKER",
    "AsyncChatStream",
    "ChatResult",
    "ChatStream",
    "DegradedKind",
    "Delta",
    "Messages",
    "ModelProtocol",
    "Outcome",
    "ReasoningEffort",
    "Structured",
    "ToolCall",
    "Usage",
    "extract_json",
    "parse_structured",
    "truncate_keep_tail",
    "with_fallback",
]

_LAZY = frozenset(
    {"LLM", "ChatStream", "AsyncChatStream", "DEEPSEEK_BASE_URL", "DEEPSEEK_DEFAULT_MODEL"}
)


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'ctxsdk.llm' has no attribute {name!r}")
    value = getattr(importlib.import_module("ctxsdk.llm._client"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
