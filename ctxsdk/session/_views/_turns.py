"""``turns_df``: one row per turn, with provider-reported usage summed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .._text import message_of
from ._columns import TURNS, documented, frame
from ._raw import blocks, of_type

if TYPE_CHECKING:
    import polars as pl

    from .._session_like import SessionLike
    from .._turns import Turn


def _tool_calls(s: SessionLike, t: Turn) -> int:
    """Tool-call blocks in the turn's appended assistant messages."""
    end = t.end_seq if t.end_seq is not None else len(s.raw_events) - 1
    return sum(
        len(of_type(blocks(message_of(ev)), "tool-call"))
        for ev in s.raw_events[t.start_seq : end + 1]
        if ev["type"] == "assistant/message" and ev.get("surfaceOp") == "append"
    )


@documented(TURNS)
def turns_df(s: SessionLike) -> pl.DataFrame:
    """One row per turn (``Session.turns``), with provider-reported usage summed.

    Usage columns are null when no assistant message of the turn reported usage; when some
    did, a bucket none of them reported is 0 (the buckets are disjoint, spec §4).
    """
    raw = s.raw_events
    turns = s.turns()
    usage = [t.usage for t in turns]
    data: dict[str, Sequence[Any]] = {
        "turn": [t.turn for t in turns],
        "start_seq": [t.start_seq for t in turns],
        "end_seq": [t.end_seq for t in turns],
        "reason": [t.reason for t in turns],
        "steps": [len(t.steps) for t in turns],
        "prompt": [t.prompt for t in turns],
        "input_tokens": [u.input_tokens if u else None for u in usage],
        "output_tokens": [u.output_tokens if u else None for u in usage],
        # optional buckets: null without usage, 0 when the reported usage left them out
        "cache_read_tokens": [(u.cache_read_tokens or 0) if u else None for u in usage],
        "cache_write_tokens": [(u.cache_write_tokens or 0) if u else None for u in usage],
        "reasoning_tokens": [(u.reasoning_tokens or 0) if u else None for u in usage],
        "tool_calls": [_tool_calls(s, t) for t in turns],
        "duration_ms": [
            raw[t.end_seq]["time"] - raw[t.start_seq]["time"] if t.end_seq is not None else None
            for t in turns
        ],
    }
    return frame(data, TURNS)
