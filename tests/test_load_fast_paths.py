"""The load path's shortcuts give the answers of the long ways they skip: the content sizes
read while walking the frames are zstd's own, the opener search finds exactly the lines the
per-line count finds, the envelope, one-node span and tool-result rewrite checks refuse and
accept what the general checks do."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
import zstandard

from ctxsdk.errors import SessionFormatError
from ctxsdk.session._codec._decompress import _declared_size
from ctxsdk.session._codec._depth import _NOT_OPENER, _deep_lines
from ctxsdk.session._codec._framing import _frame_chain, frame_spans
from ctxsdk.session._replay import (
    SurfaceState,
    _same_but_result_content,
    _without_result_content,
    replay_log,
)
from ctxsdk.testing import LogBuilder


def _frames() -> list[bytes]:
    out = []
    for size in (0, 1, 255, 256, 257, 300, 65_535, 65_791, 65_792, 70_000, 1 << 20):
        text = (b"line of a log %d\n" % size) * (size // 16 + 1)
        text = text[:size]
        out.append(zstandard.ZstdCompressor(level=3).compress(text))
        out.append(zstandard.ZstdCompressor(write_content_size=False).compress(text))
        out.append(zstandard.ZstdCompressor(write_checksum=True).compress(text))
        obj = zstandard.ZstdCompressor().compressobj()  # streamed: no size declared
        out.append(obj.compress(text) + obj.flush())
    return out


def test_the_walks_content_sizes_are_zstds_own() -> None:
    frames = _frames()
    for frame in frames:
        spans, torn, sizes = _frame_chain(frame)
        assert spans == [(0, len(frame))] and torn is None
        assert sizes == [zstandard.frame_content_size(frame[:18])]
    chain = b"".join(frames)
    spans, torn, sizes = _frame_chain(chain)
    assert (spans, torn) == frame_spans(chain)
    assert _declared_size(chain, spans, sizes) == _declared_size(chain, spans)


def test_a_window_zstd_refuses_declares_no_size_as_zstd_reads_it() -> None:
    obj = zstandard.ZstdCompressor().compressobj()
    frame = bytearray(obj.compress(b"x" * 3_000_000) + obj.flush())
    assert not frame[4] & 0x20  # not single-segment: a window descriptor follows
    frame[4] |= 0x40  # declare a 2-byte content size... (the header grows by 2 bytes)
    frame[6:6] = (1000).to_bytes(2, "little")
    for exponent in (21, 22, 25):
        frame[5] = exponent << 3
        try:
            expected = zstandard.frame_content_size(bytes(frame[:18]))
        except zstandard.ZstdError:
            expected = -1  # _declared_size counts a header zstd cannot parse as none
        assert _frame_chain(bytes(frame))[2] == [expected]
    assert expected == -1


def _lines_over(text: bytes, n_lines: int, limit: int) -> list[int]:
    """The per-line count the search stands in for."""
    parts = text.translate(None, _NOT_OPENER).split(b"\n")[:n_lines]
    return [i for i, part in enumerate(parts) if len(part) > limit]


@pytest.mark.parametrize("limit", [3, 8, 128])
def test_the_opener_search_finds_the_lines_the_count_finds(limit: int) -> None:
    shapes = [
        b"{}",
        b"[" * limit + b"]" * limit,
        b"[" * (limit + 1) + b"]" * (limit + 1),
        b"".join(b'{"a":[' for _ in range(limit)) + b"1" + b"]}" * limit,  # 2*limit mixed
        b'{"s":"' + b"{[" * limit + b'"}',  # openers inside a string count too
        b"[" * (limit // 2) + b"]" * (limit // 2),
    ]
    for combo in itertools.product(shapes, repeat=3):
        text = b"\n".join(combo) + b"\n"
        for n_lines in (3, 2):  # the last line may be a tail outside the lines
            assert _deep_lines(text, n_lines, limit) == _lines_over(text, n_lines, limit)


def _tool_data(**changes: Any) -> dict[str, Any]:
    block = {"type": "tool-result", "toolCallId": "c1", "content": [{"type": "text", "text": "x"}]}
    msg = {"role": "user", "id": "m1", "source": {"kind": "tool", "callId": "c1"}}
    data: dict[str, Any] = {"turn": 1, "step": 1, "message": {**msg, "content": [block]}}
    for key, value in changes.items():
        where, _, name = key.partition("__")
        target = {
            "data": data,
            "msg": data["message"],
            "block": data["message"]["content"][0],
        }[where]
        if value is _DROP:
            del target[name]
        else:
            target[name] = value
    return data


_DROP = object()


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"block__content": [{"type": "text", "text": "pruned"}]},
        {"block__content": _DROP},
        {"block__isError": True},
        {"block__toolCallId": "c2"},
        {"msg__id": "m2"},
        {"msg__extra": 1},
        {"msg__content": []},
        {"msg__content": ["not a block"]},
        {"msg__content": [{"type": "tool-result"}, {"type": "text"}]},
        {"data__turn": 2},
        {"data__error": {"code": "X"}},
        {"data__step": _DROP},
        {"data__message": None},
        {"data__message": "text"},
    ],
)
def test_the_rewrite_check_agrees_with_the_copies_it_skips(changes: dict[str, Any]) -> None:
    old = _tool_data()
    new = _tool_data(**changes)
    for a, b in ((old, new), (new, old)):
        try:
            expected = _without_result_content(a) == _without_result_content(b)
        except Exception as exc:  # the general check cannot compare these: neither can it
            with pytest.raises(type(exc)):
                _same_but_result_content(a, b)
        else:
            assert _same_but_result_content(a, b) is expected


def test_a_one_node_span_is_the_node_and_a_dead_one_is_none() -> None:
    state = SurfaceState()
    for seq in (0, 1, 2, 3):
        state.append(seq)
    assert state.span(2, 2) == [2] and state.span(1, 3) == [1, 2, 3]
    state.replace([1, 2], 9)
    assert state.span(1, 1) is None and state.span(9, 9) == [9] and state.span(0, 3) == [0, 9, 3]
    assert state.span(3, 0) is None


def _events() -> list[dict[str, Any]]:
    b = LogBuilder(version=3)
    b.turn("hello", system="sys")
    b.assistant(text="hi")
    b.end_turn()
    return [dict(e) for e in b.events]


def _first(events: list[dict[str, Any]], etype: str) -> int:
    return next(i for i, e in enumerate(events) if e["type"] == etype)


@pytest.mark.parametrize(
    ("etype", "drop", "extra", "message"),
    [
        ("turn/start", None, {"ignorable": True}, None),
        ("turn/start", None, {"ignorable": False}, "ignorable may only be true"),
        ("turn/start", None, {"extra": 1}, "unknown envelope key"),
        ("turn/start", None, {"surfaceOp": "append"}, "not a surface type"),
        ("turn/start", "data", {"extra": 1}, "needs data"),
        ("user/message", None, {}, None),  # five keys: the appended node's own
        ("user/message", "surfaceOp", {"extra": 1}, "unknown envelope key"),
        ("user/message", "surfaceOp", {"ignorable": True}, "needs surfaceOp"),
        ("user/message", None, {"extra": 1}, "unknown envelope key"),
        ("user/message", "seq", {"extra": 1}, "seq None where"),
    ],
)
def test_the_envelope_shortcuts_refuse_what_the_full_check_refuses(
    etype: str, drop: str | None, extra: dict[str, Any], message: str | None
) -> None:
    events = _events()
    seq = _first(events, etype)
    events[seq] = {k: v for k, v in events[seq].items() if k != drop} | extra
    if message is None:
        index = replay_log(events, 3)
        assert (seq in index.surface) is (etype == "user/message")
        return
    with pytest.raises(SessionFormatError, match=message) as got:
        replay_log(events, 3)
    assert got.value.seq == seq


# --- the streamed decode: a well-formed zstd log chunk by chunk -------------------------------


def _decoded(data: bytes, **kw: Any) -> tuple[Any, ...]:
    """What ``decode_bytes`` makes of a zstd log: the log's fields, or the error it raises."""
    from ctxsdk.session._codec import decode_bytes

    try:
        log = decode_bytes(data, compression="zstd", **kw)
    except SessionFormatError as exc:
        return ("refused", type(exc).__name__, str(exc))
    # an integral float read as JavaScript reads it: an int, not a float equal to it
    kinds = [type(e.get(k)).__name__ for e in log.events for k in ("time", "x") if k in e]
    return (log.header, log.events, kinds, log.version, log.normalized, log.recovery)


