"""``gc_paused``: what a pause leaves alive goes to the oldest generation (no collection
pass over it later), and only when that is safe and worth it."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxsdk import Session
from ctxsdk._gc import _PROMOTE_AT, gc_paused
from ctxsdk.testing import LogBuilder


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.enable() if was else gc.disable()


def _generation(obj: object) -> int | None:
    for g in range(3):
        if any(o is obj for o in gc.get_objects(generation=g)):
            return g
    return None


def test_what_a_big_pause_leaves_alive_is_in_the_oldest_generation(collector_on: None) -> None:
    gc.collect()
    with gc_paused():
        kept = [[i] for i in range(_PROMOTE_AT + 1000)]
        assert not gc.isenabled()
    assert gc.isenabled()
    assert gc.get_count()[0] < 1000  # no pass over them is due
    assert _generation(kept) == 2 and _generation(kept[-1]) == 2
    assert gc.get_freeze_count() == 0  # nothing left frozen


def test_a_small_pause_leaves_the_generations_as_they_were(collector_on: None) -> None:
    gc.collect()
    with gc_paused():
        kept = [[i] for i in range(100)]
    assert _generation(kept) != 2  # a young object: a pass moves it on a generation only


def test_objects_the_program_froze_stay_frozen(collector_on: None) -> None:
    gc.collect()
    frozen_before = [[1]]
    gc.freeze()
    frozen = gc.get_freeze_count()
    assert frozen > 0
    with gc_paused():
        kept = [[i] for i in range(_PROMOTE_AT + 1000)]
    assert gc.get_freeze_count() == frozen  # not thawed by the pause
    assert _generation(frozen_before) is None  # still in the permanent generation
    assert _generation(kept) != 2


def test_a_caller_who_paused_the_collector_keeps_it_paused_and_unpromoted() -> None:
    was = gc.isenabled()
    gc.disable()
    try:
        gc.collect()
        with gc_paused():
            kept = [[i] for i in range(_PROMOTE_AT + 1000)]
        assert not gc.isenabled()
        assert _generation(kept) == 0  # their program, their collector
    finally:
        gc.enable() if was else None


def test_an_opened_session_needs_no_collection_pass(collector_on: None, tmp_path: Path) -> None:
    b = LogBuilder(version=3, session_id="gc", cwd="/w")
    for k in range(2500):
        b.turn(f"question {k} " + "word " * 40)
        b.assistant(text=f"answer {k} " + "word " * 40, tool_calls=[("bash", {"command": "ls"})])
        b.tool_results([f"out {k}\n" * 20])
        b.next_step()
        b.assistant(text="done")
        b.end_turn()
    path = b.write(tmp_path / "s.jsonl.zstd")
    gc.collect()
    s = Session.open(path)
    assert gc.get_count()[0] < _PROMOTE_AT
    assert _generation(s._raw) == 2 and _generation(s._raw[-1]) == 2  # the events read
    assert s.messages()
