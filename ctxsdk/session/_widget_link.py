"""``widget(name, target)``: how a result in the base or an engine opens its widget.

Widgets sit above every engine, so nothing below them imports one: this is the extension
point in ``ctxsdk._hooks``, which the top of the package fills when it is imported.
"""

from __future__ import annotations

from .._hooks import widget

__all__ = ["widget"]
