"""One conformance suite for every Memory store: written once against the store protocol,
run on ``SQLiteStore`` (a file under ``tmp_path``) and on ``PostgresStore`` (a fresh database
of the session's real server, one namespace of it).

A test receives ``store`` (a fresh store) and, when it must close and open the same store
again or hold two of it at once, ``reopen`` (the same file, or the same DSN and namespace).
Concurrency and crashes use real ``multiprocessing`` (spawn) children, each opening the
store itself from its spec (a path, or ``DSN#namespace``): four writers lose nothing; a
reader never sees half a batch; a child SIGKILLed in the middle of a large batch leaves the
last committed state. Where a test needs a lock held from outside the store, it takes it the
way each database has it: a raw ``BEGIN IMMEDIATE`` on the file, or a raw transaction holding
the namespace's ``ctxsdk.revisions`` row ``FOR UPDATE``.

Then what only a server store has: namespaces kept apart by the database itself, for any
SQL a team member's role runs (the members connect as their own login roles: the tables'
owner and superusers bypass row-level security); two ``Memory`` objects in two processes
seeing each other's writes; and parity: the same real sessions ingested into both stores give
the same graph and the same search answers.
"""

from __future__ import annotations

import itertools
import json
import multiprocessing as mp
import os
import re
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import ctxsdk as cx
from ctxsdk.errors import InvalidArgument, LockHeld, NamespaceDenied, NotFound, WriteError
from ctxsdk.memory._graph import to_networkx
from ctxsdk.memory._model import Edge, Node, Source, node_uri
from ctxsdk.memory._postgres import PostgresStore, is_postgres_url
from ctxsdk.memory._sqlite import SQLiteStore
from ctxsdk.memory._store import MaintainedStore, MemoryStore

if TYPE_CHECKING:
    import psycopg

    from ctxsdk.testing import LocalPostgres

CTX = mp.get_context("spawn")
JOIN = 120  # seconds a child may take before the test calls it hung
NAMESPACE = "conformance"

Store = SQLiteStore | PostgresStore


def _entity(name: str, **kw: Any) -> Node:
    return Node(id="", type="entity", name=name, **kw)


# --- the stores: a spec names one, and anyone (a child process too) opens it from that ------


def open_store(spec: str, *, create: bool = True, timeout: float = 30.0) -> Store:
    """The store ``spec`` names: a SQLite file path, or ``postgresql://...#namespace``."""
    if is_postgres_url(spec):
        dsn, _, namespace = spec.rpartition("#")
        return PostgresStore(dsn, namespace=namespace, create=create, timeout=timeout)
    return SQLiteStore(spec, create=create, timeout=timeout)


def _dsn(spec: str) -> str:
    return spec.rpartition("#")[0]


