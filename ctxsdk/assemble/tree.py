"""The context tree: turn → step → surface node, re-derived from the log on every call.

A fold is filed where the first event it shadowed was (recursively), not where it was written,
so folding turn-1 history in turn 5 still shows under turn 1. Grouping only joins consecutive
rows, so reading the tree top to bottom is reading the surface in model order.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Literal

from ..session.models import Message
from ..session.session import Session, SurfaceNode
from .modes import Mode

__all__ = ["Row", "RowKind", "build_tree", "gist_line"]

RowKind = Literal["session", "turn", "step", "system", "user", "assistant", "tool", "fold"]
_TOOL_MARKER = re.compile(r"^\s*<?[\w.-]+\s*[({]")  # `bash {"command": ...}` / `<read {...}>`
_GIST_CHARS = 72


@dataclass
class Row:
    """One row of the tree. Leaves are surface nodes (``seq``); containers sum their children."""

    id: str
    kind: RowKind
    label: str
    mode: Mode = "full"
    tokens: int = 0
    gist: str = ""
    seq: int | None = None
    turn: int | None = None
    step: int | None = None
    tool: str | None = None
    failed: bool = False
    shadowed: tuple[int, ...] = ()
    children: list[Row] = field(default_factory=list)

    def walk(self) -> list[Row]:
        out = [self]
        for c in self.children:
            out += c.walk()
        return out

    def leaves(self) -> list[Row]:
        return [r for r in self.walk() if r.seq is not None]

    def render(self, depth: int = 0, max_rows: int | None = None) -> str:
        lines: list[str] = []
        for row, d in self._rows(depth):
            seq = f"{row.seq:>6}" if row.seq is not None else " " * 6
            lines.append(
                f"{'  ' * d}{row.label:<{max(1, 22 - 2 * d)}} {seq} {row.mode:4} "
                f"{row.tokens:>7}  {row.gist}"
            )
            if max_rows is not None and len(lines) >= max_rows:
                lines.append("…")
                break
        return "\n".join(lines)

    def _rows(self, depth: int) -> list[tuple[Row, int]]:
        out = [(self, depth)]
        for c in self.children:
            out += c._rows(depth + 1)
        return out

    def __repr__(self) -> str:
        return f"Row({self.id}, {self.kind}, {self.mode}, {self.tokens} tokens, {self.gist!r})"


def gist_line(text: str) -> str:
    """The first real line: not empty, not a tool-call marker; at most 72 characters."""
    for line in text.splitlines():
        line = line.strip()
        if not line or (_TOOL_MARKER.match(line) and "{" in line):
            continue
        return line if len(line) <= _GIST_CHARS else line[: _GIST_CHARS - 1] + "…"
    return ""


def _leaf_kind(node: SurfaceNode, mode: Mode) -> RowKind:
    if mode != "full" and node.op == "replace" and node.type != "tool/result":
        return "fold"
    if node.type == "system/message":
        return "system"
    if node.message.tool_results:
        return "tool"
    return "assistant" if node.message.role == "assistant" else "user"


def _leaf_gist(message: Message, kind: RowKind, tool_names: dict[str, str]) -> str:
    if kind == "tool":
        r = message.tool_results[0]
        name = tool_names.get(r.tool_call_id, "tool")
        return f"tool {name} · {gist_line(r.text) or ('failed' if r.is_error else '(no output)')}"
    text = gist_line(message.text)
    if not text and message.tool_calls:
        return "calls " + ", ".join(c.name for c in message.tool_calls)
    return text


def _origin(session: Session, seq: int) -> int:
    """The first original event under a (possibly nested) replacement."""
    replaced = session._index.replaced
    while seq in replaced:
        seq = replaced[seq][0]
    return seq


def build_tree(session: Session, modes: list[Mode], tokens: list[int]) -> Row:
    """The tree of the current surface (``modes``/``tokens`` are per surface position)."""
    surface = list(session.surface())
    tool_names = {c.id: c.name for n in surface for c in n.message.tool_calls}
    turns = session._index.turns
    starts = [t.start_seq for t in turns]
    root = Row(id=session.id, kind="session", label=session.title or session.id[:8])
    current_turn: Row | None = None
    current_step: Row | None = None
    for pos, node in enumerate(surface):
        origin = _origin(session, node.seq)
        i = bisect.bisect_right(starts, origin) - 1
        end = turns[i].end_seq if i >= 0 else None
        span = turns[i] if i >= 0 and (end is None or origin <= end) else None
        step_no = None
        if span is not None:
            for s, a, b in span.steps:
                if a <= origin and (b is None or origin <= b):
                    step_no = s
        kind = _leaf_kind(node, modes[pos])
        r = next(iter(node.message.tool_results), None)
        leaf = Row(
            id=f"s{node.seq}",
            kind=kind,
            label=kind,
            mode=modes[pos],
            tokens=tokens[pos],
            gist=_leaf_gist(node.message, kind, tool_names),
            seq=node.seq,
            turn=span.turn if span else None,
            step=step_no,
            tool=tool_names.get(r.tool_call_id) if r else None,
            failed=bool(r and r.is_error),
            shadowed=node.shadowed,
        )
        if span is None:
            root.children.append(leaf)
            current_turn = current_step = None
            continue
        if current_turn is None or current_turn.turn != span.turn:
            current_turn = Row(
                id=f"t{span.turn}", kind="turn", label=f"turn {span.turn}", turn=span.turn
            )
            root.children.append(current_turn)
            current_step = None
        if current_step is None or current_step.step != step_no:
            current_step = Row(
                id=f"t{span.turn}.{step_no}",
                kind="step",
                label=f"step {step_no}",
                turn=span.turn,
                step=step_no,
            )
            current_turn.children.append(current_step)
        current_step.children.append(leaf)
    _summarise(root)
    return root


def _summarise(row: Row) -> None:
    """Containers: summed tokens, a mode if all children agree, the gist of the first
    non-system child (the system prompt only as a last resort)."""
    if not row.children:
        return
    for c in row.children:
        _summarise(c)
    row.tokens = sum(c.tokens for c in row.children)
    modes = {c.mode for c in row.children}
    row.mode = modes.pop() if len(modes) == 1 else "full"
    firsts = [c for c in row.children if c.kind != "system" and c.gist]
    row.gist = firsts[0].gist if firsts else next((c.gist for c in row.children if c.gist), "")
