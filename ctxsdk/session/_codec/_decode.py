"""Decoding a whole log's bytes (``decode_bytes``): the text split into lines, deep lines
refused, the header validated, the rows parsed and expanded, v0 rows upgraded, and every
error located (path, line, zstd frame, seq).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from ..._gc import gc_paused
from ...errors import CorruptLog, SessionFormatError
from ._byte_cap import MAX_DECODED_BYTES, _too_big
from ._decoded import Compression, DecodedLog, Recovery
from ._decompress import _decompress_frames
from ._depth import _deep_lines, _refuse_deep_line
from ._framing import _frame_of_line
from ._header import validate_header
from ._js_json import loads_line
from ._legacy import upgrade_on_read
from ._numbers import _INTEGRAL_FRACTION, js_numbers
from ._rows import _PACKED_ROWS, _expand_packed, _parse_lines, _parse_rows_plain, _stripped
from ._streamed import decode_zstd_streamed


def decode_bytes(
    data: bytes,
    *,
    compression: Compression,
    path: str | Path | None = None,
    expected_version: int | None = None,
    normalized: bool | None = None,
    max_bytes: int = MAX_DECODED_BYTES,
) -> DecodedLog:
    """Decode a whole log file's bytes.

    A log where no row has a ``seq`` or ``time`` (the harness's snapshot fixtures, which
    strip them; a harness log has them on every row) is read as normalized: seqs are
    rebuilt by counting events, missing times become 0, and ``DecodedLog.normalized`` says
    so. ``normalized=True`` reads any log that way (rows that keep a seq or time keep it),
    ``normalized=False`` never (a stripped row is then refused). Text past ``max_bytes`` (a
    zstd decompression bomb) raises ``SessionFormatError`` naming the path and the cap.

    The cyclic GC is paused while it runs (as ``Session.open`` pauses it): the rows are
    many small dicts and lists with no cycles, which would otherwise set off full
    collections that rescan all of them (more time than the parse itself).
    """
    with gc_paused():
        return _decode_bytes(data, compression, path, expected_version, normalized, max_bytes)


def _decode_bytes(
    data: bytes,
    compression: Compression,
    path: str | Path | None,
    expected_version: int | None,
    normalized: bool | None,
    max_bytes: int,
) -> DecodedLog:
    recovery: Recovery | None = None
    if compression == "zstd":
        # the common case chunk by chunk; anything else (damage, a defect to name) as a whole
        fast = decode_zstd_streamed(data, path, max_bytes, expected_version, normalized)
        if fast is not None:
            fast.path = Path(path) if path is not None else None
            return fast
        text, recovery = _decompress_frames(data, path, max_bytes)
    elif len(data) > max_bytes:
        raise _too_big(path, max_bytes)
    else:
        text = data
    try:
        log = _decode_text(text, data, compression, recovery, expected_version, normalized)
        if log.version == 0:
            _upgrade_v0_rows(log)
        log.path = Path(path) if path is not None else None
        return log
    except SessionFormatError as exc:
        frame = None
        if exc.frame is None and exc.line is not None and compression == "zstd":
            frame = _frame_of_line(data, exc.line)
        raise exc.at(path=path, frame=frame) from None


def _upgrade_v0_rows(log: DecodedLog) -> None:
    """The legacy v0 rows the harness upgrades on read (its coordinator), in place."""

    try:
        upgrade_on_read(log.events, log.header["id"])
    except SessionFormatError as exc:
        line = log.line_of(exc.seq) if exc.seq is not None else None
        raise exc.at(line=line) from None


def _decode_text(
    text: bytes,
    data: bytes,
    compression: Compression,
    recovery: Recovery | None,
    expected_version: int | None,
    normalized: bool | None,
) -> DecodedLog:
    lines = text.split(b"\n")
    tail = lines.pop()  # b"" when the text ends with a newline
    if tail:
        if compression == "none":
            recovery = Recovery("torn-line", len(data) - len(tail), len(tail), (), tail)
        else:
            # Complete frames whose text does not end in a newline: refuse, a writer never
            # produces that and there is no byte offset to repair at.
            raise CorruptLog("the last zstd frame does not end with a newline", line=len(lines) + 1)
    if not lines:
        raise CorruptLog("the file has no complete header line", line=1)
    deep = _deep_lines(text, len(lines))  # usually empty: a real line is never a candidate
    if deep and deep[0] == 0:
        _refuse_deep_line(lines, 0, None)
    try:
        header = loads_line(lines[0])
    except orjson.JSONDecodeError as exc:
        raise CorruptLog(f"header is not valid JSON ({exc})", line=1) from None
    # One byte search decides whether any line may hold an integral float (1.0 for 1).
    floats = _INTEGRAL_FRACTION.search(text) is not None
    if floats and _INTEGRAL_FRACTION.search(lines[0]):
        header = js_numbers(header)
    try:
        version = validate_header(header, expected_version=expected_version)
    except SessionFormatError as exc:
        raise exc.at(line=1) from None
    for k in deep:  # before the rows: a deep line is refused wherever it is, never torn
        if k:
            _refuse_deep_line(lines, k, version)
    if compression == "none":
        rows, torn = _parse_rows_plain(lines, version, bool(normalized), floats)
        if torn is not None:
            recovery = torn.recovery(data)
    else:
        rows = _parse_lines(lines[1:], 2, floats)
    if normalized is None:  # a log with no seq/time on any row is a stripped fixture
        normalized = _stripped(rows)
    events: list[dict[str, Any]]
    event_lines: list[int] | None = None
    if version <= 1 or normalized:
        events, event_lines = [], []
        for i, row in enumerate(rows):
            line_no = i + 2
            if not isinstance(row, dict):
                raise SessionFormatError(
                    "a row must be a JSON object", line=line_no, seq=len(events)
                )
            rtype = row.get("type")
            seq = len(events)
            if isinstance(rtype, str) and rtype in _PACKED_ROWS:
                if version >= 2:
                    raise SessionFormatError(
                        f"packed {rtype} rows do not exist in v{version} logs", line=line_no
                    )
                try:
                    for ev in _expand_packed(row, seq, normalized):
                        events.append(ev)
                        event_lines.append(line_no)
                except SessionFormatError as exc:
                    raise exc.at(line=line_no) from None
                continue
            if normalized:
                row.setdefault("seq", seq)
                row.setdefault("time", 0)
            events.append(row)
            event_lines.append(line_no)
    else:
        events = rows  # the replay checks each is an object with the right seq
    return DecodedLog(header, events, version, compression, data, recovery, event_lines, normalized)
