"""A memory's first find builds its index in one pass (``Retriever.add_many``, the terms
counted by ``term_counts``, the garbage collector paused): the index, the hits and their
scores are the ones one ``add`` per node gives."""

from __future__ import annotations

import gc
import json
import random
from collections import Counter
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxsdk.bench._fit import _locomo_path, load_locomo
from ctxsdk.memory import Memory
from ctxsdk.session import Retriever, Session, _retrieval
from ctxsdk.session._lexical import term_counts, words

_PIECES = st.sampled_from(
    [
        "the",
        "The",
        "LIGHTHOUSE",
        "lighthouses",
        "stopped",
        "games",
        "Gaming",
        "3pm",
        "2023",
        "x_y",
        "a-b",
        "on",
        "its",
        "isn't",
        "\x1c",
        "\x0b",
        "\t",
        "\u00a0",
        "é",
        "ß",
        "東京タワー",
        "한국어",
        "İstanbul",
        "K",
        ".",
        ",",
        "!",
    ]
)


@settings(max_examples=1500, deadline=None)
@given(st.lists(_PIECES | st.text(max_size=6), max_size=12).map(" ".join))
def test_term_counts_are_the_counted_words_in_their_order(text: str) -> None:
    for _ in range(2):  # its tokens unseen, then seen (looked up in the table)
        got, want = term_counts(text), Counter(words(text))
        assert got == want
        assert list(got) == list(want)


class _Fixed:
    """An embedder whose vector of a text is a function of the text (the same at every
    call), for the dense channel's rows."""

    name = "fixed"
    dim = 4

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [
            [float(len(t) % 7 + 1), float(t.count("e")), float(t.count(" ")), 1.0] for t in texts
        ]


_VOCAB = (
    "lighthouse keeper storm hail fog rain boat harbour lamp night dawn the on at 7 2023".split()
)
_DocRow = tuple[
    str, str, Hashable | None, float | None, Hashable | None, Sequence[float] | None, bool
]


def _docs(seed: int, n: int, prefix: str) -> list[_DocRow]:
    rnd = random.Random(seed)
    out: list[_DocRow] = []
    for i in range(n):
        group = rnd.choice([None, "s1", "s2", ("s", 3)])
        order = rnd.choice([None, float(rnd.randint(0, 20)), float(i)])  # ties in an order
        section = rnd.choice([None, (group, rnd.randint(0, 4))]) if group is not None else None
        vector = rnd.choice([None, [1.0, 0.5, 0.0, 2.0], [0.0, 1.0]])  # one of the wrong size
        text = " ".join(rnd.choice(_VOCAB) for _ in range(rnd.randint(0, 9)))
        out.append((f"{prefix}{i}", text, group, order, section, vector, rnd.random() < 0.8))
    return out


def _one_by_one(r: Retriever, docs: list[_DocRow]) -> None:
    for doc_id, text, group, order, section, vector, dense in docs:
        r.add(doc_id, text, group=group, order=order, section=section, vector=vector, dense=dense)


def _state(r: Retriever) -> dict[str, Any]:
    vec = None if r._vec is None else r._vec[: len(r._ids)].tolist()
    return {
        "ids": r._ids,
        "slot": list(r._slot.items()),
        "tf": [list(tf.items()) for tf in r._tf],
        "len": r._len,
        "total": r._total,
        "post": [(t, list(p.items())) for t, p in r._post.items()],
        "post_arr": sorted(r._post_arr),
        "dead": sorted(r._dead),
        "wordy": sorted(r._wordy),
        "embedded": r._embedded,
        "text": r._text,
        "group": r._group,
        "groups": {repr(k): (g.orders, g.slots) for k, g in r._groups.items()},
        "prev": r._prev,
        "next": r._next,
        "seq": r._seq,
        "section": r._section,
        "sections": list(r._sections.items()),
        "members": r._members,
        "pending": r._pending,
        "vec": vec,
    }


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("embedder", [None, _Fixed()])
def test_add_many_is_add_one_by_one(seed: int, embedder: _Fixed | None) -> None:
    """In one pass (many new ids) or one by one (few, an id already there, an id twice):
    the same index as ``add`` makes, after earlier documents, removals and a search."""
    first, more = _docs(seed, 40, "a"), _docs(seed + 100, 300, "b")
    again = [*_docs(seed + 200, 10, "a"), *_docs(seed + 300, 70, "c")]  # a-ids replaced
    twice = [*_docs(seed + 400, 70, "d"), *_docs(seed + 400, 3, "d")]
    bulk, single = Retriever(embedder=embedder), Retriever(embedder=embedder)
    for r in (bulk, single):
        _one_by_one(r, first)
        r.remove("a3")
        r.search("storm lamp")  # per-term arrays made: later adds drop theirs
    bulk.add_many(more)
    _one_by_one(single, more)
    assert _state(bulk) == _state(single)
    for batch in (again, twice, _docs(seed + 500, 5, "e")):
        bulk.add_many(batch)
        _one_by_one(single, batch)
        assert _state(bulk) == _state(single)
    for q in ("lighthouse keeper", "storm at 7", "when was the fog", "who kept the lamp"):
        for mode in ("lexical", None):
            want = single.search(q, 10, mode=mode)  # type: ignore[arg-type]
            assert bulk.search(q, 10, mode=mode) == want  # type: ignore[arg-type]
            assert want or q == "who kept the lamp"