def _streamed_cases() -> list[tuple[str, list[bytes]]]:
    import orjson

    b = LogBuilder(version=3, session_id="streamed", cwd="/w")
    for k in range(12):
        b.turn(f"prompt {k} " + "[{" * 40, system="sys" if k == 0 else None)
        b.assistant(text="done " * 30, tool_calls=[("bash", {"command": "ls " * k})])
        b.tool_results(["out [" * 70 + "x" * (k * 37)])
        b.next_step()
        b.assistant(text="ok")
        b.end_turn()
    text = b"".join(orjson.dumps(e) + b"\n" for e in [b.header, *b.events])
    lines = text.split(b"\n")[:-1]

    def edited(i: int, extra: bytes) -> list[bytes]:
        out = list(lines)
        out[i] = out[i][:-1] + extra + b"}"
        return out

    def stripped(line: bytes) -> dict[str, Any]:
        return {k: v for k, v in orjson.loads(line).items() if k not in ("seq", "time")}

    nested = b"[" * 128 + b"1" + b"]" * 128  # 129 levels with its event: one too deep
    header = orjson.loads(lines[0])
    return [
        ("as written", lines),
        ("an integral float", edited(5, b',"x":1.0')),
        ("a long fraction of zeros", edited(7, b',"x":30.000000000000000')),
        ("floats on many lines", [lines[0], *(ln[:-1] + b',"x":2.0}' for ln in lines[1:])]),
        ("a float that is not integral", edited(9, b',"x":1.05')),
        ("'1.0' inside a string", edited(4, b',"x":"v1.0 ]"')),
        ("a line 129 levels deep", edited(6, b',"x":' + nested)),
        ("a line 128 levels deep", edited(6, b',"x":' + nested[1:-1])),
        ("300 openers in a string", edited(8, b',"x":"' + b"[" * 300 + b'"')),
        ("a line that is not JSON", [*lines[:3], lines[3][:-2], *lines[4:]]),
        ("a lone surrogate", edited(3, b',"x":"\\ud800"')),
        ("a float in the header", [orjson.dumps({**header, "delegationDepth": 0.0}), *lines[1:]]),
        ("a stripped log", [lines[0], *(orjson.dumps(stripped(ln)) for ln in lines[1:])]),
    ]


