"""The model seam: one OpenAI-compatible client, and what engines need to use it safely.

Engines never need a model. They take ``llm: ModelProtocol | None = None`` and ask it
through ``ctxsdk.model`` (``ask_text``, ``ask_json``, ``with_fallback``), so every failure
(the *degradation ladder*, see ``LADDER``) leads to their deterministic path with the reason
recorded. ``ModelProtocol``, ``Outcome`` and ``with_fallback`` (``ctxsdk.model``'s) can
still be imported from here:

    from ctxsdk.llm import LLM, with_fallback

    llm = LLM.from_env()                       # None when no route is configured
    out = with_fallback(
        llm,
        lambda m: m.structured(prompt, Slots, max_tokens=4000),
        lambda: heuristic_slots(branches),
    )
    out.value, out.reason                      # reason: None, or e.g. "provider returned 500"

Every call of ``LLM`` (``chat``, ``structured``, ``stream`` and the async ``achat``,
``astructured``, ``astream``) turns its keyword arguments into one frozen ``CallOptions``,
retries by one ``RetryPolicy`` and reports each step to an optional ``tracer=`` hook as a
``TraceEvent``.

Importing this package does not import httpx: ``LLM`` (and its streams) load on first
use, so engines can depend on ``ModelProtocol``, ``Structured`` and
``with_fallback`` without pulling in HTTP code.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# the engines' seam, importable from here as before (ctxsdk.model's own objects)
from ..model import ModelProtocol as ModelProtocol
from ..model import Outcome as Outcome
from ..model import with_fallback as with_fallback
from ..session import TRUNCATION_MARKER, extract_json, truncate_keep_tail
from ._base import (
    LADDER,
    NO_ROUTE,
    ChatResult,
    DegradedKind,
    Delta,
    Messages,
    Structured,
    ToolCall,
    Usage,
    parse_structured,
)
from ._embeddings import RemoteEmbedder
from ._options import CallOptions, ChatKwargs, ReasoningEffort, StreamKwargs, StructuredKwargs
from ._retry import RetryPolicy
from ._trace import TraceEvent, TraceKind, Tracer

if TYPE_CHECKING:
    from ._client import (
        DEEPSEEK_BASE_URL,
        DEEPSEEK_DEFAULT_MODEL,
        LLM,
        AsyncChatStream,
        ChatStream,
    )

    def _satisfies_the_seam(llm: LLM) -> ModelProtocol:
        return llm  # mypy checks that LLM is a model every engine can take


__all__ = [
    "DEEPSEEK_BASE_URL",
    "DEEPSEEK_DEFAULT_MODEL",
    "LADDER",
    "LLM",
    "NO_ROUTE",
    "TRUNCATION_MARKER",
    "AsyncChatStream",
    "CallOptions",
    "ChatKwargs",
    "ChatResult",
    "ChatStream",
    "DegradedKind",
    "Delta",
    "Messages",
    "ReasoningEffort",
    "RemoteEmbedder",
    "RetryPolicy",
    "StreamKwargs",
    "Structured",
    "StructuredKwargs",
    "ToolCall",
    "TraceEvent",
    "TraceKind",
    "Tracer",
    "Usage",
    "extract_json",
    "parse_structured",
    "truncate_keep_tail",
]

_LAZY = frozenset(
    {"LLM", "ChatStream", "AsyncChatStream", "DEEPSEEK_BASE_URL", "DEEPSEEK_DEFAULT_MODEL"}
)

for _name in __all__:
    _obj = globals().get(_name)
    if getattr(_obj, "__module__", None) == "ctxsdk.model":
        continue  # the engines' seam, re-exported: its home is the public ctxsdk.model
    if isinstance(_obj, type) or (callable(_obj) and hasattr(_obj, "__code__")):
        _obj.__module__ = __name__  # shown as ctxsdk.llm.X, not its private module
del _name, _obj


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'ctxsdk.llm' has no attribute {name!r}")
    value = getattr(importlib.import_module("ctxsdk.llm._client"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
