"""A PostgreSQL memory schema as an older version's code left it, for the migration tests:
``make_database(conn, version, ...)`` runs that version's migrations and grants what its
``create_namespace`` granted; ``put_as_of`` writes a node as that version's store did."""

from __future__ import annotations

from typing import Any

from ctxsdk.memory._pg_schema import _MIGRATIONS, _member_grants


def make_database(
    conn: Any, version: int, namespaces: dict[str, str | None], grantees: list[str]
) -> None:
    """The schema at ``version``: its migrations, then each namespace with its role (and
    ``grantees``) granted what that version granted: the tables and write functions there
    were then (``_member_grants`` skips those a later version makes)."""
    with conn.transaction():
        conn.execute("CREATE SCHEMA ctxsdk")
        conn.execute("CREATE TABLE ctxsdk.schema_version (version integer NOT NULL)")
        conn.execute("INSERT INTO ctxsdk.schema_version VALUES (%s)", (version,))
        for step in _MIGRATIONS[:version]:
            step(conn)
        members = {r for r in namespaces.values() if r is not None} | set(grantees)
        for member in sorted(members):
            _member_grants(conn, member)
        for namespace, role in namespaces.items():
            conn.execute("INSERT INTO ctxsdk.namespaces VALUES (%s, %s)", (namespace, role))
            conn.execute("INSERT INTO ctxsdk.revisions (namespace) VALUES (%s)", (namespace,))


def put_as_of(dsn: str, namespace: str, node_id: str, node_type: str = "entity") -> None:
    """A node written as version 3's and 4's stores wrote one (write_node, under the write
    lock)."""
    import psycopg

    with psycopg.connect(dsn) as conn:
        conn.execute("SELECT ctxsdk.write_lock(%s)", (namespace,))
        got = conn.execute(
            "SELECT ctxsdk.write_node(%s, false, %s, %s, %s, 'text', '[]', %s, '[]', "
            "NULL, NULL, NULL, NULL, 'active', '2020-01-01', '2020-01-01', '{}')",
            (namespace, node_id, node_type, node_id, f"ctx://{node_type}/{node_id}"),
        ).fetchone()
        assert got == (["ok", "2020-01-01"],)
        conn.execute("SELECT ctxsdk.bump_revision(%s)", (namespace,))
