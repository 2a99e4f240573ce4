"""The replacement markers: how the base recognises who wrote a surface replacement.

A replacement on the surface can be an assembly collapse (``ctxsdk.assemble``), a harness
compaction checkpoint (compaction-basic, source plugin ``compact``), a tool-result prune
(the harness's pruner), or a foreign replacement nobody marked. The marks are part of the log
format, so they live here, in the base: any engine, view or widget reads them with
``read_marker`` without importing the engine that wrote them. An engine that writes a new
kind of replacement adds its mark here (its writer and its recogniser side by side).

Assembly marks: ``source.summary`` (``assembled:<mode> items=<n> tokens=<t>``) on a
user-message collapse, or a header line ``⟨assembled:<mode> items=<n> tokens≈<t>⟩`` opening
the content of a tool-result rewrite (a tool/result rewrite must keep every field but its
content, so no source stamp is possible there).

Fold marks (``ctxsdk.fold``): a checkpoint is a user message sourced from ``ctxsdk/fold`` with
``source.summary`` ``fold:<mode> cp=<checkpoint id>`` (mode leaf, root or emergency), and its
text opens with the line ``[cx-fold <L|R|E> cp:<id>]`` so the model sees which checkpoint it
reads; a masked tool result's content opens with ``[cx-fold mask cp:<id> …]``; a fold in the
harness's own checkpoint form (policy basic) is a ``compact`` checkpoint whose source is
stamped ``fold:basic:<mode> cp=<id>``. ``Marker.checkpoint`` carries the id, so the frontier and the
fold records are found from the log alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "ASSEMBLER_PLUGIN",
    "FOLD_PLUGIN",
    "MARKER_KINDS",
    "Marker",
    "assembly_header",
    "assembly_source",
    "fold_line",
    "fold_source",
    "read_marker",
]

MarkerKind = Literal["assembly", "compaction", "prune", "fold"]
MarkerMode = Literal["full", "key", "off", "leaf", "root", "emergency", "mask"]

ASSEMBLER_PLUGIN = "ctxsdk/assemble"
# The seed plugin's collapses are recognised too, so a log edited by either reads the same.
_ASSEMBLERS = frozenset({ASSEMBLER_PLUGIN, "@dsh-external/dsh-client-plugin-context-assembler"})
_HEADER = re.compile(r"^⟨assembled:(full|key|off) items=(\d+)(?: tokens≈(\d+))?⟩")
_SUMMARY = re.compile(r"^assembled:(full|key|off)\b(?: items=(\d+))?")
_COMPACTION_PLUGIN = "compact"
_PRUNED = "[... tool result middle pruned ...]"  # inside the pruner's marker line
FOLD_PLUGIN = "ctxsdk/fold"
_FOLD_SUMMARY = re.compile(r"^fold:(leaf|root|emergency) cp=([A-Za-z0-9][A-Za-z0-9_.:-]*)$")
_BASIC_SUMMARY = re.compile(
    r"^fold:basic(?::(leaf|root|emergency))? cp=([A-Za-z0-9][A-Za-z0-9_.:-]*)$"
)
_FOLD_LINE = re.compile(r"^\[cx-fold (L|R|E|mask) cp:([A-Za-z0-9][A-Za-z0-9_.:-]*)[\] ]")
_FOLD_LETTER = {"leaf": "L", "root": "R", "emergency": "E", "mask": "mask"}


@dataclass(frozen=True)
class Marker:
    """What a marked replacement says about itself.

    ``kind`` names the writer's family; ``mode`` and ``items`` are an assembly collapse's
    mode (full / key / off) and how many items it covers, or a fold's mode (leaf / root /
    emergency / mask) and ``checkpoint`` its id; ``writer`` is the plugin name.
    """

    kind: MarkerKind
    writer: str
    mode: MarkerMode | None = None
    items: int | None = None
    checkpoint: str | None = None


def assembly_header(mode: str, items: int, tokens: int) -> str:
    """The first line of an assembly tool-result rewrite (and of a collapse's text)."""
    return f"⟨assembled:{mode} items={items} tokens≈{tokens}⟩"


def assembly_source(mode: str, items: int, tokens: int) -> dict[str, Any]:
    """The ``source`` of an assembly user-message collapse."""
    return {
        "kind": "plugin",
        "plugin": ASSEMBLER_PLUGIN,
        "form": "notice",
        "summary": f"assembled:{mode} items={items} tokens={tokens}",
    }


def fold_line(mode: str, checkpoint_id: str, detail: str = "") -> str:
    """The first line of a fold checkpoint's text, or of a masked tool result's content:
    ``[cx-fold L cp:<id>]`` (``detail`` goes inside the brackets, after the id)."""
    tail = f" {detail}" if detail else ""
    return f"[cx-fold {_FOLD_LETTER[mode]} cp:{checkpoint_id}{tail}]"


def fold_source(mode: str, checkpoint_id: str, *, harness_form: bool = False) -> dict[str, Any]:
    """The ``source`` of a fold checkpoint message (keys every format version accepts); with
    ``harness_form`` the harness's compaction form (plugin ``compact``, policy basic),
    stamped with the mode and id."""
    if harness_form:
        return {
            "kind": "plugin",
            "plugin": _COMPACTION_PLUGIN,
            "compactionId": checkpoint_id,
            "summary": f"fold:basic:{mode} cp={checkpoint_id}",
        }
    return {
        "kind": "plugin",
        "plugin": FOLD_PLUGIN,
        "form": "notice",
        "summary": f"fold:{mode} cp={checkpoint_id}",
    }


def _first_result_text(data: Mapping[str, Any]) -> str | None:
    try:
        inner = data["message"]["content"][0]["content"]
        first = inner[0]["text"] if inner else ""
    except (KeyError, IndexError, TypeError):
        return None
    return first if isinstance(first, str) else None


def _assembly(etype: Any, data: Mapping[str, Any]) -> Marker | None:
    if etype == "user/message":
        src = data.get("source")
        # a plugin name is a string; anything else (an object, an array) marks nothing here,
        # and the message read where it is needed refuses it, as the harness does
        if (
            isinstance(src, Mapping)
            and isinstance(src.get("plugin"), str)
            and (src["plugin"] in _ASSEMBLERS)
        ):
            m = _SUMMARY.match(str(src.get("summary", "")))
            if m:
                return Marker("assembly", str(src["plugin"]), m.group(1), int(m.group(2) or 1))  # type: ignore[arg-type]
        return None
    if etype == "tool/result":
        first = _first_result_text(data)
        m = _HEADER.match(first) if first is not None else None
        if m:
            return Marker("assembly", ASSEMBLER_PLUGIN, m.group(1), int(m.group(2)))  # type: ignore[arg-type]
    return None


def _compaction(etype: Any, data: Mapping[str, Any]) -> Marker | None:
    src = data.get("source") if etype == "user/message" else None
    if isinstance(src, Mapping) and src.get("plugin") == _COMPACTION_PLUGIN:
        # a fold written in the harness's own checkpoint form (policy basic) is stamped so
        # its archive can be found again; the harness's own compactions have no stamp.
        m = _BASIC_SUMMARY.match(str(src.get("summary", "")))
        if m is None:
            return Marker("compaction", _COMPACTION_PLUGIN)
        mode = m.group(1) or "leaf"
        return Marker("compaction", _COMPACTION_PLUGIN, mode, checkpoint=m.group(2))  # type: ignore[arg-type]
    return None


def _fold(etype: Any, data: Mapping[str, Any]) -> Marker | None:
    if etype == "user/message":
        src = data.get("source")
        if isinstance(src, Mapping) and src.get("plugin") == FOLD_PLUGIN:
            m = _FOLD_SUMMARY.match(str(src.get("summary", "")))
            if m:
                return Marker("fold", FOLD_PLUGIN, m.group(1), checkpoint=m.group(2))  # type: ignore[arg-type]
        return None
    if etype == "tool/result":
        first = _first_result_text(data)
        m = _FOLD_LINE.match(first) if first is not None else None
        if m and m.group(1) == "mask":
            return Marker("fold", FOLD_PLUGIN, "mask", checkpoint=m.group(2))
    return None


def _prune(etype: Any, data: Mapping[str, Any]) -> Marker | None:
    if etype != "tool/result":
        return None
    try:
        blocks = data["message"]["content"][0]["content"]
    except (KeyError, IndexError, TypeError):
        return None
    for b in blocks if isinstance(blocks, list) else ():
        if isinstance(b, Mapping) and _PRUNED in str(b.get("text", "")):
            return Marker("prune", "compaction-tool-result-pruner")
    return None


# In the order they are tried; the first that recognises an event wins.
_RECOGNISERS: tuple[tuple[MarkerKind, Callable[[Any, Mapping[str, Any]], Marker | None]], ...] = (
    ("assembly", _assembly),
    ("fold", _fold),
    ("compaction", _compaction),
    ("prune", _prune),
)
MARKER_KINDS: tuple[MarkerKind, ...] = tuple(k for k, _ in _RECOGNISERS)


def read_marker(event: Mapping[str, Any]) -> Marker | None:
    """The marker of a replacement event (``None`` for unmarked events)."""
    data = event.get("data")
    if not isinstance(data, Mapping):
        return None
    etype = event.get("type")
    for _, recognise in _RECOGNISERS:
        found = recognise(etype, data)
        if found is not None:
            return found
    return None
