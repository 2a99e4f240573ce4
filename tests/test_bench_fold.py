"""``ctxsdk bench fold``: the quick run's shape, targets evaluated from its own metrics, and
the probe rule and recall check that can fail."""

from __future__ import annotations

from pathlib import Path

import pytest

import ctxsdk as cx
from ctxsdk.bench import BENCHMARKS, BenchResult, Target, run_benchmark
from ctxsdk.bench._fold import _recovered, probes
from ctxsdk.session import TokenCounter
from ctxsdk.session.kernel import node_tokens
from ctxsdk.testing import LogBuilder

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(scope="module")
def quick() -> BenchResult:
    if not (SHARED_DATA / "claude-code-transcript").is_dir():
        pytest.skip(f"{SHARED_DATA} is not available")
    return run_benchmark("fold", quick=True, progress=lambda *a: None)


def test_fold_is_registered() -> None:
    assert BENCHMARKS["fold"] == "ctxsdk.bench._fold"


def test_the_quick_run_has_every_section(quick: BenchResult) -> None:
    out = quick.to_json_dict()
    assert set(out) >= {"name", "metrics", "baselines", "published", "targets", "met"}
    assert out["name"] == "fold"
    m = quick.metrics
    logs = int(m["recall.logs"])
    assert logs >= 2  # the Claude Code transcript and at least one SWE-agent trajectory
    for name in ("claude_code",):
        assert m[f"recall.{name}.probes"] > 0
        assert 0.0 <= m[f"recall.{name}.recall_rate"] <= 1.0
        assert 0.0 <= m[f"recall.{name}.visible_rate"] <= 1.0
        assert m[f"recall.{name}.tokens_after"] < m[f"recall.{name}.tokens_before"]
    assert "recall.claude_code.basic_visible_rate" in quick.baselines
    assert "recall.claude_code.masking_visible_rate" in quick.baselines
    assert "recall.claude_code.compact_probe_kept_rate" in quick.baselines
    assert m["boundary.hard_cases"] == 12
    for k in ("alr", "ssr", "provenance_coverage", "hard_pass_rate"):
        assert f"boundary.{k}" in m and f"boundary.basic.{k}" in quick.baselines
    assert quick.published["claude_code_compact_summary_chars"] > 0


def test_the_targets_are_evaluated_from_the_metrics(quick: BenchResult) -> None:
    names = {t.metric for t in quick.targets}
    assert {
        "recall.recall_rate_min",
        "recall.claude_code.folded_over_compact_summary_ratio",
        "boundary.hard_pass_rate",
        "boundary.alr",
        "boundary.ssr",
        "boundary.provenance_coverage",
    } <= names
    for t in quick.targets:
        assert quick.met[str(t)] == t.met_by(quick.metrics)
    # and they can fail: the same targets against worse numbers are missed
    worse = {**quick.metrics, "recall.recall_rate_min": 0.9, "boundary.alr": 0.1}
    assert not Target.at_least("recall.recall_rate_min", 1.0).met_by(worse)
    assert not Target.at_most("boundary.alr", 0.0).met_by(worse)


def test_the_probe_rule() -> None:
    text = (
        '$ python run.py\nTraceback (most recent call last):\n  File "/app/src/run.py", line 12\n'
        "KeyError: 'x'\nbash: python3.9: command not found\ncat: nope.txt: No such file or "
        "directory\nExit code 127\ncommit 3f2a9c1e42 took 4096 ms, 12 ms, 61.4 s"
    )
    got = probes([text], 50)
    for want in (
        "run.py",
        "/app/src/run.py",
        "KeyError",
        "python3.9: command not found",
        "nope.txt: No such file or directory",
        "Exit code 127",
        "3f2a9c1e42",
        "4096",
        "61.4",
    ):
        assert want in got, want
    assert "12" not in got  # fewer than three digits
    capped = probes([text], 3)
    assert len(capped) == 3 and capped[0] == got[0] and capped[-1] == got[-1]


def _folded(tmp_path: Path) -> cx.Fold:
    b = LogBuilder(session_id="bench-fold-probe", runtime_context=None)
    for n in range(4):
        b.turn(f"look at file {n}").assistant(tool_calls=[("read", {"path": f"/srv/f{n}.txt"})])
        b.tool_results([f"/srv/data/item-{n}.csv holds 48213{n} rows\n" * 30])
        b.next_step().assistant(text="noted " * 40).end_turn()
    path = b.write(tmp_path / "s" / "session.v3.jsonl", compression="none")
    s = cx.Session.open(path)
    total = sum(node_tokens(s, TokenCounter("cl100k_base")))
    f = cx.Fold(s, store=tmp_path / "bundles", window=total)
    f.fold()
    return f


def test_recall_counts_only_verified_exact_bytes(tmp_path: Path) -> None:
    f = _folded(tmp_path)
    original = f.session.raw_events
    assert _recovered(f, original, "/srv/data/item-0.csv")
    assert not _recovered(f, original, "/srv/data/item-9.csv")  # never there
    # a corrupted bundle is never read around: the probe no longer counts
    bundles = [p for p in (tmp_path / "bundles").rglob("*") if p.is_file()]
    assert bundles
    for p in bundles:
        data = p.read_bytes()
        p.write_bytes(data[:-8] + bytes(8))
    assert not _recovered(f, original, "/srv/data/item-0.csv")
