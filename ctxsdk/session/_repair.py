"""Crash repair (spec §9): the closers the harness appends when a log ends inside a turn.

A faithful port of the harness's ``interruptedTurnClosers`` and ``ToolCallRecovery``
(``packages/core/session/src/repair.ts``): every tool call of the open step that has no
appended result gets a synthetic error result (``TOOL_OUTCOME_UNKNOWN`` once its
``tool/call`` was logged, else ``TOOL_NOT_STARTED``), then the open step is ended and the
turn closed as ``interrupted``. Seqs continue the log and every closer carries the time of the
last event. The texts, error names and codes, message ids and key order are the harness's;
its loader checks the ``TOOL_NOT_STARTED`` result byte for byte.

A resumed session then gets the harness's resume marker: the ``Session`` constructor appends
``session/end-seed {}`` (stamped with the wall clock) after a seed that does not already end
in one (``packages/core/session/src/index.ts``), so ``resume_marker`` follows the closers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._event_writer import now_ms

__all__ = [
    "NOT_STARTED_TEXT",
    "OUTCOME_UNKNOWN_TEXT",
    "TOOL_NOT_STARTED",
    "TOOL_OUTCOME_UNKNOWN",
    "repair_events",
    "resume_marker",
]

TOOL_NOT_STARTED = "TOOL_NOT_STARTED"
TOOL_OUTCOME_UNKNOWN = "TOOL_OUTCOME_UNKNOWN"

# The harness's own words (repair.ts), verbatim.
OUTCOME_UNKNOWN_TEXT = (
    "The tool call was interrupted after it was recorded, but no result was durably recorded. "
    "Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if "
    "the operation is read-only or idempotent; if it may have side effects, first verify "
    "external state or ask the user. Do not retry blindly."
)
NOT_STARTED_TEXT = (
    "The tool call was interrupted before the Harness recorded it as started. "
    "Retry it if it is still needed."
)


def _pending_calls(events: list[dict[str, Any]]) -> tuple[int | None, int | None, dict[str, Any]]:
    """The open turn and step and the calls still waiting for a result, as repair.ts scans."""
    open_turn: int | None = None
    open_step: int | None = None
    pending: dict[str, list[Any]] = {}  # callId -> [turn, step, callSeq | None]
    for ev in events:
        etype = ev["type"]
        data: Any = ev.get("data")
        if etype == "turn/start":
            pending.clear()
            open_turn, open_step = data.get("turn"), None
        elif etype == "turn/end":
            pending.clear()
            open_turn = open_step = None
        elif etype == "step/start":
            open_step = data.get("step")
        elif etype == "step/end":
            pending.clear()
            open_step = None
        elif etype == "assistant/message":
            for block in data["message"]["content"]:
                if isinstance(block, dict) and block.get("type") == "tool-call":
                    pending[block["id"]] = [data.get("turn"), data.get("step"), None]
        elif etype == "tool/call":
            call_id = data.get("callId") if isinstance(data, dict) else None
            entry = pending.get(call_id) if isinstance(call_id, str) else None
            if entry is not None:
                entry[2] = ev["seq"]
        elif etype == "tool/result":
            call_id = data["message"]["source"]["callId"]
            entry = pending.get(call_id)
            if (
                ev.get("surfaceOp") == "append"
                and entry is not None
                and entry[0] == data.get("turn")
                and entry[1] == data.get("step")
            ):
                del pending[call_id]
    return open_turn, open_step, pending


def repair_events(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The synthetic events that close an open turn (empty when the log ends between turns)."""
    open_turn, open_step, pending = _pending_calls(events)
    if open_turn is None or not events:
        return []
    last = events[-1]
    seq, time = last["seq"] + 1, last["time"]
    closers: list[dict[str, Any]] = []
    for call_id, (turn, step, call_seq) in pending.items():
        started = call_seq is not None
        message = {
            "id": f"interrupted-tool-result-{call_id}-{seq}",
            "role": "user",
            "source": {"kind": "tool", "callId": call_id},
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": call_id,
                    "isError": True,
                    "content": [
                        {
                            "type": "text",
                            "text": OUTCOME_UNKNOWN_TEXT if started else NOT_STARTED_TEXT,
                        }
                    ],
                }
            ],
        }
        error = (
            {"name": "ToolOutcomeUnknownError", "code": TOOL_OUTCOME_UNKNOWN}
            if started
            else {"name": "ToolNotStartedError", "code": TOOL_NOT_STARTED}
        )
        event: dict[str, Any] = {
            "type": "tool/result",
            "seq": seq,
            "time": time,
            "data": {"turn": turn, "step": step, "message": message, "error": error},
            "surfaceOp": "append",
        }
        if started:
            event["sourceEventSeqs"] = [call_seq]
        closers.append(event)
        seq += 1
    if open_step is not None:
        closers.append(
            {
                "type": "step/end",
                "seq": seq,
                "time": time,
                "data": {"turn": open_turn, "step": open_step},
            }
        )
        seq += 1
    closers.append(
        {
            "type": "turn/end",
            "seq": seq,
            "time": time,
            "data": {"turn": open_turn, "reason": {"kind": "interrupted"}},
        }
    )
    return closers


def resume_marker(
    events: list[dict[str, Any]], *, clock: Callable[[], int] = now_ms
) -> list[dict[str, Any]]:
    """The ``session/end-seed {}`` a resumed session appends, unless the log ends in one."""
    if events and events[-1]["type"] == "session/end-seed":
        return []
    return [{"type": "session/end-seed", "seq": len(events), "time": clock(), "data": {}}]
