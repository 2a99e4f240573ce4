"""Read what the harness reads, refuse what it refuses.

Legacy v0 rows the harness upgrades on read (its persistence coordinator), plain JSONL torn
tails, zstd framing, the optional invariant companion (warnings on read, refusals under
``strict=True`` and for edits) and the refusals of the real migration chain. Where the
harness's own code can show its verdict (``../shared/oracle``), the tests compare with it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import ctxsdk as cx
from ctxsdk.errors import SessionFormatError

from .test_oracle import check, oracle_home  # noqa: F401  (a fixture)

MODEL_P = {"provider": "p", "model": "m"}


def _write(path: Path, header: dict[str, Any], events: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in [header, *events]))
    return path


def _events(*rows: tuple[Any, ...]) -> list[dict[str, Any]]:
    out = []
    for i, row in enumerate(rows):
        ev: dict[str, Any] = {"type": row[0], "seq": i, "time": 100 + i, "data": row[1]}
        if len(row) > 2:
            ev.update(row[2])
        out.append(ev)
    return out


# --- 1. legacy v0 rows upgraded on read -------------------------------------------------------

V0_HEADER = {
    "type": "session",
    "version": 0,
    "id": "old",
    "createdAt": 1,
    "cwd": "/w",
    "delegationDepth": 0,
}


def legacy_rows() -> list[dict[str, Any]]:
    """Every pre-identity shape the harness's coordinator upgrades on load."""
    app = {"surfaceOp": "append"}
    return _events(
        ("turn/start", {"turn": 1, "trigger": {"kind": "user"}}),
        (
            "user/message",
            {"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}},
            app,
        ),
        ("step/start", {"turn": 1, "step": 1}),
        (
            "assistant/message",
            {
                "turn": 1,
                "step": 1,
                "content": [{"type": "tool-call", "id": "c1", "name": "bash", "arguments": "{}"}],
                "provenance": MODEL_P,
            },
            app,
        ),
        ("tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "bash", "arguments": "{}"}),
        (
            "tool/result",
            {
                "turn": 1,
                "step": 1,
                "callId": "c1",
                "content": [{"type": "text", "text": "out"}],
                "isError": False,
            },
            app,
        ),
        (
            "steering/message",
            {"turn": 1, "content": [{"type": "text", "text": "steer"}], "source": {"kind": "user"}},
            app,
        ),
        ("step/end", {"turn": 1, "step": 1}),
        ("turn/end", {"turn": 1, "reason": {"kind": "disposed"}}),
    )


def test_legacy_v0_rows_are_upgraded_on_read(tmp_path: Path) -> None:
    path = _write(tmp_path / "session.jsonl", V0_HEADER, legacy_rows())
    before = path.read_bytes()
    s = cx.Session.open(path)
    assert path.read_bytes() == before  # upgraded in memory, never on disk
    assert [m.id for m in s.messages()] == [
        "legacy-message:old:1",
        "legacy-message:old:3",
        "legacy-message:old:5",
        "legacy-message:old:6",
    ]
    raw = s.raw_events
    assert raw[0]["data"] == {"turn": 1}  # turn/start.trigger dropped
    assert raw[1]["data"]["role"] == "user"
    assert raw[3]["data"]["message"]["source"] == {**MODEL_P, "kind": "model"}
    assert raw[5]["data"]["message"]["content"][0] == {
        "type": "tool-result",
        "toolCallId": "c1",
        "content": [{"type": "text", "text": "out"}],
        "isError": False,
    }
    assert raw[6]["type"] == "user/message"  # steering/message became a user message
    assert raw[8]["data"]["reason"] == {"kind": "aborted", "reason": {"kind": "disposed"}}


def test_legacy_tool_result_rewrite_keeps_the_id_it_replaces(tmp_path: Path) -> None:
    rows = legacy_rows()
    rows.insert(
        8,
        {
            "type": "tool/result",
            "seq": 8,
            "time": 108,
            "data": {
                "turn": 1,
                "step": 1,
                "callId": "c1",
                "content": [{"type": "text", "text": "pruned"}],
                "isError": False,
            },
            "sourceEventSeqs": [5],
            "surfaceOp": {"op": "replace", "start": 5, "end": 5},
        },
    )
    rows[9]["seq"] = 9  # the rewrite sits after step/end, inside the open turn
    s = cx.Session.open(_write(tmp_path / "session.jsonl", V0_HEADER, rows))
    assert s.raw_events[8]["data"]["message"]["id"] == "legacy-message:old:5"


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({"turn": 1, "reason": {"kind": "completed"}, "step": 1}, 'unexpected member "step"'),
        ({"turn": 1, "reason": {"kind": "completed", "x": 1}}, 'reason has unexpected member "x"'),
        ({"turn": 1, "reason": {"kind": "error", "message": "m"}}, "error reason step"),
    ],
)
def test_malformed_legacy_turn_end_is_refused(tmp_path: Path, data: Any, match: str) -> None:
    rows = legacy_rows()
    rows[-1]["data"] = data
    with pytest.raises(SessionFormatError, match=match) as exc:
        cx.Session.open(_write(tmp_path / "session.jsonl", V0_HEADER, rows))
    assert exc.value.seq == 8 and exc.value.line == 10
    assert "malformed pre-react-loop turn/end" in str(exc.value)


