"""``ctxsdk bench load``: opening a long v3 log and deriving its messages, against the floor.

The floor is what any reader must do: read the file, zstd-decompress it and JSON-parse every
line with the fastest parser installed. ctxsdk additionally validates every event, replays the
surface and builds typed messages. Both are timed in the same run, best of N, with the cyclic
GC off while timing (as ``timeit`` does); the GC-on time a user sees is reported too.
"""

from __future__ import annotations

import gc
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import zstandard

from ctxsdk.session import Session, read_log
from ctxsdk.session.kernel import replay_log

from .._progress import Progress, resolve_progress
from ..testing import LogBuilder
from ._result import BenchResult, Target, best_of

__all__ = ["make_log", "run"]

_TOOLS = ("bash", "read", "edit", "grep")
_WORDS = tuple(
    "the test fixture imports the parser module and checks that every token is consumed "
    "before the session closes so the retry path never sees a half written frame".split(" ")
)


def _text(rng: random.Random, lo: int, hi: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(lo, hi)))


def _output(rng: random.Random) -> str:
    lines = rng.randint(3, 120)
    return "\n".join(
        f"src/pkg/mod_{rng.randint(0, 40)}.py:{rng.randint(1, 900)}: {_text(rng, 3, 12)}"
        for _ in range(lines)
    )


def make_log(
    path: Path,
    n_events: int,
    *,
    replace_share: float = 0.05,
    seed: int = 7,
    compact_every: int | None = 1000,
    progress: Progress | None = None,
) -> Path:
    """A synthetic but realistic v3 ``.jsonl.zstd`` log of about ``n_events`` events, of
    which ``replace_share`` are replace ops (tool-result prunes and compactions)."""
    rng = random.Random(seed)
    b = LogBuilder(version=3, session_id=f"bench-{n_events}", cwd="/srv/work/project")
    usage = {"inputTokens": 12_000, "outputTokens": 300, "cacheReadTokens": 9_000}
    replaces = 0
    prunable: list[int] = []
    turn = 0
    report = resolve_progress(progress)
    while len(b.events) < n_events:
        report(len(b.events), n_events, f"generating a {n_events:,}-event log")
        turn += 1
        b.turn(_text(rng, 8, 40), system="You are a careful coding agent." if turn == 1 else None)
        for step in range(rng.randint(1, 5)):
            if step:
                b.next_step()
            calls = [
                (rng.choice(_TOOLS), {"command": _text(rng, 2, 6)})
                for _ in range(rng.randint(1, 3))
            ]
            b.assistant(
                text=_text(rng, 5, 60), reasoning=_text(rng, 10, 80), tool_calls=calls, usage=usage
            )
            ids = b.last_call_ids
            outputs = [_output(rng) for _ in ids]
            b.tool_results(outputs)
            prunable += [
                b.result_seq(c) for c, out in zip(ids, outputs, strict=True) if len(out) > 400
            ]
        b.next_step()
        # The pruner runs inside a turn, before a request (the harness refuses a tool/result
        # rewrite outside an open turn).
        while replaces < replace_share * len(b.events) and prunable:
            b.prune_tool_result(prunable.pop(rng.randrange(len(prunable))), 200, 80)
            replaces += 1
        b.assistant(text=_text(rng, 10, 80), usage=usage)
        b.end_turn()
        if compact_every and turn % compact_every == 0:  # rare: the surface stays long
            b.compact(keep_last=40, summary_text=_text(rng, 80, 200))
            replaces += 1
            prunable.clear()  # older results may be shadowed by the checkpoint now
    report(n_events, n_events, f"generating a {n_events:,}-event log")
    return b.write(path, batch_size=12, overwrite=True)


def _parsers() -> dict[str, Callable[[bytes], Any]]:
    import json

    out: dict[str, Callable[[bytes], Any]] = {"json": json.loads}
    try:
        import orjson

        out["orjson"] = orjson.loads
    except ImportError:  # pragma: no cover - orjson is a dependency
        pass
    try:
        import msgspec

        out["msgspec"] = msgspec.json.decode
    except ImportError:
        pass
    return out


def _floor(path: Path, loads: Callable[[bytes], Any]) -> Callable[[], object]:
    def run() -> object:
        data = path.read_bytes()
        text = zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True).read()
        return [loads(line) for line in text.split(b"\n") if line]

    return run


def _ours(path: Path) -> Callable[[], object]:
    def run() -> object:
        return Session.open(path).messages()

    return run


def _with_gc(fn: Callable[[], object]) -> float:
    gc.collect()
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def run(*, quick: bool = False, progress: Progress | None = None) -> BenchResult:
    n = 20_000 if quick else 100_000
    repeat = 3
    with tempfile.TemporaryDirectory(prefix="ctxsdk-bench-") as tmp:
        small = make_log(Path(tmp) / "n.jsonl.zstd", n, progress=progress)
        large = make_log(Path(tmp) / "2n.jsonl.zstd", 2 * n, seed=8, progress=progress)
        # The hardest case for messages(): no compaction at all, so every message is derived.
        flat = make_log(
            Path(tmp) / "flat.jsonl.zstd", n, seed=9, compact_every=None, progress=progress
        )
        floors = {name: best_of(_floor(small, f), repeat) for name, f in _parsers().items()}
        fastest = min(floors, key=lambda k: floors[k])
        floor = floors[fastest]
        ours = best_of(_ours(small), repeat)
        ours_gc = _with_gc(_ours(small))
        flat_ratio = best_of(_ours(flat), repeat) / best_of(
            _floor(flat, _parsers()[fastest]), repeat
        )
        flat_messages = len(Session.open(flat).messages())
        floor_gc = _with_gc(_floor(small, _parsers()[fastest]))

        decoded_small = read_log(small)
        decoded_large = read_log(large)
        replay_small = best_of(lambda: replay_log(decoded_small.events, 3), repeat)
        replay_large = best_of(lambda: replay_log(decoded_large.events, 3), repeat)
        s = Session.open(small)
        replaces = sum(1 for e in s.raw_events if isinstance(e.get("surfaceOp"), dict))
        notes = {
            "events": len(s),
            "events_2n": len(decoded_large.events),
            "replace_ops": replaces,
            "surface_nodes": len(s.surface()),
            "messages": len(s.messages()),
            "file_bytes": small.stat().st_size,
            "decompressed_bytes": len(
                zstandard.ZstdDecompressor()
                .stream_reader(small.read_bytes(), read_across_frames=True)
                .read()
            ),
            "floor_parser": fastest,
            "messages_without_compaction": flat_messages,
            "repeat": repeat,
        }
    metrics = {
        "load_over_floor_ratio": ours / floor,
        "replay_2n_over_n_ratio": replay_large / replay_small,
        "load_seconds": ours,
        "load_over_floor_ratio_gc_on": ours_gc / floor_gc,
        "load_over_floor_ratio_no_compaction": flat_ratio,
        "replay_seconds": replay_small,
    }
    baselines = {f"floor_seconds_{k}": v for k, v in floors.items()}
    targets = [
        Target.at_most("load_over_floor_ratio", 2.0),
        Target.at_most("replay_2n_over_n_ratio", 2.3),
    ]
    return BenchResult(
        name="load", metrics=metrics, baselines=baselines, targets=targets, notes=notes
    )
