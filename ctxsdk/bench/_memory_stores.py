"""``ctxsdk bench memory --store postgres``: the same Memory engine on its two stores,
``SQLiteStore`` (one file) and ``PostgresStore`` (a team's database), measured in one run:
what a team memory costs, and that it answers the same.

The server is a throwaway ``LocalPostgres`` started and stopped by the run, unless
``$CTXSDK_BENCH_PG_DSN`` names one: then a scratch database is made there (the role needs
CREATEDB) and dropped at the end. ``notes["postgres_server"]`` says which, never a password.
Every timing alternates the stores (SQLite, PostgreSQL, SQLite, PostgreSQL ...), so a noisy
shared machine slows both alike.

- **writers**: 1, 4 and 16 processes ``remember`` into one memory at once (the pattern of
  ``writer_throughput``: a preference linked to the writer's entity, one call per item).
  The processes are started once and reused; a trial's clock starts when every one of its
  writers has opened the memory and stops when the last has written its last item, so
  interpreter start-up is not counted. ``writers_{n}_items_per_second_{store}`` is the
  median over rounds; ``writers_{n}_lost_{store}`` (a target: 0) is the items written
  minus the items found after, over all rounds.
- **find**: p50 / p95 of ``find`` (lexical, top 8, as ``memory_scale``) on memories of
  about 6k and 100k observation nodes (20k with ``--quick``), each built with ``store.put``
  inside ``store.batch()`` (the fast way both stores offer), one chunk to each store in
  turn; the build time, the first ``find`` (SQLite's engine loads every node), the growth
  of p95 from the small to the large memory per store, and the share of the top 8 both
  stores return.
  The memories are lexical, so PostgreSQL's ``find`` ranks in the database (its own index,
  built whole by the first ``find``: ``memory_index_build_seconds_{size}_postgres``); the
  first ``find`` of a new ``Memory`` on the built memory (``memory_find_first_new_ms``) is
  what an agent process starting on it pays.
- **answers**: each LoCoMo conversation (two with ``--quick``) ingested into both stores
  with verbatim observations, the benchmark's questions asked of both (``find``, top 10):
  the mean overlap of the two top-10 sets (nodes compared by type, name and text, as their
  ids differ), the share answered identically in order, and recall@10 of each (the
  engine's LoCoMo recall over the same evidence); the same overlap on the memory of the
  real-session benchmark (``bench realworld``'s labelled sessions and questions; skipped
  with a note without its corpus). The embedder is the memory's default, lexical with
  ``--quick`` (as the headline of ``bench memory``). With an embedder PostgreSQL ranks in
  the engine, so the run also asks both stores opened lexically (``answers_*_lexical_*``:
  SQLite's engine against the database's own search); ``notes["answers_<arm>_search_mode"]``
  says where each store ranked.

Ratios are ``postgres_over_sqlite_<figure>_ratio``: PostgreSQL's figure divided by
SQLite's. For a time (``ms``, ``seconds``) above 1 is PostgreSQL that many times slower;
for a throughput (``items_per_second``) above 1 is PostgreSQL that many times faster.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import random
import statistics
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Literal

from .._progress import Progress, resolve_progress
from ..errors import CtxError, InvalidArgument, ServerError, StoreUnavailable
from ..memory import Memory, Node, PostgresStore, Source
from ..memory.kernel import default_embedder
from ..session import Embedder, Session
from ._memory_engine import _dia_ids, writer_loop, writer_text
from ._result import BenchResult, Target

__all__ = ["PG_DSN_ENV", "StoreSizes", "compare_stores"]

PG_DSN_ENV = "CTXSDK_BENCH_PG_DSN"
STORES: tuple[str, str] = ("sqlite", "postgres")
_RATIO = "postgres_over_sqlite_"
_CHUNK = 5_000  # nodes per batch while building a large memory
_WAIT = 600.0  # seconds a trial's writers may take before the run gives up on them

Store = Literal["sqlite", "postgres"]
Questions = Callable[[Any], Iterable[tuple[str, list[str], int]]]


@dataclass(frozen=True)
class StoreSizes:
    """How much the comparison does. ``for_run(quick)`` gives the benchmark's sizes;
    a test passes smaller ones."""

    writer_items: int = 100  # items each writer process remembers per trial
    writer_procs: tuple[int, ...] = (1, 4, 16)
    rounds: int = 3  # trials per store and process count, interleaved
    find_sizes: tuple[int, int] = (6_000, 100_000)
    queries: int = 100  # find queries timed per size
    conversations: int | None = None  # LoCoMo conversations asked (None: all)
    questions: int | None = None  # questions asked per conversation (None: all)
    realworld: bool = True  # also compare on bench realworld's memory
    realworld_quick: bool = False  # its --quick subset of sessions

    @classmethod
    def for_run(cls, quick: bool) -> StoreSizes:
        if quick:
            return cls(
                writer_items=30,
                rounds=2,
                find_sizes=(6_000, 20_000),
                conversations=2,
                realworld_quick=True,
            )
        return cls()


# --- the server and the two stores ----------------------------------------------------------


@dataclass(frozen=True)
class _Where:
    """Where one memory lives: a SQLite file, or a namespace of a PostgreSQL database.
    Plain data, so a writer process can open it."""

    store: Store
    location: str  # the file, or the database's DSN
    namespace: str = "default"

    def open(self, embedder: Embedder | str | None) -> Memory:
        if self.store == "sqlite":
            return Memory(Path(self.location), embedder=embedder)
        return Memory(PostgresStore(self.location, namespace=self.namespace), embedder=embedder)


def _public(dsn: str) -> str:
    """``postgresql://user@host:port/db`` of a DSN: never its password."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts = conninfo_to_dict(dsn)
    except Exception:  # psycopg.ProgrammingError: a DSN libpq cannot parse
        raise InvalidArgument(
            f"${PG_DSN_ENV} is not a PostgreSQL DSN libpq can read (a postgresql:// URL "
            "or key=value pairs)"
        ) from None
    user = f"{parts['user']}@" if parts.get("user") else ""
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"postgresql://{user}{parts.get('host') or 'localhost'}{port}/{parts.get('dbname', '')}"


