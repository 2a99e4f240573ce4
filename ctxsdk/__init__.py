"""ctxsdk: see and shape what an LLM agent's model receives.

The public names load lazily so ``import ctxsdk`` stays fast; heavy dependencies (polars,
tokenizers, widgets) are imported only by the objects that use them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import errors

__version__ = "0.1.0"

__all__ = [
    "LLM",
    "Event",
    "Message",
    "Session",
    "SessionHeader",
    "Surface",
    "SurfaceNode",
    "TokenUsage",
    "ToolRegistry",
    "Turn",
    "Workspace",
    "__version__",
    "errors",
    "run_agent",
]

_LAZY = {
    "Event": "ctxsdk.session.models",
    "Message": "ctxsdk.session.models",
    "SessionHeader": "ctxsdk.session.models",
    "TokenUsage": "ctxsdk.session.models",
    "Session": "ctxsdk.session.session",
    "Surface": "ctxsdk.session.session",
    "SurfaceNode": "ctxsdk.session.session",
    "Turn": "ctxsdk.session.session",
    "Workspace": "ctxsdk.session.workspace",
    "LLM": "ctxsdk.llm",
    "ToolRegistry": "ctxsdk.tools",
    "run_agent": "ctxsdk.agent",
}

if TYPE_CHECKING:
    from .agent import run_agent
    from .llm import LLM
    from .session.models import Event, Message, SessionHeader, TokenUsage
    from .session.session import Session, Surface, SurfaceNode, Turn
    from .session.workspace import Workspace
    from .tools import ToolRegistry


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ctxsdk' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
