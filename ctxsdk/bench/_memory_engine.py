"""The Memory engine in ``ctxsdk bench memory``: the same LoCoMo questions asked of a
``cx.Memory`` that ingested each conversation, its query latency as the memory grows, and
how fast several processes write one memory.

- **memory arm**: each conversation imported (``Session.from_locomo``) and ingested with
  verbatim observations (one per utterance); each question asked with ``Memory.find``
  (``memory_as_called``: ``Memory(path)`` and ``find(q)`` exactly as a user calls them, the
  headline; ``memory_lexical`` and ``memory_hybrid_<embedder>``: the top 10 asked for); every
  hit maps back to the dia_ids of its sources (an observation to its utterance, a preference
  or decision to the utterance it was read from), in rank order, so recall@k is LoCoMo's own
  definition over the same 1,982 QA as the turn arms.
- **latency**: p50 / p95 of ``find`` on memories of about 6k and 100k observation nodes
  (LoCoMo's utterances, then recombined into synthetic ones), and the ratio of the two.
- **writers**: items per second remembered by 1 and by 4 processes at once on one file, and
  the ratio (processes wait on SQLite's write lock: the point is that nothing is lost and
  the total does not collapse).
"""

from __future__ import annotations

import multiprocessing as mp
import random
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..memory import Memory
from ..session import Embedder, Session

__all__ = ["memory_recall_rows", "memory_scale", "writer_throughput"]

_DEPTH = 10


def _dia_ids(session: Session) -> dict[int, str]:
    """Event seq -> dia_id of each LoCoMo utterance."""
    out: dict[int, str] = {}
    for seq, raw in enumerate(session.raw_events):
        if raw.get("type") != "user/message":
            continue
        src = raw.get("data", {}).get("source") or {}
        dia = src.get("diaId")
        if isinstance(dia, str):
            out[seq] = dia
    return out


def memory_recall_rows(
    data: Sequence[Any],
    questions: Any,
    *,
    embedder: Embedder | None = None,
    as_called: bool = False,
    lexical: bool = False,
) -> tuple[list[tuple[int, list[str], list[str]]], dict[str, float]]:
    """``(category, evidence, retrieved dia_ids)`` per QA for the memory arm, and timings.
    ``questions(sample)`` gives ``(question, evidence ids, category)`` per QA to ask.

    ``as_called``: the memory exactly as a user makes and asks it, ``Memory(path)`` (a new
    file, default settings: the default embedder, ``auto`` or ``$CTXSDK_EMBEDDER``) and
    ``mem.find(q)`` (its default ``top_k``, 10 hits); otherwise an in-memory ``Memory(None,
    embedder=embedder)`` asked for the top 10. ``lexical`` (``--quick``): the as-called
    memory with ``embedder=None``, its settings otherwise the defaults.
    ``memory_ingest_seconds`` is ingest plus the first search (embeddings are computed and
    stored at ingest)."""
    rows: list[tuple[int, list[str], list[str]]] = []
    ingest_s = find_s = 0.0
    n_find = 0
    for i, sample in enumerate(data):
        session = Session.from_locomo(list(data), i)
        dia = _dia_ids(session)
        with tempfile.TemporaryDirectory(prefix="ctxsdk-bench-memory-") as tmp:
            path = Path(tmp) / "memory.db"
            if as_called:
                mem = Memory(path, embedder=None) if lexical else Memory(path)
            else:
                mem = Memory(None, embedder=embedder)
            with mem:
                t0 = time.perf_counter()
                mem.ingest(session, verbatim=True)
                mem.find("warm the index", top_k=1)
                ingest_s += time.perf_counter() - t0
                for q, ev, cat in questions(sample):
                    t0 = time.perf_counter()
                    hits = mem.find(q) if as_called else mem.find(q, top_k=_DEPTH)
                    find_s += time.perf_counter() - t0
                    n_find += 1
                    out: list[str] = []
                    for h in hits:
                        for s in h.node.sources:
                            d = dia.get(s.seq) if s.seq is not None else None
                            if d is not None and d not in out:
                                out.append(d)
                    rows.append((cat, ev, out[:_DEPTH]))
    return rows, {
        "memory_ingest_seconds": ingest_s,
        "memory_find_ms_mean": 1000 * find_s / max(n_find, 1),
    }


def _percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] if s else 0.0


def memory_scale(
    texts: Sequence[str], queries: Sequence[str], sizes: Sequence[int]
) -> dict[str, float]:
    """p50 / p95 ``find`` latency on memories of ``sizes`` observation nodes built from
    ``texts`` (recombined when more are needed), and the growth between the two ends."""
    rng = random.Random(5)
    vocab = [w for t in texts for w in t.split()]
    out: dict[str, float] = {}
    for size in sizes:
        docs = list(texts[:size])
        while len(docs) < size:
            docs.append(" ".join(rng.choice(vocab) for _ in range(rng.randint(8, 30))))
        with tempfile.TemporaryDirectory(prefix="ctxsdk-bench-memory-") as tmp:
            from ..memory import Node, Source

            # the index's latency, lexical: a model embedding 100k texts would time the model
            with Memory(Path(tmp) / "m.db", embedder=None) as mem:
                t0 = time.perf_counter()
                with mem.store.batch():
                    for i, text in enumerate(docs):
                        mem.store.put(
                            Node(
                                id="",
                                type="observation",
                                name=f"obs@{i}",
                                text=text,
                                sources=(Source("synthetic", i, "", "import"),),
                            )
                        )
                build = time.perf_counter() - t0
                mem.find("warm the index", top_k=1)
                lat = []
                for q in queries:
                    t0 = time.perf_counter()
                    mem.find(q, top_k=8)
                    lat.append(time.perf_counter() - t0)
        out[f"memory_find_ms_p50_{size}"] = 1000 * _percentile(lat, 0.5)
        out[f"memory_find_ms_p95_{size}"] = 1000 * _percentile(lat, 0.95)
        out[f"memory_build_seconds_{size}"] = build
    lo, hi = min(sizes), max(sizes)
    out["memory_find_p95_growth"] = out[f"memory_find_ms_p95_{hi}"] / max(
        out[f"memory_find_ms_p95_{lo}"], 1e-9
    )
    return out


def _writer(path: str, n: int, tag: str) -> None:
    with Memory(path, embedder=None) as mem:  # the write lock's throughput, not a model's
        for i in range(n):
            mem.remember(f"{tag} keeps rule {i} for the service.", link_to=f"Service{tag}")


def writer_throughput(n: int = 100) -> dict[str, float]:
    """Items per second remembered by one process, and by four at once on one file."""
    ctx = mp.get_context("spawn")
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="ctxsdk-bench-writers-") as tmp:
        for procs in (1, 4):
            path = str(Path(tmp) / f"w{procs}.db")
            Memory(path, embedder=None).close()
            workers = [ctx.Process(target=_writer, args=(path, n, f"P{i}")) for i in range(procs)]
            t0 = time.perf_counter()
            for w in workers:
                w.start()
            for w in workers:
                w.join(600)
            secs = time.perf_counter() - t0
            with Memory(path, embedder=None) as mem:
                kept = len(mem.nodes("preference"))
            out[f"writers_{procs}_items_per_second"] = kept / max(secs, 1e-9)
            out[f"writers_{procs}_lost"] = float(procs * n - kept)
    out["writers_4_over_1_throughput"] = out["writers_4_items_per_second"] / max(
        out["writers_1_items_per_second"], 1e-9
    )
    return out


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0
