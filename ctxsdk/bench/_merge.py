"""``ctxsdk bench merge``: is merging confluent, and does our T1 reproduction equal the
published one?

Section ``confluence``: the T1 exhaustive experiment (``seed-algorithms.md`` §1(d)),
rebuilt by ``ctxsdk.merge.t1_experiment``, compared field by field with the published
``seed-bench/belief-merge/t1_results.json``. Metrics: failures and rate per
(space, score, representation, well-formed), the JOIN failures in total (target 0), and
``matches_published`` (1.0 only if every number, witness and table equals the file).
The lossy representations (``COUNT``, ``MAX`` = collapse), measured in the same run, are
the baselines: their failure totals. ``--quick`` leaves out the seeded random chain-of-three search.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .._progress import Progress, resolve_progress
from ..errors import DataMissing
from ..merge import compare_t1, t1_experiment
from ._result import BenchResult, Target

__all__ = ["T1_FILE", "run"]

T1_FILE = "seed-bench/belief-merge/t1_results.json"


def _shared_data() -> Path | None:
    env = os.environ.get("CTXSDK_SHARED_DATA")
    roots = [Path(env)] if env else []
    roots.append(Path(__file__).resolve().parents[3] / "shared" / "data")
    for root in roots:
        if (root / T1_FILE).is_file():
            return root
    return None


def _row_name(row: dict[str, Any]) -> str:
    wf = "well_formed" if row["well_formed"] else "any"
    return f"confluence.{row['space']}.{row['score']}.{row['representation']}.{wf}"


def run(*, quick: bool = False, progress: Progress | None = None) -> BenchResult:
    root = _shared_data()
    if root is None:
        raise DataMissing(
            f"the merge benchmark needs the published T1 results ({T1_FILE}): set "
            "CTXSDK_SHARED_DATA to the shared data folder"
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
    return BenchResult(
        name="merge",
        metrics=metrics,
        baselines=baselines,
        published=published,
        targets=[
            Target.at_most("confluence.join_failures", 0),
            Target.at_least("confluence.join_checked_profiles", 1),
            # the lossy representations must really fail, or the check could not tell
            Target.at_least("confluence.lossy_min_rate", 1e-9),
            Target.at_most("confluence.mismatches", 0),
            Target.at_least("confluence.matches_published", 1.0),
        ],
        notes={
            "data": str(root / T1_FILE),
            "mismatches": mismatches[:50],
            "not_compared": skipped,
        },
    )
