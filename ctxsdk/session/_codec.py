"""Physical DSH log format: JSONL lines, chains of zstd frames, the header line, packed rows.

Reading turns bytes into a header dict and a list of raw event dicts with ``seq`` in place;
logical validation (surface replay, provenance, enclosure) lives in ``._replay``.
"""

from __future__ import annotations

import errno
import itertools
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson
import zstandard

from ..errors import CorruptLog, SessionFormatError, UnsupportedVersion
from ._files import FileRefusal, check_byte_limit, read_regular_file, size_text

__all__ = [
    "KNOWN_VERSIONS",
    "MAX_DECODED_BYTES",
    "MAX_JSON_DEPTH",
    "DecodedLog",
    "Recovery",
    "check_max_bytes",
    "copy_json",
    "decode_bytes",
    "decode_source_seqs",
    "deep_path",
    "depth_reason",
    "dumps_json",
    "dumps_line",
    "encode_source_seqs",
    "frame_spans",
    "js_numbers",
    "json_path_text",
    "loads_line",
    "read_log",
    "refuse_deep_events",
    "version_from_filename",
    "zstd_frame",
]

KNOWN_VERSIONS = (0, 1, 2, 3)
MAX_DECODED_BYTES = 1 << 30
"""The most a read takes from one log by default (1 GiB of text): a file larger than this,
or zstd frames that decompress past it (a decompression bomb: 131 KB that inflate to 4 GiB),
raise ``SessionFormatError`` naming the path and the cap instead of reading until memory
runs out. The text is counted while it streams (1 MiB at a time), so a bomb is refused
once it passes the cap, and at once when its frames declare a larger content size.
``Session.open(path, max_bytes=...)``, ``read_log(path, max_bytes=...)`` and
``Workspace(home, max_bytes=...)`` (its listing and ``open``) set another cap. A real log
this large is rare: the harness's fixtures and long agent sessions are megabytes."""
MAX_JSON_DEPTH = 128
"""The deepest nesting of arrays and objects any JSON ctxsdk takes in may have: one event
(or header line), one imported record, a model's reply, a memory's values. The value itself
is level 1; one level more is refused where it enters: ``read_log`` / ``Session.open`` raise
``SessionFormatError`` naming the path, line (and zstd frame) and seq;
``Session.from_events``, ``append`` and the other in-memory edits raise on the event's seq;
the importers raise ``ImportFormatError`` naming the file and record; a model's reply is
malformed (``LLMOutputError``, or a provider error for the response body); a memory refuses
the value (``InvalidArgument``) and reads a stored one as damage. One limit, so whatever a
log holds can be passed to a model, remembered and read back. Real logs stay far
below it (the deepest event in the harness's fixtures, the samples and the shared data nests
13 levels), while the tools that handle an event after it is read do not go much above it:
``orjson.dumps`` (``save``, ``fork``, the views) refuses 255 levels and more, and Python's
``json`` and recursive walkers hit the interpreter's recursion limit near 1000."""
_READ_CHUNK = 1 << 20  # decompressed bytes per read while counting against the cap
Compression = Literal["zstd", "none"]

_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_FILE_RE = re.compile(r"^session(?:\.v(\d+))?\.jsonl(\.zstd)?$")
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
# An integral JSON number written with a fraction (1.0, 30.00, as Python's json and orjson
# write floats), where it ends: JavaScript reads it as the integer, so the harness does.
_INTEGRAL_FRACTION = re.compile(rb"\.0+[\s,}\]]")
_MAX_SAFE_INT = 2**53 - 1
_TEMPLATE_PLACEHOLDER = re.compile(r"\{\{[A-Za-z_][A-Za-z0-9_]*\}\}")
_V01_HEADER_REQUIRED = ("type", "version", "id", "createdAt", "delegationDepth")
_V01_HEADER_OPTIONAL = ("cwd", "parentSession", "seedLength", "origin", "agentPreset")
_V23_HEADER_REQUIRED = ("type", "version", "id", "createdAt", "isSeeded", "delegationDepth")
_V23_HEADER_OPTIONAL = ("cwd", "parentSession", "origin", "agentPreset")


@dataclass(frozen=True)
class Recovery:
    """What a reader dropped from a torn tail, as the harness does, and how to repair the file.

    ``truncate_at`` is the byte offset where the torn frame or line starts; a writer that
    appends first truncates there and re-appends ``kept_lines`` (the complete lines that were
    decoded from the torn frame) in its new batch.
    """

    kind: Literal["torn-line", "torn-frame", "torn-tail"]
    truncate_at: int
    dropped_bytes: int
    kept_lines: tuple[bytes, ...] = ()
    torn_bytes: bytes = field(default=b"", repr=False)  # the original tail, to undo a repair
    reason: str = ""  # for a torn tail: the first damaged row, which no turn/end follows

    def __str__(self) -> str:
        what = {
            "torn-line": "a torn last line",
            "torn-frame": "a torn last zstd frame",
            "torn-tail": "a torn tail",
        }[self.kind]
        kept = f", kept {len(self.kept_lines)} complete line(s) from it" if self.kept_lines else ""
        why = f" ({self.reason}; no turn/end follows it)" if self.reason else ""
        return (
            f"recovered {what}: dropped {self.dropped_bytes} byte(s) from offset "
            f"{self.truncate_at}{kept}{why}"
        )


