"""A well-formed zstd log decoded chunk by chunk (``decode_zstd_streamed``): its text
decompressed, split, checked and parsed 1 MiB at a time while that MiB is in the CPU cache,
never held whole. Whatever is not the common case (damage, a torn frame, a line that nests
deep, a bad line, a v0/v1 or stripped log, the cap passed) returns None, and ``decode_bytes``
decodes the log as a whole, naming the defect as it always has.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import zstandard

from ...errors import CorruptLog, SessionFormatError
from ._byte_cap import _READ_CHUNK
from ._decoded import DecodedLog
from ._decompress import _check_header_frame, _declared_size
from ._depth import _NOT_OPENER, _OPENERS_AS_ONE, MAX_JSON_DEPTH, deep_path
from ._framing import _frame_chain
from ._header import validate_header
from ._numbers import _INTEGRAL_FRACTION, _js_rows, js_numbers
from ._rows import _stripped

_DEEP_RUN = b"[" * (MAX_JSON_DEPTH + 1)  # a line with more openers than the limit
_ZERO = ord("0")
_DOT = ord(".")


def _ends_in_fraction(chunk: bytes) -> bool:
    """Whether ``chunk`` ends in ``.`` and zeros: an integral float's fraction may go on in
    the next chunk."""
    i = len(chunk) - 1
    while i >= 0 and chunk[i] == _ZERO:
        i -= 1
    return i >= 0 and chunk[i] == _DOT


def _lines(chunk: bytes, carry: list[bytes]) -> tuple[list[bytes | memoryview], bytes]:
    """The complete lines of ``chunk`` (which holds a newline), the first one joined to the
    ``carry`` pieces of it, and what follows the last newline. A line is a view of the chunk,
    never copied (``split`` would copy each): the parser reads the view, and the newlines are
    found with ``find`` (memchr), not by a byte loop."""
    find = chunk.find
    view = memoryview(chunk)
    end = find(b"\n")
    first = b"".join([*carry, chunk[:end]]) if carry else view[:end]
    lines: list[bytes | memoryview] = [first]
    append = lines.append
    start = end + 1
    end = find(b"\n", start)
    while end != -1:
        append(view[start:end])
        start = end + 1
        end = find(b"\n", start)
    return lines, chunk[start:]


def decode_zstd_streamed(
    data: bytes,
    path: str | Path | None,
    max_bytes: int,
    expected_version: int | None,
    normalized: bool | None,
) -> DecodedLog | None:
    """``decode_bytes`` of a zstd log in the common case, chunk by chunk; None otherwise.

    The same rules as the whole-text decode: the frame chain complete and frame 1 the header
    line alone, the text under ``max_bytes``, no line nested past ``MAX_JSON_DEPTH`` (a line
    with more openers than that is walked), integral floats made integers, the header
    validated, every line JSON, the text ending in a newline. Any rule broken returns None
    (nothing is raised here), so the whole-text decode refuses it with its located error.
    """
    if normalized:
        return None  # numbered by position: the whole-text decode's event loop
    try:
        spans, torn_at, sizes = _frame_chain(data)
        if not spans or torn_at is not None or spans[-1][1] != len(data):
            return None
        _check_header_frame(data, spans[0], path)
    except CorruptLog:
        return None
    declared, every = _declared_size(data, spans, sizes)
    if not every or declared > max_bytes:
        return None  # a frame that declares no size (a bomb?) is counted as a whole decode is
    reader = zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True)
    read = reader.read
    loads = orjson.loads
    search = _INTEGRAL_FRACTION.search
    header: Any = None
    version = 0
    rows: list[Any] = []
    carry: list[bytes] = []  # the line the last chunks ended inside, in pieces
    run = 0  # openers of that line so far
    spill = False  # an integral float may sit in the carried line or go on in this chunk
    total = 0
    try:
        while chunk := read(_READ_CHUNK):
            total += len(chunk)
            if total > declared:  # a frame that understates its size
                return None
            opens = chunk.translate(_OPENERS_AS_ONE, _NOT_OPENER)
            first_nl = opens.find(b"\n")
            if first_nl == -1:  # the carried line goes on through this whole chunk
                carry.append(chunk)
                run += len(opens)
                spill = spill or search(chunk) is not None or _ends_in_fraction(chunk)
                continue
            lines, rest = _lines(chunk, carry)
            carry = [rest] if rest else []
            deep: list[int] = []
            if run + first_nl > MAX_JSON_DEPTH or opens.find(_DEEP_RUN) != -1:
                parts = opens.split(b"\n")
                parts[0] = b"[" * run + parts[0]
                deep = [k for k, part in enumerate(parts[:-1]) if len(part) > MAX_JSON_DEPTH]
            run = len(opens) - opens.rfind(b"\n") - 1
            hit = search(chunk) is not None
            floats = hit or spill
            spill = hit or _ends_in_fraction(chunk)
            if header is None:  # the first line: the header
                if deep and deep[0] == 0:
                    return None
                header = loads(lines[0])
                if floats and search(lines[0]):
                    header = js_numbers(header)
                version = validate_header(header, expected_version=expected_version)
                if version <= 1:
                    return None  # packed rows, v0 upgrades: the whole-text decode
                del lines[0]
                deep = [k - 1 for k in deep]
            got = list(map(loads, lines))
            for k in deep:
                if deep_path(got[k]) is not None:
                    return None
            if floats:
                _js_rows(lines, got)
            rows += got
    except (zstandard.ZstdError, orjson.JSONDecodeError, SessionFormatError):
        return None
    if carry or header is None:
        return None  # the text does not end in a newline, or holds no header line
    if normalized is None:
        if _stripped(rows):
            return None
        normalized = False
    return DecodedLog(header, rows, version, "zstd", data, None, None, normalized)
