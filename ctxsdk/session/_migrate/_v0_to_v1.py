"""``session-format-v0-to-v1``: the identity layout plus the bounded legacy normalizations."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ...errors import SessionFormatError
from .._codec._legacy import (
    assert_supported,
    message_id_of,
    normalize_legacy_message,
    normalize_steering,
    normalize_turn_end,
    normalize_turn_start,
)
from ._common import Event, check_v01_header

_COMPACT_RENAMES = {
    "compact/start": "compaction/start",
    "compact/summary": "compaction/summary",
    "compact/end": "compaction/end",
    "compact/prune": "compaction/prune",
}


@dataclass
class _LegacyState:
    message_ids: dict[int, str] = field(default_factory=dict)
    retry_ids: dict[str, str] = field(default_factory=dict)
    compaction_id: str | None = None


def v0_to_v1(header: dict[str, Any], events: list[Event]) -> tuple[dict[str, Any], list[Event]]:
    check_v01_header(header)
    sid = header["id"]
    state = _LegacyState()
    for ev in events:
        _normalize_v0(ev, sid, state)
    header["version"] = 1
    return header, events


def _normalize_v0(ev: Event, sid: str, state: _LegacyState) -> None:
    """The bounded legacy normalizations of ``session-format-v0-to-v1``, in its order."""
    seq = ev["seq"]
    if ev.get("type") in _COMPACT_RENAMES:
        ev["type"] = _COMPACT_RENAMES[ev["type"]]
    assert_supported(ev, sid)
    etype = ev.get("type")
    if not isinstance(ev.get("data"), dict):
        return  # nothing to normalize; the fold reports a malformed event
    if etype == "turn/start":
        normalize_turn_start(ev, sid)
    elif etype == "turn/end":
        normalize_turn_end(ev, sid)
    elif etype == "request/header":
        hdr = ev["data"].get("header")
        if isinstance(hdr, dict) and "messagePrefix" in hdr:
            if not isinstance(hdr["messagePrefix"], list):
                raise SessionFormatError("malformed request/header messagePrefix", seq=seq)
            del hdr["messagePrefix"]  # an obsolete duplicate of the surface messages
    elif etype == "steering/message":
        normalize_steering(ev, sid)
        etype = ev["type"]
    elif etype == "llm/retry":
        data = ev["data"]
        chain = "\0".join(
            json.dumps(data.get(k)) for k in ("turn", "step", "provider", "policyKey")
        )
        rid = data.get("retryId")
        if isinstance(rid, str) and rid:
            state.retry_ids[chain] = rid
        elif "retryId" not in data:
            data["retryId"] = state.retry_ids.setdefault(chain, f"legacy-retry:{sid}:{seq}")
    data = ev.get("data")
    if isinstance(data, dict):  # a wrapped steering message may have been anything
        _normalize_compaction_ids(etype, data, sid, seq, state)
        normalize_legacy_message(ev, sid, state.message_ids)
    mid = message_id_of(ev)
    if mid is not None:
        state.message_ids[seq] = mid


def _normalize_compaction_ids(
    etype: Any, data: dict[str, Any], sid: str, seq: int, state: _LegacyState
) -> None:
    """Legacy compaction brackets without ids get one deterministic id per bracket."""
    if etype == "session/end-seed":
        state.compaction_id = None
    elif etype == "compaction/start":
        existing = data.get("compactionId")
        if isinstance(existing, str) and existing:
            state.compaction_id = existing
        elif "compactionId" not in data:
            state.compaction_id = data["compactionId"] = f"legacy-compaction:{sid}:{seq}"
    elif state.compaction_id is not None:
        if etype in ("compaction/summary", "compaction/end"):
            data.setdefault("compactionId", state.compaction_id)
            if etype == "compaction/end":
                state.compaction_id = None
        elif etype == "user/message":
            src = data.get("source")
            if (
                isinstance(src, dict)
                and src.get("kind") == "plugin"
                and src.get("plugin") == "compact"
                and "compactionId" not in src
            ):
                src["compactionId"] = state.compaction_id