@dataclass
class DecodedLog:
    """A decoded log: header, raw events (``seq`` filled in), and where they came from."""

    header: dict[str, Any]
    events: list[dict[str, Any]]
    version: int
    compression: Compression
    data: bytes = field(repr=False)
    recovery: Recovery | None = None
    # 1-based text line of each event (v0/v1 packed rows make this differ from seq + 2).
    event_lines: list[int] | None = None
    # Read as a stripped log (no seq/time: the harness's snapshot fixtures); seqs and times
    # were rebuilt, so the events are not the file's and nothing may be appended to it.
    normalized: bool = False
    path: Path | None = None  # the file it was read from (None for bytes decoded in memory)

    @property
    def size(self) -> int:
        return len(self.data)

    def line_of(self, seq: int) -> int | None:
        if not 0 <= seq < len(self.events):
            return None
        return self.event_lines[seq] if self.event_lines is not None else seq + 2

    def frame_of_line(self, line: int) -> int | None:
        """1-based zstd frame holding a 1-based text line (None for plain JSONL)."""
        return _frame_of_line(self.data, line) if self.compression == "zstd" else None


def _frame_of_line(data: bytes, line: int) -> int | None:
    """Walk the frames counting newlines; only used to name the frame in an error."""
    dctx = zstandard.ZstdDecompressor()
    spans, torn_at = frame_spans(data)
    seen = 0
    for i, (a, b) in enumerate(spans):
        try:
            seen += dctx.decompressobj().decompress(data[a:b]).count(b"\n")
        except zstandard.ZstdError:
            return i + 1
        if seen >= line:
            return i + 1
    return len(spans) + 1 if torn_at is not None else None


# --- zstd framing --------------------------------------------------------------------------


def zstd_frame(data: bytes, level: int = 3) -> bytes:
    """One independent zstd frame with the content checksum set, as the harness writes."""
    return zstandard.ZstdCompressor(level=level, write_checksum=True).compress(data)


def _frame_end(data: bytes, pos: int) -> int | None:
    """End offset of the frame starting at ``pos``, or None if the frame is cut short."""
    n = len(data)
    magic = data[pos : pos + 4]
    if len(magic) < 4:
        return None
    if magic[1:] == b"\x2a\x4d\x18" and 0x50 <= magic[0] <= 0x5F:
        raise CorruptLog(
            f"a skippable zstd frame at offset {pos}: the harness writes none and refuses one"
        )
    if magic != _ZSTD_MAGIC:
        raise CorruptLog(f"bytes at offset {pos} are not a zstd frame (bad magic {magic.hex()})")
    if pos + 5 > n:
        return None
    fhd = data[pos + 4]
    fcs_flag, single, checksum, dict_flag = fhd >> 6, (fhd >> 5) & 1, (fhd >> 2) & 1, fhd & 3
    if fhd & 0x18:  # the reserved bit and the unused bit, both checked as the harness does
        raise CorruptLog(f"zstd frame at offset {pos} has a reserved frame-header bit set")
    p = pos + 5 + (0 if single else 1) + (0, 1, 2, 4)[dict_flag]
    p += (1 if single else 0, 2, 4, 8)[fcs_flag]
    while True:
        if p + 3 > n:
            return None
        bh = int.from_bytes(data[p : p + 3], "little")
        last, btype, bsize = bh & 1, (bh >> 1) & 3, bh >> 3
        if btype == 3:
            raise CorruptLog(f"zstd frame at offset {pos} has a reserved block type")
        p += 3 + (1 if btype == 1 else bsize)
        if p > n:
            return None
        if last:
            break
    p += 4 if checksum else 0
    return p if p <= n else None


_HEADER_FRAME_MAX = 1 << 20  # decoded bytes of frame 1 looked at: a header line is small


