"""The load benchmark's synthetic log: valid, with the replace share it promises, and a log the
harness's own reader accepts (the benchmark measures a log the harness could have written)."""

from __future__ import annotations

from pathlib import Path

import ctxsdk as cx
from ctxsdk.bench._load import make_log


def test_the_synthetic_log_opens_and_holds_its_replace_ops(tmp_path: Path) -> None:
    path = make_log(tmp_path / "bench.jsonl.zstd", 3000, compact_every=5)
    s = cx.Session.open(path, strict=True)
    assert len(s) >= 3000
    replacements = len(s.index.replaced)
    assert replacements >= 0.04 * len(s)  # prunes and compactions, about 5% of the events
    assert s.index.compaction_seqs  # compactions happened
    prunes = [rep for rep in s.index.replaced if s.raw_events[rep]["type"] == "tool/result"]
    assert prunes
    for rep in prunes:  # the harness refuses a tool/result rewrite outside an open turn
        assert s.index.turn_of(rep) is not None, f"prune {rep} is outside a turn"