@contextmanager
def _server() -> Iterator[tuple[str, str]]:
    """``(dsn of a fresh database, what to say about the server)``, cleaned up after: a
    scratch database on ``$CTXSDK_BENCH_PG_DSN``'s server, else a throwaway LocalPostgres."""
    named = os.environ.get(PG_DSN_ENV, "").strip()
    if not named:
        from ..testing import LocalPostgres

        server = LocalPostgres()
        server.start()
        try:
            dsn = server.create_database("ctxsdk_bench")
            yield dsn, "LocalPostgres: a throwaway server this run started and stopped (fsync off)"
        finally:
            server.stop()
        return
    import psycopg
    from psycopg import sql
    from psycopg.conninfo import make_conninfo

    where = _public(named)
    name = f"ctxsdk_bench_{uuid.uuid4().hex[:12]}"
    try:
        with psycopg.connect(named, autocommit=True, connect_timeout=30) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except psycopg.errors.InsufficientPrivilege:
        raise InvalidArgument(
            f"${PG_DSN_ENV} ({where}): this role may not create a database; the benchmark "
            "makes a scratch database there and drops it at the end: use a role with "
            f"CREATEDB, or unset {PG_DSN_ENV} to run a throwaway local server"
        ) from None
    except psycopg.OperationalError:
        raise StoreUnavailable(
            f"${PG_DSN_ENV} ({where}): no connection to the server (is it running, and may "
            "this role log in?)",
            path=where,
        ) from None
    try:
        yield make_conninfo(named, dbname=name), f"${PG_DSN_ENV}: {where} (scratch database)"
    finally:
        with psycopg.connect(named, autocommit=True, connect_timeout=30) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