@pytest.mark.parametrize("chunk", [5, 64, 333, 4096, 1 << 20])
def test_the_streamed_decode_reads_what_the_whole_text_decode_reads(
    chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunk by chunk (chunks cut lines, floats and runs of openers anywhere), the log reads
    as it reads whole, and every log the streamed decode does not take is read whole."""
    from ctxsdk.session._codec import _decode, _streamed

    compress = zstandard.ZstdCompressor().compress
    taken = 0
    for name, lines in _streamed_cases():
        frames = [compress(lines[0] + b"\n")]
        frames += [compress(b"".join(ln + b"\n" for ln in lines[k : k + 7])) for k in (1, 8)]
        frames += [compress(b"".join(ln + b"\n" for ln in lines[15:]))]
        data = b"".join(frames)
        for kw in ({}, {"normalized": False}, {"expected_version": 2}):
            monkeypatch.setattr(_streamed, "_READ_CHUNK", chunk)
            streamed = _decoded(data, **kw)
            took = _streamed.decode_zstd_streamed(data, None, 1 << 30, None, None) is not None
            monkeypatch.setattr(_decode, "decode_zstd_streamed", lambda *a: None)
            whole = _decoded(data, **kw)
            monkeypatch.undo()
            assert streamed == whole, (name, kw)
            taken += took
    assert taken >= 3 * 7  # the well-formed ones were streamed, not all read whole


@pytest.mark.parametrize("enabled", [True, False])
def test_a_decode_pauses_the_gc_and_gives_back_the_callers_state(enabled: bool) -> None:
    """``decode_bytes`` runs with the cyclic GC off and leaves it as the caller had it, after
    a log it reads and after one it refuses."""
    import gc

    from ctxsdk.session._codec import _decode, decode_bytes

    lines = _streamed_cases()[0][1]
    compress = zstandard.ZstdCompressor().compress

    def log(rows: list[bytes]) -> bytes:
        return compress(rows[0] + b"\n") + compress(b"".join(ln + b"\n" for ln in rows[1:]))

    good = log(lines)
    bad = log([*lines[:3], lines[3][:-2], *lines[4:]])  # a line that is not JSON
    seen: list[bool] = []
    real = _decode._decode_text

    def spy(*args: Any) -> Any:
        seen.append(gc.isenabled())
        return real(*args)

    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(_decode, "_decode_text", spy)
            assert decode_bytes(good, compression="zstd").events
            decode_bytes(b"".join(ln + b"\n" for ln in lines), compression="none")
            assert gc.isenabled() is enabled
            with pytest.raises(SessionFormatError):
                decode_bytes(bad, compression="zstd")
            assert gc.isenabled() is enabled
        assert seen and not any(seen)  # the whole-text decodes ran with the GC off
    finally:
        gc.enable() if was else gc.disable()


def test_the_chunks_lines_are_the_lines_split_finds() -> None:
    """``_lines`` over a text cut anywhere (empty lines, a newline at a chunk's first or last
    byte, a line across several chunks) gives the lines ``split`` gives, and the tail."""
    import random

    from ctxsdk.session._codec._streamed import _lines

    rng = random.Random(5)
    for _ in range(300):
        text = b"".join(
            rng.choice([b"\n", b"ab", b'{"x":[1]}', b"\n\n", b"z" * rng.randint(0, 40)])
            for _ in range(rng.randint(0, 30))
        )
        cuts = sorted({0, len(text), *(rng.randint(0, len(text)) for _ in range(6))})
        got: list[bytes] = []
        carry: list[bytes] = []
        for a, b in itertools.pairwise(cuts):
            chunk = text[a:b]
            if b"\n" not in chunk:
                carry.append(chunk)
                continue
            lines, rest = _lines(chunk, carry)
            got += [bytes(line) for line in lines]
            carry = [rest] if rest else []
        *want, tail = text.split(b"\n")
        assert got == want and b"".join(carry) == tail, (text, cuts)
