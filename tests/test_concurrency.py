"""Concurrent appends from real processes lose nothing, for every format version (issue 9).

Each worker process opens the same log, appends one turn, and on ``LockHeld`` or a
``WriteError`` that says the log changed since it was read, opens it again and retries. At
the end the log must open cleanly and hold exactly the turns the workers were told were
written: none lost, none doubled, no torn or interleaved bytes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

import pytest

import ctxsdk as cx
from ctxsdk.testing import LogBuilder

WORKERS = 4
APPENDS = 25
REPO = Path(__file__).resolve().parents[1]

# One worker: wait for the start signal, then append APPENDS turns, each its own batch.
_WORKER = r"""
import errno, json, os, sys, time, uuid, warnings
import ctxsdk as cx
from ctxsdk.errors import LockHeld, LogRecoveryWarning, WriteError

path, wid, n, go = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
MODEL = {"kind": "model", "provider": "deepseek-official", "model": "deepseek-v4-flash"}

def turn_events(turn, text):
    user = {"content": [{"type": "text", "text": text}], "source": {"kind": "user"},
            "role": "user", "id": str(uuid.uuid4())}
    reply = {"role": "assistant", "content": [{"type": "text", "text": "ok " + text}],
             "source": MODEL, "id": str(uuid.uuid4())}
    return [
        {"type": "turn/start", "data": {"turn": turn}},
        {"type": "step/start", "data": {"turn": turn, "step": 1}},
        {"type": "user/message", "data": user, "surfaceOp": "append"},
        {"type": "assistant/message",
         "data": {"turn": turn, "step": 1, "message": reply, "stream": []},
         "surfaceOp": "append"},
        {"type": "step/end", "data": {"turn": turn, "step": 1}},
        {"type": "turn/end", "data": {"turn": turn, "reason": {"kind": "completed"}}},
    ]

open(go + f".ready{wid}", "w").close()
while not os.path.exists(go):
    time.sleep(0.005)
out = {"attempts": 0, "ok": [], "retries": 0, "stale": 0, "busy": 0, "torn_reads": 0, "mid_write": 0}
for i in range(n):
    text = f"w{wid}-{i}"
    while True:
        out["attempts"] += 1
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always", LogRecoveryWarning)
            s = cx.Session.open(path)
        out["torn_reads"] += sum(issubclass(w.category, LogRecoveryWarning) for w in seen)
        if s.is_interrupted or s.recovery is not None:
            # Read while another writer's batch was landing: a live log, not one to append to.
            out["mid_write"] += 1
            out["retries"] += 1
            time.sleep(0.002)
            continue
        edited = s.append(turn_events(len(s.turns()) + 1, text))
        try:
            edited.append_to_log()
        except LockHeld:
            out["busy"] += 1
        except WriteError as exc:
            if exc.errno != errno.ESTALE:
                raise
            out["stale"] += 1
        else:
            out["ok"].append(text)
            break
        out["retries"] += 1
print(json.dumps(out))
"""


def _base_log(tmp_path: Path, version: int, compression: str) -> Path:
    b = LogBuilder(version=version)
    b.turn("start here").assistant("ready").end_turn()
    name = f"session.v{version}.jsonl" + (".zstd" if compression == "zstd" else "")
    return b.write(tmp_path / "s" / name, compression, overwrite=True)  # type: ignore[arg-type]


def _run_workers(path: Path, tmp_path: Path) -> list[dict[str, object]]:
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(path), str(w), str(APPENDS), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=tmp_path,
        )
        for w in range(WORKERS)
    ]
    try:
        # Start them together, once all are imported, so the appends really overlap.
        ready = [tmp_path / f"go.ready{w}" for w in range(WORKERS)]
        while not all(r.exists() for r in ready):
            if any(p.poll() is not None for p in procs):
                break
            time.sleep(0.01)
        go.touch()
        results = []
        for p in procs:
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0, err.decode()
            results.append(json.loads(out))
        return results
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


@pytest.mark.parametrize(
    ("version", "compression"), [(2, "zstd"), (3, "zstd"), (2, "none")], ids=str
)
def test_concurrent_appends_lose_nothing(tmp_path: Path, version: int, compression: str) -> None:
    path = _base_log(tmp_path, version, compression)
    base = cx.Session.open(path)
    results = _run_workers(path, tmp_path)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a torn tail would warn: the log must be whole
        final = cx.Session.open(path).validate()
    assert final.recovery is None and not final.is_interrupted
    prompts = [
        final.message_at(seq).text
        for seq in final.message_seqs()
        if final.message_at(seq).source.kind == "user" and seq >= len(base)
    ]
    reported = [text for r in results for text in r["ok"]]  # type: ignore[attr-defined]
    found = Counter(prompts)
    assert sum(found.values()) == len(prompts) == len(set(prompts))  # none doubled
    assert found == Counter(reported)  # every reported success is there, nothing else
    assert len(reported) == WORKERS * APPENDS
    turns = [t.turn for t in final.turns()]
    assert turns == list(range(1, WORKERS * APPENDS + 2))  # one turn per append, in order
    assert len(final) == len(base) + 6 * WORKERS * APPENDS

    counts = {
        k: sum(int(r[k]) for r in results)  # type: ignore[call-overload]
        for k in ("attempts", "retries", "stale", "busy", "torn_reads", "mid_write")
    }
    counts["successes"] = len(reported)
    counts["events_found"] = len(prompts)
    counts["lost"] = len(reported) - len(prompts)
    assert counts["attempts"] == counts["successes"] + counts["retries"]
    print(f"v{version} {compression}: {counts}")