@pytest.fixture(params=["sqlite", "postgres"])
def spec(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where the test's store lives: a file in ``tmp_path``, or a namespace of a fresh
    PostgreSQL database (skipped without a server, failed under ``CI=true``)."""
    if request.param == "sqlite":
        return str(tmp_path / "memory.db")
    dsn: str = request.getfixturevalue("postgres_dsn")
    return f"{dsn}#{NAMESPACE}"


@pytest.fixture
def store(spec: str) -> Iterator[Store]:
    """A fresh store of each kind."""
    s = open_store(spec)
    yield s
    s.close()


@pytest.fixture
def reopen(spec: str) -> Iterator[Callable[..., Store]]:
    """``reopen(create=..., timeout=...)``: the test's store opened again (closed after it)."""
    opened: list[Store] = []

    def again(*, create: bool = True, timeout: float = 30.0) -> Store:
        s = open_store(spec, create=create, timeout=timeout)
        opened.append(s)
        return s

    yield again
    for s in opened:
        s.close()


@contextmanager
def _write_lock_held(spec: str) -> Iterator[None]:
    """Another connection holding the store's write lock, the database's own way."""
    if not is_postgres_url(spec):
        holder = sqlite3.connect(spec, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        return
    import psycopg

    with psycopg.connect(_dsn(spec)) as conn:
        row = conn.execute(
            "SELECT revision FROM ctxsdk.revisions WHERE namespace = %s FOR UPDATE",
            (spec.rpartition("#")[2],),
        ).fetchone()
        assert row is not None, "the namespace has no revisions row to hold"
        try:
            yield
        finally:
            conn.rollback()


def _integrity(spec: str) -> str:
    """The database's own structural check: SQLite's ``PRAGMA integrity_check``; on
    PostgreSQL amcheck over every table and index of the schema. ``"ok"`` when sound."""
    if not is_postgres_url(spec):
        db = sqlite3.connect(spec)
        try:
            return str(db.execute("PRAGMA integrity_check").fetchone()[0])
        finally:
            db.close()
    import psycopg

    problems: list[str] = []
    with psycopg.connect(_dsn(spec), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS amcheck")
        tables = conn.execute(
            "SELECT c.oid::regclass::text FROM pg_class c JOIN pg_namespace n "
            "ON n.oid = c.relnamespace WHERE n.nspname = 'ctxsdk' AND c.relkind = 'r'"
        ).fetchall()
        for (table,) in tables:
            for row in conn.execute("SELECT * FROM verify_heapam(%s::regclass)", (table,)):
                problems.append(f"{table}: {row}")
        indexes = conn.execute(
            "SELECT c.oid::regclass::text FROM pg_class c JOIN pg_namespace n "
            "ON n.oid = c.relnamespace JOIN pg_am a ON a.oid = c.relam "
            "WHERE n.nspname = 'ctxsdk' AND c.relkind = 'i' AND a.amname = 'btree'"
        ).fetchall()
        for (index,) in indexes:
            conn.execute("SELECT bt_index_parent_check(%s::regclass, true)", (index,))
    return "; ".join(problems) or "ok"


def _join(*procs: Any) -> None:
    for p in procs:
        p.join(JOIN)
        assert p.exitcode == 0, f"child {p.name} exited with {p.exitcode}"


# --- round trips ---------------------------------------------------------------------------


def test_is_a_maintained_memory_store(store: Store, spec: str) -> None:
    assert isinstance(store, MemoryStore) and isinstance(store, MaintainedStore)
    if is_postgres_url(spec):
        assert store.location.endswith(f"#{NAMESPACE}") and "@" in store.location
    else:
        assert store.location == str(Path(spec).absolute())


def test_every_node_field_round_trips_through_a_reopen(
    store: Store, reopen: Callable[..., Store]
) -> None:
    long_text = "长文本 with emoji 🧠 " * 5000
    full = Node(
        id="",
        type="decision",
        name="采用方案 B — «AuthGateway»",
        text=long_text,
        aliases=("方案B", "plan-b", ""),
        uri="ctx://decision/plan-b",
        sources=(
            Source(session="s-1", seq=42, quote="就用这个 🙂", via="rule"),
            Source(quote="typed in"),
        ),
        until="下周",
        until_at="2026-12-08T00:00:00.000Z",
        fail="pytest 失败",
        fix="pin 版本",
        status="archived",
        created_at="2026-01-02T03:04:05.678Z",
        extra={"kind": "checkpoint", "seq": 7, "nested": {"k": ["v", 1, None]}},
    )
    empty = Node(id="given-id", type="observation", name="")
    a = store.put(full)
    b = store.put(empty)
    store.close()
    assert a.id.startswith("n") and len(a.id) == 20
    assert a.created_at == full.created_at  # a given creation time is kept (imports)
    assert a.updated_at.endswith("Z") and len(a.updated_at) == len("2026-01-02T03:04:05.678Z")
    assert b.id == "given-id" and b.uri == node_uri("observation", "given-id")
    assert b.created_at == b.updated_at
    s = reopen(create=False)
    assert s.get(a.id) == a
    assert s.get(b.id) == b
    assert s.by_uri("ctx://decision/plan-b") == a
    assert s.get("nope") is None and s.by_uri("ctx://x/none") is None
    got = s.get(a.id)
    assert got is not None and got.text == long_text and got.extra["nested"]["k"][1] == 1


def test_replace_keeps_created_at_and_edges_and_stamps_updated_at(store: Store) -> None:
    a = store.put(_entity("A"))
    b = store.put(_entity("B"))
    store.link(Edge(a.id, b.id, "about"))
    again = store.put(Node(id=a.id, type="entity", name="A2", uri=a.uri, created_at="1999"))
    assert again.created_at == a.created_at
    assert again.updated_at >= a.updated_at
    assert store.get(a.id) == again and again.name == "A2"
    assert [e.label for e in store.edges(src=a.id)] == ["about"]  # an upsert, not a delete


def test_a_taken_uri_is_refused_and_nothing_written(store: Store) -> None:
    a = store.put(_entity("A", uri="ctx://entity/shared"))
    before = store.revision()
    with pytest.raises(InvalidArgument, match=a.id):
        store.put(_entity("B", uri="ctx://entity/shared"))
    assert [n.name for n in store.nodes()] == ["A"]
    assert store.revision() == before
    with pytest.raises(InvalidArgument, match="unknown node type"):
        store.put(Node(id="", type="planet", name="x"))  # type: ignore[arg-type]


def test_edges_touching_is_every_edge_of_the_nodes_once_in_order(store: Store) -> None:
    # What find reads in one call must be what a query per node would read: the edges into
    # and out of each node (a loop counts for both), in (src, dst, label) order, each once.
    import random

    from ctxsdk.memory._model import EDGE_LABELS

    rng = random.Random(11)
    ids = [store.put(_entity(f"e{i}")).id for i in range(12)]
    for _ in range(40):
        store.link(Edge(rng.choice(ids), rng.choice(ids), rng.choice(EDGE_LABELS)))
    store.link(Edge(ids[0], ids[0], "about"))
    for pick in (ids[:1], ids[3:7], ids, [ids[2], "no-such-node"], []):
        expected = {
            (e.src, e.dst, e.label): e
            for nid in pick
            for e in (*store.edges(dst=nid), *store.edges(src=nid))
        }
        got = store.edges_touching(pick)
        assert got == [expected[k] for k in sorted(expected)]
    assert store.edges_touching(ids) == store.edges()


def test_edges_link_is_idempotent_unlink_and_cascade(store: Store) -> None:
    a, b, c = (store.put(_entity(n)) for n in "ABC")
    assert store.link(Edge(a.id, b.id, "about", 1.0))
    assert not store.link(Edge(a.id, b.id, "about", 0.2))  # same src/dst/label: kept as was
    assert store.link(Edge(a.id, b.id, "same_as", 0.5))
    assert store.link(Edge(c.id, b.id, "decided"))
    assert store.link(Edge(b.id, c.id, "fixed", 0.9))
    (ab,) = store.edges(src=a.id, labels=["about"])
    assert ab.weight == 1.0 and ab.created_at
    assert [(e.src, e.label) for e in store.edges(dst=b.id)] == sorted(
        [(a.id, "about"), (a.id, "same_as"), (c.id, "decided")]
    )
    assert store.edges(labels=[]) == []
    assert len(store.edges()) == 4
    with pytest.raises(NotFound, match="no node 'ghost'"):
        store.link(Edge(a.id, "ghost", "about"))
    with pytest.raises(InvalidArgument, match="finite"):
        store.link(Edge(a.id, c.id, "about", float("nan")))
    with pytest.raises(InvalidArgument, match="unknown edge label"):
        store.link(Edge(a.id, b.id, "likes"))  # type: ignore[arg-type]
    assert store.unlink(a.id, b.id, "same_as")
    assert not store.unlink(a.id, b.id, "same_as")
    assert store.delete(b.id) and not store.delete(b.id)
    assert store.edges() == []  # every edge into or out of b went with it
    assert [n.name for n in store.nodes()] == ["A", "C"]


def test_nodes_order_filters_and_count(store: Store) -> None:
    ids = ["n3", "n1", "n2", "n0"]
    kinds = ["entity", "decision", "entity", "preference"]
    for i, t in zip(ids, kinds, strict=True):
        store.put(Node(id=i, type=t, name=i, status="archived" if i == "n0" else "active"))  # type: ignore[arg-type]
    assert [n.id for n in store.nodes()] == ["n1", "n2", "n3"]
    assert [n.id for n in store.nodes(include_archived=True)] == ["n0", "n1", "n2", "n3"]
    assert [n.id for n in store.nodes(types={"entity"})] == ["n2", "n3"]
    assert store.nodes(types=[]) == []
    counts = store.count()
    assert counts["entity"] == 2 and counts["decision"] == 1 and counts["preference"] == 0
    assert store.count(include_archived=True)["preference"] == 1


def test_ids_order_by_bytes_not_by_a_locale(store: Store) -> None:
    """Both stores order ids as SQLite compares text: byte by byte (upper case before lower
    case, ASCII before the rest), whatever collation a server database was made with."""
    ids = ["b", "B", "a", "_", "Z", "é", "e", "10", "9"]
    for i in ids:
        store.put(Node(id=i, type="entity", name=i))
    want = sorted(ids, key=lambda s: s.encode())
    assert [n.id for n in store.nodes()] == want
    assert [e.dst for e in _link_all(store, ids)] == want


def _link_all(store: Store, ids: list[str]) -> list[Edge]:
    for i in ids:
        store.link(Edge("a", i, "about"))
    return store.edges(src="a")


def test_meta_round_trip_and_delete(store: Store) -> None:
    assert store.get_meta("settings") is None
    value = {"recallMode": "anchor", "topK": 8, "名字": ["é", 1.5, True, None]}
    store.set_meta("settings", value)
    assert store.get_meta("settings") == value
    store.set_meta("settings", None)
    assert store.get_meta("settings") is None
    with pytest.raises(InvalidArgument, match="JSON"):
        store.set_meta("bad", {1, 2})
    with pytest.raises(InvalidArgument, match="revision"):
        store.set_meta("__revision__", 0)


def test_vectors_go_with_their_node(store: Store) -> None:
    a = store.put(_entity("A", text="alpha"))
    b = store.put(_entity("B"))
    blob = bytes(range(16))
    rows = [(a.id, "h1", blob), (b.id, "h2", blob), ("ghost", "h", blob)]
    assert store.put_vectors("m", rows) == 2  # the ghost's row is skipped
    assert store.vectors("m") == {a.id: ("h1", blob), b.id: ("h2", blob)}
    assert store.vectors("m", [b.id]) == {b.id: ("h2", blob)} and store.vectors("other") == {}
    store.put(Node(id=a.id, type="entity", name="A", text="alpha", uri=a.uri, status="archived"))
    assert a.id in store.vectors("m")  # the indexed text is the same: the vector stays
    store.put(Node(id=a.id, type="entity", name="A", text="changed", uri=a.uri))
    assert a.id not in store.vectors("m")  # a new text: the old vector is dropped
    assert store.delete(b.id) and store.vectors("m") == {}


def test_rows_update_load_and_compact(store: Store) -> None:
    """The maintenance side (``Memory.scrub``, copies): rows as stored, exact updates, rows
    loaded back exactly, and compaction."""
    src = Source(session="s", seq=1, quote="q")
    a = store.put(_entity("A", text="alpha", aliases=("al",), sources=(src,), extra={"k": [1]}))
    b = store.put(_entity("B"))
    store.link(Edge(a.id, b.id, "about", 0.5))
    store.set_meta("settings", {"topK": 3})
    store.put_vectors("m", [(a.id, "h", b"\x00" * 4)])
    nodes = store.rows("nodes")
    assert [r["id"] for r in nodes] == sorted([a.id, b.id])
    first = nodes[[r["id"] for r in nodes].index(a.id)]
    assert first["aliases"] == ["al"] and first["extra"] == {"k": [1]}
    assert first["sources"] == [src.to_json()] and first["until"] is None
    (edge,) = store.rows("edges")
    assert (edge["src"], edge["dst"], edge["label"], edge["weight"]) == (a.id, b.id, "about", 0.5)
    assert store.rows("meta") == [{"key": "settings", "value": {"topK": 3}}]  # no counter
    with pytest.raises(InvalidArgument):
        store.rows("vectors")

    r = store.revision()
    store.update("nodes", (a.id,), {"name": "A!", "text": "beta"})
    got = store.get(a.id)
    assert got is not None and (got.name, got.text) == ("A!", "beta")
    assert got.updated_at == a.updated_at  # exactly: no time stamped
    assert store.revision() != r
    assert store.vectors("m") == {}  # its indexed text changed
    store.update("meta", ("settings",), {"value": {"topK": 4}})
    assert store.get_meta("settings") == {"topK": 4}
    with pytest.raises(NotFound):
        store.update("nodes", ("ghost",), {"name": "x"})
    with pytest.raises(InvalidArgument):
        store.update("nodes", (a.id,), {"type": "decision"})
    with pytest.raises(WriteError):
        store.update("nodes", (a.id,), {"uri": b.uri})  # taken
    assert store.get(a.id) == got

    saved = {t: store.rows(t) for t in ("nodes", "edges", "meta")}
    r = store.revision()
    with store.batch():
        assert store.delete(a.id) and store.delete(b.id)
        store.set_meta("settings", None)
        assert store.load("nodes", saved["nodes"]) == 2
        assert store.load("edges", saved["edges"]) == 1
        assert store.load("meta", saved["meta"]) == 1
    assert {t: store.rows(t) for t in saved} == saved
    assert store.get(a.id) == got and store.revision() != r
    with pytest.raises(InvalidArgument):
        store.load("nodes", saved["nodes"][:1])  # a row that would replace one
    assert {t: store.rows(t) for t in saved} == saved
    with store.batch(), pytest.raises(InvalidArgument):
        store.compact()
    assert store.compact() is True  # one connection, and the tables' owner
    assert {t: store.rows(t) for t in saved} == saved


def test_a_thread_reads_a_whole_batch_or_none_of_it(store: Store) -> None:
    """Another thread of the same store object, reading while a batch is half written, sees
    the state before it or after it (a store may make it wait), never the half."""
    import threading

    half, read = threading.Event(), threading.Event()
    seen: list[list[str]] = []

    def reader() -> None:
        assert half.wait(JOIN)
        seen.append(sorted(n.name for n in store.nodes()))
        read.set()

    th = threading.Thread(target=reader)
    th.start()
    with store.batch():
        store.put(_entity("first"))
        half.set()
        read.wait(2)  # a store whose readers wait for the batch answers after it
        store.put(_entity("second"))
    th.join(JOIN)
    assert seen in ([[]], [["first", "second"]])


def test_keys_round_trip_up_to_their_limit_and_are_refused_alike_past_it(store: Store) -> None:
    """Ids, uris and meta keys (4 kB-ish text that does not compress) are kept up to
    ``KEY_BYTES`` on every store (PostgreSQL indexes a key in one btree entry); one byte
    more is ``InvalidArgument`` naming the limit, with nothing written, on every store."""
    import random

    from ctxsdk.memory._rows import KEY_BYTES

    def key(kind: str, prefix: str = "", extra: int = 0) -> str:
        size = KEY_BYTES[kind] - len(prefix) + extra
        return prefix + random.Random(size).randbytes(size).hex()[:size]

    uri = key("uri", "ctx://imported/")
    a = store.put(Node(id="", type="entity", name="a", uri=uri))
    b = store.put(Node(id=key("id"), type="entity", name="b"))
    store.set_meta(key("meta key"), {"v": 1})
    assert store.by_uri(uri) == a and store.get(key("id")) == b
    assert store.link(Edge(a.id, b.id, "about"))
    assert store.get_meta(key("meta key")) == {"v": 1}
    r = store.revision()
    for write, kind in (
        (lambda: store.put(Node(id="", type="entity", name="c", uri=key("uri", "x", 1))), "uri"),
        (lambda: store.put(Node(id=key("id", "", 1), type="entity", name="d")), "id"),
        (lambda: store.set_meta(key("meta key", "", 1), 1), "meta key"),
    ):
        with pytest.raises(InvalidArgument, match=f"a {kind} is at most {KEY_BYTES[kind]} bytes"):
            write()
    assert store.revision() == r and len(store.nodes()) == 2


def test_a_nul_character_is_remembered_alike(spec: str, tmp_path: Path) -> None:
    """The same text remembered gives the same memory, whatever the store: the door drops a
    U+0000 (PostgreSQL text cannot hold one), so both keep the text without it."""
    with _open_memory(spec) as mem:
        node = mem.remember("Run the linter\x00 before each commit", type="preference")
        assert mem.get(node.id) == node
        assert node.text == "Run the linter before each commit"
    with cx.Memory(tmp_path / "reference.db", embedder=None) as ref:
        assert ref.remember("Run the linter\x00 before each commit", type="preference").text == (
            node.text
        )


# --- transactions --------------------------------------------------------------------------


def test_batch_is_all_or_nothing(store: Store) -> None:
    store.put(_entity("before"))
    with pytest.raises(RuntimeError, match="boom"), store.batch():
        a = store.put(_entity("A"))
        store.put(_entity("B"))
        store.link(Edge(a.id, a.id, "same_as"))
        store.set_meta("k", 1)
        assert len(store.nodes()) == 3  # the batch sees its own writes
        raise RuntimeError("boom")
    assert [n.name for n in store.nodes()] == ["before"]
    assert store.edges() == [] and store.get_meta("k") is None


def test_nested_batches_commit_once_and_roll_back_inner_only(
    store: Store, reopen: Callable[..., Store]
) -> None:
    s, other = store, reopen()
    with s.batch():
        s.put(_entity("outer"))
        with s.batch():
            s.put(_entity("inner-kept"))
        with pytest.raises(KeyError), s.batch():
            s.put(_entity("inner-dropped"))
            raise KeyError("x")
        assert other.nodes() == []  # nothing visible before the outermost commit
    assert sorted(n.name for n in other.nodes()) == ["inner-kept", "outer"]
    with pytest.raises(ValueError), s.batch():
        with s.batch():
            s.put(_entity("nested-but-outer-fails"))
        raise ValueError
    assert len(other.nodes()) == 2


def _put_one(spec: str, name: str) -> None:
    with open_store(spec) as s:
        s.put(_entity(name))


def test_revision_changes_on_every_write_and_only_then(store: Store, spec: str) -> None:
    s = store
    r0 = s.revision()
    a = s.put(_entity("A"))
    r1 = s.revision()
    assert r1 != r0
    assert s.link(Edge(a.id, a.id, "same_as"))
    r2 = s.revision()
    assert r2 != r1
    assert not s.link(Edge(a.id, a.id, "same_as"))  # nothing written
    assert not s.unlink(a.id, a.id, "about")
    assert not s.delete("ghost")
    s.set_meta("absent", None)  # deleting what is not there writes nothing
    with s.batch():
        s.nodes()
    assert s.revision() == r2
    with pytest.raises(RuntimeError), s.batch():
        s.put(_entity("rolled back"))
        raise RuntimeError
    assert s.revision() == r2
    p = CTX.Process(target=_put_one, args=(spec, "from-child"), name="put-one")
    p.start()
    _join(p)
    assert s.revision() != r2
    assert "from-child" in {n.name for n in s.nodes()}


def _changed(store: Store, since: int) -> tuple[list[str], list[str]]:
    got = store.changes(since)
    assert got is not None
    return [n.id for n in got.nodes], got.gone


def test_changes_are_the_nodes_written_and_deleted_since_a_revision(
    store: Store, spec: str
) -> None:
    s = store
    assert s.changes(-1) is None  # nothing read yet: the reader reads every node
    a, b, c = (s.put(_entity(n)) for n in "ABC")
    r0 = s.revision()
    assert _changed(s, r0) == ([], [])
    assert {n.id for n in s.changes(0).nodes} == {a.id, b.id, c.id}  # type: ignore[union-attr]
    b2 = s.put(replace(b, text="bravo"))
    s.put(replace(c, status="archived"))  # an archived node is a change like any other
    assert s.delete(a.id)
    assert s.link(Edge(b.id, c.id, "about"))  # an edge is not a node: none listed for it
    with pytest.raises(RuntimeError), s.batch():
        s.put(_entity("rolled back"))
        s.delete(b.id)
        raise RuntimeError
    got = s.changes(r0)
    assert got is not None
    assert [n.id for n in got.nodes] == sorted([b.id, c.id]) and got.gone == [a.id]
    assert next(n for n in got.nodes if n.id == b.id) == s.get(b.id) == b2
    assert next(n for n in got.nodes if n.id == c.id).status == "archived"
    r1 = s.revision()
    assert _changed(s, r1) == ([], [])
    # a deleted id written again is a node, not a tombstone; a second delete is one again
    a2 = s.put(replace(a, text="back"))
    assert _changed(s, r1) == ([a.id], [])
    r2 = s.revision()
    assert s.delete(a.id)
    assert _changed(s, r2) == ([], [a.id])
    assert _changed(s, r1) == ([], [a.id])
    assert a2.id == a.id
    # maintenance writes are changes too: an exact update, and rows loaded back
    r3 = s.revision()
    s.update("nodes", (b.id,), {"text": "scrubbed"})
    assert _changed(s, r3) == ([b.id], [])
    saved = [row for row in s.rows("nodes") if row["id"] == b.id]
    r4 = s.revision()
    with s.batch():
        assert s.delete(b.id)
        assert s.load("nodes", saved) == 1
    assert _changed(s, r4) == ([b.id], [])
    # another process's write is seen by this object's next read
    r5 = s.revision()
    p = CTX.Process(target=_put_one, args=(spec, "from-child"), name="put-one")
    p.start()
    _join(p)
    nodes, gone = _changed(s, r5)
    assert [s.get(i).name for i in nodes] == ["from-child"] and gone == []  # type: ignore[union-attr]


def test_a_memory_kept_in_step_by_changes_finds_what_a_fresh_one_finds(spec: str) -> None:
    """A ``Memory`` whose cache was filled before other writers remembered, edited,
    archived and deleted reads only the changes, and ends where one opened afresh starts."""
    queries = ["zeppelin runner", "release notes", "kiwi fixtures schema", "friday deploy"]
    with _open_memory(spec) as mem, _open_memory(spec) as other:
        first = [
            mem.remember(text, type=kind)
            for text, kind in [
                ("Zeppelin builds need the arm64 runner", "decision"),
                ("Release notes go out with the quarterly pipeline", "decision"),
                ("Kiwi fixtures load before the schema tests", "preference"),
                ("The deploy froze on Friday after the schema change", "observation"),
            ]
        ]
        for q in queries:
            mem.find(q)  # the cache and its index are filled
        other.remember("Zeppelin runners moved to the new arm64 pool", type="observation")
        other.edit(first[1].id, text="Release notes go out with every monthly pipeline")
        other.archive(first[2].id)
        other.delete(first[3].id)
        other.remember("Friday deploys need two reviewers", type="preference")
        full_reads: list[dict[str, Any]] = []
        every_node = mem.store.nodes

        def nodes(**kw: Any) -> list[Node]:
            full_reads.append(kw)
            return every_node(**kw)

        mem.store.nodes = nodes  # type: ignore[method-assign]
        with _open_memory(spec) as fresh:
            for q in queries:
                kept = [(h.node.id, h.node.text, h.score) for h in mem.find(q, top_k=10)]
                assert kept == [(h.node.id, h.node.text, h.score) for h in fresh.find(q, top_k=10)]
            assert list(mem._nodes) == list(fresh._nodes)
        assert full_reads == []  # the changes alone brought mem in step


def test_threads_share_one_store(store: Store, spec: str) -> None:
    import threading

    def work(t: int) -> None:
        for i in range(50):
            with store.batch():
                a = store.put(_entity(f"t{t}-{i}"))
                store.link(Edge(a.id, a.id, "same_as"))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(store.nodes()) == 200 and len(store.edges()) == 200
    assert _integrity(spec) == "ok"


def test_a_held_write_lock_gives_lock_held_and_writes_nothing(
    store: Store, spec: str, reopen: Callable[..., Store]
) -> None:
    store.close()
    with _write_lock_held(spec):
        s = reopen(timeout=0.05)
        assert s.nodes() == []  # reads go on while another connection writes
        with pytest.raises(LockHeld, match=re.escape(s.location)):
            s.put(_entity("blocked"))
        s.close()
    s = reopen()
    assert s.nodes() == []
    s.put(_entity("later"))
    assert [n.name for n in s.nodes()] == ["later"]


def test_snapshot_reads_one_state_without_blocking_writers(
    store: Store, reopen: Callable[..., Store]
) -> None:
    s, other = store, reopen(timeout=0.05)
    s.put(_entity("A"))
    with s.snapshot():
        before = s.nodes()
        other.put(_entity("B"))  # no LockHeld: a snapshot takes no write lock
        other.set_meta("k", 1)
        assert s.nodes() == before and s.get_meta("k") is None
        with pytest.raises(InvalidArgument, match="snapshot"):
            s.put(_entity("C"))
    assert [n.name for n in s.nodes()] == ["A", "B"] and s.get_meta("k") == 1
    with s.batch():
        s.put(_entity("C"))
        with s.snapshot():  # inside a batch: the batch's own view
            assert len(s.nodes()) == 3
    assert len(other.nodes()) == 3


# --- networkx ------------------------------------------------------------------------------


def test_to_networkx_shape(store: Store) -> None:
    ws = store.put(Node(id="ws", type="workspace", name="ws"))
    a = store.put(Node(id="a", type="entity", name="AuthGateway", aliases=("AG",)))
    d = store.put(Node(id="d", type="decision", name="defer", until="Fri", until_at="2026-12-04"))
    old = store.put(Node(id="o", type="entity", name="old", status="archived"))
    store.link(Edge(d.id, a.id, "decided", 1.0))
    store.link(Edge(d.id, a.id, "about", 1.0))
    store.link(Edge(a.id, ws.id, "in_workspace", 0.15))
    store.link(Edge(old.id, a.id, "same_as", 0.5))
    g = to_networkx(store)
    assert g.is_directed() and g.is_multigraph()
    assert sorted(g.nodes) == ["a", "d", "ws"]
    assert g.nodes["d"]["until"] == "Fri" and g.nodes["d"]["until_at"] == "2026-12-04"
    assert g.nodes["a"]["type"] == "entity" and g.nodes["a"]["aliases"] == ["AG"]
    assert g.nodes["a"]["uri"] == a.uri and g.nodes["a"]["status"] == "active"
    assert sorted(g["d"]["a"]) == ["about", "decided"]
    assert g["a"]["ws"]["in_workspace"] == {"label": "in_workspace", "weight": 0.15}
    assert g.number_of_edges() == 3
    full = to_networkx(store, include_archived=True)
    assert "o" in full and full["o"]["a"]["same_as"]["weight"] == 0.5
    assert full.number_of_edges() == 4


# --- real processes ------------------------------------------------------------------------

WRITERS = 4
PER_WRITER = 200


def _writer(spec: str, wid: int, root: str, go: Any) -> None:
    """Add PER_WRITER nodes, each linked to the root and to the previous one; odd writers
    in batches of 10, even ones one transaction per call."""
    with open_store(spec) as s:
        go.wait(JOIN)
        prev: str | None = None
        for start in range(0, PER_WRITER, 10):
            if wid % 2:
                with s.batch():
                    prev = _write_ten(s, wid, start, root, prev)
            else:
                prev = _write_ten(s, wid, start, root, prev)


def _write_ten(s: Store, wid: int, start: int, root: str, prev: str | None) -> str | None:
    for i in range(start, start + 10):
        node = s.put(_entity(f"w{wid}-{i}", extra={"w": wid, "i": i}))
        s.link(Edge(node.id, root, "in_workspace", 0.15))
        if prev is not None:
            s.link(Edge(prev, node.id, "continues", 0.4))
        prev = node.id
    return prev


def test_four_writer_processes_lose_nothing(store: Store, spec: str) -> None:
    root = store.put(Node(id="", type="workspace", name="ws")).id
    go = CTX.Event()
    procs = [
        CTX.Process(target=_writer, args=(spec, w, root, go), name=f"writer-{w}")
        for w in range(WRITERS)
    ]
    for p in procs:
        p.start()
    go.set()
    _join(*procs)
    assert _integrity(spec) == "ok"
    s = store
    nodes = s.nodes()
    names = Counter(n.name for n in nodes)
    want = {f"w{w}-{i}" for w in range(WRITERS) for i in range(PER_WRITER)}
    assert set(names) == want | {"ws"} and max(names.values()) == 1
    assert len({n.id for n in nodes}) == len(nodes) == WRITERS * PER_WRITER + 1
    assert len(s.edges(dst=root, labels=["in_workspace"])) == WRITERS * PER_WRITER
    chain = s.edges(labels=["continues"])
    assert len(chain) == WRITERS * (PER_WRITER - 1)
    by_id = {n.id: n for n in nodes}
    for e in chain:  # each writer's chain links its own consecutive nodes
        a, b = by_id[e.src].extra, by_id[e.dst].extra
        assert a["w"] == b["w"] and b["i"] == a["i"] + 1


BATCHES = 12
PER_BATCH = 20


def _batch_writer(spec: str, mid: Any, ack: Any) -> None:
    """Each batch: half its nodes, then wait while the reader reads, then the rest and the
    meta counter; the reader's read lands inside an open write transaction."""
    with open_store(spec) as s:
        for k in range(1, BATCHES + 1):
            with s.batch():
                for i in range(PER_BATCH):
                    if i == PER_BATCH // 2:
                        mid.set()
                        assert ack.wait(JOIN)
                        ack.clear()
                    s.put(_entity(f"b{k}-{i}", extra={"batch": k}))
                s.set_meta("batches", k)


def _snapshot(s: Store) -> tuple[int, dict[int, int]]:
    with s.snapshot():  # the counter and the nodes from one state
        counter = s.get_meta("batches") or 0
        groups = Counter(int(n.extra["batch"]) for n in s.nodes())
    return counter, dict(groups)


def _batch_reader(spec: str, mid: Any, ack: Any, out: Any) -> None:
    seen = []
    with open_store(spec) as s:
        for _ in range(BATCHES):
            assert mid.wait(JOIN)
            mid.clear()
            seen.append(_snapshot(s))
            ack.set()
    out.put(seen)


def test_a_reader_process_never_sees_half_a_batch(store: Store, spec: str) -> None:
    mid, ack, out = CTX.Event(), CTX.Event(), CTX.Queue()
    writer = CTX.Process(target=_batch_writer, args=(spec, mid, ack), name="writer")
    reader = CTX.Process(target=_batch_reader, args=(spec, mid, ack, out), name="reader")
    reader.start()
    writer.start()
    seen = out.get(timeout=JOIN)
    _join(writer, reader)
    # At the middle of batch k the reader saw exactly batches 1..k-1, each whole.
    assert seen == [(k - 1, dict.fromkeys(range(1, k), PER_BATCH)) for k in range(1, BATCHES + 1)]
    assert _snapshot(store) == (BATCHES, dict.fromkeys(range(1, BATCHES + 1), PER_BATCH))


COMMITTED = 5
BIG = 400


def _big_text(i: int) -> str:
    """20 kB that no compressor shrinks much (PostgreSQL compresses long text; SQLite does
    not), so the half-written batch is megabytes on either database."""
    import random

    return f"{i}:" + random.Random(i).randbytes(10_000).hex()


def _crash_child(spec: str, conn: Any) -> None:
    """Commit a few nodes, then open a big batch, report from its middle and block there
    (the parent SIGKILLs it). On SQLite a tiny page cache makes it spill the batch's pages
    into the WAL before any commit, so the kill leaves uncommitted frames on disk."""
    with open_store(spec) as s:
        if isinstance(s, SQLiteStore):
            s._conn().execute("PRAGMA cache_size=8")
        for i in range(COMMITTED):
            s.put(_entity(f"kept-{i}"))
        with s.batch():
            for i in range(BIG):
                s.put(_entity(f"partial-{i}", text=_big_text(i)))
                if i == BIG // 2:
                    conn.send("mid-batch")
                    conn.recv()  # never answered: killed here, the batch open


def _uncommitted_bytes(spec: str) -> int:
    """How much of the open batch reached the database's files before any commit."""
    if not is_postgres_url(spec):
        return Path(spec + "-wal").stat().st_size
    import psycopg

    with psycopg.connect(_dsn(spec)) as conn:
        row = conn.execute("SELECT pg_total_relation_size('ctxsdk.nodes')").fetchone()
    assert row is not None
    return int(row[0])


@pytest.mark.skipif(not hasattr(os, "kill"), reason="needs SIGKILL")
def test_sigkill_mid_batch_leaves_the_last_committed_state(store: Store, spec: str) -> None:
    store.close()
    parent_end, child_end = CTX.Pipe()
    child = CTX.Process(target=_crash_child, args=(spec, child_end), name="crash")
    child.start()
    assert parent_end.poll(JOIN), "the child never reached the middle of its batch"
    assert parent_end.recv() == "mid-batch"
    with open_store(spec, timeout=0.05) as s, pytest.raises(LockHeld):
        s.put(_entity("while-held"))  # the open batch holds the write lock
    assert _uncommitted_bytes(spec) > 1_000_000  # the uncommitted batch did reach the disk
    child.kill()  # SIGKILL, this child only
    child.join(JOIN)
    assert child.exitcode == -9
    with open_store(spec) as s:
        names = [n.name for n in s.nodes()]
        assert sorted(names) == [f"kept-{i}" for i in range(COMMITTED)]
        s.put(_entity("after"))  # the write lock died with the child
        assert len(s.nodes()) == COMMITTED + 1
    assert _integrity(spec) == "ok"


# --- two Memory objects in two processes -------------------------------------------------


def _open_memory(spec: str) -> cx.Memory:
    if is_postgres_url(spec):
        dsn, _, namespace = spec.rpartition("#")
        return cx.Memory(dsn, namespace=namespace, embedder=None)
    return cx.Memory(spec, embedder=None)


def _texts(mem: cx.Memory, query: str) -> list[str]:
    return [h.node.text for h in mem.find(query, top_k=10)]


def _memory_peer(spec: str, conn: Any) -> None:
    """The other process: read the parent's memory, add one, then read the parent's next."""
    with _open_memory(spec) as mem:
        conn.send(_texts(mem, "quarterly pipeline"))
        mem.remember("Zeppelin builds need the arm64 runner", type="decision")
        conn.send("wrote")
        assert conn.recv() == "your turn"
        conn.send(_texts(mem, "kiwi fixtures"))


def test_two_memories_in_two_processes_see_each_others_writes(spec: str) -> None:
    parent_end, child_end = CTX.Pipe()
    with _open_memory(spec) as mem:
        mem.remember("Release notes go out with the quarterly pipeline", type="decision")
        assert not any("Zeppelin" in t for t in _texts(mem, "zeppelin arm64 runner"))
        child = CTX.Process(target=_memory_peer, args=(spec, child_end), name="peer")
        child.start()
        assert parent_end.poll(JOIN)
        assert "Release notes go out with the quarterly pipeline" in parent_end.recv()
        assert parent_end.poll(JOIN) and parent_end.recv() == "wrote"
        # the same Memory object, its cache filled before: the revision brings the write in
        assert "Zeppelin builds need the arm64 runner" in _texts(mem, "zeppelin arm64 runner")
        mem.remember("Kiwi fixtures load before the schema tests", type="preference")
        parent_end.send("your turn")
        assert parent_end.poll(JOIN)
        assert "Kiwi fixtures load before the schema tests" in parent_end.recv()
        _join(child)


def _first_opener(spec: str, k: int, go: Any) -> None:
    assert go.wait(JOIN)
    with _open_memory(spec) as mem:
        mem.remember(f"Opener {k} was here first", type="observation")


def test_processes_opening_a_new_memory_at_once_make_one(spec: str) -> None:
    """Four processes open a memory that does not exist yet (a new file; a database
    without the schema and the namespace) at the same moment: one memory, one root, every
    write kept."""
    go = CTX.Event()
    procs = [
        CTX.Process(target=_first_opener, args=(spec, k, go), name=f"opener-{k}") for k in range(4)
    ]
    for p in procs:
        p.start()
    go.set()
    _join(*procs)
    with open_store(spec, create=False) as s:
        assert [n.name for n in s.nodes(types=["workspace"], include_archived=True)] == [
            "workspace"
        ]
        texts = sorted(n.text for n in s.nodes(types=["observation"]))
        assert texts == [f"Opener {k} was here first" for k in range(4)]
    assert _integrity(spec) == "ok"


# --- namespaces kept apart by the database -------------------------------------------------

_team_numbers = itertools.count(1)


@dataclass
class Teams:
    """Namespaces ``a`` (role ``team_a``, login role ``alice``) and ``b`` (``team_b``,
    ``bob``) in one database; the role names carry a per-test suffix (roles are the
    server's, not the database's)."""

    server: LocalPostgres
    admin_dsn: str
    dbname: str
    suffix: str

    def role(self, name: str) -> str:
        return f"{name}_{self.suffix}"

    def dsn(self, who: str) -> str:
        return self.server.dsn(user=self.role(who), dbname=self.dbname)


@pytest.fixture
def teams(postgres_server: LocalPostgres, postgres_dsn: str) -> Iterator[Teams]:
    import psycopg

    from ctxsdk.memory._pg_schema import create_namespace

    dbname = postgres_dsn.rsplit("/", 1)[1]
    t = Teams(postgres_server, postgres_dsn, dbname, f"{dbname}_{next(_team_numbers)}")
    logins = {"alice": "team_a", "bob": "team_b"}
    with psycopg.connect(postgres_dsn, autocommit=True) as admin:
        for namespace, team in (("a", "team_a"), ("b", "team_b")):
            create_namespace(admin, namespace, role=t.role(team), where="test")
        for login, team in logins.items():
            admin.execute(f"CREATE ROLE {t.role(login)} LOGIN IN ROLE {t.role(team)}")
    yield t
    with psycopg.connect(postgres_dsn, autocommit=True) as admin:
        names = [t.role(n) for n in (*logins, *logins.values())]
        admin.execute(f"DROP OWNED BY {', '.join(names)}")
        for name in names:
            admin.execute(f"DROP ROLE {name}")


def _bobs_namespace(store: PostgresStore) -> dict[str, Any]:
    return {
        "nodes": store.rows("nodes"),
        "edges": store.rows("edges"),
        "meta": store.rows("meta"),
        "vectors": store.vectors("m"),
        "revision": store.revision(),
    }


def _refused(conn: psycopg.Connection[Any], sql: str, *params: Any) -> str:
    """Run ``sql`` as the connected role: it must be refused; returns what the server said."""
    import psycopg

    with pytest.raises(psycopg.errors.InsufficientPrivilege) as err:
        conn.execute(sql, params)
    return str(err.value)


_ROW_IN_B = (
    "INSERT INTO ctxsdk.nodes (namespace, id, type, name, uri, created_at, updated_at) "
    "VALUES ('b', 'planted', 'entity', 'planted', 'ctx://entity/planted', 't', 't')"
)


def test_one_namespace_cannot_read_or_change_another(teams: Teams) -> None:
    import psycopg

    with PostgresStore(teams.dsn("bob"), namespace="b", create=False) as bob:
        x = bob.put(_entity("bob-secret-kestrel", text="the vault code is 4417"))
        y = bob.put(_entity("bob-other"))
        bob.link(Edge(x.id, y.id, "about"))
        bob.set_meta("settings", {"topK": 3})
        bob.put_vectors("m", [(x.id, "h", b"\x00" * 16)])
        before = _bobs_namespace(bob)
    with PostgresStore(teams.dsn("alice"), namespace="a", create=False) as alice:
        mine = alice.put(_entity("alice-note"))
        alice.set_meta("mine", 1)  # a row of each table to try to move
        assert [n.name for n in alice.nodes()] == ["alice-note"]
        assert alice.compact() is False  # VACUUM FULL is the tables' owner's
    with pytest.raises(NamespaceDenied, match="'b'"):
        PostgresStore(teams.dsn("alice"), namespace="b")
    with pytest.raises(NamespaceDenied, match="'c'"):
        PostgresStore(teams.dsn("alice"), namespace="c")  # may not make a namespace either
    with psycopg.connect(teams.admin_dsn, autocommit=True) as admin:
        admin.execute("ANALYZE ctxsdk.nodes")

    notices: list[str] = []
    with psycopg.connect(teams.dsn("alice"), autocommit=True) as sql:
        sql.add_notice_handler(lambda d: notices.append(str(d.message_primary)))
        # reads: nothing of b, whatever the query asks for
        for table in ("nodes", "edges", "meta", "vectors", "revisions"):
            got = sql.execute(f"SELECT count(*) FROM ctxsdk.{table} WHERE namespace <> 'a'")
            assert got.fetchone() == (0,), table
        assert sql.execute("SELECT name FROM ctxsdk.nodes").fetchall() == [("alice-note",)]
        # a function of alice's own in the WHERE clause runs after the policy, never on b's rows
        sql.execute(
            "CREATE FUNCTION pg_temp.peek(text) RETURNS boolean LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE NOTICE 'saw %', $1; RETURN true; END $$"
        )
        sql.execute("SELECT id FROM ctxsdk.nodes WHERE pg_temp.peek(name || ' ' || text)")
        assert notices and not any("bob" in n or "4417" in n for n in notices), notices
        stats = sql.execute(
            "SELECT most_common_vals::text, histogram_bounds::text FROM pg_stats "
            "WHERE schemaname = 'ctxsdk'"
        ).fetchall()
        assert "kestrel" not in repr(stats)
        # changes: a member holds no table privilege but SELECT, so a hand-written write is
        # refused, to b and to a alike (the store writes through the owner's functions)
        for statement in (
            "UPDATE ctxsdk.nodes SET name = 'pwned' WHERE namespace = 'b'",
            "UPDATE ctxsdk.edges SET weight = 9 WHERE namespace = 'b'",
            "UPDATE ctxsdk.meta SET value = '0' WHERE namespace = 'b'",
            "UPDATE ctxsdk.vectors SET hash = 'x' WHERE namespace = 'b'",
            "UPDATE ctxsdk.revisions SET revision = 0 WHERE namespace = 'b'",
            "DELETE FROM ctxsdk.vectors WHERE namespace = 'b'",
            "DELETE FROM ctxsdk.edges WHERE namespace = 'b'",
            "DELETE FROM ctxsdk.meta WHERE namespace = 'b'",
            "DELETE FROM ctxsdk.nodes WHERE namespace = 'b'",
            "UPDATE ctxsdk.nodes SET text = text",
            "DELETE FROM ctxsdk.meta WHERE namespace = 'a'",
        ):
            assert "permission denied" in _refused(sql, statement), statement
        # refused: writing into b, moving a row there, changing who may use what
        assert "permission denied" in _refused(sql, _ROW_IN_B)
        _refused(sql, "INSERT INTO ctxsdk.meta (namespace, key, value) VALUES ('b', 'k', '1')")
        _refused(sql, "UPDATE ctxsdk.nodes SET namespace = 'b' WHERE id = %s", mine.id)
        _refused(sql, "UPDATE ctxsdk.meta SET namespace = 'b'")
        _refused(sql, "INSERT INTO ctxsdk.revisions (namespace) VALUES ('b2')")
        _refused(sql, "INSERT INTO ctxsdk.namespaces VALUES ('b2', NULL)")
        role_a, role_b = teams.role("team_a"), teams.role("team_b")
        _refused(sql, "UPDATE ctxsdk.namespaces SET role = %s WHERE namespace = 'b'", role_a)
        _refused(sql, "UPDATE ctxsdk.namespaces SET role = NULL WHERE namespace = 'b'")
        _refused(sql, "DELETE FROM ctxsdk.namespaces WHERE namespace = 'b'")
        _refused(sql, "TRUNCATE ctxsdk.nodes CASCADE")  # TRUNCATE would pass by every policy
        _refused(sql, "ALTER TABLE ctxsdk.nodes DISABLE ROW LEVEL SECURITY")
        _refused(sql, "DROP POLICY members ON ctxsdk.nodes")
        _refused(sql, f"SET ROLE {role_b}")
        _refused(sql, "UPDATE ctxsdk.schema_version SET version = 99")
        _refused(sql, "CREATE TABLE ctxsdk.mine (x int)")
    with PostgresStore(teams.dsn("bob"), namespace="b", create=False) as bob:
        assert _bobs_namespace(bob) == before
    with PostgresStore(teams.dsn("alice"), namespace="a", create=False) as alice:
        assert [n.name for n in alice.nodes()] == ["alice-note"]


def _write_calls(x: str, y: str) -> dict[str, tuple[str, tuple[Any, ...]]]:
    """One hand-written call of each write function, all of them on namespace ``b``."""
    node = ("planted", "entity", "planted", "", "[]", "ctx://entity/planted", "[]")
    return {
        "write_lock": ("%s", ()),
        "bump_revision": ("%s", ()),
        "put_node": ("%s" + ", %s" * 15, (*node, None, None, None, None, "active", "t", "t", "{}")),
        "delete_node": ("%s, %s", (x,)),
        "insert_edge": ("%s, %s, %s, %s, %s, %s", (y, x, "about", 1.0, "t")),
        "delete_edge": ("%s, %s, %s, %s", (x, y, "about")),
        "set_meta": ("%s, %s, %s", ("settings", "0")),
        "delete_meta": ("%s, %s", ("settings",)),
        "put_vector": ("%s, %s, %s, %s, %s", (x, "m", "x", b"\x01")),
        "delete_vectors": ("%s, %s", (x,)),
        "update_row": ("%s, %s, %s, %s, %s", ("nodes", [x], ["name"], ["pwned"])),
        "load_rows": ("%s, %s, %s::jsonb", ("meta", '[{"key": "k", "value": "1"}]')),
        "write_node": (
            "%s, %s" + ", %s" * 15,
            (False, *node, None, None, None, None, "active", "t", "t", "{}"),
        ),
        "write_vectors": (
            "%s, %s, %s::text[], %s::text[], %s::bytea[]",
            ("m", [x], ["x"], [b"\x01"]),
        ),
        "write_index": (
            "%s, %s, %s, %s, %s::text[], %s::integer[], %s::integer[], %s::text[], "
            "%s::float8[], %s::text[], %s::text[], %s::text[], %s::text[], %s::integer[], "
            "%s::text[]",
            (99, "v", True, [x], [1], [0], [None], [None], [None], [""], [x], ["pwned"], [1], [y]),
        ),
    }


def test_a_member_calling_a_write_function_for_another_namespace_is_refused(
    teams: Teams,
) -> None:
    """The write functions run as the owner, whom row-level security does not bind: each
    checks the calling login role first, so hand-written SQL reaches b through none of
    them (nor after SET ROLE, nor for a namespace that does not exist)."""
    import psycopg

    from ctxsdk.memory._pg_functions import WRITE_FUNCTIONS

    with PostgresStore(teams.dsn("bob"), namespace="b", create=False) as bob:
        x = bob.put(_entity("bob-secret-kestrel"))
        y = bob.put(_entity("bob-other"))
        bob.link(Edge(x.id, y.id, "about"))
        bob.set_meta("settings", {"topK": 3})
        bob.put_vectors("m", [(x.id, "h", b"\x00" * 16)])
        before = _bobs_namespace(bob)
    calls = _write_calls(x.id, y.id)
    names = {s.split("(")[0].removeprefix("ctxsdk.") for s in WRITE_FUNCTIONS}
    assert set(calls) == names - {"may_write"}  # every write function is tried
    with psycopg.connect(teams.dsn("alice"), autocommit=True) as sql:
        assert sql.execute("SELECT ctxsdk.may_write('a'), ctxsdk.may_write('b')").fetchone() == (
            True,
            False,
        )
        for ns, setup in (("b", None), ("b", teams.role("team_a")), ("nowhere", None)):
            if setup is not None:
                sql.execute(f"SET ROLE {setup}")
            for name, (marks, args) in calls.items():
                said = _refused(sql, f"SELECT ctxsdk.{name}({marks})", ns, *args)
                assert f"may not write namespace '{ns}'" in said, (name, said)
            sql.execute("RESET ROLE")
    with PostgresStore(teams.dsn("bob"), namespace="b", create=False) as bob:
        assert _bobs_namespace(bob) == before
    with psycopg.connect(teams.admin_dsn) as admin:
        assert admin.execute("SELECT count(*) FROM ctxsdk.namespaces").fetchone() == (2,)


def test_the_write_functions_take_no_column_or_table_outside_their_list(teams: Teams) -> None:
    """``update_row`` builds its statement from a fixed list of columns per table (the
    store's ``WRITABLE``), ``load_rows`` from the table's own columns: a name from outside
    is refused by the function itself, and a row names no namespace but the caller's."""
    import psycopg

    from ctxsdk.memory._rows import WRITABLE

    with PostgresStore(teams.dsn("alice"), namespace="a", create=False) as alice:
        mine = alice.put(_entity("alice-note"))
        before = alice.rows("nodes")
    with psycopg.connect(teams.dsn("alice"), autocommit=True) as sql:

        def refused(table: str, key: list[str], columns: list[str], values: list[Any]) -> str:
            with pytest.raises(psycopg.errors.InvalidParameterValue) as err:
                sql.execute(
                    "SELECT ctxsdk.update_row('a', %s, %s::text[], %s::text[], %s::text[])",
                    (table, key, columns, values),
                )
            return str(err.value)

        for column in (
            "namespace",
            "id",
            "type",
            "name = 'x', namespace",
            'name" = 1; --',
            "NAME",
        ):
            assert "update_row writes" in refused("nodes", [mine.id], [column], ["b"])
        for table in ("nodes", "edges", "meta"):
            said = refused(table, ["k"] * (3 if table == "edges" else 1), ["namespace"], ["b"])
            listed = said.split("update_row writes ", 1)[1].split(f" of {table}", 1)[0]
            assert listed.split(", ") == sorted(WRITABLE[table]), table
        for table in ("namespaces", "revisions", "vectors", "nodes; DROP TABLE x", "NODES"):
            refused(table, [mine.id], ["name"], ["x"])
        refused("nodes", [mine.id, "extra"], ["name"], ["x"])  # a key of the wrong shape
        refused("nodes", [mine.id], ["name", "text"], ["x"])  # a value per column
        refused("nodes", [mine.id], [], [])
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            sql.execute("SELECT ctxsdk.load_rows('a', 'namespaces', '[]')")
        # a loaded row's own "namespace" is not the one it lands in
        row = {"namespace": "b", "key": "planted", "value": "1"}
        assert sql.execute(
            "SELECT ctxsdk.load_rows('a', 'meta', %s::jsonb)", (json.dumps([row]),)
        ).fetchone() == (0,)
    with PostgresStore(teams.dsn("alice"), namespace="a", create=False) as alice:
        assert alice.rows("nodes") == before
        assert alice.get_meta("planted") == 1
    with PostgresStore(teams.dsn("bob"), namespace="b", create=False) as bob:
        assert bob.rows("meta") == []


_STRONGER_THAN_ACCESS_SHARE = (
    "ROW SHARE",
    "ROW EXCLUSIVE",
    "SHARE UPDATE EXCLUSIVE",
    "SHARE",
    "SHARE ROW EXCLUSIVE",
    "EXCLUSIVE",
    "ACCESS EXCLUSIVE",
)


def test_one_namespace_cannot_stall_another(teams: Teams) -> None:
    """Writers to another namespace never wait (the module's promise), whatever SQL a
    member of one namespace runs: a member holds SELECT only, so it may lock a table in
    ACCESS SHARE mode (which blocks no writer) and in no other, nor lock rows by hand."""
    import psycopg

    tables = ("schema_version", "namespaces", "revisions", "nodes", "edges", "meta", "vectors")
    with PostgresStore(teams.dsn("alice"), namespace="a", create=False) as alice:
        alice.put(_entity("alice-note"))
    with psycopg.connect(teams.dsn("alice")) as sql:
        for table in tables:
            for mode in _STRONGER_THAN_ACCESS_SHARE:
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    sql.execute(f"LOCK TABLE ctxsdk.{table} IN {mode} MODE")
                sql.rollback()
            for clause in ("FOR UPDATE", "FOR NO KEY UPDATE", "FOR SHARE", "FOR KEY SHARE"):
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    sql.execute(f"SELECT 1 FROM ctxsdk.{table} {clause}")
                sql.rollback()
        # all alice may hold at once: every table in ACCESS SHARE mode, and her own
        # namespace's write lock with a write of hers pending in it
        sql.execute(f"LOCK TABLE {', '.join('ctxsdk.' + t for t in tables)} IN ACCESS SHARE MODE")
        sql.execute("SELECT ctxsdk.write_lock('a')")
        sql.execute("SELECT ctxsdk.set_meta('a', 'pending', '1')")
        with PostgresStore(teams.dsn("bob"), namespace="b", create=False, timeout=0.2) as bob:
            x = bob.put(_entity("bob-writes-on"))
            y = bob.put(_entity("bob-too"))
            assert bob.link(Edge(x.id, y.id, "about"))
            bob.set_meta("k", 1)
            assert bob.put_vectors("m", [(x.id, "h", b"\x00" * 16)]) == 1
            bob.update("nodes", [y.id], {"text": "changed"})
            assert bob.unlink(x.id, y.id, "about")
            assert bob.delete(y.id)
            assert bob.load("meta", [{"key": "loaded", "value": 2}]) == 1
            assert [n.name for n in bob.nodes()] == ["bob-writes-on"]
        # a's own writers do queue behind alice (that is the namespace's lock)
        a2 = PostgresStore(teams.dsn("alice"), namespace="a", create=False, timeout=0.2)
        with a2, pytest.raises(LockHeld):
            a2.set_meta("k", 1)
        sql.rollback()


# --- parity: the same sessions in both stores ---------------------------------------------

_NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)
_WORD = re.compile(r"[A-Za-z][A-Za-z_]{4,}")


def _parity_sessions() -> list[Any]:
    """The first real sample of each of four formats, in the manifest's order."""
    from ctxsdk.samples import real_samples

    firsts: dict[str, Path] = {}
    for sample in real_samples().values():
        firsts.setdefault(sample.format, sample.path)
    return [cx.Session.open_any(path) for path in list(firsts.values())[:4]]


def _queries(sessions: list[Any]) -> list[str]:
    """Queries made of each session's own words: per session its three most frequent words,
    three from the middle of its vocabulary, and the first two words of four of its
    messages (evenly spaced)."""
    from ctxsdk.session.kernel import message_text

    out: list[str] = []
    for s in sessions:
        texts = [message_text(m) for m in s.messages()]
        texts = [t for t in texts if len(_WORD.findall(t)) >= 2]
        counts = Counter(w.lower() for t in texts for w in _WORD.findall(t))
        ranked = [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
        middle = len(ranked) // 2
        out += ranked[:3] + ranked[middle : middle + 3]
        step = max(1, len(texts) // 4)
        out += [" ".join(_WORD.findall(t)[:2]) for t in texts[::step][:4]]
    return list(dict.fromkeys(out))


def _stable(export: dict[str, Any]) -> tuple[Counter[Any], Counter[Any]]:
    """An export without what a store generates (ids, times, id-derived uris): the nodes
    and the edges (between such nodes) as multisets."""
    ids = {n["id"] for n in export["nodes"]}

    def plain(value: Any) -> Any:
        if isinstance(value, str):
            return "<id>" if value in ids else value
        if isinstance(value, dict):
            return tuple(sorted((k, plain(v)) for k, v in value.items()))
        if isinstance(value, list):
            return tuple(plain(v) for v in value)
        return value

    key = {}
    for n in export["nodes"]:
        uri = None if n["uri"] == node_uri(n["type"], n["id"]) else n["uri"]
        fields = {k: v for k, v in n.items() if k not in ("id", "uri", "createdAt", "updatedAt")}
        key[n["id"]] = (uri, plain(fields))
    nodes = Counter(key.values())
    edges = Counter(
        (key[e["src"]], key[e["dst"]], e["label"], e["weight"]) for e in export["edges"]
    )
    return nodes, edges


def test_the_same_sessions_give_the_same_memory_in_both_stores(
    tmp_path: Path, postgres_dsn: str
) -> None:
    sessions = _parity_sessions()
    assert len(sessions) == 4
    lite = cx.Memory(tmp_path / "memory.db", embedder=None, clock=_NOW)
    server = cx.Memory(postgres_dsn, namespace="parity", embedder=None, clock=_NOW)
    with lite, server:
        for s in sessions:
            assert not lite.ingest(s, now=_NOW).skipped
            assert not server.ingest(s, now=_NOW).skipped
        a, b = lite.export_json(), server.export_json()
        assert len(a["nodes"]) == len(b["nodes"]) > 100
        assert Counter(e["label"] for e in a["edges"]) == Counter(e["label"] for e in b["edges"])
        nodes_a, edges_a = _stable(a)
        nodes_b, edges_b = _stable(b)
        assert nodes_a == nodes_b
        assert edges_a == edges_b
        queries = _queries(sessions)
        assert len(queries) >= 30
        answered = 0
        for q in queries:
            got_a = [h.node.name for h in lite.find(q, top_k=10)]
            got_b = [h.node.name for h in server.find(q, top_k=10)]
            assert got_a == got_b, q
            answered += bool(got_a)
        assert answered >= len(queries) * 3 // 4  # the queries do find things
