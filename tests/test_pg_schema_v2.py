"""Schema version 2 of the PostgreSQL memory: a namespace's members hold no table privilege
but SELECT and write through functions that run as the schema's owner
(``ctxsdk/memory/_pg_functions.py``). What a role is granted, what the functions are, and a
database left at version 1 (made here with the version-1 migration and its grants, as the
code of that version made it) migrated to 2 (and on, to this code's version) when its owner
opens it: members' old writes revoked, their data kept, and their writes going on through
the functions.

The owner here is a login role that is not a superuser (a superuser is a member of every
role, so it would pass any check): it owns the schema, as an administrator would.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from ctxsdk.errors import NamespaceDenied, StoreError
from ctxsdk.memory._model import Node
from ctxsdk.memory._pg_functions import V5_FUNCTIONS, WRITE_FUNCTIONS
from ctxsdk.memory._pg_schema import SCHEMA_VERSION, _v1
from ctxsdk.memory._postgres import PostgresStore

if TYPE_CHECKING:
    import psycopg

    from ctxsdk.testing import LocalPostgres

TABLES = ("schema_version", "namespaces", "revisions", "nodes", "edges", "meta", "vectors")
WRITES = ("INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER")

# What create_namespace granted a namespace's role in schema version 1.
_V1_GRANTS = {
    "schema_version": "SELECT",
    "namespaces": "SELECT",
    "revisions": "SELECT, UPDATE",
    "nodes": "SELECT, INSERT, UPDATE, DELETE",
    "edges": "SELECT, INSERT, UPDATE, DELETE",
    "meta": "SELECT, INSERT, UPDATE, DELETE",
    "vectors": "SELECT, INSERT, UPDATE, DELETE",
}

_numbers = itertools.count(1)


@dataclass
class Roles:
    """Per-test role names (roles are the server's, not the database's)."""

    server: LocalPostgres
    dbname: str
    suffix: str

    def __call__(self, name: str) -> str:
        return f"{name}_{self.suffix}"

    def dsn(self, who: str) -> str:
        return self.server.dsn(user=self(who), dbname=self.dbname)


@pytest.fixture
def roles(postgres_server: LocalPostgres, postgres_dsn: str) -> Iterator[Roles]:
    """``keeper`` (a login role that may create schemas in the database: the owner to be),
    ``team_a`` with its member ``alice``, ``carol`` (granted the tables directly, for the
    open namespace) and ``nobody`` (granted nothing)."""
    import psycopg

    dbname = postgres_dsn.rsplit("/", 1)[1]
    r = Roles(postgres_server, dbname, f"{dbname}_{next(_numbers)}")
    with psycopg.connect(postgres_dsn, autocommit=True) as su:
        su.execute(f"CREATE ROLE {r('keeper')} LOGIN CREATEROLE")
        su.execute(f"GRANT CREATE ON DATABASE {dbname} TO {r('keeper')}")
        su.execute(f"CREATE ROLE {r('team_a')} NOLOGIN")
        su.execute(f"CREATE ROLE {r('alice')} LOGIN IN ROLE {r('team_a')}")
        su.execute(f"CREATE ROLE {r('carol')} LOGIN")
        su.execute(f"CREATE ROLE {r('nobody')} LOGIN")
    yield r
    with psycopg.connect(postgres_dsn, autocommit=True) as su:
        names = [r(n) for n in ("alice", "carol", "nobody", "team_a", "keeper")]
        su.execute("DROP SCHEMA IF EXISTS ctxsdk CASCADE")
        su.execute(f"DROP OWNED BY {', '.join(names)}")
        for name in names:
            su.execute(f"DROP ROLE {name}")


def make_v1_database(
    conn: psycopg.Connection[Any], namespaces: dict[str, str | None], grantees: list[str]
) -> None:
    """The schema at version 1 as that version's code made it: the version-1 migration,
    each namespace with its role, and version 1's table grants to every role named (but the
    owner's own) and to ``grantees``."""
    owner = conn.execute("SELECT current_user").fetchone()
    assert owner is not None
    with conn.transaction():
        conn.execute("CREATE SCHEMA ctxsdk")
        conn.execute("CREATE TABLE ctxsdk.schema_version (version integer NOT NULL)")
        conn.execute("INSERT INTO ctxsdk.schema_version VALUES (1)")
        _v1(conn)
        for namespace, role in namespaces.items():
            conn.execute("INSERT INTO ctxsdk.namespaces VALUES (%s, %s)", (namespace, role))
            conn.execute("INSERT INTO ctxsdk.revisions (namespace) VALUES (%s)", (namespace,))
        members = {r for r in namespaces.values() if r is not None and r != owner[0]}
        for role in sorted(members | set(grantees)):
            conn.execute(f"GRANT USAGE ON SCHEMA ctxsdk TO {role}")
            for table, rights in _V1_GRANTS.items():
                conn.execute(f"GRANT {rights} ON ctxsdk.{table} TO {role}")