def _check_header_frame(data: bytes, span: tuple[int, int], path: str | Path | None) -> None:
    """Frame 1 holds exactly the header line (with its newline), as the harness writes it."""
    reader = zstandard.ZstdDecompressor().stream_reader(data[span[0] : span[1]])
    head = b""
    try:
        while len(head) <= _HEADER_FRAME_MAX and (chunk := reader.read(1 << 16)):
            head += chunk
    except zstandard.ZstdError:
        return  # the full decode names the damaged frame
    if not head.endswith(b"\n") or head.find(b"\n") != len(head) - 1:
        lines = head.count(b"\n") + (0 if head.endswith(b"\n") else 1)
        raise CorruptLog(
            f"zstd frame 1 must hold exactly the header line, as the harness writes it (the "
            f"header alone in the first frame); it holds {lines} line(s)",
            path=path,
            frame=1,
        )


def _complete_chain(data: bytes, pos: int, max_bytes: int) -> bool:
    """Whether complete, decodable frames run from ``pos`` to the end of ``data``. Their
    text is decoded in chunks and dropped, and no more than ``max_bytes`` of it: frames that
    inflate past that count as decodable (the damage before them is then refused)."""
    dctx = zstandard.ZstdDecompressor()
    budget = max_bytes
    while pos < len(data):
        try:
            end = _frame_end(data, pos)
            if end is None:
                return False
            reader = dctx.stream_reader(data[pos:end])
            while budget > 0 and (chunk := reader.read(_READ_CHUNK)):
                budget -= len(chunk)
        except (CorruptLog, zstandard.ZstdError):
            return False
        pos = end
    return True


def _refuse_damage_before_frames(
    data: bytes,
    torn_at: int,
    frame: int,
    path: str | Path | None,
    max_bytes: int = MAX_DECODED_BYTES,
) -> None:
    """A frame that runs past the end is a torn tail only if no complete frames follow it.

    Damage inside a middle frame can make its block walk overrun the file; the intact
    frames after it are then still there, and a repair that truncates at the damaged frame
    would cut them away. That is corruption, never a torn tail.
    """
    pos = data.find(_ZSTD_MAGIC, torn_at + 1)
    while pos != -1:
        if _complete_chain(data, pos, max_bytes):
            raise CorruptLog(
                f"zstd frame {frame} (offset {torn_at}) is damaged and complete frames follow "
                f"it from offset {pos}: damage before intact frames is corruption, not a torn "
                "tail (a repair would truncate the intact frames away); restore the file from "
                "a copy",
                path=path,
                frame=frame,
            )
        pos = data.find(_ZSTD_MAGIC, pos + 1)


def frame_spans(data: bytes) -> tuple[list[tuple[int, int]], int | None]:
    """Complete frames as (start, end) byte spans, and the start of a torn final frame if any."""
    spans: list[tuple[int, int]] = []
    pos, n = 0, len(data)
    while pos < n:
        try:
            end = _frame_end(data, pos)
        except CorruptLog as exc:
            raise exc.at(frame=len(spans) + 1) from None
        if end is None:
            return spans, pos
        spans.append((pos, end))
        pos = end
    return spans, None


def _too_big(path: str | Path | None, max_bytes: int) -> SessionFormatError:
    return SessionFormatError(
        f"decodes to more than {size_text(max_bytes)} (max_bytes={max_bytes}), the most one read "
        "takes: a zstd decompression bomb, or a log too large to read at once; if it is a real "
        "log, pass a larger max_bytes= (Session.open(path, max_bytes=...), "
        "Workspace(home, max_bytes=...), ctxsdk.session.read_log)",
        path=path,
    )


def check_max_bytes(max_bytes: Any) -> int:
    """``max_bytes`` if it is a positive whole number of bytes, else ``InvalidArgument``."""
    return check_byte_limit(max_bytes, "MAX_DECODED_BYTES", MAX_DECODED_BYTES)


def _declared_size(data: bytes, spans: list[tuple[int, int]]) -> int:
    """The content sizes the frames declare in their headers, summed (a frame that declares
    none counts 0: its text is counted as it decodes)."""
    total = 0
    for a, _ in spans:
        try:
            size = zstandard.frame_content_size(data[a : a + 18])
        except zstandard.ZstdError:
            continue  # the decode names a damaged header
        total += max(size, 0)
    return total


