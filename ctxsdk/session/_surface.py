"""The surface a model receives (``Surface``, ``SurfaceNode``) and its token counts
(``TokenTable``, ``NodeTokens``), with their text and HTML forms."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, overload

from .._display import Rendered, badge, bar, esc, kv, plural, table
from ._listing import GIST, ROWS, more, more_html
from ._models import Message
from ._text import gist

__all__ = ["NodeTokens", "Surface", "SurfaceNode", "TokenTable"]


@dataclass(frozen=True)
class SurfaceNode:
    """One node of the surface: the event that put a message where the model sees it."""

    seq: int
    type: str
    message: Message
    op: Literal["append", "replace"]
    shadowed: tuple[int, ...] = ()  # the nodes a replacement took the place of

    def __repr__(self) -> str:
        op = f" replaces {list(self.shadowed)}" if self.shadowed else ""
        return f"SurfaceNode({self.seq}, {self.type!r}{op}, {self.message!r})"


class Surface(Rendered, Sequence[SurfaceNode]):
    """The current surface: nodes in model order (spec §7)."""

    def __init__(self, nodes: list[SurfaceNode], generation: int) -> None:
        self._nodes = nodes
        self.generation = generation  # how many replace ops were applied

    @overload
    def __getitem__(self, i: int) -> SurfaceNode: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[SurfaceNode]: ...
    def __getitem__(self, i: int | slice) -> SurfaceNode | Sequence[SurfaceNode]:
        return self._nodes[i]

    def __len__(self) -> int:
        return len(self._nodes)

    @property
    def seqs(self) -> list[int]:
        return [n.seq for n in self._nodes]

    def __repr__(self) -> str:
        return f"Surface({len(self._nodes)} nodes, {self.generation} replacements)"

    def _text_(self) -> str:
        return surface_text(self)

    def _html_(self) -> str:
        return surface_html(self)


@dataclass(frozen=True)
class NodeTokens:
    seq: int
    type: str
    role: str
    tokens: int


@dataclass(frozen=True)
class TokenTable(Rendered):
    """Token counts of the messages the model receives, one row per surface message."""

    tokenizer: str
    rows: tuple[NodeTokens, ...]
    system: int = 0  # a v0-v2 request's system prompt, counted apart from the messages

    @property
    def total(self) -> int:
        return self.system + sum(r.tokens for r in self.rows)

    def by_role(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.rows:
            out[r.role] = out.get(r.role, 0) + r.tokens
        return out

    def to_polars(self) -> Any:
        """A ``polars.DataFrame`` with columns seq, type, role, tokens."""
        import polars as pl

        return pl.DataFrame(
            {
                "seq": [r.seq for r in self.rows],
                "type": [r.type for r in self.rows],
                "role": [r.role for r in self.rows],
                "tokens": [r.tokens for r in self.rows],
            },
            schema={"seq": pl.Int64, "type": pl.Utf8, "role": pl.Utf8, "tokens": pl.Int64},
        )

    def __repr__(self) -> str:
        return f"TokenTable({self.tokenizer}, {len(self.rows)} messages, {self.total} tokens)"

    def _text_(self) -> str:
        return tokens_text(self)

    def _html_(self) -> str:
        return tokens_html(self)


# --- text and HTML ------------------------------------------------------------------------------


def _node_cells(surface: Surface) -> list[tuple[int, str, str, str, str]]:
    rows: list[tuple[int, str, str, str, str]] = []
    for n in surface[:ROWS]:
        role = "tool" if n.message.tool_results else n.message.role
        covers = f"replaces {len(n.shadowed)}" if n.shadowed else ""
        rows.append((n.seq, n.type, role, covers, gist(n.message, GIST)))
    return rows


def surface_text(surface: Surface) -> str:
    lines = [
        f"Surface: {plural(len(surface), 'node')} in model order, "
        f"{plural(surface.generation, 'replacement')} applied"
    ]
    for seq, etype, role, covers, text in _node_cells(surface):
        lines.append(f"  {seq:>6}  {etype:<17} {role:<9} {covers:<13} {text}")
    rest = more(min(len(surface), ROWS), len(surface), "s.surface_df()")
    return "\n".join(lines + ([f"  {rest}"] if rest else []))


def surface_html(surface: Surface) -> str:
    rows = [
        (seq, etype, badge(role, role), esc(covers), esc(text))
        for seq, etype, role, covers, text in _node_cells(surface)
    ]
    head = (
        f"Surface <span class='cx-muted'>{plural(len(surface), 'node')}, "
        f"{plural(surface.generation, 'replacement')}</span>"
    )
    body = table(("seq", "event", "role", "", "gist"), rows, numeric=(0,), raw=(2, 3, 4))
    rest = more_html(min(len(surface), ROWS), len(surface), "s.surface_df()")
    return f"<div class='cx-title'>{head}</div>{body}{rest}"


def tokens_text(t: TokenTable) -> str:
    lines = [f"Tokens ({t.tokenizer}): {t.total:,} in {plural(len(t.rows), 'message')}"]
    by_role = ", ".join(f"{role} {n:,}" for role, n in t.by_role().items())
    if t.system:
        by_role = f"system prompt (header) {t.system:,}, " + by_role
    lines.append(f"  by role: {by_role}")
    for r in t.rows[:ROWS]:
        lines.append(f"  {r.seq:>6}  {r.role:<9} {r.tokens:>8,}")
    rest = more(min(len(t.rows), ROWS), len(t.rows), "s.tokens_df()")
    return "\n".join(lines + ([f"  {rest}"] if rest else []))


def tokens_html(t: TokenTable) -> str:
    peak = max((r.tokens for r in t.rows), default=1)
    rows = [
        (r.seq, badge(r.role, r.role), f"{r.tokens:,}", bar(r.tokens, peak, kind=r.role))
        for r in t.rows[:ROWS]
    ]
    head = (
        f"Tokens <span class='cx-muted'>{esc(t.tokenizer)} · {t.total:,} in "
        f"{plural(len(t.rows), 'message')}</span>"
    )
    roles = kv([(role, f"{n:,}") for role, n in t.by_role().items()])
    body = table(("seq", "role", "tokens", ""), rows, numeric=(0, 2), raw=(1, 3))
    rest = more_html(min(len(t.rows), ROWS), len(t.rows), "s.tokens_df()")
    return f"<div class='cx-title'>{head}</div>{roles}{body}{rest}"
