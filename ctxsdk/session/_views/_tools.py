"""``tools_df``: every tool call paired with its result (``pair_calls``, also used for the
``tool`` column of the token views)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._text import message_of, message_text
from ._columns import TOOLS, documented, frame
from ._raw import blocks, int_or_none, str_or_none, tool_result

if TYPE_CHECKING:
    import polars as pl

    from .._session_like import SessionLike


@dataclass
class Call:
    """A tool call and what the log says of its result."""

    call_id: str | None
    name: str | None
    arguments: str | None
    assistant_seq: int | None
    turn: int | None
    step: int | None
    call_seq: int | None = None
    result_seq: int | None = None
    rewrites: list[int] = field(default_factory=list)  # content-only rewrites, in order
    is_error: bool | None = None
    error_code: str | None = None
    result_chars: int | None = None
    on_surface: bool = False
    pruned: bool = False


def _calls_of(seq: int, ev: Mapping[str, Any]) -> list[Call]:
    """The calls an appended ``assistant/message`` makes."""
    data = ev["data"]
    turn, step = int_or_none(data.get("turn")), int_or_none(data.get("step"))
    return [
        Call(
            call_id=str_or_none(b.get("id")),
            name=str_or_none(b.get("name")),
            arguments=str_or_none(b.get("arguments")),
            assistant_seq=seq,
            turn=turn,
            step=step,
        )
        for b in blocks(message_of(ev))
        if b.get("type") == "tool-call"
    ]


def _answer(seq: int, ev: Mapping[str, Any], pending: dict[str, Call]) -> Call | None:
    """Record an appended ``tool/result`` on the call it answers; an orphan result (one no
    call expects) is a new ``Call`` with null call fields, returned to be listed."""
    data = ev["data"]
    block = tool_result(blocks(message_of(ev)))
    cid = str_or_none(block.get("toolCallId")) if block is not None else None
    found = pending.pop(cid, None) if cid is not None else None
    orphan = None
    if found is None:
        found = orphan = Call(
            call_id=cid,
            name=None,
            arguments=None,
            assistant_seq=None,
            turn=int_or_none(data.get("turn")),
            step=int_or_none(data.get("step")),
        )
    error = data.get("error")
    found.result_seq = seq
    found.is_error = block is not None and block.get("isError") is True
    found.error_code = str_or_none(error.get("code")) if isinstance(error, Mapping) else None
    found.result_chars = len(message_text(block))
    return orphan


def pair_calls(s: SessionLike) -> list[Call]:
    """Every tool call paired with its result by id, in the order the log makes them.

    Pairing follows the log as the harness folds it: a call is pending from its assistant
    message until a ``tool/result`` appended with its id answers it (so an id used again
    later starts a new pair). Calls still pending at the end (an interrupted log) keep a null
    result; a result no call expects (the synthetic ``TOOL_NOT_STARTED``) gets a row of its own
    with null call fields. Content-only ``tool/result`` replacements are followed from the
    original result to the node that is on the surface now.
    """
    raw = s.raw_events
    index = s.index
    out: list[Call] = []
    pending: dict[str, Call] = {}
    for seq, ev in enumerate(raw):
        etype = ev["type"]
        if etype == "assistant/message":
            if ev.get("surfaceOp") == "append":  # a (v0-v2) replacement repeats old calls
                for call in _calls_of(seq, ev):
                    out.append(call)
                    if call.call_id is not None:
                        pending[call.call_id] = call
        elif etype == "tool/call":
            started = pending.get(ev["data"].get("callId"))
            if started is not None and started.call_seq is None:
                started.call_seq = seq
        elif etype == "tool/result" and ev.get("surfaceOp") == "append":
            orphan = _answer(seq, ev, pending)
            if orphan is not None:
                out.append(orphan)
    shadowed_by = index.shadowed_by
    for call in out:
        cur = call.result_seq
        if cur is None:
            continue
        while cur in shadowed_by:
            nxt = shadowed_by[cur]
            if raw[nxt]["type"] != "tool/result":
                break  # compacted away (or replaced by some other message)
            cur = nxt  # a tool/result replacing a tool/result is a content-only rewrite
            call.rewrites.append(cur)
        call.pruned = bool(call.rewrites)
        call.on_surface = index.on_surface(cur)
    return out


@documented(TOOLS)
def tools_df(s: SessionLike) -> pl.DataFrame:
    """One row per tool call, with its result, in the order the calls were made.

    Calls pair with results by id (see spec §8's pairing rules). A call still pending at the
    end of an interrupted log has null result columns; a result that no call expects (the
    harness's synthetic ``TOOL_NOT_STARTED``) is a row with null call columns.

    ``on_surface`` is false once the result was compacted away, and for a call without a
    result. ``pruned`` marks the tool-result pruner's rewrites (and ``rewrite_tool_result``):
    a ``tool/result`` that replaces a ``tool/result``.
    """
    calls = pair_calls(s)
    data: dict[str, Sequence[Any]] = {
        "call_id": [c.call_id for c in calls],
        "name": [c.name for c in calls],
        "arguments": [c.arguments for c in calls],
        "assistant_seq": [c.assistant_seq for c in calls],
        "call_seq": [c.call_seq for c in calls],
        "result_seq": [c.result_seq for c in calls],
        "rewrite_seq": [c.rewrites[-1] if c.rewrites else None for c in calls],
        "turn": [c.turn for c in calls],
        "step": [c.step for c in calls],
        "is_error": [c.is_error for c in calls],
        "error_code": [c.error_code for c in calls],
        "result_chars": [c.result_chars for c in calls],
        "arguments_chars": [len(c.arguments) if c.arguments is not None else None for c in calls],
        "on_surface": [c.on_surface for c in calls],
        "pruned": [c.pruned for c in calls],
    }
    return frame(data, TOOLS)
