"""What fills the context window, by kind: the view of Claude Code's ``/context``.

Every token the model receives is counted once, in one part: the system prompt, the tool
schemas, user messages, assistant messages (text and calls), reasoning, tool results and
replacement markers (any node that replaced others: assembly collapses, harness compaction
checkpoints, pruned results, a user's own replace).
The parts of the messages sum to ``Session.tokens(tokenizer).total``; the tool schemas are
added on top, as the harness's token meter adds them. Against the context window it shows
the free space and the point where the harness would compact: ``floor(window × 0.8)``, the
harness's default ``thresholdRatio``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._display import Rendered, bar_chart, esc, fmt_tokens, stacked_bar, table
from ..errors import InvalidArgument
from ._tokens import estimate_block, estimate_tools, get_tokenizer

if TYPE_CHECKING:
    from ._session_like import SessionLike

__all__ = [
    "COMPACTION_RATIO",
    "COMPOSITION_PARTS",
    "Composition",
    "TurnTokens",
    "composition",
    "node_parts",
    "turn_tokens",
]

# (key, label) in the order the bar draws them.
COMPOSITION_PARTS: tuple[tuple[str, str], ...] = (
    ("system", "system prompt"),
    ("tools", "tool schemas"),
    ("user", "user"),
    ("assistant", "assistant"),
    ("reasoning", "reasoning"),
    ("tool_results", "tool results"),
    ("markers", "summaries & markers"),  # checkpoints, compaction summaries, collapse marks
)
COMPACTION_RATIO = 0.8  # the harness's default compaction thresholdRatio (spec §10)
_KINDS = {"tool_results": "tool", "markers": "marker"}


@dataclass(frozen=True)
class Composition(Rendered):
    """Tokens by kind, against the context window when one is known."""

    tokenizer: str
    parts: dict[str, int]
    window: int | None
    threshold_ratio: float = COMPACTION_RATIO

    @property
    def used(self) -> int:
        return sum(self.parts.values())

    @property
    def threshold(self) -> int | None:
        """Tokens at which the harness would compact (``None`` without a window)."""
        return None if self.window is None else int(self.window * self.threshold_ratio)

    @property
    def free(self) -> int | None:
        return None if self.window is None else max(0, self.window - self.used)

    def share(self, part: str) -> float:
        return self.parts[part] / self.used if self.used else 0.0

    def __repr__(self) -> str:
        window = f" of {self.window}" if self.window else ""
        return f"Composition({self.tokenizer}, {self.used} tokens{window})"

    def _rows(self) -> list[tuple[str, int, str]]:
        rows = [
            (label, self.parts[key], _pct(self.parts[key], self.used))
            for key, label in COMPOSITION_PARTS
        ]
        return rows

    def _text_(self) -> str:
        head = f"Context composition ({self.tokenizer}): {self.used:,} tokens"
        if self.window is not None:
            head += f" of {self.window:,} ({_pct(self.used, self.window)} used)"
        lines = [head]
        width = max(len(label) for _, label in COMPOSITION_PARTS)
        for label, value, pct in self._rows():
            lines.append(f"  {label:<{width}}  {value:>9,}  {pct:>6}")
        if self.window is not None:
            assert self.threshold is not None and self.free is not None
            lines.append(f"  {'free':<{width}}  {self.free:>9,}")
            left = self.threshold - self.used
            where = f"{left:,} tokens away" if left > 0 else f"passed by {-left:,} tokens"
            lines.append(f"  compaction at {self.threshold:,} ({where})")
        return "\n".join(lines)

    def _html_(self) -> str:
        parts = [(label, self.parts[key], _KINDS.get(key, key)) for key, label in COMPOSITION_PARTS]
        total = self.used
        marks: list[tuple[int, str]] = []
        if self.window is not None and self.free is not None and self.threshold is not None:
            parts.append(("free", self.free, "free"))
            total = max(self.window, self.used)
            marks.append((self.threshold, f"compaction at {self.threshold:,}"))
        head = f"{fmt_tokens(self.used)} tokens"
        if self.window is not None:
            head += f" of {fmt_tokens(self.window)} ({_pct(self.used, self.window)})"
        plot = stacked_bar(parts, total, marks=marks, title="context composition")
        if total > self.used:
            # in a large window the parts are a sliver: the window, then what is used by part
            used = [p for p in parts if p[2] != "free"]
            plot = (
                "<div class='cx-muted'>the window</div>"
                + stacked_bar(parts, total, marks=marks, title="the window", legend=False)
                + "<div class='cx-muted'>used, by part</div>"
                + stacked_bar(used, self.used, title="used, by part")
            )
        rows = table(
            ("part", "tokens", "share"),
            [(label, f"{n:,}", pct) for label, n, pct in self._rows()],
            numeric=(1, 2),
        )
        return (
            f"<div class='cx-title'>Context composition <span class='cx-muted'>"
            f"{esc(self.tokenizer)} · {esc(head)}</span></div>{plot}{rows}"
        )


def _pct(value: int, total: int) -> str:
    return f"{100 * value / total:.1f}%" if total else "0.0%"


def node_parts(session: SessionLike, tokenizer: str = "cl100k_base") -> list[tuple[int, str, int]]:
    """(seq, part, tokens) for each message the model receives, an assistant message split
    into its ``reasoning`` and the rest; the parts of the system prompt a v0-v2 request header
    carries come first, at seq -1."""
    table_ = session.tokens(tokenizer)
    tk = get_tokenizer(tokenizer)
    out: list[tuple[int, str, int]] = [(-1, "system", table_.system)] if table_.system else []
    replaced = {n.seq for n in session.surface() if n.shadowed}
    for row in table_.rows:
        if row.seq in replaced:  # any replacement: a collapse, a checkpoint, a prune, an edit
            out.append((row.seq, "markers", row.tokens))
            continue
        message = session.message_at(row.seq)
        if message.role == "system":
            out.append((row.seq, "system", row.tokens))
        elif message.tool_results:
            out.append((row.seq, "tool_results", row.tokens))
        elif message.role == "user":
            out.append((row.seq, "user", row.tokens))
        else:
            blocks = [b for b in message.content if b.type == "reasoning"]
            if tokenizer == "estimate":
                thought = sum(estimate_block(b.model_dump(mode="json")) for b in blocks)
            else:
                thought = sum(tk.count(str(getattr(b, "text", ""))) for b in blocks)
            thought = min(thought, row.tokens)
            if thought:
                out.append((row.seq, "reasoning", thought))
            out.append((row.seq, "assistant", row.tokens - thought))
    return out


def composition(
    session: SessionLike,
    tokenizer: str = "cl100k_base",
    *,
    window: int | None = None,
    threshold_ratio: float = COMPACTION_RATIO,
) -> Composition:
    """The composition of what ``session``'s model receives, counted with ``tokenizer``;
    ``window`` defaults to the latest ``request/context.contextWindow`` logged."""
    if window is not None and (
        isinstance(window, bool) or not isinstance(window, int) or window <= 0
    ):
        raise InvalidArgument(f"window must be a positive number of tokens, not {window!r}")
    if not 0 < threshold_ratio <= 1:
        raise InvalidArgument(f"threshold_ratio must be in (0, 1], not {threshold_ratio!r}")
    tk = get_tokenizer(tokenizer)
    parts = dict.fromkeys((key for key, _ in COMPOSITION_PARTS), 0)
    for _, part, tokens in node_parts(session, tokenizer):
        parts[part] += tokens
    tools = session.tools
    if tools:
        parts["tools"] = (
            estimate_tools(tools)
            if tokenizer == "estimate"
            else tk.count(json.dumps(tools, separators=(",", ":"), ensure_ascii=False))
        )
    return Composition(tk.name, parts, window or session.context_window, threshold_ratio)


@dataclass(frozen=True)
class TurnTokens(Rendered):
    """Tokens the model receives from each turn, by part (``composition``'s parts, without
    the tool schemas); a replacement counts in the turn of the first event it covers."""

    tokenizer: str
    turns: tuple[int, ...]  # 0 holds what precedes the first turn (a v0-v2 system prompt)
    parts: dict[str, tuple[int, ...]]

    def total(self, turn: int) -> int:
        i = self.turns.index(turn)
        return sum(v[i] for v in self.parts.values())

    def to_polars(self) -> Any:
        """One row per turn: ``turn`` and a column per part."""
        import polars as pl

        data: dict[str, Any] = {"turn": list(self.turns)}
        data.update({k: list(v) for k, v in self.parts.items()})
        return pl.DataFrame(data)

    def __repr__(self) -> str:
        return f"TurnTokens({self.tokenizer}, {len(self.turns)} turns)"

    def _text_(self) -> str:
        keys = list(self.parts)
        labels = dict(COMPOSITION_PARTS)
        head = "  turn " + "".join(f"{labels[k]:>14}" for k in keys) + f"{'total':>10}"
        lines = [f"Tokens per turn ({self.tokenizer})", head]
        for i, t in enumerate(self.turns):
            cells = "".join(f"{self.parts[k][i]:>14,}" for k in keys)
            lines.append(f"  {t:>4} {cells}{self.total(t):>10,}")
        return "\n".join(lines)

    def _html_(self) -> str:
        series = {dict(COMPOSITION_PARTS)[k]: v for k, v in self.parts.items()}
        kinds = {dict(COMPOSITION_PARTS)[k]: _KINDS.get(k, k) for k in self.parts}
        chart = bar_chart(
            [str(t) for t in self.turns], series, kinds=kinds, title="tokens per turn by part"
        )
        return (
            f"<div class='cx-title'>Tokens per turn <span class='cx-muted'>"
            f"{esc(self.tokenizer)}</span></div>{chart}"
        )


def turn_tokens(session: SessionLike, tokenizer: str = "cl100k_base") -> TurnTokens:
    """What each turn contributes to what the model receives now, by part."""
    view = session.index
    by_turn: dict[int, dict[str, int]] = {}
    keys = [k for k, _ in COMPOSITION_PARTS if k != "tools"]
    for seq, part, tokens in node_parts(session, tokenizer):
        span = view.turn_of(view.origin(seq)) if seq >= 0 else None
        row = by_turn.setdefault(span.turn if span is not None else 0, dict.fromkeys(keys, 0))
        row[part] += tokens
    turns = tuple(sorted(by_turn))
    parts = {k: tuple(by_turn[t][k] for t in turns) for k in keys}
    name = get_tokenizer(tokenizer).name
    return TurnTokens(name, turns, parts)
