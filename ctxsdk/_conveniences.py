"""The conveniences the top of the package lends the base and the engines (``ctxsdk._hooks``):
``Session.assemble()``, ``Session.fold()`` and every result's ``.widget()``.

Imported by ``ctxsdk/__init__.py``, so they are lent whenever any part of the package is.
Each function imports its layer on first call (``import ctxsdk`` stays fast); the import
graph records those function-level imports, so the upward edges show here, at the top, and
nowhere below.
"""

from __future__ import annotations

from typing import Any

from ._hooks import lend
from .errors import UnknownName

__all__: list[str] = []

# The widget each result's ``.widget()`` names, and the class in ``ctxsdk.widgets`` it opens.
_WIDGETS = ("belief_slots", "checkpoint_graph", "context_tree", "memory_graph")


def _assembly(session: Any, /, **options: Any) -> Any:
    from .assemble import Assembly

    return Assembly(session, **options)


def _fold(session: Any, /, **options: Any) -> Any:
    from .fold import Fold

    return Fold(session, **options)


def _widget(name: str, target: Any, /, **options: Any) -> Any:
    if name not in _WIDGETS:  # before the widget library loads
        known = ", ".join(_WIDGETS)
        raise UnknownName(f"no widget named {name!r}; the widgets are: {known}")
    from . import widgets

    kinds: dict[str, Any] = {
        "belief_slots": widgets.BeliefSlots,
        "checkpoint_graph": widgets.CheckpointGraph,
        "context_tree": widgets.ContextTree,
        "memory_graph": widgets.MemoryGraph,
    }
    return kinds[name](target, **options)


lend(assembly=_assembly, fold=_fold, widget=_widget)
