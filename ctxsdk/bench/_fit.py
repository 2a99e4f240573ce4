"""``ctxsdk bench fit``: how much of the evidence a budget fit keeps, on LoCoMo.

Each LoCoMo conversation is imported as a session (one user message per utterance, its
``dia_id`` kept). For every QA and budget B, ``Assembly.fit(B, query=question)`` chooses what
stays verbatim; the score is the share of the QA's evidence turns still on the surface
verbatim (``benchmarks-and-data.md`` §1.1, "context editor"). The baseline, in the same run,
keeps the most recent turns that fit. Every fit is checked by the exact planner: a plan that
does not fit its budget is counted as a failure, not as coverage.
"""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from .._progress import Progress, resolve_progress
from ..assemble import DigestConfig, FitIndex, fit_plan
from ..errors import DataMissing
from ..session._session import Session
from ..session._tokens import TokenCounter
from ..session.importers import from_locomo, import_provenance
from ._result import BenchResult, Target

__all__ = ["run"]

BUDGETS = (1000, 2000, 4000, 8000)
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


def run(*, quick: bool = False, progress: Progress | None = None) -> BenchResult:
    path = _locomo_path()
    if path is None:
        raise DataMissing(
            "LoCoMo is not available: set CTXSDK_SHARED_DATA to the shared data folder "
            "(it holds locomo/locomo10.json)"
        )
    data = json.loads(path.read_text())
    conversations = range(2) if quick else range(len(data))
    per_conv_qas = 60 if quick else None
    counter = TokenCounter("cl100k_base")
    config = DigestConfig()
    report = resolve_progress(progress)
    # (budget, category) -> lists of coverage values
    ours: dict[tuple[int, int], list[float]] = defaultdict(list)
    base: dict[tuple[int, int], list[float]] = defaultdict(list)
    over_budget = 0
    fits = 0
    missing_evidence = 0
    started = time.perf_counter()
    total_qas = sum(len(data[i]["qa"][:per_conv_qas]) for i in conversations)
    done = 0
    for i in conversations:
        session = from_locomo(data, i)
        dia = _dia_seqs(session)
        ix = FitIndex.build(session, counter, config)
        for qa in data[i]["qa"][:per_conv_qas]:
            done += 1
            report(done, total_qas, "fitting LoCoMo QAs")
            evidence = [dia[d] for d in _evidence(qa) if d in dia]
            missing_evidence += len(_evidence(qa)) - len(evidence)
            if not evidence:
                continue
            category = int(qa.get("category", 0))
            for budget in BUDGETS:
                r = fit_plan(
                    session,
                    budget,
                    query=str(qa["question"]),
                    counter=counter,
                    config=config,
                    index=ix,
                )
                fits += 1
                if not r.fits:
                    over_budget += 1
                    kept: set[int] = set()
                else:
                    kept = set(r.kept)
                ours[(budget, category)].append(sum(e in kept for e in evidence) / len(evidence))
                recent = _recent(ix, budget)
                base[(budget, category)].append(sum(e in recent for e in evidence) / len(evidence))
    metrics: dict[str, float] = {}
    baselines: dict[str, float] = {}
    for budget in BUDGETS:
        mine = [v for c in (1, 2, 3, 4) for v in ours[(budget, c)]]
        theirs = [v for c in (1, 2, 3, 4) for v in base[(budget, c)]]
        if not mine:
            continue
        k = f"{budget // 1000}k"
        metrics[f"evidence_coverage_cat1_4_at_{k}"] = sum(mine) / len(mine)
        baselines[f"recency_evidence_coverage_cat1_4_at_{k}"] = sum(theirs) / len(theirs)
        metrics[f"coverage_over_recency_ratio_at_{k}"] = (sum(mine) / len(mine)) / max(
            sum(theirs) / len(theirs), 1e-9
        )
        for c, name in _CATEGORIES.items():
            vals = ours[(budget, c)]
            if vals:
                metrics[f"evidence_coverage_{name}_at_{k}"] = sum(vals) / len(vals)
    metrics["plans_over_budget"] = float(over_budget)
    targets = [
        Target.at_least("evidence_coverage_cat1_4_at_4k", 0.80),
        Target.at_least("coverage_over_recency_ratio_at_4k", 2.0),
        Target.at_most("plans_over_budget", 0),
    ]
    return BenchResult(
        name="fit",
        metrics=metrics,
        baselines=baselines,
        targets=targets,
        notes={
            "conversations": len(conversations),
            "qas": total_qas,
            "fits": fits,
            "evidence_ids_not_found": missing_evidence,
            "tokenizer": "cl100k_base",
            "seconds": round(time.perf_counter() - started, 1),
        },
    )
