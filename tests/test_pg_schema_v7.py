"""Schema version 7 of the PostgreSQL memory: ``ctxsdk.lex_lengths`` (each indexed
document's length, kept past its node's delete until a catch-up drops it) and the
``write_index`` that uses it. Checked on the real server: a node deleted and put again
between two catch-ups is known whatever its terms (version 6 knew it by its terms only, so a
document without terms kept links naming it at its old place); the document count and total
length a catch-up keeps as it goes are those a recount gives, after any mix of writes,
documents without terms, drops, deletes and deletes put again; a namespace deleted takes its
length rows; and a database left at version 6 is migrated to 7 by its owner, its grants,
settings and index kept.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from ctxsdk.errors import StoreError
from ctxsdk.memory._index_doc import LexicalRow
from ctxsdk.memory._model import Node
from ctxsdk.memory._pg_functions import V5_FUNCTIONS, WRITE_FUNCTIONS
from ctxsdk.memory._pg_schema import SCHEMA_VERSION
from ctxsdk.memory._postgres import PostgresStore

from ._old_schemas import make_database, put_as_of
from .test_pg_schema_v2 import Roles, _may_execute, _version, roles
from .test_pg_schema_v5 import _in_order
from .test_store_conformance import Teams, teams

__all__ = ["roles", "teams"]  # the fixtures, imported for the tests below

V = "lex-1"


def _row(
    node_id: str,
    terms: dict[str, int] | None = None,
    *,
    group: str | None = None,
    order: float | None = None,
) -> LexicalRow:
    terms = {"word": 1} if terms is None else terms
    return LexicalRow(node_id, sum(terms.values()), 0, group, order, None, "", dict(terms))


def _index(dsn: str, namespace: str = "a") -> dict[str, Any]:
    """What the index holds for ``namespace``: each doc's (length, prev, next), each
    length row, the ids with terms, and a recount of the docs (count, total length)."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        docs = conn.execute(
            "SELECT id, length, prev, next FROM ctxsdk.lex_docs WHERE namespace = %s",
            (namespace,),
        ).fetchall()
        lengths = conn.execute(
            "SELECT id, length FROM ctxsdk.lex_lengths WHERE namespace = %s", (namespace,)
        ).fetchall()
        termed = conn.execute(
            "SELECT DISTINCT id FROM ctxsdk.lex_terms WHERE namespace = %s", (namespace,)
        ).fetchall()
    return {
        "docs": {i: (n, p, q) for i, n, p, q in docs},
        "lengths": dict(lengths),
        "termed": {i for (i,) in termed},
        "recount": (len(docs), sum(n for _, n, _, _ in docs)),
    }


@pytest.fixture
def alice(teams: Teams) -> Iterator[PostgresStore]:
    with PostgresStore(teams.dsn("alice"), namespace="a", create=False, timeout=5) as s:
        yield s


def test_a_doc_without_terms_deleted_and_put_again_leaves_its_old_place(
    teams: Teams, alice: PostgresStore
) -> None:
    """x has no terms; another writer deletes its node and puts it again before the next
    catch-up, which writes it at the end of its group. Its old neighbours are joined (version
    6 left them naming x), and the counts are a recount's."""
    for name in ("a", "x", "c"):
        alice.put(Node(id=name, type="entity", name=name))
    rows = [
        _row("a", {"kiwi": 2}, group="g", order=1.0),
        _row("x", {}, group="g", order=2.0),
        _row("c", {"mango": 1}, group="g", order=3.0),
    ]
    assert alice.write_lexical(alice.revision(), V, rows, [], rebuild=True) == 3
    dsn = teams.dsn("alice")
    assert _index(dsn)["docs"] == {"a": (2, None, "x"), "x": (0, "a", "c"), "c": (1, "x", None)}
    assert alice.lexical_state()[2:] == (3, 3)

    alice.delete("x")
    alice.put(Node(id="x", type="entity", name="x"))
    moved = _row("x", {}, group="g", order=9.0)
    assert alice.write_lexical(alice.revision(), V, [moved], []) == 1
    got = _index(dsn)
    assert got["docs"] == {"a": (2, None, "c"), "c": (1, "a", "x"), "x": (0, "c", None)}
    assert got["lengths"] == {"a": 2, "x": 0, "c": 1}
    assert alice.lexical_state()[2:] == got["recount"] == (3, 3)

    # put again with terms, and deleted for good: the length row goes with its terms
    alice.delete("x")
    alice.put(Node(id="x", type="entity", name="x"))
    assert alice.write_lexical(alice.revision(), V, [_row("x", {"pear": 4}, group="g")], []) == 1
    assert alice.lexical_state()[2:] == (3, 7)
    alice.delete("x")
    assert alice.write_lexical(alice.revision(), V, [], ["x"]) == 0
    got = _index(dsn)
    assert got["docs"] == {"a": (2, None, "c"), "c": (1, "a", None)}
    assert got["lengths"] == {"a": 2, "c": 1} and got["termed"] == {"a", "c"}
    assert alice.lexical_state()[2:] == (2, 3)


