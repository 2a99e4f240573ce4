"""``reduce_events``: the events put in seq order (malformed ones counted), each dispatched to
its rule, and the state built at the end.

The last layer of the reducer (see ``_reducer_base``); the rules are in the layers below.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from ...session import Fact
from ._anchors import _FACE, ANCHOR_EVENT, Anchor, StateLimits
from ._fold_state import FoldState
from ._messages import _Messages
from ._roots import _feeds


class _Reducer(_Messages):
    """The mutable fold of one ``reduce_events`` call (never shared, never returned)."""

    # --- one event ---------------------------------------------------------------------------

    def event(self, ev: Mapping[str, Any], seq: int) -> None:
        self.seen[seq] = ev
        self.upto = seq
        if not _feeds(ev):
            return  # a replacement: narrative over events already reduced
        etype = ev["type"]
        found = self.read(ev) if etype != ANCHOR_EVENT else []
        if etype == ANCHOR_EVENT:
            self.anchor_op(ev, seq)
        elif etype == "user/message":
            self.user_message(ev, seq)
        elif etype == "system/message":
            self.system_message(ev, seq)
        elif etype == "assistant/message":
            self.assistant_message(ev, seq)
        elif etype == "tool/call":
            self.tool_call(ev)
        elif etype == "tool/result":
            self.tool_result(ev, seq)
        elif etype == "todo/write":
            self.todo_write(ev, seq)
        # compaction/summary and every other type: ignored (never narrative into state)
        self.facts(found)

    def read(self, ev: Mapping[str, Any]) -> list[Fact]:
        try:
            return self.reader.feed(ev)
        except Exception:  # the kernel never raises; if it did, the event gives no facts
            return []

    def finish(self) -> None:
        """What only the end of the log (so far) tells: project facts, errors never fixed,
        open work."""
        try:
            found = self.reader.finish()
        except Exception:
            found = []
        self.facts(found)

    def state(self) -> FoldState:
        faces: dict[str, list[Anchor]] = {f: [] for f in _FACE.values()}
        for a in self.active.values():
            faces[_FACE[a.kind]].append(a)
        heads = {k: self.active[i] for k, i in sorted(self.heads.items())}
        state = FoldState(
            objective=self.objective,
            current_request=self.request,
            requests=tuple(self.requests),
            constraints=tuple(faces["constraints"]),
            heads=MappingProxyType(heads),
            open_failures=tuple(faces["open_failures"]),
            open_obligations=tuple(faces["open_obligations"]),
            decisions=tuple(faces["decisions"]),
            evidence=tuple(faces["evidence"]),
            artifacts=tuple(faces["artifacts"]),
            findings=self.findings(),
            files=self.files(),
            rules=self.rules(),
            superseded=tuple(self.superseded),
            retired_count=self.retired,
            rejected=tuple(self.rejected),
            dropped=MappingProxyType(dict(sorted(self.dropped.items()))),
            skipped=self.skipped,
            upto=self.upto,
        )
        known = "\n".join(line for _, lines in state.lines() for line in lines)
        state = replace(state, names=self.names(known))
        return replace(state, commands=self.commands_run(known))


def _ordered(events: Iterable[Any], upto: int | None) -> tuple[list[Mapping[str, Any]], int]:
    """The well-formed events in seq order (up to ``upto``), and how many were malformed."""
    good: list[tuple[int, int, Mapping[str, Any]]] = []
    bad = 0
    for n, ev in enumerate(events):
        seq = ev.get("seq") if isinstance(ev, Mapping) else None
        if (
            not isinstance(ev, Mapping)
            or not isinstance(ev.get("type"), str)
            or not isinstance(seq, int)
            or isinstance(seq, bool)
            or seq < 0
        ):
            bad += 1
            continue
        if upto is None or seq <= upto:
            good.append((seq, n, ev))
    good.sort(key=lambda t: (t[0], t[1]))
    out: list[Mapping[str, Any]] = []
    last = -1
    for seq, _, ev in good:
        if seq == last:
            bad += 1  # a repeated seq: the first one stands
            continue
        out.append(ev)
        last = seq
    return out, bad


def reduce_events(
    events: Iterable[Mapping[str, Any]],
    upto: int | None = None,
    limits: StateLimits | None = None,
) -> FoldState:
    """The current state of raw DSH events (``session.raw_events``), seqs ``<= upto`` only
    when given. Pure and deterministic: the same events give an equal state (and an equal
    ``to_json()``). Never raises on odd events; see the module docstring for every rule."""
    r = _Reducer(limits if limits is not None else StateLimits())
    ordered, r.skipped = _ordered(events, upto)
    for ev in ordered:
        seq = ev["seq"]
        assert isinstance(seq, int)
        try:
            r.event(ev, seq)
        except (TypeError, ValueError, KeyError, AttributeError):
            r.skipped += 1  # an odd shape the checks above did not foresee: skipped, counted
    r.finish()
    return r.state()
