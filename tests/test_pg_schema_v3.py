"""Schema version 3 of the PostgreSQL memory: ``put`` and ``put_vectors`` each in one call
of a write function (``ctxsdk.write_node``, ``ctxsdk.write_vectors``) where version 2 read
the stored row, the id and the uri first. What ``put`` decides is the same on both stores
(checked here on each, beside the conformance suite): a replace keeps ``created_at``, a uri
another node holds is refused with the same words and nothing written, and a node's vectors
go when an indexed column changes, and only then. A database left at version 2 (made here
with the version-1 and version-2 migrations and version 2's grants) is migrated to 3 when
its owner opens it, its data kept and its members granted the new functions.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ctxsdk.errors import InvalidArgument, StoreError
from ctxsdk.memory._model import Node, Source
from ctxsdk.memory._pg_functions import V2_FUNCTIONS, WRITE_FUNCTIONS
from ctxsdk.memory._pg_schema import SCHEMA_VERSION, _member_grants, _v1, _v2
from ctxsdk.memory._postgres import PostgresStore
from ctxsdk.memory._sqlite import SQLiteStore

from .test_pg_schema_v2 import Roles, _may_execute, _privileges, _version, roles

__all__ = ["roles"]  # the fixture, imported for the tests below

Store = SQLiteStore | PostgresStore
BLOB = bytes(range(16))


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    s: Store
    if request.param == "sqlite":
        s = SQLiteStore(tmp_path / "memory.db")
    else:
        s = PostgresStore(request.getfixturevalue("postgres_dsn"), namespace="v3")
    yield s
    s.close()


def _entity(name: str, **kw: Any) -> Node:
    return Node(id="", type="entity", name=name, **kw)


def _again(node: Node, **changes: Any) -> Node:
    """``node`` put again with ``changes`` (its id and uri kept)."""
    fields = {f: getattr(node, f) for f in Node.__slots__ if f not in ("created_at", "updated_at")}
    return Node(**{**fields, **changes})


def test_a_new_node_keeps_a_given_created_at_and_a_replace_keeps_the_stored_one(
    store: Store,
) -> None:
    a = store.put(Node(id="given-id", type="entity", name="A", created_at="2001-02-03"))
    assert (a.id, a.created_at, a.uri) == ("given-id", "2001-02-03", "ctx://entity/given-id")
    b = store.put(_again(a, name="A2", created_at="1999-01-01"))
    assert b.created_at == "2001-02-03" and store.get(a.id) == b
    c = store.put(_entity("C"))
    assert c.created_at == c.updated_at and store.get(c.id) == c


@pytest.mark.parametrize("column", ["name", "text", "aliases", "fail", "fix", "until"])
def test_vectors_go_when_an_indexed_column_changes(store: Store, column: str) -> None:
    a = store.put(_entity("A", text="t", aliases=("x",), fail="f", fix="g", until="u"))
    assert store.put_vectors("m", [(a.id, "h", BLOB)]) == 1
    value: Any = ("y",) if column == "aliases" else "changed"
    store.put(_again(a, **{column: value}))
    assert store.vectors("m") == {}


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"status": "archived"},
        {"extra": {"k": 1}},
        {"sources": (Source(session="s1", seq=2),)},
        {"uri": "ctx://entity/moved"},
        {"until_at": "2030-01-01"},
    ],
    ids=["same", "status", "extra", "sources", "uri", "until_at"],
)
def test_vectors_stay_when_no_indexed_column_changes(store: Store, changes: dict[str, Any]) -> None:
    a = store.put(_entity("A", text="t", aliases=("x",), fail="f", fix="g", until="u"))
    assert store.put_vectors("m", [(a.id, "h", BLOB)]) == 1
    store.put(_again(a, **changes))
    assert store.vectors("m") == {a.id: ("h", BLOB)}


def test_a_uri_held_by_another_node_is_refused_alike_and_nothing_written(store: Store) -> None:
    a = store.put(_entity("A", uri="ctx://entity/shared"))
    b = store.put(_entity("B", text="b"))
    store.put_vectors("m", [(b.id, "h", BLOB)])
    before = (store.revision(), store.nodes(), store.vectors("m"))
    said = f"uri 'ctx://entity/shared' is already node {a.id!r}"
    with pytest.raises(InvalidArgument, match=f"^{re.escape(said)}$"):
        store.put(_entity("C", uri="ctx://entity/shared"))  # a new node
    with pytest.raises(InvalidArgument, match=f"^{re.escape(said)}$"):
        store.put(_again(b, text="changed", uri="ctx://entity/shared"))  # a replace
    with pytest.raises(InvalidArgument, match=f"^{re.escape(said)}$"), store.batch():
        store.put(_entity("D"))  # the batch's earlier write is rolled back with it
        store.put(_entity("E", uri="ctx://entity/shared"))
    assert (store.revision(), store.nodes(), store.vectors("m")) == before


def test_put_vectors_writes_its_rows_in_order_in_one_transaction(store: Store) -> None:
    a = store.put(_entity("A"))
    r = store.revision()
    assert store.put_vectors("m", []) == 0 and store.revision() == r
    assert store.put_vectors("m", [("ghost", "h", BLOB)]) == 0 and store.revision() == r
    rows = [(a.id, "h1", BLOB), ("ghost", "h", BLOB), (a.id, "h2", BLOB[::-1])]
    assert store.put_vectors("m", iter(rows)) == 2  # the later row replaces the earlier
    assert store.vectors("m") == {a.id: ("h2", BLOB[::-1])} and store.revision() != r
    with pytest.raises(RuntimeError), store.batch():
        store.put_vectors("m", [(a.id, "h3", BLOB)])
        raise RuntimeError
    assert store.vectors("m") == {a.id: ("h2", BLOB[::-1])}


def _make_v2_database(conn: Any, namespaces: dict[str, str | None]) -> None:
    """The schema at version 2 as that version's code made it: its two migrations, then
    each namespace with its role granted version 2's functions (its create_namespace)."""
    with conn.transaction():
        conn.execute("CREATE SCHEMA ctxsdk")
        conn.execute("CREATE TABLE ctxsdk.schema_version (version integer NOT NULL)")
        conn.execute("INSERT INTO ctxsdk.schema_version VALUES (2)")
        _v1(conn)
        _v2(conn)
        for namespace, role in namespaces.items():
            if role is not None:
                _member_grants(conn, role, V2_FUNCTIONS)
            conn.execute("INSERT INTO ctxsdk.namespaces VALUES (%s, %s)", (namespace, role))
            conn.execute("INSERT INTO ctxsdk.revisions (namespace) VALUES (%s)", (namespace,))