def test_the_counts_kept_are_a_recounts(teams: Teams, alice: PostgresStore) -> None:
    """Random catch-ups (writes with and without terms, moves, drops, deletes, deletes put
    again, a rebuild now and then): after each, the count of docs and the total length kept
    in lex_state are a recount of lex_docs, the length rows are the docs', only docs with
    terms have terms, and every doc's neighbours are those a window over its group gives
    (a doc gone with its node: found by probes at its old place)."""
    rng = random.Random(7)
    names = [f"n{i:02d}" for i in range(24)]
    for name in names:
        alice.put(Node(id=name, type="entity", name=name))
    live = set(names)
    docs: dict[str, int] = {}  # id -> length
    places: dict[str, tuple[str | None, float | None]] = {}  # id -> (group, order)
    dsn = teams.dsn("alice")
    upto = 100  # the revision each catch-up claims (no node write moves it past this)

    def row(name: str) -> LexicalRow:
        terms = {f"t{j}": rng.randint(1, 3) for j in range(rng.choice([0, 0, 1, 2, 4]))}
        docs[name] = sum(terms.values())
        places[name] = rng.choice(["g1", "g2", None]), rng.choice([None, 1.0, 2.0])
        return _row(name, terms, group=places[name][0], order=places[name][1])

    for step in range(45):
        rows: list[LexicalRow] = []
        drop: list[str] = []
        for name in rng.sample(names, rng.randint(1, 4)):
            if name not in live:
                alice.put(Node(id=name, type="entity", name=name))
                live.add(name)
            if rng.random() < 0.2 and name in docs:
                drop.append(name)
                del docs[name]
            else:
                rows.append(row(name))
        if step % 3 == 1:
            gone = rng.choice(sorted(live - {r.id for r in rows} - set(drop)))
            alice.delete(gone)
            docs.pop(gone, None)
            if step % 2:
                alice.put(Node(id=gone, type="entity", name=gone))
                rows.append(row(gone))
            else:
                live.discard(gone)
                drop.append(gone)
        rebuild = step % 15 == 0
        if rebuild:  # every doc there is, written again
            rows = [row(name) for name in sorted(docs)]
        upto += 1
        written = alice.write_lexical(upto, V, rows, drop, rebuild=rebuild)
        assert written == len(rows), step
        got = _index(dsn)
        assert {i: n for i, (n, _, _) in got["docs"].items()} == docs, step
        assert alice.lexical_state()[2:] == got["recount"], step
        assert got["lengths"] == docs, step
        assert got["termed"] == {i for i, n in docs.items() if n > 0}, step
        want = _in_order({i: places[i] for i in docs})
        assert {i: (p, q) for i, (_, p, q) in got["docs"].items()} == want, step


def test_a_namespace_deleted_takes_its_length_rows(teams: Teams, alice: PostgresStore) -> None:
    import psycopg

    alice.put(Node(id="a", type="entity", name="a"))
    assert alice.write_lexical(alice.revision(), V, [_row("a")], [], rebuild=True) == 1
    with psycopg.connect(teams.admin_dsn, autocommit=True) as admin:
        assert admin.execute("SELECT count(*) FROM ctxsdk.lex_lengths").fetchone() == (1,)
        admin.execute("DELETE FROM ctxsdk.namespaces WHERE namespace = 'a'")
        assert admin.execute("SELECT count(*) FROM ctxsdk.lex_lengths").fetchone() == (0,)


