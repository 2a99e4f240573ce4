"""``ctxsdk bench memory --quick``: metrics exist, baselines are measured in the same run, and
the targets are judged from the metrics (a stand-in embedder keeps the test fast)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from ctxsdk.bench import BENCHMARKS, BenchResult, run_benchmark
from ctxsdk.bench._fit import _locomo_path, load_locomo
from ctxsdk.bench._memory import (
    HashEmbedder,
    evidence_ids,
    locomo_questions,
    model_facts,
    run,
    turns,
)
from ctxsdk.bench._memory_stores import (
    PG_DSN_ENV,
    STORES,
    StoreSizes,
    _answers_locomo,
    _answers_realworld,
)

if TYPE_CHECKING:
    from pathlib import Path

    from ctxsdk.testing import LocalPostgres

pytestmark = pytest.mark.skipif(_locomo_path() is None, reason="LoCoMo data is not available")


@pytest.fixture(scope="module")
def quick() -> BenchResult:
    return run(quick=True, embedders=[HashEmbedder()])


def test_registered() -> None:
    assert BENCHMARKS["memory"] == "ctxsdk.bench._memory"


def test_quick_metrics_exist(quick: BenchResult) -> None:
    m = quick.metrics
    for arm in ("lexical", "dense_hash", "hybrid_rrf_hash", "hybrid_weighted_hash"):
        for k in (5, 10):
            assert 0.0 <= m[f"{arm}_r{k}_all"] <= 1.0
            assert f"{arm}_r{k}_cat1_4" in m and f"{arm}_r{k}_pooled_all" in m
            assert all(f"{arm}_r{k}_cat{c}" in m for c in (1, 2, 3, 4, 5))
    assert m["lexical_r10_all"] >= m["lexical_r5_all"]
    for key in ("synthetic_hybrid_query_ms_p95", "synthetic_hybrid_over_bm25_p50_ratio"):
        assert m[key] > 0
    assert quick.notes["conversations"] == 2 and quick.notes["best_arm"] in quick.notes["arms"]


def test_baselines_are_measured_in_the_run(quick: BenchResult) -> None:
    b = quick.baselines
    for arm in ("bm25_plain", "bm25_tuned"):
        assert 0.0 < b[f"{arm}_r5_all"] <= b[f"{arm}_r10_all"] <= 1.0
    assert quick.published["dragon_r5_all"] == 0.567
    assert quick.metrics["r5_over_bm25_plain_ratio"] == pytest.approx(
        quick.metrics["r5_all"] / b["bm25_plain_r5_all"]
    )


def test_targets_are_judged_from_the_metrics(quick: BenchResult) -> None:
    met = quick.met
    assert "r5_all >= 0.65" in met and "r10_all >= 0.75" in met
    assert not any("cat1" in t for t in met)  # multi-hop is reported, no longer a target
    for t in quick.targets:
        assert met[str(t)] == t.met_by(quick.metrics)
    assert met["r5_all >= 0.65"] == (quick.metrics["r5_all"] >= 0.65)


def test_evidence_is_normalised_like_the_spec() -> None:
    assert evidence_ids({"evidence": ["D8:6; D9:17", "D:11:26", "D30:05", "D"]}) == [
        "D8:6",
        "D9:17",
        "D11:26",
        "D30:5",
    ]
    assert evidence_ids({"evidence": ["D9:1 D4:4"]}) == ["D9:1", "D4:4"]
    assert evidence_ids({}) == []


def test_model_facts_cite_turns_of_their_conversation() -> None:
    sample = load_locomo()[0]
    ids = {d for d, _ in turns(sample)}
    facts = model_facts(sample, ids)
    assert facts and len({doc_id for doc_id, _, _ in facts}) == len(facts)
    for _, text, cited in facts:
        assert cited and set(cited) <= ids and ": " in text
    # a fact citing no existing turn is left out
    assert model_facts(sample, set()) == []


def test_the_model_facts_arm_is_a_reference_never_ours(quick: BenchResult) -> None:
    m = quick.metrics
    arm = "reference_model_facts_hash"
    assert arm in quick.notes["arms"] and 0.0 <= m[f"{arm}_r10_cat1"] <= 1.0
    assert quick.notes["best_arm"] != arm
    assert m["r10_cat1"] == m["memory_as_called_r10_cat1"]


def test_the_headline_is_the_memory_as_a_user_calls_it(quick: BenchResult) -> None:
    m = quick.metrics
    assert quick.notes["headline_arm"] == "memory_as_called"
    for key in ("r5_all", "r10_all", "r5_cat1_4", "r10_cat1_4"):
        assert m[key] == m[f"memory_as_called_{key}"]
        assert m[f"best_arm_{key}"] == m[f"{quick.notes['best_arm']}_{key}"]
    for k in (5, 10):
        assert all(m[f"r{k}_cat{c}"] == m[f"memory_as_called_r{k}_cat{c}"] for c in (1, 2, 3, 4))


# --- bench memory --store postgres: the engine on both stores ---------------------------------

# Every part of the comparison, on sizes that keep the test short (the --quick run's are
# StoreSizes.for_run(True)): the writer counts of the benchmark, a few items each.
TINY = StoreSizes(
    writer_items=3,
    rounds=1,
    find_sizes=(60, 200),
    queries=5,
    conversations=1,
    questions=12,
    realworld_quick=True,
)


@pytest.fixture(scope="module")
def stores(postgres_server: LocalPostgres) -> BenchResult:
    """The comparison through ``run_benchmark`` as the command line calls it, on the test
    server named by ``$CTXSDK_BENCH_PG_DSN`` (so no second server is started)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(PG_DSN_ENV, postgres_server.dsn())
        mp.setenv("CTXSDK_EMBEDDER", "none")
        return run_benchmark("memory", quick=True, store="postgres", store_sizes=TINY)