def _put_v2(dsn: str, namespace: str, node_id: str) -> None:
    """A node with a vector, written as version 2's store wrote them (its functions)."""
    import psycopg

    with psycopg.connect(dsn) as conn:
        conn.execute(
            "SELECT ctxsdk.put_node(%s, %s, 'entity', %s, 'text', '[]', %s, '[]', NULL, NULL, "
            "NULL, NULL, 'active', '2020-01-01', '2020-01-01', '{}')",
            (namespace, node_id, node_id, f"ctx://entity/{node_id}"),
        )
        conn.execute("SELECT ctxsdk.put_vector(%s, %s, 'm', 'h', %s)", (namespace, node_id, BLOB))
        conn.execute("SELECT ctxsdk.bump_revision(%s)", (namespace,))


def test_a_version_2_database_is_migrated_to_3_by_its_owner(roles: Roles) -> None:
    import psycopg

    keeper = roles.dsn("keeper")
    with psycopg.connect(keeper, autocommit=True) as conn:
        _make_v2_database(conn, {"a": roles("team_a"), "mine": None})
        for f in V2_FUNCTIONS:  # _may_execute asks of version 3's too: not there yet
            ok = conn.execute(
                "SELECT has_function_privilege(%s, %s, 'EXECUTE')", (roles("alice"), f)
            )
            assert ok.fetchone() == (True,), f
    _put_v2(roles.dsn("alice"), "a", "alice-v2")

    with pytest.raises(StoreError, match="administrator"):  # a member may not migrate
        PostgresStore(roles.dsn("alice"), namespace="a", create=False)
    with PostgresStore(keeper, namespace="mine", create=False):  # the owner opens it
        pass
    with psycopg.connect(keeper, autocommit=True) as conn:
        assert _version(conn) == SCHEMA_VERSION >= 3
        for who in ("team_a", "alice"):
            assert _privileges(conn, roles(who))["nodes"] == {"SELECT"}, who
            assert _may_execute(conn, roles(who)) == set(WRITE_FUNCTIONS), who
        assert _may_execute(conn, roles("nobody")) == set()
        definers = conn.execute(
            "SELECT p.oid::regprocedure::text, pg_get_userbyid(p.proowner) FROM pg_proc p "
            "WHERE p.pronamespace = 'ctxsdk'::regnamespace AND p.prosecdef"
        ).fetchall()
        assert sorted(definers) == sorted((f, roles("keeper")) for f in WRITE_FUNCTIONS)

    with PostgresStore(roles.dsn("alice"), namespace="a", create=False) as alice:
        (old,) = alice.nodes()
        assert (old.id, old.created_at) == ("alice-v2", "2020-01-01")
        assert alice.vectors("m") == {"alice-v2": ("h", BLOB)} and alice.revision() == 1
        kept = alice.put(_again(old, status="archived"))  # no indexed change
        assert kept.created_at == "2020-01-01" and "alice-v2" in alice.vectors("m")
        alice.put(_again(old, text="new text"))
        assert alice.vectors("m") == {}
        new = alice.put(_entity("alice-v3"))
        assert alice.put_vectors("m", [(new.id, "h", BLOB)]) == 1
        assert alice.revision() == 5  # four writes since
    assert PostgresStore.init_schema(keeper) == SCHEMA_VERSION  # up to date: nothing to do
