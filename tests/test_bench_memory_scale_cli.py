"""``ctxsdk bench memory --scale-sizes``: the sizes find is timed at against bm25s, asked on
the command line as a user asks them (its own process), and refused where they mean nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from ctxsdk._cli import main
from ctxsdk.bench import run_benchmark
from ctxsdk.bench._fit import _locomo_path
from ctxsdk.bench._memory import run
from ctxsdk.errors import InvalidArgument

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.slow  # a whole quick run in its own process: about a minute
@pytest.mark.skipif(_locomo_path() is None, reason="LoCoMo data is not available")
def test_the_sizes_asked_on_the_command_line_are_the_sizes_timed(tmp_path: Path) -> None:
    pytest.importorskip("bm25s")
    out = tmp_path / "memory.json"
    command = ["bench", "memory", "--quick", "--scale-sizes", "1500,3000", "--json", str(out)]
    proc = subprocess.run(
        [sys.executable, "-m", "ctxsdk", *command],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0 and out.exists(), proc.stderr[-3000:]
    assert "find timed at 1500,3000 nodes" in proc.stderr
    result = json.loads(out.read_text())
    metrics, baselines = result["metrics"], result["baselines"]
    for size in ("1500", "3k"):
        for p in ("p50", "p95"):
            assert metrics[f"memory_find_ms_{p}_{size}"] > 0
            assert baselines[f"bm25s_ms_{p}_{size}"] > 0
            assert metrics[f"memory_find_{p}_over_bm25s_{size}"] == pytest.approx(
                metrics[f"memory_find_ms_{p}_{size}"] / baselines[f"bm25s_ms_{p}_{size}"]
            )
    assert result["notes"]["scale"]["nodes_3k"] >= 3000
    assert metrics["memory_find_p95_growth_1500_to_3k"] == pytest.approx(
        metrics["memory_find_ms_p95_3k"] / metrics["memory_find_ms_p95_1500"]
    )
    # the default sizes (6k and 20k with --quick) are not timed when sizes are asked
    assert not any(k.endswith(("_6k", "_20k")) for k in (*metrics, *baselines))
    # the largest size asked is the one judged for its latency
    assert "memory_find_ms_p95_3k <= 1000" in result["targets"]


def test_sizes_are_positive_whole_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    for bad in ("0", "6000,-1", "6k", ","):
        with pytest.raises(SystemExit) as exc:
            main(["bench", "memory", "--scale-sizes", bad])
        assert exc.value.code == 2
        assert "sizes are positive whole numbers" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # --scale: the short spelling, the same check
        main(["bench", "memory", "--scale", "none"])


def test_sizes_are_refused_where_no_find_is_timed(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(InvalidArgument, match="bench load takes no scale_sizes= option"):
        run_benchmark("load", quick=True, scale_sizes=(1000,))
    assert main(["bench", "load", "--quick", "--scale", "1000"]) == 2
    assert "bench load takes no scale_sizes= option (--scale-sizes" in capsys.readouterr().err
    # the postgres run compares the stores, not find against bm25s: refused before it starts
    with pytest.raises(InvalidArgument, match="scale_sizes are positive node counts"):
        run(quick=True, store="postgres", scale_sizes=(1000,))
    with pytest.raises(InvalidArgument, match="scale_sizes are positive node counts"):
        run(quick=True, scale_sizes=())
    assert main(["bench", "memory", "--store", "postgres", "--scale", "1000"]) == 2
    assert "scale_sizes are positive node counts" in capsys.readouterr().err
