"""Crash repair (spec §9): the closers a reader appends when a log ends inside a turn.

Every dangling tool call gets a synthetic error result, an open step is ended, and the turn
is closed as ``interrupted``, so the derived history is one a provider accepts again.
"""

from __future__ import annotations

from typing import Any

from ._event_writer import EventWriter
from ._replay import LogIndex

__all__ = ["repair_events"]

# The harness's README words these results; ours say the same thing in plain English.
_OUTCOME_UNKNOWN = (
    "The session ended while this tool call was running. Its outcome is unknown: "
    "check the effect before repeating it."
)
_NOT_STARTED = "The session ended before this tool call started. It did not run."


def repair_events(events: list[dict[str, Any]], index: LogIndex) -> list[dict[str, Any]]:
    """The synthetic events that close an open turn (empty when the log ends between turns)."""
    if index.open_turn is None:
        return []
    time = events[-1]["time"] if events else 0
    turn, step = index.open_turn, index.open_step
    w = EventWriter(
        index.version,
        clock=lambda: time,  # closers carry the time of the last event: nothing happened after
        base=events,
        turn=turn,
        turn_open=True,
        step=step or 0,
        step_open=step is not None,
    )
    for call in index.pending.values():
        started = call.call_seq is not None
        text = _OUTCOME_UNKNOWN if started else _NOT_STARTED
        error = (
            {"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"}
            if started
            else {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}
        )
        message = {
            "source": {"kind": "tool", "callId": call.call_id},
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": call.call_id,
                    "content": [{"type": "text", "text": text}],
                    "isError": True,
                }
            ],
            "role": "user",
            "id": f"interrupted-tool-result-{call.call_id}-{w.next_seq}",
        }
        data = {"turn": turn, "step": step, "message": message, "error": error}
        sources = [call.call_seq] if call.call_seq is not None else None
        w.emit("tool/result", data, sources=sources, op="append")
    w.end_turn({"kind": "interrupted"})  # ends the open step first
    return w.take()