def test_stores_report_every_metric_for_both_stores(stores: BenchResult) -> None:
    m = stores.metrics
    lo, hi = TINY.find_sizes
    for store in STORES:
        for procs in (1, 4, 16):
            assert m[f"writers_{procs}_items_per_second_{store}"] > 0
        for size in (lo, hi):
            for figure in (
                "find_ms_p50",
                "find_ms_p95",
                "find_first_ms",
                "find_first_new_ms",
                "find_after_write_ms_p50",
                "find_after_write_ms_p95",
                "build_seconds",
            ):
                assert m[f"memory_{figure}_{size}_{store}"] > 0
            after = m[f"memory_find_after_write_ms_p95_{size}_{store}"]
            assert after >= m[f"memory_find_after_write_ms_p50_{size}_{store}"]
        assert m[f"memory_find_p95_growth_{store}"] > 0
        assert 0.0 <= m[f"answers_locomo_r10_{store}"] <= 1.0
        assert m[f"answers_locomo_ingest_seconds_{store}"] > 0
    # the ratios are PostgreSQL's figure over SQLite's, for each figure both stores report
    for procs in (1, 4, 16):
        ratio = m[f"postgres_over_sqlite_writers_{procs}_items_per_second_ratio"]
        assert ratio == pytest.approx(
            m[f"writers_{procs}_items_per_second_postgres"]
            / m[f"writers_{procs}_items_per_second_sqlite"]
        )
    for size in (lo, hi):
        assert m[f"postgres_over_sqlite_memory_find_ms_p95_{size}_ratio"] == pytest.approx(
            m[f"memory_find_ms_p95_{size}_postgres"] / m[f"memory_find_ms_p95_{size}_sqlite"]
        )
        assert m[f"postgres_over_sqlite_memory_find_after_write_ms_p95_{size}_ratio"] == (
            pytest.approx(
                m[f"memory_find_after_write_ms_p95_{size}_postgres"]
                / m[f"memory_find_after_write_ms_p95_{size}_sqlite"]
            )
        )
        assert m[f"postgres_over_sqlite_memory_find_first_new_ms_{size}_ratio"] == pytest.approx(
            m[f"memory_find_first_new_ms_{size}_postgres"]
            / m[f"memory_find_first_new_ms_{size}_sqlite"]
        )
        # the first find on PostgreSQL builds the namespace's index: part of its time
        build = m[f"memory_index_build_seconds_{size}_postgres"]
        assert 0 < build <= m[f"memory_find_first_ms_{size}_postgres"] / 1000
        assert f"memory_index_build_seconds_{size}_sqlite" not in m
    assert stores.notes["store"] == "postgres" and stores.notes["locomo_conversations"] == 1
    # the quick run is lexical: the database ranks PostgreSQL's finds, no second lexical arm
    for arm in ("locomo", "realworld"):
        assert stores.notes[f"answers_{arm}_search_mode"] == {
            "sqlite": "engine",
            "postgres": "database",
        }
        assert f"answers_{arm}_lexical_search_mode" not in stores.notes
        assert f"answers_{arm}_lexical_top10_overlap" not in m
    assert "database" in stores.notes["find"]


