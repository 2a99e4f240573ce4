"""Search inside the database: a PostgreSQL memory's ``find`` ranked by the store's own
lexical index (``_db_search``, ``_pg_lexical``, schema version 5) gives what the engine's
in-process ranking gives, keeps its index in step with every writer, and never reads the
whole namespace to answer (a real server from the ``postgres_dsn`` fixture)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

import ctxsdk as cx
from ctxsdk.errors import InvalidArgument
from ctxsdk.memory import _db_search
from ctxsdk.memory._db_search import INDEX_VERSION
from ctxsdk.memory._index_doc import lexical_row
from ctxsdk.memory._model import Node, Source
from ctxsdk.session._lexical import words
from ctxsdk.session.kernel import answer_kind

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo10.json"

# What INDEX_VERSION names: the rows of these nodes. A change of index_text, the tokenizer
# or lexical_row changes the digest: bump INDEX_VERSION (stored indexes are rebuilt) and
# record the new digest under it.
_DIGESTS = {"lexical-1": "1927244cad2ebbef"}
_PROBES = [
    Node(id="e1", type="entity", name="src/app/server.py", aliases=("server",)),
    Node(
        id="d1",
        type="decision",
        name="defer",
        text="Postpone the release until Friday 10:30",
        until="Friday",
    ),
    Node(
        id="p1",
        type="preference",
        name="pytest",
        text="The user wants tests run with pytest -x",
        sources=(Source("s", 3, "q", "rule"),),
    ),
    Node(id="x1", type="experience", name="flaky", fail="ImportError in CI", fix="pin numpy"),
    Node(
        id="o1",
        type="observation",
        name="o1",
        text="Melanie painted a sunset in 2022 with Caroline",
        sources=(Source("conv-1", 7, "", "import"),),
        extra={"turn": 2},
    ),
    Node(
        id="o2",
        type="observation",
        name="o2",
        text="我们下周五发布新版本",
        sources=(Source("s2", 1, "", "import"),),
        extra={"agent_log": True},
    ),
]


def _digest() -> str:
    rows = [lexical_row(n, words) for n in _PROBES]
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()[:16]


def test_the_index_version_names_what_is_indexed() -> None:
    want = _DIGESTS.get(INDEX_VERSION)
    assert want == _digest(), (
        f"the lexical rows changed under INDEX_VERSION {INDEX_VERSION!r}: bump it (stored "
        f"indexes are then rebuilt) and record {_digest()!r} under the new version"
    )


class _Ones:
    """An embedder (every text the same vector): enough to ask for the dense channel."""

    name, dim = "ones", 4

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [[1.0] * self.dim for _ in texts]


def _locomo_session(conversation: int = 0) -> tuple[cx.Session, list[str]]:
    data = json.loads(LOCOMO.read_text())
    questions = [str(q["question"]) for q in data[conversation]["qa"]]
    return cx.Session.from_locomo(data, conversation), questions


def _hits(mem: cx.Memory, query: str) -> list[tuple[str, str, float]]:
    return [(h.node.id, h.via, round(h.score, 6)) for h in mem.find(query, top_k=10)]


def test_the_database_ranks_as_the_engine_does(postgres_dsn: str) -> None:
    """One namespace, two Memory objects on it: the database's ranking and the engine's
    give the same hits, in the same order, with the same scores, for every LoCoMo question
    of a conversation (neighbours, sections, the answer boost and boilerplate all occur)."""
    session, questions = _locomo_session()
    with (
        cx.Memory(postgres_dsn, namespace="t", embedder=None) as db,
        cx.Memory(postgres_dsn, namespace="t", embedder=None, search="engine") as engine,
    ):
        assert (db.search_mode, engine.search_mode) == ("database", "engine")
        db.ingest(session, verbatim=True)
        differ = [q for q in questions if _hits(db, q) != _hits(engine, q)]
        assert len(questions) > 150
        assert differ == []
        assert any(_hits(db, q) for q in questions)


def test_a_cut_ranking_is_the_whole_ranking(postgres_dsn: str, monkeypatch: Any) -> None:
    """The database sends only the best documents of a query; with so few sent that many
    searches must ask again for every match (and many need not), every question still gets
    the engine's hits, order and scores."""
    monkeypatch.setattr(_db_search, "_LEAST_SENT", 1)
    monkeypatch.setattr(_db_search, "_SENT_PER_HIT", 1)
    session, questions = _locomo_session()
    with (
        cx.Memory(postgres_dsn, namespace="t", embedder=None) as db,
        cx.Memory(postgres_dsn, namespace="t", embedder=None, search="engine") as engine,
    ):
        db.ingest(session, verbatim=True)
        asked = questions[::2]
        for q in asked:
            assert _hits(db, q) == _hits(engine, q), q
        search = db._db
        assert search is not None
        assert 0 < search.asked_again < len(asked)


