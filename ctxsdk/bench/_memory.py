"""``ctxsdk bench memory``: evidence recall@k of the base's Retriever over LoCoMo turns, and
of the Memory engine itself (``_memory_engine``: each conversation ingested into a
``cx.Memory`` with verbatim observations and asked with ``Memory.find``; concurrent writer
processes), and ``find``'s latency as a memory built by ``ingest`` grows, against ``bm25s``
over the same texts in the same run (``_memory_scale``: 6k and 100k nodes, 6k and 20k with
``--quick``, 1M when asked with ``scale_sizes``).

Every turn of a conversation is one document: ``speaker: text`` plus the turn's BLIP image
caption when it has one (``blip_caption``; the image itself and its search ``query`` are not
indexed), grouped by conversation and ordered by position so neighbour smoothing sees the
dialog's order across sessions. Each question is a query; the top-k turns map to their
``dia_id`` and recall@k is the share of the question's evidence ids retrieved (LoCoMo's own
definition, ``benchmarks-and-data.md`` §1.1). Evidence is normalised as the spec's reference
script does ('D8:6; D9:17' splits, 'D:11:26' and 'D30:05' are repaired), leaving 1,982 QA.

The headline (``r5_all``, ``r10_all``, ``r{k}_cat{c}``, judged by the targets) is the memory
as a user calls it: ``Memory(path)`` with default settings, each conversation ingested with
verbatim observations, and ``mem.find(q)`` (``_memory_engine``, arm ``memory_as_called``):
its default embedder (``auto``: e5-small when the ``embed`` extra is installed, named in
``notes["headline_embedder"]``; lexical with ``--quick``, where a model would take minutes)
and its default 10 hits; the best arm over turns is reported beside it (``best_arm_r5_all``).

Reported per category id (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
5 adversarial), as the per-question mean over all QA and over ids 1-4, and pooled (evidence
ids found / evidence ids). Baselines run in the same pass: plain BM25 over turns (the spec's
reference: its stop list, no stemming; 52.4 R@5 over all) and the tuned BM25 of ``bench fit``
(Porter stemming, neighbour smoothing). Our arms: lexical (the Retriever's defaults),
lexical_bm25 (its BM25 and neighbours alone), dense per installed embedder (one with
``--quick``: minilm when installed),
hybrid per fusion, and ``fit``'s own ranker (the base's BM25 plus coordination, feedback
words, answer kinds and neighbours) for what a switch of ``fit`` would gain or lose.
A reference arm, never counted as ours (``reference_model_facts_<embedder>``): the same
hybrid index with the conversation's model-written facts added (LoCoMo's generated
``observation``s, gpt-3.5 sentences each citing its turns; a fact's hit counts as the turns
it cites), for what facts a model writes would add over turns.
Latency: p50/p95 per query of the hybrid against BM25 alone, at LoCoMo's size (end to end,
embedding the query, and the index alone) and on a synthetic 100k-document index (20k with
``--quick``; a hashed stand-in embedder, so it times the index, not a model), as ratios and
raw. Embedders' speed: documents per second, and the query embedding's median ms.

``--store postgres`` (``store="postgres"``) measures the engine on both stores instead,
SQLite and a PostgreSQL server, in one interleaved run: writers, ``find`` latency as the
memory grows, and whether both answer the same (``_memory_stores``).
"""

from __future__ import annotations

import random
import re
import statistics
import time
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ctxsdk.assemble.kernel import Ranker
from ctxsdk.memory.kernel import default_embedder
from ctxsdk.session import Embedder, Retriever, available_embedders, get_embedder
from ctxsdk.session.kernel import Doc

from .._progress import Progress, resolve_progress
from ..errors import InvalidArgument
from ._bm25 import _SMOOTH, _Index
from ._fit import load_locomo
from ._memory_engine import WRITE_TARGETS, memory_recall_rows, writer_throughput
from ._memory_scale import FIRST_TARGET, SIZES_FULL, SIZES_QUICK, label, memory_scale
from ._memory_stores import StoreSizes, compare_stores
from ._result import BenchResult, Target

__all__ = ["run"]

