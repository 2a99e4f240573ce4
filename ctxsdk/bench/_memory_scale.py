"""``find`` as a memory grows, on memories built the way users build them, against a plain
BM25 index (``bm25s``) over the same texts, timed in the same run.

**The memories.** LoCoMo's conversations are imported (``Session.from_locomo``) and
ingested into one file with ``Memory.ingest`` and the defaults (verbatim observations, the
rules' entities, preferences, decisions, episodes; ``embedder=None``: the latency of the
index, not of a model). That is the ingested *unit*: every LoCoMo conversation in a full
run (about 6.7k nodes: the ~6k size), two with ``quick``. Ingest writes about 100 to 150
nodes a second here, so a 100k memory made by ingest alone would take 15 minutes and more;
the larger memories are made of copies of the ingested unit instead: each conversation's
rows exactly as ingest wrote them (nodes with their sources, turns, session words and
extras, edges, the ingest marker), its two speakers renamed (in every text, name, quote
and extra) and its session named ``<session>-k<n>``, loaded into the store
(``SQLiteStore.load``) until the memory holds the size asked. So every node has the shape,
grouping and neighbours ingest gives it, and no two copies share a text (copies of one
text would be hidden as a template's boilerplate).

**Timed.** A memory of each size is opened as a user opens it (``Memory(path,
embedder=None)``); the first ``find`` (the index read from the store) is timed alone (and
the first find of a new process, below). Then, in the memory opened again (its index
loaded from the file beside it, as a new process has it: the nodes read as search asks),
100 LoCoMo questions (50 with ``quick``) are asked of ``find`` (its default ``top_k``) and
of ``bm25s`` (its own tokenizer with its English stop words, the index built once over
every indexed node's index text, the same documents the memory ranks; a query's
tokenization included, as ``find``'s is), interleaved query by query, the order of the two
alternating. Reported per size: p50 / p95 of both, ``memory_find_p95_over_bm25s_<size>``
(target <= 2), and the growth of each p95 from the smallest size to the largest.

**The first find of a new process.** ``memory_find_first_ms_<size>`` is the first find
after the memory grew (the index read whole from the store, then saved beside the file).
Then a memory is opened again and again, as a new notebook opens it, alternating two arms,
``_FIRST_ROUNDS`` times each: the memory as users open it, whose first find loads the index
saved beside the file (``find_first_seconds_<size>``, the median), and the same file read
whole as before the saved index (``find_first_full_read_seconds_<size>``, a baseline: the
engine with the saved index neither loaded nor written). ``find_first_over_full_read_<size>``
is their ratio (target <= 0.25 at 100k nodes and above: the saved index must make the
first answer at least four times cheaper; a smaller memory's first find is mostly the
fixed cost of a search, and is reported unjudged). ``find_first_same_hits_<size>`` is 1
when both arms' first finds gave the same hits in the same order with the same scores
(target: 1 at every size).
"""

from __future__ import annotations

import logging
import re
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..memory import Memory
from ..session import Session

__all__ = ["FIRST_TARGET", "SIZES_FULL", "SIZES_QUICK", "label", "memory_scale"]

SIZES_FULL = (6_000, 100_000)
SIZES_QUICK = (6_000, 20_000)
_QUERIES_FULL, _QUERIES_QUICK = 100, 50
_FIRST_ROUNDS = 4  # new memories opened per arm for the first-find figure
FIRST_TARGET = 0.25  # find_first_over_full_read_<size> at 100k nodes and above
_SYLLABLES = "ka ri lo me sa no ve da ti ru po la mi ne so be ta ko li zu ha ra jo fe".split()


def label(size: int) -> str:
    """``6k``, ``100k``, ``1m``: a size as metric names spell it."""
    if size >= 1_000_000 and size % 1_000_000 == 0:
        return f"{size // 1_000_000}m"
    if size >= 1_000 and size % 1_000 == 0:
        return f"{size // 1_000}k"
    return str(size)


