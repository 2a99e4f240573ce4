"""The merge's scale run: 2, 10 and 50 sessions of 500 messages each through the whole
deterministic pipeline (read, redact, extract, merge, derive, check, pack, render); the
time per message should stay flat as the number of sessions grows.

Sessions are generated (seeded): 250 turns each, a user line and an assistant answer per
turn. About one message in five asserts a keyed fact ("The <key> is <value>.", "We use
<value> for the <key>.", "<key>: <value>") over a shared pool of 120 keys, so sessions
agree, disagree and tie the way real ones do; the rest is chatter. Times are measured in
one run on this machine, best of two rounds that each merge every count in turn
(interleaved), so only their ratios are compared.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence

from ..merge import Merge
from ..session import Session
from ..testing import LogBuilder

__all__ = ["SCALE_SESSIONS", "scale_run", "scale_sessions"]

SCALE_SESSIONS = (2, 10, 50)
MESSAGES_PER_SESSION = 500

_KEYS = [
    f"{a} {b}"
    for a in (
        "api",
        "cache",
        "queue",
        "db",
        "auth",
        "build",
        "log",
        "ci",
        "search",
        "cdn",
        "worker",
        "backup",
    )
    for b in (
        "timeout",
        "limit",
        "region",
        "engine",
        "owner",
        "format",
        "port",
        "mode",
        "version",
        "target",
    )
]
_VALUES = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
_CHATTER = (
    "Let me look at that and come back with what I find.",
    "Thanks, that helps with the direction we are taking.",
    "I will run the checks again after the change.",
    "Good point, I had not considered that angle.",
    "Let me summarise where we are so far.",
)
_SHAPES = ("The {k} is {v}.", "We use {v} for the {k}.", "{k}: {v}")


def scale_sessions(n: int, *, seed: int = 7, messages: int = MESSAGES_PER_SESSION) -> list[Session]:
    """``n`` generated sessions of ``messages`` messages each (see the module docs)."""
    rng = random.Random(seed * 1000 + n)
    out: list[Session] = []
    for i in range(n):
        b = LogBuilder(session_id=f"scale-{n}-{i:03d}", runtime_context=None, cwd="/work/scale")
        for t in range(messages // 2):

            def line() -> str:
                if rng.random() < 0.2:
                    k, v = rng.choice(_KEYS), rng.choice(_VALUES)
                    return rng.choice(_SHAPES).format(k=k, v=v)
                return rng.choice(_CHATTER)

            b.turn(line(), title=f"scale session {i}" if t == 0 else None)
            b.assistant(text=line()).end_turn()
        out.append(Session.from_events(b.header, b.events))
    return out


def _merge_once(sessions: Sequence[Session], budget: int) -> tuple[float, int]:
    """Seconds for one whole merge (a new ``Merge``: nothing is cached), and its slot count."""
    start = time.perf_counter()
    result = Merge(sessions, tokenizer="estimate", budget=budget).run()
    return time.perf_counter() - start, len(result.slots)


def scale_run(counts: Sequence[int] = SCALE_SESSIONS, *, budget: int = 1200) -> dict[str, float]:
    """Per count: seconds, messages, seconds per message and slots, plus the ratio of the
    per-message time at the largest count to the smallest (1.0 = perfectly flat)."""
    metrics: dict[str, float] = {}
    per_message: dict[int, float] = {}
    built = {n: scale_sessions(n) for n in counts}
    best: dict[int, tuple[float, int]] = {}
    for _ in range(2):  # best of two, the counts interleaved: drift and load hit them alike
        for n in counts:
            got = _merge_once(built[n], budget)
            best[n] = min(best.get(n, got), got)
    for n in counts:
        sessions = built[n]
        total = sum(len(s.surface()) for s in sessions)
        secs, slots = best[n]
        per_message[n] = secs / max(total, 1)
        metrics[f"scale.{n}.seconds"] = secs
        metrics[f"scale.{n}.messages"] = float(total)
        metrics[f"scale.{n}.us_per_message"] = per_message[n] * 1e6
        metrics[f"scale.{n}.slots"] = float(slots)
    lo, hi = min(counts), max(counts)
    metrics["scale.per_message_ratio"] = per_message[hi] / max(per_message[lo], 1e-12)
    return metrics
