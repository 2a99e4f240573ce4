"""Physical format: zstd frame chains, torn tails, headers, packed rows, source ranges (§2)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ctxsdk as cx
from ctxsdk.errors import CorruptLog, LogRecoveryWarning, SessionFormatError, UnsupportedVersion
from ctxsdk.session._codec import (
    decode_source_seqs,
    encode_source_seqs,
    frame_spans,
    read_log,
    zstd_frame,
)

from ._logs import header, small_v3


def _write_zstd(path: Path, hdr: dict, events: list[dict], batch: int = 3) -> list[int]:
    """Header alone in frame 1, then one frame per batch; returns frame start offsets."""
    starts, data = [], b""
    frames = [[hdr]] + [events[i : i + batch] for i in range(0, len(events), batch)]
    for group in frames:
        starts.append(len(data))
        data += zstd_frame(b"".join(orjson.dumps(e) + b"\n" for e in group))
    path.write_bytes(data)
    return starts


def _write_plain(path: Path, hdr: dict, events: list[dict]) -> None:
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in [hdr, *events]))


def test_zstd_chain_reads_across_frames(tmp_path: Path) -> None:
    hdr, events = small_v3()
    p = tmp_path / "session.v3.jsonl.zstd"
    starts = _write_zstd(p, hdr, events)
    spans, torn = frame_spans(p.read_bytes())
    assert torn is None and [a for a, _ in spans] == starts
    s = cx.Session.open(p)
    assert len(s) == len(events) and s.recovery is None
    assert [m.id for m in s.messages()] == ["sys-1", "u-1", "a-1", "r-call_1", "a-2"]


def test_torn_last_frame_is_recovered_and_reported(tmp_path: Path) -> None:
    hdr, events = small_v3(closed=False)
    p = tmp_path / "session.v3.jsonl.zstd"
    starts = _write_zstd(p, hdr, events)
    whole = p.read_bytes()
    p.write_bytes(whole[:-3])  # cut inside the last frame
    before = p.read_bytes()
    with pytest.warns(LogRecoveryWarning, match="torn last zstd frame"):
        s = cx.Session.open(p)
    assert s.recovery is not None and s.recovery.kind == "torn-frame"
    assert s.recovery.truncate_at == starts[-1]
    # Complete frames are kept, plus the complete lines the torn frame still decodes to
    # (cutting only the checksum leaves its one line whole).
    assert len(s) == (len(starts) - 2) * 3 + len(s.recovery.kept_lines)
    assert len(s.recovery.kept_lines) == 1
    assert p.read_bytes() == before  # reading never writes


def test_torn_last_line_is_recovered(tmp_path: Path) -> None:
    hdr, events = small_v3()
    p = tmp_path / "session.v3.jsonl"
    _write_plain(p, hdr, events)
    data = p.read_bytes()
    p.write_bytes(data[:-10])
    with pytest.warns(LogRecoveryWarning):
        s = cx.Session.open(p)
    assert len(s) == len(events) - 1
    assert s.recovery is not None and s.recovery.kind == "torn-line"
    assert s.recovery.truncate_at == data.rstrip(b"\n").rfind(b"\n") + 1


def test_checksum_damage_in_a_middle_frame_is_corruption(tmp_path: Path) -> None:
    hdr, events = small_v3()
    p = tmp_path / "session.v3.jsonl.zstd"
    starts = _write_zstd(p, hdr, events)
    data = bytearray(p.read_bytes())
    data[starts[2] - 2] ^= 0x55  # the checksum of frame 2
    p.write_bytes(bytes(data))
    with pytest.raises(CorruptLog) as err:
        cx.Session.open(p)
    assert err.value.frame == 2 and str(p) in str(err.value)


def test_bad_json_line_names_line_and_frame(tmp_path: Path) -> None:
    hdr, events = small_v3()
    p = tmp_path / "session.v3.jsonl.zstd"
    lines = [orjson.dumps(e) + b"\n" for e in [hdr, *events]]
    lines[5] = b'{"type": "user/message", oops\n'
    data = zstd_frame(lines[0]) + zstd_frame(b"".join(lines[1:4])) + zstd_frame(b"".join(lines[4:]))
    p.write_bytes(data)
    with pytest.raises(CorruptLog) as err:
        cx.Session.open(p)
    assert (err.value.line, err.value.frame) == (6, 3)
    assert "line 6" in str(err.value) and "zstd frame 3" in str(err.value)


@pytest.mark.parametrize("version", [4, 99, -1, "3", None])
def test_unknown_versions_are_refused_before_events(tmp_path: Path, version: object) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(orjson.dumps({**header(3), "version": version}) + b"\nnot json at all\n")
    with pytest.raises(UnsupportedVersion, match="upgrade"):
        cx.Session.open(p)


def test_file_name_generation_must_match_header(tmp_path: Path) -> None:
    hdr, events = small_v3()
    p = tmp_path / "session.v2.jsonl"
    _write_plain(p, hdr, events)
    with pytest.raises(UnsupportedVersion, match="file name says version 2"):
        cx.Session.open(p)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"isSeeded": None}, "isSeeded"),
        ({"extra": 1}, "unknown key"),
        ({"createdAt": -5}, "createdAt"),
        ({"id": ""}, "id"),
    ],
)
def test_v3_header_rules(tmp_path: Path, change: dict, message: str) -> None:
    hdr = {**header(3), **change}
    if change.get("isSeeded", 0) is None:
        del hdr["isSeeded"]
    p = tmp_path / "s.jsonl"
    _write_plain(p, hdr, [])
    with pytest.raises(SessionFormatError, match=message):
        cx.Session.open(p)


def test_v0_packed_rows_expand_with_times(tmp_path: Path) -> None:
    hdr = header(0)
    rows = [
        {"type": "turn/start", "seq": 0, "time": 10, "data": {"turn": 1}},
        {"type": "step/start", "seq": 1, "time": 11, "data": {"turn": 1, "step": 1}},
        {
            "type": "text-chunks",
            "seq0": 2,
            "time0": 100,
            "data": {"turn": 1, "step": 1, "index": 0, "dt": [5, -2], "texts": ["a", "b", "c"]},
        },
        {"type": "step/end", "seq": 5, "time": 12, "data": {"turn": 1, "step": 1}},
        {
            "type": "turn/end",
            "seq": 6,
            "time": 13,
            "data": {"turn": 1, "reason": {"kind": "completed"}},
        },
    ]
    p = tmp_path / "session.jsonl"
    _write_plain(p, hdr, rows)
    log = read_log(p)
    chunks = log.events[2:5]
    assert [c["seq"] for c in chunks] == [2, 3, 4]
    assert [c["time"] for c in chunks] == [100, 105, 103]
    assert [c["data"]["chunk"]["text"] for c in chunks] == ["a", "b", "c"]
    assert log.line_of(4) == 4 and log.line_of(5) == 5
    cx.Session.open(p)


def test_packed_row_with_wrong_seq0_is_corruption(tmp_path: Path) -> None:
    rows = [
        {"type": "turn/start", "seq": 0, "time": 10, "data": {"turn": 1}},
        {
            "type": "text-chunks",
            "seq0": 7,
            "time0": 1,
            "data": {"turn": 1, "step": 1, "index": 0, "dt": [0, 0], "texts": ["a", "b", "c"]},
        },
    ]
    p = tmp_path / "session.jsonl"
    # A later turn/end shows the gap is in committed rows: corruption.
    end = {
        "type": "turn/end",
        "seq": 10,
        "time": 11,
        "data": {"turn": 1, "reason": {"kind": "completed"}},
    }
    _write_plain(p, header(0), [*rows, end])
    with pytest.raises(CorruptLog, match="has seq 7 where 1 was expected") as exc:
        cx.Session.open(p)
    assert exc.value.line == 3 and exc.value.seq == 1
    # Without one it is a torn tail, as the harness's scanner reads it.
    _write_plain(p, header(0), rows)
    with pytest.warns(LogRecoveryWarning, match="torn tail"):
        s = cx.Session.open(p)
    assert len(s) == 1 and s.recovery is not None and s.recovery.kind == "torn-tail"


@given(st.lists(st.integers(0, 60), unique=True, max_size=30))
def test_source_seq_ranges_round_trip(seqs: list[int]) -> None:
    for order in (sorted(seqs), seqs):
        encoded = encode_source_seqs(order)
        if order == sorted(order):
            assert all(not isinstance(x, list) or x[1] - x[0] >= 2 for x in encoded)
        assert decode_source_seqs(encoded, 61) == order


def test_source_seqs_must_cite_earlier_events() -> None:
    with pytest.raises(SessionFormatError, match="earlier"):
        decode_source_seqs([3, 5], 5)
    with pytest.raises(SessionFormatError, match="increase"):
        decode_source_seqs([[1, 3], 2], 9)
    with pytest.raises(SessionFormatError, match="duplicates"):
        decode_source_seqs([2, 2], 9)


def test_session_directory_picks_highest_generation(tmp_path: Path) -> None:
    hdr, events = small_v3()
    _write_plain(tmp_path / "session.v3.jsonl", hdr, events)
    (tmp_path / "session.jsonl").write_bytes(b"garbage that must not be read\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = cx.Session.open(tmp_path)
    assert s.version == 3 and s.path == tmp_path / "session.v3.jsonl"


# --- nesting depth (MAX_JSON_DEPTH) --------------------------------------------------------


def _nest(levels: int) -> bytes:
    """``levels`` nested arrays around an object, as JSON text (no Python recursion)."""
    return b"[" * levels + b'{"x":1}' + b"]" * levels


def _deep_lines(levels: int, *, at: int = 3) -> list[bytes]:
    """A valid v3 log's lines with ``levels`` arrays under the first user message's first
    content block (``meta``), on event ``at``."""
    hdr, events = small_v3()
    assert events[at]["type"] == "user/message"
    lines = [orjson.dumps(e) for e in [hdr, *events]]
    block = orjson.dumps(events[at]["data"]["content"][0])
    line = lines[at + 1]
    lines[at + 1] = line.replace(block, block[:-1] + b',"meta":' + _nest(levels) + b"}", 1)
    assert lines[at + 1] != line
    return lines


def test_max_json_depth_is_far_above_real_logs_and_below_the_writers_limit() -> None:
    from ctxsdk.session._codec import MAX_JSON_DEPTH, deep_path

    assert 64 <= MAX_JSON_DEPTH < 254  # orjson.dumps refuses 255 levels: save would die
    assert deep_path(orjson.loads(_nest(MAX_JSON_DEPTH - 1))) is None
    assert deep_path(orjson.loads(_nest(MAX_JSON_DEPTH))) == [0] * MAX_JSON_DEPTH


def test_one_json_depth_limit_counted_one_way_everywhere() -> None:
    """``ctxsdk.session.kernel.MAX_JSON_DEPTH`` is the reader's limit, and the same one bounds a
    model's reply and a memory's values: the value itself is level 1, one level more is
    refused, wherever the JSON comes from."""
    import ctxsdk.session.kernel as base
    from ctxsdk.errors import LLMOutputError
    from ctxsdk.llm._limits import MAX_JSON_DEPTH as model_limit
    from ctxsdk.session._codec import MAX_JSON_DEPTH, deep_path
    from ctxsdk.session._model_text import extract_json, loads

    assert base.MAX_JSON_DEPTH == model_limit == MAX_JSON_DEPTH
    ok, deep = _nest(MAX_JSON_DEPTH - 1).decode(), _nest(MAX_JSON_DEPTH).decode()
    assert deep_path(orjson.loads(ok)) is None and deep_path(orjson.loads(deep)) is not None
    assert loads(ok) == orjson.loads(ok) and extract_json(ok) is not None
    with pytest.raises(ValueError, match=f"deeper than {MAX_JSON_DEPTH} levels"):
        loads(deep)
    with pytest.raises(LLMOutputError, match="nested deeper than"):
        extract_json(deep)


@pytest.mark.parametrize("zstd", [False, True])
def test_a_600_deep_event_is_refused_at_open_naming_where(tmp_path: Path, zstd: bool) -> None:
    lines = _deep_lines(600)
    if zstd:
        p = tmp_path / "session.v3.jsonl.zstd"
        p.write_bytes(zstd_frame(lines[0] + b"\n") + zstd_frame(b"\n".join(lines[1:]) + b"\n"))
    else:
        p = tmp_path / "session.v3.jsonl"
        p.write_bytes(b"\n".join(lines) + b"\n")
    before = p.read_bytes()
    with pytest.raises(SessionFormatError) as err:
        cx.Session.open(p)  # never a Session that save/fork/events_df would die on later
    e = err.value
    assert not isinstance(e, CorruptLog)  # well-formed bytes, refused by the limit
    assert (e.path, e.line, e.seq) == (str(p), 5, 3)
    assert e.frame == (2 if zstd else None)
    msg = str(e)
    assert "MAX_JSON_DEPTH = 128" in msg and "data.content[0].meta[0]" in msg
    with pytest.raises(SessionFormatError, match="MAX_JSON_DEPTH"):
        read_log(p)
    assert p.read_bytes() == before


def test_a_100_deep_event_still_opens_and_saves(tmp_path: Path) -> None:
    p = tmp_path / "session.v3.jsonl"
    p.write_bytes(b"\n".join(_deep_lines(100)) + b"\n")
    s = cx.Session.open(p)
    s.save(tmp_path / "copy.v3.jsonl")
    assert len(s.events_df()) == len(s)
    assert len(cx.Session.open(tmp_path / "copy.v3.jsonl")) == len(s)


def test_past_the_parsers_own_limit_is_refused_as_too_deep_not_torn(tmp_path: Path) -> None:
    """orjson stops at 1024 levels; such a line is refused by the limit, never read as a
    torn last line (whose recovery would silently drop it)."""
    hdr, events = small_v3(closed=False)  # no turn/end after the last line
    last = b'{"type":"x/note","seq":%d,"time":1,"data":' % len(events) + _nest(2000) + b"}"
    lines = [orjson.dumps(e) for e in [hdr, *events]] + [last]
    p = tmp_path / "session.v3.jsonl"
    p.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(SessionFormatError, match="past the parser's 1024 levels") as err:
        cx.Session.open(p)
    assert (err.value.line, err.value.seq) == (len(lines), len(events))


def test_a_deep_v1_header_and_a_deep_packed_log_name_line_and_seq(tmp_path: Path) -> None:
    hdr = header(1, extra=orjson.loads(_nest(200)))
    p = tmp_path / "h.jsonl"
    p.write_bytes(orjson.dumps(hdr) + b"\n")
    with pytest.raises(SessionFormatError, match="header line is nested") as err:
        read_log(p)
    assert (err.value.line, err.value.seq) == (1, None)
    # v1: a packed row of 3 events on line 2, so the deep row on line 3 is seq 3.
    packed = {
        "type": "text-chunks",
        "seq0": 0,
        "time0": 5,
        "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, 1], "texts": ["a", "b", "c"]},
    }
    deep = {"type": "x/unknown", "seq": 3, "time": 9, "data": {"v": 0}}
    row = orjson.dumps(deep).replace(b"0}", _nest(300) + b"}")
    p.write_bytes(b"\n".join([orjson.dumps(header(1)), orjson.dumps(packed), row]) + b"\n")
    with pytest.raises(SessionFormatError, match="MAX_JSON_DEPTH") as err:
        read_log(p)
    assert (err.value.line, err.value.seq) == (3, 3)


def test_strings_full_of_brackets_are_not_nesting(tmp_path: Path) -> None:
    """The byte count is only a filter: a line whose strings hold many brackets is walked
    and opens."""
    hdr, events = small_v3()
    events[3]["data"]["content"][0]["text"] = "[{" * 5000
    p = tmp_path / "session.v3.jsonl"
    _write_plain(p, hdr, events)
    assert cx.Session.open(p).messages()[1].content[0].text == "[{" * 5000  # type: ignore[union-attr]


def test_a_deep_event_in_memory_is_refused() -> None:
    from ctxsdk.errors import SurfaceError

    hdr, events = small_v3()
    deep = orjson.loads(_nest(300))
    bad = [dict(e) for e in events]
    bad[3] = {**bad[3], "data": {**bad[3]["data"], "meta": deep}}
    with pytest.raises(SessionFormatError, match="MAX_JSON_DEPTH") as err:
        cx.Session.from_events(hdr, bad)
    assert err.value.seq == 3
    s = cx.Session.from_events(hdr, events)
    with pytest.raises(SurfaceError, match="MAX_JSON_DEPTH") as serr:
        s.append([{"type": "x/ignorable", "ignorable": True, "data": {"v": deep}}])
    assert serr.value.seq == len(events)
    with pytest.raises(SessionFormatError, match="header is nested"):
        cx.Session.from_events(header(1, extra=orjson.loads(_nest(200))), [])
    # A cycle cannot be serialized or walked to its end: it reads as too deep, not a hang.
    loop: dict[str, object] = {}
    loop["self"] = loop
    with pytest.raises(SurfaceError, match="MAX_JSON_DEPTH"):
        s.append([{"type": "x/ignorable", "ignorable": True, "data": loop}])


# --- JSON numbers as JavaScript reads them: 1.0 is the integer 1 ------------------------------


@given(st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**60), 2**60))
def test_integral_floats_read_as_integers_exactly_as_javascript_has_them(value: float) -> None:
    import math

    from ctxsdk.session._codec._numbers import _INTEGRAL_FRACTION, js_numbers

    got = js_numbers([value, {"k": value}])
    safe = isinstance(value, float) and value.is_integer() and abs(value) <= 2**53 - 1
    negative_zero = value == 0 and math.copysign(1.0, value) < 0
    if safe and not negative_zero:
        assert got == [int(value), {"k": int(value)}] and type(got[0]) is int
        # The byte test that picks the lines to walk never misses such a number, as the
        # writers (orjson, Python's json, JavaScript) spell it.
        for text in (orjson.dumps(got), orjson.dumps([value]), json.dumps([value]).encode()):
            if b"." in text:
                assert _INTEGRAL_FRACTION.search(text), text
    else:
        assert got == [value, {"k": value}] and type(got[0]) is type(value)


def test_integral_floats_open_as_integers_in_plain_and_zstd_logs(tmp_path: Path) -> None:
    hdr, events = small_v3()
    hdr = {**hdr, "createdAt": float(hdr["createdAt"])}
    for ev in events:
        ev["seq"], ev["time"] = float(ev["seq"]), float(ev["time"])
    text = [orjson.dumps(r) for r in [hdr, *events]]
    assert all(b".0" in line for line in text)
    plain = tmp_path / "plain" / "session.v3.jsonl"
    plain.parent.mkdir()
    plain.write_bytes(b"".join(line + b"\n" for line in text))
    packed = tmp_path / "zstd" / "session.v3.jsonl.zstd"
    packed.parent.mkdir()
    _write_zstd(packed, hdr, events)
    for path in (plain, packed):
        s = cx.Session.open(path, strict=True)
        assert type(s.header.created_at) is int and type(s.raw_events[1]["seq"]) is int
        assert [e["seq"] for e in s.raw_events] == list(range(len(s)))
        assert orjson.dumps(s.raw_events[0]).count(b".0") == 0  # a save writes 1, not 1.0


def test_a_float_that_is_no_safe_integer_stays_a_float(tmp_path: Path) -> None:
    hdr, events = small_v3()
    events[0]["time"] = float(2**53)  # JavaScript has it, but it is no safe integer
    path = tmp_path / "session.v3.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in [hdr, *events]))
    with pytest.raises(SessionFormatError, match="time must be a safe integer") as err:
        cx.Session.open(path)
    assert (err.value.line, err.value.seq) == (2, 0)