def _read_capped(
    reader: zstandard.ZstdDecompressionReader,
    max_bytes: int,
    path: str | Path | None,
    already: int = 0,
) -> bytes:
    """Everything ``reader`` decodes, in chunks, refused as soon as ``already`` plus it passes
    ``max_bytes``."""
    parts: list[bytes] = []
    total = already
    while chunk := reader.read(_READ_CHUNK):
        total += len(chunk)
        if total > max_bytes:
            raise _too_big(path, max_bytes)
        parts.append(chunk)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _decompress_frames(
    data: bytes, path: str | Path | None, max_bytes: int = MAX_DECODED_BYTES
) -> tuple[bytes, Recovery | None]:
    try:
        spans, torn_at = frame_spans(data)
    except CorruptLog as exc:
        raise exc.at(path=path) from None
    if not spans:
        raise CorruptLog(
            "no complete zstd frame: the header frame is missing or cut", path=path, frame=1
        )
    if torn_at is not None:
        _refuse_damage_before_frames(data, torn_at, len(spans) + 1, path, max_bytes)
    _check_header_frame(data, spans[0], path)
    if _declared_size(data, spans) > max_bytes:  # refused before a byte is decoded
        raise _too_big(path, max_bytes)
    dctx = zstandard.ZstdDecompressor()
    try:
        # One C call over all complete frames; the per-frame walk below only runs on damage.
        reader = dctx.stream_reader(data[: spans[-1][1]], read_across_frames=True)
        text = _read_capped(reader, max_bytes, path)
    except zstandard.ZstdError:
        for i, (a, b) in enumerate(spans):
            try:
                dctx.decompressobj().decompress(data[a:b])
            except zstandard.ZstdError as exc:
                raise CorruptLog(
                    f"zstd frame does not decode ({exc}); the file is damaged before its end",
                    path=path,
                    frame=i + 1,
                ) from exc
        raise CorruptLog("zstd frames do not decode", path=path) from None
    recovery = None
    if torn_at is not None:
        try:
            partial = _read_capped(dctx.stream_reader(data[torn_at:]), max_bytes, path, len(text))
        except zstandard.ZstdError:
            partial = b""
        cut = partial.rfind(b"\n") + 1
        kept = tuple(line + b"\n" for line in partial[:cut].split(b"\n")[:-1])
        recovery = Recovery("torn-frame", torn_at, len(data) - torn_at, kept, data[torn_at:])
        text += partial[:cut]
    return text, recovery


# --- header --------------------------------------------------------------------------------


def version_from_filename(name: str) -> tuple[int | None, Compression] | None:
    """(generation, compression) named by a canonical session file name, or None."""
    m = _FILE_RE.match(name)
    if not m:
        return None
    return (int(m.group(1)) if m.group(1) else 0), ("zstd" if m.group(2) else "none")


def _is_safe_int(v: Any) -> bool:
    return type(v) is int and 0 <= v <= 2**53 - 1


def validate_header(header: Any, *, expected_version: int | None = None) -> int:
    """Check the header line as the harness does; return its version."""
    if not isinstance(header, dict) or header.get("type") != "session":
        raise SessionFormatError('line 1 is not a session header (want {"type":"session",...})')
    version = header.get("version")
    if type(version) is not int or version not in KNOWN_VERSIONS:
        raise UnsupportedVersion(
            f"session format version {version!r} is not one this reader knows "
            f"({', '.join(map(str, KNOWN_VERSIONS))}): written by a newer harness, upgrade ctxsdk"
        )
    if expected_version is not None and version != expected_version:
        raise UnsupportedVersion(
            f"header says version {version} but the file name says version {expected_version}"
        )
    required: tuple[str, ...]
    optional: tuple[str, ...]
    if version <= 1:
        required, optional = _V01_HEADER_REQUIRED, _V01_HEADER_OPTIONAL
        for legacy in ("sandboxMode", "approvalPolicy"):
            if legacy in header:
                raise SessionFormatError(f"header has the legacy key {legacy!r}, which is refused")
    else:
        required, optional = _V23_HEADER_REQUIRED, _V23_HEADER_OPTIONAL
    missing = [k for k in required if k not in header]
    if missing:
        raise SessionFormatError(f"v{version} header is missing {', '.join(missing)}")
    if version >= 2:
        extra = [k for k in header if k not in required and k not in optional]
        if extra:
            raise SessionFormatError(f"v{version} header has unknown key(s) {', '.join(extra)}")
    if not isinstance(header["id"], str) or not header["id"]:
        raise SessionFormatError("header id must be a non-empty string")
    if not _is_safe_int(header["createdAt"]):
        raise SessionFormatError("header createdAt must be a non-negative safe integer (epoch ms)")
    if not _is_safe_int(header["delegationDepth"]):
        raise SessionFormatError("header delegationDepth must be a non-negative integer")
    if version >= 2 and type(header["isSeeded"]) is not bool:
        raise SessionFormatError("header isSeeded must be true or false")
    if "seedLength" in header and not _is_safe_int(header["seedLength"]):
        raise SessionFormatError("header seedLength must be a non-negative integer")
    for key in ("cwd", "parentSession", "origin", "agentPreset"):
        if key in header and not isinstance(header[key], str):
            raise SessionFormatError(f"header {key} must be a string")
    # The released header codecs refuse a cwd that is not absolute, v0's too (the harness
    # reads a v0 log through it: "format v0 header cwd must be absolute"). A whole template
    # placeholder ("{{cwd}}") in a v0 header is read: the harness's snapshot fixtures carry
    # one, filled in by its test harness before the harness reads them; migrating one refuses.
    cwd = header.get("cwd")
    if (
        isinstance(cwd, str)
        and not cwd.startswith("/")
        and not (version == 0 and _TEMPLATE_PLACEHOLDER.fullmatch(cwd))
    ):
        raise SessionFormatError(
            f"format v{version} header cwd must be absolute (got {cwd!r}), as the harness "
            "requires: a session's cwd is the absolute directory it ran in; fix the header"
        )
    if "origin" in header and header["origin"] != "subagent":
        raise SessionFormatError(f'header origin may only be "subagent", not {header["origin"]!r}')
    return version


