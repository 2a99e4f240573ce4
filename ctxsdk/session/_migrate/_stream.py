"""Embedded assistant streams (v2+): timed chunks packed into compact records, and back."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...errors import InvalidArgument, SessionFormatError

PACKED_ROWS = frozenset({"text-chunks", "reasoning-chunks", "tool-call-chunks"})
"""The packed record types (also the v0/v1 packed chunk rows the codec expands)."""


def pack_stream(chunks: Iterable[tuple[int, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Compact ``(time, chunk)`` pairs into v2 stream records (``AssistantStreamAccumulator``)."""
    items: list[tuple[int | None, Any, Any]] = []
    for i, pair in enumerate(chunks):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise InvalidArgument(f"chunk {i} is {pair!r}, not a (time, chunk) pair")
        items.append((None, pair[0], pair[1]))
    return pack(items)


def _field(rec: dict[str, Any], i: int, key: str) -> Any:
    if key not in rec:
        raise SessionFormatError(f"{rec.get('type')} stream record {i} has no {key!r}")
    return rec[key]


def expand_stream(stream: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """The exact ``(time, chunk)`` sequence a v2/v3 embedded ``stream`` stands for."""
    if not isinstance(stream, list):
        raise SessionFormatError(
            f"an assistant stream must be a list of records, not {type(stream).__name__}"
        )
    out: list[tuple[int, dict[str, Any]]] = []
    for i, rec in enumerate(stream):
        if not isinstance(rec, dict):
            raise SessionFormatError(f"assistant stream record {i} is not an object: {rec!r}")
        rtype = rec.get("type")
        if rtype == "chunk":
            out.append((_field(rec, i, "time"), _field(rec, i, "chunk")))
            continue
        if not isinstance(rtype, str) or rtype not in PACKED_ROWS:
            raise SessionFormatError(f"unknown assistant stream record type {rtype!r}")
        members = _field(rec, i, "args" if rtype == "tool-call-chunks" else "texts")
        dt = _field(rec, i, "dt")
        t = _field(rec, i, "time0")
        index = _field(rec, i, "index")
        if not isinstance(members, list) or not isinstance(dt, list):
            raise SessionFormatError(f"{rtype} stream record {i}: its members and dt must be lists")
        if len(dt) != len(members) - 1:
            raise SessionFormatError(f"{rtype} stream record needs len(dt) == members - 1")
        if type(t) is not int or any(type(d) is not int for d in dt):
            raise SessionFormatError(f"{rtype} stream record {i}: time0 and dt must be integers")
        cid = _field(rec, i, "id") if rtype == "tool-call-chunks" else None
        for k, member in enumerate(members):
            if k:
                t += dt[k - 1]
            chunk: dict[str, Any]
            if rtype == "tool-call-chunks":
                chunk = {"type": "tool-call-delta", "index": index, "id": cid}
                if "name" in rec:
                    chunk["name"] = rec["name"]
                chunk["argumentsDelta"] = member
            else:
                kind = "text-delta" if rtype == "text-chunks" else "reasoning-delta"
                chunk = {"type": kind, "index": index, "text": member}
            out.append((t, chunk))
    return out


def pack(items: list[tuple[int | None, Any, Any]]) -> list[dict[str, Any]]:
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