KS = (5, 10)
CATEGORIES = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop", 5: "adversarial"}
_PLAIN_STOP = frozenset(
    "a an the and or of to in on for is are was were be been it that this with as at by from i "
    "you he she they we my your his her their our me him them do did does what when where who "
    "why how which".split()
)
_TOKEN = re.compile(r"[a-z0-9]+")
_EVIDENCE = re.compile(r"D:?(\d+):0*(\d+)$")
_DEPTH = 10  # ranks kept per query (the largest k)
_REFERENCE = "reference_model_facts_"  # arms measured for comparison, never "ours"
_SECTION = Retriever().section_boost  # the default, restored after each ablation query
_AS_CALLED = "memory_as_called"  # Memory(path).find(q): the headline arm


def plain_words(text: str) -> list[str]:
    """The spec's reference tokenizer: lowercase words minus a short stop list, no stemming."""
    return [w for w in _TOKEN.findall(text.lower()) if w not in _PLAIN_STOP]


def evidence_ids(qa: dict[str, Any]) -> list[str]:
    """A QA's evidence dia_ids, normalised as the spec's reference script does."""
    out = []
    for item in qa.get("evidence") or []:
        for part in re.split(r"[;\s]+", str(item).strip()):
            m = _EVIDENCE.match(part)
            if m:
                out.append(f"D{m.group(1)}:{m.group(2)}")
    return out


def turns(sample: dict[str, Any]) -> list[tuple[str, str]]:
    """(dia_id, indexed text) for every turn, in session then turn order."""
    conv = sample["conversation"]
    keys = sorted(
        (k for k in conv if re.fullmatch(r"session_\d+", k) and isinstance(conv[k], list)),
        key=lambda k: int(k.split("_")[1]),
    )
    out = []
    for key in keys:
        for t in conv[key]:
            text = f"{t['speaker']}: {t['text']}"
            if t.get("blip_caption"):
                text += f" {t['blip_caption']}"
            out.append((str(t["dia_id"]), text))
    return out


def model_facts(sample: dict[str, Any], ids: set[str]) -> list[tuple[str, str, list[str]]]:
    """(doc id, ``speaker: fact``, cited dia_ids) for each of the conversation's generated
    observations: facts a model (gpt-3.5) wrote per session, each citing the turns it came
    from. A fact whose citations resolve to no turn is left out."""
    out = []
    for key, by_speaker in (sample.get("observation") or {}).items():
        for speaker, facts in by_speaker.items():
            for j, (fact, cites) in enumerate(facts):
                listed = cites if isinstance(cites, list) else [cites]
                cited = [d for d in evidence_ids({"evidence": listed}) if d in ids]
                if cited:
                    out.append((f"{key}:{speaker}:{j}", f"{speaker}: {fact}", cited))
    return out


class _Tuned:
    """``bench fit``'s independent baseline as a ranker: Porter BM25, then each score
    raised by 0.3 of its two neighbours'."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.index = _Index(texts)

    def search(self, query: str, k: int) -> list[int]:
        raw = self.index.scores(query)
        n = len(raw)
        smooth = [
            s + _SMOOTH * ((raw[i - 1] if i else 0.0) + (raw[i + 1] if i + 1 < n else 0.0))
            for i, s in enumerate(raw)
        ]
        return sorted(range(n), key=lambda i: (-smooth[i], i))[:k]


def _with_facts(
    r: Retriever,
    sample: dict[str, Any],
    ids: list[str],
    qas: list[dict[str, Any]],
    got: dict[str, list[tuple[int, list[str], list[str]]]],
    arm: str,
) -> None:
    """Index the conversation's model-written facts into ``r`` (after its own arms ran) and
    ask every question again: hits map to dia_ids in rank order, a fact to the turns it cites."""
    cites: dict[str, list[str]] = {}
    for n, (doc_id, text, cited) in enumerate(model_facts(sample, set(ids))):
        cites[doc_id] = cited
        r.add(doc_id, text, group=1, order=float(n), section=cited[0].split(":")[0])
    r.fusion = "weighted"
    for qa in qas:
        out: list[str] = []
        for h in r.search(str(qa["question"]), 3 * _DEPTH, mode="hybrid"):
            out += [d for d in cites.get(h.doc_id, [h.doc_id]) if d not in out]
        got[arm].append((int(qa.get("category", 0)), evidence_ids(qa), out[:_DEPTH]))


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class HashEmbedder:
    """A deterministic stand-in embedder (hashed bag of words): the synthetic index's
    vectors, so the 100k latency measures the index, not a model's throughput."""

    def __init__(self, dim: int = 384) -> None:
        self._dim = dim

    @property
    def name(self) -> str:
        return "hash"

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: list[str]) -> list[list[float]]:
        out = []
        for t in texts:
            v = [0.0] * self._dim
            for w in plain_words(t):
                h = zlib.crc32(w.encode())
                v[h % self._dim] += 1.0 if (h >> 20) & 1 else -1.0
            out.append(v)
        return out


