"""Malformed input to the migration API raises SessionFormatError or InvalidArgument (both
ValueErrors), never a bare KeyError, TypeError or ValueError from inside an edge."""

from __future__ import annotations

from typing import Any

import pytest

from ctxsdk.errors import InvalidArgument, SessionFormatError
from ctxsdk.session._migrate import expand_stream, migrate, pack_stream

HEADER = {"type": "session", "version": 1, "id": "s", "createdAt": 1, "delegationDepth": 0}
MODEL = {"kind": "model", "provider": "p", "model": "m"}


def _turn() -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [
        {"type": "turn/start", "data": {"turn": 1}},
        {"type": "step/start", "data": {"turn": 1, "step": 1}},
        {"type": "assistant/chunk", "data": {"turn": 1, "step": 1, "chunk": _delta("hi")}},
        {"type": "step/end", "data": {"turn": 1, "step": 1}},
        {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed"}}},
    ]
    for i, ev in enumerate(events):
        ev["seq"], ev["time"] = i, 10 + i
    return events


def _delta(text: str) -> dict[str, Any]:
    return {"type": "text-delta", "index": 0, "text": text}


def test_the_sample_turn_migrates() -> None:
    _, v3 = migrate(HEADER, _turn(), 3)
    assert [e["type"] for e in v3][:4] == [
        "turn/start",
        "step/start",
        "system/message",
        "assistant/attempt",
    ]


@pytest.mark.parametrize("seq", [1, 2])  # the anchor of the system head; a chunk
def test_an_event_without_time_that_an_edge_needs(seq: int) -> None:
    events = _turn()
    del events[seq]["time"]
    with pytest.raises(SessionFormatError) as err:
        migrate(HEADER, events, 3)
    assert err.value.seq is not None


@pytest.mark.parametrize("events", [None, 5, "events"])
def test_events_that_are_not_a_list(events: Any) -> None:
    with pytest.raises(InvalidArgument, match="list of event objects"):
        migrate(HEADER, events, 3)


def test_an_event_type_that_is_not_a_string() -> None:
    events = _turn()
    events[0]["type"] = ["turn/start"]
    with pytest.raises(SessionFormatError, match="not a string") as err:
        migrate(HEADER, events, 2)
    assert err.value.seq == 0


@pytest.mark.parametrize(
    "stream",
    [
        None,
        ["chunk"],
        [{"type": "chunk", "time": 1}],
        [{"type": ["chunk"]}],
        [{"type": "text-chunks", "time0": 1, "index": 0, "dt": []}],
        [{"type": "text-chunks", "time0": 1, "index": 0, "dt": ["1"], "texts": ["a", "b"]}],
        [{"type": "text-chunks", "time0": 1, "index": 0, "dt": None, "texts": ["a"]}],
        [{"type": "tool-call-chunks", "time0": 1, "index": 0, "dt": [], "args": ["{"]}],
    ],
)
def test_malformed_streams(stream: Any) -> None:
    with pytest.raises(SessionFormatError):
        expand_stream(stream)


@pytest.mark.parametrize("chunks", [[5], [(1,)], [(1, _delta("a"), 2)]])
def test_pack_stream_wants_time_chunk_pairs(chunks: Any) -> None:
    with pytest.raises(InvalidArgument, match="pair"):
        pack_stream(chunks)


def test_pack_and_expand_round_trip() -> None:
    pairs = [(1, _delta("a")), (3, _delta("b"))]
    assert expand_stream(pack_stream(pairs)) == pairs