def test_a_version_6_database_is_migrated_to_7_and_its_index_kept(roles: Roles) -> None:
    """Version 7 makes lex_lengths from version 6's index (its docs, and the terms of a doc
    a delete took since the last catch-up) and replaces write_index and
    lex_namespace_deleted in place: owners, grants and settings stay; members read the new
    table under the same policy; the next catch-up keeps the counts."""
    import psycopg

    keeper = roles.dsn("keeper")
    with psycopg.connect(keeper, autocommit=True) as conn:
        make_database(conn, 6, {"a": roles("team_a")}, [roles("alice")])
        assert conn.execute("SELECT to_regclass('ctxsdk.lex_lengths')").fetchone() == (None,)
    for name in "abc":
        put_as_of(roles.dsn("alice"), "a", name)
    with psycopg.connect(roles.dsn("alice"), autocommit=True) as sql:  # version 6's index
        got = sql.execute(
            "SELECT ctxsdk.write_index('a', 3, %s, true, ARRAY['a', 'b', 'c'], "
            "ARRAY[1, 3, 0], ARRAY[0, 0, 0], ARRAY['s', 's', 's'], "
            "ARRAY[1.0, 2.0, 3.0]::float8[], ARRAY[NULL, NULL, NULL]::text[], "
            "ARRAY['', '', ''], ARRAY['a', 'b', 'b'], ARRAY['word', 'word', 'pear'], "
            "ARRAY[1, 1, 2], '{}')",
            (V,),
        )
        assert got.fetchone() == (3,)
        sql.execute("SELECT ctxsdk.write_lock('a')")
        sql.execute("SELECT ctxsdk.delete_node('a', 'b')")  # not caught up before the upgrade
        sql.execute("SELECT ctxsdk.bump_revision('a')")
    with pytest.raises(StoreError, match="older than this ctxsdk"):
        PostgresStore(roles.dsn("alice"), namespace="a", create=False)  # no member migrates
    with PostgresStore(keeper, namespace="a", create=False):  # the owner does
        pass
    with psycopg.connect(keeper, autocommit=True) as conn:
        assert _version(conn) == SCHEMA_VERSION >= 7
        function = conn.execute(
            "SELECT pg_get_userbyid(p.proowner), p.prosecdef, p.proconfig, "
            "position('lex_lengths' in p.prosrc) > 0 FROM pg_proc p "
            "WHERE p.oid = to_regprocedure(%s)",
            V5_FUNCTIONS,
        ).fetchone()
        assert function == (roles("keeper"), True, ["search_path=pg_catalog, pg_temp"], True)
        trigger = conn.execute(
            "SELECT pg_get_userbyid(p.proowner), p.prosecdef, "
            "position('lex_lengths' in p.prosrc) > 0, "
            "has_function_privilege('public', p.oid, 'EXECUTE') FROM pg_proc p "
            "WHERE p.oid = to_regprocedure('ctxsdk.lex_namespace_deleted()')"
        ).fetchone()
        assert trigger == (roles("keeper"), False, True, False)
        for who in ("team_a", "alice"):
            assert _may_execute(conn, roles(who)) == set(WRITE_FUNCTIONS), who
            got = conn.execute(
                "SELECT has_table_privilege(%s, 'ctxsdk.lex_lengths', p) FROM unnest(ARRAY["
                "'SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE']) p",
                (roles(who),),
            ).fetchall()
            assert got == [(True,), (False,), (False,), (False,), (False,)], who
        nobody = conn.execute(
            "SELECT has_table_privilege(%s, 'ctxsdk.lex_lengths', 'SELECT')", (roles("nobody"),)
        )
        assert nobody.fetchone() == (False,)
        policy = conn.execute(
            "SELECT c.relrowsecurity, (SELECT count(*) FROM pg_policy p "
            "WHERE p.polrelid = c.oid AND p.polname = 'members') FROM pg_class c "
            "WHERE c.oid = to_regclass('ctxsdk.lex_lengths')"
        )
        assert policy.fetchone() == (True, 1)
        lengths = conn.execute(
            "SELECT namespace, id, length, grp, ord FROM ctxsdk.lex_lengths ORDER BY 2"
        )
        # b's doc went with its node; its length is the sum of its terms' counts, its place
        # unknown: the links that named it are made again at once
        assert lengths.fetchall() == [
            ("a", "a", 1, "s", 1.0),
            ("a", "b", 3, None, None),
            ("a", "c", 0, "s", 3.0),
        ]
    assert _index(roles.dsn("alice"))["docs"] == {"a": (1, None, "c"), "c": (0, "a", None)}
    with PostgresStore(roles.dsn("alice"), namespace="a", create=False) as alice:
        assert alice.lexical_state() == (3, V, 3, 4)
        assert alice.changes(3) == ([], ["b"])
        assert alice.write_lexical(alice.revision(), V, [], ["b"]) == 0
        assert alice.lexical_state() == (4, V, 2, 1)
        got = _index(roles.dsn("alice"))
        assert got["docs"] == {"a": (1, None, "c"), "c": (0, "a", None)}
        assert got["lengths"] == {"a": 1, "c": 0} and got["termed"] == {"a"}
    assert PostgresStore.init_schema(keeper) == SCHEMA_VERSION  # up to date: nothing to do