# --- sourceEventSeqs ranges ----------------------------------------------------------------


def decode_source_seqs(value: Any, seq: int) -> list[int]:
    """Expand ``[start,end]`` range pairs and check: unique, all < seq, increasing if ranged."""
    if not isinstance(value, list):
        raise SessionFormatError("sourceEventSeqs must be an array", seq=seq)
    out: list[int] = []
    ranged = False
    for item in value:
        if type(item) is int:
            out.append(item)
        elif (
            isinstance(item, list)
            and len(item) == 2
            and type(item[0]) is int
            and type(item[1]) is int
            and item[0] <= item[1]
        ):
            if item[0] < 0 or item[1] >= seq:  # before expanding: a range may be huge
                raise SessionFormatError("sourceEventSeqs must cite earlier events only", seq=seq)
            ranged = True
            out.extend(range(item[0], item[1] + 1))
        else:
            raise SessionFormatError(
                f"sourceEventSeqs member {item!r} is not a seq or range", seq=seq
            )
    if out:
        if min(out) < 0 or max(out) >= seq:
            raise SessionFormatError("sourceEventSeqs must cite earlier events only", seq=seq)
        if ranged:
            if any(b <= a for a, b in itertools.pairwise(out)):
                raise SessionFormatError("ranged sourceEventSeqs must increase strictly", seq=seq)
        elif len(set(out)) != len(out):
            raise SessionFormatError("sourceEventSeqs has duplicates", seq=seq)
    return out


def encode_source_seqs(seqs: list[int]) -> list[int | list[int]]:
    """Runs of 3+ consecutive seqs become ``[start,end]`` pairs (increasing lists only)."""
    if any(b <= a for a, b in itertools.pairwise(seqs)):
        return list(seqs)
    out: list[int | list[int]] = []
    i, n = 0, len(seqs)
    while i < n:
        j = i
        while j + 1 < n and seqs[j + 1] == seqs[j] + 1:
            j += 1
        if j - i >= 2:
            out.append([seqs[i], seqs[j]])
        else:
            out.extend(seqs[i : j + 1])
        i = j + 1
    return out


# --- nesting depth -------------------------------------------------------------------------

_CONTAINERS = (dict, list, tuple)
# Every byte but the two openers and the newline: what is left of a text after deleting these
# is, line by line, its openers, and a line cannot nest deeper than it has openers.
_NOT_OPENER = bytes(b for b in range(256) if b not in b"[{\n")
_PATH_SHOWN = 6  # path members named in an error before the rest is counted


def deep_path(value: Any, limit: int = MAX_JSON_DEPTH) -> list[str | int] | None:
    """The path (keys and indexes) to the first array or object nested deeper than ``limit``
    levels in ``value`` (``value`` itself is level 1), or None when it nests no deeper.

    Iterative, so it never recurses however deep the value is (a cycle reads as too deep).
    """
    # (node, depth, key, parent entry): the parent links rebuild the path, only on the way out.
    Entry = tuple[Any, int, str | int, Any]
    stack: list[Entry] = [(value, 1, "", None)]
    while stack:
        entry = stack.pop()
        node, depth = entry[0], entry[1]
        if not isinstance(node, _CONTAINERS):
            continue
        if depth > limit:
            path: list[str | int] = []
            at: Entry | None = entry
            while at is not None and at[3] is not None:
                path.append(at[2])
                at = at[3]
            return path[::-1]
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in items:
            if isinstance(child, _CONTAINERS):
                stack.append((child, depth + 1, key if isinstance(key, int) else str(key), entry))
    return None


def json_path_text(path: list[str | int]) -> str:
    """A ``deep_path`` as text (``data.content[0].meta[0]``), its first members only."""
    shown = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path[:_PATH_SHOWN])
    shown = shown.lstrip(".") or "the top level"
    more = len(path) - _PATH_SHOWN
    return f"{shown} and {more} level(s) below it" if more > 0 else shown


