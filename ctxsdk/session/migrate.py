"""Upgrading a DSH log v0 → v1 → v2 → v3, one released edge at a time (spec §16).

Each edge does what the harness's ``session-format-vN-to-vN+1`` package does to the logical
log, on raw event dicts in the exact DSH JSON shape (the header is a dict too):

- **v0 → v1** is an identity layout plus the bounded legacy normalizations (``steering/message``,
  ``compact/*``, ``turn/start.trigger``, retired ``turn/end`` reasons, ``messagePrefix``, legacy
  message wrappers and ids, retry and compaction ids); retired ``request/header-delta``,
  ``mode/set`` and the ``fallback`` header reason are refused.
- **v1 → v2** removes top-level ``assistant/chunk`` events, embeds each attempt's chunks as the
  compact ``stream`` of its ``assistant/message`` (an unclaimed attempt becomes an
  ``assistant/attempt`` at its last chunk), closes the legacy restart pattern as an interrupted
  turn, renumbers densely and remaps every declared reference; ``seedLength`` becomes
  ``isSeeded`` and the fork cut gets a ``session/end-seed {inherited: true}`` marker.
- **v2 → v3** promotes the system prompt to a protected ``system/message`` head (node 0), drops
  ``request/header.header.system``, renames replace keys to ``startSeq/endSeq`` and the code-mode
  vocabulary to PTC.

Nothing is ever downgraded (the harness has no downgrade) and the inputs are never modified.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..errors import SessionFormatError, UnsupportedVersion
from .codec import KNOWN_VERSIONS, decode_source_seqs, encode_source_seqs, validate_header

__all__ = [
    "LATEST_VERSION",
    "expand_stream",
    "migrate",
    "pack_stream",
    "system_message_id",
    "upgrade_to_latest",
]

LATEST_VERSION = 3

Event = dict[str, Any]

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
_SURFACE = frozenset({"user/message", "assistant/message", "tool/result", "system/message"})
_PACKED_ROWS = frozenset({"text-chunks", "reasoning-chunks", "tool-call-chunks"})
_COMPACT_RENAMES = {
    "compact/start": "compaction/start",
    "compact/summary": "compaction/summary",
    "compact/end": "compaction/end",
    "compact/prune": "compaction/prune",
}
# Events that settle an open assistant attempt (v1-to-v2 ``closesAttempt``).
_CLOSES_ATTEMPT = frozenset({"turn/end", "step/end", "llm/retry", "llm/retry-started"})
_PTC_RENAMES = {
    "tool/code-dispatch-start": "tool/ptc-dispatch-start",
    "tool/code-dispatch": "tool/ptc-dispatch",
}
_SYSTEM_PLUGIN = "@deepseek-ai/dsh-system-prompt"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


# --- public API ------------------------------------------------------------------------------


def migrate(
    header: dict[str, Any], events: list[dict[str, Any]], to_version: int
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Upgrade a log to ``to_version`` step by step, as the harness's migration packages do.

    Returns a new header and a new event list; the arguments are left untouched. Raises
    ``SessionFormatError`` (with the offending ``seq``) where the harness refuses to migrate.
    """
    version = validate_header(header)
    if type(to_version) is not int or to_version not in KNOWN_VERSIONS:
        raise UnsupportedVersion(
            f"cannot migrate to format version {to_version!r}: ctxsdk knows versions "
            f"{', '.join(map(str, KNOWN_VERSIONS))}"
        )
    if to_version < version:
        raise SessionFormatError(
            f"cannot migrate a v{version} log down to v{to_version}: the harness has no downgrade; "
            f"keep and read the older generation file (session.v{to_version}.jsonl) instead"
        )
    new_header, new_events = _deep_copy(header), _deep_copy(events)
    _check_dense(new_events)
    while version < to_version:
        new_header, new_events = _EDGES[version](new_header, new_events)
        version += 1
    return new_header, [_envelope_order(ev) for ev in new_events]