def _put_v1(dsn: str, namespace: str, node_id: str) -> None:
    """A node and a meta value written as version 1's store wrote them: plain SQL on the
    tables, the revision bumped (what a member could do then)."""
    import psycopg

    with psycopg.connect(dsn) as conn:
        conn.execute(
            "INSERT INTO ctxsdk.nodes (namespace, id, type, name, uri, created_at, updated_at) "
            "VALUES (%s, %s, 'entity', %s, %s, 't', 't')",
            (namespace, node_id, node_id, f"ctx://entity/{node_id}"),
        )
        conn.execute(
            "INSERT INTO ctxsdk.meta VALUES (%s, 'written', %s)", (namespace, f'"{node_id}"')
        )
        conn.execute(
            "UPDATE ctxsdk.revisions SET revision = revision + 1 WHERE namespace = %s",
            (namespace,),
        )


def _privileges(conn: psycopg.Connection[Any], role: str) -> dict[str, set[str]]:
    """The privileges ``role`` holds (directly or through a role it is in) on each table."""
    out: dict[str, set[str]] = {}
    for table in TABLES:
        out[table] = {
            p
            for p in ("SELECT", *WRITES)
            if conn.execute(
                "SELECT has_table_privilege(%s, %s, %s)", (role, f"ctxsdk.{table}", p)
            ).fetchone()
            == (True,)
        }
    return out


def _may_execute(conn: psycopg.Connection[Any], role: str) -> set[str]:
    return {
        f
        for f in WRITE_FUNCTIONS
        if conn.execute("SELECT has_function_privilege(%s, %s, 'EXECUTE')", (role, f)).fetchone()
        == (True,)
    }