def _percentile(values: Sequence[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] if s else 0.0


def _ratio(pg: float, lite: float) -> float:
    return pg / max(lite, 1e-9)


# --- writers ----------------------------------------------------------------------------------


class _Writers:
    """``count`` writer processes, started once and reused for every trial."""

    def __init__(self, count: int) -> None:
        # forked from a server that imported the memory and psycopg once: sixteen fresh
        # interpreters importing them would take longer than the writes they time
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["ctxsdk.memory", "psycopg", "psycopg_pool"])
        self._outbox: Any = ctx.Queue()
        self._inboxes: list[Any] = [ctx.Queue() for _ in range(count)]
        self._procs = [
            ctx.Process(target=writer_loop, args=(box, self._outbox), daemon=True)
            for box in self._inboxes
        ]
        for p in self._procs:
            p.start()

    def _get(self) -> Any:
        try:
            return self._outbox.get(timeout=_WAIT)
        except queue.Empty:
            dead = [p.pid for p in self._procs if not p.is_alive()]
            raise ServerError(
                f"bench memory: writer processes gave no answer within {_WAIT:g}s "
                f"(exited: {dead or 'none'})"
            ) from None

    def trial(self, where: _Where, procs: int, n: int) -> tuple[float, list[str]]:
        """Seconds from the start until ``procs`` writers wrote ``n`` items each, and
        their errors."""
        for i in range(procs):
            self._inboxes[i].put((partial(where.open, None), n, f"P{i}"))
        for _ in range(procs):
            self._get()
        t0 = time.monotonic()
        for i in range(procs):
            self._inboxes[i].put("go")
        ends: list[float] = []
        errors: list[str] = []
        for _ in range(procs):
            _, tag, end, error = self._get()
            ends.append(end)
            if error:
                errors.append(f"{tag}: {error}")
        return max(ends) - t0, errors

    def close(self) -> None:
        for box in self._inboxes:
            box.put(None)
        for p in self._procs:
            p.join(30)
            if p.is_alive():
                p.kill()
                p.join(5)


def _writers(
    sizes: StoreSizes, dsn: str, tmp: Path, step: Callable[[str], None]
) -> tuple[dict[str, float], dict[str, Any]]:
    out: dict[str, float] = {}
    errors: dict[str, list[str]] = {}
    n = sizes.writer_items
    pool = _Writers(max(sizes.writer_procs))
    try:
        for procs in sizes.writer_procs:
            rates: dict[str, list[float]] = {s: [] for s in STORES}
            lost: Counter[str] = Counter()
            for r in range(sizes.rounds):
                for store in STORES:
                    step(f"{procs} writer(s) on {store}, round {r + 1}")
                    where = (
                        _Where("sqlite", str(tmp / f"writers-{procs}-{r}.db"))
                        if store == "sqlite"
                        else _Where("postgres", dsn, f"writers-{procs}-{r}")
                    )
                    where.open(None).close()  # made before the clock, as writer_throughput
                    secs, errs = pool.trial(where, procs, n)
                    expected = {writer_text(f"P{i}", j) for i in range(procs) for j in range(n)}
                    with where.open(None) as mem:
                        found = expected & {x.text for x in mem.nodes("preference")}
                    rates[store].append(len(found) / max(secs, 1e-9))
                    lost[store] += len(expected) - len(found)
                    if errs:
                        errors[f"{store}_{procs}_round{r + 1}"] = errs[:3]
            for store in STORES:
                out[f"writers_{procs}_items_per_second_{store}"] = statistics.median(rates[store])
                out[f"writers_{procs}_lost_{store}"] = float(lost[store])
            out[f"{_RATIO}writers_{procs}_items_per_second_ratio"] = _ratio(
                out[f"writers_{procs}_items_per_second_postgres"],
                out[f"writers_{procs}_items_per_second_sqlite"],
            )
    finally:
        pool.close()
    return out, ({"writer_errors": errors} if errors else {})


# --- find latency as the memory grows ----------------------------------------------------------


def _documents(texts: Sequence[str], size: int) -> list[str]:
    """``size`` texts: the given ones, then recombinations of their words (as memory_scale)."""
    rng = random.Random(5)
    vocab = [w for t in texts for w in t.split()]
    docs = list(texts[:size])
    while len(docs) < size:
        docs.append(" ".join(rng.choice(vocab) for _ in range(rng.randint(8, 30))))
    return docs


