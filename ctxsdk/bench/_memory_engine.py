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
- **writers**: items per second remembered by 1 and 4 processes (and 16 in a full run) at
  once on one file, what was lost, and the ratio of 4 to 1 (``WRITE_TARGETS``: at least
  1.5, nothing lost). Every trial writes the same number of items in all (one writer as
  many as the four together), so the ratio compares the same work. The processes start
  once and are reused; a trial's clock starts when its writers have opened the memory;
  the counts alternate, the median of each.
- **batch**: a 10k-message session ingested in one call (``long_session``: LoCoMo's
  utterances as a chat) against plain ``executemany`` of the rows it wrote into a fresh
  file of the same schema, and the store's batch path (``put_many`` / ``link_many``) on
  the same nodes, timed in turn (``memory_batch_10k_over_executemany_ratio``, target 3).
"""

from __future__ import annotations

import gc
import multiprocessing as mp
import os
import queue
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from ..memory import Edge, Memory, Node, SQLiteStore
from ..session import Embedder, Session
from ._result import Target

__all__ = [
    "BATCH_ITEMS",
    "WRITE_TARGETS",
    "batch_write",
    "long_session",
    "memory_recall_rows",
    "memory_scale",
    "writer_loop",
    "writer_text",
    "writer_throughput",
]

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


# --- writes: a long session in one call, and writer processes on one file ----------------------

BATCH_ITEMS = 10_000  # messages of the session ``memory_batch_*`` ingests in one call
_WAIT = 600.0  # seconds a trial's writers may take before the run gives up on them

WRITE_TARGETS: tuple[Target, ...] = (
    # ingest of a 10k-message session (one call) against plain executemany of the rows it
    # wrote, into a fresh file of the same schema, timed in turn in the same run
    Target.at_most("memory_batch_10k_over_executemany_ratio", 3.0),
    # the store's own batch path (put_many / link_many) on the same nodes and edges
    Target.at_most("memory_batch_10k_store_over_executemany_ratio", 3.0),
    # four processes remembering into one file at once write faster than one, and lose nothing
    Target.at_least("writers_4_over_1_throughput_ratio", 1.5),
    Target.at_most("writers_1_lost", 0.0),
    Target.at_most("writers_4_lost", 0.0),
)


def _chat_texts() -> list[str]:
    """What the long session says: LoCoMo's utterances in order (synthetic sentences when
    the corpus is absent)."""
    try:
        from ._fit import load_locomo

        data = load_locomo()
    except Exception:
        rng = random.Random(11)
        words = "deploy review test cache index writer lock batch file session note".split()
        return [" ".join(rng.choice(words) for _ in range(12)) for _ in range(2000)]
    out: list[str] = []
    for sample in data:
        conv = sample["conversation"]
        keys = sorted(
            (k for k in conv if k.startswith("session_") and isinstance(conv[k], list)),
            key=lambda k: int(k.split("_")[1]) if k.split("_")[1].isdigit() else 0,
        )
        out += [str(t["text"]) for k in keys for t in conv[k] if t.get("text")]
    return out


def long_session(messages: int = BATCH_ITEMS) -> Session:
    """A chat of ``messages`` messages, user and assistant in turn, as a user's long
    session is read (``Session.from_messages``): LoCoMo's utterances, said again (with a
    mark) when more are needed."""
    texts = _chat_texts()
    msgs = []
    for i in range(messages):
        text = texts[i % len(texts)]
        if i >= len(texts):
            text = f"{text} (again, {i // len(texts)})"
        msgs.append({"role": "user" if i % 2 == 0 else "assistant", "content": text})
    return Session.from_messages(msgs)


_COPIED = ("nodes", "edges", "meta")


def _raw_rows(path: Path) -> dict[str, tuple[list[str], list[tuple[Any, ...]]]]:
    """Every row of the tables a memory's write fills, as stored (the revision counter
    and the change stamps aside: the schema's triggers write those)."""
    out: dict[str, tuple[list[str], list[tuple[Any, ...]]]] = {}
    db = sqlite3.connect(path)
    try:
        for table in _COPIED:
            cols = [r[1] for r in db.execute(f"PRAGMA table_info({table})") if r[1] != "changed"]
            sql = f"SELECT {', '.join(cols)} FROM {table}"
            if table == "meta":
                sql += " WHERE key != '__revision__'"
            out[table] = (cols, list(db.execute(sql)))
    finally:
        db.close()
    return out