def depth_reason(path: list[str | int] | None, limit: int = MAX_JSON_DEPTH) -> str:
    """Why a value nested too deep is refused, naming where (None: past the JSON parser's
    own limit of 1024 levels) and the limit."""
    where = f"at {json_path_text(path)}" if path is not None else "past the parser's 1024 levels"
    return (
        f"nested more than {limit} levels of arrays/objects deep, {where}; the limit is "
        f"MAX_JSON_DEPTH = {limit} (real logs nest about a dozen levels, and saving, forking "
        "and the views cannot handle such a value), so it is refused: remove or flatten it"
    )


def _deep_lines(text: bytes, n_lines: int, limit: int = MAX_JSON_DEPTH) -> list[int]:
    """0-based indexes of the lines that may nest deeper than ``limit``: those with more than
    ``limit`` openers (``[``/``{``, strings included). One C pass over the text (a table
    delete) and a split of what is left; the exact walk runs only on these lines."""
    opens = text.translate(None, _NOT_OPENER)
    if len(opens) - n_lines <= limit:  # fewer openers in all than one deep line needs
        return []
    parts = opens.split(b"\n")[:n_lines]
    if max(map(len, parts)) <= limit:
        return []
    return [i for i, part in enumerate(parts) if len(part) > limit]


def _seq_of_line(lines: list[bytes], k: int, version: int | None) -> int | None:
    """The seq of the event on 0-based line ``k`` (error path only: packed v0/v1 rows hold
    several events, so their lines before it are parsed and counted)."""
    if k < 1 or version is None:
        return None
    if version >= 2:
        return k - 1
    seq = 0
    for line in lines[1:k]:
        try:
            _, count = _row_seq(loads_line(line))
        except orjson.JSONDecodeError:
            return None
        if count is None:
            return None
        seq += count
    return seq


def _refuse_deep_line(lines: list[bytes], k: int, version: int | None) -> None:
    """Raise the located error if 0-based line ``k`` nests past ``MAX_JSON_DEPTH``."""
    path: list[str | int] | None
    try:
        path = deep_path(orjson.loads(_mask_surrogates(lines[k])))
    except orjson.JSONDecodeError as exc:
        if "depth limit" not in str(exc):
            return  # not valid JSON for another reason: the parse names it
        path = None
    else:
        if path is None:
            return
    what = "the header line is " if k == 0 else "the event is "
    raise SessionFormatError(
        what + depth_reason(path), line=k + 1, seq=_seq_of_line(lines, k, version)
    )


def refuse_deep_events(
    events: list[dict[str, Any]],
    start: int = 0,
    *,
    header: dict[str, Any] | None = None,
    limit: int = MAX_JSON_DEPTH,
) -> None:
    """Refuse in-memory events ``events[start:]`` (and ``header``) nested deeper than
    ``limit`` with a ``SessionFormatError`` naming the seq (its index) and where in the event.

    Each event is serialized once (orjson, in C) and its openers counted; only an event with
    more than ``limit`` of them, or one orjson cannot write, is walked.
    """
    if header is not None and (path := deep_path(header, limit)) is not None:
        raise SessionFormatError("the header is " + depth_reason(path, limit))
    dumps = orjson.dumps
    small = 2 * limit  # a text this short cannot hold limit + 1 open-close pairs
    for i in range(start, len(events)):
        ev = events[i]
        try:
            text = dumps(ev)
        except TypeError:  # orjson.JSONEncodeError: 255+ levels, a cycle, or not JSON at all
            pass
        else:
            if len(text) <= small or text.count(b"[") + text.count(b"{") <= limit:
                continue
        path = deep_path(ev, limit)
        if path is not None:
            raise SessionFormatError("the event is " + depth_reason(path, limit), seq=i)


# --- rows ----------------------------------------------------------------------------------


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


def _js_number(value: float) -> int | float:
    """A float as JavaScript's ``JSON.parse`` leaves it: integral and within the safe range,
    an integer (``1.0`` is ``1``); otherwise unchanged (``-0.0`` too, which the harness
    refuses wherever it wants a count)."""
    if not value.is_integer() or not -_MAX_SAFE_INT <= value <= _MAX_SAFE_INT:
        return value
    if value == 0 and math.copysign(1.0, value) < 0:
        return value
    return int(value)


def js_numbers(value: Any) -> Any:
    """``value`` with every integral float inside it an ``int`` (in place for containers).

    JSON has one number type: the harness (JavaScript) reads ``"turn": 1.0`` as the integer
    1 and accepts it wherever an integer belongs, so the reader does the same."""
    t = type(value)
    if t is float:
        return _js_number(value)
    if t is dict:
        for k, v in value.items():
            tv = type(v)
            if tv is float or tv is dict or tv is list:
                value[k] = js_numbers(v)
    elif t is list:
        for i, v in enumerate(value):
            tv = type(v)
            if tv is float or tv is dict or tv is list:
                value[i] = js_numbers(v)
    return value


