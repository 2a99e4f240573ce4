"""The load benchmark's synthetic log: valid, with the replace share it promises, and a log the
harness's own reader accepts (the benchmark measures a log the harness could have written)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import ctxsdk as cx
from ctxsdk.bench._load import make_log


def test_the_synthetic_log_opens_and_holds_its_replace_ops(tmp_path: Path) -> None:
    path = make_log(tmp_path / "bench.jsonl.zstd", 3000, compact_every=5)
    s = cx.Session.open(path, strict=True)
    assert len(s) >= 3000
    replacements = len(s.index.replaced)
    assert replacements >= 0.04 * len(s)  # prunes and compactions, about 5% of the events
    assert s.index.compaction_seqs  # compactions happened
    prunes = [rep for rep in s.index.replaced if s.raw_events[rep]["type"] == "tool/result"]
    assert prunes
    for rep in prunes:  # the harness refuses a tool/result rewrite outside an open turn
        assert s.index.turn_of(rep) is not None, f"prune {rep} is outside a turn"


def test_floor_and_ours_are_timed_interleaved_and_keep_what_they_read(tmp_path: Path) -> None:
    from ctxsdk.bench import _load

    path = make_log(tmp_path / "bench.jsonl.zstd", 600)
    calls: list[str] = []
    floor = _load._floor(path, _load._parsers()["orjson"])
    ours = _load._ours(path)

    def floor_logged() -> object:
        calls.append("floor")
        return floor()

    def ours_logged() -> object:
        calls.append("ours")
        return ours()

    got = _load.interleaved(floor_logged, ours_logged, 4)
    # a warm-up pair, then alternating pairs: neither side runs twice in a row within a pair
    assert calls[:2] == ["floor", "ours"]
    pairs = [calls[k : k + 2] for k in range(2, len(calls), 2)]
    assert len(pairs) == 4 and all(sorted(p) == ["floor", "ours"] for p in pairs)
    assert pairs[0] != pairs[1]  # A,B then B,A
    for key in ("ratio", "ratio_best", "ratio_cpu", "floor_seconds", "ours_seconds"):
        assert got[key] > 0
    # what each side returns is what a user holds: every parsed line, the session and messages
    rows = floor()
    held = ours()
    assert isinstance(held, tuple)
    session, messages = held
    assert isinstance(session, cx.Session)
    assert isinstance(rows, list) and len(rows) == len(session) + 1  # the header line too
    assert messages == session.messages() and messages


def test_rss_is_measured_in_child_processes_for_both(tmp_path: Path) -> None:
    from ctxsdk.bench import _load

    path = make_log(tmp_path / "bench.jsonl.zstd", 2000)
    got = _load.rss(path, "orjson", rounds=1)
    assert got["floor_rss_mib"] > 0 and got["ours_rss_mib"] > 0
    assert got["rss_over_floor_ratio"] == got["ours_rss_mib"] / got["floor_rss_mib"]
    assert got["rss_over_floor_ratio_process"] > 0


def test_the_breakdown_times_each_stage_with_the_floor_in_every_round(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxsdk.bench import _load

    path = make_log(tmp_path / "bench.jsonl.zstd", 600)
    calls: list[str] = []
    real_floor = _load._floor

    def logged_floor(p: Path, loads: Callable[[bytes], Any]) -> Callable[[], object]:
        run = real_floor(p, loads)

        def floor() -> object:
            calls.append("floor")
            return run()

        return floor

    monkeypatch.setattr(_load, "_floor", logged_floor)
    real_read = _load.read_log

    def logged_read(p: Path) -> Any:
        calls.append("read")
        return real_read(p)

    monkeypatch.setattr(_load, "read_log", logged_read)
    got = _load.breakdown(path, _load._parsers()["orjson"], 4)
    assert set(got) == {"read", "replay", "messages", "sum"}
    assert all(v > 0 for v in got.values())
    assert got["sum"] == pytest.approx(got["read"] + got["replay"] + got["messages"])
    # a warm-up, then each round one floor and one read; the floor first, then last
    assert calls[:2] == ["floor", "read"]
    rounds = [calls[k : k + 2] for k in range(2, len(calls), 2)]
    assert rounds == [["floor", "read"], ["read", "floor"]] * 2
