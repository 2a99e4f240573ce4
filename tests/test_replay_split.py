"""A replay continued with ``replay_into`` (as an appended batch is read) learns what one
replay of the whole log learns: the same index, or the same first error (class, message,
seq), on valid logs and on logs whose events were damaged."""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import pytest

from ctxsdk.bench._load import make_log
from ctxsdk.session import read_log
from ctxsdk.session._replay import LogIndex, replay_into, replay_log

_DSH = Path(__file__).resolve().parents[2] / "shared" / "data" / "agent-sessions" / "dsh"
_JUNK: list[Any] = [None, 0, 1, -1, True, 1.5, "", "append", [], {}, [0], [[0, 1]], 2**60]


def _fingerprint(ix: LogIndex) -> tuple[Any, ...]:
    return (
        ix.surface.nodes(),
        ix.surface.generation,
        ix.shadowed_by,
        ix.replaced,
        [(t.turn, t.start_seq, t.end_seq, t.reason, t.steps) for t in ix.turns],
        ix.open_turn,
        ix.open_step,
        {k: (p.call_id, p.name, p.assistant_seq, p.call_seq) for k, p in ix.pending.items()},
        ix.title_seq,
        ix.header_seqs,
        ix.context_seqs,
        ix.end_seed_seqs,
        ix.descriptor_seq,
        ix.compaction_seqs,
        ix.unknown_seqs,
        ix.source_seqs,
        ix.invariant_issues,
    )


def _outcome(events: list[Any], version: int, strict: bool, split: int | None) -> tuple[Any, ...]:
    try:
        if split is None:
            index = replay_log(events, version, strict=strict)
        else:
            index = replay_log(events[:split], version, strict=strict)
            replay_into(index, events, split)
    except Exception as exc:  # the error itself is what is compared
        return ("error", type(exc).__name__, str(exc), getattr(exc, "seq", None))
    return ("ok", _fingerprint(index))


def _damage(events: list[Any], rng: random.Random) -> list[Any]:
    """One event removed, duplicated or moved (seqs renumbered), or a value inside one
    replaced or deleted."""
    out = copy.deepcopy(events)
    k = rng.randrange(len(out))
    kind = rng.randrange(4)
    if kind == 0:
        del out[k]
    elif kind == 1:
        out.insert(k, copy.deepcopy(out[k]))
    elif kind == 2 and k + 1 < len(out):
        out[k], out[k + 1] = out[k + 1], out[k]
    if kind < 3:
        for i, ev in enumerate(out):
            ev["seq"] = i
        return out
    paths: list[tuple[Any, ...]] = []

    def walk(value: Any, path: tuple[Any, ...]) -> None:
        paths.append(path)
        if isinstance(value, dict):
            for key, inner in value.items():
                walk(inner, (*path, key))
        elif isinstance(value, list):
            for i, inner in enumerate(value[:3]):
                walk(inner, (*path, i))

    walk(out[k], ())
    path = rng.choice(paths[1:])
    parent = out[k]
    for key in path[:-1]:
        parent = parent[key]
    if isinstance(parent, dict) and rng.random() < 0.3:
        del parent[path[-1]]
    else:
        parent[path[-1]] = rng.choice(_JUNK)
    return out


def _logs(tmp: Path) -> list[tuple[str, list[Any], int]]:
    paths = [make_log(tmp / "bench.jsonl.zstd", 400)]
    paths += sorted(_DSH.glob("*.session.jsonl"))[:8] if _DSH.is_dir() else []
    logs = [(p.name, read_log(p)) for p in paths]
    return [(name, log.events, log.version) for name, log in logs]


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, list[Any], int]]:
    return _logs(tmp_path_factory.mktemp("replay-split"))


def _agree(events: list[Any], version: int, label: str) -> int:
    errors = 0
    for strict in (True, False):
        whole = _outcome(events, version, strict, None)
        errors += whole[0] == "error"
        for split in {1, len(events) // 3, len(events) - 1}:
            if 0 < split < len(events):
                assert _outcome(events, version, strict, split) == whole, (label, strict, split)
    return errors


def test_a_split_replay_learns_what_one_replay_learns(
    logs: list[tuple[str, list[Any], int]],
) -> None:
    for name, events, version in logs:
        assert _agree(events, version, name) == 0  # the logs themselves are valid


def test_a_split_replay_names_the_same_first_error(
    logs: list[tuple[str, list[Any], int]],
) -> None:
    rng = random.Random(25)
    errors = 0
    for t in range(300):
        name, events, version = logs[t % len(logs)]
        errors += _agree(_damage(events, rng), version, f"{name} #{t}")
    assert errors > 100  # the damage is seen, not only read past