def test_retired_v0_vocabulary_is_refused_on_read(tmp_path: Path) -> None:
    rows = legacy_rows()
    rows.insert(2, {"type": "mode/set", "seq": 2, "time": 1, "data": {"mode": "plan"}})
    for i, ev in enumerate(rows):
        ev["seq"] = i
    with pytest.raises(SessionFormatError, match="unsupported legacy mode/set event at seq 2"):
        cx.Session.open(_write(tmp_path / "session.jsonl", V0_HEADER, rows))


def test_legacy_upgrade_equals_the_harness(oracle_home: Path, tmp_path: Path) -> None:  # noqa: F811
    path = _write(tmp_path / "session.jsonl", V0_HEADER, legacy_rows())
    verdict = check(oracle_home, path, "--dump", "--target", "1")
    assert verdict["ok"], verdict["error"]
    ours = [dict(e) for e in cx.Session.open(path).raw_events]
    assert ours == verdict["eventList"]
    assert [json.dumps(e) for e in ours] == [json.dumps(e) for e in verdict["eventList"]]


@pytest.mark.parametrize(
    "data",
    [
        {"turn": 1, "reason": {"kind": "completed"}, "step": 1},
        {"turn": 1, "reason": {"kind": "completed", "x": 1}},
    ],
)
def test_turn_end_refusals_match_the_harness(
    oracle_home: Path,  # noqa: F811
    tmp_path: Path,
    data: Any,
) -> None:
    rows = legacy_rows()
    rows[-1]["data"] = data
    path = _write(tmp_path / "session.jsonl", V0_HEADER, rows)
    verdict = check(oracle_home, path)
    assert not verdict["ok"]
    with pytest.raises(SessionFormatError) as exc:
        cx.Session.open(path)
    assert verdict["error"]["cause"].split(" ", 2)[2] in str(exc.value)  # same member named


# --- 2. plain JSONL torn tails ----------------------------------------------------------------


def _v3_log(tmp_path: Path, *, closed: bool) -> tuple[Path, list[dict[str, Any]]]:
    from ._logs import small_v3

    h, events = small_v3(closed=closed)
    return _write(tmp_path / "session.v3.jsonl", h, events), events


def test_unparsable_line_without_a_later_turn_end_is_a_torn_tail(tmp_path: Path) -> None:
    path, events = _v3_log(tmp_path, closed=True)
    good = path.read_bytes()
    title = {"type": "session/title", "seq": len(events) + 1, "time": 5, "data": {"title": "t"}}
    path.write_bytes(good + b'{"type":"turn/sta\n' + json.dumps(title).encode() + b"\n")
    with pytest.warns(cx.errors.LogRecoveryWarning, match="torn tail") as caught:
        s = cx.Session.open(path)
    assert f"line {len(events) + 2} is not valid JSON" in str(caught[0].message)
    assert len(s) == len(events)
    assert s.recovery is not None and s.recovery.kind == "torn-tail"
    assert s.recovery.truncate_at == len(good)
    # Appending repairs the file as the harness does: truncate at the torn row.
    s.append_to_log()
    assert path.read_bytes() == good


def test_unparsable_line_before_a_turn_end_is_corruption(tmp_path: Path) -> None:
    path, _ = _v3_log(tmp_path, closed=True)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[3] = b'{"type":"user/mess\n'  # an event row inside the turn
    path.write_bytes(b"".join(lines))
    with pytest.raises(cx.errors.CorruptLog, match="turn/end on line") as exc:
        cx.Session.open(path)
    assert exc.value.line == 4


def test_seq_gap_is_a_torn_tail_or_corruption(tmp_path: Path) -> None:
    path, events = _v3_log(tmp_path, closed=False)
    rows = [dict(e) for e in events]
    rows[-1]["seq"] += 3  # a gap in the last, still open turn
    _write(path, json.loads(path.read_bytes().splitlines()[0]), rows)
    with pytest.warns(cx.errors.LogRecoveryWarning, match="where .* was expected"):
        s = cx.Session.open(path)
    assert len(s) == len(events) - 1
    end = {
        "type": "turn/end",
        "seq": rows[-1]["seq"] + 1,
        "time": 9,
        "data": {"turn": 1, "reason": {"kind": "completed"}},
    }
    _write(path, json.loads(path.read_bytes().splitlines()[0]), [*rows, end])
    with pytest.raises(cx.errors.CorruptLog) as exc:
        cx.Session.open(path)
    assert exc.value.seq == len(events) - 1 and exc.value.line == len(events) + 1