def _js_rows(lines: list[bytes], rows: list[Any]) -> None:
    """Integral floats made integers in the rows whose line may hold one (a cheap byte test
    picks them; a match inside a string only costs a walk)."""
    find = _INTEGRAL_FRACTION.search
    for i, row in enumerate(rows):
        if find(lines[i]):
            rows[i] = js_numbers(row)


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
    """
    recovery: Recovery | None = None
    if compression == "zstd":
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
    from ._migrate._legacy import upgrade_on_read  # the package imports this module

    try:
        upgrade_on_read(log.events, log.header["id"])
    except SessionFormatError as exc:
        line = log.line_of(exc.seq) if exc.seq is not None else None
        raise exc.at(line=line) from None


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


def resolve_log_path(path: str | Path) -> Path:
    """A session file, or the canonical file of a session directory (highest generation).

    The log of a directory is chosen by name, as the harness (and the workspace listing)
    choose it: the numerically highest canonical generation (no ``.v0``, no leading zeros),
    whatever kind of file it is, so a FIFO or a directory with that name is then refused by
    the read naming it, never passed over for an older generation or a "no log here".

    A directory whose highest generation is there in both encodings (``session.jsonl`` and
    ``session.jsonl.zstd``, or ``session.vN.jsonl`` and ``session.vN.jsonl.zstd``) is refused
    naming both: a harness root has one encoding and rejects the other, so which log is the
    session's cannot be told from the directory."""
    from ._layout import is_session_file_name  # _layout imports this module

    p = Path(path).expanduser()
    if p.is_dir():
        gens: dict[int, list[Path]] = {}
        for child in p.iterdir():
            named = version_from_filename(child.name)
            if named is not None and is_session_file_name(child.name):
                gens.setdefault(named[0] or 0, []).append(child)
        if not gens:
            raise SessionFormatError(f"{p}: no session.jsonl[.zstd] or session.vN.* file in it")
        top = sorted(gens[max(gens)], key=lambda c: c.name)
        if len(top) > 1:
            names = " and ".join(c.name for c in top)
            raise SessionFormatError(
                f"{p}: holds both {names}, one log in two encodings; a harness root has one "
                "encoding and rejects the other, so which is this session's cannot be told: "
                f"open the file you mean (e.g. Session.open({str(top[-1])!r})), or remove the "
                "other (Workspace(home, compression='zstd' or 'none') reads one encoding)"
            )
        return top[0]
    return p


def _read_file(p: Path, max_bytes: int) -> bytes:
    """A log file's bytes, read only if it is a regular file (a FIFO, device or socket is
    never opened: see ``_files``) of at most ``max_bytes``."""

    def refuse(problem: FileRefusal, detail: str) -> SessionFormatError:
        if problem == "too-large":
            return _too_big(p, max_bytes)
        return SessionFormatError(
            f"is {detail}, not a regular file; a session log is a regular file, so it is not read",
            path=p,
        )

    return read_regular_file(p, max_bytes, refuse)


def read_log(
    path: str | Path, *, normalized: bool | None = None, max_bytes: int = MAX_DECODED_BYTES
) -> DecodedLog:
    """Read and decode a session file (never modifies it).

    A stripped log (no ``seq``/``time`` on any row, like the harness's snapshot fixtures) is
    read as normalized unless ``normalized=False``; see ``decode_bytes``.

    A path that is not a regular file, or that decodes to more than ``max_bytes`` (see
    ``MAX_DECODED_BYTES``), raises ``SessionFormatError``; a log this process may not read
    raises ``Unreadable`` (a ``PermissionError``); a missing one or a symlink loop ``NotFound``.
    """
    from ..errors import NotFound, Unreadable

    check_max_bytes(max_bytes)
    p = Path(path).expanduser()
    try:
        p = resolve_log_path(p)
        data = _read_file(p, max_bytes)
    except FileNotFoundError:
        raise NotFound(f"{p}: no such session file") from None
    except PermissionError as exc:
        where = exc.filename if exc.filename is not None else p
        raise Unreadable(
            f"{where}: permission denied ({exc.strerror}): this process may not read the "
            "session log; fix its permissions (or those of its directory) or read it as its owner",
            path=p,
        ) from None
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        raise NotFound(f"{p}: no such session file ({exc.strerror})") from None
    named = version_from_filename(p.name)
    if data[:4] == _ZSTD_MAGIC:
        compression: Compression = "zstd"
    elif named is not None:
        compression = named[1]
    else:
        compression = "zstd" if p.name.endswith(".zstd") else "none"
    if compression == "zstd" and data[:4] != _ZSTD_MAGIC:
        raise CorruptLog(
            "file is named .zstd but does not start with a zstd frame", path=p, frame=1
        )
    # Non-canonical names (fixtures, exports) carry no generation; trust the header then.
    expected = named[0] if named is not None else None
    return decode_bytes(
        data,
        compression=compression,
        path=p,
        expected_version=expected,
        normalized=normalized,
        max_bytes=max_bytes,
    )


