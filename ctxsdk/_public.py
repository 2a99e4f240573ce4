"""Where each public name lives, and the ``__module__`` it shows.

Implementation modules are private (``_name.py``); each public namespace (``ctxsdk``,
``ctxsdk.session``, ``ctxsdk.assemble``, ``ctxsdk.fold``, ``ctxsdk.merge``, ``ctxsdk.llm``,
``ctxsdk.tools``, ``ctxsdk.testing``, ``ctxsdk.bench``, ``ctxsdk.widgets``) re-exports its names
and calls ``publish`` so that reprs, tracebacks and the API docs name ``ctxsdk.Session``, not
a private module path.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["NAMESPACES", "TOP_LEVEL", "publish"]

# Every public namespace, in the order the API reference shows them. Their ``__all__`` are
# snapshot-tested (tests/snapshots/public_api.json) and the reference is generated from them.
NAMESPACES: tuple[str, ...] = (
    "ctxsdk",
    "ctxsdk.session",
    "ctxsdk.session.importers",
    "ctxsdk.assemble",
    "ctxsdk.fold",
    "ctxsdk.merge",
    "ctxsdk.memory",
    "ctxsdk.model",
    "ctxsdk.llm",
    "ctxsdk.tools",
    "ctxsdk.testing",
    "ctxsdk.bench",
    "ctxsdk.widgets",
    "ctxsdk.samples",
    "ctxsdk.errors",
)

# The names ``ctxsdk`` itself exports, and the namespace that defines each.
TOP_LEVEL: Mapping[str, str] = {
    # the base
    "Event": "ctxsdk.session",
    "LogView": "ctxsdk.session",
    "Message": "ctxsdk.session",
    "NodeTokens": "ctxsdk.session",
    "Recovery": "ctxsdk.session",
    "Session": "ctxsdk.session",
    "SessionHeader": "ctxsdk.session",
    "Surface": "ctxsdk.session",
    "SurfaceNode": "ctxsdk.session",
    "TokenTable": "ctxsdk.session",
    "TokenUsage": "ctxsdk.session",
    "Turn": "ctxsdk.session",
    "Fact": "ctxsdk.session",
    "Facts": "ctxsdk.session",
    "Workspace": "ctxsdk.session",
    "SessionTree": "ctxsdk.session",
    "LineageNode": "ctxsdk.session",
    # Assembly and what its methods return
    "Assembly": "ctxsdk.assemble",
    "DigestConfig": "ctxsdk.assemble",
    "DraftStore": "ctxsdk.assemble",
    "FitResult": "ctxsdk.assemble",
    "PlanOp": "ctxsdk.assemble",
    "Preview": "ctxsdk.assemble",
    "Row": "ctxsdk.assemble",
    "Rule": "ctxsdk.assemble",
    # Fold and what its methods return
    "Fold": "ctxsdk.fold",
    "FoldPolicy": "ctxsdk.fold",
    "FoldResult": "ctxsdk.fold",
    "FoldState": "ctxsdk.fold",
    "FoldStatus": "ctxsdk.fold",
    "Recall": "ctxsdk.fold",
    "SearchResult": "ctxsdk.fold",
    # Merge and what its methods return
    "Merge": "ctxsdk.merge",
    "MergeResult": "ctxsdk.merge",
    "MergeSources": "ctxsdk.merge",
    # Memory and what its methods return
    "Memory": "ctxsdk.memory",
    # the model seam and the agent loop
    "LLM": "ctxsdk.llm",
    "ChatResult": "ctxsdk.llm",
    "ToolRegistry": "ctxsdk.tools",
    "run_agent": "ctxsdk",
}


def publish(namespace: str, scope: Mapping[str, Any], names: Iterable[str]) -> None:
    """Set ``__module__`` of the classes in ``names`` that a private module of the project
    defines: ``ctxsdk`` for top-level names, else ``namespace``. Functions keep theirs (their
    repr names no module, and doctest finds a function's examples by its module)."""
    for name in names:
        obj = scope.get(name)
        if not inspect.isclass(obj):
            continue
        module = getattr(obj, "__module__", "") or ""
        if not module.startswith("ctxsdk.") or "._" not in module + ".":
            continue  # defined outside the project, or already in a public module
        obj.__module__ = "ctxsdk" if TOP_LEVEL.get(name) == namespace else namespace
