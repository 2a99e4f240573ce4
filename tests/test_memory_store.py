"""What only the SQLite store has: one file, in WAL mode, with its schema and its versions.

The store protocol itself (round trips, transactions, revisions, locks, snapshots, real
processes and SIGKILL) is tested once for every store in ``test_store_conformance.py``. Here:
the file's journal mode and schema, the in-memory database, node ids, schema migration (a v1
file made here with raw SQL), a newer schema, and files that are not a memory (another
program's database, garbage, a truncated file, a missing one with ``create=False``), each
refused with a ctxsdk error naming the path and left as it was.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from ctxsdk.errors import (
    CorruptStore,
    CtxError,
    InvalidArgument,
    NotFound,
    StoreVersionError,
)
from ctxsdk.memory._model import Edge, Node, Source
from ctxsdk.memory._rows import new_node_id
from ctxsdk.memory._sqlite import SCHEMA_VERSION, SQLiteStore
from ctxsdk.memory._store import MemoryStore


def _entity(name: str, **kw: Any) -> Node:
    return Node(id="", type="entity", name=name, **kw)


# --- round trips ---------------------------------------------------------------------------


def test_is_a_memory_store_with_wal_and_schema(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with SQLiteStore(path) as s:
        assert isinstance(s, MemoryStore)
        assert s.location == str(path.absolute())
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    indexes = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    db.close()
    assert {"nodes", "edges", "meta"} <= tables
    assert {"nodes_type_status", "edges_dst"} <= indexes


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
    assert db.execute("PRAGMA user_version").fetchone()[0] == 4
    cols = {r[1] for r in db.execute("PRAGMA table_info(nodes)")}
    assert {"extra", "changed"} <= cols
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


def _open_while_another_creates(
    path: Path, schema: list[str], k: int, monkeypatch: pytest.MonkeyPatch
) -> int:
    """Open a store on ``path`` while another connection creates the memory there (every
    table and the user_version, one transaction) and commits it at the opener's k-th
    statement, or when the opener asks for the write lock (the creator holds it only while
    it creates). Returns the statement the commit came at; the store is checked and closed."""
    real_connect = sqlite3.connect
    creator = real_connect(path, isolation_level=None)
    creator.execute("PRAGMA journal_mode=WAL")
    creator.execute("BEGIN IMMEDIATE")
    for sql in schema:
        creator.execute(sql)
    creator.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
    seen, committed_at = 0, 0

    def commit_at_k(statement: str) -> None:
        nonlocal seen, committed_at
        seen += 1
        if creator.in_transaction and (seen == k or statement.startswith("BEGIN IMMEDIATE")):
            creator.execute("COMMIT")
            committed_at = seen

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        db = real_connect(*args, **kwargs)
        db.set_trace_callback(commit_at_k)
        return db

    monkeypatch.setattr(sqlite3, "connect", connect)
    try:
        store = SQLiteStore(path, timeout=5)
    finally:
        monkeypatch.setattr(sqlite3, "connect", real_connect)
        if creator.in_transaction:
            creator.execute("COMMIT")
        creator.close()
    with store:
        store.put(_entity("opened"))
        assert [n.name for n in store.nodes(types=["entity"])] == ["opened"]
    return committed_at


def test_another_process_creating_the_memory_between_any_two_reads_of_an_opener(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new file that another process is creating, its creation committed between two of
    the opener's statements, at each point in turn: the opener sees the file before or
    after, never half (not "another program's tables" because it read user_version before
    the commit and the tables after)."""
    template = tmp_path / "template.db"
    SQLiteStore(template).close()
    with sqlite3.connect(template) as t:
        schema = [
            sql for (sql,) in t.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL")
        ]
    for k in range(1, 100):
        if _open_while_another_creates(tmp_path / f"new-{k}.db", schema, k, monkeypatch) != k:
            break  # k is past the opener's reads: every point before its write was tried
    else:
        pytest.fail("the opener ran more than 99 statements")
    assert k > 3  # the commit did land between statements of the inspection


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


# --- the writers' gate ---------------------------------------------------------------------


def test_waits_given_up_as_the_gate_changes_hands_leave_no_gate_held(tmp_path: Path) -> None:
    """A store with a tiny timeout writes while another keeps taking and letting go of the
    gate: its waits end taken or given up (``LockHeld``), often just as the waiter thread
    is granted the gate; none leaves the gate held, so afterwards a store that does not
    wait at all (``timeout=0``) writes at once, and every write that returned is there."""
    import threading

    from ctxsdk.errors import LockHeld

    path = tmp_path / "m.db"
    holder, racer = SQLiteStore(path), SQLiteStore(path, timeout=0.002)
    stop = threading.Event()
    churned = [0]

    def churn() -> None:
        while not stop.is_set():
            holder.put(_entity(f"h{churned[0]}"))
            churned[0] += 1

    t = threading.Thread(target=churn)
    t.start()
    wrote = refused = 0
    try:
        for i in range(300):
            try:
                racer.put(_entity(f"r{i}"))
                wrote += 1
            except LockHeld:
                refused += 1
    finally:
        stop.set()
        t.join(60)
    assert wrote + refused == 300
    with SQLiteStore(path, timeout=0) as third:
        third.put(_entity("after"))
    racer.put(_entity("last"))
    names = {n.name for n in holder.nodes()}
    assert len(names) == churned[0] + wrote + 2
    holder.close()
    racer.close()


def test_a_name_the_file_system_cannot_encode_is_refused(tmp_path: Path) -> None:
    """A lone surrogate in the path: a ctxsdk error that names it, not SQLite's bare
    ``UnicodeEncodeError``, and nothing made in the directory."""
    with pytest.raises(InvalidArgument, match="cannot encode"):
        SQLiteStore(tmp_path / "memory-\ud800.db")
    assert list(tmp_path.iterdir()) == []


def test_by_ids_reads_what_get_reads_and_leaves_out_what_is_not_there(tmp_path: Path) -> None:
    """``by_ids`` (remember's read before its lock): the node of every id that exists, as
    ``get`` reads it, none for an id that does not, across its 500-id statements; a
    damaged row is ``CorruptStore`` as ``get`` says."""
    with SQLiteStore(tmp_path / "m.db") as store:
        nodes = store.put_many([_entity(f"e{i}", aliases=(f"a{i}",)) for i in range(1201)])
        ids = [n.id for n in nodes]
        missing = ["e3", "", "n" + "0" * 19, *(new_node_id() for _ in range(300))]
        asked = [*ids[::-1], *missing, ids[0], ids[0]]
        got = store.by_ids(asked)
        assert got == {i: store.get(i) for i in ids}
        assert store.by_ids([]) == {} and store.by_ids(missing) == {}
        db = sqlite3.connect(tmp_path / "m.db")
        with db:
            db.execute("UPDATE nodes SET aliases = 'x' WHERE id = ?", (ids[7],))
        db.close()
        with pytest.raises(CorruptStore, match="aliases") as by_ids:
            store.by_ids([ids[3], ids[7]])
        with pytest.raises(CorruptStore, match="aliases") as get:
            store.get(ids[7])
        assert str(by_ids.value) == str(get.value)
