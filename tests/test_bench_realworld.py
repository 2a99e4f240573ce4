"""``bench realworld``: the labels are well formed and true of their sessions, the bench runs
end to end, and its BM25 baseline behaves."""

from __future__ import annotations

import math
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from ctxsdk.bench import BENCHMARKS, BenchResult
from ctxsdk.bench._realworld import (
    answered,
    bm25_top5,
    corpus_dir,
    labels,
    load_session,
    raw_documents,
    run,
)

ROOT = corpus_dir()
needs_data = pytest.mark.skipif(ROOT is None, reason="shared/data/agent-sessions is absent")

KINDS = {"instruction", "preference", "decision", "project", "error_fix", "setting", "outcome"}
CHECK_SESSIONS = {
    "claude-code/codemie__session-9eda1058.jsonl",
    "codex/rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl",
    "aider/afi-core__.aider.chat.history.md",
    "aider/aider-website__pong.md",
    "aider/aider-website__census.md",
    "mini-swe-agent/django__django-16255.traj.json",
    "mini-swe-agent/sympy__sympy-23534.traj.json",
    "mini-swe-agent/pallets__flask-5014.traj.json",
    "swe-agent/gpt4__pydicom__pydicom-1458.traj",
    "swe-agent/ctf_web__i_got_id_demo.traj",
    "openhands/wrong_initial_state.json",
}


@cache
def _raw(rel: str) -> str:
    assert ROOT is not None
    return "\n".join(raw_documents(load_session(ROOT, rel))).casefold()


def test_registered() -> None:
    assert BENCHMARKS["realworld"] == "ctxsdk.bench._realworld"


def test_labels_shape() -> None:
    data = labels()
    facts = data["facts"]
    assert len(facts) >= 200
    assert len({f["agent"] for f in facts}) >= 6
    assert len({f["session"] for f in facts}) >= 20
    assert len({f["id"] for f in facts}) == len(facts)
    for f in facts:
        assert f["kind"] in KINDS, f
        assert f["split"] in ("tune", "check"), f
        assert f["session"].split("/", 1)[0] == f["agent"], f
        assert 1 <= len(f["terms"]) <= 4 and all(t.strip() for t in f["terms"]), f
        assert f["fact"].strip() and f["question"].strip(), f
    assert {f["session"] for f in facts if f["split"] == "check"} == CHECK_SESSIONS
    assert not CHECK_SESSIONS & {f["session"] for f in facts if f["split"] == "tune"}
    assert Counter(f["split"] for f in facts)["check"] >= 0.3 * len(facts)
    assert {f["kind"] for f in facts} == KINDS
    assert data["cross_session"] and all(len(g["sessions"]) >= 2 for g in data["cross_session"])
    assert any(d.get("negation") for d in data["disagreements"])
    for d in data["disagreements"]:
        assert d["terms_a"] and d["terms_b"], d


@needs_data
def test_label_sessions_exist_and_terms_occur() -> None:
    assert ROOT is not None
    data = labels()
    for f in data["facts"]:
        assert (ROOT / f["session"]).is_file(), f["session"]
        raw = _raw(f["session"])
        missing = [t for t in f["terms"] if t.casefold() not in raw]
        assert not missing, (f["id"], missing)
    for g in data["cross_session"]:
        for rel in g["sessions"]:
            assert all(t.casefold() in _raw(rel) for t in g["terms"]), (g["id"], rel)
    for d in data["disagreements"]:
        if d.get("synthetic"):
            continue
        for rel, terms in zip(d["sessions"], (d["terms_a"], d["terms_b"]), strict=True):
            assert all(t.casefold() in _raw(rel) for t in terms), (d["id"], rel)


def test_bm25_baseline_finds_a_fact_held_in_one_message() -> None:
    docs = [
        "the weather is fine today",
        "we ran the tests with python3 tests/runtests.py sitemaps_tests and all passed",
        "unrelated chatter about lunch",
    ]
    fact = {"question": "How do you run the sitemap tests?", "terms": ["tests/runtests.py"]}
    absent = {"question": "Which database do we use?", "terms": ["postgresql"]}
    split = {"question": "weather lunch", "terms": ["weather", "lunch"]}  # terms in 2 messages
    assert bm25_top5(docs, [fact, absent, split]) == [True, False, False]
    assert answered("Set TIMEOUT to 30", ["timeout", "30"])


@needs_data
def test_quick_run_end_to_end() -> None:
    # one session too short to fold at any window, one that folds at a quarter of its size
    wanted = {"openhands/wrong_initial_state.json", "aider/aider-website__pong.md"}
    result = run(quick=True, progress=False, sessions_filter=wanted.__contains__)
    assert isinstance(result, BenchResult)
    out = result.to_json_dict()
    assert set(out) >= {"name", "metrics", "baselines", "published", "targets", "met"}
    assert out["name"] == "realworld"
    for key in ("memory_stored_all", "memory_find_top5_all", "memory_noise", "fold_state_all"):
        assert key in out["metrics"], key
    # what the model receives after a fold holds at least what the checkpoint alone holds
    assert out["metrics"]["fold_received_all"] >= out["metrics"]["fold_checkpoint_all"]
    assert out["notes"]["fold_not_folded"] == ["openhands/wrong_initial_state.json"]
    assert "bm25_top5_all" in out["baselines"]
    assert "merge_negation_disputed" in out["metrics"]
    values = list(out["metrics"].values()) + list(out["baselines"].values())
    assert all(math.isfinite(v) for v in values)
    assert set(out["met"]) == {str(t) for t in result.targets}
    assert out["notes"]["sessions"] == 2
    assert out["notes"]["quick"] is True


def test_absent_corpus_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxsdk.errors import CtxError

    monkeypatch.setenv("CTXSDK_SHARED_DATA", str(tmp_path))
    with pytest.raises(CtxError, match="agent-sessions"):
        run(quick=True, progress=False)
