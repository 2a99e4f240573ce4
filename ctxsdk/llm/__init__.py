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

from .._public import moved_names

# the engines' seam, importable from here as before (ctxsdk.model's own objects)
from ..model import ModelProtocol as ModelProtocol
from ..model import Outcome as Outcome
from ..model import with_fallback as with_fallback
from ._base import (
    LADDER,
    NO_ROUTE,
    ChatResult,
    Delta,
    Structured,
    ToolCall,
    Usage,
)
from ._embeddings import RemoteEmbedder
from ._options import CallOptions, ReasoningEffort
from ._retry import RetryPolicy
from ._trace import TraceEvent, Tracer

if TYPE_CHECKING:
    from ._client import LLM, AsyncChatStream, ChatStream

    def _satisfies_the_seam(llm: LLM) -> ModelProtocol:
        return llm  # mypy checks that LLM is a model every engine can take


__all__ = [
    "LADDER",
    "LLM",
    "NO_ROUTE",
    "AsyncChatStream",
    "CallOptions",
    "ChatResult",
    "ChatStream",
    "Delta",
    "ReasoningEffort",
    "RemoteEmbedder",
    "RetryPolicy",
    "Structured",
    "ToolCall",
    "TraceEvent",
    "Tracer",
    "Usage",
]

_LAZY = frozenset({"LLM", "ChatStream", "AsyncChatStream"})

# Names this namespace exported before its user face was cut: still importable, with a
# DeprecationWarning that says where they live now (for one release).
_moved = moved_names(
    __name__,
    {
        "ChatKwargs": "ctxsdk.llm._options",
        "DEEPSEEK_BASE_URL": "ctxsdk.llm._client",
        "DEEPSEEK_DEFAULT_MODEL": "ctxsdk.llm._client",
        "DegradedKind": "ctxsdk.llm._base",
        "Messages": "ctxsdk.llm._base",
        "StreamKwargs": "ctxsdk.llm._options",
        "StructuredKwargs": "ctxsdk.llm._options",
        "TRUNCATION_MARKER": "ctxsdk.session.kernel",
        "TraceKind": "ctxsdk.llm._trace",
        "extract_json": "ctxsdk.session.kernel",
        "parse_structured": "ctxsdk.llm._base",
        "truncate_keep_tail": "ctxsdk.session.kernel",
    },
    stacklevel=3,
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
        return _moved(name)
    value = getattr(importlib.import_module("ctxsdk.llm._client"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