# --- packed rows --------------------------------------------------------------------------------


def _packed(n: int, **extra: Any) -> dict[str, Any]:
    data = {"turn": 1, "step": 1, "index": 0, "dt": [1] * (n - 1), "texts": ["a"] * n}
    return {"type": "text-chunks", "seq0": 3, "time0": 5, "data": {**data, **extra}}


def _packed_log(tmp_path: Path, row: dict[str, Any]) -> Path:
    head = _events(
        ("turn/start", {"turn": 1}),
        ("user/message", {**_user("u1", "hi")}, {"surfaceOp": "append"}),
        ("step/start", {"turn": 1, "step": 1}),
    )
    return _write(tmp_path / "session.jsonl", V0_HEADER, [*head, row])


def _user(mid: str, text: str) -> dict[str, Any]:
    return {
        "content": [{"type": "text", "text": text}],
        "source": {"kind": "user"},
        "role": "user",
        "id": mid,
    }


@pytest.mark.parametrize("n", [1, 2])
def test_packed_rows_of_one_or_two_members_decode(tmp_path: Path, n: int) -> None:
    s = cx.Session.open(_packed_log(tmp_path, _packed(n)))
    assert [e["type"] for e in s.raw_events[3:]] == ["assistant/chunk"] * n
    assert [e["time"] for e in s.raw_events[3:]] == [5 + k for k in range(n)]


@pytest.mark.parametrize(
    ("row", "match"),
    [
        ({**_packed(3), "extra": 1}, "exactly the keys"),
        (_packed(3, extra=1), "unexpected member"),
        (
            {**_packed(3), "data": {k: v for k, v in _packed(3)["data"].items() if k != "step"}},
            "missing",
        ),
        (_packed(3, texts=[], dt=[]), "non-empty"),
        (_packed(3, index=-1), "index must be"),
    ],
)
def test_packed_rows_need_exact_shapes(tmp_path: Path, row: dict[str, Any], match: str) -> None:
    with pytest.raises(SessionFormatError, match=match) as exc:
        cx.Session.open(_packed_log(tmp_path, row))
    assert exc.value.line == 5


def test_short_packed_rows_are_read_by_the_harness(oracle_home: Path, tmp_path: Path) -> None:  # noqa: F811
    path = _packed_log(tmp_path, _packed(2))
    verdict = check(oracle_home, path, "--target", "1")
    assert verdict["ok"], verdict["error"]
    cx.Session.open(path)


# --- 3. zstd framing ----------------------------------------------------------------------------


def _zstd_log(tmp_path: Path) -> Path:
    from ctxsdk.testing import LogBuilder

    b = LogBuilder(version=3, session_id="dmg", cwd="/w")
    for t in range(4):
        b.turn(f"question {t} " * 20, system="sys" if t == 0 else None)
        b.assistant(text=f"answer {t} " * 30)
        b.end_turn()
    return b.write(tmp_path / "session.v3.jsonl.zstd", batch_size=2, overwrite=True)


def _damages(data: bytes, frame: int) -> list[bytes]:
    """16-byte holes (cut out or zeroed) inside one frame that make its walk overrun the file."""
    from ctxsdk.session._codec import frame_spans

    spans, _ = frame_spans(data)
    a, e = spans[frame - 1]
    out = []
    for off in range(a, e - 16):
        for damaged in (data[:off] + data[off + 16 :], data[:off] + bytes(16) + data[off + 16 :]):
            try:
                if frame_spans(damaged)[1] is not None:  # what a frame walk alone calls torn
                    out.append(damaged)
            except cx.errors.CorruptLog:
                pass
    return out


def test_damage_in_a_middle_frame_is_corruption_never_a_torn_tail(tmp_path: Path) -> None:
    from ctxsdk.session._codec import frame_spans

    path = _zstd_log(tmp_path)
    data = path.read_bytes()
    n = len(frame_spans(data)[0])
    assert n >= 14
    damaged_files = _damages(data, 12)
    assert damaged_files, "no damage that overruns the walk: the test needs another offset"
    for damaged in damaged_files:
        path.write_bytes(damaged)
        with pytest.raises(cx.errors.CorruptLog, match="complete frames follow") as exc:
            cx.Session.open(path)
        assert exc.value.frame == 12
        assert path.read_bytes() == damaged  # nothing was truncated away


