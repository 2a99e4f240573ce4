"""Schema version 4 of the PostgreSQL memory: the change feed (``PostgresStore.changes``).
Triggers stamp every node row written with the revision its transaction commits as
(``nodes.changed``) and keep a tombstone of every node deleted (``ctxsdk.gone``), whatever
writes it: the write functions a member calls, a load, an update, a cascade. Checked here
on the real server, beside the conformance suite's protocol-level checks: the stamps and
tombstones themselves, that a member can write neither, that row-level security keeps
another namespace's out of ``changes()`` and out of a hand-written query, that a namespace
deleted and made again starts with no tombstones, and that a database left at version 3
(made with the version 1-3 migrations and version 3's grants) is migrated to 4 by its
owner, its data and members kept.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ctxsdk.errors import StoreError
from ctxsdk.memory._model import Node
from ctxsdk.memory._pg_functions import V4_TRIGGERS, V5_TRIGGERS, WRITE_FUNCTIONS
from ctxsdk.memory._pg_schema import (
    SCHEMA_VERSION,
    create_namespace,
)
from ctxsdk.memory._postgres import PostgresStore

from ._old_schemas import make_database, put_as_of
from .test_pg_schema_v2 import Roles, _may_execute, _privileges, _version, roles
from .test_store_conformance import Teams, _refused, teams

__all__ = ["roles", "teams"]  # the fixtures, imported for the tests below


def _entity(name: str, **kw: Any) -> Node:
    return Node(id="", type="entity", name=name, **kw)


def _stamps(dsn: str, table: str = "nodes") -> dict[tuple[str, str], int]:
    """(namespace, id) -> changed of every row of ``table`` the connecting role may see."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(f"SELECT namespace, id, changed FROM ctxsdk.{table}").fetchall()
    return {(ns, i): int(c) for ns, i, c in rows}


def _ids(store: PostgresStore, since: int) -> tuple[list[str], list[str]]:
    got = store.changes(since)
    assert got is not None
    return [n.id for n in got.nodes], got.gone


@pytest.fixture
def alice(teams: Teams) -> Iterator[PostgresStore]:
    with PostgresStore(teams.dsn("alice"), namespace="a", create=False) as s:
        yield s


def test_each_write_is_stamped_with_the_revision_it_commits_as(
    teams: Teams, alice: PostgresStore
) -> None:
    a = alice.put(_entity("A"))
    b = alice.put(_entity("B"))
    assert alice.revision() == 2
    with alice.batch():  # one transaction, one revision: both rows stamped with it
        c = alice.put(_entity("C"))
        alice.put(Node(**{**_fields(a), "status": "archived"}))
    alice.update("nodes", [b.id], {"text": "updated exactly"})  # revision 4
    alice.load(
        "nodes",
        [{**alice.rows("nodes")[0], "id": "loaded", "uri": "ctx://x/loaded", "status": "active"}],
    )
    assert alice.revision() == 5
    assert _stamps(teams.dsn("alice")) == {
        ("a", a.id): 3,
        ("a", b.id): 4,
        ("a", c.id): 3,
        ("a", "loaded"): 5,
    }
    assert _stamps(teams.dsn("alice"), "gone") == {}
    assert "changed" not in alice.rows("nodes")[0]  # the store's own bookkeeping

    # what changes() reads from them: every status, in id order
    got = alice.changes(2)
    assert got is not None and got.gone == []
    assert got.nodes == sorted(alice.nodes(include_archived=True), key=lambda n: n.id)
    assert [n.id for n in got.nodes if n.status == "archived"] == [a.id]
    assert _ids(alice, 4) == (["loaded"], []) and _ids(alice, 5) == ([], [])
    assert alice.changes(-1) is None

    # a delete leaves a tombstone stamped with its revision; putting the id again takes it
    assert alice.delete(b.id) and alice.revision() == 6
    assert _stamps(teams.dsn("alice"), "gone") == {("a", b.id): 6}
    assert _ids(alice, 5) == ([], [b.id])
    assert _ids(alice, 0) == (sorted([a.id, c.id, "loaded"]), [b.id])
    again = alice.put(Node(**{**_fields(b), "name": "B again"}))  # revision 7
    assert _stamps(teams.dsn("alice"), "gone") == {}
    assert _ids(alice, 5) == ([again.id], [])
    # deleted twice: the later revision
    alice.delete(b.id)
    alice.put(_entity("D"))
    alice.delete(alice.put(Node(**{**_fields(b), "name": "B thrice"})).id)
    assert _stamps(teams.dsn("alice"), "gone") == {("a", b.id): 11}

    # a write rolled back stamps nothing and buries nothing
    before = (_stamps(teams.dsn("alice")), _stamps(teams.dsn("alice"), "gone"))
    with pytest.raises(RuntimeError), alice.batch():
        alice.put(Node(**{**_fields(a), "name": "A2"}))
        alice.delete(c.id)
        raise RuntimeError
    assert (_stamps(teams.dsn("alice")), _stamps(teams.dsn("alice"), "gone")) == before
    assert _ids(alice, alice.revision()) == ([], [])


