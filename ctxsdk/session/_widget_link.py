"""``widget(name, target)``: how a result in the base or an engine opens its widget.

Widgets sit above every engine, so nothing below them imports one: this asks the name table
in ``ctxsdk._engines``, which imports the widget module on first use.
"""

from __future__ import annotations

from typing import Any

__all__ = ["widget"]


def widget(name: str, target: Any, **options: Any) -> Any:
    """The widget ``name`` (``"context_tree"``) over ``target``, with ``options``."""
    from .. import _engines

    return _engines.widget(name, target, **options)