def test_add_many_of_nothing_changes_nothing() -> None:
    r = Retriever()
    r.add_many([])
    assert len(r) == 0 and r.search("anything") == []


def _questions(sample: dict[str, Any]) -> list[str]:
    return [str(qa["question"]) for qa in sample["qa"]][:60]


def _memory_rows(path: Path) -> list[str]:
    """Texts and neighbours enough for the one-pass build (over ``_BULK`` nodes): a
    conversation's turns remembered as observations of one session."""
    rnd = random.Random(7)
    with Memory(path, embedder=None) as mem:
        for i in range(90):
            text = " ".join(rnd.choice(_VOCAB) for _ in range(rnd.randint(3, 12)))
            mem.remember(f"turn {i}: {text}", type="observation")
        mem.remember("Session 4 - 3:00 pm on 2 May, 2023", type="observation")
        mem.remember("Keep the lighthouse lamp lit until Friday", type="decision")
    return ["lighthouse keeper", "storm 7", "when was the fog", "the lamp", "harbour at dawn"]


def _finds(path: Path, queries: list[str]) -> list[str]:
    with Memory(path, embedder=None) as mem:
        return [json.dumps(mem.find(q).to_json()) for q in queries]


def _cold_vs_one_by_one(path: Path, queries: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert gc.isenabled()
    cold = _finds(path, queries)
    assert gc.isenabled()  # put back after the first read
    with monkeypatch.context() as m:
        m.setattr(_retrieval, "_BULK", 10**9)  # every node added one by one
        plain = _finds(path, queries)
    assert cold == plain
    assert any(json.loads(c)["hits"] for c in cold)


def test_a_first_find_ranks_as_one_add_per_node(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "memory.db"
    _cold_vs_one_by_one(path, _memory_rows(path), monkeypatch)


def test_a_first_find_leaves_a_paused_collector_paused(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    queries = _memory_rows(path)
    gc.disable()
    try:
        _finds(path, queries)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_first_find_leaves_the_callers_frozen_objects_frozen(tmp_path: Path) -> None:
    """The read's objects go to the oldest generation by freezing and unfreezing every
    object, which is not done when the caller froze some of its own: the caller's objects
    stay frozen (the collector's generations do not list them), and nothing more is frozen
    (the count may fall, as frozen objects elsewhere in the process are freed, never rise)."""
    path = tmp_path / "memory.db"
    queries = _memory_rows(path)
    kept = [[i] for i in range(1000)]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen >= len(kept)
        _finds(path, queries)
        assert gc.get_freeze_count() <= frozen and gc.isenabled()
        tracked = {id(o) for o in gc.get_objects()}  # generations 0-2: not the frozen
        assert not any(id(k) in tracked for k in kept)
    finally:
        gc.unfreeze()
    _finds(path, queries)
    assert gc.get_freeze_count() == 0 and gc.isenabled()


class _Watching(_Fixed):
    """An embedder that notes whether the garbage collector runs while it embeds."""

    def __init__(self) -> None:
        self.collecting: list[bool] = []

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.collecting.append(gc.isenabled())
        return super().embed(texts)


def test_the_collector_runs_while_a_first_read_embeds(tmp_path: Path) -> None:
    """Paused for the read and the index, not for a model's (or an endpoint's) work."""
    path = tmp_path / "memory.db"
    queries = _memory_rows(path)
    watching = _Watching()
    with Memory(path, embedder=watching) as mem:
        assert mem.find(queries[0]).hits
    assert watching.collecting and all(watching.collecting)
    assert gc.isenabled()


@pytest.mark.skipif(_locomo_path() is None, reason="LoCoMo data is not available")
def test_a_first_find_over_an_ingested_conversation_ranks_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A LoCoMo conversation ingested with the defaults: its questions' hits, ids, order
    and scores, the same from the one-pass build as from one add per node."""
    data = load_locomo()[:1]
    path = tmp_path / "memory.db"
    with Memory(path, embedder=None) as mem:
        mem.ingest(Session.from_locomo(data, 0))
    _cold_vs_one_by_one(path, _questions(data[0]), monkeypatch)
