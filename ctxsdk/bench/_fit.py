"""``ctxsdk bench fit``: how much of the evidence a budget fit keeps, on LoCoMo.

Each LoCoMo conversation is imported as a session (one user message per utterance, its
``dia_id`` kept). For every QA and budget B, ``Assembly.fit(B, query=question)`` chooses what
stays verbatim; the score is the share of the QA's evidence turns still on the surface
verbatim (``benchmarks-and-data.md`` §1.1, "context editor"). Two baselines run in the same
pass: the most recent turns that fit, and an independent BM25 (``_bm25``: its own Porter
stemmer and neighbour smoothing) held to fit's constraints, which fit must strictly beat.
The same fits also measure the tokens spent on markers (what left and the way back) per
budget, and the zero-token option (``DigestConfig(absorb_off=True)``): its coverage, and that
its markers cost nothing at all. Every plan is checked by the exact planner: a plan that does
not fit its budget is counted as a failure, not as coverage.

With a local embedder installed (the best of ``available_embedders()``: e5-small, else minilm)
a ``hybrid`` arm fits again with ``fit_plan(..., embedder=...)``: the base's Retriever fusing
lexical and dense scores. Each conversation is embedded once (the index keeps the vectors).
A ``hybrid_zero`` arm fits the hybrid with the zero-token option.
``best_evidence_coverage_cat1_4_at_4k`` is the best of the four arms a user can choose
(lexical or hybrid, markers or zero-token).

Every fit of one question ranks the nodes the same way (the ranking depends on the texts and
the query, not on the budget or the marker option), so each ranker scores a question once and
the four budgets of both indexes (markers and zero-token: the same texts) share it; the plans
are the ones ranking per fit gives.

``--quick`` runs every arm and budget on the first conversation only, on ``_QUICK_QAS``
questions of categories 1-4 spread evenly over it (its costs: one conversation embedded,
the fits of those questions); the full run is every question of all ten.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from ctxsdk.session import Session, TokenCounter

from .._progress import Progress, resolve_progress
from ..assemble import DigestConfig
from ..assemble.kernel import FitIndex, Ranker, fit_plan
from ..errors import DataMissing
from ..session import Embedder, available_embedders, get_embedder
from ..session.importers import from_locomo, import_provenance
from ._bm25 import Bm25Baseline
from ._result import BenchResult, Target

__all__ = ["run"]

BUDGETS = (1000, 2000, 4000, 8000)
_QUICK_CONVERSATIONS = 1
_QUICK_QAS = 60  # of the first conversation's 152 questions of categories 1-4
_BEAT = 1.001  # "strictly better": a ratio of 1 (a tie) misses
_CATEGORIES = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop", 5: "adversarial"}


def _locomo_path() -> Path | None:
    env = os.environ.get("CTXSDK_SHARED_DATA")
    roots = [Path(env)] if env else []
    roots.append(Path(__file__).resolve().parents[3] / "shared" / "data")
    for root in roots:
        p = root / "locomo" / "locomo10.json"
        if p.is_file():
            return p
    return None


def load_locomo() -> list[dict[str, Any]]:
    """The ten LoCoMo conversations with their QA, or ``DataMissing`` saying where to put them."""
    path = _locomo_path()
    if path is None:
        raise DataMissing(
            "LoCoMo is not available: set CTXSDK_SHARED_DATA to the shared data folder "
            "(it holds locomo/locomo10.json)"
        )
    data: list[dict[str, Any]] = json.loads(path.read_text())
    return data


def _evidence(qa: dict[str, Any]) -> list[str]:
    out = []
    for item in qa.get("evidence") or []:
        for part in str(item).replace(",", ";").split(";"):
            part = part.strip()
            if part:
                out.append(part)
    return out


def _dia_seqs(session: Session) -> dict[str, int]:
    out = {}
    for seq, prov in import_provenance(session).items():
        record = prov.get("record")
        if isinstance(record, str) and record.startswith("D"):
            out[record] = seq
    return out


def _recent(ix: FitIndex, budget: int) -> set[int]:
    """The baseline: the most recent surface nodes whose tokens fit the budget."""
    kept, total = set(), 0
    for pos in range(len(ix.seqs) - 1, -1, -1):
        if total + ix.full[pos] > budget:
            break
        total += ix.full[pos]
        kept.add(ix.seqs[pos])
    return kept


def _share(kept: set[int], evidence: list[int]) -> float:
    return sum(e in kept for e in evidence) / len(evidence)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _quick_qas(qas: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """``n`` questions of categories 1-4 with evidence, spread evenly over the conversation's
    list (LoCoMo lists its questions by category: the first ``n`` would miss some)."""
    usable = [q for q in qas if int(q.get("category", 0)) in (1, 2, 3, 4) and _evidence(q)]
    if len(usable) <= n:
        return usable
    return [usable[j * len(usable) // n] for j in range(n)]


class _OncePerQuery(Ranker):
    """A ranker that keeps the scores of the last query it was asked: the fits of one question
    (every budget, with markers or zero-token) rank the same texts by the same query, so the
    scoring is done once per question instead of once per fit. The scores are the inner
    ranker's, unchanged."""

    def __init__(self, inner: Ranker) -> None:  # no super().__init__: the inner one ranks
        self._n = inner._n
        self.retriever = inner.retriever
        self._inner = inner
        self._query: str | None = None
        self._scores: list[float] = []
        self.scored = 0  # queries the inner ranker was asked

    def scores(self, query: str | None) -> list[float]:
        if query != self._query or not self._scores:
            self._scores = self._inner.scores(query)
            self._query = query
            self.scored += 1
        return list(self._scores)