def _version(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute("SELECT version FROM ctxsdk.schema_version").fetchone()
    assert row is not None
    return int(row[0])


def test_a_namespace_role_holds_select_and_execute_only(roles: Roles) -> None:
    import psycopg

    PostgresStore.init_schema(roles.dsn("keeper"))
    PostgresStore.create_namespace(roles.dsn("keeper"), "a", role=roles("team_a"))
    PostgresStore.create_namespace(roles.dsn("keeper"), "a", role=roles("team_a"))  # again
    with psycopg.connect(roles.dsn("keeper"), autocommit=True) as conn:
        assert _version(conn) == SCHEMA_VERSION >= 2
        for who in ("team_a", "alice"):
            assert _privileges(conn, roles(who)) == {t: {"SELECT"} for t in TABLES}, who
            assert _may_execute(conn, roles(who)) == set(WRITE_FUNCTIONS), who
        assert _may_execute(conn, roles("nobody")) == set()  # EXECUTE revoked from PUBLIC
        assert _privileges(conn, roles("keeper"))["nodes"] >= {"SELECT", "INSERT", "UPDATE"}
        functions = conn.execute(
            "SELECT p.oid::regprocedure::text, pg_get_userbyid(p.proowner), p.prosecdef, "
            "p.proconfig FROM pg_proc p WHERE p.pronamespace = 'ctxsdk'::regnamespace "
            "AND p.prosecdef"
        ).fetchall()
        assert sorted(f[0] for f in functions) == sorted(WRITE_FUNCTIONS)
        for name, owner, definer, config in functions:
            # every function plans per call but write_index (test_pg_schema_v5 says why)
            per_call = [] if name in V5_FUNCTIONS else ["plan_cache_mode=force_custom_plan"]
            assert (owner, definer, config) == (
                roles("keeper"),
                True,
                ["search_path=pg_catalog, pg_temp", *per_call],
            ), name


def test_a_version_1_database_is_migrated_by_its_owner(roles: Roles) -> None:
    import psycopg

    keeper = roles.dsn("keeper")
    with psycopg.connect(keeper, autocommit=True) as conn:
        namespaces = {"a": roles("team_a"), "open": None, "mine": roles("keeper")}
        make_v1_database(conn, namespaces, grantees=[roles("carol")])
    _put_v1(roles.dsn("alice"), "a", "alice-v1")
    _put_v1(roles.dsn("carol"), "open", "carol-v1")
    _put_v1(keeper, "mine", "keeper-v1")
    with psycopg.connect(roles.dsn("alice")) as sql:  # what version 1 let a member do
        sql.execute("LOCK TABLE ctxsdk.nodes IN ACCESS EXCLUSIVE MODE")
        sql.rollback()

    # a member may not migrate: refused, and the database is left at version 1
    with pytest.raises(StoreError, match="administrator"):
        PostgresStore(roles.dsn("alice"), namespace="a", create=False)
    with psycopg.connect(keeper, autocommit=True) as conn:
        assert _version(conn) == 1
        assert "INSERT" in _privileges(conn, roles("alice"))["nodes"]

    with PostgresStore(keeper, namespace="mine", create=False) as mine:  # the owner opens it
        assert [n.name for n in mine.nodes()] == ["keeper-v1"]
        mine.put(Node(id="", type="entity", name="keeper-v2"))
    with psycopg.connect(keeper, autocommit=True) as conn:
        assert _version(conn) == SCHEMA_VERSION
        for who in ("team_a", "alice", "carol"):
            assert _privileges(conn, roles(who)) == {t: {"SELECT"} for t in TABLES}, who
            assert _may_execute(conn, roles(who)) == set(WRITE_FUNCTIONS), who
        assert _may_execute(conn, roles("nobody")) == set()
        assert {"INSERT", "UPDATE", "DELETE"} <= _privileges(conn, roles("keeper"))["nodes"]

    # data kept; members write on, through the functions only
    with PostgresStore(roles.dsn("alice"), namespace="a", create=False) as alice:
        assert [n.name for n in alice.nodes()] == ["alice-v1"]
        assert alice.get_meta("written") == "alice-v1"
        assert alice.revision() == 1
        alice.put(Node(id="", type="entity", name="alice-v2"))
        assert alice.revision() == 2
    with PostgresStore(roles.dsn("carol"), namespace="open", create=False) as carol:
        assert [n.name for n in carol.nodes()] == ["carol-v1"]
        carol.set_meta("written", "carol-v2")
    with pytest.raises(NamespaceDenied):
        PostgresStore(roles.dsn("carol"), namespace="a", create=False)
    with psycopg.connect(roles.dsn("alice")) as sql:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            sql.execute("LOCK TABLE ctxsdk.nodes IN ACCESS EXCLUSIVE MODE")
        sql.rollback()
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="may not write"):
            sql.execute("SELECT ctxsdk.set_meta('mine', 'k', '1')")
        sql.rollback()
    with PostgresStore(keeper, namespace="a", create=False) as a:  # the owner sees all
        assert sorted(n.name for n in a.nodes()) == ["alice-v1", "alice-v2"]
        assert PostgresStore.init_schema(keeper) == SCHEMA_VERSION  # up to date: nothing to do
