"""Modes and the marks that make a fold recognisable as an assembly fold.

``full`` keeps a node verbatim, ``key`` folds a run into one digest message, ``off`` folds it
into a near-empty marker. A fold is written as one surface replacement; later readers tell it
from a foreign replacement (a compaction, say) by its mark: ``source.summary`` on a user-message
fold, or the header line inside a tool-result fold (a tool/result rewrite must keep every field
but its content, so no source stamp is possible there).
"""

from __future__ import annotations

import re
from typing import Any, Literal

__all__ = [
    "ASSEMBLER_PLUGIN",
    "Mode",
    "fold_header",
    "fold_source",
    "parse_fold_mark",
]

Mode = Literal["full", "key", "off"]
MODES: tuple[Mode, ...] = ("full", "key", "off")

ASSEMBLER_PLUGIN = "ctxsdk/assemble"
# The seed plugin's folds are recognised too, so a log edited by either reads the same.
_KNOWN_PLUGINS = frozenset({ASSEMBLER_PLUGIN, "@dsh-external/dsh-client-plugin-context-assembler"})
_HEADER = re.compile(r"^⟨assembled:(full|key|off) items=(\d+)(?: tokens≈(\d+))?⟩")
_SUMMARY = re.compile(r"^assembled:(full|key|off)\b(?: items=(\d+))?")


def fold_header(mode: Mode, items: int, tokens: int) -> str:
    return f"⟨assembled:{mode} items={items} tokens≈{tokens}⟩"


def fold_source(mode: Mode, items: int, tokens: int) -> dict[str, Any]:
    return {
        "kind": "plugin",
        "plugin": ASSEMBLER_PLUGIN,
        "form": "notice",
        "summary": f"assembled:{mode} items={items} tokens={tokens}",
    }


def parse_fold_mark(event: dict[str, Any]) -> tuple[Mode, int] | None:
    """(mode, items) if ``event`` is an assembly fold, else None."""
    etype = event.get("type")
    data = event.get("data")
    if not isinstance(data, dict):
        return None
    if etype == "user/message":
        src = data.get("source")
        if isinstance(src, dict) and src.get("plugin") in _KNOWN_PLUGINS:
            m = _SUMMARY.match(str(src.get("summary", "")))
            if m:
                return m.group(1), int(m.group(2) or 1)  # type: ignore[return-value]
        return None
    if etype == "tool/result":
        try:
            inner = data["message"]["content"][0]["content"]
            first = inner[0]["text"] if inner else ""
        except (KeyError, IndexError, TypeError):
            return None
        m = _HEADER.match(first) if isinstance(first, str) else None
        if m:
            return m.group(1), int(m.group(2))  # type: ignore[return-value]
    return None