def test_stores_lose_no_write_and_answer_the_same(stores: BenchResult) -> None:
    m = stores.metrics
    for store in STORES:
        for procs in (1, 4, 16):
            assert m[f"writers_{procs}_lost_{store}"] == 0.0
    assert "writer_errors" not in stores.notes
    # the same engine over the same rows: the same hits, so the same recall
    assert m["answers_locomo_top10_overlap"] >= 0.9
    assert m["answers_locomo_r10_diff_points"] <= 1.0
    assert m["answers_realworld_top10_overlap"] >= 0.9
    assert stores.notes["realworld_sessions"] > 0
    for target in stores.targets:
        assert stores.met[str(target)] == target.met_by(m)
    assert "writers_16_lost_postgres <= 0" in stores.met


def test_with_an_embedder_the_stores_are_also_compared_lexically(
    postgres_dsn: str, tmp_path: Path
) -> None:
    """With an embedder PostgreSQL ranks in the engine; the lexical arm asks the database's
    own search (search_mode "database") against SQLite's engine, on the same questions."""
    data = load_locomo()
    steps: list[str] = []
    got, notes = _answers_locomo(
        TINY, data, locomo_questions, HashEmbedder(), postgres_dsn, tmp_path, steps.append
    )
    assert notes["answers_locomo_search_mode"] == {"sqlite": "engine", "postgres": "engine"}
    assert notes["answers_locomo_lexical_search_mode"] == {
        "sqlite": "engine",
        "postgres": "database",
    }
    assert notes["locomo_questions"] == TINY.questions
    for arm in ("locomo", "locomo_lexical"):
        for figure in ("top10_overlap", "top10_same_order"):
            assert 0.0 <= got[f"answers_{arm}_{figure}"] <= 1.0
        for store in STORES:
            assert 0.0 <= got[f"answers_{arm}_r10_{store}"] <= 1.0
            assert got[f"answers_{arm}_ingest_seconds_{store}"] > 0
            assert got[f"answers_{arm}_find_ms_mean_{store}"] > 0
        assert got[f"answers_{arm}_r10_diff_points"] == pytest.approx(
            100 * abs(got[f"answers_{arm}_r10_postgres"] - got[f"answers_{arm}_r10_sqlite"])
        )
    # the database's ranking is the engine's: the same answers
    assert got["answers_locomo_lexical_top10_overlap"] >= 0.9
    assert got["answers_locomo_lexical_r10_diff_points"] <= 1.0
    assert any("(locomo_lexical)" in s for s in steps)

    got, notes = _answers_realworld(TINY, HashEmbedder(), postgres_dsn, tmp_path, steps.append)
    if "realworld_sessions" not in notes:
        pytest.skip(str(notes["realworld"]))
    assert notes["answers_realworld_lexical_search_mode"]["postgres"] == "database"
    assert notes["answers_realworld_search_mode"]["postgres"] == "engine"
    for arm in ("realworld", "realworld_lexical"):
        assert 0.0 <= got[f"answers_{arm}_top10_same_order"] <= 1.0
        for store in STORES:
            assert got[f"answers_{arm}_ingest_seconds_{store}"] > 0
    assert got["answers_realworld_lexical_top10_overlap"] >= 0.9


def test_stores_on_a_named_server_leave_nothing_there(
    stores: BenchResult, postgres_server: LocalPostgres
) -> None:
    import psycopg

    where = stores.notes["postgres_server"]
    assert where.startswith(f"${PG_DSN_ENV}: postgresql://ctxsdk@127.0.0.1:")
    with psycopg.connect(postgres_server.dsn()) as conn:
        left = conn.execute("SELECT datname FROM pg_database WHERE datname LIKE 'ctxsdk_bench%'")
        assert left.fetchall() == []


def test_the_store_option_is_refused_by_a_benchmark_without_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from ctxsdk._cli import main
    from ctxsdk.errors import InvalidArgument

    with pytest.raises(InvalidArgument, match="bench load takes no store= option"):
        run_benchmark("load", quick=True, store="postgres")
    assert main(["bench", "load", "--quick", "--store", "postgres"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bench load takes no store= option (--store" in err
    with pytest.raises(SystemExit):  # argparse: sqlite or postgres only
        main(["bench", "memory", "--store", "mysql"])
    with pytest.raises(InvalidArgument, match="store is sqlite or postgres"):
        run(quick=True, store="mysql")
