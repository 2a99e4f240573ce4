"""``session-format-v1-to-v2``: chunk attempts embedded as streams, legacy restarts closed,
the fork cut marked, seqs renumbered."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...errors import SessionFormatError
from .._codec import decode_source_seqs
from ._common import Event, check_v01_header, event_data, event_time
from ._renumber import renumber
from ._stream import pack

# Events that settle an open assistant attempt (v1-to-v2 ``closesAttempt``).
_CLOSES_ATTEMPT = frozenset({"turn/end", "step/end", "llm/retry", "llm/retry-started"})


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
        return renumber(self.out)

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
            "time": event_time(ev),
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
        data = event_data(ev)
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
        data, seq = event_data(ev), ev["seq"]
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
            "time": event_time(last),
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
    return pack([(c["seq"], c.get("time"), event_data(c).get("chunk")) for c in chunks])


def _with_stream(ev: Event, chunks: list[Event]) -> Event:
    ev.pop("sourceEventSeqs", None)  # v2 messages cite nothing; the stream replaces the chunks
    event_data(ev)["stream"] = _stream_of(chunks)
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
    change = {"type": "goal/change", "seq": -1, "time": event_time(ev), "data": src["change"]}
    data["source"] = {"kind": "plugin", "plugin": "goal"}
    return change


def v1_to_v2(header: dict[str, Any], events: list[Event]) -> tuple[dict[str, Any], list[Event]]:
    check_v01_header(header)
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