def upgrade_to_latest(
    header: dict[str, Any], events: list[dict[str, Any]]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``migrate`` to the newest format this SDK knows (v3)."""
    return migrate(header, events, LATEST_VERSION)


def pack_stream(chunks: Iterable[tuple[int, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Compact ``(time, chunk)`` pairs into v2 stream records (``AssistantStreamAccumulator``)."""
    return _pack([(None, t, c) for t, c in chunks])


def expand_stream(stream: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """The exact ``(time, chunk)`` sequence a v2/v3 embedded ``stream`` stands for."""
    out: list[tuple[int, dict[str, Any]]] = []
    for rec in stream:
        rtype = rec.get("type")
        if rtype == "chunk":
            out.append((rec["time"], rec["chunk"]))
            continue
        if rtype not in _PACKED_ROWS:
            raise SessionFormatError(f"unknown assistant stream record type {rtype!r}")
        members = rec["args"] if rtype == "tool-call-chunks" else rec["texts"]
        dt = rec["dt"]
        if len(dt) != len(members) - 1:
            raise SessionFormatError(f"{rtype} stream record needs len(dt) == members - 1")
        t = rec["time0"]
        for k, member in enumerate(members):
            if k:
                t += dt[k - 1]
            chunk: dict[str, Any]
            if rtype == "tool-call-chunks":
                chunk = {"type": "tool-call-delta", "index": rec["index"], "id": rec["id"]}
                if "name" in rec:
                    chunk["name"] = rec["name"]
                chunk["argumentsDelta"] = member
            else:
                kind = "text-delta" if rtype == "text-chunks" else "reasoning-delta"
                chunk = {"type": kind, "index": rec["index"], "text": member}
            out.append((t, chunk))
    return out


# --- shared helpers --------------------------------------------------------------------------


def _deep_copy(value: Any) -> Any:
    """A private deep copy, so each edge may edit its working events in place."""
    try:
        return orjson.loads(orjson.dumps(value))  # ~10x faster than deepcopy on big logs
    except (TypeError, orjson.JSONEncodeError):
        return copy.deepcopy(value)


_ENVELOPE_ORDER = ("type", "seq", "time", "data", "sourceEventSeqs", "surfaceOp", "ignorable")


def _envelope_order(ev: Event) -> Event:
    """The key order ``Session.append`` writes (readers that dropped seq/time append them last)."""
    out = {k: ev[k] for k in _ENVELOPE_ORDER if k in ev}
    out.update(ev)  # any other key keeps its value, after the known ones
    return out


def _check_dense(events: list[Event]) -> None:
    for i, ev in enumerate(events):
        if type(ev) is not dict:
            raise SessionFormatError("an event must be a JSON object", seq=i)
        if ev.get("type") in _PACKED_ROWS:
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


def _data(ev: Event) -> dict[str, Any]:
    data = ev.get("data")
    if not isinstance(data, dict):
        raise SessionFormatError(f"{ev.get('type')} has no data object", seq=ev.get("seq"))
    return data


def _renumber(out: list[tuple[int | None, Event]]) -> list[Event]:
    """Give every emitted event its dense target seq and remap source events' references.

    ``out`` holds (source seq, event) in target order; generated events have no source seq
    and already carry target-coordinate references.
    """
    mapping = {origin: i for i, (origin, _) in enumerate(out) if origin is not None}
    events: list[Event] = []
    for i, (origin, ev) in enumerate(out):
        if origin is not None:
            _remap_refs(ev, origin, i, mapping)
        ev["seq"] = i
        events.append(ev)
    return events


def _remap_refs(ev: Event, origin: int, at: int, mapping: dict[int, int]) -> None:
    """Rewrite the same-log seq references the harness declares (and no other numbers)."""
    etype = ev.get("type")

    def one(value: Any, what: str) -> int:
        if type(value) is not int:
            raise SessionFormatError(
                f"{etype} {what} must be an integer seq, got {value!r}", seq=origin
            )
        mapped = mapping.get(value)
        if mapped is None:
            raise SessionFormatError(
                f"{etype} {what} cites seq {value}, an event the migration consumed (a top-level "
                "assistant/chunk) or that does not exist; the harness refuses to redirect it",
                seq=origin,
            )
        if mapped >= at:
            raise SessionFormatError(
                f"{etype} {what} cites seq {value}, not an earlier event", seq=origin
            )
        return mapped

    def many(value: Any, what: str) -> list[int]:
        if not isinstance(value, list):
            raise SessionFormatError(f"{etype} {what} must be an array of seqs", seq=origin)
        return [one(v, what) for v in value]

    if "sourceEventSeqs" in ev:
        seqs = decode_source_seqs(ev["sourceEventSeqs"], origin)
        ev["sourceEventSeqs"] = encode_source_seqs([one(s, "sourceEventSeqs") for s in seqs])
    op = ev.get("surfaceOp")
    if isinstance(op, dict):
        if set(op) != {"op", "start", "end"} or op.get("op") != "replace":
            raise SessionFormatError(
                f"surfaceOp {op!r} is not exactly {{op:'replace', start, end}}", seq=origin
            )
        op["start"], op["end"] = (
            one(op["start"], "surfaceOp.start"),
            one(op["end"], "surfaceOp.end"),
        )
    data = ev.get("data")
    if not isinstance(data, dict):
        return
    if etype == "command/done" and "sourceEventSeq" in data:
        data["sourceEventSeq"] = one(data["sourceEventSeq"], "data.sourceEventSeq")
    elif etype in ("compaction/summary", "compaction/prune"):
        rng = data.get("shadowedRange")
        if isinstance(rng, dict):
            for key in ("start", "end"):
                if key in rng:
                    rng[key] = one(rng[key], f"data.shadowedRange.{key}")
        if "shadowedSeqs" in data:
            data["shadowedSeqs"] = many(data["shadowedSeqs"], "data.shadowedSeqs")
    elif etype in ("session/title", "session/title-llm-request") and "messageSeqs" in data:
        data["messageSeqs"] = many(data["messageSeqs"], "data.messageSeqs")


def _pack(items: list[tuple[int | None, Any, Any]]) -> list[dict[str, Any]]:
    """Compact timed chunks into stream records exactly as ``AssistantStreamAccumulator`` does.

    Runs of text/reasoning deltas (same index) and tool-call deltas (same index, id and name,
    name presence included) pack from length 1; everything else is a raw ``chunk`` record,
    including tool deltas with an empty id or name. Token boundaries are never joined.
    """
    records: list[dict[str, Any]] = []
    last = 0  # time of the last member of records[-1] when that is a run
    for seq, time, chunk in items:
        if type(time) is not int:
            raise SessionFormatError(f"chunk time must be an integer, got {time!r}", seq=seq)
        if not isinstance(chunk, dict):
            raise SessionFormatError("assistant/chunk has no chunk object", seq=seq)
        ctype = chunk.get("type")
        prev = records[-1] if records else None
        if ctype in ("text-delta", "reasoning-delta", "tool-call-delta"):
            index = chunk.get("index")
            if type(index) is not int or index < 0:
                raise SessionFormatError(f"{ctype} index must be a non-negative integer", seq=seq)
        if ctype in ("text-delta", "reasoning-delta"):
            text = chunk.get("text")
            if not isinstance(text, str):
                raise SessionFormatError(f"{ctype} text must be a string", seq=seq)
            rtype = "text-chunks" if ctype == "text-delta" else "reasoning-chunks"
            if prev is not None and prev["type"] == rtype and prev["index"] == chunk["index"]:
                prev["dt"].append(time - last)
                prev["texts"].append(text)
            else:
                records.append(
                    {
                        "type": rtype,
                        "time0": time,
                        "index": chunk["index"],
                        "dt": [],
                        "texts": [text],
                    }
                )
            last = time
        elif ctype == "tool-call-delta":
            cid, args = chunk.get("id"), chunk.get("argumentsDelta")
            if not isinstance(cid, str) or not isinstance(args, str):
                raise SessionFormatError(
                    "tool-call-delta id and argumentsDelta must be strings", seq=seq
                )
            if "name" in chunk and not isinstance(chunk["name"], str):
                raise SessionFormatError("tool-call-delta name must be a string", seq=seq)
            if cid == "" or chunk.get("name") == "":
                records.append({"type": "chunk", "time": time, "chunk": chunk})
                continue
            if (
                prev is not None
                and prev["type"] == "tool-call-chunks"
                and prev["index"] == chunk["index"]
                and prev["id"] == cid
                and ("name" in prev) == ("name" in chunk)
                and prev.get("name") == chunk.get("name")
            ):
                prev["dt"].append(time - last)
                prev["args"].append(args)
            else:
                rec: dict[str, Any] = {
                    "type": "tool-call-chunks",
                    "time0": time,
                    "index": chunk["index"],
                    "dt": [],
                    "id": cid,
                }
                if "name" in chunk:
                    rec["name"] = chunk["name"]
                rec["args"] = [args]
                records.append(rec)
            last = time
        else:
            # block-start/end, usage, finish (and any newer chunk kind, kept verbatim).
            records.append({"type": "chunk", "time": time, "chunk": chunk})
    return records


# --- v0 → v1 ---------------------------------------------------------------------------------


@dataclass
class _LegacyState:
    message_ids: dict[int, str] = field(default_factory=dict)
    retry_ids: dict[str, str] = field(default_factory=dict)
    compaction_id: str | None = None


def _v0_to_v1(header: dict[str, Any], events: list[Event]) -> tuple[dict[str, Any], list[Event]]:
    _check_v01_header(header)
    sid = header["id"]
    state = _LegacyState()
    for ev in events:
        _normalize_v0(ev, sid, state)
    header["version"] = 1
    return header, events


def _check_v01_header(header: dict[str, Any]) -> None:
    extra = sorted(set(header) - _V01_HEADER_KEYS)
    if extra:
        raise SessionFormatError(
            f"v{header.get('version')} header has key(s) {', '.join(extra)} the released codec "
            "refuses; the harness would not migrate this log"
        )


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


# --- v1 → v2 ---------------------------------------------------------------------------------


@dataclass
class _Attempt:
    turn: Any
    step: Any
    chunks: list[Event] = field(default_factory=list)
    terminal: bool = False


class _V1ToV2:
    """``session-format-v1-to-v2``: embed chunk attempts, close legacy restarts, mark the cut.

    Events are emitted in source order with chunks taken out; an unclaimed attempt lands at
    its last chunk's position (events after that chunk wait in ``buffer`` until the attempt
    settles), a claimed one rides on its ``assistant/message``, which keeps its position.
    """

    def __init__(self, header: dict[str, Any]) -> None:
        self.seeded = "seedLength" in header
        self.cut: int = header.get("seedLength", 0)
        self.target_cut: int | None = None if self.seeded else 0
        self.out: list[tuple[int | None, Event]] = []
        self.pending: _Attempt | None = None
        self.buffer: list[Event] = []
        self.open_turn: Any = None
        self.open_step: Any = None
        self.previous: Event | None = None
        self.last_time: int = header["createdAt"]

    def run(self, events: list[Event]) -> list[Event]:
        if self.cut > len(events):
            raise SessionFormatError(
                f"header seedLength {self.cut} exceeds the log's {len(events)} events"
            )
        for ev in events:
            self.feed(ev)
        self.finish_attempt()
        if self.seeded and self.target_cut is None:
            self.target_cut = len(self.out)
            self.out.append((None, _end_seed(self.last_time)))
        return _renumber(self.out)

    def feed(self, ev: Event) -> None:
        etype = ev.get("type")
        seq = ev["seq"]
        interrupted = self.legacy_interrupted(ev)
        if etype == "turn/start" and self.open_turn is not None and interrupted is None:
            raise SessionFormatError(
                f"turn/start while turn {self.open_turn} was never ended (not the legacy "
                "next-turn restart pattern); the harness refuses to migrate this log",
                seq=seq,
            )
        self.observe(ev)
        self.last_time = ev.get("time", self.last_time)
        if interrupted is not None:
            self.finish_attempt()
            self.emit_generated(seq, interrupted)
        goal = _split_legacy_goal(ev)
        if goal is not None:
            self.emit_generated(seq, goal)
            self.emit_source(ev)
        elif etype == "assistant/chunk":
            self.chunk(ev)
        elif etype == "assistant/message":
            self.message(ev)
        elif etype in _CLOSES_ATTEMPT:
            self.finish_attempt()
            self.emit_source(ev)
        elif self.pending is not None:
            self.buffer.append(ev)
        else:
            self.emit_source(ev)

    # legacy restart: a non-empty next-turn splice, then turn/start n+1 with turn n still open
    def legacy_interrupted(self, ev: Event) -> Event | None:
        if ev.get("type") != "turn/start" or self.open_turn is None or self.open_step is not None:
            return None
        data, prev = ev.get("data"), self.previous
        if not isinstance(data, dict) or data.get("turn") != self.open_turn + 1:
            return None
        if prev is None or prev.get("type") != "agent/inbox/spliced":
            return None
        splice = prev.get("data")
        if not isinstance(splice, dict) or splice.get("target") != "next-turn":
            return None
        if not isinstance(splice.get("inserted"), list) or not splice["inserted"]:
            return None
        return {
            "type": "turn/end",
            "seq": -1,
            "time": ev["time"],
            "data": {"turn": self.open_turn, "reason": {"kind": "interrupted"}},
        }

    def observe(self, ev: Event) -> None:
        etype, data = ev.get("type"), ev.get("data")
        data = data if isinstance(data, dict) else {}
        if etype == "turn/start":
            self.open_turn, self.open_step = data.get("turn"), None
        elif etype == "turn/end":
            self.open_turn = self.open_step = None
        elif etype == "step/start":
            self.open_step = data.get("step")
        elif etype == "step/end":
            self.open_step = None
        self.previous = ev

    def chunk(self, ev: Event) -> None:
        data = _data(ev)
        turn, step = data.get("turn"), data.get("step")
        pending = self.pending
        if pending is not None and (
            pending.terminal or (pending.turn, pending.step) != (turn, step)
        ):
            self.finish_attempt()
        elif pending is not None:
            self.flush()
        if self.pending is None:
            self.pending = _Attempt(turn, step)
        self.check_cut(self.pending, ev["seq"])
        self.pending.chunks.append(ev)
        chunk = data.get("chunk")
        if isinstance(chunk, dict) and chunk.get("type") == "finish":
            self.pending.terminal = True

    def message(self, ev: Event) -> None:
        data, seq = _data(ev), ev["seq"]
        turn, step = data.get("turn"), data.get("step")
        pending = self.pending
        if pending is not None and (pending.turn, pending.step) != (turn, step):
            self.finish_attempt()
            self.emit_source(_with_stream(ev, []))
            return
        raw = ev.get("sourceEventSeqs")
        if raw is None:  # absent = the stream is unknown
            if pending is not None:
                raise SessionFormatError(
                    "assistant/message does not cite its v1 chunk attempt in sourceEventSeqs; "
                    "the harness refuses to guess which chunks it owns",
                    seq=seq,
                )
            self.emit_source(_with_stream(ev, []))
            return
        sources = decode_source_seqs(raw, seq)
        if not sources:  # [] = a known empty stream; any open attempt was a separate one
            self.finish_attempt()
            self.emit_source(_with_stream(ev, []))
            return
        if pending is None or [c["seq"] for c in pending.chunks] != sources:
            raise SessionFormatError(
                "assistant/message sourceEventSeqs are not exactly one complete ordered chunk "
                "attempt; the harness refuses to migrate it",
                seq=seq,
            )
        self.check_cut(pending, seq)
        self.flush()
        self.emit_source(_with_stream(ev, pending.chunks))
        self.pending = None

    def finish_attempt(self) -> None:
        pending = self.pending
        if pending is None:
            return
        last = pending.chunks[-1]
        attempt = {
            "type": "assistant/attempt",
            "seq": -1,
            "time": last["time"],
            "data": {
                "turn": pending.turn,
                "step": pending.step,
                "stream": _stream_of(pending.chunks),
            },
        }
        self.emit_generated(last["seq"], attempt)
        self.flush()
        self.pending = None

    def flush(self) -> None:
        for ev in self.buffer:
            self.emit_source(ev)
        self.buffer.clear()

    def check_cut(self, attempt: _Attempt, member: int) -> None:
        first = attempt.chunks[0]["seq"] if attempt.chunks else member
        if (first < self.cut) != (member < self.cut):
            raise SessionFormatError(
                f"the inherited seed cut at seq {self.cut} splits one assistant attempt; the "
                "harness refuses to migrate this fork",
                seq=member,
            )

    def emit_source(self, ev: Event) -> None:
        if self.seeded and ev["seq"] == self.cut and ev.get("type") == "session/end-seed":
            ev["data"] = {"inherited": True}  # the v2 tag that marks the fork cut
        self.ensure_cut(ev["seq"], ev.get("time", self.last_time), ev.get("type"))
        self.out.append((ev["seq"], ev))

    def emit_generated(self, origin: int, ev: Event) -> None:
        self.ensure_cut(origin, ev["time"], ev["type"])
        self.out.append((None, ev))

    def ensure_cut(self, origin: int, time: int, etype: Any) -> None:
        """At the first event at or after the seed cut, place the tagged end-seed marker."""
        if not self.seeded or self.target_cut is not None or origin < self.cut:
            return
        self.target_cut = len(self.out)
        if origin == self.cut and etype == "session/end-seed":
            return  # the source marker itself becomes the tagged one
        self.out.append((None, _end_seed(time)))


def _end_seed(time: int) -> Event:
    return {"type": "session/end-seed", "seq": -1, "time": time, "data": {"inherited": True}}


def _stream_of(chunks: list[Event]) -> list[dict[str, Any]]:
    return _pack([(c["seq"], c["time"], _data(c).get("chunk")) for c in chunks])


def _with_stream(ev: Event, chunks: list[Event]) -> Event:
    ev.pop("sourceEventSeqs", None)  # v2 messages cite nothing; the stream replaces the chunks
    _data(ev)["stream"] = _stream_of(chunks)
    return ev


def _split_legacy_goal(ev: Event) -> Event | None:
    """A legacy round-zero goal message → a ``goal/change`` event (the message keeps its place,
    re-attributed to the goal plugin). Returns the new event and edits ``ev``."""
    data = ev.get("data")
    if ev.get("type") != "user/message" or not isinstance(data, dict):
        return None
    src = data.get("source")
    if not isinstance(src, dict) or src.get("kind") != "goal" or "change" not in src:
        return None
    change = {"type": "goal/change", "seq": -1, "time": ev["time"], "data": src["change"]}
    data["source"] = {"kind": "plugin", "plugin": "goal"}
    return change


def _v1_to_v2(header: dict[str, Any], events: list[Event]) -> tuple[dict[str, Any], list[Event]]:
    _check_v01_header(header)
    new_events = _V1ToV2(header).run(events)
    # The v2 header: exactly the §2.3 keys in their order; the cut lives in the event log now.
    new_header: dict[str, Any] = {
        "type": "session",
        "version": 2,
        "id": header["id"],
        "createdAt": header["createdAt"],
    }
    for key in ("cwd", "parentSession"):
        if key in header:
            new_header[key] = header[key]
    new_header["isSeeded"] = "seedLength" in header
    if "origin" in header:
        new_header["origin"] = header["origin"]
    new_header["delegationDepth"] = header["delegationDepth"]
    if "agentPreset" in header:
        new_header["agentPreset"] = header["agentPreset"]
    return new_header, new_events


# --- v2 → v3 ---------------------------------------------------------------------------------


def _js_json(value: Any) -> str:
    """``JSON.stringify`` for ids/strings/ints (lone surrogates escaped as JS does)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def system_message_id(header_id: str, anchor_seq: int, anchor_type: str) -> str:
    """The synthetic id v2-to-v3 gives a promoted system prompt (anchor = its v2 event)."""
    identity = _js_json(["session-format-v2-to-v3", header_id, anchor_seq, anchor_type])
    return "v2-to-v3-system-" + hashlib.sha256(identity.encode("utf-8")).hexdigest()


class _V2ToV3:
    """``session-format-v2-to-v3``: promote the system prompt to a protected surface head.

    The first ``step/start`` is followed by an empty ``system/message`` append; every
    ``request/header`` whose ``system`` differs from the current prompt gets, just before it, a
    ``system/message`` that replaces exactly the current head and cites it.
    """

    def __init__(self, header: dict[str, Any], events: list[Event]) -> None:
        self.header_id: str = header["id"]
        self.seeded = header.get("isSeeded") is True
        self.out: list[tuple[int | None, Event]] = []
        self.head: int | None = None
        self.prompt = ""
        self.step: tuple[Any, Any] | None = None
        self.ids = _all_message_ids(events)
        self.generated: set[str] = set()

    def run(self, events: list[Event]) -> list[Event]:
        saw_cut = False
        for ev in events:
            etype, seq = ev.get("type"), ev["seq"]
            data = ev.get("data")
            if etype in ("tool/ptc-dispatch", "tool/ptc-dispatch-start"):
                raise SessionFormatError(
                    f"a v2 log with the v3-only event type {etype}; the harness refuses it", seq=seq
                )
            if (
                etype == "session-log-deepseek/delivery-accepted"
                and isinstance(data, dict)
                and data.get("sessionFormatVersion") == 3
            ):
                raise SessionFormatError("a v2 delivery marker claims format v3", seq=seq)
            if etype == "request/header":
                hdr = _data(ev).get("header")
                if not isinstance(hdr, dict):
                    raise SessionFormatError("request/header needs a header object", seq=seq)
                system = hdr.pop("system", None)  # every v3 request/header loses it
                prompt = system if isinstance(system, str) else ""
                if prompt != self.prompt:
                    self.emit_system(prompt, ev)
            if etype in _SURFACE and self.head is None:
                raise SessionFormatError(
                    f"{etype} before the first step/start: the v3 system head cannot precede it "
                    "without changing the log's chronology; the harness refuses to migrate it",
                    seq=seq,
                )
            if (
                etype == "session/end-seed"
                and isinstance(data, dict)
                and data.get("inherited") is True
            ):
                if not self.seeded:
                    raise SessionFormatError(
                        "an unseeded log (isSeeded false) has an inherited end-seed marker", seq=seq
                    )
                saw_cut = True
            self.out.append((seq, ev))
            if etype == "step/start":
                d = _data(ev)
                self.step = (d.get("turn"), d.get("step"))
                if self.head is None:
                    self.emit_system("", ev)
            elif etype in ("step/end", "turn/end"):
                self.step = None
        if self.seeded and not saw_cut:
            raise SessionFormatError(
                "a seeded log (isSeeded true) has no session/end-seed {inherited: true} marker"
            )
        new_events = _renumber(self.out)
        for ev in new_events:
            _canonicalize_v3(ev)
        return new_events

    def emit_system(self, prompt: str, anchor: Event) -> None:
        if self.step is None:
            raise SessionFormatError(
                "the system prompt changes at a request/header outside an open step; the "
                "harness refuses to migrate it (no step would own the system message)",
                seq=anchor["seq"],
            )
        mid = system_message_id(self.header_id, anchor["seq"], anchor["type"])
        if mid in self.ids or mid in self.generated:
            raise SessionFormatError(
                f"generated system message id {mid} collides with an existing message id",
                seq=anchor["seq"],
            )
        self.generated.add(mid)
        seq = len(self.out)  # already the target seq: _renumber keeps positions
        ev: Event = {
            "type": "system/message",
            "seq": seq,
            "time": anchor["time"],
            "data": {
                "turn": self.step[0],
                "step": self.step[1],
                "message": {
                    "id": mid,
                    "role": "system",
                    "source": {"kind": "plugin", "plugin": _SYSTEM_PLUGIN},
                    "content": [{"type": "text", "text": prompt}] if prompt else [],
                },
            },
        }
        if self.head is None:
            ev["surfaceOp"] = "append"
        else:
            ev["sourceEventSeqs"] = [self.head]
            ev["surfaceOp"] = {"op": "replace", "startSeq": self.head, "endSeq": self.head}
        self.out.append((None, ev))
        self.head, self.prompt = seq, prompt


def _all_message_ids(events: list[Event]) -> set[str]:
    """Ids of every message a v2 log holds (the five message slots), for collision checks."""
    ids: set[str] = set()
    for ev in events:
        etype, data = ev.get("type"), ev.get("data")
        if not isinstance(data, dict):
            continue
        msgs: Any
        if etype == "user/message":
            msgs = [data]
        elif etype in ("assistant/message", "tool/result"):
            msgs = [data.get("message")]
        elif etype == "agent/inbox/spliced":
            msgs = data.get("inserted")
        elif etype == "session/title-llm-request":
            msgs = data.get("messages")
        else:
            continue
        for msg in msgs if isinstance(msgs, list) else []:
            if isinstance(msg, dict) and isinstance(msg.get("id"), str):
                ids.add(msg["id"])
    return ids


def _rename_plugin(msg: Any) -> None:
    src = msg.get("source") if isinstance(msg, dict) else None
    if (
        isinstance(src, dict)
        and src.get("kind") == "plugin"
        and src.get("plugin") == "tools-code-mode"
    ):
        src["plugin"] = "tools-ptc"


def _canonicalize_v3(ev: Event) -> None:
    """Envelope and vocabulary canonicalization after the seqs are final (no remapping here)."""
    etype, seq = ev.get("type"), ev["seq"]
    op = ev.get("surfaceOp")
    if isinstance(op, dict) and "start" in op:
        ev["surfaceOp"] = {"op": "replace", "startSeq": op["start"], "endSeq": op["end"]}
    data = ev.get("data")
    if not isinstance(data, dict):
        return
    if etype == "request/header":
        hdr = data.get("header")
        if isinstance(hdr, dict):
            if hdr.get("tools") == []:
                del hdr["tools"]
            if hdr.get("adapterDefaults") == {}:
                del hdr["adapterDefaults"]
    elif etype == "tool/result" and "error" in data:
        msg = data.get("message")
        content = msg.get("content") if isinstance(msg, dict) else None
        if (
            not isinstance(content, list)
            or len(content) != 1
            or not isinstance(content[0], dict)
            or content[0].get("isError") is not True
        ):
            raise SessionFormatError(
                "tool/result carries error metadata but its tool-result block lacks "
                "isError: true; the harness refuses this contradictory outcome",
                seq=seq,
            )
    elif etype == "agent-preset/selected" and data.get("agentPreset") == "code":
        data["agentPreset"] = "ptc"
    elif etype in _PTC_RENAMES:
        ev["type"] = _PTC_RENAMES[etype]
    elif etype == "user/message":
        _rename_plugin(data)
    elif etype in ("agent/inbox/spliced", "session/title-llm-request"):
        msgs = data.get("inserted" if etype == "agent/inbox/spliced" else "messages")
        for msg in msgs if isinstance(msgs, list) else []:
            _rename_plugin(msg)


def _v2_to_v3(header: dict[str, Any], events: list[Event]) -> tuple[dict[str, Any], list[Event]]:
    new_events = _V2ToV3(header, events).run(events)
    header["version"] = 3
    if header.get("agentPreset") == "code":
        header["agentPreset"] = "ptc"
    return header, new_events


_EDGES = {0: _v0_to_v1, 1: _v1_to_v2, 2: _v2_to_v3}