def _executemany(path: Path, rows: dict[str, tuple[list[str], list[tuple[Any, ...]]]]) -> float:
    """Seconds to write ``rows`` with plain ``executemany`` in one transaction into the
    fresh memory file ``path`` (its schema made before the clock), as the store's own
    connection is set (WAL, synchronous=NORMAL, foreign keys on)."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")
        t0 = time.perf_counter()
        db.execute("BEGIN IMMEDIATE")
        for table in _COPIED:
            cols, values = rows[table]
            marks = ", ".join("?" * len(cols))
            db.executemany(f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({marks})", values)
        db.execute("COMMIT")
        return time.perf_counter() - t0
    finally:
        db.close()


def _store_batch(path: Path, nodes: list[Node], edges: list[tuple[int, int, Edge]]) -> float:
    """Seconds for ``SQLiteStore``'s batch path (``put_many``, ``link_many``) to write the
    same nodes and edges in one batch into a fresh file (opened before the clock)."""
    with SQLiteStore(path) as store:
        t0 = time.perf_counter()
        with store.batch():
            ids = [n.id for n in store.put_many(nodes)]
            store.link_many([replace(e, src=ids[a], dst=ids[b]) for a, b, e in edges])
        return time.perf_counter() - t0


_WRITE_REPEATS = 3


def batch_write(messages: int = BATCH_ITEMS, rounds: int = 3) -> dict[str, float]:
    """``Memory.ingest`` of a ``messages``-message session (one call, as a user makes it;
    lexical: the writes, not a model) against plain ``executemany`` of the rows it wrote
    into a fresh file of the same schema, and against the store's batch path alone
    (``put_many`` / ``link_many`` of the same nodes and edges); the three timed in turn,
    ``rounds`` times (executemany and the batch path ``_WRITE_REPEATS`` times a round, in
    alternating order), best of each. Each round ingests a session built afresh (before the
    clock), as a user's ingest reads a session it has not read before: ingest keeps the facts
    of the last session it read, so a repeat of one object would skip reading them."""
    ingest: list[float] = []
    plain: list[float] = []
    batch: list[float] = []
    written = 0
    with tempfile.TemporaryDirectory(prefix="ctxsdk-bench-batch-") as tmp:
        root = Path(tmp)
        for r in range(rounds):
            path = root / f"ingest-{r}.db"
            session = long_session(messages)
            with Memory(path, embedder=None) as mem:
                gc.collect()
                t0 = time.perf_counter()
                mem.ingest(session)
                ingest.append(time.perf_counter() - t0)
                nodes = mem.nodes(include_archived=True)
                at = {n.id: i for i, n in enumerate(nodes)}
                edges = [
                    (at[e.src], at[e.dst], e)
                    for n in nodes
                    for e in mem.store.edges(src=n.id)
                    if e.dst in at
                ]
            written = len(nodes)
            rows = _raw_rows(path)
            fresh = [replace(n, id="") for n in nodes]  # the store draws new ids
            # the two cheap writes (a few tenths of a second each) are timed _WRITE_REPEATS
            # times a round, in alternating order: one sample each moved their ratio by half
            # on a busy machine
            for k in range(_WRITE_REPEATS):
                copy = root / f"plain-{r}-{k}.db"
                SQLiteStore(copy).close()  # the same schema, made before the clock
                for which in ("plain", "batch") if k % 2 == 0 else ("batch", "plain"):
                    gc.collect()
                    if which == "plain":
                        plain.append(_executemany(copy, rows))
                    else:
                        batch.append(_store_batch(root / f"batch-{r}-{k}.db", fresh, edges))
            for p in root.iterdir():
                p.unlink()
    best_ingest, best_plain, best_batch = min(ingest), min(plain), min(batch)
    return {
        "memory_batch_items": float(written),
        "memory_batch_10k_ingest_seconds": best_ingest,
        "memory_batch_10k_executemany_seconds": best_plain,
        "memory_batch_10k_store_batch_seconds": best_batch,
        "memory_batch_10k_items_per_second": written / max(best_ingest, 1e-9),
        "memory_batch_10k_over_executemany_ratio": best_ingest / max(best_plain, 1e-9),
        "memory_batch_10k_store_over_executemany_ratio": best_batch / max(best_plain, 1e-9),
    }


def writer_text(tag: str, i: int) -> str:
    return f"{tag} keeps rule {i} for the service."


def _task_seconds() -> tuple[float, float] | None:
    """The time every thread of this process has run on a CPU (``process_time``: the
    threads that ended too; a store's gate waiter runs in a thread of its own) and waited
    for one, runnable while other processes had the cores (``/proc/self/task/*/schedstat``,
    the scheduler's nanoseconds; None where it cannot be read)."""
    waited = 0
    try:
        for tid in os.listdir("/proc/self/task"):
            # suppress: a thread that ended meanwhile
            with (
                suppress(FileNotFoundError),
                open(f"/proc/self/task/{tid}/schedstat", encoding="ascii") as f,
            ):
                waited += int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return time.process_time(), waited / 1e9


def writer_loop(inbox: Any, outbox: Any) -> None:
    """A writer process: per task ``(open_memory, n, tag)``, open the memory (a picklable
    callable: a file's or a store's, lexical), say ready, wait for the start, then
    remember ``n`` items (a preference linked to the writer's entity, one call each) and
    report when the last was written, and any error. A task ``(open_memory, n, tag,
    True)`` also reports the CPU time every thread of the process ran and waited for a
    core from the start to the last write (read before the memory closes, while the
    threads it started still run): ``("done", tag, end, error, (ran, waited) or None)``."""
    while True:
        task = inbox.get()
        if task is None:
            return
        open_memory, n, tag = task[:3]
        with_cpu = len(task) > 3 and bool(task[3])
        mem: Memory | None = None
        error = ""
        try:
            mem = open_memory()  # lexical: the write lock's throughput, not a model's
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
        outbox.put(("ready", tag))
        inbox.get()  # the start
        before = _task_seconds() if with_cpu else None
        if mem is not None:
            try:
                for i in range(n):
                    mem.remember(writer_text(tag, i), link_to=f"Service{tag}")
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
        end = time.monotonic()  # CLOCK_MONOTONIC: one clock for every process here
        after = _task_seconds() if with_cpu else None
        if mem is not None:
            mem.close()
        if not with_cpu:
            outbox.put(("done", tag, end, error))
            continue
        cpu = None
        if before is not None and after is not None:
            cpu = (after[0] - before[0], after[1] - before[1])
        outbox.put(("done", tag, end, error, cpu))


def _shares(total: int, writers: int) -> list[int]:
    """``total`` items split among ``writers`` as evenly as they go."""
    return [total // writers + (i < total % writers) for i in range(writers)]


def writer_throughput(
    n: int = 100,
    *,
    procs: Sequence[int] | None = None,
    rounds: int = 3,
    batch_messages: int | None = BATCH_ITEMS,
) -> dict[str, float]:
    """Items per second remembered by 1, 4 (and 16 for a full run, ``n >= 100``) processes
    at once on one file, and what was lost. Every trial writes the same items in all,
    ``n`` times the largest count (``writers_items_per_trial``), split evenly among its
    writers: one writer writes as many as the four (or sixteen) together, so the trials
    compare the same work (a WAL checkpoint, a growing file and index) done by one process
    or by several. The processes are started once and reused, and a trial's clock starts
    when each of its writers has opened the memory (interpreter start-up is not counted);
    the trials alternate (1, 4, 16, 1, 4, ...) ``rounds`` times, the median of each.
    Diagnostics, per item remembered: ``writers_{n}_cpu_ms_per_item``, the CPU time every
    thread of the writers ran (their gate waiters too; on ``writers_cpus`` cores, ``n``
    writers make at most ``cpus / cpu`` items a second, whatever the lock does), and
    ``writers_{n}_cpu_wait_ms_per_item``, the time they were ready to run while other
    processes had the cores (what else the machine runs). With ``batch_messages``, also
    ``batch_write`` (a session of that many messages ingested in one call; once for a
    quick run, ``n < 100``, best of three for a full one)."""
    counts = tuple(procs) if procs is not None else ((1, 4) if n < 100 else (1, 4, 16))
    total = n * max(counts)
    out: dict[str, float] = {}
    if batch_messages:
        out.update(batch_write(batch_messages, rounds=1 if n < 100 else 3))
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["ctxsdk.memory"])
    outbox: Any = ctx.Queue()
    inboxes: list[Any] = [ctx.Queue() for _ in range(max(counts))]
    workers = [ctx.Process(target=writer_loop, args=(box, outbox), daemon=True) for box in inboxes]
    for w in workers:
        w.start()
    rates: dict[int, list[float]] = {c: [] for c in counts}
    cpu: dict[int, list[float]] = {c: [] for c in counts}
    cpu_wait: dict[int, list[float]] = {c: [] for c in counts}
    lost: dict[int, int] = dict.fromkeys(counts, 0)
    errors: list[str] = []

    def get() -> Any:
        try:
            return outbox.get(timeout=_WAIT)
        except queue.Empty:
            raise RuntimeError(f"writer processes gave no answer within {_WAIT:g}s") from None

    try:
        with tempfile.TemporaryDirectory(prefix="ctxsdk-bench-writers-") as tmp:
            for r in range(rounds):
                for c in counts:
                    path = str(Path(tmp) / f"w{c}-{r}.db")
                    Memory(path, embedder=None).close()  # made before the clock
                    shares = _shares(total, c)
                    for i in range(c):
                        task = (partial(Memory, path, embedder=None), shares[i], f"P{i}", True)
                        inboxes[i].put(task)
                    for _ in range(c):
                        get()
                    t0 = time.monotonic()
                    for i in range(c):
                        inboxes[i].put("go")
                    ends = []
                    ran = waited = 0.0
                    measured = True
                    for _ in range(c):
                        _, tag, end, error, used = get()
                        ends.append(end)
                        if error:
                            errors.append(f"{c} writers, {tag}: {error}")
                        if used is None:
                            measured = False
                        else:
                            ran, waited = ran + used[0], waited + used[1]
                    secs = max(ends) - t0
                    expected = {writer_text(f"P{i}", j) for i in range(c) for j in range(shares[i])}
                    with Memory(path, embedder=None) as mem:
                        found = expected & {x.text for x in mem.nodes("preference")}
                    rates[c].append(len(found) / max(secs, 1e-9))
                    if measured and found:
                        cpu[c].append(ran * 1000 / len(found))
                        cpu_wait[c].append(waited * 1000 / len(found))
                    lost[c] += len(expected) - len(found)
    finally:
        for box in inboxes:
            box.put(None)
        for w in workers:
            w.join(30)
            if w.is_alive():
                w.kill()
                w.join(5)
    out["writers_items_per_trial"] = float(total)
    for c in counts:
        out[f"writers_{c}_items_per_second"] = statistics.median(rates[c])
        out[f"writers_{c}_lost"] = float(lost[c])
        if len(cpu[c]) == len(rates[c]):
            out[f"writers_{c}_cpu_ms_per_item"] = statistics.median(cpu[c])
            out[f"writers_{c}_cpu_wait_ms_per_item"] = statistics.median(cpu_wait[c])
    out["writers_cpus"] = float(os.cpu_count() or 1)
    one = max(out["writers_1_items_per_second"], 1e-9) if 1 in counts else 0.0
    for c in counts:
        if c != 1 and one:
            ratio = out[f"writers_{c}_items_per_second"] / one
            out[f"writers_{c}_over_1_throughput_ratio"] = ratio
    if "writers_4_over_1_throughput_ratio" in out:  # the name earlier runs reported
        out["writers_4_over_1_throughput"] = out["writers_4_over_1_throughput_ratio"]
    out["writer_errors"] = float(len(errors))
    return out


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0
