"""zstd framing as the harness writes it: one independent frame per batch, each with its
content checksum. Writing one frame, walking a chain of frames to their byte spans (and the
start of a torn last frame), and naming the frame a text line is in.

Only the frame structure: decoding the frames' text is ``_decompress``.
"""

from __future__ import annotations

import zstandard

from ...errors import CorruptLog

_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_WINDOW_LOG_MAX = 31  # ZSTD_WINDOWLOG_MAX on 64-bit builds: a larger window is refused


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


def zstd_frame(data: bytes, level: int = 3) -> bytes:
    """One independent zstd frame with the content checksum set, as the harness writes."""
    return zstandard.ZstdCompressor(level=level, write_checksum=True).compress(data)


def _frame_end(data: bytes, pos: int) -> int | None:
    """End offset of the frame starting at ``pos``, or None if the frame is cut short."""
    return _walk_frame(data, pos)[0]


def _walk_frame(data: bytes, pos: int) -> tuple[int | None, int]:
    """(end offset of the frame starting at ``pos`` or None if it is cut short, the content
    size its header declares or -1 when it declares none)."""
    n = len(data)
    if not data.startswith(_ZSTD_MAGIC, pos):
        magic = data[pos : pos + 4]
        if len(magic) < 4:
            return None, -1
        if magic[1:] == b"\x2a\x4d\x18" and 0x50 <= magic[0] <= 0x5F:
            raise CorruptLog(
                f"a skippable zstd frame at offset {pos}: the harness writes none and refuses one"
            )
        raise CorruptLog(f"bytes at offset {pos} are not a zstd frame (bad magic {magic.hex()})")
    if pos + 5 > n:
        return None, -1
    fhd = data[pos + 4]
    fcs_flag, single, checksum, dict_flag = fhd >> 6, (fhd >> 5) & 1, (fhd >> 2) & 1, fhd & 3
    if fhd & 0x18:  # the reserved bit and the unused bit, both checked as the harness does
        raise CorruptLog(f"zstd frame at offset {pos} has a reserved frame-header bit set")
    p = pos + 5 + (0 if single else 1) + (0, 1, 2, 4)[dict_flag]
    fcs_size = (1 if single else 0, 2, 4, 8)[fcs_flag]
    # The frame content size field (RFC 8878 3.1.1.1.4), read as zstd reads it; -1 where the
    # header declares none, or where zstd refuses the header (a window past 2^31 bytes).
    if fcs_size and p + fcs_size <= n and (single or 10 + (data[pos + 5] >> 3) <= _WINDOW_LOG_MAX):
        declared = int.from_bytes(data[p : p + fcs_size], "little") + (256 if fcs_size == 2 else 0)
    else:
        declared = -1
    p += fcs_size
    while True:
        if p + 3 > n:
            return None, declared
        bh = data[p] | data[p + 1] << 8 | data[p + 2] << 16
        last, btype, bsize = bh & 1, (bh >> 1) & 3, bh >> 3
        if btype == 3:
            raise CorruptLog(f"zstd frame at offset {pos} has a reserved block type")
        p += 3 + (1 if btype == 1 else bsize)
        if p > n:
            return None, declared
        if last:
            break
    p += 4 if checksum else 0
    return (p if p <= n else None), declared


def frame_spans(data: bytes) -> tuple[list[tuple[int, int]], int | None]:
    """Complete frames as (start, end) byte spans, and the start of a torn final frame if any."""
    spans, torn_at, _ = _frame_chain(data)
    return spans, torn_at


def _frame_chain(data: bytes) -> tuple[list[tuple[int, int]], int | None, list[int]]:
    """``frame_spans`` and the content size each complete frame declares (-1: none)."""
    spans: list[tuple[int, int]] = []
    sizes: list[int] = []
    pos, n = 0, len(data)
    while pos < n:
        try:
            end, declared = _walk_frame(data, pos)
        except CorruptLog as exc:
            raise exc.at(frame=len(spans) + 1) from None
        if end is None:
            return spans, pos, sizes
        spans.append((pos, end))
        sizes.append(declared)
        pos = end
    return spans, None, sizes
