"""The legacy v0 rows the harness upgrades when it reads a log (``PersistenceCoordinator``).

The harness's read path (``snapshotStoredEvents`` / ``adoptStoredEvents`` in
``session-persistence/src/coordinator.ts``) runs, for every stored event and in this order:
refuse the retired vocabulary (``request/header-delta``, ``mode/set``, the ``fallback``
header reason); drop ``turn/start.trigger``; bring retired ``turn/end`` reasons to their
current arms; turn ``steering/message`` into a ``user/message``; give pre-identity messages
(``user/message`` without ``id``/``role``, ``assistant/message {content, provenance}``,
``tool/result {callId, content, isError}``) the current wrapper and the id
``legacy-message:<session id>:<seq>``. A shape that matches no known legacy envelope is
refused (``malformed pre-react-loop ...``), never guessed at. The ``session-format-v0-to-v1``
migration runs the same steps (plus its own), so ``_v0_to_v1`` reuses them.
"""

from __future__ import annotations

import json
from typing import Any

from ...errors import SessionFormatError

__all__ = [
    "assert_supported",
    "legacy_message_id",
    "message_id_of",
    "normalize_legacy_message",
    "normalize_steering",
    "normalize_turn_end",
    "normalize_turn_start",
    "upgrade_on_read",
]

_MAX_SAFE = 2**53 - 1


def legacy_message_id(sid: str, seq: int) -> str:
    """The id the harness mints for a message persisted before message identity."""
    return f"legacy-message:{sid}:{seq}"


def _malformed(sid: str, etype: str, seq: int, detail: str) -> SessionFormatError:
    return SessionFormatError(
        f"{detail}: the harness refuses it (session {sid!r} contains malformed "
        f"pre-react-loop {etype} at seq {seq})",
        seq=seq,
    )


def _only_keys(
    record: dict[str, Any], required: tuple[str, ...], optional: tuple[str, ...] = ()
) -> str | None:
    """None when ``record`` has every required key and nothing else; else what is wrong."""
    for key in record:
        if key not in required and key not in optional:
            return f"has unexpected member {json.dumps(key)}"
    for key in required:
        if key not in record:
            return f"lacks required member {json.dumps(key)}"
    return None


def _count(v: Any) -> bool:
    return type(v) is int and 0 <= v <= _MAX_SAFE


def assert_supported(ev: dict[str, Any], sid: str) -> None:
    """The retired vocabulary the harness refuses to read or write (``assertSupportedEvents``)."""
    etype = ev.get("type")
    seq = ev.get("seq")
    if etype in ("request/header-delta", "mode/set"):
        raise SessionFormatError(
            f"session {sid!r} contains unsupported legacy {etype} event at seq {seq}: the "
            "harness refuses it (it has no current equivalent)",
            seq=seq,
        )
    if etype == "request/header":
        data = ev.get("data")
        if isinstance(data, dict) and data.get("reason") == "fallback":
            raise SessionFormatError(
                f'session {sid!r} contains unsupported legacy request/header reason "fallback" '
                f"at seq {seq}: the harness refuses it",
                seq=seq,
            )


def normalize_turn_start(ev: dict[str, Any], sid: str) -> None:
    """Drop the obsolete ``trigger`` after checking the whole old envelope."""
    data = ev.get("data")
    if not isinstance(data, dict) or "trigger" not in data:
        return
    seq = ev["seq"]
    wrong = _only_keys(data, ("turn", "trigger"))
    trigger = data["trigger"]
    if wrong is None and not (_count(data.get("turn")) and data["turn"] >= 1):
        wrong = "has a turn that is not a positive integer"
    if wrong is None and not (
        isinstance(trigger, dict) and isinstance(trigger.get("kind"), str) and trigger["kind"]
    ):
        wrong = "has a trigger without a non-empty kind"
    if wrong is not None:
        raise _malformed(sid, "turn/start", seq, f"turn/start data {wrong}")
    ev["data"] = {"turn": data["turn"]}


