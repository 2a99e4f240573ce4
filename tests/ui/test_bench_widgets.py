"""``bench widgets`` end to end in headless chromium (quick): every figure with its baseline,
the mode-switch target on the CPU-time ratio with the wall ratio reported beside it, and the
notes saying it was a quick run. Timings are never asserted, only that they exist."""

from __future__ import annotations

import math

from ctxsdk.bench import _widgets as bw


def test_quick_run_reports_every_figure(chromium: str) -> None:
    result = bw.run(quick=True, progress=False)
    for name in (
        "first_paint_10k_over_100_ratio",
        "mode_switch_per_row_10k_over_100_ratio",
        "mode_switch_per_row_10k_over_100_cpu_ratio",
        "mode_switch_cpu_seconds_10k",
        "mode_switch_over_noop_round_trip_ratio_10k",
    ):
        assert math.isfinite(result.metrics[name]) and result.metrics[name] > 0, name
    assert result.baselines["mode_switch_cpu_seconds_100"] > 0
    targets = {t.metric: (t.op, t.value) for t in result.targets}
    assert targets["mode_switch_per_row_10k_over_100_cpu_ratio"] == ("<=", 2.0)
    assert "mode_switch_per_row_10k_over_100_ratio" not in targets  # reported beside it
    assert targets["first_paint_10k_over_100_ratio"] == ("<=", 3.0)
    assert result.metrics["dom_rows_at_10k"] <= 120
    assert result.notes["quick"] is True and result.notes["switches"] == 3
    assert result.notes["rows_large"] > 50 * result.notes["rows_small"]
