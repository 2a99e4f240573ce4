"""The engines and widgets the lower layers' conveniences reach (``s.assemble()``,
``a.widget()``), by name.

``session`` is the base layer and imports no engine, not even lazily: ``Session.assemble``
asks this table for the engine's class, and the table imports it on first use. An engine is
otherwise built from a session directly: ``cx.Assembly(s)``. Likewise the widgets sit above
every engine: ``Assembly.widget()`` asks ``ctxsdk.session.widget`` for one by name, which
asks this table; a widget is otherwise built directly: ``ContextTree(a)``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import UnknownName

if TYPE_CHECKING:  # the engines' types, for the conveniences' signatures
    from .assemble import Assembly as Assembly
    from .fold import Fold as Fold
    from .session import Session

__all__ = ["assembly", "engine", "fold", "widget"]

# name -> (module, class); the modules sit above the base, so only this table names them.
_ENGINES: dict[str, tuple[str, str]] = {
    "assemble": ("ctxsdk.assemble", "Assembly"),
    "fold": ("ctxsdk.fold", "Fold"),
}


# name -> (module, class) of the widgets a result's .widget() opens.
_WIDGETS: dict[str, tuple[str, str]] = {
    "context_tree": ("ctxsdk.widgets", "ContextTree"),
    "checkpoint_graph": ("ctxsdk.widgets", "CheckpointGraph"),
    "belief_slots": ("ctxsdk.widgets", "BeliefSlots"),
    "memory_graph": ("ctxsdk.widgets", "MemoryGraph"),
}


def widget(name: str, target: Any, **options: Any) -> Any:
    """The widget registered as ``name`` over ``target`` (its module imported on first use)."""
    try:
        module, attr = _WIDGETS[name]
    except KeyError:
        known = ", ".join(sorted(_WIDGETS))
        raise UnknownName(f"no widget named {name!r}; the widgets are: {known}") from None
    return getattr(importlib.import_module(module), attr)(target, **options)


def engine(name: str) -> Any:
    """The engine class registered as ``name`` (imported on first use)."""
    try:
        module, attr = _ENGINES[name]
    except KeyError:
        known = ", ".join(sorted(_ENGINES))
        raise UnknownName(f"no engine named {name!r}; the engines are: {known}") from None
    return getattr(importlib.import_module(module), attr)


def assembly(session: Session, **options: Any) -> Assembly:
    """``Assembly(session, **options)``, for ``Session.assemble``."""
    built: Assembly = engine("assemble")(session, **options)
    return built


def fold(session: Session, **options: Any) -> Fold:
    """``Fold(session, **options)``, for ``Session.fold``."""
    built: Fold = engine("fold")(session, **options)
    return built