def _fields(node: Node) -> dict[str, Any]:
    return {f: getattr(node, f) for f in Node.__slots__ if f not in ("created_at", "updated_at")}


def test_changes_read_one_snapshot_without_an_uncommitted_write(teams: Teams) -> None:
    with (
        PostgresStore(teams.dsn("alice"), namespace="a", create=False) as reader,
        PostgresStore(teams.dsn("alice"), namespace="a", create=False) as writer,
    ):
        first = writer.put(_entity("first"))
        with writer.batch():  # open, not committed, while the reader reads
            writer.put(_entity("pending"))
            writer.delete(first.id)
            assert _ids(reader, 0) == ([first.id], [])
            assert reader.revision() == 1
            with writer.snapshot():  # inside the batch: its own writes, stamped 2
                assert len(_ids(writer, 1)[0]) == 1 and _ids(writer, 1)[1] == [first.id]
        assert reader.revision() == 2
        got = reader.changes(1)
        assert got is not None and [n.name for n in got.nodes] == ["pending"]
        assert got.gone == [first.id]
        with reader.snapshot():  # inside the caller's snapshot
            assert _ids(reader, 2) == ([], [])


def test_a_member_cannot_write_the_feed(teams: Teams, alice: PostgresStore) -> None:
    import psycopg
    from psycopg.types.json import Jsonb

    node = alice.put(_entity("mine"))
    alice.delete(alice.put(_entity("deleted")).id)
    before = (_stamps(teams.dsn("alice")), _stamps(teams.dsn("alice"), "gone"))
    with psycopg.connect(teams.dsn("alice"), autocommit=True) as sql:
        for statement in (
            "UPDATE ctxsdk.nodes SET changed = 99",
            "UPDATE ctxsdk.gone SET changed = 99",
            "DELETE FROM ctxsdk.gone",
            "TRUNCATE ctxsdk.gone",
            "INSERT INTO ctxsdk.gone VALUES ('a', 'planted', 99)",
            "INSERT INTO ctxsdk.gone VALUES ('b', 'planted', 99)",
            "ALTER TABLE ctxsdk.nodes DISABLE TRIGGER node_written",
            "DROP TRIGGER node_deleted ON ctxsdk.nodes",
            "ALTER TABLE ctxsdk.gone DISABLE ROW LEVEL SECURITY",
        ):
            _refused(sql, statement)
        sql.execute("BEGIN")
        _refused(sql, "LOCK TABLE ctxsdk.gone IN ACCESS EXCLUSIVE MODE")
        sql.execute("ROLLBACK")
        # the write functions: update_row writes a fixed list of columns; a loaded row's
        # changed is the trigger's, whatever the row says
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="not 'changed'"):
            sql.execute(
                "SELECT ctxsdk.update_row('a', 'nodes', ARRAY[%s], ARRAY['changed'], ARRAY['99'])",
                (node.id,),
            )
        row = {**alice.rows("nodes")[0], "id": "loaded", "uri": "ctx://x/loaded"}
        row.update(aliases="[]", sources="[]", extra="{}", changed=99)
        with sql.transaction():
            sql.execute("SELECT ctxsdk.write_lock('a')")
            got = sql.execute("SELECT ctxsdk.load_rows('a', 'nodes', %s)", (Jsonb([row]),))
            assert got.fetchone() == (0,)
            sql.execute("SELECT ctxsdk.bump_revision('a')")
    after = _stamps(teams.dsn("alice"))
    assert after.pop(("a", "loaded")) == alice.revision() == 4
    assert (after, _stamps(teams.dsn("alice"), "gone")) == before


