"""``session-format-v2-to-v3``: the system prompt promoted to a protected surface head, then
envelope and vocabulary canonicalization."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from ...errors import SessionFormatError
from ._common import Event, event_data, event_time
from ._renumber import renumber

_SURFACE = frozenset({"user/message", "assistant/message", "tool/result", "system/message"})
_PTC_RENAMES = {
    "tool/code-dispatch-start": "tool/ptc-dispatch-start",
    "tool/code-dispatch": "tool/ptc-dispatch",
}
_SYSTEM_PLUGIN = "@deepseek-ai/dsh-system-prompt"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


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
                hdr = event_data(ev).get("header")
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
                d = event_data(ev)
                self.step = (d.get("turn"), d.get("step"))
                if self.head is None:
                    self.emit_system("", ev)
            elif etype in ("step/end", "turn/end"):
                self.step = None
        if self.seeded and not saw_cut:
            raise SessionFormatError(
                "a seeded log (isSeeded true) has no session/end-seed {inherited: true} marker"
            )
        new_events = renumber(self.out)
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
        seq = len(self.out)  # already the target seq: renumber keeps positions
        ev: Event = {
            "type": "system/message",
            "seq": seq,
            "time": event_time(anchor),
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


def v2_to_v3(header: dict[str, Any], events: list[Event]) -> tuple[dict[str, Any], list[Event]]:
    new_events = _V2ToV3(header, events).run(events)
    header["version"] = 3
    if header.get("agentPreset") == "code":
        header["agentPreset"] = "ptc"
    return header, new_events