def _build(mem: Memory, docs: Sequence[str], start: int) -> float:
    """Put one chunk of observation nodes in one batch; its seconds."""
    t0 = time.perf_counter()
    with mem.store.batch():
        for i, text in enumerate(docs, start):
            mem.store.put(
                Node(
                    id="",
                    type="observation",
                    name=f"obs@{i}",
                    text=text,
                    sources=(Source("synthetic", i, "", "import"),),
                )
            )
    return time.perf_counter() - t0


def _first_find(mem: Memory, query: str) -> tuple[float, float | None]:
    """The seconds of ``mem``'s first ``find``, and of them those that brought the database's
    index up to date (``None`` when the engine ranks): on a namespace never searched, the
    whole build of its index (``DatabaseSearch.catch_up``, timed inside that find)."""
    db = mem._db
    if db is None:
        t0 = time.perf_counter()
        mem.find(query, top_k=1)
        return time.perf_counter() - t0, None
    catch_up = db.catch_up
    spent = 0.0

    def timed() -> int:
        nonlocal spent
        t = time.perf_counter()
        rev = catch_up()
        spent += time.perf_counter() - t
        return rev

    db.catch_up = timed  # type: ignore[method-assign]  # this instance, this find only
    try:
        t0 = time.perf_counter()
        mem.find(query, top_k=1)
        return time.perf_counter() - t0, spent
    finally:
        del db.catch_up  # the class's again


