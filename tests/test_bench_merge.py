"""``ctxsdk bench merge``: the quick run's shape, and targets evaluated from its metrics."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxsdk.bench import BENCHMARKS, BenchResult, run_benchmark
from ctxsdk.bench._merge import T1_FILE

_env = os.environ.get("CTXSDK_SHARED_DATA")
SHARED_DATA = Path(_env) if _env else Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(scope="module")
def quick() -> BenchResult:
    if not (SHARED_DATA / T1_FILE).is_file():
        pytest.skip(f"{SHARED_DATA / T1_FILE} is not available")
    return run_benchmark("merge", quick=True, progress=lambda *a: None)


def test_merge_is_registered() -> None:
    assert BENCHMARKS["merge"] == "ctxsdk.bench._merge"


def test_the_quick_run_has_the_confluence_section(quick: BenchResult) -> None:
    out = quick.to_json_dict()
    assert set(out) >= {"name", "metrics", "baselines", "published", "targets", "met"}
    assert out["name"] == "merge"
    m = quick.metrics
    assert m["confluence.join_failures"] == 0
    assert m["confluence.join_checked_profiles"] == 72_760
    assert m["confluence.A.egalitarian.MAX.well_formed.failures"] == 90
    assert m["confluence.matches_published"] == 1.0
    assert quick.published["confluence.A.egalitarian.COUNT.any.failures"] == 7740
    assert quick.baselines["confluence.collapse_failures"] > 0
    assert quick.notes["not_compared"] == ["compounded_chain3"]


def test_the_targets_are_evaluated_from_the_metrics(quick: BenchResult) -> None:
    names = {t.metric for t in quick.targets}
    assert {"confluence.join_failures", "confluence.matches_published"} <= names
    # every quality target met; the one timing target (scale.per_message_ratio) is a ratio
    # of two timings, which a test does not assert, only that it was measured
    assert all(ok for t, ok in quick.met.items() if not t.startswith("scale."))
    assert quick.metrics["scale.per_message_ratio"] > 0
    assert {"scale.2.seconds", "scale.10.seconds"} <= set(quick.metrics)
    assert quick.notes["quick"] is True
    # flip a metric: the verdict follows it, so a target can fail
    broken = quick.model_copy(
        update={"metrics": {**quick.metrics, "confluence.join_failures": 1.0}}
    )
    assert not broken.all_met
    assert broken.met["confluence.join_failures <= 0"] is False
    missing = quick.model_copy(
        update={
            "metrics": {
                k: v for k, v in quick.metrics.items() if k != "confluence.matches_published"
            }
        }
    )
    assert missing.met["confluence.matches_published >= 1"] is False


def test_without_the_shared_data_it_says_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    import ctxsdk.bench._merge as bench_merge
    from ctxsdk.errors import DataMissing

    monkeypatch.setattr(bench_merge, "_shared_data", lambda: None)
    with pytest.raises(DataMissing, match="t1_results.json.*CTXSDK_SHARED_DATA"):
        bench_merge.run(quick=True)
