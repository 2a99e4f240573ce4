"""The Retriever's lexical search (numpy over postings, the answer boost read where the
ranking depends on it) gives exactly what a plain loop over the postings gives: the same
ids in the same order with the same float scores, whatever the settings, after removals
and replacements, for questions of every answer kind, and for words as common as "the"."""

from __future__ import annotations

import heapq
import math
import random
from collections import Counter
from typing import Any

import pytest

from ctxsdk.session import Retriever
from ctxsdk.session._retrieval import _answer_type

_WORDS = (
    "alice bob carol went to paris in may 2023 and bought three red bikes for the team "
    "meeting on friday at 10:30 about the deploy of /src/app/main.py which broke twice "
    "yesterday because a config value was wrong so we fixed it next week with dave"
).split()


def _reference(r: Retriever, query: str, k: int) -> list[tuple[str, float]]:
    """The lexical ranking as a loop over the postings (the definition, kept simple)."""
    q = {t: float(f) for t, f in Counter(r.tokenize(query)).items() if t in r._post}
    if not q:
        return []
    n = len(r)
    avg = r._total / n
    base, scale = r.k1 * (1 - r.b), r.k1 * r.b / avg

    def bm25(query_terms: dict[str, float]) -> dict[int, float]:
        out: dict[int, float] = {}
        hit: dict[int, float] = {}
        total = 0.0
        for t, qw in query_terms.items():
            post = r._post.get(t)
            if not post:
                continue
            idf = math.log(1 + (n - len(post) + 0.5) / (len(post) + 0.5))
            total += qw * idf
            w = qw * idf * (r.k1 + 1)
            for slot, f in post.items():
                out[slot] = out.get(slot, 0.0) + w * f / (f + base + scale * r._len[slot])
                if r.coordination:
                    hit[slot] = hit.get(slot, 0.0) + qw * idf
        if r.coordination and total:
            out = {s: v * (hit[s] / total) ** r.coordination for s, v in out.items()}
        return out

    rel = bm25(q)
    if r.feedback and rel:
        top = heapq.nlargest(3, ((v, -s) for s, v in rel.items() if v > 0))
        pool: dict[str, float] = {}
        best = top[0][0] if top else 1.0
        for v, neg in top:
            for t, f in r._tf[-neg].items():
                if t not in q:
                    pool[t] = pool.get(t, 0.0) + f * r._idf(t) * v / best
        extra = sorted(pool, key=lambda t: (-pool[t], t))[: r.feedback]
        if extra:
            expanded = dict(q)
            for t in extra:
                expanded[t] = 0.3 * pool[t] / pool[extra[0]]
            rel = bm25(expanded)
    want = _answer_type(query) if r.answer_boost else None
    if want is not None:
        rel = {
            s: v * (1 + r.answer_boost) if want.search(r._text[s]) else v for s, v in rel.items()
        }
    lex = rel
    if r.neighbour and rel:
        todo = set(rel) | {r._prev[s] for s in rel if r._prev[s] >= 0}
        todo |= {r._next[s] for s in rel if r._next[s] >= 0}
        lex = {}
        for s in todo:
            a = rel.get(r._prev[s], 0.0) if r._prev[s] >= 0 else 0.0
            c = rel.get(r._next[s], 0.0) if r._next[s] >= 0 else 0.0
            lex[s] = rel.get(s, 0.0) + r.neighbour * (a + c if r.smoothing == "sum" else max(a, c))
    out = dict(lex)
    if r.section_boost:
        best_of: dict[int, float] = {}
        for s, v in lex.items():
            sec = r._section[s]
            if sec >= 0 and v > best_of.get(sec, 0.0):
                best_of[sec] = v
        for sec, top_v in best_of.items():
            for s in r._members[sec]:
                out[s] = out.get(s, 0.0) + r.section_boost * top_v
    best = heapq.nlargest(k, ((v, -s) for s, v in out.items() if v > 0))
    return [(r._ids[-s], v) for v, s in best]


def _docs(seed: int, n: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        words = [rng.choice(_WORDS) for _ in range(rng.randint(3, 14))]
        if rng.random() < 0.5:
            words[0] = words[0].capitalize()
        out.append((f"d{i}", " ".join(words)))
    return out


SETTINGS: list[dict[str, Any]] = [
    {},
    {"feedback": 0},
    {"feedback": 0, "smoothing": "sum", "neighbour": 0.3},
    {"feedback": 0, "section_boost": 0.0},
    {"coordination": 0.0, "answer_boost": 0.0, "feedback": 0},
    {"neighbour": 0.0, "section_boost": 0.4},
]
QUERIES = [
    "When did Alice go to Paris?",
    "How many bikes did the team buy?",
    "Who fixed the deploy?",
    "Where is main.py?",
    "which file broke twice",
    "the",
    "red red red bikes",
    "nothing here zzz",
    "",
]


@pytest.mark.parametrize("settings", SETTINGS)
def test_lexical_search_equals_a_loop_over_the_postings(settings: dict[str, Any]) -> None:
    docs = _docs(7, 600)
    r = Retriever(feedback=settings.pop("feedback", 8), **settings)
    for i, (doc_id, text) in enumerate(docs):
        r.add(
            doc_id,
            text,
            group=i // 50 if i % 9 else None,
            order=float(i % 50),
            section=(i // 50, i // 3) if i % 4 else None,
        )
    rng = random.Random(1)
    for doc_id, _ in rng.sample(docs, 60):
        r.remove(doc_id)
    for doc_id, text in rng.sample(docs, 20):
        r.add(doc_id, text + " again in paris", group=99, order=1.0, section="x")
    compared = 0
    for q in QUERIES:
        for k in (1, 5, 40, 1000):
            got = [(h.doc_id, h.score) for h in r.search(q, k, mode="lexical")]
            assert got == _reference(r, q, k), (q, k)
            compared += len(got)
    assert compared > 1000  # the queries found something to compare
    # and the scores of every document agree with the search's ranking
    scores = r.scores("When did Alice go to Paris?")
    ranked = sorted((v, -i) for i, v in enumerate(scores.values()) if v > 0)[::-1][:10]
    ids = list(scores)
    assert [ids[-i] for _, i in ranked] == [
        h.doc_id for h in r.search("When did Alice go to Paris?", 10)
    ]