def test_another_namespace_stays_out_of_the_feed(teams: Teams, alice: PostgresStore) -> None:
    import psycopg

    mine = alice.put(Node(id="shared", type="entity", name="alice's"))
    dropped = alice.put(_entity("alice-dropped"))
    alice.delete(dropped.id)
    with PostgresStore(teams.dsn("bob"), namespace="b", create=False) as bob:
        for _ in range(3):  # b's revision runs ahead of a's
            bob.put(_entity("bob-kestrel"))
        theirs = bob.put(Node(id="shared", type="entity", name="bob's"))
        bob.delete(theirs.id)  # the same id as alice's node, in b
        bobs = bob.put(_entity("bob-dropped"))
        bob.delete(bobs.id)
        assert bob.revision() == 7 > alice.revision() == 3
        assert _ids(bob, 0)[1] == sorted(["shared", bobs.id])
    got = alice.changes(0)
    assert got is not None
    assert [n.name for n in got.nodes] == ["alice's"] and got.nodes[0] == mine
    assert got.gone == [dropped.id]
    assert alice.get("shared") == mine

    with psycopg.connect(teams.dsn("alice"), autocommit=True) as sql:
        rows = sql.execute("SELECT * FROM ctxsdk.gone").fetchall()
        assert [r[:2] for r in rows] == [("a", dropped.id)]
        assert sql.execute("SELECT count(*) FROM ctxsdk.gone WHERE namespace = 'b'").fetchone() == (
            0,
        )
        names = sql.execute("SELECT name FROM ctxsdk.nodes WHERE changed > 0").fetchall()
        assert names == [("alice's",)]
    with psycopg.connect(teams.admin_dsn, autocommit=True) as admin:  # b's are there
        count = admin.execute("SELECT count(*) FROM ctxsdk.gone WHERE namespace = 'b'")
        assert count.fetchone() == (2,)


def test_a_namespace_deleted_and_made_again_starts_with_no_tombstones(
    teams: Teams, alice: PostgresStore
) -> None:
    import psycopg

    role = teams.role("team_a")
    for how in ("cascade", "nodes first"):  # whichever order the cascade takes
        alice.put(_entity(f"kept {how}"))
        alice.delete(alice.put(_entity(f"dropped {how}")).id)
        with psycopg.connect(teams.admin_dsn, autocommit=True) as admin:
            with admin.transaction():
                if how == "nodes first":  # tombstones made, then the namespace goes
                    admin.execute("DELETE FROM ctxsdk.nodes WHERE namespace = 'a'")
                    # the last round's fresh one, this round's dropped one, and its kept one
                    assert _count(admin, "gone", "a") == 3
                admin.execute("DELETE FROM ctxsdk.namespaces WHERE namespace = 'a'")
                for table in ("gone", "nodes", "revisions"):
                    assert _count(admin, table, "a") == 0, (how, table)
            assert _count(admin, "gone", "b") == 0 and _count(admin, "revisions", "b") == 1
            create_namespace(admin, "a", role=role, where="test")
        assert alice.revision() == 0 and alice.changes(0) == ([], [])
        fresh = alice.put(_entity(f"fresh {how}"))
        assert _ids(alice, 0) == ([fresh.id], [])
        alice.delete(fresh.id)
        assert _ids(alice, 0) == ([], [fresh.id])


def _count(conn: Any, table: str, namespace: str) -> int:
    row = conn.execute(f"SELECT count(*) FROM ctxsdk.{table} WHERE namespace = %s", (namespace,))
    got = row.fetchone()
    assert got is not None
    return int(got[0])


