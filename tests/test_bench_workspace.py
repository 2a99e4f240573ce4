"""ctxsdk.bench._workspace: cold / warm / partial listing of a generated DSH home.

The quick bench runs once per module. Its timings are never asserted (only that the ratios
exist, are finite and positive); what is asserted is the shape of the result and that the
correctness checks the bench makes on its own listings passed.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ctxsdk.bench import BenchResult
from ctxsdk.bench import _workspace as bw
from ctxsdk.session._session import Session
from ctxsdk.session._workspace import Workspace

RATIOS = [
    "warm_over_stat_floor_ratio",
    "warm_over_stat_floor_cpu_ratio",
    "warm_over_cold_speedup",
    "partial_over_warm_ratio",
    "cold_over_header_only_ratio",
    "cold_ms_per_session",
]


@pytest.fixture(scope="module")
def result() -> BenchResult:
    return bw.run(quick=True, progress=False)


def test_result_shape(result: BenchResult) -> None:
    assert result.name == "workspace"
    for name in [*RATIOS, *bw.CHECKS]:
        assert name in result.metrics, name
    assert set(result.baselines) == {
        "stat_floor_seconds",
        "header_only_seconds",
        "stat_floor_cpu_seconds",
    }
    targets = {t.metric: t for t in result.targets}
    assert (
        targets["warm_over_stat_floor_cpu_ratio"].op,
        targets["warm_over_stat_floor_cpu_ratio"].value,
    ) == ("<=", 3.0)
    assert "warm_over_stat_floor_ratio" not in targets  # the wall ratio: reported beside it
    assert set(result.baselines) >= {"stat_floor_cpu_seconds"}
    assert (targets["warm_over_cold_speedup"].op, targets["warm_over_cold_speedup"].value) == (
        ">=",
        10.0,
    )
    for name in bw.CHECKS:
        assert (targets[name].op, targets[name].value) == (">=", 1.0)
    assert "cold_ms_per_session" not in targets  # reported, no target
    out = result.to_json_dict()
    assert set(out) >= {"name", "metrics", "baselines", "published", "targets", "met"}
    json.dumps(out)  # serialisable as the CLI writes it
    assert "bench workspace" in result.table()


def test_values_are_finite_and_positive(result: BenchResult) -> None:
    for name, value in {**result.metrics, **result.baselines}.items():
        assert math.isfinite(value) and value > 0, name


def test_correctness_checks_passed(result: BenchResult) -> None:
    for name in bw.CHECKS:
        assert result.metrics[name] == 1.0, name
        assert result.met[f"{name} >= 1"], name


def test_notes(result: BenchResult) -> None:
    notes = result.notes
    assert notes["sessions"] == 200
    assert notes["touched_sessions"] == 2
    assert notes["total_bytes"] > 0 and notes["events"] > notes["sessions"]
    assert notes["quick"] is True
    assert "interleaved" in notes


def test_generated_home_is_a_valid_workspace(tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    gen = bw.make_home(tmp_path / "home", 8, progress=lambda d, t, _: seen.append((d, t)))
    assert seen[0] == (0, 8) and seen[-1] == (8, 8)
    df = Workspace(gen.home, cache=False, progress=False).sessions()
    assert df.height == 8 and bool(df["readable"].all())
    assert sorted(df["id"].to_list()) == gen.ids
    assert int(df["events"].sum()) == gen.events
    assert int(df["bytes"].sum()) == gen.bytes
    parents = dict(zip(df["id"].to_list(), df["parent"].to_list(), strict=True))
    assert parents["bench-00002"] == "bench-00000"  # a fork of its family's root
    assert parents["bench-00003"] == "bench-00001"  # a subagent of the long session
    assert parents["bench-00000"] is None
    floor = bw.stat_floor(gen.root)
    assert sorted(p for p, _, _ in floor) == sorted(str(p) for p in gen.paths)
    heads = bw.header_only(gen.root)
    assert sorted(h["header"]["id"] for h in heads) == gen.ids


def test_appended_title_keeps_the_log_valid(tmp_path: Path) -> None:
    gen = bw.make_home(tmp_path / "home", 4, progress=False)
    path = gen.paths[1]
    before = path.stat().st_size
    size = bw.append_title(path, "Renamed")
    assert size > before
    s = Session.open(path)
    assert s.title == "Renamed"
