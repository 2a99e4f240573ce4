"""``bench memory``'s find at scale (``_memory_scale``): memories built by ``Memory.ingest``
and grown with renamed copies of what ingest wrote, timed against ``bm25s`` over the same
texts in the same run."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import pytest

from ctxsdk.bench._fit import _locomo_path, load_locomo
from ctxsdk.bench._memory_scale import _Unit, label, memory_scale
from ctxsdk.memory import Memory
from ctxsdk.memory._find import boilerplate
from ctxsdk.session import Session

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.skipif(_locomo_path() is None, reason="LoCoMo data is not available")


def test_labels() -> None:
    assert [label(n) for n in (6_000, 20_000, 100_000, 1_000_000, 1_500)] == [
        "6k",
        "20k",
        "100k",
        "1m",
        "1500",
    ]


def test_a_copy_is_what_ingest_wrote_renamed(tmp_path: Path) -> None:
    data = load_locomo()[:1]
    with Memory(tmp_path / "m.db", embedder=None) as mem:
        mem.ingest(Session.from_locomo(data, 0))
        before = [n for n in mem.store.nodes() if n.type != "workspace"]
        hidden_before = boilerplate(before)
        unit = _Unit(mem.store, data)
        written = unit.copy(mem.store, 0, 1)
        after = [n for n in mem.store.nodes() if n.type != "workspace"]
        edges = mem.store.edges()
    assert written == len(before) and len(after) == 2 * len(before)
    ids = {n.id for n in before}
    copies = [n for n in after if n.id not in ids]
    assert Counter(n.type for n in copies) == Counter(n.type for n in before)
    speakers = [data[0]["conversation"]["speaker_a"], data[0]["conversation"]["speaker_b"]]
    session = f"locomo:{data[0]['sample_id']}"
    for n in copies:
        assert not any(s in n.text or s in n.name for s in speakers)
        assert all(src.session == f"{session}-k1" for src in n.sources)
    # observations keep their turn and sequence (the neighbours and sections of ingest)
    obs = sorted((n for n in before if n.type == "observation"), key=lambda n: n.id)
    obs_copy = sorted((n for n in copies if n.type == "observation"), key=lambda n: n.id)
    assert [(n.sources[0].seq, n.extra.get("turn")) for n in obs] == [
        (n.sources[0].seq, n.extra.get("turn")) for n in obs_copy
    ]
    # each edge ingest wrote has its copy between the copies of its ends
    unit_edges = [e for e in edges if e.src in ids]
    copied = [e for e in edges if e.src not in ids]
    assert len(copied) == len(unit_edges) > 0
    assert all(e.src not in ids and e.dst not in ids for e in copied)
    # no text of a copy is another's: the copies are not hidden as a template's copies
    assert len(boilerplate(after)) == 2 * len(hidden_before)


def test_find_is_timed_against_bm25s_in_the_same_run() -> None:
    pytest.importorskip("bm25s")
    data = load_locomo()
    questions = [str(qa["question"]) for s in data for qa in s["qa"]]
    metrics, baselines, notes = memory_scale(
        data, questions, (400, 1_500), unit_conversations=1, queries=6
    )
    assert notes["unit_conversations"] == 1 and notes["queries"] == 6
    assert notes["unit_nodes"] > 400  # one conversation, ingested
    assert notes["nodes_1500"] >= 1_500
    assert metrics["memory_scale_ingest_seconds"] > 0
    for size in ("400", "1500"):
        for p in ("p50", "p95"):
            assert metrics[f"memory_find_ms_{p}_{size}"] > 0
            assert baselines[f"bm25s_ms_{p}_{size}"] > 0
            assert metrics[f"memory_find_{p}_over_bm25s_{size}"] == pytest.approx(
                metrics[f"memory_find_ms_{p}_{size}"] / baselines[f"bm25s_ms_{p}_{size}"]
            )
        assert metrics[f"memory_find_first_ms_{size}"] > 0
        # a new process's first find: the saved index against the file read whole
        assert metrics[f"find_first_seconds_{size}"] > 0
        assert baselines[f"find_first_full_read_seconds_{size}"] > 0
        assert metrics[f"find_first_over_full_read_{size}"] == pytest.approx(
            metrics[f"find_first_seconds_{size}"]
            / baselines[f"find_first_full_read_seconds_{size}"]
        )
        assert metrics[f"find_first_same_hits_{size}"] == 1.0
    assert metrics["memory_find_p95_growth_400_to_1500"] == pytest.approx(
        metrics["memory_find_ms_p95_1500"] / metrics["memory_find_ms_p95_400"]
    )
    assert baselines["bm25s_p95_growth_400_to_1500"] > 0
