"""``events_df``: one row per event of the log."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .._codec import dumps_json
from ._columns import EVENTS, documented, frame

if TYPE_CHECKING:
    import polars as pl

    from .._session_like import SessionLike


def _turn_step_of(s: SessionLike) -> tuple[list[int | None], list[int | None]]:
    """Per seq: the turn and step whose start..end span holds the event (None outside)."""
    n = len(s.raw_events)
    turns: list[int | None] = [None] * n
    steps: list[int | None] = [None] * n
    for span in s.index.turns:
        end = span.end_seq if span.end_seq is not None else n - 1
        turns[span.start_seq : end + 1] = [span.turn] * (end + 1 - span.start_seq)
        for step, start, stop in span.steps:
            last = stop if stop is not None else end
            steps[start : last + 1] = [step] * (last + 1 - start)
    return turns, steps


def _surface_op(op: object) -> str | None:
    return "append" if op == "append" else "replace" if isinstance(op, dict) else None


@documented(EVENTS)
def events_df(s: SessionLike) -> pl.DataFrame:
    """One row per event of the log, in seq order.

    ``turn`` is null between turns; an open turn runs to the end of the log. ``sources`` is
    null when the event has none and ``[]`` when it says "none" (a v0 empty stream).
    """
    raw = s.raw_events
    index = s.index
    n = len(raw)
    surface = set(index.surface_seqs())
    turns, steps = _turn_step_of(s)
    sources: list[list[int] | None] = [None] * n
    for seq, cited in index.source_seqs.items():
        sources[seq] = list(cited)
    shadowed_by: list[int | None] = [None] * n
    for seq, by in index.shadowed_by.items():
        shadowed_by[seq] = by
    dumps = dumps_json
    data: dict[str, Sequence[Any]] = {
        "seq": list(range(n)),
        "type": [ev["type"] for ev in raw],
        "time": [ev["time"] for ev in raw],
        "turn": turns,
        "step": steps,
        "surface_op": [_surface_op(ev.get("surfaceOp")) for ev in raw],
        "sources": sources,
        "on_surface": [i in surface for i in range(n)],
        "shadowed_by": shadowed_by,
        "bytes": [len(dumps(ev)) for ev in raw],
    }
    return frame(data, EVENTS)
