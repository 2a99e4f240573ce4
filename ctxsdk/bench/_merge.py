"""``ctxsdk bench merge``: is merging confluent, and does our T1 reproduction equal the
published one?

Section ``confluence``: the T1 exhaustive experiment (``seed-algorithms.md`` §1(d)),
rebuilt by ``t1_experiment`` (``bench._t1``), compared field by field with the published
``seed-bench/belief-merge/t1_results.json``. Metrics: failures and rate per
(space, score, representation, well-formed), the JOIN failures in total (target 0), and
``matches_published`` (1.0 only if every number, witness and table equals the file).
The lossy representations (``COUNT``, ``MAX`` = collapse), measured in the same run, are
the baselines: their failure totals. ``--quick`` leaves out the seeded random chain-of-three search.

Section ``mergebench``: MergeBench rebuilt (``ctxsdk.bench._mergebench``), seeds 1..5, 10
topics, 2 branches, 2 conflicts, at the seed's tight budget (400) and loose budget (1200).
The seed's baseline arms (``none``, ``single:branch-a``, ``concat``) are the baselines
(``mergebench.<run>.<arm>.<metric>``); the published numbers are read from
``seed-bench/belief-merge/mergebench-vocabulary-and-published.json``. Targets: the largest
difference from the published baseline rows (rates in points, ``both``, tokens relative), and
the tables equal to the transcription. The Merge engine's arms (``ctxsdk``: no model;
``ctxsdk-oracle``: the alignment answered with the ground truth, ``_merge_arms``) run in the
same loop under the same budget. Targets for ``ctxsdk`` at the tight budget: bridge >= 0.98,
local >= 0.95, unambig >= 0.90, invent 0, tokens within the budget; for ``ctxsdk-oracle``:
bridge 1, unambig 1, invent 0. The seed's own merge arms are published only
(``published`` holds ``beliefmerge-heuristic`` / ``beliefmerge-oracle`` under our arm names
``ctxsdk`` / ``ctxsdk-oracle`` to compare). The paraphrase run (same facts in other words) is
reported with no target: it measures how far the deterministic extractor generalizes.
``--quick`` leaves out the paraphrase run.

Section ``scale``: 2, 10 and 50 generated sessions of 500 messages each through the whole
pipeline (``_merge_scale``); target: the time per message at 50 sessions at most 1.5 times the
time per message at 2 (flat), both measured in this run. ``--quick`` runs 2 and 10.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .._progress import Progress, resolve_progress
from ..errors import DataMissing
from . import _mergebench as mb
from ._merge_arms import MERGE_ARMS
from ._merge_data import MERGEBENCH_FILE, T1_FILE, _shared_data
from ._merge_scale import SCALE_SESSIONS, scale_run
from ._result import BenchResult, Target
from ._t1 import compare_t1, t1_experiment

__all__ = ["MERGEBENCH_FILE", "T1_FILE", "mergebench_section", "run"]

# published row field -> our row field
_MB_FIELDS = {
    "local": "local",
    "bridge": "bridge",
    "best1": "best1",
    "gain": "gain",
    "unambig": "unambig",
    "both": "both",
    "invent": "invent",
    "tokens": "tokens",
}
_MB_RATES = ("local", "bridge", "best1", "gain", "unambig", "invent")
# our arm -> the seed's arm it is compared with in ``published``
_SEED_ARM = {"ctxsdk": "beliefmerge-heuristic", "ctxsdk-oracle": "beliefmerge-oracle"}


def _row_name(row: dict[str, Any]) -> str:
    wf = "well_formed" if row["well_formed"] else "any"
    return f"confluence.{row['space']}.{row['score']}.{row['representation']}.{wf}"


def _tables_match(vocab: dict[str, Any]) -> bool:
    ours = [{"key": t.key, "values": list(t.values), "say": t.template} for t in mb.TOPICS]
    return ours == vocab.get("topics") and list(mb.CHATTER) == vocab.get("chatter")


def mergebench_section(root: Path, *, quick: bool = False) -> dict[str, Any]:
    """The ``mergebench`` part of the merge benchmark: metrics, baselines, published, targets
    and notes, every name prefixed ``mergebench.``."""
    vocab: dict[str, Any] = json.loads((root / MERGEBENCH_FILE).read_text(encoding="utf-8"))
    runs = {"tight": 400, "loose": 1200}
    pub_runs = {"tight": vocab["publishedRuns"][0], "loose": vocab["publishedRuns"][1]}
    metrics: dict[str, float] = {}
    baselines: dict[str, float] = {}
    published: dict[str, float] = {}
    rate_diff = both_diff = token_diff = 0.0
    compared = 0
    arms = {**mb.ARMS, **MERGE_ARMS}
    for run_name, budget in runs.items():
        rows = mb.run_mergebench(
            seeds=5, topics=10, branches=2, conflicts=2, budget=budget, arms=arms
        )
        for arm, row in rows.items():
            ours_arm = arm in MERGE_ARMS
            into = metrics if ours_arm else baselines
            for f in (*_MB_FIELDS.values(), "wrong_only", "absent"):
                into[f"mergebench.{run_name}.{arm}.{f}"] = float(row[f])
            if ours_arm:
                seed_row = pub_runs[run_name]["rows"].get(_SEED_ARM[arm])
                for pf, of in _MB_FIELDS.items():
                    if seed_row is not None and pf in seed_row:
                        published[f"mergebench.{run_name}.{arm}.{of}"] = float(seed_row[pf])
                continue
            pub = pub_runs[run_name]["rows"].get(arm)
            if pub is None:
                continue
            for pf, of in _MB_FIELDS.items():
                published[f"mergebench.{run_name}.{arm}.{of}"] = float(pub[pf])
                ours, theirs = float(row[of]), float(pub[pf])
                compared += 1
                if pf in _MB_RATES:
                    rate_diff = max(rate_diff, abs(ours - theirs))
                elif pf == "both":
                    both_diff = max(both_diff, abs(ours - theirs))
                else:
                    token_diff = max(token_diff, abs(ours - theirs) / max(theirs, 1.0))
        metrics[f"mergebench.{run_name}.bridge_questions"] = float(rows["none"]["bridge_questions"])
    if not quick:
        for arm, row in mb.run_mergebench(budget=400, paraphrase=True, arms=arms).items():
            into = metrics if arm in MERGE_ARMS else baselines
            for f in _MB_FIELDS.values():
                into[f"mergebench.paraphrase.tight.{arm}.{f}"] = float(row[f])
    metrics["mergebench.compared_numbers"] = float(compared)
    metrics["mergebench.max_rate_diff_vs_published"] = rate_diff
    metrics["mergebench.max_both_diff_vs_published"] = both_diff
    metrics["mergebench.max_token_rel_diff_vs_published"] = token_diff
    metrics["mergebench.tables_match_transcription"] = 1.0 if _tables_match(vocab) else 0.0
    targets = [
        Target.at_least("mergebench.compared_numbers", 1),
        Target.at_least("mergebench.tight.bridge_questions", 50),
        Target.at_most("mergebench.max_rate_diff_vs_published", 0.03),
        Target.at_most("mergebench.max_both_diff_vs_published", 0.1),
        Target.at_most("mergebench.max_token_rel_diff_vs_published", 0.02),
        Target.at_least("mergebench.tables_match_transcription", 1.0),
        Target.at_least("mergebench.tight.ctxsdk.bridge", 0.98),
        Target.at_least("mergebench.tight.ctxsdk.local", 0.95),
        Target.at_least("mergebench.tight.ctxsdk.unambig", 0.90),
        Target.at_most("mergebench.tight.ctxsdk.invent", 0.0),
        Target.at_most("mergebench.tight.ctxsdk.tokens", 400),
        Target.at_least("mergebench.tight.ctxsdk-oracle.bridge", 1.0),
        Target.at_least("mergebench.tight.ctxsdk-oracle.unambig", 1.0),
        Target.at_most("mergebench.tight.ctxsdk-oracle.invent", 0.0),
    ]
    notes = {
        "mergebench.data": str(root / MERGEBENCH_FILE),
        "mergebench.arms": "baselines: the seed's none/single/concat arms run here; metrics: "
        "ctxsdk (no model) and ctxsdk-oracle (ground-truth alignment); published: the seed's "
        "rows, its beliefmerge-heuristic/-oracle under our arm names",
    }
    return {
        "metrics": metrics,
        "baselines": baselines,
        "published": published,
        "targets": targets,
        "notes": notes,
    }


def run(*, quick: bool = False, progress: Progress | None = None) -> BenchResult:
    root = _shared_data()
    if root is None:
        raise DataMissing(
            f"the merge benchmark needs the published T1 results ({T1_FILE}) and the "
            f"MergeBench tables ({MERGEBENCH_FILE}): set CTXSDK_SHARED_DATA to the shared "
            "data folder"
        )
    published_report: dict[str, Any] = json.loads((root / T1_FILE).read_text(encoding="utf-8"))
    ours = t1_experiment(chain3=not quick, progress=resolve_progress(progress))
    mismatches = compare_t1(ours, published_report)
    skipped = sorted(set(published_report) - set(ours))

    metrics: dict[str, float] = {}
    baselines: dict[str, float] = {}
    published: dict[str, float] = {}
    join_failures = 0
    for row in ours["confluence"]:
        name = _row_name(row)
        metrics[f"{name}.failures"] = float(row["failures"])
        metrics[f"{name}.rate"] = float(row["rate"])
        if row["representation"] == "JOIN":
            join_failures += int(row["failures"])
        else:  # the lossy representations, measured in the same run
            label = "collapse" if row["representation"] == "MAX" else "count"
            key = f"confluence.{label}_failures"
            baselines[key] = baselines.get(key, 0.0) + float(row["failures"])
    for row in published_report["confluence"]:
        published[f"{_row_name(row)}.failures"] = float(row["failures"])
    metrics["confluence.join_failures"] = float(join_failures)
    metrics["confluence.join_checked_profiles"] = float(
        sum(r["total"] for r in ours["confluence"] if r["representation"] == "JOIN")
    )
    lossy = [r for r in ours["confluence"] if r["representation"] != "JOIN"]
    metrics["confluence.lossy_min_rate"] = min(float(r["rate"]) for r in lossy)
    metrics["confluence.mismatches"] = float(len(mismatches))
    metrics["confluence.matches_published"] = 1.0 if not mismatches else 0.0
    published["confluence.join_failures"] = float(
        sum(r["failures"] for r in published_report["confluence"] if r["representation"] == "JOIN")
    )
    section = mergebench_section(root, quick=quick)
    scale = scale_run(SCALE_SESSIONS[:2] if quick else SCALE_SESSIONS)
    metrics.update(scale)
    metrics.update(section["metrics"])
    baselines.update(section["baselines"])
    published.update(section["published"])
    return BenchResult(
        name="merge",
        metrics=metrics,
        baselines=baselines,
        published=published,
        targets=[
            *section["targets"],
            Target.at_most("confluence.join_failures", 0),
            Target.at_least("confluence.join_checked_profiles", 1),
            # the lossy representations must really fail, or the check could not tell
            Target.at_least("confluence.lossy_min_rate", 1e-9),
            Target.at_most("confluence.mismatches", 0),
            Target.at_least("confluence.matches_published", 1.0),
            Target.at_most("scale.per_message_ratio", 1.5),
        ],
        notes={
            "quick": quick,
            "data": str(root / T1_FILE),
            "mismatches": mismatches[:50],
            "not_compared": skipped,
            **section["notes"],
        },
    )
