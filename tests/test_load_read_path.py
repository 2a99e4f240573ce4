"""The load path's one-call decompression: frames that declare their size are read in one call,
frames that declare none (or a mix) are read in chunks, and both give the same session."""

from __future__ import annotations

from pathlib import Path

import pytest
import zstandard

import ctxsdk as cx
from ctxsdk.bench._load import make_log
from ctxsdk.errors import SessionFormatError
from ctxsdk.session._codec._decompress import _declared_size, _decompress_frames
from ctxsdk.session._codec._framing import frame_spans


def _rewrite_frames(src: Path, dst: Path, *, sized: bool) -> None:
    """The same lines in the same frames, each frame written with or without its content size."""
    data = src.read_bytes()
    spans, torn = frame_spans(data)
    assert torn is None
    dctx = zstandard.ZstdDecompressor()
    out = bytearray()
    for k, (a, b) in enumerate(spans):
        text = dctx.decompressobj().decompress(data[a:b])
        write_size = sized or k % 2 == 1  # unsized: every other frame declares no size
        cctx = zstandard.ZstdCompressor(write_checksum=True, write_content_size=write_size)
        if write_size:
            out += cctx.compress(text)
        else:
            obj = cctx.compressobj()
            out += obj.compress(text) + obj.flush()
    dst.write_bytes(bytes(out))


def test_frames_with_and_without_declared_sizes_read_the_same(tmp_path: Path) -> None:
    src = make_log(tmp_path / "src.jsonl.zstd", 400)
    sized = tmp_path / "sized.jsonl.zstd"
    mixed = tmp_path / "mixed.jsonl.zstd"
    _rewrite_frames(src, sized, sized=True)
    _rewrite_frames(src, mixed, sized=False)
    d_sized, d_mixed = sized.read_bytes(), mixed.read_bytes()
    assert _declared_size(d_sized, frame_spans(d_sized)[0])[1] is True
    assert _declared_size(d_mixed, frame_spans(d_mixed)[0])[1] is False
    text_sized, _ = _decompress_frames(d_sized, sized)
    text_mixed, _ = _decompress_frames(d_mixed, mixed)
    assert text_sized == text_mixed and text_sized.count(b"\n") == len(cx.Session.open(src)) + 1
    a, b = cx.Session.open(sized), cx.Session.open(mixed)
    assert a.raw_events == b.raw_events == cx.Session.open(src).raw_events
    assert a.messages() == b.messages()


def test_a_cap_below_the_declared_text_is_refused_before_the_one_call(tmp_path: Path) -> None:
    src = make_log(tmp_path / "src.jsonl.zstd", 200)
    text, _ = _decompress_frames(src.read_bytes(), src)
    with pytest.raises(SessionFormatError, match="max_bytes"):
        cx.Session.open(src, max_bytes=len(text) - 1)
    assert len(cx.Session.open(src, max_bytes=len(text))) > 0