def dumps_line(obj: Any) -> bytes:
    """``JSON.stringify(obj) + "\\n"`` (compact, key order kept); see ``dumps_json``."""
    try:
        return orjson.dumps(obj) + b"\n"
    except TypeError:
        return dumps_json(obj) + b"\n"


# --- lone UTF-16 surrogates ------------------------------------------------------------------
#
# The harness is JavaScript: its strings are UTF-16, a cut surrogate pair leaves a lone
# surrogate in one, ``JSON.stringify`` writes it as a ``\udXXX`` escape and ``JSON.parse``
# reads it back. orjson refuses it both ways (UTF-8 cannot hold one), so a line or a value
# holding one takes the slow path below; every other line and value stays on orjson.

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_ORJSON_INTS = (-(2**63), 2**64 - 1)  # orjson reads an integer outside these as a float


def _mask_surrogates(line: bytes) -> bytes:
    """``line`` with every surrogate escape (paired or lone) made ``\\ufffd``: the same JSON
    structure and validity, but for orjson's rule against lone surrogates."""
    if b"\\u" not in line:
        return line
    return _SURROGATE_ESCAPE.sub(rb"\\ufffd", line)


def _orjson_int(text: str) -> int | float:
    value = int(text)
    return value if _ORJSON_INTS[0] <= value <= _ORJSON_INTS[1] else float(value)


def loads_line(line: bytes) -> Any:
    """One JSON line's value as the harness's ``JSON.parse`` reads it.

    ``orjson.loads``; a line orjson refuses only for a lone surrogate escape (``"\\ud800"``)
    is parsed with Python's ``json``, whose str then holds the lone surrogate. Any other
    defect raises orjson's own ``JSONDecodeError`` for the line, unchanged. Nesting is not
    limited here: the readers refuse lines past ``MAX_JSON_DEPTH`` before they parse them.
    """
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        masked = _mask_surrogates(line)
        if masked == line:
            raise
        try:
            orjson.loads(masked)  # the fast path's rules, lone surrogates aside
            return json.loads(line.decode(), parse_int=_orjson_int)
        except (ValueError, RecursionError):
            raise exc from None


def _has_surrogate(text: str) -> bool:
    if text.isascii():
        return False
    try:
        text.encode()
    except UnicodeEncodeError:
        return True
    return False


def _js_string(text: str) -> bytes:
    """A str as ``JSON.stringify`` writes it: orjson's escapes (Python's ``json`` with
    ``ensure_ascii=False`` makes the same ones), a lone surrogate as ``\\udXXX``."""
    return json.dumps(text, ensure_ascii=False).encode("utf-8", "backslashreplace")


def _escape_surrogates(value: Any, found: list[bool]) -> Any:
    """``value`` with each str holding a lone surrogate (and each object with such a key)
    replaced by an ``orjson.Fragment`` of its JSON text."""
    if isinstance(value, str):
        if _has_surrogate(value):
            found.append(True)
            return orjson.Fragment(_js_string(value))
        return value
    if isinstance(value, dict):
        items = [(k, _escape_surrogates(v, found)) for k, v in value.items()]
        if any(isinstance(k, str) and _has_surrogate(k) for k, _ in items):
            if not all(isinstance(k, str) for k, _ in items):
                raise TypeError("Dict key must be str")
            found.append(True)
            body = b",".join(_js_string(k) + b":" + orjson.dumps(v) for k, v in items)
            return orjson.Fragment(b"{" + body + b"}")
        return dict(items)
    if isinstance(value, list | tuple):
        return [_escape_surrogates(v, found) for v in value]
    return value


def dumps_json(obj: Any) -> bytes:
    """``JSON.stringify(obj)`` as UTF-8 bytes: ``orjson.dumps``; a value holding a str with a
    lone surrogate (read from a harness log, see ``loads_line``) is written with the
    surrogate as JavaScript writes it, a lowercase ``\\udXXX`` escape, and everything else in
    it byte for byte as orjson writes it. Whatever else orjson cannot write raises its
    ``TypeError`` unchanged."""
    try:
        return orjson.dumps(obj)
    except TypeError as exc:
        found: list[bool] = []
        try:
            escaped = _escape_surrogates(obj, found)
        except RecursionError:
            raise exc from None
        if not found:
            raise
        return orjson.dumps(escaped)


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON value (an orjson round trip, ~10x faster than ``deepcopy``),
    strs with lone surrogates included."""
    try:
        return orjson.loads(orjson.dumps(value))
    except TypeError:
        return loads_line(dumps_json(value))