def locomo_questions(sample: dict[str, Any]) -> Iterator[tuple[str, list[str], int]]:
    """``(question, evidence ids, category)`` of each QA of a conversation that has evidence:
    the questions every arm asks."""
    for qa in sample["qa"]:
        ev = evidence_ids(qa)
        if ev:
            yield str(qa["question"]), ev, int(qa.get("category", 0))


def _scale_texts(data: list[Any]) -> tuple[list[str], list[str]]:
    """The texts the find timing's memories are built from, and the queries asked of them."""
    pool = [t for sm in data for _, t in turns(sm)]
    asks = [str(qa["question"]) for sm in data for qa in sm["qa"]][::20][:100]
    return pool, asks


def run(
    *,
    quick: bool = False,
    progress: Progress | None = None,
    embedders: Sequence[str | Embedder] | None = None,
    store: str = "sqlite",
    store_sizes: StoreSizes | None = None,
    scale_sizes: Sequence[int] | None = None,
) -> BenchResult:
    """Run the benchmark; ``embedders`` defaults to every installed local embedder.
    ``store="postgres"``: the engine on both stores instead (``_memory_stores``; its sizes
    from ``quick`` unless ``store_sizes`` gives them). ``scale_sizes``: the memory sizes
    ``find`` is timed at against ``bm25s`` (``_memory_scale``; default 6k and 100k, 6k
    and 20k with ``quick``; 1M only when asked: ``(6_000, 100_000, 1_000_000)``)."""
    if store not in ("sqlite", "postgres"):
        raise InvalidArgument(f"bench memory: store is sqlite or postgres, not {store!r}")
    if scale_sizes is not None and (store == "postgres" or not scale_sizes or min(scale_sizes) < 1):
        raise InvalidArgument(
            "bench memory: scale_sizes are positive node counts of the sqlite run "
            f"(store='sqlite'), not {tuple(scale_sizes)!r} with store={store!r}"
        )
    if store == "postgres":
        data = load_locomo()
        pool, asks = _scale_texts(data)
        return compare_stores(
            data,
            locomo_questions,
            pool,
            asks,
            quick=quick,
            progress=progress,
            sizes=store_sizes,
        )
    if store_sizes is not None:
        raise InvalidArgument("bench memory: store_sizes belongs to store='postgres'")
    data = load_locomo()
    samples = data[:2] if quick else data
    chosen = available_embedders() if embedders is None else list(embedders)
    if quick and embedders is None and chosen:
        # --quick: the dense arms with one installed embedder (minilm when there: the
        # one the memory's hybrid arm and the reference arm prefer), not every one
        chosen = [min(chosen, key=lambda name: name != "minilm")]
    embs: list[Embedder] = [get_embedder(e) if isinstance(e, str) else e for e in chosen]
    report = resolve_progress(progress)
    started = time.perf_counter()
    # where the run's time goes: wall and this process's CPU seconds per stage
    stages: dict[str, tuple[float, float]] = {}
    mark = [time.perf_counter(), time.process_time()]

    def stage(name: str) -> None:
        now = (time.perf_counter(), time.process_time())
        stages[name] = (round(now[0] - mark[0], 1), round(now[1] - mark[1], 1))
        mark[:] = now

    # arm -> list of (category, evidence ids, retrieved ids top-_DEPTH)
    got: dict[str, list[tuple[int, list[str], list[str]]]] = defaultdict(list)
    embed_seconds: dict[str, float] = defaultdict(float)
    embedded_docs: Counter[str] = Counter()
    query_seconds: dict[str, list[float]] = defaultdict(list)
    lat: dict[str, list[float]] = defaultdict(list)  # LoCoMo-size latency per query
    total_qas = sum(1 for s in samples for qa in s["qa"] if evidence_ids(qa))
    done = 0
    for ci, sample in enumerate(samples):
        docs = turns(sample)
        ids = [d for d, _ in docs]
        texts = [t for _, t in docs]
        # One neighbour chain over the whole conversation; a section per LoCoMo session.
        rows = [
            Doc(d, t, group=0, order=float(i), section=d.split(":")[0])
            for i, (d, t) in enumerate(docs)
        ]
        qas = [qa for qa in sample["qa"] if evidence_ids(qa)]
        bare: dict[str, Any] = {
            "coordination": 0.0,
            "feedback": 0,
            "answer_boost": 0.0,
            "section_boost": 0.0,
        }
        plain = Retriever(rows, tokenizer=plain_words, neighbour=0.0, **bare)
        smoothed = Retriever(rows, neighbour=0.3, smoothing="sum", **bare)
        ours = Retriever(rows)
        tuned = _Tuned(texts)
        ranker = Ranker(texts)
        dense: dict[str, Retriever] = {}
        for e in embs:
            report(done, total_qas, f"embedding conversation {ci + 1} with {e.name}")
            r = Retriever(rows, embedder=e)
            t0 = time.perf_counter()
            r.flush()
            embed_seconds[e.name] += time.perf_counter() - t0
            embedded_docs[e.name] += len(rows)
            dense[e.name] = r
        for qa in qas:
            done += 1
            report(done, total_qas, "querying LoCoMo")
            q = str(qa["question"])
            ev = evidence_ids(qa)
            cat = int(qa.get("category", 0))

            def keep(arm: str, retrieved: list[str], ev: list[str] = ev, cat: int = cat) -> None:
                got[arm].append((cat, ev, retrieved))

            t0 = time.perf_counter()
            keep("bm25_plain", [h.doc_id for h in plain.search(q, _DEPTH)])
            lat["bm25"].append(time.perf_counter() - t0)
            keep("bm25_tuned", [ids[i] for i in tuned.search(q, _DEPTH)])
            keep("lexical", [h.doc_id for h in ours.search(q, _DEPTH, mode="lexical")])
            ours.section_boost = 0.0  # the ablation: the same ranking without sections
            keep("lexical_nosection", [h.doc_id for h in ours.search(q, _DEPTH)])
            ours.section_boost = _SECTION
            keep("lexical_bm25", [h.doc_id for h in smoothed.search(q, _DEPTH)])
            fit_scores = ranker.scores(q)
            best_fit = sorted(range(len(ids)), key=lambda i: (-fit_scores[i], i))[:_DEPTH]
            keep("fit_ranker", [ids[i] for i in best_fit if fit_scores[i] > 0])
            for name, r in dense.items():
                # The hybrid end to end (embedding the query), then again on the embedded
                # query: the index's own cost. The other arms reuse the query's vector.
                r.fusion = "weighted"
                r._last_query = None
                t0 = time.perf_counter()
                r.search(q, _DEPTH, mode="hybrid")
                lat[f"hybrid_{name}"].append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                hits = r.search(q, _DEPTH, mode="hybrid")
                lat[f"hybrid_index_{name}"].append(time.perf_counter() - t0)
                query_seconds[name].append(
                    lat[f"hybrid_{name}"][-1] - lat[f"hybrid_index_{name}"][-1]
                )
                keep(f"hybrid_weighted_{name}", [h.doc_id for h in hits])
                r.section_boost = 0.0
                nosec = r.search(q, _DEPTH, mode="hybrid")
                keep(f"hybrid_weighted_nosection_{name}", [h.doc_id for h in nosec])
                r.section_boost = _SECTION
                r.fusion = "rrf"
                keep(f"hybrid_rrf_{name}", [h.doc_id for h in r.search(q, _DEPTH, mode="hybrid")])
                keep(f"dense_{name}", [h.doc_id for h in r.search(q, _DEPTH, mode="dense")])
        if dense:
            # The reference: the same hybrid index with the model-written facts added, each
            # fact's hit counted as the turns it cites (not one of our arms: nothing here
            # writes facts without a model).
            name = min(dense, key=lambda n: n != "minilm")
            _with_facts(dense[name], sample, ids, qas, got, f"{_REFERENCE}{name}")

    # The Memory engine asked the same questions (``_memory_engine``): lexical, and with the
    # embedder of the best turn-level hybrid when one is installed.
    questions = locomo_questions
    stage("turn_arms")
    report(total_qas, total_qas, "asking a cx.Memory of each conversation")
    # The headline: Memory(path).find(q), exactly as a user calls them (default settings).
    # ``Memory(path)`` embeds with the default embedder (``auto``: e5-small when the embed
    # extra is installed; ``$CTXSDK_EMBEDDER`` overrides it). ``--quick`` asks it lexically:
    # a model embedding two conversations would take minutes.
    default = None if quick else default_embedder()
    called_rows, called_times = memory_recall_rows(
        samples, questions, as_called=True, lexical=quick
    )
    got[_AS_CALLED] = called_rows
    if quick:
        # the as-called memory is asked lexically for its default 10 hits with --quick:
        # the lexical arm already (a file rather than an in-memory store), not asked twice
        mem_rows, mem_times = called_rows, called_times
    else:
        mem_rows, mem_times = memory_recall_rows(samples, questions)
    got["memory_lexical"] = mem_rows
    engine_metrics: dict[str, float] = dict(mem_times)
    engine_metrics.update({f"{k}_as_called": v for k, v in called_times.items()})
    preferred = sorted(embs, key=lambda e: e.name != "minilm")
    if preferred:
        emb = preferred[0]
        report(total_qas, total_qas, f"asking a cx.Memory with {emb.name} embeddings")
        if default is not None and default.name == emb.name:
            # the memory as called embeds with this embedder and asks for 10 hits already
            rows_h, times_h = called_rows, called_times
        else:
            rows_h, times_h = memory_recall_rows(samples, questions, embedder=emb)
        got[f"memory_hybrid_{emb.name}"] = rows_h
        engine_metrics.update({f"{k}_{emb.name}": v for k, v in times_h.items()})
    metrics: dict[str, float] = {}
    baselines: dict[str, float] = {}
    metrics.update(engine_metrics)
    for arm, rows_ in got.items():
        table = baselines if arm.startswith("bm25_") else metrics
        table.update(_recall(arm, rows_))
    ours_arms = [a for a in got if not a.startswith(("bm25_", _REFERENCE))]
    best = max(ours_arms, key=lambda a: (metrics[f"{a}_r5_all"], metrics[f"{a}_r10_all"]))
    # The headline numbers (and the targets) are the memory's as a user calls it; the best
    # arm over turns is reported beside them.
    headline = ("r5_all", "r10_all", "r5_cat1_4", "r10_cat1_4")
    for key in (*headline, *(f"r{k}_cat{c}" for k in KS for c in CATEGORIES)):
        if f"{_AS_CALLED}_{key}" in metrics:
            metrics[key] = metrics[f"{_AS_CALLED}_{key}"]
    for key in headline:
        metrics[f"best_arm_{key}"] = metrics[f"{best}_{key}"]
    for name in query_seconds:
        metrics[f"embed_docs_per_second_{name}"] = embedded_docs[name] / max(
            embed_seconds[name], 1e-9
        )
        metrics[f"embed_query_ms_p50_{name}"] = 1000 * statistics.median(query_seconds[name])
    bm_p50, bm_p95 = _percentile(lat["bm25"], 0.5), _percentile(lat["bm25"], 0.95)
    metrics["bm25_query_ms_p50_locomo"] = 1000 * bm_p50
    metrics["bm25_query_ms_p95_locomo"] = 1000 * bm_p95
    for name in dense:
        for what, key in (("", f"hybrid_{name}"), ("index_", f"hybrid_index_{name}")):
            p50, p95 = _percentile(lat[key], 0.5), _percentile(lat[key], 0.95)
            metrics[f"hybrid_{what}{name}_query_ms_p50_locomo"] = 1000 * p50
            metrics[f"hybrid_{what}{name}_query_ms_p95_locomo"] = 1000 * p95
            metrics[f"hybrid_{what}{name}_over_bm25_p50_ratio_locomo"] = p50 / max(bm_p50, 1e-9)
            metrics[f"hybrid_{what}{name}_over_bm25_p95_ratio_locomo"] = p95 / max(bm_p95, 1e-9)
    size = 20_000 if quick else 100_000
    stage("memory_arms")
    report(total_qas, total_qas, f"timing a synthetic {size:,}-document index")
    scale = _scale(data, size)
    metrics.update(scale)
    stage("synthetic_index")
    sizes = tuple(scale_sizes or (SIZES_QUICK if quick else SIZES_FULL))
    scale_metrics, scale_baselines, scale_notes = memory_scale(
        data,
        [str(qa["question"]) for sm in data for qa in sm["qa"]],
        sizes,
        unit_conversations=2 if quick else None,
        queries=50 if quick else 100,
        report=lambda what: report(total_qas, total_qas, what),
    )
    metrics.update(scale_metrics)
    baselines.update(scale_baselines)
    stage("memory_scale")
    report(total_qas, total_qas, "timing concurrent writer processes")
    metrics.update(writer_throughput(30 if quick else 100))
    stage("writers")
    targets = [
        Target.at_least("r5_all", 0.65),
        Target.at_least("r10_all", 0.75),
        # (multi-hop R@10 >= 0.55 is retired: it needs a model to write facts across
        # sessions; r10_cat1 is reported, not a target)
        # Must at least beat the plain BM25 reference measured in the same run.
        Target.at_least("r5_over_bm25_plain_ratio", 1.0),
        Target.at_most("synthetic_hybrid_query_ms_p95", 1000.0),
        # the engine's writes (_memory_engine): nothing lost by concurrent writers, the
        # batch write against executemany, four writers against one
        *WRITE_TARGETS,
        # find on a memory built by ingest, against bm25s over the same texts, same run: the
        # target is at 100k nodes and more (--quick's 20k reports the ratio, unjudged: at a
        # few thousand nodes find's fixed cost per query, its rules and the graph, weighs
        # more than scoring, where bm25s's sub-millisecond query has none)
        *(
            Target.at_most(f"memory_find_p95_over_bm25s_{label(n)}", 2.0)
            for n in sizes
            if n >= 100_000
        ),
        Target.at_most(f"memory_find_ms_p95_{label(max(sizes))}", 1000.0),
        # a new process's first find with the index saved beside the file, against the
        # same file read whole, same run (_memory_scale): judged at 100k nodes and above
        *(
            Target.at_most(f"find_first_over_full_read_{label(n)}", FIRST_TARGET)
            for n in sizes
            if n >= 100_000
        ),
        *(Target.at_least(f"find_first_same_hits_{label(n)}", 1.0) for n in sizes),
    ]
    metrics["r5_over_bm25_plain_ratio"] = metrics["r5_all"] / max(
        baselines["bm25_plain_r5_all"], 1e-9
    )
    return BenchResult(
        name="memory",
        metrics=metrics,
        baselines=baselines,
        published={
            "dragon_r5_all": 0.567,
            "dragon_r10_all": 0.662,
            "dragon_r5_cat1": 0.354,
            "dragon_r10_cat1": 0.466,
            "dragon_r5_cat2": 0.704,
            "dragon_r10_cat2": 0.773,
            "dragon_r5_cat3": 0.331,
            "dragon_r10_cat3": 0.408,
            "dragon_r5_cat4": 0.680,
            "dragon_r10_cat4": 0.777,
            "dragon_r5_cat5": 0.439,
            "dragon_r10_cat5": 0.547,
            "spec_bm25_reference_r5_all": 0.524,
            "spec_bm25_reference_r10_all": 0.594,
        },
        targets=targets,
        notes={
            "conversations": len(samples),
            "qas": total_qas,
            "best_arm": best,
            "headline_arm": _AS_CALLED,
            "headline_embedder": (
                default.name
                if default is not None
                else "none (lexical" + (", --quick)" if quick else ")")
            ),
            "arms": sorted(got),
            "embedders": [e.name for e in embs],
            "indexed_text": "speaker + ': ' + text + ' ' + blip_caption (when present)",
            "categories": CATEGORIES,
            "synthetic_docs": size,
            "scale": scale_notes,
            "seconds": round(time.perf_counter() - started, 1),
            "stage_seconds_wall_cpu": stages,
        },
    )