def _find_scale(
    sizes: StoreSizes,
    texts: Sequence[str],
    queries: Sequence[str],
    dsn: str,
    tmp: Path,
    step: Callable[[str], None],
) -> dict[str, float]:
    out: dict[str, float] = {}
    asks = list(queries)[: sizes.queries]
    for size in sizes.find_sizes:
        docs = _documents(texts, size)
        wheres = {
            "sqlite": _Where("sqlite", str(tmp / f"find-{size}.db")),
            "postgres": _Where("postgres", dsn, f"find-{size}"),
        }
        mems = {store: where.open(None) for store, where in wheres.items()}
        # another writer of the same memory (another agent): what it writes, the timed
        # Memory reads at its next find through the store's changes
        others = {store: where.open(None) for store, where in wheres.items()}
        try:
            build = dict.fromkeys(STORES, 0.0)
            for start in range(0, size, _CHUNK):
                step(f"building {size:,}-node memories ({start:,} so far)")
                for store, mem in mems.items():
                    build[store] += _build(mem, docs[start : start + _CHUNK], start)
            step(f"timing find on {size:,}-node memories")
            lat: dict[str, list[float]] = {s: [] for s in STORES}
            tops: dict[str, list[list[str]]] = {s: [] for s in STORES}
            for store, mem in mems.items():
                # the first find: the engine reads every node and indexes it; PostgreSQL
                # (embedder None: the database ranks) builds the namespace's index whole
                secs, index = _first_find(mem, "warm the index")
                out[f"memory_find_first_ms_{size}_{store}"] = 1000 * secs
                if index is not None:
                    out[f"memory_index_build_seconds_{size}_{store}"] = index
            for q in asks:
                for store, mem in mems.items():
                    t0 = time.perf_counter()
                    hits = mem.find(q, top_k=8).hits
                    lat[store].append(time.perf_counter() - t0)
                    tops[store].append([h.node.name for h in hits])
            step(f"timing find after another writer's write on {size:,}-node memories")
            after: dict[str, list[float]] = {s: [] for s in STORES}
            for i, q in enumerate(asks[: max(1, len(asks) // 4)]):
                for store, mem in mems.items():
                    _build(others[store], [f"{q} written by another agent"], size + i)
                    t0 = time.perf_counter()
                    mem.find(q, top_k=8)
                    after[store].append(time.perf_counter() - t0)
            step(f"timing a new Memory's first find on {size:,}-node memories")
            first_new = asks[0] if asks else "warm the index"
            for store, where in wheres.items():
                # an agent process starting on the memory, built and searched already
                with where.open(None) as fresh:
                    t0 = time.perf_counter()
                    fresh.find(first_new, top_k=8)
                    out[f"memory_find_first_new_ms_{size}_{store}"] = 1000 * (
                        time.perf_counter() - t0
                    )
        finally:
            for mem in (*mems.values(), *others.values()):
                mem.close()
        for store in STORES:
            out[f"memory_find_ms_p50_{size}_{store}"] = 1000 * _percentile(lat[store], 0.5)
            out[f"memory_find_ms_p95_{size}_{store}"] = 1000 * _percentile(lat[store], 0.95)
            out[f"memory_find_after_write_ms_p50_{size}_{store}"] = 1000 * _percentile(
                after[store], 0.5
            )
            out[f"memory_find_after_write_ms_p95_{size}_{store}"] = 1000 * _percentile(
                after[store], 0.95
            )
            # what one write costs the next find: its p50 over an unchanged memory's find
            out[f"memory_find_after_write_over_find_{size}_{store}"] = _ratio(
                out[f"memory_find_after_write_ms_p50_{size}_{store}"],
                out[f"memory_find_ms_p50_{size}_{store}"],
            )
            out[f"memory_build_seconds_{size}_{store}"] = build[store]
        for figure in (
            "find_ms_p50",
            "find_ms_p95",
            "find_first_ms",
            "find_first_new_ms",
            "find_after_write_ms_p50",
            "find_after_write_ms_p95",
            "build_seconds",
        ):
            name = f"memory_{figure}_{size}"
            out[f"{_RATIO}{name}_ratio"] = _ratio(out[f"{name}_postgres"], out[f"{name}_sqlite"])
        out[f"memory_find_top8_overlap_{size}"] = _overlap(tops["sqlite"], tops["postgres"])
    lo, hi = sizes.find_sizes
    for store in STORES:
        for p in ("p50", "p95"):
            out[f"memory_find_{p}_growth_{store}"] = _ratio(
                out[f"memory_find_ms_{p}_{hi}_{store}"], out[f"memory_find_ms_{p}_{lo}_{store}"]
            )
    return out


# --- answers ----------------------------------------------------------------------------------


def _overlap(a: Sequence[Sequence[Any]], b: Sequence[Sequence[Any]]) -> float:
    """Mean over queries of the share of the top-k both gave (1.0 when both gave none)."""
    shares = [
        sum((Counter(x) & Counter(y)).values()) / max(len(x), len(y), 1)
        for x, y in zip(a, b, strict=True)
    ]
    return statistics.fmean(shares) if shares else 1.0


def _same_order(a: Sequence[Sequence[Any]], b: Sequence[Sequence[Any]]) -> float:
    return statistics.fmean(list(x) == list(y) for x, y in zip(a, b, strict=True)) if a else 1.0


def _key(node: Node) -> tuple[str, str, str]:
    """A node by what it holds: ids are made per store."""
    return (node.type, node.name, node.text)


def _ingest_both(
    mems: dict[str, Memory], sessions: Sequence[Session], timing: dict[str, float]
) -> None:
    for store, mem in mems.items():
        t0 = time.perf_counter()
        for s in sessions:
            mem.ingest(s, verbatim=True)
        mem.find("warm the index", top_k=1)  # embeddings are computed at ingest or here
        timing[store] += time.perf_counter() - t0


def _locomo_arm(
    samples: Sequence[Any],
    data: Sequence[Any],
    questions: Questions,
    sizes: StoreSizes,
    embedder: Embedder | str | None,
    arm: str,
    dsn: str,
    tmp: Path,
    step: Callable[[str], None],
) -> tuple[dict[str, float], dict[str, str], int]:
    """One comparison on LoCoMo: each conversation in both stores opened with ``embedder``,
    its questions asked of both. Figures named ``answers_{arm}_...``; also where each
    store's ``find`` ranked (``Memory.search_mode``) and the questions asked."""
    tops: dict[str, list[list[tuple[str, str, str]]]] = {s: [] for s in STORES}
    recall: dict[str, list[float]] = {s: [] for s in STORES}
    ingest = dict.fromkeys(STORES, 0.0)
    find_s = dict.fromkeys(STORES, 0.0)
    modes: dict[str, str] = {}
    tag = arm.replace("_", "-")
    for i, sample in enumerate(samples):
        step(f"LoCoMo conversation {i + 1} of {len(samples)} on both stores ({arm})")
        session = Session.from_locomo(list(data), i)
        dia = _dia_ids(session)
        mems = {
            "sqlite": _Where("sqlite", str(tmp / f"{tag}-{i}.db")).open(embedder),
            "postgres": _Where("postgres", dsn, f"{tag}-{i}").open(embedder),
        }
        try:
            modes.update({store: mem.search_mode for store, mem in mems.items()})
            _ingest_both(mems, [session], ingest)
            asked = list(questions(sample))[: sizes.questions]
            for q, ev, _cat in asked:
                for store, mem in mems.items():
                    t0 = time.perf_counter()
                    hits = mem.find(q, top_k=10).hits
                    find_s[store] += time.perf_counter() - t0
                    tops[store].append([_key(h.node) for h in hits])
                    got: list[str] = []
                    for h in hits:
                        for src in h.node.sources:
                            d = dia.get(src.seq) if src.seq is not None else None
                            if d is not None and d not in got:
                                got.append(d)
                    top = set(got[:10])
                    recall[store].append(sum(e in top for e in ev) / len(ev))
        finally:
            for mem in mems.values():
                mem.close()
    n = len(recall["sqlite"])
    name = f"answers_{arm}"
    out: dict[str, float] = {
        f"{name}_top10_overlap": _overlap(tops["sqlite"], tops["postgres"]),
        f"{name}_top10_same_order": _same_order(tops["sqlite"], tops["postgres"]),
    }
    for store in STORES:
        out[f"{name}_r10_{store}"] = statistics.fmean(recall[store]) if n else 0.0
        out[f"{name}_ingest_seconds_{store}"] = ingest[store]
        out[f"{name}_find_ms_mean_{store}"] = 1000 * find_s[store] / max(n, 1)
    out[f"{name}_r10_diff_points"] = 100 * abs(
        out[f"{name}_r10_postgres"] - out[f"{name}_r10_sqlite"]
    )
    for figure in ("ingest_seconds", "find_ms_mean"):
        out[f"{_RATIO}{name}_{figure}_ratio"] = _ratio(
            out[f"{name}_{figure}_postgres"], out[f"{name}_{figure}_sqlite"]
        )
    return out, modes, n


def _answers_locomo(
    sizes: StoreSizes,
    data: Sequence[Any],
    questions: Questions,
    embedder: Embedder | str | None,
    dsn: str,
    tmp: Path,
    step: Callable[[str], None],
) -> tuple[dict[str, float], dict[str, Any]]:
    """The run's embedder on both stores (``answers_locomo_...``); with an embedder also
    both lexical (``answers_locomo_lexical_...``): PostgreSQL then ranks in the database,
    which with an embedder it does not."""
    samples = list(data)[: sizes.conversations] if sizes.conversations else list(data)
    out, modes, n = _locomo_arm(samples, data, questions, sizes, embedder, "locomo", dsn, tmp, step)
    notes: dict[str, Any] = {
        "locomo_conversations": len(samples),
        "locomo_questions": n,
        "answers_locomo_search_mode": modes,
    }
    if embedder is not None:
        lex, modes, _ = _locomo_arm(
            samples, data, questions, sizes, None, "locomo_lexical", dsn, tmp, step
        )
        out.update(lex)
        notes["answers_locomo_lexical_search_mode"] = modes
    return out, notes


def _realworld_arm(
    sessions: Sequence[Session],
    facts: Sequence[Mapping[str, Any]],
    embedder: Embedder | str | None,
    arm: str,
    dsn: str,
    tmp: Path,
) -> tuple[dict[str, float], dict[str, str]]:
    """bench realworld's memory in both stores opened with ``embedder``, its questions
    asked of both: figures ``answers_{arm}_...`` and where each store's ``find`` ranked."""
    tag = arm.replace("_", "-")
    mems = {
        "sqlite": _Where("sqlite", str(tmp / f"{tag}.db")).open(embedder),
        "postgres": _Where("postgres", dsn, tag).open(embedder),
    }
    modes = {store: mem.search_mode for store, mem in mems.items()}
    ingest = dict.fromkeys(STORES, 0.0)
    tops: dict[str, list[list[tuple[str, str, str]]]] = {s: [] for s in STORES}
    try:
        # ingested with the defaults, as bench realworld does
        for store, mem in mems.items():
            t0 = time.perf_counter()
            for s in sessions:
                mem.ingest(s)
            mem.find("warm the index", top_k=1)
            ingest[store] += time.perf_counter() - t0
        for f in facts:
            for store, mem in mems.items():
                hits = mem.find(str(f["question"]), top_k=10).hits
                tops[store].append([_key(h.node) for h in hits])
    finally:
        for mem in mems.values():
            mem.close()
    name = f"answers_{arm}"
    out = {
        f"{name}_top10_overlap": _overlap(tops["sqlite"], tops["postgres"]),
        f"{name}_top10_same_order": _same_order(tops["sqlite"], tops["postgres"]),
    }
    for store in STORES:
        out[f"{name}_ingest_seconds_{store}"] = ingest[store]
    return out, modes


def _answers_realworld(
    sizes: StoreSizes,
    embedder: Embedder | str | None,
    dsn: str,
    tmp: Path,
    step: Callable[[str], None],
) -> tuple[dict[str, float], dict[str, Any]]:
    """As ``_answers_locomo`` on bench realworld's memory (``answers_realworld_...``, and
    ``answers_realworld_lexical_...`` with an embedder)."""
    from ._realworld import QUICK_SESSIONS, corpus_dir, labels, load_session

    root = corpus_dir()
    if not sizes.realworld:
        return {}, {"realworld": "not asked (sizes.realworld is False)"}
    if root is None:
        return {}, {"realworld": "skipped: the agent-sessions corpus is not here"}
    facts = [
        f for f in labels()["facts"] if not sizes.realworld_quick or f["session"] in QUICK_SESSIONS
    ]
    rels = sorted({f["session"] for f in facts})
    step(f"bench realworld's memory ({len(rels)} sessions) on both stores")
    sessions = [load_session(root, rel) for rel in rels]
    out, modes = _realworld_arm(sessions, facts, embedder, "realworld", dsn, tmp)
    notes: dict[str, Any] = {
        "realworld_sessions": len(rels),
        "realworld_questions": len(facts),
        "answers_realworld_search_mode": modes,
    }
    if embedder is not None:
        step(f"bench realworld's memory ({len(rels)} sessions) on both stores (lexical)")
        lex, modes = _realworld_arm(sessions, facts, None, "realworld_lexical", dsn, tmp)
        out.update(lex)
        notes["answers_realworld_lexical_search_mode"] = modes
    return out, notes


# --- the run ----------------------------------------------------------------------------------


def compare_stores(
    data: Sequence[Any],
    questions: Questions,
    texts: Sequence[str],
    queries: Sequence[str],
    *,
    quick: bool = False,
    progress: Progress | None = None,
    sizes: StoreSizes | None = None,
) -> BenchResult:
    """The store comparison of ``bench memory --store postgres`` (see the module docs):
    ``data`` the LoCoMo conversations, ``questions(sample)`` the ``(question, evidence ids,
    category)`` the benchmark asks, ``texts`` and ``queries`` what the find timing's
    memories are built from and asked."""
    sizes = sizes or StoreSizes.for_run(quick)
    if sizes.writer_items < 1 or sizes.rounds < 1 or not sizes.writer_procs:
        raise InvalidArgument(f"store sizes need writers, items and rounds: {sizes}")
    # the memory's default embedder (auto, or $CTXSDK_EMBEDDER), named so notes say which;
    # lexical with --quick, where a model embedding every conversation twice takes minutes
    chosen = None if quick else default_embedder()
    embedder = chosen.name if chosen is not None else None
    report = resolve_progress(progress)
    stages = 4
    done = 0

    def step(what: str) -> None:
        report(done, stages, f"stores: {what}")

    started = time.perf_counter()
    metrics: dict[str, float] = {}
    notes: dict[str, Any] = {"store": "postgres", "baseline_store": "sqlite"}
    with tempfile.TemporaryDirectory(prefix="ctxsdk-bench-stores-") as tmpdir, _server() as pg:
        tmp = Path(tmpdir)
        dsn, server = pg
        notes["postgres_server"] = server
        got, extra = _writers(sizes, dsn, tmp, step)
        metrics.update(got)
        notes.update(extra)
        done += 1
        metrics.update(_find_scale(sizes, texts, queries, dsn, tmp, step))
        done += 1
        got, extra = _answers_locomo(sizes, data, questions, embedder, dsn, tmp, step)
        metrics.update(got)
        notes.update(extra)
        done += 1
        try:
            got, extra = _answers_realworld(sizes, embedder, dsn, tmp, step)
        except CtxError as exc:  # a corpus file that will not import: said, not fatal
            got, extra = {}, {"realworld": f"skipped: {type(exc).__name__}: {exc}"[:300]}
        metrics.update(got)
        notes.update(extra)
        done += 1
        report(done, stages, "stores: done")
    hi = max(sizes.find_sizes)
    targets = [
        *(
            Target.at_most(f"writers_{procs}_lost_{store}", 0.0)
            for procs in sizes.writer_procs
            for store in STORES
        ),
        Target.at_least("answers_locomo_top10_overlap", 0.9),
        Target.at_most("answers_locomo_r10_diff_points", 1.0),
        *(Target.at_most(f"memory_find_ms_p95_{hi}_{store}", 1000.0) for store in STORES),
    ]
    if "answers_locomo_lexical_top10_overlap" in metrics:
        targets.append(Target.at_least("answers_locomo_lexical_top10_overlap", 0.9))
        targets.append(Target.at_most("answers_locomo_lexical_r10_diff_points", 1.0))
    for arm in ("realworld", "realworld_lexical"):
        if f"answers_{arm}_top10_overlap" in metrics:
            targets.append(Target.at_least(f"answers_{arm}_top10_overlap", 0.9))
    notes.update(
        {
            "ratios": (
                f"{_RATIO}<figure>_ratio = PostgreSQL's figure / SQLite's: for ms or seconds "
                "above 1 is PostgreSQL that many times slower, for items_per_second above 1 "
                "that many times faster"
            ),
            "interleaved": "every timing alternates SQLite and PostgreSQL",
            "writers": (
                f"{sizes.writer_items} items per process per trial, {sizes.rounds} rounds, "
                "median items/s; timed from the moment every writer has opened the memory "
                "(interpreter start-up not counted)"
            ),
            "find_sizes": list(sizes.find_sizes),
            "find": (
                "lexical, top 8; growth = p at the large size / p at the small one. Both "
                "memories are opened without an embedder, so PostgreSQL's find ranks in the "
                "database (search_mode 'database', its own lexical index) and SQLite's in the "
                "engine: memory_find_ms_*_postgres time the database's search"
            ),
            "find_first": (
                "memory_find_first_ms: the first find of the Memory that built the memory; "
                "on SQLite the engine reads every node and indexes it, on PostgreSQL the first "
                "find builds the namespace's index in the database whole (that build alone, "
                "timed inside it: memory_index_build_seconds_<size>_postgres). "
                "memory_find_first_new_ms: the first find of a new Memory opened on the "
                "memory already built and searched (an agent process starting up): the "
                "engine reads and indexes every node again, the database answers from its "
                "index"
            ),
            "answers_embedder": embedder or ("none (lexical, --quick)" if quick else "none"),
            "answers_lexical": (
                "answers_<corpus>_lexical_*: both stores opened without an embedder (SQLite "
                "ranks in the engine, PostgreSQL in the database), measured when the run's "
                "embedder is not none (with one, PostgreSQL ranks in the engine); without "
                "one answers_<corpus>_* are already that comparison. "
                "answers_<arm>_search_mode: where each store's find ranked"
            ),
            "durability": (
                "SQLite: WAL, synchronous=NORMAL; the throwaway LocalPostgres: fsync and "
                "synchronous_commit off (a real server syncs its commits and is slower to write)"
            ),
            "seconds": round(time.perf_counter() - started, 1),
        }
    )
    return BenchResult(name="memory", metrics=metrics, targets=targets, notes=notes)
