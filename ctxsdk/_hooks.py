"""The conveniences the layers above lend to the base and the engines.

``s.assemble()`` and ``s.fold()`` build an engine over a session; every result's
``.widget()`` builds a widget over it. Both sit above the object the call is made on, and the
base imports nothing above it, not even lazily, not even by name. So the base offers this
extension point instead: one typed slot per convenience, which the package's top level fills
when ``ctxsdk`` is imported (the way a plugin registers a polars namespace). The upward edges
are then where the import graph shows them, at the top.

This module is a leaf: it imports nothing of the project but the error tree, so the base
and the engines may use it, and so may the top without importing the base (``import ctxsdk``
stays fast).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from .errors import CtxError

__all__ = [
    "Conveniences",
    "EngineFactory",
    "WidgetFactory",
    "assembly",
    "fold",
    "lend",
    "lent",
    "restore",
    "widget",
]


class EngineFactory(Protocol):
    """Builds an engine over a session: ``Assembly(session, **options)``."""

    # Any: the engine's class sits above the base, which cannot name it, even for typing.
    def __call__(self, session: Any, /, **options: Any) -> Any: ...


class WidgetFactory(Protocol):
    """Builds the widget named ``name`` (``"context_tree"``) over ``target``; an unknown
    name raises ``ctxsdk.errors.UnknownName``."""

    # Any: the widgets sit above every engine; the base cannot name their classes.
    def __call__(self, name: str, target: Any, /, **options: Any) -> Any: ...


@dataclass(frozen=True)
class Conveniences:
    """What the layers above have lent; ``None`` where nothing has."""

    assembly: EngineFactory | None = None
    fold: EngineFactory | None = None
    widget: WidgetFactory | None = None


# Filled once, when the package's top level is imported; read by every convenience call.
_lent = Conveniences()


def lend(
    *,
    assembly: EngineFactory | None = None,
    fold: EngineFactory | None = None,
    widget: WidgetFactory | None = None,
) -> Conveniences:
    """Fill the slots given (the others keep what they hold); returns what was lent before,
    so a caller can put it back."""
    global _lent
    before = _lent
    _lent = Conveniences(
        assembly=assembly or before.assembly,
        fold=fold or before.fold,
        widget=widget or before.widget,
    )
    return before


def lent() -> Conveniences:
    """What is lent now."""
    return _lent


def restore(conveniences: Conveniences) -> None:
    """Put back what ``lend`` returned (slots that were empty become empty again)."""
    global _lent
    _lent = conveniences


_F = TypeVar("_F")


def _need(factory: _F | None, call: str, instead: str) -> _F:
    if factory is None:
        raise CtxError(
            f"{call} has nothing to build it with: no layer above the base has lent this "
            "convenience (the ctxsdk package lends it when it is imported; was the module "
            f"loaded on its own?). Build it directly instead: {instead}"
        )
    return factory


def assembly(session: Any, /, **options: Any) -> Any:
    """``Session.assemble(**options)``: the Assembly the layer above builds over ``session``."""
    return _need(_lent.assembly, "Session.assemble()", "cx.Assembly(session)")(session, **options)


def fold(session: Any, /, **options: Any) -> Any:
    """``Session.fold(**options)``: the Fold the layer above builds over ``session``."""
    return _need(_lent.fold, "Session.fold()", "cx.Fold(session)")(session, **options)


def widget(name: str, target: Any, /, **options: Any) -> Any:
    """The widget ``name`` (``"context_tree"``) over ``target``, with ``options``: what a
    result's ``.widget()`` returns."""
    factory = _need(_lent.widget, ".widget()", "its widget class, e.g. ContextTree(result)")
    return factory(name, target, **options)