def normalize_turn_end(ev: dict[str, Any], sid: str) -> None:
    """Retired ``turn/end`` reasons become their current arms; other old shapes are refused."""
    data = ev.get("data")
    if not isinstance(data, dict):
        return  # the replay reports a turn/end without data
    seq = ev["seq"]

    def bad(detail: str) -> SessionFormatError:
        return _malformed(sid, "turn/end", seq, f"turn/end {detail}")

    wrong = _only_keys(data, ("turn", "reason"))
    if wrong is not None:
        raise bad(f"data {wrong}")
    if not (_count(data["turn"]) and data["turn"] >= 1):
        raise bad("turn must be a positive integer")
    reason = data["reason"]
    if not isinstance(reason, dict) or not isinstance(reason.get("kind"), str):
        raise bad("reason must be an object with a string kind")
    kind = reason["kind"]
    current: dict[str, Any]
    if kind in ("completed", "blocked", "max-tokens", "interrupted"):
        wrong = _only_keys(reason, ("kind",))
        if wrong is not None:
            raise bad(f"reason {wrong}")
        return
    if kind == "aborted":
        if "reason" in reason:
            return
        wrong = _only_keys(reason, ("kind",))
        if wrong is not None:
            raise bad(f"reason {wrong}")
        current = {"kind": "aborted", "reason": {"kind": "legacy"}}
    elif kind == "disposed":
        wrong = _only_keys(reason, ("kind",))
        if wrong is not None:
            raise bad(f"reason {wrong}")
        current = {"kind": "aborted", "reason": {"kind": "disposed"}}
    elif kind == "error":
        if "error" in reason:
            return
        current = _legacy_error_reason(reason, bad)
    else:
        return
    ev["data"] = {**data, "reason": current}


def _legacy_error_reason(reason: dict[str, Any], bad: Any) -> dict[str, Any]:
    if not _count(reason.get("step")):
        raise bad("error reason step must be a non-negative integer")
    if "failure" in reason:
        failure = reason["failure"]
        wrong = _only_keys(reason, ("kind", "step", "failure"))
        if wrong is not None:
            raise bad(f"reason {wrong}")
        if not isinstance(failure, dict):
            raise bad("failure must be an object")
        wrong = _only_keys(
            failure, ("message", "code"), ("status", "providerRetryAfterMs", "requestId")
        )
        if wrong is not None:
            raise bad(f"failure {wrong}")
        if not (isinstance(failure["message"], str) and isinstance(failure["code"], str)):
            raise bad("failure message and code must be strings")
        return {"kind": "error", "error": failure}
    keys = ("kind", "step", "message") + (("code",) if "code" in reason else ())
    wrong = _only_keys(reason, keys)
    code = reason.get("code")
    if wrong is None and (
        not isinstance(reason["message"], str) or (code is not None and not isinstance(code, str))
    ):
        wrong = "has a message or code that is not a string"
    if wrong is not None:
        raise bad(f"reason {wrong}")
    return {
        "kind": "error",
        "error": {
            "message": reason["message"],
            "code": code if isinstance(code, str) else "UNKNOWN",
        },
    }


def normalize_steering(ev: dict[str, Any], sid: str) -> None:
    """The removed ``steering/message`` becomes the ``user/message`` it stood for."""
    if ev.get("type") != "steering/message":
        return
    seq = ev["seq"]
    data = ev.get("data")
    if not isinstance(data, dict):
        raise _malformed(sid, "steering/message", seq, "steering/message has no data object")
    if "message" in data:
        wrong = _only_keys(data, ("turn", "message"))
        if wrong is None and not _count(data["turn"]):
            wrong = "has a turn that is not a non-negative integer"
        if wrong is None and not isinstance(data["message"], dict):
            wrong = "has a message that is not an object"
        if wrong is not None:
            raise _malformed(sid, "steering/message", seq, f"steering/message data {wrong}")
        ev["type"], ev["data"] = "user/message", data["message"]
        return
    wrong = _only_keys(data, ("turn", "content", "source"))
    if wrong is None and not _count(data["turn"]):
        wrong = "has a turn that is not a non-negative integer"
    if wrong is not None:
        raise _malformed(sid, "steering/message", seq, f"steering/message data {wrong}")
    message = {k: v for k, v in data.items() if k != "turn"}
    message["id"] = legacy_message_id(sid, seq)
    message["role"] = "user"
    ev["type"], ev["data"] = "user/message", message


