"""The context tree: turn → step → surface node, re-derived from the log on every call.

A replacement (an assembly collapse, a compaction) is filed where the first event it shadowed
was (recursively), not where it was written, so collapsing turn-1 history in turn 5 still
shows under turn 1. Grouping only joins consecutive rows, so reading the tree top to bottom is
reading the surface in model order.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Literal

from .._display import Rendered, badge, bar, details, esc, plural
from ..errors import SessionFormatError
from ..session import Message, Session, SurfaceNode
from ..session.kernel import first_line, message_of
from ._modes import Mode

__all__ = ["Row", "RowKind", "attach_subagents", "build_tree", "header_system_tokens"]

RowKind = Literal[
    "session", "turn", "step", "system", "user", "assistant", "tool", "replacement", "subagent"
]
_DELEGATION_TOOLS = frozenset({"subagent", "subagent_fork", "workflow", "run_code"})
_TEXT_ROWS = 400  # rows a tree prints before it says how many more there are
_HTML_ROWS = 3000  # rows of the static HTML tree; the widget has no such limit
_BADGE = {"replacement": "marker", "subagent": "tool", "turn": None, "step": None, "session": None}


@dataclass
class Row(Rendered):
    """One row of the tree. Leaves are surface nodes (``seq``); containers sum their children.

    Printed, a row shows its subtree (the first 400 rows; ``render()`` prints all); in a
    notebook, a collapsible tree with token bars (``.widget()`` edits it)."""

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
    # A shadowed row is an event a replacement covers: in the log, not sent to the model.
    event_seq: int | None = None
    state: Literal["live", "shadowed"] = "live"
    children: list[Row] = field(default_factory=list)
    mention: str = field(default="", repr=False)
    calls_only: bool = field(default=False, repr=False)  # an assistant row with calls, no text

    def walk(self) -> list[Row]:
        out = [self]
        for c in self.children:
            out += c.walk()
        return out

    def leaves(self) -> list[Row]:
        """The surface nodes under this row, in model order."""
        return [r for r in self.walk() if r.seq is not None]

    def render(self, depth: int = 0, max_rows: int | None = None) -> str:
        lines: list[str] = []
        for row, d in self._rows(depth):
            at = row.seq if row.seq is not None else row.event_seq
            seq = f"{at:>6}" if at is not None else " " * 6
            if row.state == "shadowed":
                seq = f"({at})".rjust(6)
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

    def _text_(self) -> str:
        rows = len(self.walk())
        body = self.render(max_rows=_TEXT_ROWS)
        if rows > _TEXT_ROWS:
            body += f" {rows - _TEXT_ROWS:,} more rows (row.render() prints them all)"
        return body

    def _html_(self) -> str:
        budget = [_HTML_ROWS]
        inner = _row_html(self, max(self.tokens, 1), budget, depth=0)
        more = len(self.walk()) - _HTML_ROWS
        tail = f"<div class='cx-muted'>… {more:,} more rows: .widget() shows them all</div>"
        return inner + (tail if more > 0 else "")


def _row_line(row: Row, total: int) -> str:
    at = row.seq if row.seq is not None else row.event_seq
    where = "" if at is None else (f"({at})" if row.state == "shadowed" else str(at))
    kind = _BADGE.get(row.kind, row.kind)
    mode = "" if row.mode == "full" else badge(row.mode, "marker")
    bits = [
        f"<b class='cx-label'>{esc(row.label)}</b>"
        if row.children
        else f"<span class='cx-label'>{esc(row.label)}</span>",
        badge(row.kind, kind) if kind and row.kind != row.label else "",
        f"<span class='cx-muted'>{esc(where)}</span>",
        mode,
        badge("failed", "error") if row.failed else "",
        bar(row.tokens, total, title=f"{row.tokens:,} tokens"),
        f"<span class='cx-muted'>{row.tokens:,}</span>",
        f"<span class='cx-gist'>{esc(row.gist)}</span>",
    ]
    return f"<span class='cx-row'>{''.join(b for b in bits if b)}</span>"


def _row_html(row: Row, total: int, budget: list[int], depth: int) -> str:
    budget[0] -= 1
    line = _row_line(row, total)
    if not row.children:
        return f"<div class='cx-leaf'>{line}</div>"
    kids = []
    for child in row.children:
        if budget[0] <= 0:
            break
        kids.append(_row_html(child, total, budget, depth + 1))
    if row.kind == "session":
        turns = f"<span class='cx-muted'>{plural(len(row.children), 'turn')}</span>"
        line = line.replace("</span>", f"</span>{turns}", 1)
    return details(line, "".join(kids), open=depth == 0)


def _leaf_kind(node: SurfaceNode, mode: Mode) -> RowKind:
    if mode != "full" and node.op == "replace" and node.type != "tool/result":
        return "replacement"
    if node.type == "system/message":
        return "system"
    if node.message.tool_results:
        return "tool"
    return "assistant" if node.message.role == "assistant" else "user"


def _leaf_gist(message: Message, kind: RowKind, tool_names: dict[str, str]) -> str:
    if kind == "tool":
        r = message.tool_results[0]
        name = tool_names.get(r.tool_call_id, "tool")
        return f"tool {name} · {first_line(r.text) or ('failed' if r.is_error else '(no output)')}"
    text = first_line(message.text)
    if not text and message.tool_calls:
        return "calls " + ", ".join(c.name for c in message.tool_calls)
    if not text and kind == "system":
        # an import of a log that never recorded its prompt (Claude Code): say so, not a blank
        return "(empty: the log does not hold the system prompt)"
    return text


def _shadowed_rows(
    session: Session, seq: int, tool_names: dict[str, str], depth: int = 0
) -> list[Row]:
    """Rows for the events a replacement covers, recursively (a replacement of a replacement)."""
    rows = []
    for s in session.index.originals(seq):
        raw = session.raw_events[s]
        inner = message_of(raw)
        try:
            message = session.message_at(s)
        except SessionFormatError:  # a shadowed event that does not type-check: show its type
            message = None
        kind: RowKind = "user"
        if raw["type"] == "system/message":
            kind = "system"
        elif raw["type"] == "tool/result":
            kind = "tool"
        elif raw["type"] == "assistant/message":
            kind = "assistant"
        gist = _leaf_gist(message, kind, tool_names) if message is not None else raw["type"]
        result = message.tool_results[0] if message is not None and message.tool_results else None
        row = Row(
            id=f"e{s}",
            kind=kind,
            label=kind,
            mode="off",
            gist=gist,
            event_seq=s,
            state="shadowed",
            tool=tool_names.get(result.tool_call_id) if result is not None else None,
        )
        if isinstance(inner, dict) and depth < 8:
            row.children = _shadowed_rows(session, s, tool_names, depth + 1)
        rows.append(row)
    return rows


def attach_subagents(root: Row, children: list[tuple[str, str, int]]) -> None:
    """Nest subagent sessions (id, title, tokens) under the tool row that spawned them: the
    tool whose call or result mentions the child's id, else the first delegation-shaped tool
    (``subagent``, ``subagent_fork``, ``workflow``, ``run_code``) not yet used."""
    tools = [r for r in root.walk() if r.kind == "tool" and r.seq is not None]
    used: set[str] = set()
    for child_id, title, tokens in children:
        row = Row(id=child_id, kind="subagent", label="subagent", gist=title, tokens=tokens)
        host = next((t for t in tools if child_id in t.mention), None)
        host = host or next(
            (t for t in tools if t.tool in _DELEGATION_TOOLS and t.id not in used), None
        )
        if host is None:
            root.children.append(row)
            continue
        used.add(host.id)
        host.children.append(row)


def _tool_names(session: Session) -> dict[str, str]:
    """Tool name by call id over the whole log (shadowed calls included)."""
    out: dict[str, str] = {}
    for raw in session.raw_events:
        if raw["type"] != "assistant/message":
            continue
        for block in (message_of(raw) or {}).get("content") or ():
            if isinstance(block, dict) and block.get("type") == "tool-call":
                out[str(block.get("id"))] = str(block.get("name"))
    return out


def header_system_tokens(session: Session, tokenizer: str) -> int:
    """Tokens of a v0-v2 system prompt: it is sent with each request but lives in the request
    header, not on the surface, so no node counts it (``Session.tokens().system``). A v3
    system prompt is surface node 0 and is counted there."""
    if session.version >= 3 or not session.system_prompt:
        return 0
    return session.tokens(tokenizer).system


def build_tree(
    session: Session, modes: list[Mode], tokens: list[int], *, system_tokens: int = 0
) -> Row:
    """The tree of the current surface (``modes``/``tokens`` are per surface position).

    ``system_tokens`` is a v0-v2 header system prompt's cost: it gets a row of its own (no
    seq: it is not a surface node and cannot be collapsed), so the root sums what the model
    receives, exactly as ``Session.tokens().total`` does."""
    surface = list(session.surface())
    tool_names = _tool_names(session)
    # Each call's arguments by id, once: looking a result's call up per row would be O(n^2).
    arguments: dict[str, str] = {}
    for n in surface:
        for c in n.message.tool_calls:
            arguments.setdefault(c.id, c.arguments)  # the first call with an id, as before
    turns = session.index.turns
    starts = [t.start_seq for t in turns]
    root = Row(id=session.id, kind="session", label=session.title or session.id[:8])
    if system_tokens:
        root.children.append(
            Row(
                id="system",
                kind="system",
                label="system",
                tokens=system_tokens,
                gist=first_line(session.system_prompt or ""),
            )
        )
    current_turn: Row | None = None
    current_step: Row | None = None
    for pos, node in enumerate(surface):
        origin = session.index.origin(node.seq)
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
            children=_shadowed_rows(session, node.seq, tool_names) if node.shadowed else [],
        )
        leaf.calls_only = kind == "assistant" and not node.message.text
        if r is not None:  # what a subagent's id may appear in: the call and the result
            leaf.mention = r.text + arguments.get(r.tool_call_id, "")
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
    non-system child (the system prompt only as a last resort). A collapse keeps its own cost
    (its shadowed rows cost nothing: summing them would make savings read as zero)."""
    if row.kind not in ("session", "turn", "step") or not row.children:
        return
    for c in row.children:
        _summarise(c)
    row.tokens = sum(c.tokens for c in row.children)
    modes = {c.mode for c in row.children}
    row.mode = modes.pop() if len(modes) == 1 else "full"
    # A tool-only step is named by its tool and result line, not by "calls ...".
    said = [c for c in row.children if c.kind != "system" and c.gist and not c.calls_only]
    firsts = said or [c for c in row.children if c.kind != "system" and c.gist]
    row.gist = firsts[0].gist if firsts else next((c.gist for c in row.children if c.gist), "")
    row.calls_only = bool(firsts) and all(c.calls_only for c in firsts)
