"""The Memory engine's SQLite store: round trips, transactions, real processes, real faults.

Every test uses a real file under ``tmp_path``. Concurrency and crashes use real
``multiprocessing`` (spawn) children: four writers on one file lose nothing; a reader in
another process, reading while a batch is half written, sees the state before it; a child
SIGKILLed in the middle of a large batch leaves the last committed state. Schema migration
(a v1 file made here with raw SQL), a newer schema and non-database files are refused with
ctxsdk errors naming the path.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ctxsdk.errors import (
    CorruptStore,
    CtxError,
    InvalidArgument,
    LockHeld,
    NotFound,
    StoreVersionError,
)
from ctxsdk.memory._graph import to_networkx
from ctxsdk.memory._model import Edge, Node, Source, node_uri
from ctxsdk.memory._rows import new_node_id
from ctxsdk.memory._sqlite import SCHEMA_VERSION, SQLiteStore
from ctxsdk.memory._store import MemoryStore

CTX = mp.get_context("spawn")
JOIN = 120  # seconds a child may take before the test calls it hung


def _entity(name: str, **kw: Any) -> Node:
    return Node(id="", type="entity", name=name, **kw)


@pytest.fixture
def store(tmp_path: Path) -> Any:
    s = SQLiteStore(tmp_path / "memory.db")
    yield s
    s.close()


def _integrity(path: Path) -> str:
    db = sqlite3.connect(path)
    try:
        return str(db.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        db.close()


def _join(*procs: Any) -> None:
    for p in procs:
        p.join(JOIN)
        assert p.exitcode == 0, f"child {p.name} exited with {p.exitcode}"


# --- round trips ---------------------------------------------------------------------------


def test_is_a_memory_store_with_wal_and_schema(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with SQLiteStore(path) as s:
        assert isinstance(s, MemoryStore)
        assert s.location == str(path.absolute())
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    indexes = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    db.close()
    assert {"nodes", "edges", "meta"} <= tables
    assert {"nodes_type_status", "edges_dst"} <= indexes


def test_every_node_field_round_trips_through_a_reopen(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
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
    with SQLiteStore(path) as s:
        a = s.put(full)
        b = s.put(empty)
    assert a.id.startswith("n") and len(a.id) == 20
    assert a.created_at == full.created_at  # a given creation time is kept (imports)
    assert a.updated_at.endswith("Z") and len(a.updated_at) == len("2026-01-02T03:04:05.678Z")
    assert b.id == "given-id" and b.uri == node_uri("observation", "given-id")
    assert b.created_at == b.updated_at
    with SQLiteStore(path, create=False) as s:
        assert s.get(a.id) == a
        assert s.get(b.id) == b
        assert s.by_uri("ctx://decision/plan-b") == a
        assert s.get("nope") is None and s.by_uri("ctx://x/none") is None
        got = s.get(a.id)
        assert got is not None and got.text == long_text and got.extra["nested"]["k"][1] == 1


def test_replace_keeps_created_at_and_edges_and_stamps_updated_at(store: SQLiteStore) -> None:
    a = store.put(_entity("A"))
    b = store.put(_entity("B"))
    store.link(Edge(a.id, b.id, "about"))
    again = store.put(Node(id=a.id, type="entity", name="A2", uri=a.uri, created_at="1999"))
    assert again.created_at == a.created_at
    assert again.updated_at >= a.updated_at
    assert store.get(a.id) == again and again.name == "A2"
    assert [e.label for e in store.edges(src=a.id)] == ["about"]  # an upsert, not a delete


def test_a_taken_uri_is_refused_and_nothing_written(store: SQLiteStore) -> None:
    a = store.put(_entity("A", uri="ctx://entity/shared"))
    with pytest.raises(InvalidArgument, match=a.id):
        store.put(_entity("B", uri="ctx://entity/shared"))
    assert [n.name for n in store.nodes()] == ["A"]
    with pytest.raises(InvalidArgument, match="unknown node type"):
        store.put(Node(id="", type="planet", name="x"))  # type: ignore[arg-type]


def test_edges_link_is_idempotent_unlink_and_cascade(store: SQLiteStore) -> None:
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


def test_nodes_order_filters_and_count(store: SQLiteStore) -> None:
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


def test_meta_round_trip_and_delete(store: SQLiteStore) -> None:
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


def test_memory_store_is_real_sqlite() -> None:
    with SQLiteStore.memory() as s:
        a = s.put(_entity("A"))
        assert s.get(a.id) == a and s.location == ":memory:"
        with pytest.raises(ZeroDivisionError), s.batch():
            s.put(_entity("B"))
            raise ZeroDivisionError
        assert [n.name for n in s.nodes()] == ["A"]
    with pytest.raises(InvalidArgument, match="closed"):
        s.get(a.id)


def test_ids_are_unique_and_time_sortable() -> None:
    ids = [new_node_id() for _ in range(5000)]
    assert len(set(ids)) == 5000
    assert ids == sorted(ids)  # creation order within a process


# --- transactions --------------------------------------------------------------------------


def test_batch_is_all_or_nothing(store: SQLiteStore) -> None:
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


def test_nested_batches_commit_once_and_roll_back_inner_only(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with SQLiteStore(path) as s, SQLiteStore(path) as other:
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


def test_revision_changes_on_every_write_and_only_then(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with SQLiteStore(path) as s:
        r0 = s.revision()
        a = s.put(_entity("A"))
        r1 = s.revision()
        assert r1 != r0
        assert s.link(Edge(a.id, a.id, "same_as"))
        r2 = s.revision()
        assert r2 != r1
        assert not s.link(Edge(a.id, a.id, "same_as"))  # nothing written
        assert not s.unlink(a.id, a.id, "about")
        with s.batch():
            s.nodes()
        assert s.revision() == r2
        with pytest.raises(RuntimeError), s.batch():
            s.put(_entity("rolled back"))
            raise RuntimeError
        assert s.revision() == r2
        p = CTX.Process(target=_put_one, args=(str(path), "from-child"), name="put-one")
        p.start()
        _join(p)
        assert s.revision() != r2
        assert "from-child" in {n.name for n in s.nodes()}


# --- schema versions and bad files -------------------------------------------------------

_V1_SQL = """
CREATE TABLE nodes (id TEXT PRIMARY KEY, type TEXT NOT NULL, name TEXT NOT NULL,
  text TEXT NOT NULL DEFAULT '', aliases TEXT NOT NULL DEFAULT '[]', uri TEXT NOT NULL UNIQUE,
  sources TEXT NOT NULL DEFAULT '[]', until TEXT, until_at TEXT, fail TEXT, fix TEXT,
  status TEXT NOT NULL DEFAULT 'active', created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE INDEX nodes_type_status ON nodes (type, status);
CREATE TABLE edges (src TEXT NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
  dst TEXT NOT NULL REFERENCES nodes (id) ON DELETE CASCADE, label TEXT NOT NULL,
  weight REAL NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (src, dst, label));
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO nodes VALUES ('n1', 'entity', 'AuthGateway', 'the gateway', '["AG"]',
  'ctx://entity/1', '[{"session": "s", "seq": 3, "quote": "q", "via": "rule"}]',
  NULL, NULL, NULL, NULL, 'active', '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z');
INSERT INTO nodes VALUES ('n2', 'decision', 'defer', '', '[]', 'ctx://decision/2', '[]',
  'Friday', '2025-01-03T00:00:00.000Z', NULL, NULL, 'active', '2025-01-01T00:00:00.000Z',
  '2025-01-01T00:00:00.000Z');
INSERT INTO edges VALUES ('n2', 'n1', 'decided', 1.0, '2025-01-01T00:00:00.000Z');
INSERT INTO meta VALUES ('settings', '{"topK": 8}');
PRAGMA user_version = 1;
"""


def test_a_v1_file_is_migrated_with_its_data(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    db = sqlite3.connect(path)
    db.executescript(_V1_SQL)
    db.close()
    with SQLiteStore(path, create=False) as s:
        gw = s.get("n1")
        assert gw is not None and gw.name == "AuthGateway" and gw.aliases == ("AG",)
        assert gw.sources == (Source(session="s", seq=3, quote="q", via="rule"),)
        assert gw.extra == {}
        assert s.edges(dst="n1") == [Edge("n2", "n1", "decided", 1.0, "2025-01-01T00:00:00.000Z")]
        assert s.get_meta("settings") == {"topK": 8}
        s.put(Node(id="n3", type="episode", name="tail", extra={"kind": "tail"}))
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 3
    cols = {r[1] for r in db.execute("PRAGMA table_info(nodes)")}
    assert "extra" in cols
    assert db.execute("SELECT extra FROM nodes WHERE id='n3'").fetchone()[0] == '{"kind": "tail"}'
    db.close()


def test_a_newer_schema_is_refused_naming_both_versions(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    SQLiteStore(path).close()
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = 9")
    db.close()
    with pytest.raises(StoreVersionError) as err:
        SQLiteStore(path)
    msg = str(err.value)
    assert err.value.path == str(path)
    assert str(path) in msg and "version 9" in msg and f"version {SCHEMA_VERSION}" in msg


@pytest.mark.parametrize(
    ("version", "tables", "why"),
    [
        (0, ["CREATE TABLE t (x)"], "user_version 0 with tables"),
        (1, ["CREATE TABLE nodes (id)", "CREATE TABLE meta (key, value)"], "no table edges"),
        (
            SCHEMA_VERSION,
            ["CREATE TABLE nodes (id, name)", "CREATE TABLE edges (src)", "CREATE TABLE meta (k)"],
            "no column aliases",
        ),
    ],
)
def test_a_foreign_sqlite_database_is_refused_and_left_as_it_was(
    tmp_path: Path, version: int, tables: list[str], why: str
) -> None:
    """Another program's file, or one whose user_version says memory but whose tables are
    not ours: refused before anything (the WAL switch persists in the file) touches it."""
    path = tmp_path / "other.db"
    db = sqlite3.connect(path)
    for sql in tables:
        db.execute(sql)
    db.execute(f"PRAGMA user_version={version}")
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(CorruptStore, match=f"not a ctxsdk memory .*{why}"):
        SQLiteStore(path)
    assert path.read_bytes() == before
    assert not (tmp_path / "other.db-wal").exists()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    db.close()


@pytest.mark.parametrize("kind", ["random", "short", "text"])
def test_a_file_that_is_not_sqlite_is_refused_and_kept(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "garbage.db"
    data = {
        "random": os.urandom(8192),
        "short": b"SQLite format 3\x00" + b"\x10\x00",
        "text": b'{"not": "a database"}\n' * 50,
    }[kind]
    path.write_bytes(data)
    with pytest.raises(CorruptStore) as err:
        SQLiteStore(path)
    assert not isinstance(err.value, sqlite3.Error)
    assert str(path.absolute()) in str(err.value)
    assert path.read_bytes() == data  # refused, never overwritten


def test_a_truncated_database_gives_a_ctxsdk_error(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with SQLiteStore(path) as s, s.batch():
        for i in range(300):
            s.put(_entity(f"e{i}", text="x" * 2000))
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    size = path.stat().st_size
    with path.open("r+b") as fh:
        fh.truncate(size // 3)
    with pytest.raises(CtxError) as err, SQLiteStore(path) as s:
        s.nodes()
        assert s.integrity_check() == ["ok"]
    assert not isinstance(err.value, sqlite3.Error)
    assert str(path.absolute()) in str(err.value)


def test_create_false_on_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(NotFound, match="create=False"):
        SQLiteStore(tmp_path / "absent.db", create=False)
    assert not (tmp_path / "absent.db").exists()


# --- real processes ------------------------------------------------------------------------

WRITERS = 4
PER_WRITER = 200


def _put_one(path: str, name: str) -> None:
    with SQLiteStore(path) as s:
        s.put(_entity(name))


def _writer(path: str, wid: int, root: str, go: Any) -> None:
    """Add PER_WRITER nodes, each linked to the root and to the previous one; odd writers
    in batches of 10, even ones one transaction per call."""
    with SQLiteStore(path) as s:
        go.wait(JOIN)
        prev: str | None = None
        for start in range(0, PER_WRITER, 10):
            if wid % 2:
                with s.batch():
                    prev = _write_ten(s, wid, start, root, prev)
            else:
                prev = _write_ten(s, wid, start, root, prev)


def _write_ten(s: SQLiteStore, wid: int, start: int, root: str, prev: str | None) -> str | None:
    for i in range(start, start + 10):
        node = s.put(_entity(f"w{wid}-{i}", extra={"w": wid, "i": i}))
        s.link(Edge(node.id, root, "in_workspace", 0.15))
        if prev is not None:
            s.link(Edge(prev, node.id, "continues", 0.4))
        prev = node.id
    return prev


def test_four_writer_processes_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with SQLiteStore(path) as s:
        root = s.put(Node(id="", type="workspace", name="ws")).id
    go = CTX.Event()
    procs = [
        CTX.Process(target=_writer, args=(str(path), w, root, go), name=f"writer-{w}")
        for w in range(WRITERS)
    ]
    for p in procs:
        p.start()
    go.set()
    _join(*procs)
    assert _integrity(path) == "ok"
    with SQLiteStore(path) as s:
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


def _batch_writer(path: str, mid: Any, ack: Any) -> None:
    """Each batch: half its nodes, then wait while the reader reads, then the rest and the
    meta counter; the reader's read lands inside an open write transaction."""
    with SQLiteStore(path) as s:
        for k in range(1, BATCHES + 1):
            with s.batch():
                for i in range(PER_BATCH):
                    if i == PER_BATCH // 2:
                        mid.set()
                        assert ack.wait(JOIN)
                        ack.clear()
                    s.put(_entity(f"b{k}-{i}", extra={"batch": k}))
                s.set_meta("batches", k)


def _snapshot(s: SQLiteStore) -> tuple[int, dict[int, int]]:
    with s.snapshot():  # the counter and the nodes from one state
        counter = s.get_meta("batches") or 0
        groups = Counter(int(n.extra["batch"]) for n in s.nodes())
    return counter, dict(groups)


def _batch_reader(path: str, mid: Any, ack: Any, out: Any) -> None:
    seen = []
    with SQLiteStore(path) as s:
        for _ in range(BATCHES):
            assert mid.wait(JOIN)
            mid.clear()
            seen.append(_snapshot(s))
            ack.set()
    out.put(seen)


def test_a_reader_process_never_sees_half_a_batch(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    SQLiteStore(path).close()
    mid, ack, out = CTX.Event(), CTX.Event(), CTX.Queue()
    writer = CTX.Process(target=_batch_writer, args=(str(path), mid, ack), name="writer")
    reader = CTX.Process(target=_batch_reader, args=(str(path), mid, ack, out), name="reader")
    reader.start()
    writer.start()
    seen = out.get(timeout=JOIN)
    _join(writer, reader)
    # At the middle of batch k the reader saw exactly batches 1..k-1, each whole.
    assert seen == [(k - 1, dict.fromkeys(range(1, k), PER_BATCH)) for k in range(1, BATCHES + 1)]
    with SQLiteStore(path) as s:
        assert _snapshot(s) == (BATCHES, dict.fromkeys(range(1, BATCHES + 1), PER_BATCH))


COMMITTED = 5
BIG = 400


def _crash_child(path: str, conn: Any) -> None:
    """Commit a few nodes, then open a big batch, report from its middle and block there
    (the parent SIGKILLs it). A tiny page cache makes SQLite spill the batch's pages into
    the WAL before any commit, so the kill leaves uncommitted frames on disk."""
    with SQLiteStore(path) as s:
        s._conn().execute("PRAGMA cache_size=8")
        for i in range(COMMITTED):
            s.put(_entity(f"kept-{i}"))
        with s.batch():
            for i in range(BIG):
                s.put(_entity(f"partial-{i}", text=f"{i}:" + "z" * 20_000))
                if i == BIG // 2:
                    conn.send("mid-batch")
                    conn.recv()  # never answered: killed here, the batch open


@pytest.mark.skipif(not hasattr(os, "kill"), reason="needs SIGKILL")
def test_sigkill_mid_batch_leaves_the_last_committed_state(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    parent_end, child_end = CTX.Pipe()
    child = CTX.Process(target=_crash_child, args=(str(path), child_end), name="crash")
    child.start()
    assert parent_end.poll(JOIN), "the child never reached the middle of its batch"
    assert parent_end.recv() == "mid-batch"
    child.kill()  # SIGKILL, this child only
    child.join(JOIN)
    assert child.exitcode == -9
    wal = Path(str(path) + "-wal")
    assert wal.stat().st_size > 1_000_000  # the uncommitted batch did reach the disk
    with SQLiteStore(path) as s:
        names = [n.name for n in s.nodes()]
        assert sorted(names) == [f"kept-{i}" for i in range(COMMITTED)]
        assert s.integrity_check() == ["ok"]
        s.put(_entity("after"))  # the write lock died with the child
        assert len(s.nodes()) == COMMITTED + 1
    assert _integrity(path) == "ok"


# --- networkx ------------------------------------------------------------------------------


def test_to_networkx_shape(store: SQLiteStore) -> None:
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


def test_threads_share_one_store(store: SQLiteStore) -> None:
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
    assert store.integrity_check() == ["ok"]


def test_a_held_write_lock_gives_lock_held_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    SQLiteStore(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with SQLiteStore(path, timeout=0.05) as s:
            assert s.nodes() == []  # WAL: reads go on while another process writes
            with pytest.raises(LockHeld, match=str(path)):
                s.put(_entity("blocked"))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with SQLiteStore(path) as s:
        assert s.nodes() == []
        s.put(_entity("later"))
        assert [n.name for n in s.nodes()] == ["later"]


def test_snapshot_reads_one_state_without_blocking_writers(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with SQLiteStore(path) as s, SQLiteStore(path, timeout=0.05) as other:
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
