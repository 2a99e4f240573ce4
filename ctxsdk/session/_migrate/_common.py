"""What every edge shares: the raw event type, private copies, the dense-seq and header
checks, and the envelope key order the SDK writes."""

from __future__ import annotations

import copy
from typing import Any

import orjson

from ...errors import InvalidArgument, SessionFormatError
from ._stream import PACKED_ROWS

Event = dict[str, Any]
"""A raw event in the exact DSH JSON shape."""

_V01_HEADER_KEYS = frozenset(
    {
        "type",
        "version",
        "id",
        "createdAt",
        "delegationDepth",
        "cwd",
        "parentSession",
        "seedLength",
        "origin",
        "agentPreset",
    }
)


def deep_copy(value: Any) -> Any:
    """A private deep copy, so each edge may edit its working events in place."""
    try:
        return orjson.loads(orjson.dumps(value))  # ~10x faster than deepcopy on big logs
    except (TypeError, orjson.JSONEncodeError):  # a lone surrogate, too: deepcopy keeps it
        return copy.deepcopy(value)


_ENVELOPE_ORDER = ("type", "seq", "time", "data", "sourceEventSeqs", "surfaceOp", "ignorable")


def envelope_order(ev: Event) -> Event:
    """The key order ``Session.append`` writes (readers that dropped seq/time append them last)."""
    out = {k: ev[k] for k in _ENVELOPE_ORDER if k in ev}
    out.update(ev)  # any other key keeps its value, after the known ones
    return out


def check_dense(events: list[Event]) -> None:
    """Every event is an object with a string type (when it has one) and seq ``i``."""
    if not isinstance(events, list):
        raise InvalidArgument(
            f"events must be a list of event objects, not {type(events).__name__}"
        )
    for i, ev in enumerate(events):
        if type(ev) is not dict:
            raise SessionFormatError("an event must be a JSON object", seq=i)
        if "type" in ev and not isinstance(ev["type"], str):
            raise SessionFormatError(f"event type {ev['type']!r} is not a string", seq=i)
        if ev.get("type") in PACKED_ROWS:
            raise SessionFormatError(
                f"a packed {ev['type']} row: expand packed rows into assistant/chunk events "
                "first (codec.read_log does)",
                seq=i,
            )
        if ev.get("seq") != i:
            raise SessionFormatError(
                f"seq {ev.get('seq')!r} where {i} was expected: migration needs dense seqs from 0",
                seq=i,
            )


def event_data(ev: Event) -> dict[str, Any]:
    data = ev.get("data")
    if not isinstance(data, dict):
        raise SessionFormatError(f"{ev.get('type')} has no data object", seq=ev.get("seq"))
    return data


def event_time(ev: Event) -> Any:
    """The event's ``time``, which an edge copies onto the events it generates."""
    if "time" not in ev:
        raise SessionFormatError(
            f"{ev.get('type')} has no time, which the event the migration derives from it needs",
            seq=ev.get("seq"),
        )
    return ev["time"]


def check_v01_header(header: dict[str, Any]) -> None:
    extra = sorted(set(header) - _V01_HEADER_KEYS)
    if extra:
        raise SessionFormatError(
            f"v{header.get('version')} header has key(s) {', '.join(extra)} the released codec "
            "refuses; the harness would not migrate this log"
        )


def check_chain_input(header: dict[str, Any], events: list[Event], version: int) -> None:
    """What the harness's migration chain refuses in its input before it upgrades anything:
    a header ``cwd`` that is not absolute (the released header codec), a ``request/header``
    whose ``tools`` is not an array (the released payload codec). The wording is the
    harness's own."""
    cwd = header.get("cwd")
    if isinstance(cwd, str) and not cwd.startswith("/"):
        raise SessionFormatError(
            f"format v{version} header cwd must be absolute (got {cwd!r}); the harness refuses "
            "to migrate this log"
        )
    for ev in events:
        if ev.get("type") != "request/header":
            continue
        data = ev.get("data")
        hdr = data.get("header") if isinstance(data, dict) else None
        if isinstance(hdr, dict) and "tools" in hdr and not isinstance(hdr["tools"], list):
            seq = ev["seq"]
            raise SessionFormatError(
                f"request/header {seq} header tools must be an array; the harness refuses to "
                "migrate this log",
                seq=seq,
            )
