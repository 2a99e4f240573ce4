"""Where each public name lives, and the ``__module__`` it shows.

Implementation modules are private (``_name.py``); each public namespace (``ctxsdk``,
``ctxsdk.session``, ``ctxsdk.assemble``, ``ctxsdk.fold``, ``ctxsdk.merge``, ``ctxsdk.llm``,
``ctxsdk.tools``, ``ctxsdk.testing``, ``ctxsdk.bench``, ``ctxsdk.widgets``) re-exports its names
and calls ``publish`` so that reprs, tracebacks and the API docs name ``ctxsdk.Session``, not
a private module path.
"""

from __future__ import annotations

import importlib
import inspect
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["FORMER_TOP_LEVEL", "KERNELS", "NAMESPACES", "TOP_LEVEL", "moved_names", "publish"]

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

# Each package's second face: what the engines and the layers above build on, documented on
# the kernel reference page and snapshot-tested apart (tests/snapshots/kernel_api.json). A
# user's code needs none of it; an engine of one's own may.
KERNELS: tuple[str, ...] = (
    "ctxsdk.session.kernel",
    "ctxsdk.assemble.kernel",
    "ctxsdk.fold.kernel",
    "ctxsdk.merge.kernel",
    "ctxsdk.memory.kernel",
    "ctxsdk.widgets.kernel",
)

# The names ``ctxsdk`` itself exports, and the namespace that defines each.
TOP_LEVEL: Mapping[str, str] = {
    # the base
    "Event": "ctxsdk.session",
    "Message": "ctxsdk.session",
    "Session": "ctxsdk.session",
    "Surface": "ctxsdk.session",
    "Turn": "ctxsdk.session",
    "Fact": "ctxsdk.session",
    "Facts": "ctxsdk.session",
    "Workspace": "ctxsdk.session",
    "SessionTree": "ctxsdk.session",
    # Assembly and what its methods return
    "Assembly": "ctxsdk.assemble",
    "DigestConfig": "ctxsdk.assemble",
    "Preview": "ctxsdk.assemble",
    "Rule": "ctxsdk.assemble",
    # Fold and what its methods return
    "Fold": "ctxsdk.fold",
    "FoldState": "ctxsdk.fold",
    "Recall": "ctxsdk.fold",
    # Merge and what its methods return
    "Merge": "ctxsdk.merge",
    "MergeResult": "ctxsdk.merge",
    # Memory and what its methods return
    "Memory": "ctxsdk.memory",
    # the model seam and the agent loop
    "LLM": "ctxsdk.llm",
    "ToolRegistry": "ctxsdk.tools",
    "run_agent": "ctxsdk",
}

# Names ``ctxsdk`` exported before its face was cut to the main objects: still importable
# from ``ctxsdk`` with a DeprecationWarning, and always from the namespace named here.
FORMER_TOP_LEVEL: Mapping[str, str] = {
    "ChatResult": "ctxsdk.llm",
    "DraftStore": "ctxsdk.assemble",
    "FitResult": "ctxsdk.assemble",
    "FoldPolicy": "ctxsdk.fold",
    "FoldResult": "ctxsdk.fold",
    "FoldStatus": "ctxsdk.fold",
    "LineageNode": "ctxsdk.session",
    "LogView": "ctxsdk.session",
    "MergeSources": "ctxsdk.merge",
    "NodeTokens": "ctxsdk.session",
    "PlanOp": "ctxsdk.assemble",
    "Recovery": "ctxsdk.session",
    "Row": "ctxsdk.assemble",
    "SearchResult": "ctxsdk.fold",
    "SessionHeader": "ctxsdk.session",
    "SurfaceNode": "ctxsdk.session",
    "TokenTable": "ctxsdk.session",
    "TokenUsage": "ctxsdk.session",
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


def moved_names(
    namespace: str, moved: Mapping[str, str], *, stacklevel: int = 2
) -> Callable[[str], Any]:
    """A module ``__getattr__`` for names ``namespace`` exported before its user face was
    cut: each still resolves (from its kernel namespace or its private module, ``moved``
    says which) with a DeprecationWarning that says where it lives now. ``stacklevel`` 3 when
    a namespace's own ``__getattr__`` calls it, so the warning names the user's line."""

    def __getattr__(name: str) -> Any:
        where = moved.get(name)
        if where is None and name == "kernel":  # ``cx.merge.kernel`` without importing it first
            return importlib.import_module(f"{namespace}.kernel")
        if where is None:
            raise AttributeError(f"module {namespace!r} has no attribute {name!r}")
        if where.rsplit(".", 1)[-1].startswith("_"):
            hint = "it is internal now and will be removed from this namespace"
        else:
            hint = f"import it from {where}"
        warnings.warn(
            f"{namespace}.{name} is no longer exported by {namespace}: {hint}",
            DeprecationWarning,
            stacklevel=stacklevel,
        )
        return getattr(importlib.import_module(where), name)

    return __getattr__