def test_a_torn_last_frame_is_still_a_torn_tail(tmp_path: Path) -> None:
    from ctxsdk.session._codec import frame_spans

    path = _zstd_log(tmp_path)
    data = path.read_bytes()
    a, e = frame_spans(data)[0][-1]
    path.write_bytes(data[: e - 5])
    with pytest.warns(cx.errors.LogRecoveryWarning, match="torn last zstd frame"):
        s = cx.Session.open(path)
    assert s.recovery is not None and s.recovery.truncate_at == a


def test_skippable_frames_and_reserved_bits_are_refused(tmp_path: Path) -> None:
    from ctxsdk.session._codec import frame_spans

    path = _zstd_log(tmp_path)
    data = path.read_bytes()
    spans, _ = frame_spans(data)
    cut = spans[1][0]
    skippable = b"\x50\x2a\x4d\x18" + (4).to_bytes(4, "little") + b"\0\0\0\0"
    path.write_bytes(data[:cut] + skippable + data[cut:])
    with pytest.raises(cx.errors.CorruptLog, match="skippable") as exc:
        cx.Session.open(path)
    assert exc.value.frame == 2
    for bit in (0x08, 0x10):
        bad = bytearray(data)
        bad[cut + 4] |= bit  # frame 2's frame-header descriptor
        path.write_bytes(bytes(bad))
        with pytest.raises(cx.errors.CorruptLog, match="reserved frame-header bit") as exc:
            cx.Session.open(path)
        assert exc.value.frame == 2


def test_frame_one_holds_exactly_the_header_line(tmp_path: Path) -> None:
    from ctxsdk.session._codec import frame_spans, zstd_frame

    path = _zstd_log(tmp_path)
    data = path.read_bytes()
    spans, _ = frame_spans(data)
    import zstandard

    dctx = zstandard.ZstdDecompressor()
    first, second = (dctx.decompressobj().decompress(data[a:b]) for a, b in spans[:2])
    path.write_bytes(zstd_frame(first + second) + data[spans[1][1] :])
    with pytest.raises(cx.errors.CorruptLog, match="exactly the header line") as exc:
        cx.Session.open(path)
    assert exc.value.frame == 1


# --- 4. the optional invariant companion: read with a warning, refuse when strict ---------------


def _invariant_case(case: str) -> tuple[list[dict[str, Any]], int, str]:
    """A v3 log breaking one companion rule: (events, the seq named, the rule)."""
    from ._logs import V3

    b = V3()
    first = 2 if case == "turn-numbering" else 1
    b.add("turn/start", {"turn": first})
    b.add("step/start", {"turn": first, "step": 1})
    b.system(first, 1, "sys")
    b.user("go", "u-1")
    if case == "chunk-outside-step":
        b.assistant(first, 1, "a-1", "", ("c1",))
        b.tool(first, 1, "c1", "out")
        b.add("step/end", {"turn": first, "step": 1})
        bad = b.add(
            "tool/call", {"turn": first, "step": 1, "callId": "c9", "name": "x", "arguments": "{}"}
        )
        return b.events, bad, "enclosure"
    if case == "unanswered-call":
        b.assistant(first, 1, "a-1", "", ("c1",))
        bad = b.add("step/end", {"turn": first, "step": 1})
        return b.events, bad, "tool-pairing"
    if case == "result-before-call":
        b.assistant(first, 1, "a-1", "", ("c1",))
        bad = b.tool(first, 1, "c1", "out", started=False)
        b.add("step/end", {"turn": first, "step": 1})
        return b.events, bad, "tool-pairing"
    if case == "call-without-block":
        b.assistant(first, 1, "a-1", "done")
        bad = b.add(
            "tool/call", {"turn": first, "step": 1, "callId": "c7", "name": "x", "arguments": "{}"}
        )
        b.add("step/end", {"turn": first, "step": 1})
        return b.events, bad, "tool-pairing"
    assert case == "turn-numbering"
    b.assistant(first, 1, "a-1", "done")
    b.add("step/end", {"turn": first, "step": 1})
    b.add("turn/end", {"turn": first, "reason": {"kind": "completed"}})
    return b.events, 0, "turn-order"


INVARIANT_CASES = [
    "chunk-outside-step",
    "unanswered-call",
    "result-before-call",
    "call-without-block",
    "turn-numbering",
]


@pytest.mark.parametrize("case", INVARIANT_CASES)
def test_optional_invariants_warn_on_read_and_refuse_when_strict(tmp_path: Path, case: str) -> None:
    from ._logs import header

    events, bad, rule = _invariant_case(case)
    path = _write(tmp_path / "session.v3.jsonl", header(3), events)
    with pytest.warns(cx.errors.LogInvariantWarning) as caught:
        s = cx.Session.open(path)
    w = caught[0].message
    assert isinstance(w, cx.errors.LogInvariantWarning)
    assert (w.seq, w.rule) == (bad, rule)
    assert f"seq {bad}" in str(w) and f"line {bad + 2}" in str(w) and str(path) in str(w)
    assert len(s) == len(events)
    s.messages()  # the views work on what the harness reads
    with pytest.raises(SessionFormatError) as exc:
        cx.Session.open(path, strict=True)
    assert exc.value.seq == bad and exc.value.line == bad + 2


