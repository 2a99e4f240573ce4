"""The three modes of a node, and how an assembly collapse is recognised by its mark.

``full`` keeps a node verbatim, ``key`` collapses a run into one digest message, ``off``
collapses it into a near-empty marker. The marks themselves are part of the log format and
live in the base (``ctxsdk.session.kernel.read_marker``); this module maps them to modes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from ..session.kernel import read_marker

__all__ = ["MODES", "Mode", "collapse_mark"]

Mode = Literal["full", "key", "off"]
MODES: tuple[Mode, ...] = ("full", "key", "off")


def collapse_mark(event: Mapping[str, Any]) -> tuple[Mode, int] | None:
    """(mode, items) if ``event`` is an assembly collapse, else None."""
    mark = read_marker(event)
    if mark is None or mark.kind != "assembly" or mark.items is None:
        return None
    if mark.mode == "full" or mark.mode == "key" or mark.mode == "off":
        return mark.mode, mark.items
    return None
