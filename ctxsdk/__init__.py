"""ctxsdk: see and shape what an LLM agent's model receives.

The public names load lazily so ``import ctxsdk`` stays fast; heavy dependencies (polars,
tokenizers, widgets) are imported only by the objects that use them. Each name is defined in
one public namespace (``ctxsdk.session``, ``ctxsdk.assemble``, ``ctxsdk.fold``,
``ctxsdk.merge``, ``ctxsdk.llm``, ``ctxsdk.tools``) and re-exported here;
``ctxsdk._public.TOP_LEVEL`` says which.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# _conveniences lends the base s.assemble(), s.fold() and .widget() (see ctxsdk._hooks).
from . import _conveniences, errors  # noqa: F401
from ._public import FORMER_TOP_LEVEL, TOP_LEVEL, moved_names, publish
from ._version import __version__

__all__ = [
    "LLM",
    "Assembly",
    "DigestConfig",
    "Event",
    "Fact",
    "Facts",
    "Fold",
    "FoldState",
    "Memory",
    "Merge",
    "MergeResult",
    "Message",
    "Preview",
    "Recall",
    "Rule",
    "Session",
    "SessionTree",
    "Surface",
    "ToolRegistry",
    "Turn",
    "Workspace",
    "__version__",
    "errors",
    "run_agent",
]

# Where a name is imported from on first use: its namespace, or the agent loop's module.
_FROM = {name: ("ctxsdk._agent" if ns == "ctxsdk" else ns) for name, ns in TOP_LEVEL.items()}

if TYPE_CHECKING:
    from ._agent import run_agent
    from .assemble import Assembly, DigestConfig, Preview, Rule
    from .fold import Fold, FoldState, Recall
    from .llm import LLM
    from .memory import Memory
    from .merge import Merge, MergeResult
    from .session import (
        Event,
        Fact,
        Facts,
        Message,
        Session,
        SessionTree,
        Surface,
        Turn,
        Workspace,
    )
    from .tools import ToolRegistry


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext ctxsdk``: a Session or Assembly ending a cell opens its ContextTree."""
    from .widgets._ipython import load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext ctxsdk``: back to the static HTML."""
    from .widgets._ipython import unload

    unload(ipython)


# Names cut from the top level: still resolved, with a warning naming their namespace.
_former = moved_names("ctxsdk", FORMER_TOP_LEVEL, stacklevel=3)


def __getattr__(name: str) -> Any:
    module = _FROM.get(name)
    if module is None:
        return _former(name)
    value = getattr(importlib.import_module(module), name)
    if module == "ctxsdk._agent":
        publish("ctxsdk", {name: value}, [name])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
