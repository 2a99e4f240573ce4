"""Decompressing a zstd log: its complete frames decoded in one pass under the byte cap, the
header frame checked, a torn last frame recovered (its complete lines kept) and damage
before intact frames refused as corruption, never repaired as a torn tail.
"""

from __future__ import annotations

from pathlib import Path

import zstandard

from ...errors import CorruptLog
from ._byte_cap import _READ_CHUNK, MAX_DECODED_BYTES, _too_big
from ._decoded import Recovery
from ._framing import _ZSTD_MAGIC, _frame_chain, _frame_end

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


def _declared_size(
    data: bytes, spans: list[tuple[int, int]], sizes: list[int] | None = None
) -> tuple[int, bool]:
    """The content sizes the frames declare in their headers, summed (a frame that declares
    none counts 0: its text is counted as it decodes), and whether every frame declares one.
    ``sizes``: those ``_frame_chain`` read while walking the frames (-1: none declared, or a
    header zstd cannot parse), else each header is read again."""
    if sizes is None:
        sizes = []
        for a, _ in spans:
            try:
                sizes.append(zstandard.frame_content_size(data[a : a + 18]))
            except zstandard.ZstdError:
                sizes.append(-1)  # the decode names a damaged header
    return sum(size for size in sizes if size > 0), all(size >= 0 for size in sizes)


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
        spans, torn_at, sizes = _frame_chain(data)
    except CorruptLog as exc:
        raise exc.at(path=path) from None
    if not spans:
        raise CorruptLog(
            "no complete zstd frame: the header frame is missing or cut", path=path, frame=1
        )
    if torn_at is not None:
        _refuse_damage_before_frames(data, torn_at, len(spans) + 1, path, max_bytes)
    _check_header_frame(data, spans[0], path)
    declared, every = _declared_size(data, spans, sizes)
    if declared > max_bytes:  # refused before a byte is decoded
        raise _too_big(path, max_bytes)
    dctx = zstandard.ZstdDecompressor()
    try:
        # One C call over all complete frames; the per-frame walk below only runs on damage.
        complete = data if spans[-1][1] == len(data) else data[: spans[-1][1]]
        reader = dctx.stream_reader(complete, read_across_frames=True)
        # Frames that all declare their size (the harness's and ctxsdk's do) are read in one
        # call of that size, under the cap: no chunks to join. Whatever they decode past it
        # (a frame that understates its size) is still read and counted in chunks.
        head = reader.read(declared) if every and declared else b""
        rest = _read_capped(reader, max_bytes, path, len(head))
        text = head + rest if rest else head
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
