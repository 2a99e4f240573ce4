"""``session-format-v0-to-v1``: the identity layout plus the bounded legacy normalizations."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ...errors import SessionFormatError
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


def _legacy_id(sid: str, seq: int) -> str:
    return f"legacy-message:{sid}:{seq}"


def _normalize_v0(ev: Event, sid: str, state: _LegacyState) -> None:
    """The bounded legacy normalizations of ``session-format-v0-to-v1``, in its order."""
    seq = ev["seq"]
    etype = ev.get("type")
    if etype in _COMPACT_RENAMES:
        etype = ev["type"] = _COMPACT_RENAMES[etype]
    if etype in ("request/header-delta", "mode/set"):
        raise SessionFormatError(
            f"legacy {etype} event: the harness refuses to migrate it (it has no v1 equivalent)",
            seq=seq,
        )
    data = ev.get("data")
    if not isinstance(data, dict):
        return  # nothing to normalize; the fold reports a malformed event
    if etype == "request/header" and data.get("reason") == "fallback":
        raise SessionFormatError(
            "request/header reason 'fallback' was retired; the harness refuses to migrate it",
            seq=seq,
        )
    if etype == "turn/start":
        data.pop("trigger", None)
    elif etype == "turn/end":
        _normalize_turn_end(data)
    elif etype == "request/header":
        hdr = data.get("header")
        if isinstance(hdr, dict) and "messagePrefix" in hdr:
            if not isinstance(hdr["messagePrefix"], list):
                raise SessionFormatError("malformed request/header messagePrefix", seq=seq)
            del hdr["messagePrefix"]  # an obsolete duplicate of the surface messages
    elif etype == "steering/message":
        ev["type"] = etype = "user/message"
        if "message" in data:
            ev["data"] = data = data["message"]
        else:
            if set(data) != {"turn", "content", "source"}:
                raise SessionFormatError(
                    "legacy steering/message data must be exactly {turn, content, source}", seq=seq
                )
            del data["turn"]
            data["id"] = _legacy_id(sid, seq)
            data["role"] = "user"
    elif etype == "llm/retry":
        chain = "\0".join(
            json.dumps(data.get(k)) for k in ("turn", "step", "provider", "policyKey")
        )
        rid = data.get("retryId")
        if isinstance(rid, str) and rid:
            state.retry_ids[chain] = rid
        elif "retryId" not in data:
            data["retryId"] = state.retry_ids.setdefault(chain, f"legacy-retry:{sid}:{seq}")
    if isinstance(data, dict):  # a wrapped steering message may have been anything
        _normalize_compaction_ids(etype, data, sid, seq, state)
        _normalize_legacy_message(ev, etype, data, sid, state)
    mid = _message_id(etype, ev.get("data"))
    if mid is not None:
        state.message_ids[seq] = mid


def _normalize_turn_end(data: dict[str, Any]) -> None:
    """Retired ``turn/end`` reasons become their current arms (other shapes stay as they are)."""
    reason = data.get("reason")
    if not isinstance(reason, dict):
        return
    kind = reason.get("kind")
    if kind == "aborted" and set(reason) == {"kind"}:
        data["reason"] = {"kind": "aborted", "reason": {"kind": "legacy"}}
    elif kind == "disposed" and set(reason) == {"kind"}:
        data["reason"] = {"kind": "aborted", "reason": {"kind": "disposed"}}
    elif kind == "error" and "error" not in reason:
        if isinstance(reason.get("failure"), dict):
            data["reason"] = {"kind": "error", "error": reason["failure"]}
        elif isinstance(reason.get("message"), str):
            code = reason.get("code")
            data["reason"] = {
                "kind": "error",
                "error": {
                    "message": reason["message"],
                    "code": code if isinstance(code, str) else "UNKNOWN",
                },
            }


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


def _normalize_legacy_message(
    ev: Event, etype: Any, data: dict[str, Any], sid: str, state: _LegacyState
) -> None:
    """Pre-wrapper message shapes get the current ``Message`` wrapper and a legacy id."""
    seq = ev["seq"]
    if etype == "user/message":
        if not ({"id", "role", "message"} & set(data)) and {"content", "source"} <= set(data):
            data["id"] = _legacy_id(sid, seq)
            data["role"] = "user"
    elif etype == "assistant/message":
        if "message" not in data and "content" in data and "provenance" in data:
            content, source = data.pop("content"), data.pop("provenance")
            if not isinstance(source, dict):
                raise SessionFormatError(
                    "legacy assistant/message provenance is not an object", seq=seq
                )
            data["message"] = {
                "id": _legacy_id(sid, seq),
                "role": "assistant",
                "content": content,
                "source": {**source, "kind": "model"},
            }
    elif etype == "tool/result":
        call_id, is_error = data.get("callId"), data.get("isError")
        if (
            "message" in data
            or "content" not in data
            or not isinstance(call_id, str)
            or not isinstance(is_error, bool)
        ):
            return
        op = ev.get("surfaceOp")
        if isinstance(op, dict) and op.get("op") == "replace":
            # A legacy rewrite keeps the id of the result it replaces.
            start = op.get("start")
            mid = state.message_ids.get(start) if type(start) is int else None
            if mid is None:
                raise SessionFormatError(
                    "legacy tool/result replacement cites a message without an id", seq=seq
                )
        else:
            mid = _legacy_id(sid, seq)
        content = data.pop("content")
        del data["callId"], data["isError"]
        data["message"] = {
            "id": mid,
            "role": "user",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": call_id,
                    "content": content,
                    "isError": is_error,
                }
            ],
            "source": {"kind": "tool", "callId": call_id},
        }


def _message_id(etype: Any, data: Any) -> str | None:
    if not isinstance(data, dict):
        return None
    msg = data if etype == "user/message" else data.get("message")
    mid = msg.get("id") if isinstance(msg, dict) else None
    return mid if isinstance(mid, str) else None