def test_a_ranking_of_the_kept_matches_is_the_whole_ranking(
    postgres_dsn: str, monkeypatch: Any
) -> None:
    """The database first scores only the matches whose bound (read from their postings)
    is best, with their neighbours, and bounds the rest; with so few kept that many matches
    of a common word are left out (and some searches must score every match), every
    question still gets the engine's hits, order and scores."""
    monkeypatch.setattr(_db_search, "_LEAST_SENT", 12)
    monkeypatch.setattr(_db_search, "_SENT_PER_HIT", 1)
    monkeypatch.setattr(_db_search, "_KEPT_PER_SENT", 3)  # 36 matches kept of hundreds
    session, questions = _locomo_session(1)
    with (
        cx.Memory(postgres_dsn, namespace="t", embedder=None) as db,
        cx.Memory(postgres_dsn, namespace="t", embedder=None, search="engine") as engine,
    ):
        db.ingest(session, verbatim=True)
        search = db._db
        assert search is not None
        calls: list[tuple[int | None, int, int | None]] = []
        asked_store = search.store.lexical_matches

        def recorded(*args: Any, **kwargs: Any) -> Any:
            got = asked_store(*args, **kwargs)
            calls.append((kwargs.get("keep"), got.total, kwargs.get("limit")))
            return got

        monkeypatch.setattr(search.store, "lexical_matches", recorded)
        asked = questions[::2]
        for q in asked:
            assert _hits(db, q) == _hits(engine, q), q
        left_out = [c for c in calls if c[0] is not None and c[2] is not None and c[1] > c[2]]
        # kept matches answered most searches that left matches out, not all of them
        assert len(left_out) > len(asked) // 2
        assert 0 < search.scored_all < len(left_out)


def test_the_index_follows_every_writer_and_never_moves_the_revision(postgres_dsn: str) -> None:
    with (
        cx.Memory(postgres_dsn, namespace="t", embedder=None) as mem,
        cx.Memory(postgres_dsn, namespace="t", embedder=None) as other,
    ):
        kiwi = mem.remember("Kiwi fixtures load before the schema tests", type="preference")
        zep = mem.remember("Zeppelin builds need the arm64 runner", type="decision")
        assert [h.node.id for h in mem.find("kiwi fixtures")] == [kiwi.id]
        store = mem.store
        rev = store.revision()
        assert store.lexical_state()[0] == rev  # type: ignore[attr-defined]
        mem.find("zeppelin")  # caught up: nothing written
        assert store.revision() == rev
        other.edit(kiwi.id, text="Mango fixtures load before the schema tests")
        other.archive(zep.id)
        late = other.remember("Zeppelin runners moved to the new arm64 pool", type="observation")
        assert mem.find("kiwi").hits == ()
        assert [h.node.id for h in mem.find("mango fixtures")] == [kiwi.id]
        assert [h.node.id for h in mem.find("zeppelin arm64")] == [late.id]
        other.delete(late.id)
        assert mem.find("zeppelin arm64").hits == ()
        assert store.lexical_state()[0] == store.revision()  # type: ignore[attr-defined]


def test_a_node_deleted_and_written_again_between_finds_is_found(postgres_dsn: str) -> None:
    """Another writer deletes a node and writes it again (same id) before this memory's
    next find: its doc went with its node, its terms did not. The catch-up writes it whole
    (schema version 5 failed on its old terms at every find after)."""
    with (
        cx.Memory(postgres_dsn, namespace="t", embedder=None) as mem,
        cx.Memory(postgres_dsn, namespace="t", embedder=None) as other,
    ):
        kiwi = mem.remember("Kiwi fixtures load before the schema tests", type="preference")
        mem.remember("Zeppelin builds need the arm64 runner", type="decision")
        assert [h.node.id for h in mem.find("kiwi fixtures")] == [kiwi.id]
        node = other.store.get(kiwi.id)
        assert node is not None
        other.delete(kiwi.id)
        other.store.put(node)
        assert [h.node.id for h in mem.find("kiwi fixtures")] == [kiwi.id]
        assert mem.store.lexical_state()[0] == mem.store.revision()  # type: ignore[attr-defined]


def test_a_find_reads_what_it_needs_not_the_namespace(postgres_dsn: str) -> None:
    session, questions = _locomo_session()
    with cx.Memory(postgres_dsn, namespace="t", embedder=None) as mem:
        mem.ingest(session, verbatim=True)
        mem.find(questions[0])
        with cx.Memory(postgres_dsn, namespace="t", embedder=None) as fresh:
            reads: list[Any] = []
            every = fresh.store.nodes

            def nodes(**kw: Any) -> list[Node]:
                reads.append(kw)
                return every(**kw)

            fresh.store.nodes = nodes  # type: ignore[method-assign]
            for q in questions[:20]:
                fresh.find(q)
            assert reads == []


