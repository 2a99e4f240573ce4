"""The faults a server memory must survive, each against a real PostgreSQL server: a restart
or a dropped connection mid-batch, a server down at open, a held lock, a schema this code
does not know, a role that may not create it, concurrent first opens, a value PostgreSQL
text cannot hold; and no password in any text a caller can see."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from ctxsdk.errors import (
    CorruptStore,
    InvalidArgument,
    LockHeld,
    StoreError,
    StoreUnavailable,
    StoreVersionError,
)
from ctxsdk.memory._model import Edge, Node
from ctxsdk.memory._pg_schema import SCHEMA_VERSION
from ctxsdk.memory._postgres import PostgresStore
from ctxsdk.testing import LocalPostgres

from .conftest import started_postgres

psycopg = pytest.importorskip("psycopg")

SECRET = "pw-Zq8-never-shown"


def _texts(exc: BaseException) -> list[str]:
    """Every text an error carries: str, repr, args, and the same of every error chained to
    it (``__cause__`` and ``__context__``, shown or not)."""
    out: list[str] = []
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        out += [str(e), repr(e), *(str(a) for a in e.args)]
        todo += [e.__cause__, e.__context__]
    return out


def _no_secret(exc: BaseException, secret: str = SECRET) -> None:
    for text in _texts(exc):
        assert secret not in text, text


def _with_password(dsn: str, password: str = SECRET) -> str:
    """``dsn`` with a password (trust authentication ignores it, so it still connects)."""
    parts = urlsplit(dsn)
    assert parts.username and parts.hostname
    return dsn.replace(f"//{parts.username}@", f"//{parts.username}:{password}@", 1)


def _dbname(dsn: str) -> str:
    return urlsplit(dsn).path.lstrip("/")


@contextlib.contextmanager
def _admin(dsn: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        yield conn


def _cut_others(dsn: str) -> int:
    """Terminate every other backend on ``dsn``'s database (the store's); how many."""
    with _admin(dsn) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
    return len(rows)


def _names(dsn: str) -> list[str]:
    """The node names stored, read past the store (every namespace)."""
    with _admin(dsn) as conn:
        return [r[0] for r in conn.execute("SELECT name FROM ctxsdk.nodes ORDER BY name")]


def _catalog(dsn: str) -> list[tuple[Any, ...]]:
    """What a refused open must leave as it was: the schemas, tables and their rows."""
    with _admin(dsn) as conn:
        tables = conn.execute(
            "SELECT schemaname, tablename FROM pg_tables "
            "WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2"
        ).fetchall()
        schemas = conn.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' ORDER BY 1"
        ).fetchall()
        rows = [
            (s, t, sorted(map(str, conn.execute(f'SELECT * FROM "{s}"."{t}"').fetchall())))
            for s, t in tables
        ]
        return [*schemas, *rows]


def _entity(name: str, text: str = "") -> Node:
    return Node(id="", type="entity", name=name, text=text)


@pytest.fixture
def own_server() -> Iterator[LocalPostgres]:
    """A server of this test's own, to restart without touching the other tests'."""
    yield from started_postgres()


def _hold_connections(store: PostgresStore, n: int) -> None:
    """Make the store's pool hold ``n`` connections (n threads in a snapshot at once), so a
    restart leaves that many dead ones idle in it."""
    barrier = threading.Barrier(n)

    def reader() -> None:
        with store.snapshot():
            store.count()
            barrier.wait(timeout=30)

    threads = [threading.Thread(target=reader) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)


# -- the server restarted ----------------------------------------------------------------------
def test_restart_mid_batch_refuses_it_whole_and_the_store_goes_on(
    own_server: LocalPostgres,
) -> None:
    dsn = _with_password(own_server.create_database("restart"))
    store = PostgresStore(dsn, timeout=2)
    try:
        store.put(_entity("before"))
        _hold_connections(store, 4)  # four pooled connections, all cut by the restart
        with pytest.raises(StoreUnavailable) as caught, store.batch():
            store.put(_entity("a"))
            own_server.restart()
            store.put(_entity("b"))
        assert own_server.dsn().split("@")[1].split("/")[0] in str(caught.value)
        _no_secret(caught.value)
        assert _names(dsn) == ["before"]
        # The same object works again: the pool hands out a fresh connection, within the
        # store's timeout although every idle one is dead.
        assert [n.name for n in store.nodes(types=["entity"])] == ["before"]
        store.put(_entity("after"))
        assert _names(dsn) == ["after", "before"]
    finally:
        store.close()


def test_restart_from_another_thread_between_calls_of_a_batch(own_server: LocalPostgres) -> None:
    dsn = own_server.create_database("restart2")
    store = PostgresStore(dsn, timeout=2)
    wrote, restarted = threading.Event(), threading.Event()

    def restart() -> None:
        wrote.wait(timeout=30)
        own_server.restart()
        restarted.set()

    thread = threading.Thread(target=restart)
    thread.start()
    try:
        with pytest.raises(StoreUnavailable), store.batch():
            store.put(_entity("a"))
            store.set_meta("k", 1)
            wrote.set()
            assert restarted.wait(timeout=60)
            store.count()  # a read inside the batch: its connection is gone
        thread.join(timeout=60)
        assert _names(dsn) == []
        assert store.get_meta("k") is None
        assert store.revision() == 0
        store.set_meta("k", 2)
        assert store.get_meta("k") == 2
    finally:
        thread.join(timeout=60)
        store.close()


# -- a dropped connection ---------------------------------------------------------------------
def test_dropped_connection_between_calls(postgres_dsn: str) -> None:
    store = PostgresStore(postgres_dsn, timeout=5)
    try:
        store.put(_entity("one"))
        assert _cut_others(postgres_dsn) >= 1
        assert [n.name for n in store.nodes(types=["entity"])] == ["one"]  # a read answers
        assert _cut_others(postgres_dsn) >= 1
        try:
            store.put(_entity("two"))
            expected = ["one", "two"]
        except StoreUnavailable:  # allowed, when nothing was written
            expected = ["one"]
        assert _names(postgres_dsn) == expected  # never twice
        assert _cut_others(postgres_dsn) >= 1
        store.set_meta("k", "v")
        assert store.get_meta("k") == "v"
        assert store.revision() == len(expected) + 1
    finally:
        store.close()


def test_dropped_connection_inside_a_batch_refuses_it_whole(postgres_dsn: str) -> None:
    store = PostgresStore(postgres_dsn, timeout=5)
    try:
        a = store.put(_entity("a"))
        with pytest.raises(StoreUnavailable), store.batch():
            b = store.put(_entity("b"))
            store.link(Edge(src=a.id, dst=b.id, label="about"))
            _cut_others(postgres_dsn)
            store.put(_entity("c"))
        assert _names(postgres_dsn) == ["a"]
        assert store.edges() == []
        # Cut after the last call: the commit itself fails, and nothing of it is kept.
        with pytest.raises(StoreUnavailable), store.batch():
            store.put(_entity("d"))
            with store.batch():  # a savepoint
                store.put(_entity("e"))
            _cut_others(postgres_dsn)
        assert _names(postgres_dsn) == ["a"]
        # A snapshot whose connection is cut says so too.
        with pytest.raises(StoreUnavailable), store.snapshot():
            store.count()
            _cut_others(postgres_dsn)
            store.nodes()
        assert store.revision() == 1
        assert [n.name for n in store.nodes(types=["entity"])] == ["a"]
    finally:
        store.close()


# -- the server down at open --------------------------------------------------------------------
def _closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_server_down_at_open(caplog: pytest.LogCaptureFixture) -> None:
    port = _closed_port()
    dsn = f"postgresql://alice:{SECRET}@127.0.0.1:{port}/teamdb"
    caplog.set_level(logging.DEBUG)
    with pytest.raises(StoreUnavailable) as caught:
        PostgresStore(dsn, timeout=0.3)
    message = str(caught.value)
    assert "127.0.0.1" in message and str(port) in message and "teamdb" in message
    assert caught.value.path is not None and SECRET not in caught.value.path
    _no_secret(caught.value)
    assert all(SECRET not in r.getMessage() for r in caplog.records)


def test_a_stopped_server_is_unavailable_not_a_hang(own_server: LocalPostgres) -> None:
    dsn = _with_password(own_server.create_database("gone"))
    store = PostgresStore(dsn, timeout=0.5)
    try:
        store.put(_entity("kept"))
        own_server.stop()
        for call in (store.count, lambda: store.put(_entity("lost"))):
            with pytest.raises(StoreUnavailable) as caught:
                call()
            _no_secret(caught.value)
    finally:
        store.close()


# -- a held lock ----------------------------------------------------------------------------
def _hold_namespace(dsn: str, namespace: str) -> Iterator[None]:
    with _admin(dsn) as conn, conn.transaction():
        conn.execute("SELECT 1 FROM ctxsdk.revisions WHERE namespace = %s FOR UPDATE", (namespace,))
        yield


def test_lock_timeout_is_lock_held_and_other_namespaces_go_on(postgres_dsn: str) -> None:
    dsn = _with_password(postgres_dsn)
    store = PostgresStore(dsn, timeout=0.5)
    other = PostgresStore(dsn, namespace="other", timeout=0.5)
    try:
        with contextlib.contextmanager(_hold_namespace)(dsn, "default"):
            for write in (
                lambda: store.put(_entity("blocked")),
                lambda: store.set_meta("k", 1),
            ):
                with pytest.raises(LockHeld) as caught:
                    write()
                assert "timeout=0.5" in str(caught.value)
                _no_secret(caught.value)
            assert store.nodes() == []  # reads do not wait for the writer
            other.put(_entity("free"))  # another namespace never waits
        assert [n.name for n in store.nodes()] == []
        assert store.get_meta("k") is None
        assert [n.name for n in other.nodes()] == ["free"]
        store.put(_entity("later"))
        assert _names(dsn) == ["free", "later"]
    finally:
        store.close()
        other.close()


def test_timeout_zero_does_not_wait_for_a_lock(postgres_dsn: str) -> None:
    store = PostgresStore(postgres_dsn, timeout=0)
    release = threading.Event()
    held = threading.Event()

    def hold() -> None:
        with contextlib.contextmanager(_hold_namespace)(postgres_dsn, "default"):
            held.set()
            release.wait(timeout=10)  # a store that waited would get the lock after this

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        assert held.wait(timeout=30)
        with pytest.raises(LockHeld):
            store.put(_entity("x"))
    finally:
        release.set()
        thread.join(timeout=30)
        store.close()
    assert _names(postgres_dsn) == []


# -- schemas this code cannot use -------------------------------------------------------------
def test_a_newer_schema_is_refused_unchanged(postgres_dsn: str) -> None:
    dsn = _with_password(postgres_dsn)
    PostgresStore(dsn).close()
    newer = SCHEMA_VERSION + 1
    with _admin(dsn) as conn:
        conn.execute("UPDATE ctxsdk.schema_version SET version = %s", (newer,))
    before = _catalog(dsn)
    for create in (True, False):
        with pytest.raises(StoreVersionError) as caught:
            PostgresStore(dsn, create=create)
        message = str(caught.value)
        assert f"version {newer}" in message and f"version {SCHEMA_VERSION}" in message
        _no_secret(caught.value)
    assert _catalog(dsn) == before


def test_a_foreign_ctxsdk_schema_is_corrupt_and_unchanged(postgres_dsn: str) -> None:
    with _admin(postgres_dsn) as conn:
        conn.execute("CREATE SCHEMA ctxsdk")
        conn.execute("CREATE TABLE ctxsdk.nodes (x integer)")
        conn.execute("INSERT INTO ctxsdk.nodes VALUES (7)")
    before = _catalog(postgres_dsn)
    with pytest.raises(CorruptStore) as caught:
        PostgresStore(_with_password(postgres_dsn))
    assert "schema_version" in str(caught.value)
    _no_secret(caught.value)
    assert _catalog(postgres_dsn) == before


def test_a_role_that_may_not_create_the_schema(
    postgres_server: LocalPostgres, postgres_dsn: str
) -> None:
    role = f"member_{_dbname(postgres_dsn)}"
    with _admin(postgres_dsn) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN")
    try:
        dsn = postgres_server.dsn(user=role, dbname=_dbname(postgres_dsn), password=SECRET)
        before = _catalog(postgres_dsn)
        with pytest.raises(StoreError) as caught:
            PostgresStore(dsn)
        message = str(caught.value)
        assert "administrator" in message and "init" in message, message
        assert role in message and _dbname(postgres_dsn) in message
        _no_secret(caught.value)
        assert _catalog(postgres_dsn) == before
    finally:
        with _admin(postgres_dsn) as conn:
            conn.execute(f"DROP ROLE {role}")


# -- credentials ------------------------------------------------------------------------------
def test_no_password_in_what_a_store_shows(postgres_dsn: str) -> None:
    import ctxsdk as cx

    dsn = _with_password(postgres_dsn)
    store = PostgresStore(dsn)
    try:
        for text in (repr(store), store.location, str(store)):
            assert SECRET not in text and _dbname(dsn) in text
    finally:
        store.close()
    memory = cx.Memory(dsn, embedder=None)
    try:
        for text in (str(memory), repr(memory), memory.store.location):
            assert SECRET not in text
    finally:
        memory.close()


@pytest.mark.parametrize(
    "dsn",
    [
        f"postgresql://alice:{SECRET}%zz@127.0.0.1:5432/db",  # a bad percent escape
        f"postgresql://alice:{SECRET}@127.0.0.1:notaport/db",
        f"postgresql://alice:{SECRET}@[::1/db",  # an unclosed IPv6 bracket
        f"host=127.0.0.1 password={SECRET} dbname",  # a key without a value
        f"host=127.0.0.1 password='{SECRET}",  # an unterminated quote
    ],
)
def test_an_unparsable_dsn_is_not_echoed(dsn: str) -> None:
    import ctxsdk as cx

    with pytest.raises(InvalidArgument) as caught:
        PostgresStore(dsn, timeout=0.3)
    _no_secret(caught.value)
    if dsn.startswith("postgresql://"):  # Memory takes a URL; anything else is a file path
        with pytest.raises(InvalidArgument) as caught:
            cx.Memory(dsn, embedder=None)
        _no_secret(caught.value)


# -- concurrent first opens -------------------------------------------------------------------
_OPEN = """
import sys
import ctxsdk as cx
for dsn in sys.argv[1:]:
    print("ready", flush=True)
    sys.stdin.readline()
    memory = cx.Memory(dsn, embedder=None)
    print("root", memory.root.id, flush=True)
    memory.close()
