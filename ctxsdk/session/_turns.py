"""The turns of a session (``Turns``, ``Turn``, ``Step``), with their text and HTML forms."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .._display import Rendered, badge, plural, table
from ._listing import GIST, ROWS
from ._models import TokenUsage
from ._text import one_line

__all__ = ["Step", "Turn", "Turns"]


@dataclass(frozen=True)
class Step:
    turn: int
    step: int
    start_seq: int
    end_seq: int | None


@dataclass(frozen=True)
class Turn:
    """One turn of the log with its steps, outcome and summed usage."""

    turn: int
    start_seq: int
    end_seq: int | None
    reason: str | None  # completed, aborted, error, ...; None while the turn is open
    steps: tuple[Step, ...]
    usage: TokenUsage | None
    prompt: str | None  # the first user-sourced text of the turn

    def __repr__(self) -> str:
        p = (self.prompt or "")[:40]
        steps = f"{len(self.steps)} step" + ("" if len(self.steps) == 1 else "s")
        return f"Turn({self.turn}, {steps}, {self.reason}, {p!r})"


class Turns(Rendered, list[Turn]):
    """The turns of a session (a list), printed and shown as a table."""

    def _text_(self) -> str:
        return turns_text(self)

    def _html_(self) -> str:
        return turns_html(self)


# --- text and HTML ------------------------------------------------------------------------------


def _turn_cells(turns: Sequence[Turn]) -> list[tuple[int, str, str, str, str]]:
    rows = []
    for t in list(turns)[-ROWS:]:
        usage = f"in {t.usage.input_tokens:,} / out {t.usage.output_tokens:,}" if t.usage else ""
        rows.append(
            (
                t.turn,
                plural(len(t.steps), "step"),
                t.reason or "open",
                usage,
                one_line(t.prompt or "", GIST),  # "…" says it goes on
            )
        )
    return rows


def turns_text(turns: Sequence[Turn]) -> str:
    lines = [f"{plural(len(turns), 'turn')}"]
    for turn, steps, reason, usage, prompt in _turn_cells(turns):
        lines.append(f"  {turn:>4}  {steps:<9} {reason:<10} {usage:<26} {prompt}")
    if len(turns) > ROWS:
        lines.insert(1, f"  … the first {len(turns) - ROWS:,} not shown (s.turns_df() has all)")
    return "\n".join(lines)


def turns_html(turns: Sequence[Turn]) -> str:
    rows = [
        (turn, steps, badge(reason, "error" if reason in ("error", "aborted") else None), u, p)
        for turn, steps, reason, u, p in _turn_cells(turns)
    ]
    body = table(("turn", "steps", "outcome", "usage", "prompt"), rows, numeric=(0,), raw=(2,))
    skipped = len(turns) - ROWS
    note = (
        f"<div class='cx-muted'>the first {skipped:,} not shown (s.turns_df() has all)</div>"
        if skipped > 0
        else ""
    )
    return f"<div class='cx-title'>{plural(len(turns), 'turn')}</div>{note}{body}"
