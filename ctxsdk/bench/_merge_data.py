"""Where ``ctxsdk bench merge`` finds the seed's published data (``../shared/data``, or
``$CTXSDK_SHARED_DATA``), and the two files it reads there.

In a module of its own: the benchmark (``_merge``) and MergeBench's table of arms
(``_mergebench``, which adds the seed's published rows when they are present) both read it.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["MERGEBENCH_FILE", "T1_FILE"]

T1_FILE = "seed-bench/belief-merge/t1_results.json"
MERGEBENCH_FILE = "seed-bench/belief-merge/mergebench-vocabulary-and-published.json"


def _shared_data() -> Path | None:
    """The directory holding both files (``$CTXSDK_SHARED_DATA`` first), or None."""
    env = os.environ.get("CTXSDK_SHARED_DATA")
    roots = [Path(env)] if env else []
    roots.append(Path(__file__).resolve().parents[3] / "shared" / "data")
    for root in roots:
        if (root / T1_FILE).is_file() and (root / MERGEBENCH_FILE).is_file():
            return root
    return None