"""


def _one_schema(dsn: str) -> None:
    with _admin(dsn) as conn:
        version = conn.execute("SELECT version FROM ctxsdk.schema_version").fetchall()
        assert version == [(SCHEMA_VERSION,)]
        namespaces = conn.execute("SELECT namespace, role FROM ctxsdk.namespaces").fetchall()
        assert namespaces == [("default", "ctxsdk")]
        for sql in (
            "SELECT count(*) FROM pg_namespace WHERE nspname = 'ctxsdk'",
            "SELECT count(*) FROM ctxsdk.revisions",
            "SELECT count(*) FROM ctxsdk.nodes WHERE type = 'workspace'",
        ):
            assert conn.execute(sql).fetchone() == (1,), sql


def test_concurrent_first_opens_make_one_schema(
    postgres_server: LocalPostgres, postgres_dsn: str, tmp_path: Path
) -> None:
    """Four processes open the same empty database at once, three times over (three
    databases): each time all succeed, with one schema, one namespace, one root."""
    extra = [f"{_dbname(postgres_dsn)}_{i}" for i in (2, 3)]
    dsns = [postgres_dsn, *(postgres_server.create_database(name) for name in extra)]
    script = tmp_path / "open.py"
    script.write_text(_OPEN)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["CTXSDK_EMBEDDER"] = "none"
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), *map(_with_password, dsns)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(4)
    ]
    roots: list[set[str]] = [set() for _ in dsns]
    try:
        for round_ in range(len(dsns)):
            for p in procs:
                assert p.stdout is not None and p.stdout.readline().strip() == "ready"
            for p in procs:  # all at once: each finds an empty database
                assert p.stdin is not None
                p.stdin.write("go\n")
                p.stdin.flush()
            for p in procs:
                assert p.stdout is not None
                line = p.stdout.readline().split()
                assert line[:1] == ["root"], p.communicate(timeout=60)[1]
                roots[round_].add(line[1])
            _one_schema(dsns[round_])
        outs = [p.communicate(timeout=120) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for name in extra:
            postgres_server.drop_database(name)
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
        assert SECRET not in out + err
    assert all(len(r) == 1 for r in roots)  # one workspace root, whoever made it


# -- values PostgreSQL text cannot hold ---------------------------------------------------------
def test_nul_characters_are_refused_naming_the_field(postgres_dsn: str) -> None:
    store = PostgresStore(postgres_dsn)
    try:
        kept = store.put(_entity("kept"))
        revision = store.revision()
        for node, field in (
            (_entity("a\x00b"), "name"),
            (_entity("a", "some\x00text"), "text"),
            (Node(id="n\x00", type="entity", name="a"), "id"),
            (Node(id="", type="entity", name="a", uri="ctx://x\x00"), "uri"),
            (Node(id="", type="entity", name="a", created_at="2026\x00"), "created_at"),
        ):
            with pytest.raises(InvalidArgument, match=field) as caught:
                store.put(node)
            assert "NUL" in str(caught.value)
        with pytest.raises(InvalidArgument, match="meta key"):
            store.set_meta("k\x00", 1)
        with pytest.raises(InvalidArgument, match="text"):
            store.update("nodes", (kept.id,), {"text": "x\x00"})
        with pytest.raises(InvalidArgument, match="NUL"):
            store.put_vectors("m", [(kept.id, "hash\x00", b"\x00\x00\x80\x3f")])
        # Inside a batch: refused before it writes, and the batch goes on.
        with store.batch():
            store.put(_entity("in batch"))
            with pytest.raises(InvalidArgument):
                store.put(_entity("x\x00"))
            store.put(_entity("in batch too"))
        assert _names(postgres_dsn) == ["in batch", "in batch too", "kept"]
        assert store.rows("meta") == [] and store.vectors("m") == {}
        assert store.get(kept.id) == kept
        assert store.revision() == revision + 1  # the batch, and nothing else
        # JSON values escape it, as SQLite's do; reads of such a key find nothing.
        store.set_meta("j", {"v": "a\x00b"})
        assert store.get_meta("j") == {"v": "a\x00b"}
        assert store.get("n\x00") is None
        assert store.by_uri("ctx://\x00") is None
        assert store.get_meta("k\x00") is None
        assert store.edges(src="a\x00") == []
        entities = store.nodes(types=["entity"])
        assert len(entities) == 3 and store.nodes(types=["entity", "x\x00"]) == entities
        assert store.vectors("m", ids=[kept.id, "y\x00"]) == {}
    finally:
        store.close()
