"""Dense renumbering after an edge added or removed events, with every declared same-log
seq reference remapped."""

from __future__ import annotations

from typing import Any

from ...errors import SessionFormatError
from .._codec import decode_source_seqs, encode_source_seqs
from ._common import Event


def renumber(out: list[tuple[int | None, Event]]) -> list[Event]:
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