def _recall(arm: str, rows: list[tuple[int, list[str], list[str]]]) -> dict[str, float]:
    """R@k per category, per-question mean over all and ids 1-4, and pooled."""
    out: dict[str, float] = {}
    for k in KS:
        per: dict[int, list[float]] = defaultdict(list)
        hit_ids = total_ids = 0
        for cat, ev, retrieved in rows:
            top = set(retrieved[:k])
            found = sum(e in top for e in ev)
            per[cat].append(found / len(ev))
            hit_ids += found
            total_ids += len(ev)
        every = [v for vals in per.values() for v in vals]
        low = [v for c in (1, 2, 3, 4) for v in per[c]]
        out[f"{arm}_r{k}_all"] = statistics.fmean(every)
        out[f"{arm}_r{k}_cat1_4"] = statistics.fmean(low) if low else 0.0
        out[f"{arm}_r{k}_pooled_all"] = hit_ids / max(total_ids, 1)
        for c in CATEGORIES:
            if per[c]:
                out[f"{arm}_r{k}_cat{c}"] = statistics.fmean(per[c])
    return out


def _scale(data: list[Any], size: int) -> dict[str, float]:
    """p50/p95 query latency on a synthetic index of ``size`` documents (LoCoMo turns
    recombined), hybrid (a hashed embedder) against BM25 alone, plus the build time."""
    rng = random.Random(11)
    pool = [t for s in data for _, t in turns(s)]
    vocab = [w for t in pool for w in t.split()]
    texts = [" ".join(rng.choice(vocab) for _ in range(rng.randint(8, 30))) for _ in range(size)]
    queries = [str(qa["question"]) for s in data for qa in s["qa"]][:: max(1, 1986 // 100)][:100]
    t0 = time.perf_counter()
    r = Retriever(
        # Conversations of 500 documents in sections of 25 (LoCoMo: about 22 turns a session).
        (
            Doc(str(i), t, group=i // 500, order=float(i), section=i // 25)
            for i, t in enumerate(texts)
        ),
        embedder=HashEmbedder(),
    )
    r.flush()
    build = time.perf_counter() - t0
    t0 = time.perf_counter()
    r.add("extra", "one more turn after the build", group=0, order=1e9)
    r.flush()
    add_one = time.perf_counter() - t0

    def times(fn: Callable[[str], object]) -> list[float]:
        out = []
        for q in queries:
            r._last_query = None
            t = time.perf_counter()
            fn(q)
            out.append(time.perf_counter() - t)
        return out

    bm = times(lambda q: r.search(q, 10, mode="lexical"))
    hy = times(lambda q: r.search(q, 10, mode="hybrid"))
    bm50, bm95, hy50, hy95 = (
        _percentile(bm, 0.5),
        _percentile(bm, 0.95),
        _percentile(hy, 0.5),
        _percentile(hy, 0.95),
    )
    return {
        "synthetic_build_seconds": build,
        "synthetic_add_one_ms": 1000 * add_one,
        "synthetic_bm25_query_ms_p50": 1000 * bm50,
        "synthetic_bm25_query_ms_p95": 1000 * bm95,
        "synthetic_hybrid_query_ms_p50": 1000 * hy50,
        "synthetic_hybrid_query_ms_p95": 1000 * hy95,
        "synthetic_hybrid_over_bm25_p50_ratio": hy50 / max(bm50, 1e-9),
        "synthetic_hybrid_over_bm25_p95_ratio": hy95 / max(bm95, 1e-9),
    }