def test_a_version_3_database_is_migrated_to_4_by_its_owner(roles: Roles) -> None:
    import psycopg

    keeper = roles.dsn("keeper")
    with psycopg.connect(keeper, autocommit=True) as conn:
        make_database(conn, 3, {"a": roles("team_a"), "open": None}, [roles("carol")])
        assert conn.execute("SELECT to_regclass('ctxsdk.gone')").fetchone() == (None,)
    put_as_of(roles.dsn("alice"), "a", "alice-v3")
    put_as_of(roles.dsn("alice"), "a", "alice-v3-dropped")
    with psycopg.connect(roles.dsn("alice"), autocommit=True) as conn:
        conn.execute("SELECT ctxsdk.delete_node('a', 'alice-v3-dropped')")
        conn.execute("SELECT ctxsdk.bump_revision('a')")
    put_as_of(roles.dsn("carol"), "open", "carol-v3")

    with pytest.raises(StoreError, match="administrator"):  # a member may not migrate
        PostgresStore(roles.dsn("alice"), namespace="a", create=False)
    with psycopg.connect(keeper, autocommit=True) as conn:
        assert _version(conn) == 3
    with PostgresStore(keeper, namespace="open", create=False):  # the owner opens it
        pass
    with psycopg.connect(keeper, autocommit=True) as conn:
        assert _version(conn) == SCHEMA_VERSION >= 4
        for who in ("team_a", "alice", "carol"):
            assert _privileges(conn, roles(who))["nodes"] == {"SELECT"}, who
            assert _may_execute(conn, roles(who)) == set(WRITE_FUNCTIONS), who
            got = conn.execute(
                "SELECT has_table_privilege(%s, 'ctxsdk.gone', p) FROM unnest(ARRAY['SELECT', "
                "'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE']) p",
                (roles(who),),
            ).fetchall()
            assert got == [(True,), (False,), (False,), (False,), (False,)], who
        no = conn.execute(
            "SELECT has_table_privilege(%s, 'ctxsdk.gone', 'SELECT')", (roles("nobody"),)
        )
        assert no.fetchone() == (False,)
        # the trigger functions: the owner's, run as the writer, EXECUTE for nobody else
        functions = conn.execute(
            "SELECT p.oid::regprocedure::text, pg_get_userbyid(p.proowner), p.prosecdef, "
            "p.proconfig FROM pg_proc p WHERE p.pronamespace = 'ctxsdk'::regnamespace "
            "AND p.prorettype = 'trigger'::regtype"
        ).fetchall()
        assert sorted(f[0] for f in functions) == sorted((*V4_TRIGGERS, *V5_TRIGGERS))
        for name, owner, definer, config in functions:
            assert (owner, definer, config) == (
                roles("keeper"),
                False,
                ["search_path=pg_catalog, pg_temp", "plan_cache_mode=force_custom_plan"],
            ), name
            for who in ("alice", "nobody"):
                may = conn.execute(
                    "SELECT has_function_privilege(%s, %s, 'EXECUTE')", (roles(who), name)
                )
                assert may.fetchone() == (False,), (name, who)
        # the rows written before: kept, stamped 0, no tombstone for the earlier delete
        assert _stamps(keeper) == {("a", "alice-v3"): 0, ("open", "carol-v3"): 0}
        assert _stamps(keeper, "gone") == {}

    with PostgresStore(roles.dsn("alice"), namespace="a", create=False) as alice:
        (old,) = alice.nodes()
        assert (old.id, old.created_at) == ("alice-v3", "2020-01-01")
        assert alice.revision() == 3 and _ids(alice, 3) == ([], [])
        new = alice.put(_entity("alice-v4"))
        alice.put(Node(**{**_fields(old), "text": "changed"}))
        assert _ids(alice, 3) == (sorted(["alice-v3", new.id]), [])
        alice.delete(new.id)
        assert _ids(alice, 3) == (["alice-v3"], [new.id])
        assert _ids(alice, 5) == ([], [new.id])
    with PostgresStore(roles.dsn("carol"), namespace="open", create=False) as carol:
        carol.delete("carol-v3")
        assert _ids(carol, 0) == ([], ["carol-v3"])
        with psycopg.connect(roles.dsn("carol"), autocommit=True) as sql:
            assert sql.execute("SELECT namespace, id FROM ctxsdk.gone").fetchall() == [
                ("open", "carol-v3")
            ]
    assert PostgresStore.init_schema(keeper) == SCHEMA_VERSION  # up to date: nothing to do