def normalize_legacy_message(ev: dict[str, Any], sid: str, message_ids: dict[int, str]) -> None:
    """Pre-identity message shapes get the current wrapper and a legacy id.

    Current-looking malformed events are left as they are, so the replay refuses them
    instead of disguising damage as legacy data.
    """
    data = ev.get("data")
    if not isinstance(data, dict):
        return
    etype = ev.get("type")
    seq = ev["seq"]
    if etype == "user/message":
        if "id" in data or "role" in data or "message" in data:
            return
        if "content" not in data or "source" not in data:
            return
        ev["data"] = {**data, "id": legacy_message_id(sid, seq), "role": "user"}
    elif etype == "assistant/message":
        if "message" in data or "content" not in data or "provenance" not in data:
            return
        rest = {k: v for k, v in data.items() if k not in ("content", "provenance")}
        provenance = data["provenance"]
        if not isinstance(provenance, dict):
            raise SessionFormatError(
                "legacy assistant/message provenance must be an object", seq=seq
            )
        rest["message"] = {
            "id": legacy_message_id(sid, seq),
            "role": "assistant",
            "content": data["content"],
            "source": {**provenance, "kind": "model"},
        }
        ev["data"] = rest
    elif etype == "tool/result":
        if "message" in data or not {"callId", "content", "isError"} <= data.keys():
            return
        call_id, is_error = data["callId"], data["isError"]
        if not isinstance(call_id, str) or not isinstance(is_error, bool):
            return
        op = ev.get("surfaceOp")
        if isinstance(op, dict) and op.get("op") == "replace":
            start = op.get("start")
            # A legacy rewrite keeps the id of the result it replaces.
            mid = message_ids.get(start) if type(start) is int else None
            if mid is None:
                raise SessionFormatError(
                    f"tool/result {seq} replacement cites a message without identity", seq=seq
                )
        else:
            mid = legacy_message_id(sid, seq)
        rest = {k: v for k, v in data.items() if k not in ("callId", "content", "isError")}
        rest["message"] = {
            "id": mid,
            "role": "user",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": call_id,
                    "content": data["content"],
                    "isError": is_error,
                }
            ],
            "source": {"kind": "tool", "callId": call_id},
        }
        ev["data"] = rest


def message_id_of(ev: dict[str, Any]) -> str | None:
    data = ev.get("data")
    if not isinstance(data, dict):
        return None
    msg = data if ev.get("type") == "user/message" else data.get("message")
    mid = msg.get("id") if isinstance(msg, dict) else None
    return mid if isinstance(mid, str) else None


_TOUCHED = frozenset(
    {
        "request/header-delta",
        "mode/set",
        "request/header",
        "turn/start",
        "turn/end",
        "steering/message",
        "user/message",
        "assistant/message",
        "tool/result",
    }
)


def upgrade_on_read(events: list[dict[str, Any]], sid: str) -> None:
    """Upgrade a v0 log's legacy rows in place, as the harness's coordinator does on load.

    ``events`` are freshly decoded dicts the caller owns; an event whose envelope is not an
    object is left for the replay to report.
    """
    message_ids: dict[int, str] = {}
    for ev in events:
        if type(ev) is not dict or type(ev.get("seq")) is not int:
            continue
        etype = ev.get("type")
        if type(etype) is not str or etype not in _TOUCHED:
            continue
        assert_supported(ev, sid)
        if etype == "turn/start":
            normalize_turn_start(ev, sid)
            continue
        if etype == "turn/end":
            normalize_turn_end(ev, sid)
            continue
        normalize_steering(ev, sid)
        normalize_legacy_message(ev, sid, message_ids)
        mid = message_id_of(ev)
        if mid is not None:
            message_ids[ev["seq"]] = mid