def _share_rankers(
    ix: FitIndex, ix_zero: FitIndex, embedder: Embedder | None
) -> list[_OncePerQuery]:
    """Give both indexes of a conversation the same rankers, each scoring a query once. The two
    hold the same node texts and turns (checked): only the marker option differs."""
    if ix.texts != ix_zero.texts or ix.sections != ix_zero.sections:
        raise AssertionError("the marker and zero-token indexes rank different texts")
    lexical = _OncePerQuery(ix.ranker)
    ix.ranker = ix_zero.ranker = lexical
    shared = [lexical]
    if embedder is not None:
        hybrid = _OncePerQuery(ix.ranker_for(embedder))
        # FitIndex keeps the hybrid ranker per embedder: both indexes get the shared one.
        ix._hybrid[:] = [(embedder, hybrid)]
        ix_zero._hybrid[:] = [(embedder, hybrid)]
        shared.append(hybrid)
    return shared


def _best_embedder() -> Embedder | None:
    """The best installed local embedder for this data (e5-small measured best on LoCoMo in
    ``bench memory``), or None."""
    installed = available_embedders()
    for name in ("e5-small", "minilm"):
        if name in installed:
            return get_embedder(name)
    return None


def run(*, quick: bool = False, progress: Progress | None = None) -> BenchResult:
    data = load_locomo()
    conversations = range(_QUICK_CONVERSATIONS) if quick else range(len(data))
    qas_of = {
        i: _quick_qas(data[i]["qa"], _QUICK_QAS) if quick else list(data[i]["qa"])
        for i in conversations
    }
    counter = TokenCounter("cl100k_base")
    config = DigestConfig()
    zero = DigestConfig(absorb_off=True)
    report = resolve_progress(progress)
    embedder = _best_embedder()
    embed_seconds = 0.0
    # method -> (budget, category) -> coverage per QA
    cov: dict[str, dict[tuple[int, int], list[float]]] = defaultdict(lambda: defaultdict(list))
    markers: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    over_budget = 0
    fits = 0
    missing_evidence = 0
    started = time.perf_counter()
    total_qas = sum(len(qas) for qas in qas_of.values())
    scored = 0
    done = 0
    for i in conversations:
        session = from_locomo(data, i)
        dia = _dia_seqs(session)
        ix = FitIndex.build(session, counter, config)
        ix_zero = FitIndex.build(session, counter, zero)
        bm25 = Bm25Baseline(ix, counter, config)
        arms: list[tuple[str, DigestConfig, FitIndex, Embedder | None]] = [
            ("fit", config, ix, None),
            ("zero", zero, ix_zero, None),
        ]
        shared = _share_rankers(ix, ix_zero, embedder)
        if embedder is not None:
            report(done, total_qas, f"embedding conversation {i + 1} with {embedder.name}")
            t0 = time.perf_counter()
            ix.ranker_for(embedder).retriever.flush()  # the session's vectors, once
            embed_seconds += time.perf_counter() - t0
            arms.append(("hybrid", config, ix, embedder))
            arms.append(("hybrid_zero", zero, ix_zero, embedder))
        for qa in qas_of[i]:
            done += 1
            report(done, total_qas, "fitting LoCoMo QAs")
            evidence = [dia[d] for d in _evidence(qa) if d in dia]
            missing_evidence += len(_evidence(qa)) - len(evidence)
            if not evidence:
                continue
            category = int(qa.get("category", 0))
            question = str(qa["question"])
            for budget in BUDGETS:
                for name, cfg, index, emb in arms:
                    r = fit_plan(
                        session,
                        budget,
                        query=question,
                        counter=counter,
                        config=cfg,
                        index=index,
                        embedder=emb,
                    )
                    fits += 1
                    markers[name][budget].append(r.marker_tokens(counter))
                    if not r.fits:
                        over_budget += 1
                    kept = set(r.kept) if r.fits else set()
                    cov[name][(budget, category)].append(_share(kept, evidence))
                got, tokens = bm25.plan(question, budget)
                if tokens > budget:
                    over_budget += 1
                    got = set()
                cov["bm25"][(budget, category)].append(_share(got, evidence))
                cov["recency"][(budget, category)].append(_share(_recent(ix, budget), evidence))
        scored += sum(r.scored for r in shared)
    metrics: dict[str, float] = {}
    baselines: dict[str, float] = {}

    def overall(name: str, budget: int) -> float:
        return _mean([v for c in (1, 2, 3, 4) for v in cov[name][(budget, c)]])

    for budget in BUDGETS:
        if not any(cov["fit"][(budget, c)] for c in (1, 2, 3, 4)):
            continue
        k = f"{budget // 1000}k"
        mine, bm, rec = overall("fit", budget), overall("bm25", budget), overall("recency", budget)
        metrics[f"evidence_coverage_cat1_4_at_{k}"] = mine
        baselines[f"bm25_evidence_coverage_cat1_4_at_{k}"] = bm
        baselines[f"recency_evidence_coverage_cat1_4_at_{k}"] = rec
        metrics[f"coverage_over_bm25_ratio_at_{k}"] = mine / max(bm, 1e-9)
        metrics[f"coverage_over_recency_ratio_at_{k}"] = mine / max(rec, 1e-9)
        zero_cov = overall("zero", budget)
        metrics[f"evidence_coverage_zero_marker_at_{k}"] = zero_cov
        best = max(mine, zero_cov)
        if embedder is not None:
            hybrid = overall("hybrid", budget)
            metrics[f"hybrid_evidence_coverage_cat1_4_at_{k}"] = hybrid
            metrics[f"hybrid_coverage_over_bm25_ratio_at_{k}"] = hybrid / max(bm, 1e-9)
            metrics[f"hybrid_marker_tokens_share_at_{k}"] = (
                statistics.mean(markers["hybrid"][budget]) / budget
            )
            hybrid_zero = overall("hybrid_zero", budget)
            metrics[f"hybrid_evidence_coverage_zero_marker_at_{k}"] = hybrid_zero
            best = max(best, hybrid, hybrid_zero)
        metrics[f"best_evidence_coverage_cat1_4_at_{k}"] = best
        metrics[f"best_coverage_over_bm25_ratio_at_{k}"] = best / max(bm, 1e-9)
        for c, name in _CATEGORIES.items():
            vals = cov["fit"][(budget, c)]
            if vals:
                metrics[f"evidence_coverage_{name}_at_{k}"] = _mean(vals)
        spent = markers["fit"][budget]
        metrics[f"marker_tokens_share_at_{k}"] = statistics.mean(spent) / budget
        metrics[f"marker_tokens_median_at_{k}"] = float(statistics.median(spent))
    metrics["zero_marker_tokens_max"] = float(
        max(
            (
                t
                for arm in ("zero", "hybrid_zero")
                for spent in markers[arm].values()
                for t in spent
            ),
            default=0,
        )
    )
    metrics["plans_over_budget"] = float(over_budget)
    targets = [
        Target.at_least("evidence_coverage_cat1_4_at_4k", 0.80),
        # The goal: the best fit arm measured (lexical or hybrid, with markers or
        # the zero-token option) keeps 90% of the evidence at 4k and beats BM25.
        Target.at_least("best_evidence_coverage_cat1_4_at_4k", 0.90),
        Target.at_least("best_coverage_over_bm25_ratio_at_4k", _BEAT),
        Target.at_least("coverage_over_recency_ratio_at_4k", 2.0),
        # Strictly better than the independent BM25 baseline: a tie misses.
        *(Target.at_least(f"coverage_over_bm25_ratio_at_{k}", _BEAT) for k in ("1k", "2k", "4k")),
        Target.at_most("zero_marker_tokens_max", 0),
        Target.at_most("plans_over_budget", 0),
    ]
    return BenchResult(
        name="fit",
        metrics=metrics,
        baselines=baselines,
        targets=targets,
        notes={
            "quick": quick,
            "sample": (
                f"quick: conversation 1 of {len(data)}, {total_qas} questions of categories 1-4 "
                "spread over it; every arm and budget"
                if quick
                else f"all {len(data)} conversations, every question"
            ),
            "conversations": len(conversations),
            "qas": total_qas,
            "fits": fits,
            "rankings": scored,
            "evidence_ids_not_found": missing_evidence,
            "tokenizer": "cl100k_base",
            "embedder": embedder.name if embedder is not None else "none installed",
            "embed_seconds": round(embed_seconds, 1),
            "seconds": round(time.perf_counter() - started, 1),
        },
    )
