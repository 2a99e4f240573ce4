"""``%load_ext ctxsdk``: sessions and assemblies display as their ContextTree widget.

Without it a result shows its static HTML (which needs no kernel); with it, a ``Session`` or
an ``Assembly`` that ends a cell opens the widget instead, as quak does for tables.
``%unload_ext ctxsdk`` goes back to the HTML.
"""

from __future__ import annotations

from typing import Any

from ..assemble import Assembly
from ..session import Session
from ._context_tree import ContextTree

__all__ = ["load", "unload"]

_TYPES = (Session, Assembly)


def _as_widget(obj: Session | Assembly) -> Any:
    return ContextTree(obj)._repr_mimebundle_()


def load(ipython: Any) -> None:
    formatter = ipython.display_formatter.mimebundle_formatter
    for cls in _TYPES:
        formatter.for_type(cls, _as_widget)


def unload(ipython: Any) -> None:
    formatter = ipython.display_formatter.mimebundle_formatter
    for cls in _TYPES:
        formatter.type_printers.pop(cls, None)