_CALL = {
    "role": "assistant",
    "content": [{"type": "tool-call", "id": "c5", "name": "bash", "arguments": "{}"}],
    "source": {"kind": "model", "provider": "p", "model": "m"},
    "id": "a-9",
}
EDIT_CASES = {
    "outside-step": [
        {
            "type": "tool/call",
            "data": {"turn": 1, "step": 7, "callId": "c", "name": "x", "arguments": "{}"},
        }
    ],
    "unanswered-call": [
        {
            "type": "assistant/message",
            "data": {"turn": 1, "step": 2, "message": _CALL, "stream": []},
            "surfaceOp": "append",
        },
        {"type": "step/end", "data": {"turn": 1, "step": 2}},
    ],
    "call-without-block": [
        {
            "type": "tool/call",
            "data": {"turn": 1, "step": 2, "callId": "c7", "name": "x", "arguments": "{}"},
        }
    ],
    "turn-numbering": [
        {"type": "step/end", "data": {"turn": 1, "step": 2}},
        {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed"}}},
        {"type": "turn/start", "data": {"turn": 5}},
    ],
}


@pytest.mark.parametrize("case", sorted(EDIT_CASES))
def test_edits_still_refuse_what_the_companion_refuses(tmp_path: Path, case: str) -> None:
    from ._logs import small_v3

    h, base = small_v3(closed=False)
    s = cx.Session.open(_write(tmp_path / "session.v3.jsonl", h, base))
    with pytest.raises(cx.errors.SurfaceError):
        s.append(EDIT_CASES[case])
    # Also on a session that was read leniently.
    events, _, _ = _invariant_case("turn-numbering")
    lenient = _write(tmp_path / "lenient.v3.jsonl", h, events)
    with pytest.warns(cx.errors.LogInvariantWarning):
        s2 = cx.Session.open(lenient)
    with pytest.raises(cx.errors.SurfaceError):
        s2.append([{"type": "turn/start", "data": {"turn": 9}}])


# --- 5. the migration chain's own refusals, worded as the harness words them --------------------


@pytest.mark.parametrize("defect", ["relative-cwd", "tools-object"])
def test_migration_refusals_match_the_harness(
    oracle_home: Path,  # noqa: F811
    tmp_path: Path,
    defect: str,
) -> None:
    header = dict(V0_HEADER)
    rows = legacy_rows()
    if defect == "relative-cwd":
        header["cwd"] = "rel/dir"
    else:
        rh = {"header": {"config": MODEL_P, "tools": {"bash": {}}}, "reason": "initial"}
        rows.insert(3, {"type": "request/header", "seq": 3, "time": 1, "data": rh})
        for i, ev in enumerate(rows):
            ev["seq"] = i
    path = _write(tmp_path / "session.jsonl", header, rows)
    verdict = check(oracle_home, path, "--target", "1")
    assert not verdict["ok"]
    harness = verdict["error"].get("cause") or verdict["error"]["message"]
    if defect == "relative-cwd":  # the harness's v0 header codec refuses it on read: so do we
        with pytest.raises(SessionFormatError) as exc:
            cx.Session.open(path)
        assert harness in str(exc.value) and exc.value.line == 1
        return
    s = cx.Session.open(path)  # reading is unchanged; the migration is what refuses
    with pytest.raises(SessionFormatError) as exc:
        s.save(tmp_path / "up", version=1)
    assert harness in str(exc.value)


# --- 6. envelope, header, request header, message shape and vocabulary ------------------------
#
# The harness's loader refuses each of these (``assertSessionEventEnvelope``,
# ``assertCurrentLlmShape`` and ``validateSessionHeader`` in packages/core/session/src/index.ts,
# the released header codecs, and the per-generation event inventories). Where its published
# format packages show the verdict (v1, v2, and for the codec rules v3), the oracle agrees.


def _shape_log(version: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    header: dict[str, Any] = {"type": "session", "version": version, "id": "s", "createdAt": 1}
    header["cwd"] = "/w"
    if version >= 2:
        header["isSeeded"] = False
    header["delegationDepth"] = 0
    user = {"id": "u1", "role": "user", "content": [{"type": "text", "text": "a"}]}
    config = {"provider": "p", "model": "m", "reasoningEffort": "high"}
    events = _events(
        ("turn/start", {"turn": 1}),
        ("step/start", {"turn": 1, "step": 1}),
        ("user/message", {**user, "source": {"kind": "user"}}, {"surfaceOp": "append"}),
        ("request/header", {"header": {"config": config}, "reason": "initial"}),
        ("plan/mode", {"active": True}),
        ("step/end", {"turn": 1, "step": 1}),
        ("turn/end", {"turn": 1, "reason": {"kind": "completed"}}),
    )
    return header, events


def _with_event(events: list[dict[str, Any]], etype: str, data: Any) -> None:
    events.insert(5, {"type": etype, "seq": 5, "time": 1, "data": data})
    for i, ev in enumerate(events):
        ev["seq"] = i


def _defect(name: str, header: dict[str, Any], events: list[dict[str, Any]]) -> None:
    config = events[3]["data"]["header"]["config"]
    if name == "no-data":
        del events[4]["data"]
    elif name == "ignorable-false":
        events[4]["ignorable"] = False
    elif name == "empty-provider":
        config["provider"] = ""
    elif name == "no-model":
        del config["model"]
    elif name == "empty-effort":
        config["reasoningEffort"] = ""
    elif name == "number-effort":
        config["reasoningEffort"] = 5
    elif name == "relative-cwd":
        header["cwd"] = "w/x"
    elif name == "origin":
        header["origin"] = "parent"
    elif name == "empty-kind":
        events[2]["data"]["source"]["kind"] = ""
    elif name == "attempt":
        _with_event(events, "assistant/attempt", {"turn": 1, "step": 1, "stream": []})
    elif name == "code-dispatch":
        _with_event(events, "tool/code-dispatch", {})
    elif name == "ptc-dispatch":
        _with_event(events, "tool/ptc-dispatch", {})
    elif name == "team-other":
        _with_event(events, "team/other", {})
    else:
        raise AssertionError(name)


# (defect, versions that refuse it, versions where the published packages show that refusal)
SHAPE_RULES = [
    ("no-data", (1, 2, 3), (1, 2, 3)),
    ("ignorable-false", (1, 2, 3), (1, 2, 3)),
    ("empty-provider", (1, 2, 3), (1, 2)),
    ("no-model", (1, 2, 3), (1, 2)),
    ("empty-effort", (1, 2, 3), (1, 2)),
    ("number-effort", (1, 2, 3), (1, 2)),
    ("relative-cwd", (1, 2, 3), (1, 2, 3)),
    ("origin", (1, 2, 3), (1, 2, 3)),
    ("empty-kind", (1, 2, 3), (1, 2)),
    ("attempt", (1,), (1,)),
    ("code-dispatch", (3,), (3,)),
    ("ptc-dispatch", (1, 2), (1, 2)),
    ("team-other", (1, 2, 3), (1, 2, 3)),
]


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize(("defect", "refused", "shown"), SHAPE_RULES)
def test_shape_rules_refuse_what_the_harness_refuses(
    oracle_home: Path,  # noqa: F811
    tmp_path: Path,
    version: int,
    defect: str,
    refused: tuple[int, ...],
    shown: tuple[int, ...],
) -> None:
    header, events = _shape_log(version)
    _defect(defect, header, events)
    path = _write(tmp_path / f"session.v{version}.jsonl", header, events)
    if version in shown:
        assert not check(oracle_home, path)["ok"]
    if version in refused:
        with pytest.raises(SessionFormatError):
            cx.Session.open(path)
    else:
        cx.Session.open(path).messages()


def test_the_intact_shape_log_is_read_by_both(oracle_home: Path, tmp_path: Path) -> None:  # noqa: F811
    for version in (1, 2, 3):
        header, events = _shape_log(version)
        path = _write(tmp_path / f"session.v{version}.jsonl", header, events)
        assert check(oracle_home, path)["ok"]
        assert len(cx.Session.open(path)) == len(events)


def test_a_system_message_outside_v3_is_an_unknown_type(tmp_path: Path) -> None:
    for version in (1, 2):
        header, events = _shape_log(version)
        sys_msg = {"id": "s1", "role": "system", "content": [], "source": {"kind": "plugin"}}
        events.insert(2, {"type": "system/message", "seq": 2, "time": 1, "data": {}})
        events[2]["data"] = {"turn": 1, "step": 1, "message": sys_msg}
        events[2]["surfaceOp"] = "append"
        for i, ev in enumerate(events):
            ev["seq"] = i
        path = _write(tmp_path / f"session.v{version}.jsonl", header, events)
        with pytest.raises(cx.errors.UnknownEventType, match="vocabulary"):
            cx.Session.open(path)
        events[2]["ignorable"] = True  # skipped as any unknown ignorable type is
        s = cx.Session.open(_write(path, header, events))
        assert 2 in s.index.unknown_seqs


@pytest.mark.parametrize("version", [1, 3])
def test_an_empty_system_prompt_is_no_system_prompt(tmp_path: Path, version: int) -> None:
    header, events = _shape_log(version)
    if version == 3:
        blank = {"id": "s1", "role": "system", "content": [{"type": "text", "text": ""}]}
        blank["source"] = {"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt"}
        _with_event(events, "system/message", {"turn": 1, "step": 1, "message": blank})
        events.insert(2, events.pop(5))  # node 0
        events[2]["surfaceOp"] = "append"
        for i, ev in enumerate(events):
            ev["seq"] = i
    else:
        events[3]["data"]["header"]["system"] = ""
    s = cx.Session.open(_write(tmp_path / f"session.v{version}.jsonl", header, events))
    assert s.system_prompt is None
    assert [m.role for m in s.messages()] == ["user"]
    assert [m["role"] for m in s.wire()] == ["user"]


# --- 7. strict=True refuses the semantic defects a lenient read lets through --------------------


def _strict_base() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from ctxsdk.testing import LogBuilder

    b = LogBuilder(version=3, cwd="/w")
    b.turn("hi").assistant("ok", tool_calls=[("bash", {"command": "ls"})])
    b.tool_results(["out"]).next_step().assistant("done").end_turn()
    return dict(b.header), [dict(e) for e in b.events]


def _strict_defect(name: str, events: list[dict[str, Any]]) -> None:
    def first(etype: str) -> dict[str, Any]:
        return next(e for e in events if e["type"] == etype)

    if name == "duplicate-id":
        a, b = (e for e in events if e["type"] == "assistant/message")
        b["data"] = {**b["data"], "message": {**b["data"]["message"]}}
        b["data"]["message"]["id"] = a["data"]["message"]["id"]
    elif name == "true-for-int":
        call = first("tool/call")
        call["data"] = {**call["data"], "step": True}  # True == 1 to a lax reader
    elif name == "null-for-field":
        ctx = first("request/context")
        ctx["data"] = {**ctx["data"], "contextWindow": None}
    elif name == "summary-without-start":
        data = {"compactionId": "c1", "summary": [{"type": "text", "text": "s"}]}
        events.append({"type": "compaction/summary", "seq": len(events), "time": 1, "data": data})
    else:
        raise AssertionError(name)


@pytest.mark.parametrize(
    ("defect", "match"),
    [
        ("duplicate-id", "already appended"),
        ("true-for-int", r"step.*\(strict\)"),
        ("null-for-field", "contextWindow is null"),
        ("summary-without-start", "has no compaction/start"),
    ],
)
def test_strict_refuses_semantic_defects(tmp_path: Path, defect: str, match: str) -> None:
    header, events = _strict_base()
    cx.Session.open(_write(tmp_path / "session.v3.jsonl", header, events), strict=True)
    _strict_defect(defect, events)
    path = _write(tmp_path / "session.v3.jsonl", header, events)
    cx.Session.open(path)  # the lenient read, as the harness's production read, takes it
    with pytest.raises(SessionFormatError, match=match) as exc:
        cx.Session.open(path, strict=True)
    assert exc.value.seq is not None


def test_strict_keeps_the_nulls_the_harness_writes(tmp_path: Path) -> None:
    header, events = _strict_base()
    start = {"compactionId": "c1", "turn": None}  # a manual /compact between turns
    events.append({"type": "compaction/start", "seq": len(events), "time": 1, "data": start})
    end = {"compactionId": "c1", "turn": None, "error": "cancelled"}
    events.append({"type": "compaction/end", "seq": len(events), "time": 1, "data": end})
    cx.Session.open(_write(tmp_path / "session.v3.jsonl", header, events), strict=True)


def test_strict_reads_every_sample_and_builder_log(tmp_path: Path) -> None:
    from ctxsdk.samples import sample_paths
    from ctxsdk.testing import LogBuilder

    for path in sample_paths().values():
        cx.Session.open(path, strict=True)
    for version in (0, 1, 2, 3):
        b = LogBuilder(version=version, cwd="/w")
        b.turn("hi").assistant("ok", tool_calls=[("bash", {"command": "ls"})])
        b.tool_results(["out"]).next_step().assistant("done").end_turn()
        b.compact(keep_last=1, summary_text="the summary")
        cx.Session.open(b.write(tmp_path / f"v{version}"), strict=True)


# --- 8. stripped logs (no seq/time on any event) are the harness's fixtures, read by themselves

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "data" / "dsh-fixtures"


def _fixtures() -> list[Path]:
    found = sorted(FIXTURES.glob("*.session.jsonl"))
    if not found:
        pytest.skip(f"no harness fixtures in {FIXTURES}")
    return found


def _message_dicts(s: cx.Session) -> list[Any]:
    return [m.to_json_dict() for m in s.messages()]


def test_a_stripped_fixture_opens_without_a_flag_and_is_read_only(tmp_path: Path) -> None:
    for fixture in _fixtures():
        s = cx.Session.open(fixture)  # no normalized=True: no event has a seq or time
        flagged = cx.Session.open(fixture, normalized=True)
        assert list(s.raw_events) == list(flagged.raw_events)
        assert _message_dicts(s) == _message_dicts(flagged) and s.messages()
        assert [e["seq"] for e in s.raw_events] == list(range(len(s)))
        assert s.path is None and s.recovery is None  # read-only, as with normalized=True
        edited = s.replace(*[s.surface().seqs[-1]] * 2, "changed")
        with pytest.raises(cx.errors.NotReadFromFile) as err:
            edited.append_to_log()
        msg = str(err.value)
        assert str(fixture) in msg and "stripped" in msg and "s.save(path)" in msg, msg
        # The copy it names has real seqs and times: it is a live log, read as one.
        copy = cx.Session.open(edited.save(tmp_path / fixture.stem, compression="none"))
        assert copy.path is not None and len(copy) == len(edited)
        assert _message_dicts(copy) == _message_dicts(edited)
        again = copy.replace(*[copy.surface().seqs[-1]] * 2, "again").append_to_log()
        assert len(again) == len(copy) + 1


def test_normalized_false_refuses_a_stripped_fixture_on_its_first_row() -> None:
    fixture = _fixtures()[0]
    with pytest.raises(SessionFormatError) as err:
        cx.Session.open(fixture, normalized=False)
    assert err.value.path == str(fixture) and err.value.line is not None
    assert err.value.seq is not None and "stripped" in str(err.value)


@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_a_log_with_some_events_stripped_is_refused_where_it_is(tmp_path: Path, where: str) -> None:
    fixture = _fixtures()[-1]
    s = cx.Session.open(fixture)
    events = [dict(e) for e in s.raw_events]  # real seqs and times on every event
    k = {"first": 0, "middle": len(events) // 2, "last": len(events) - 1}[where]
    del events[k]["seq"], events[k]["time"]
    path = _write(tmp_path / "session.jsonl", dict(s._header_raw), events)
    with pytest.raises(SessionFormatError) as err:
        cx.Session.open(path)
    assert (err.value.path, err.value.line, err.value.seq) == (str(path), k + 2, k)
    assert "stripped" in str(err.value)
    # Asked for, the mixed log is read as normalized: the stripped event gets its position.
    mixed = cx.Session.open(path, normalized=True)
    assert [e["seq"] for e in mixed.raw_events] == list(range(len(events)))


def test_a_zstd_stripped_log_is_detected_too_and_a_header_alone_is_not(tmp_path: Path) -> None:
    from ctxsdk.session._codec import zstd_frame

    fixture = _fixtures()[0]
    lines = fixture.read_bytes().splitlines(keepends=True)
    path = tmp_path / "fixture.session.jsonl.zstd"
    path.write_bytes(zstd_frame(lines[0]) + zstd_frame(b"".join(lines[1:])))
    s = cx.Session.open(path)
    assert s.compression == "zstd" and s.path is None
    assert _message_dicts(s) == _message_dicts(cx.Session.open(fixture))
    # A log of only its header has no event to be stripped: it stays a live log.
    lone = tmp_path / "lone" / "session.v3.jsonl"
    lone.parent.mkdir()
    lone.write_text(json.dumps(V3_HEADER) + "\n")
    assert cx.Session.open(lone).path == lone


V3_HEADER = {"type": "session", "version": 3, "id": "h", "createdAt": 1, "isSeeded": False}
V3_HEADER["delegationDepth"] = 0


# --- 9. print(message) shows the whole message; its repr stays one short line ----------------


def test_print_shows_the_whole_message_and_repr_stays_short(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from ctxsdk.session import Message

    long = "line one of a long answer\n" + "word " * 200 + "\nthe last line"
    msg = Message.model_validate(
        {
            "id": "m",
            "role": "assistant",
            "content": [
                {"type": "reasoning", "text": "not shown"},
                {"type": "text", "text": long},
                {"type": "tool-call", "id": "c1", "name": "bash", "arguments": '{"command":"ls"}'},
            ],
            "source": {"kind": "model", "provider": "p", "model": "m"},
        }
    )
    print(msg)
    out = capsys.readouterr().out
    assert out == f'assistant: {long}\n-> bash({{"command":"ls"}})\n'
    assert len(repr(msg)) < 100 and repr(msg).startswith("Message(assistant, model, ")
    result = Message.model_validate(
        {
            "id": "r",
            "role": "user",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "c1",
                    "content": [{"type": "text", "text": long}],
                    "isError": True,
                }
            ],
            "source": {"kind": "tool", "callId": "c1"},
        }
    )
    assert str(result) == f"user: error: {long}"
    assert f"{result}" == str(result) and str(result) != repr(result)