def test_a_new_index_version_rebuilds_the_index(
    postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with cx.Memory(postgres_dsn, namespace="t", embedder=None) as mem:
        note = mem.remember("Release notes go out with the quarterly pipeline", type="decision")
        assert [h.node.id for h in mem.find("release notes")] == [note.id]
        assert mem._db is not None and mem._db.rebuilt == 1
        monkeypatch.setattr(_db_search, "INDEX_VERSION", "lexical-test")
        assert [h.node.id for h in mem.find("quarterly pipeline")] == [note.id]
        assert mem._db.rebuilt == 2
        assert mem.store.lexical_state()[1] == "lexical-test"  # type: ignore[attr-defined]


def test_database_search_is_refused_where_it_cannot_rank(tmp_path: Path, postgres_dsn: str) -> None:
    with pytest.raises(InvalidArgument, match="keeps no search index"):
        cx.Memory(tmp_path / "m.db", embedder=None, search="database")
    with pytest.raises(InvalidArgument, match="ranks lexically"):
        cx.Memory(postgres_dsn, namespace="t", embedder=_Ones(), search="database")
    with cx.Memory(postgres_dsn, namespace="t", embedder=_Ones()) as hybrid:
        assert hybrid.search_mode == "engine"  # the dense channel ranks here
    with pytest.raises(InvalidArgument, match="search is"):
        cx.Memory(tmp_path / "m.db", embedder=None, search="sql")  # type: ignore[arg-type]
    with cx.Memory(tmp_path / "m.db", embedder=None) as lite:
        assert lite.search_mode == "engine"


def test_answer_kinds_are_the_boosts_bits() -> None:
    from ctxsdk.session.kernel import answer_kinds

    assert answer_kind("hello there") == 0
    assert answer_kind("When did Melanie paint?") & answer_kinds("in 2022") != 0
    assert answer_kind("Where is to_native_string defined?") & answer_kinds("see src/x.py")
    assert answer_kind("How many dogs?") & answer_kinds("three dogs") != 0


def test_cjk_text_is_searched_in_the_database_as_the_engine_searches_it(
    postgres_dsn: str,
) -> None:
    """Chinese and Japanese memories, and queries mixing them with English: the terms are
    the engine's tokenizer's (character bigrams), so the database finds what it finds."""
    texts = [
        ("我们下周五发布新版本", "decision"),
        ("发布之前必须跑完全部集成测试", "preference"),
        ("数据库迁移脚本在周三失败了，回滚后修好", "observation"),
        ("用户希望日志保留三十天", "preference"),
        ("リリースは金曜日の夜に行う", "decision"),
        ("The release build uses the arm64 runner", "observation"),
    ]
    queries = [
        "发布新版本",
        "集成测试",
        "数据库迁移失败",
        "日志保留多久",
        "金曜日のリリース",
        "release 发布",
        "arm64 runner 测试",
    ]
    with (
        cx.Memory(postgres_dsn, namespace="cjk", embedder=None) as db,
        cx.Memory(postgres_dsn, namespace="cjk", embedder=None, search="engine") as engine,
    ):
        for text, kind in texts:
            db.remember(text, type=kind)
        found = 0
        for q in queries:
            assert _hits(db, q) == _hits(engine, q), q
            found += bool(_hits(db, q))
        assert found >= len(queries) - 1


def test_a_node_whose_text_now_has_no_terms_ranks_as_the_engine_ranks_it(
    postgres_dsn: str,
) -> None:
    """Lines of one conversation; one's text is put again as nothing but punctuation (no
    index terms), then deleted and put again at the end of the conversation between two
    finds (schema version 6 knew such a node only by its terms, so its old neighbours kept
    naming it and lifted it). Every find answers as the engine's."""
    import dataclasses

    def line(i: int, text: str, seq: int) -> Node:
        source = Source("s1", seq, "", "import")
        return Node(id=f"o{i}", type="observation", name="-", text=text, sources=(source,))

    queries = ["kiwi", "mango", "zeppelin", "kiwi zeppelin mango", "fixtures runner"]
    with (
        cx.Memory(postgres_dsn, namespace="t", embedder=None) as db,
        cx.Memory(postgres_dsn, namespace="t", embedder=None, search="engine") as engine,
        cx.Memory(postgres_dsn, namespace="t", embedder=None) as other,
    ):
        texts = ["kiwi fixtures load", "pears ripen late", "zeppelin runner arm64", "mango"]
        for i, text in enumerate(texts):
            db.store.put(line(i, text, i))
        before = {q: _hits(db, q) for q in queries}
        assert before == {q: _hits(engine, q) for q in queries}
        assert [h[0] for h in before["kiwi"]] == ["o0", "o1"]  # o1 is beside o0

        blank = other.store.get("o1")
        assert blank is not None
        other.store.put(dataclasses.replace(blank, text="!!! ... ?"))
        assert {q: _hits(db, q) for q in queries} == {q: _hits(engine, q) for q in queries}
        assert db.find("pears").hits == ()
        state = db.store.lexical_state()  # type: ignore[attr-defined]
        assert state[2:] == (4, 3 + 0 + 3 + 1)

        other.delete("o1")
        other.store.put(
            dataclasses.replace(blank, text="!!! ... ?", sources=(Source("s1", 9, "", "import"),))
        )
        after = {q: _hits(db, q) for q in queries}
        assert after == {q: _hits(engine, q) for q in queries}
        assert [h[0] for h in after["kiwi"]] == ["o0", "o2"]  # o1 is no longer beside o0
        assert db.store.lexical_state()[2:] == (4, 7)  # type: ignore[attr-defined]
