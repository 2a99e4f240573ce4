"""``bench widgets`` end to end in headless chromium (quick): every figure with its baseline,
the mode-switch target on the CPU-time ratio with the wall ratio reported beside it, and the
notes saying it was a quick run. Timings are never asserted, only that they exist.

The bench runs as a user runs it, ``ctxsdk bench widgets --quick --json``, in a process of
its own: its browser is driven by Playwright's sync API, which refuses to start inside the
event loop another UI test's browser keeps running in this process."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path


def test_quick_run_reports_every_figure(chromium: str, tmp_path: Path) -> None:
    out = tmp_path / "widgets.json"
    proc = subprocess.run(
        [sys.executable, "-m", "ctxsdk", "bench", "widgets", "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.exists(), proc.stderr[-3000:]
    result = json.loads(out.read_text())
    for name in (
        "first_paint_10k_over_100_ratio",
        "mode_switch_per_row_10k_over_100_ratio",
        "mode_switch_per_row_10k_over_100_cpu_ratio",
        "mode_switch_cpu_seconds_10k",
        "mode_switch_over_noop_round_trip_ratio_10k",
    ):
        assert math.isfinite(result["metrics"][name]) and result["metrics"][name] > 0, name
    assert result["baselines"]["mode_switch_cpu_seconds_100"] > 0
    # each target as written: "metric op value"
    targets = {m: (op, float(v)) for m, op, v in (t.split() for t in result["targets"])}
    assert targets["mode_switch_per_row_10k_over_100_cpu_ratio"] == ("<=", 2.0)
    assert "mode_switch_per_row_10k_over_100_ratio" not in targets  # reported beside it
    assert targets["first_paint_10k_over_100_ratio"] == ("<=", 3.0)
    assert result["metrics"]["dom_rows_at_10k"] <= 120
    assert result["notes"]["quick"] is True and result["notes"]["switches"] == 3
    assert result["notes"]["rows_large"] > 50 * result["notes"]["rows_small"]