def _name(n: int) -> str:
    """A made-up first name, one per ``n`` (distinct for n below 24**3)."""
    s = _SYLLABLES
    return (s[n % 24] + s[(n // 24) % 24] + s[(n // 576) % 24]).capitalize()


def _speakers(sample: Mapping[str, Any]) -> list[str]:
    conv = sample["conversation"]
    return [str(conv[k]) for k in ("speaker_a", "speaker_b") if conv.get(k)]


def _rewrite(value: Any, fn: Callable[[str], str]) -> Any:
    """``value`` with ``fn`` applied to every string in it (lists and dicts walked)."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [_rewrite(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: _rewrite(v, fn) for k, v in value.items()}
    return value


class _Unit:
    """The rows ingest wrote for each conversation of the unit, to copy from."""

    def __init__(self, store: Any, data: Sequence[Mapping[str, Any]]) -> None:
        self.sessions: list[str] = []  # the session key of each conversation, in order
        self.names: list[list[str]] = []
        self.nodes: dict[str, list[dict[str, Any]]] = {}
        self.edges: dict[str, list[dict[str, Any]]] = {}
        self.meta: dict[str, dict[str, Any]] = {}
        for sample in data:
            sid = f"locomo:{sample['sample_id']}"
            self.sessions.append(sid)
            self.names.append(_speakers(sample))
            self.nodes[sid], self.edges[sid] = [], []
        owner: dict[str, str] = {}
        for row in store.rows("nodes"):
            srcs = row.get("sources") or []
            got = srcs[0].get("session") if srcs else None
            if isinstance(got, str) and got in self.nodes:
                self.nodes[got].append(row)
                owner[row["id"]] = got
        for row in store.rows("edges"):
            a, b = owner.get(row["src"]), owner.get(row["dst"])
            if a is not None and a == b:
                self.edges[a].append(row)
        for row in store.rows("meta"):
            key = str(row["key"])
            if key.startswith("ingested:") and key[len("ingested:") :] in self.nodes:
                self.meta[key[len("ingested:") :]] = row

    def copy(self, store: Any, conv: int, k: int) -> int:
        """Load copy ``k`` of conversation ``conv``; returns the nodes written."""
        sid = self.sessions[conv]
        tag = f"k{k}"
        names = self.names[conv]
        new = {old: _name(2 * k * len(self.sessions) + 2 * conv + j) for j, old in enumerate(names)}
        speaker = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b") if names else None
        conv_id = sid.split(":", 1)[1]  # conv-26
        spaced = conv_id.replace("-", " ")  # the session words: "locomo conv 26"

        def fn(text: str) -> str:
            if speaker is not None:
                text = speaker.sub(lambda m: new[m.group(1)], text)
            return text.replace(conv_id, f"{conv_id}-{tag}").replace(spaced, f"{spaced} {tag}")

        ids = {r["id"]: f"{r['id']}{tag}" for r in self.nodes[sid]}
        rows = []
        for r in self.nodes[sid]:
            row = {c: _rewrite(v, fn) for c, v in r.items() if c not in ("id", "uri")}
            row["id"] = ids[r["id"]]
            uri = str(r["uri"])
            row["uri"] = uri.replace(r["id"], ids[r["id"]]) if r["id"] in uri else fn(uri)
            if row["uri"] == uri:
                row["uri"] = f"{uri}-{tag}"
            rows.append(row)
        edges = [{**e, "src": ids[e["src"]], "dst": ids[e["dst"]]} for e in self.edges[sid]]
        with store.batch():
            written = int(store.load("nodes", rows))
            store.load("edges", edges)
            if sid in self.meta:
                m = self.meta[sid]
                store.load("meta", [{**m, "key": f"ingested:{fn(sid)}"}])
        return written


def _percentile(values: Sequence[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] if s else 0.0


def _bm25s_index(texts: list[str]) -> Callable[[str], object]:
    """``bm25s`` over ``texts`` as it ships (its tokenizer, English stop words): the
    function that asks it for the 10 best of a query."""
    import bm25s  # type: ignore[import-untyped]  # the bench's baseline (dev extra)

    # bm25s sets its logger to DEBUG when imported: its "Building index" lines would land
    # in the bench's output wherever a handler is installed
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
    k = min(10, len(texts))

    def ask(query: str) -> object:
        tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
        return retriever.retrieve(tokens, k=k, show_progress=False)

    return ask


def memory_scale(
    data: Sequence[Mapping[str, Any]],
    questions: Sequence[str],
    sizes: Sequence[int],
    *,
    unit_conversations: int | None = None,
    queries: int = _QUERIES_FULL,
    report: Callable[[str], None] = lambda _: None,
) -> tuple[dict[str, float], dict[str, float], dict[str, Any]]:
    """``(metrics, baselines, notes)``: ``find`` against ``bm25s`` on memories of ``sizes``
    nodes (module docs). ``unit_conversations``: how many LoCoMo conversations are
    ingested (default all); ``queries``: how many of ``questions`` are asked (spread)."""
    chosen = list(data if unit_conversations is None else data[:unit_conversations])
    step = max(1, len(questions) // max(queries, 1))
    asks = list(questions)[::step][:queries]
    metrics: dict[str, float] = {}
    baselines: dict[str, float] = {}
    notes: dict[str, Any] = {"unit_conversations": len(chosen), "queries": len(asks)}
    with tempfile.TemporaryDirectory(prefix="ctxsdk-bench-memory-scale-") as tmp:
        path = Path(tmp) / "memory.db"
        report(f"ingesting {len(chosen)} LoCoMo conversations")
        t0 = time.perf_counter()
        with Memory(path, embedder=None) as mem:
            for i in range(len(chosen)):
                mem.ingest(Session.from_locomo(list(chosen), i))
            ingest_s = time.perf_counter() - t0
            unit_nodes = sum(n for t, n in mem.store.count().items() if t != "workspace")
            unit = _Unit(mem.store, chosen)
        metrics["memory_scale_ingest_seconds"] = ingest_s
        metrics["memory_scale_ingest_nodes_per_second"] = unit_nodes / max(ingest_s, 1e-9)
        notes["unit_nodes"] = unit_nodes
        have, k = unit_nodes, 1
        for size in sorted(sizes):
            name = label(size)
            t0 = time.perf_counter()
            with Memory(path, embedder=None) as mem:
                while have < size:
                    # a round of copies in one transaction (each copy a savepoint): 0.83x
                    # the time of a commit per copy, timed in turn
                    with mem.store.batch():
                        for conv in range(len(chosen)):
                            if have >= size:
                                break
                            have += unit.copy(mem.store, conv, k)
                    k += 1
            if time.perf_counter() - t0 > 0.01:
                metrics[f"memory_scale_copy_seconds_{name}"] = time.perf_counter() - t0
            report(f"timing find and bm25s at {have:,} nodes")
            got = _time_size(path, asks)
            notes[f"nodes_{name}"] = have
            notes[f"indexed_{name}"] = got.pop("indexed")
            for key, value in got.items():
                table = baselines if key.startswith(("bm25s_", "find_first_full")) else metrics
                table[f"{key}_{name}"] = value
            metrics[f"memory_find_p95_over_bm25s_{name}"] = got["memory_find_ms_p95"] / max(
                got["bm25s_ms_p95"], 1e-9
            )
            metrics[f"memory_find_p50_over_bm25s_{name}"] = got["memory_find_ms_p50"] / max(
                got["bm25s_ms_p50"], 1e-9
            )
    lo, hi = label(min(sizes)), label(max(sizes))
    if lo != hi:
        metrics[f"memory_find_p95_growth_{lo}_to_{hi}"] = metrics[f"memory_find_ms_p95_{hi}"] / max(
            metrics[f"memory_find_ms_p95_{lo}"], 1e-9
        )
        baselines[f"bm25s_p95_growth_{lo}_to_{hi}"] = baselines[f"bm25s_ms_p95_{hi}"] / max(
            baselines[f"bm25s_ms_p95_{lo}"], 1e-9
        )
    return metrics, baselines, notes


def _indexed_texts(mem: Memory) -> list[str]:
    """The documents the memory ranks, as its index holds them (not read again from the
    store: a second copy of a million nodes would double the run's memory)."""
    mem.find("warm the index")
    return mem._retriever.texts()


class _WholeRead(Memory):
    """The engine without its saved index: every first find reads every node (the cold
    path the saved index replaces), and saves nothing."""

    def _load_index(self, rev: int, redaction: Any) -> Any:
        return None  # not loaded: the first find reads every node

    def _save_index(self, rev: int, redaction: Any) -> None:
        return None


def _time_first(path: Path, query: str) -> tuple[float, float, bool]:
    """The median seconds of a new memory's first ``find``: opened as users open it (the
    saved index loaded), and read whole, ``_FIRST_ROUNDS`` each, alternating; and whether
    both arms ranked alike."""
    arms: list[tuple[str, type[Memory]]] = [("saved", Memory), ("whole", _WholeRead)]
    took: dict[str, list[float]] = {"saved": [], "whole": []}
    seen: dict[str, str] = {}
    for i in range(_FIRST_ROUNDS):
        for arm, cls in arms if i % 2 == 0 else arms[::-1]:
            with cls(path, embedder=None) as mem:
                t0 = time.perf_counter()
                got = mem.find(query)
                took[arm].append(time.perf_counter() - t0)
            seen[arm] = repr([(h.node.id, h.score, h.via) for h in got.hits])
            del mem, got  # one memory's index held at a time
    same = seen["saved"] == seen["whole"]
    return _percentile(took["saved"], 0.5), _percentile(took["whole"], 0.5), same


def _time_size(path: Path, asks: Sequence[str]) -> dict[str, float]:
    """One size: the first ``find`` after the memory grew (every node read, the index
    saved), the first find of a new process (``_time_first``), then ``find`` (in a memory
    opened again: its saved index loaded, as a new process has it) and ``bm25s``
    interleaved query by query."""
    with Memory(path, embedder=None) as mem:
        t0 = time.perf_counter()
        mem.find("warm the index")
        first = time.perf_counter() - t0
    saved, whole, same = _time_first(path, asks[0] if asks else "warm the index")
    with Memory(path, embedder=None) as mem:
        texts = _indexed_texts(mem)
        t0 = time.perf_counter()
        bm = _bm25s_index(texts)
        bm_build = time.perf_counter() - t0
        bm("warm the index")
        lat: dict[str, list[float]] = {"find": [], "bm25s": []}
        arms: list[tuple[str, Callable[[str], object]]] = [("find", mem.find), ("bm25s", bm)]
        for i, q in enumerate(asks):
            for arm, fn in arms if i % 2 == 0 else arms[::-1]:
                t0 = time.perf_counter()
                fn(q)
                lat[arm].append(time.perf_counter() - t0)
    return {
        "indexed": float(len(texts)),
        "memory_find_first_ms": 1000 * first,
        "find_first_seconds": saved,
        "find_first_full_read_seconds": whole,
        "find_first_over_full_read": saved / max(whole, 1e-9),
        "find_first_same_hits": float(same),
        "memory_find_ms_p50": 1000 * _percentile(lat["find"], 0.5),
        "memory_find_ms_p95": 1000 * _percentile(lat["find"], 0.95),
        "bm25s_build_seconds": bm_build,
        "bm25s_ms_p50": 1000 * _percentile(lat["bm25s"], 0.5),
        "bm25s_ms_p95": 1000 * _percentile(lat["bm25s"], 0.95),
    }
