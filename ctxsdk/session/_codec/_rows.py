"""Event rows: parsing a log's lines, v0/v1 packed chunk rows expanded to their events, a
stripped fixture told from a harness log, and a plain log's torn tail told from corruption.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from ...errors import CorruptLog, SessionFormatError
from ._decoded import Recovery
from ._header import _is_safe_int
from ._js_json import loads_line
from ._numbers import _js_rows

_PACKED_ROWS = {
    "text-chunks": "text-delta",
    "reasoning-chunks": "reasoning-delta",
    "tool-call-chunks": "tool-call-delta",
}
_PACKED_ROW_KEYS = frozenset({"type", "seq0", "time0", "data"})
_PACKED_ROW_KEYS_NORMALIZED = frozenset({"type", "data"})
_PACKED_TEXT_DATA = frozenset({"turn", "step", "index", "dt", "texts"})
_PACKED_TOOL_DATA = frozenset({"turn", "step", "index", "id", "dt", "args"})
STRIPPED_SEQ_HINT = (
    " (a harness log has a seq and time on every row; a stripped test fixture has them on "
    "none and is read as normalized unless normalized=False; normalized=True numbers any "
    "log's rows by position)"
)
# The keys a stripped row (a harness snapshot fixture's) lacks; a log is read as stripped
# only when no row has any of them.
_POSITION_KEYS = ("seq", "time", "seq0", "time0")


def _expand_packed(row: dict[str, Any], seq: int, normalized: bool) -> Iterator[dict[str, Any]]:
    """The ``assistant/chunk`` events of one v0/v1 packed chunk row."""
    kind = _PACKED_ROWS[row["type"]]
    data = row.get("data")
    if not isinstance(data, dict):
        raise SessionFormatError(f"packed {row['type']} row has no data object", seq=seq)
    tool = kind == "tool-call-delta"
    if not normalized and "seq0" not in row:
        raise CorruptLog(f"packed row has no seq0, expected {seq}{STRIPPED_SEQ_HINT}", seq=seq)
    # Exact key sets, as the released codec decodes rows (normalized fixtures lack seq0/time0).
    row_keys = _PACKED_ROW_KEYS_NORMALIZED if normalized else _PACKED_ROW_KEYS
    if not set(row).issubset(_PACKED_ROW_KEYS) or not row_keys.issubset(row):
        raise SessionFormatError(
            f"packed {row['type']} row has exactly the keys type, seq0, time0, data", seq=seq
        )
    required = _PACKED_TOOL_DATA if tool else _PACKED_TEXT_DATA
    extra = set(data) - required - ({"name"} if tool else set())
    if extra or not required.issubset(data):
        wrong = sorted(extra) or sorted(required - set(data))
        what = "unexpected" if extra else "missing"
        raise SessionFormatError(
            f"packed {row['type']} row data has {what} member(s) {', '.join(wrong)}", seq=seq
        )
    for key in ("turn", "step", "index"):
        if not _is_safe_int(data[key]):
            raise SessionFormatError(
                f"packed {row['type']} row {key} must be a non-negative integer", seq=seq
            )
    if tool and not (isinstance(data["id"], str) and data["id"]):
        raise SessionFormatError(
            "packed tool-call-chunks row id must be a non-empty string", seq=seq
        )
    if tool and "name" in data and not isinstance(data["name"], str):
        raise SessionFormatError("packed tool-call-chunks row name must be a string", seq=seq)
    members = data["args" if tool else "texts"]
    dt = data["dt"]
    # 1-2 members decode too: the minimum of 3 is the encoder's rule, not the reader's.
    if not isinstance(members, list) or not members:
        raise SessionFormatError(f"packed {row['type']} row needs a non-empty member list", seq=seq)
    if not isinstance(dt, list) or len(dt) != len(members) - 1:
        raise SessionFormatError(f"packed {row['type']} row needs len(dt) == members - 1", seq=seq)
    if not normalized and row.get("seq0") != seq:
        hint = STRIPPED_SEQ_HINT if "seq0" not in row else ""
        raise CorruptLog(f"packed row seq0 {row.get('seq0')!r}, expected {seq}{hint}", seq=seq)
    t = row.get("time0", 0)
    if not _is_int(t):
        raise SessionFormatError("packed row time0 must be an integer", seq=seq)
    for k, text in enumerate(members):
        if not isinstance(text, str):
            raise SessionFormatError("packed row member is not a string", seq=seq + k)
        if k:
            step = dt[k - 1]
            if not _is_int(step):
                raise SessionFormatError("packed row dt member is not an integer", seq=seq + k)
            t += step
        if kind == "tool-call-delta":
            chunk: dict[str, Any] = {"type": kind, "index": data.get("index"), "id": data.get("id")}
            if "name" in data:
                chunk["name"] = data["name"]
            chunk["argumentsDelta"] = text
        else:
            chunk = {"type": kind, "index": data.get("index"), "text": text}
        yield {
            "type": "assistant/chunk",
            "seq": seq + k,
            "time": t,
            "data": {"turn": data.get("turn"), "step": data.get("step"), "chunk": chunk},
        }


def _is_int(v: Any) -> bool:
    return type(v) is int


def _stripped(rows: list[Any]) -> bool:
    """Whether no row has a seq or time (seq0/time0 for packed rows): a harness snapshot
    fixture, never a harness log, which has them on every row. Rows that are not objects,
    or no rows at all, are not a stripped log."""
    keys = _POSITION_KEYS
    return bool(rows) and all(type(row) is dict and not any(k in row for k in keys) for row in rows)


def _parse_lines(lines: list[bytes], first_line: int, floats: bool) -> list[Any]:
    """JSON-parse event lines; a bad line is named by its 1-based line number. ``floats``:
    the text may hold integral floats, which are made integers as JavaScript reads them."""
    loads = orjson.loads
    try:
        rows = [loads(line) for line in lines]
    except orjson.JSONDecodeError:
        pass
    else:
        if floats:
            _js_rows(lines, rows)
        return rows
    rows = []
    for i, line in enumerate(lines):
        try:
            rows.append(loads_line(line))
        except orjson.JSONDecodeError as exc:
            raise CorruptLog(f"line is not valid JSON ({exc})", line=first_line + i) from None
    if floats:
        _js_rows(lines, rows)
    return rows


@dataclass(frozen=True)
class _TornRows:
    """The first damaged row of a plain JSONL log that no later ``turn/end`` follows."""

    row: int  # index into the log's lines (1 = the first event row)
    reason: str
    lines: list[bytes] = field(repr=False)

    def recovery(self, data: bytes) -> Recovery:
        at = sum(len(line) + 1 for line in self.lines[: self.row])
        return Recovery("torn-tail", at, len(data) - at, (), data[at:], self.reason)


def _row_seq(row: Any) -> tuple[int | None, int | None]:
    """(seq the row claims, events it holds) for a parsed row; None where it does not say
    (the decoder then names that row's defect itself)."""
    if type(row) is not dict:
        return None, None
    rtype = row.get("type")
    if type(rtype) is str and rtype in _PACKED_ROWS:
        data = row.get("data")
        key = "args" if rtype == "tool-call-chunks" else "texts"
        members = data.get(key) if type(data) is dict else None
        count = len(members) if type(members) is list and members else None
        seq0 = row.get("seq0")
        return (seq0 if type(seq0) is int else None), count
    seq = row.get("seq")
    return (seq if type(seq) is int else None), 1


def _parse_rows_plain(
    lines: list[bytes], version: int, normalized: bool, floats: bool
) -> tuple[list[Any], _TornRows | None]:
    """Event rows of a plain JSONL log, cut at a torn tail as the harness's scanner does.

    The first unparsable line or seq gap ends the committed prefix. If a later line is a
    ``turn/end`` (which only a committed turn writes), the damage is corruption and is
    refused; otherwise it is a torn tail: the prefix is kept and the rest reported.
    """
    loads = orjson.loads
    body = lines[1:]
    rows: list[Any] = []
    issue: tuple[int, str, int | None] | None = None  # (row, reason, seq)
    try:
        rows = [loads(line) for line in body]
    except orjson.JSONDecodeError:
        rows = []
        for i, line in enumerate(body):
            try:
                rows.append(loads_line(line))
            except orjson.JSONDecodeError as exc:
                issue = (i, f"line {i + 2} is not valid JSON ({exc})", None)
                break
    if floats:
        _js_rows(body, rows)
    if not normalized:
        expected = 0
        for i, row in enumerate(rows):
            seq, count = _row_seq(row)
            if seq is not None and seq != expected:
                issue = (i, f"line {i + 2} has seq {seq} where {expected} was expected", expected)
                break
            if seq is None or count is None:
                break  # a row the decoder refuses by itself, naming it
            expected += count
    if issue is None:
        return rows, None
    first, reason, at_seq = issue
    for j in range(first, len(body)):  # a gap on a turn/end row itself is corruption too
        try:
            later = rows[j] if j < len(rows) else loads_line(body[j])
        except orjson.JSONDecodeError:
            continue
        if type(later) is dict and later.get("type") == "turn/end":
            raise CorruptLog(
                f"{reason}, and the turn/end on line {j + 2} after it shows the damage is in "
                "committed rows, not a torn tail: the log is corrupt",
                line=first + 2,
                seq=at_seq,
            )
    return rows[:first], _TornRows(first + 1, reason, lines)
