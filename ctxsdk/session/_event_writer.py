"""The one event writer: raw DSH events with the turn, step and surface state they imply.

Every piece of code that writes a log goes through ``EventWriter``: the test-log builder
(``ctxsdk.testing.LogBuilder``), the importers' emitter, the agent loop, and the engines that
append checkpoints or injected blocks. It owns the envelope (keys in the harness's order
``type, seq, time, data, sourceEventSeqs, surfaceOp, ignorable``, source runs encoded as the
harness encodes them), the seq counter, the open turn and step, and the current surface as a
list of node seqs kept in step with every append and replace op.

It does not validate: the events it writes are checked when a ``Session`` is built from them
(``Session.from_events``, ``Session.append``), by the same replay that checks a file. A writer
that continues a session (``EventWriter.after(session)``) hands its new events over in
batches with ``take()``, so a step is appended to the session once, not event by event.
"""

from __future__ import annotations

import time as _time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import SurfaceError
from ._codec import encode_source_seqs
from ._replay import replace_keys

if TYPE_CHECKING:
    from ._session_like import SessionLike

__all__ = ["EventWriter", "now_ms"]

JsonDict = dict[str, Any]


def now_ms() -> int:
    """The wall clock in epoch milliseconds, as the harness stamps events."""
    return _time.time_ns() // 1_000_000


class EventWriter:
    """Appends raw events; tracks turn, step and the surface nodes.

    ``clock`` gives the time of an event written without an explicit ``time`` (the wall
    clock by default; a builder passes its seeded clock). ``base`` is a log prefix the
    writer continues (read, never copied or changed); its surface state is given by
    ``nodes``, ``turn`` and ``step``, or read from a session with ``after``. ``events``
    holds what this writer wrote.
    """

    def __init__(
        self,
        version: int = 3,
        *,
        clock: Callable[[], int] = now_ms,
        base: Sequence[JsonDict] = (),
        nodes: Sequence[int] = (),
        turn: int = 0,
        turn_open: bool = False,
        step: int = 0,
        step_open: bool = False,
    ) -> None:
        self.version = version
        self.clock = clock
        self._base = base
        self.events: list[JsonDict] = []
        self.nodes: list[int] = list(nodes)  # the current surface, in model order
        self.turn = turn
        self.turn_open = turn_open
        self.step = step
        self.step_open = step_open
        self._taken = 0

    @classmethod
    def after(cls, session: SessionLike, *, clock: Callable[[], int] = now_ms) -> EventWriter:
        """A writer that continues ``session``: its seqs, surface, open turn and step."""
        index = session.index
        open_turn = index.open_turn
        return cls(
            session.version,
            clock=clock,
            base=session.raw_events,
            nodes=index.surface_seqs(),
            turn=open_turn if open_turn is not None else index.last_turn,
            turn_open=open_turn is not None,
            step=index.open_step or 0,
            step_open=index.open_step is not None,
        )

    # --- the envelope ----------------------------------------------------------------------

    @property
    def next_seq(self) -> int:
        return len(self._base) + len(self.events)

    def event(self, seq: int) -> JsonDict:
        """The raw event ``seq``, from the continued prefix or from what was written."""
        n = len(self._base)
        return self._base[seq] if seq < n else self.events[seq - n]

    def emit(
        self,
        etype: str,
        data: Any,
        *,
        time: int | None = None,
        sources: Sequence[int] | None = None,
        op: str | JsonDict | None = None,
        ignorable: bool = False,
    ) -> int:
        """Write one event; returns its seq. ``op="append"`` puts it on the surface."""
        seq = self.next_seq
        ev: JsonDict = {
            "type": etype,
            "seq": seq,
            "time": self.clock() if time is None else time,
            "data": data,
        }
        if sources is not None:
            ev["sourceEventSeqs"] = encode_source_seqs(list(sources))  # runs as [a, b] (§2.4)
        if op is not None:
            ev["surfaceOp"] = op
        if ignorable:
            ev["ignorable"] = True
        self.events.append(ev)
        if op == "append":
            self.nodes.append(seq)
        return seq

    def log(self) -> list[JsonDict]:
        """The whole log so far, in a new list: the continued prefix, then what was written."""
        return [*self._base, *self.events]

    def take(self) -> list[JsonDict]:
        """The events written since the last ``take``."""
        out = self.events[self._taken :]
        self._taken = len(self.events)
        return out

    # --- the surface -----------------------------------------------------------------------

    def replace_op(self, start: int, end: int) -> JsonDict:
        """A replace op over surface nodes ``start..end``, with this version's keys."""
        k_start, k_end = replace_keys(self.version)
        return {"op": "replace", k_start: start, k_end: end}

    def replace(
        self,
        etype: str,
        data: Any,
        shadowed: Sequence[int],
        *,
        time: int | None = None,
        sources: Sequence[int] | None = None,
    ) -> int:
        """Write a replacement of the consecutive surface nodes ``shadowed``; returns its
        seq. ``sources`` default to the shadowed nodes."""
        if not shadowed:
            raise SurfaceError("a replacement needs at least one surface node to shadow")
        seq = self.emit(
            etype,
            data,
            time=time,
            sources=list(shadowed) if sources is None else sources,
            op=self.replace_op(shadowed[0], shadowed[-1]),
        )
        i = self.nodes.index(shadowed[0])
        self.nodes[i : i + len(shadowed)] = [seq]
        return seq

    def system_head(self) -> int:
        """How many surface nodes at the front are system messages (v3's system head,
        which a compaction never shadows)."""
        n = 0
        while n < len(self.nodes) and self.event(self.nodes[n])["type"] == "system/message":
            n += 1
        return n

    def message_of(self, seq: int) -> JsonDict:
        """The raw message event ``seq`` carries (``user/message`` data is the message)."""
        ev = self.event(seq)
        data = ev["data"]
        msg = data if ev["type"] == "user/message" else data["message"]
        assert isinstance(msg, dict)
        return msg

    def system_message(self, message: Mapping[str, Any], *, time: int | None = None) -> int:
        """The system prompt as node 0 (v3): appended on an empty surface, else node 0
        replaced one for one. Refused when node 0 is not a system message."""
        data = {"turn": self.turn, "step": self.step, "message": dict(message)}
        if not self.nodes:
            return self.emit("system/message", data, time=time, op="append")
        head = self.nodes[0]
        if self.event(head)["type"] != "system/message":
            raise SurfaceError(
                "the first surface node is not a system message, so a system prompt cannot "
                "be put in front of it"
            )
        return self.replace("system/message", data, [head], time=time)

    # --- turns and steps -------------------------------------------------------------------

    def start_turn(self, *, time: int | None = None) -> int:
        """``turn/start`` of the next turn; returns its seq."""
        self.turn += 1
        self.turn_open = True
        self.step = 0
        return self.emit("turn/start", {"turn": self.turn}, time=time)

    def start_step(self, *, time: int | None = None) -> int:
        """``step/start`` of the next step of the open turn."""
        self.step += 1
        self.step_open = True
        return self.emit("step/start", {"turn": self.turn, "step": self.step}, time=time)

    def end_step(self, *, time: int | None = None) -> int:
        self.step_open = False
        return self.emit("step/end", {"turn": self.turn, "step": self.step}, time=time)

    def end_turn(self, reason: Mapping[str, Any], *, time: int | None = None) -> int:
        """``turn/end`` with ``reason`` (the open step, if any, is closed first)."""
        if self.step_open:
            self.end_step(time=time)
        self.turn_open = False
        return self.emit("turn/end", {"turn": self.turn, "reason": dict(reason)}, time=time)
