"""Schema version 5 of the PostgreSQL memory: the lexical search index kept in the database
(``ctxsdk.lex_state``, ``lex_docs``, ``lex_terms``), a cache of the nodes that any client
catches up through ``ctxsdk.write_index`` (``PostgresStore.write_lexical``). Checked on the
real server: what a write leaves (docs, terms, counts, each group's neighbours), that it
never moves the namespace's revision nor waits for its writers, its answers when the index
is caught up already (-1) or was built under another definition (-2), a rebuild, a node
deleted before or while its doc is written (skipped), the cascade of a node's delete, that
a member writes through the function only and never reads or writes another namespace's
index, and that a database left at version 4 is migrated to 5 by its owner, its data and
members kept.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from ctxsdk.errors import InvalidArgument, LockHeld, NamespaceDenied, StoreError
from ctxsdk.memory._index_doc import LexicalRow, lexical_row
from ctxsdk.memory._model import Node, Source
from ctxsdk.memory._pg_functions import V5_FUNCTIONS, WRITE_FUNCTIONS
from ctxsdk.memory._pg_schema import (
    SCHEMA_VERSION,
)
from ctxsdk.memory._postgres import PostgresStore

from ._old_schemas import make_database, put_as_of
from .test_pg_schema_v2 import Roles, _may_execute, _privileges, _version, roles
from .test_store_conformance import Teams, _refused, teams

__all__ = ["roles", "teams"]  # the fixtures, imported for the tests below

LEX_TABLES = ("lex_state", "lex_docs", "lex_terms")
V = "lex-1"  # the index definition's version the tests write under


def _entity(name: str, **kw: Any) -> Node:
    return Node(id="", type="entity", name=name, **kw)


def _row(
    node_id: str,
    terms: dict[str, int] | None = None,
    *,
    group: str | None = None,
    order: float | None = None,
    section: str | None = None,
    kinds: int = 0,
    shape: str = "",
) -> LexicalRow:
    terms = {"word": 1} if terms is None else terms
    return LexicalRow(
        node_id, sum(terms.values()), kinds, group, order, section, shape, dict(terms)
    )


def _docs(dsn: str, namespace: str | None = None) -> dict[str, tuple[Any, ...]]:
    """id -> (length, kinds, grp, ord, sec, shape, prev, next) of every lex_docs row the
    connecting role sees (of ``namespace`` when given)."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT namespace, id, length, kinds, grp, ord, sec, shape, prev, next "
            "FROM ctxsdk.lex_docs"
        ).fetchall()
    return {r[1]: tuple(r[2:]) for r in rows if namespace is None or r[0] == namespace}


def _neighbours(dsn: str) -> dict[str, tuple[str | None, str | None]]:
    return {i: (d[6], d[7]) for i, d in _docs(dsn).items()}


def _terms(dsn: str) -> set[tuple[str, str, str, int]]:
    """(namespace, term, id, tf) of every lex_terms row the connecting role sees."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute("SELECT namespace, term, id, tf FROM ctxsdk.lex_terms").fetchall()
    return {(ns, term, i, int(tf)) for ns, term, i, tf in rows}


@pytest.fixture
def alice(teams: Teams) -> Iterator[PostgresStore]:
    with PostgresStore(teams.dsn("alice"), namespace="a", create=False, timeout=5) as s:
        yield s


def test_a_write_keeps_docs_terms_and_counts_and_no_revision(
    teams: Teams, alice: PostgresStore
) -> None:
    assert alice.lexical_state() == (-1, "", 0, 0)
    a = alice.put(_entity("alpha", text="kestrel kestrel falcon"))
    b = alice.put(_entity("beta"))
    c = alice.put(_entity("gamma"))
    revision = alice.revision()
    assert revision == 3
    rows = [
        _row(a.id, {"kestrel": 2, "falcon": 1}, kinds=5, section='["s1", 2]', shape="abc"),
        _row(b.id, {"beta": 1}),
        lexical_row(c, str.split),  # the index's own definition of a row
    ]
    assert rows[2] is not None
    written = [r for r in rows if r is not None]
    # an index never written has no definition yet: the caller rebuilds it
    assert alice.write_lexical(revision, V, written, []) == -2
    assert alice.lexical_state() == (-1, "", 0, 0)
    assert alice.write_lexical(revision, V, written, [], rebuild=True) == 3
    assert alice.revision() == revision  # a cache of the nodes, not a write of them
    assert alice.changes(revision) == ([], [])
    length_c = rows[2].length
    assert alice.lexical_state() == (revision, V, 3, 3 + 1 + length_c)
    docs = _docs(teams.dsn("alice"))
    assert docs[a.id] == (3, 5, None, None, '["s1", 2]', "abc", None, None)
    assert docs[b.id] == (1, 0, None, None, None, "", None, None)
    assert set(docs) == {a.id, b.id, c.id}
    terms = _terms(teams.dsn("alice"))
    assert {t for t in terms if t[2] != c.id} == {
        ("a", "kestrel", a.id, 2),
        ("a", "falcon", a.id, 1),
        ("a", "beta", b.id, 1),
    }
    assert {(t[1], t[3]) for t in terms if t[2] == c.id} == set(rows[2].terms.items())

    # caught up already: nothing written, -1; the same revision again too
    assert alice.write_lexical(revision, V, [_row(a.id, {"other": 4})], []) == -1
    assert alice.write_lexical(revision - 1, V, [], [a.id]) == -1
    assert _docs(teams.dsn("alice")) == docs

    # the next changes: a replaced row (its terms replaced), a dropped one
    alice.put(Node(**{**_fields(a), "text": "osprey"}))
    alice.delete(c.id)
    later = alice.revision()
    assert alice.write_lexical(later, V, [_row(a.id, {"osprey": 1})], [c.id]) == 1
    assert alice.lexical_state() == (later, V, 2, 2)
    assert {t for t in _terms(teams.dsn("alice"))} == {
        ("a", "osprey", a.id, 1),
        ("a", "beta", b.id, 1),
    }
    assert alice.revision() == later
    # an id dropped that has no doc, and an empty write: the revision is taken, no more
    assert alice.write_lexical(later + 5, V, [], ["no-such-doc"]) == 0
    assert alice.lexical_state() == (later + 5, V, 2, 2)


def _fields(node: Node) -> dict[str, Any]:
    return {f: getattr(node, f) for f in Node.__slots__ if f not in ("created_at", "updated_at")}


def test_another_version_is_refused_until_a_rebuild_replaces_everything(
    teams: Teams, alice: PostgresStore
) -> None:
    ids = [alice.put(_entity(f"n{i}")).id for i in range(4)]
    rows = [_row(i, {"old": 2}, group="g") for i in ids[:3]]
    assert alice.write_lexical(4, V, rows, [], rebuild=True) == 3
    before = (_docs(teams.dsn("alice")), _terms(teams.dsn("alice")), alice.lexical_state())
    # another definition: -2 and nothing written, even for a later revision
    assert alice.write_lexical(9, "lex-2", [_row(ids[3], {"new": 1})], []) == -2
    assert (_docs(teams.dsn("alice")), _terms(teams.dsn("alice")), alice.lexical_state()) == (
        before
    )
    # a rebuild: every doc and term replaced, the version taken
    rows = [_row(ids[3], {"new": 1}), _row(ids[1], {"new": 3}, group="h", order=1.0)]
    assert alice.write_lexical(4, "lex-2", rows, [], rebuild=True) == 2
    assert alice.lexical_state() == (4, "lex-2", 2, 4)
    assert _terms(teams.dsn("alice")) == {("a", "new", ids[3], 1), ("a", "new", ids[1], 3)}
    assert _neighbours(teams.dsn("alice")) == {ids[3]: (None, None), ids[1]: (None, None)}
    assert alice.write_lexical(5, V, [], []) == -2  # the old definition's writer
    # a rebuild from an older snapshot: the index says what it reflects, a lower revision
    assert alice.write_lexical(2, "lex-2", [_row(ids[0])], [], rebuild=True) == 1
    assert alice.lexical_state() == (2, "lex-2", 1, 1)
    assert alice.write_lexical(4, "lex-2", [_row(ids[2])], []) == 1  # caught up again
    assert alice.lexical_state() == (4, "lex-2", 2, 2)
    assert alice.revision() == 4


def test_each_group_keeps_its_neighbours_in_order(teams: Teams, alice: PostgresStore) -> None:
    ids = {name: alice.put(Node(id=name, type="entity", name=name)).id for name in "abcdefgh"}
    assert sorted(ids) == list("abcdefgh")
    rows = [
        _row("a", group="s1", order=3.0),
        _row("b", group="s1", order=1.0),
        _row("c", group="s1", order=2.0),
        _row("d", group="s1", order=None),  # no place: last
        _row("e", group="s2", order=1.0),
        _row("f", group="s2", order=1.0),  # a tie: id order
        _row("g"),  # no group: no neighbours
    ]
    assert alice.write_lexical(1, V, rows, [], rebuild=True) == 7
    dsn = teams.dsn("alice")
    assert _neighbours(dsn) == {
        "b": (None, "c"),
        "c": ("b", "a"),
        "a": ("c", "d"),
        "d": ("a", None),
        "e": (None, "f"),
        "f": ("e", None),
        "g": (None, None),
    }
    # c moves to s2, first; a is dropped; h joins s1 before d; g is rewritten, still alone
    rows = [
        _row("c", group="s2", order=0.5),
        _row("h", group="s1", order=9.0),
        _row("g", {"again": 1}),
    ]
    assert alice.write_lexical(2, V, rows, ["a"]) == 3
    assert _neighbours(dsn) == {
        "b": (None, "h"),
        "h": ("b", "d"),
        "d": ("h", None),
        "c": (None, "e"),
        "e": ("c", "f"),
        "f": ("e", None),
        "g": (None, None),
    }
    # a doc leaves its group for none; the last of s2 goes
    assert alice.write_lexical(3, V, [_row("e")], ["f"]) == 1
    assert _neighbours(dsn) == {
        "b": (None, "h"),
        "h": ("b", "d"),
        "d": ("h", None),
        "c": (None, None),
        "e": (None, None),
        "g": (None, None),
    }
    # ids in byte order (COLLATE "C"), whatever the database's collation says
    for name in ("B-upper", "a-lower", "_under"):
        alice.put(Node(id=name, type="entity", name=name))
    rows = [_row(name, group="t") for name in ("a-lower", "B-upper", "_under")]
    assert alice.write_lexical(4, V, rows, []) == 3
    got = _neighbours(dsn)
    assert [got["B-upper"], got["_under"], got["a-lower"]] == [
        (None, "_under"),
        ("B-upper", "a-lower"),
        ("_under", None),
    ]
    assert alice.lexical_state()[2] == 9


def test_a_node_deleted_before_or_while_its_doc_is_written_is_skipped(
    teams: Teams, alice: PostgresStore
) -> None:
    kept, gone, racing = (alice.put(_entity(n)).id for n in ("kept", "gone", "racing"))
    rows = [_row(kept, {"k": 1}), _row(gone, {"g": 1}), _row(racing, {"r": 1}, group="s")]
    alice.delete(gone)  # after the rows were computed, before they are written
    assert alice.revision() == 4
    with PostgresStore(teams.dsn("alice"), namespace="a", create=False) as writer:
        with writer.batch():  # its delete not committed while the index is written
            writer.delete(racing)
            start = time.monotonic()
            # no wait for the writer: its node is left to the next catch-up, and the
            # index's revision stays below that node's stamp (3) so that one reads it
            assert alice.write_lexical(4, V, rows, [], rebuild=True) == 1
            assert time.monotonic() - start < 2
            assert alice.lexical_state() == (2, V, 1, 1)
        assert writer.revision() == 5
    assert set(_docs(teams.dsn("alice"))) == {kept}
    assert _terms(teams.dsn("alice")) == {("a", "k", kept, 1)}
    assert alice.changes(2) == ([], [gone, racing])
    assert alice.write_lexical(5, V, [], [gone, racing]) == 0
    assert alice.lexical_state() == (5, V, 1, 1)


def test_an_index_write_never_waits_for_a_node_writer(teams: Teams, alice: PostgresStore) -> None:
    """A writer's batch holding nodes while an index write takes others, then wanting
    those: were the index write to wait for the writer's nodes, each would wait for the
    other (a deadlock: the server cancels one, perhaps the writer's batch)."""
    x, y, p, q = (alice.put(_entity(n)).id for n in ("x", "y", "p", "q"))
    rows = [_row(i, group="s", order=float(n)) for n, i in enumerate((x, y, p, q))]
    assert alice.write_lexical(4, V, rows, [], rebuild=True) == 4
    with (
        PostgresStore(teams.dsn("alice"), namespace="a", create=False, timeout=5) as writer,
        writer.batch(),
    ):
        writer.delete(x)  # held: its node, and its doc by the cascade
        writer.put(_rewritten(writer, p))  # held: a put may change the uri, a key
        start = time.monotonic()
        again = [
            _row(i, {"again": 1}, group="s", order=float(n)) for n, i in enumerate((x, y, p, q))
        ]
        # x and p are the writer's: left as they are (their docs reflect revision 4,
        # which the index had reached); y and q are written
        assert alice.write_lexical(5, V, again, []) == 2
        assert time.monotonic() - start < 2
        assert {(t[1], t[2]) for t in _terms(teams.dsn("alice"))} == {
            ("word", x),
            ("again", y),
            ("word", p),
            ("again", q),
        }
        writer.delete(y)  # nodes the index write took: it is done, nothing waits
        writer.put(_rewritten(writer, q))
    assert alice.lexical_state() == (4, V, 4, 4)
    # the deleted nodes took their docs with them; their terms wait for the catch-up (no
    # search matches a term without its doc)
    assert {(t[1], t[2]) for t in _terms(teams.dsn("alice"))} == {
        ("word", x),
        ("again", y),
        ("word", p),
        ("again", q),
    }
    assert alice.revision() == 5
    got = alice.changes(4)
    assert got is not None and got.gone == sorted([x, y]) and {n.id for n in got.nodes} == {p, q}
    rows = [_row(p, group="s", order=2.0), _row(q, group="s", order=3.0)]
    assert alice.write_lexical(5, V, rows, [x, y]) == 2
    assert _neighbours(teams.dsn("alice")) == {p: (None, q), q: (p, None)}
    assert alice.lexical_state() == (5, V, 2, 2)
    assert {(t[1], t[2]) for t in _terms(teams.dsn("alice"))} == {("word", p), ("word", q)}


def _rewritten(store: PostgresStore, node_id: str) -> Node:
    node = store.get(node_id)
    assert node is not None
    return Node(**{**_fields(node), "text": "rewritten"})


def test_a_neighbour_a_deleter_holds_is_read_again(teams: Teams, alice: PostgresStore) -> None:
    """A doc whose neighbours change while a deleter's cascade holds it is skipped; the
    delete may yet roll back, so the index's revision stays below that node's stamp."""
    for name in "abc":
        alice.put(Node(id=name, type="entity", name=name))
    rows = [_row("a", group="s", order=1.0), _row("c", group="s", order=3.0)]
    assert alice.write_lexical(3, V, rows, [], rebuild=True) == 2
    with (
        PostgresStore(teams.dsn("alice"), namespace="a", create=False) as writer,
        pytest.raises(RuntimeError),
        writer.batch(),
    ):
        writer.delete("c")  # its doc held by the cascade
        assert alice.write_lexical(4, V, [_row("b", group="s", order=2.0)], []) == 1
        raise RuntimeError  # rolled back: c stays, its prev not rewritten
    assert _neighbours(teams.dsn("alice")) == {"a": (None, "b"), "b": ("a", "c"), "c": ("a", None)}
    assert alice.lexical_state() == (2, V, 3, 3)  # c was stamped 3: read again
    assert alice.write_lexical(3, V, [_row("c", group="s", order=3.0)], []) == 1
    assert _neighbours(teams.dsn("alice")) == {"a": (None, "b"), "b": ("a", "c"), "c": ("b", None)}


def test_the_neighbours_of_a_deleted_node_are_joined(teams: Teams, alice: PostgresStore) -> None:
    for name in "abcd":
        alice.put(Node(id=name, type="entity", name=name))
    rows = [_row(name, group="s", order=float(i)) for i, name in enumerate("abcd")]
    assert alice.write_lexical(4, V, rows, [], rebuild=True) == 4
    alice.delete("b")  # its doc goes with it, a and c still name it
    alice.delete("d")
    assert _neighbours(teams.dsn("alice")) == {"a": (None, "b"), "c": ("b", "d")}
    # the catch-up: b and d dropped, their docs gone already; a and c joined
    assert alice.write_lexical(6, V, [], ["b", "d"]) == 0
    assert _neighbours(teams.dsn("alice")) == {"a": (None, "c"), "c": ("a", None)}
    assert alice.lexical_state() == (6, V, 2, 2)


def _in_order(docs: dict[str, tuple[str | None, float | None]]) -> dict[str, tuple[Any, Any]]:
    """id -> (prev, next) of ``docs`` (id -> (group, order)) as a window over each whole
    group gives them: order NULLS LAST, then id in byte order; no group, no neighbours."""
    out: dict[str, tuple[Any, Any]] = {i: (None, None) for i in docs}
    groups: dict[str, list[str]] = {}
    for i, (grp, _) in docs.items():
        if grp is not None:
            groups.setdefault(grp, []).append(i)
    for members in groups.values():
        members.sort(key=lambda i: (docs[i][1] is None, docs[i][1] or 0.0, i.encode()))
        for at, i in enumerate(members):
            out[i] = (
                members[at - 1] if at else None,
                members[at + 1] if at + 1 < len(members) else None,
            )
    return out


def test_catching_up_links_as_a_rebuild_does(teams: Teams, alice: PostgresStore) -> None:
    """A catch-up relinks only the docs beside what it writes (schema version 6): after
    writes, moves between groups, ties, docs without a place, drops and deletes in any mix,
    every doc's neighbours are those a window over its whole group gives, and a rebuild of
    the same rows writes the same links."""
    import random

    rng = random.Random(6)
    names = [f"n{i:02d}" for i in range(30)] + ["B", "_u", "a"]
    for name in names:
        alice.put(Node(id=name, type="entity", name=name))
    live = set(names)
    docs: dict[str, tuple[str | None, float | None]] = {}
    dsn = teams.dsn("alice")
    upto = 100

    def place() -> tuple[str | None, float | None]:
        return rng.choice(["g1", "g2", "g3", None]), rng.choice([None, 1.0, 2.0, 2.0, 3.5])

    for step in range(40):
        upto += 1
        rows = []
        drop = []
        for name in rng.sample(names, rng.randint(1, 4)):
            if name not in live:
                alice.put(Node(id=name, type="entity", name=name))
                live.add(name)
            if rng.random() < 0.25 and name in docs:
                drop.append(name)  # left out of the index
                del docs[name]
            else:
                docs[name] = place()
                rows.append(_row(name, group=docs[name][0], order=docs[name][1]))
        if step % 3 == 2:  # a node deleted: its doc goes with it, the catch-up drops it
            gone = rng.choice(sorted(live - {r.id for r in rows} - set(drop)))
            alice.delete(gone)
            docs.pop(gone, None)
            if step % 2:  # put again before the catch-up: written, its old terms still there
                alice.put(Node(id=gone, type="entity", name=gone))
                docs[gone] = place()
                rows.append(_row(gone, group=docs[gone][0], order=docs[gone][1]))
            else:
                live.discard(gone)
                drop.append(gone)
        assert alice.write_lexical(upto, V, rows, drop, rebuild=step == 0) == len(rows)
        assert _neighbours(dsn) == _in_order(docs), step
        assert alice.lexical_state() == (upto, V, len(docs), len(docs)), step
        assert {i for _, _, i, _ in _terms(dsn)} == set(docs), step
    rows = [_row(i, group=g, order=o) for i, (g, o) in docs.items()]
    caught_up = _docs(dsn)
    assert alice.write_lexical(upto + 1, V, rows, [], rebuild=True) == len(docs)
    assert _docs(dsn) == caught_up


def test_a_node_deleted_takes_its_doc_and_its_terms_go_at_the_catch_up(
    teams: Teams, alice: PostgresStore
) -> None:
    import psycopg

    a, b = (alice.put(_entity(n)).id for n in ("a", "b"))
    alice.write_lexical(2, V, [_row(a, {"x": 1, "y": 2}), _row(b, {"x": 1})], [], rebuild=True)
    alice.delete(a)
    assert set(_docs(teams.dsn("alice"))) == {b}
    # its terms have no doc (no search matches them) until the catch-up drops them
    assert _terms(teams.dsn("alice")) == {("a", "x", a, 1), ("a", "y", a, 2), ("a", "x", b, 1)}
    # the counts are the next write's (the caller catches up from the tombstone)
    assert alice.lexical_state() == (2, V, 2, 4)
    assert alice.write_lexical(alice.revision(), V, [], [a]) == 0
    assert alice.lexical_state() == (3, V, 1, 1)
    assert _terms(teams.dsn("alice")) == {("a", "x", b, 1)}
    # a namespace deleted takes its index whole
    with psycopg.connect(teams.admin_dsn, autocommit=True) as admin:
        admin.execute("DELETE FROM ctxsdk.namespaces WHERE namespace = 'a'")
        for table in LEX_TABLES:
            got = admin.execute(f"SELECT count(*) FROM ctxsdk.{table} WHERE namespace = 'a'")
            assert got.fetchone() == (0,), table


def test_the_index_lock_is_its_own(teams: Teams, alice: PostgresStore) -> None:
    import psycopg

    node = alice.put(_entity("n")).id
    assert alice.write_lexical(1, V, [_row(node)], [], rebuild=True) == 1
    with PostgresStore(teams.dsn("alice"), namespace="a", create=False, timeout=0.3) as other:
        # a node writer holds the namespace: the index is written all the same
        with alice.batch():
            alice.put(_entity("pending"))
            assert other.write_lexical(2, V, [_row(node, {"w": 1})], []) == 1
        # an indexer holds the index: node writers go on, another indexer waits, then
        # LockHeld
        with psycopg.connect(teams.dsn("alice")) as holder:
            holder.execute(
                "SELECT ctxsdk.write_index('a', 2, %s, false, '{}', '{}', '{}', "
                "'{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}')",
                (V,),
            )
            other.put(_entity("meanwhile"))
            start = time.monotonic()
            with pytest.raises(LockHeld, match="search index"):
                other.write_lexical(3, V, [], [])
            assert time.monotonic() - start < 5
            holder.rollback()
        assert other.write_lexical(3, V, [], []) == 0
    # not inside a batch or a snapshot: the index is no write of the namespace
    for scope in (alice.batch, alice.snapshot):
        with scope(), pytest.raises(InvalidArgument, match="inside a batch"):
            alice.write_lexical(9, V, [], [])
    with pytest.raises(InvalidArgument, match="twice"):
        alice.write_lexical(9, V, [_row(node), _row(node)], [])
    assert alice.lexical_state()[0] == 3


def test_a_member_writes_its_own_index_through_the_function_only(
    teams: Teams, alice: PostgresStore
) -> None:
    import psycopg

    mine = alice.put(Node(id="shared", type="entity", name="alice's")).id
    alice.write_lexical(1, V, [_row(mine, {"secret_a": 1}, group="ga")], [], rebuild=True)
    with PostgresStore(teams.dsn("bob"), namespace="b", create=False) as bob:
        theirs = bob.put(Node(id="shared", type="entity", name="bob's")).id
        bob.put(Node(id="other", type="entity", name="bob's other"))
        rows = [_row(theirs, {"secret_b": 7}, group="gb"), _row("other", group="gb")]
        assert bob.write_lexical(2, V, rows, [], rebuild=True) == 2
        assert bob.lexical_state() == (2, V, 2, 8)
        assert _docs(teams.dsn("bob"))["shared"][6:] == ("other", None)  # byte order
    assert alice.lexical_state() == (1, V, 1, 1)

    # row-level security: alice's hand-written queries see a's rows only
    assert set(_docs(teams.dsn("alice"))) == {"shared"}
    assert _docs(teams.dsn("alice"))["shared"][2] == "ga"
    assert _terms(teams.dsn("alice")) == {("a", "secret_a", "shared", 1)}
    with psycopg.connect(teams.dsn("alice"), autocommit=True) as sql:
        for table in LEX_TABLES:
            got = sql.execute(f"SELECT count(*) FROM ctxsdk.{table} WHERE namespace = 'b'")
            assert got.fetchone() == (0,), table
        assert sql.execute("SELECT namespace FROM ctxsdk.lex_state").fetchall() == [("a",)]
        hits = sql.execute("SELECT id FROM ctxsdk.lex_terms WHERE term = 'secret_b'")
        assert hits.fetchall() == []

        # no direct write to any of the tables, of either namespace
        for statement in (
            "INSERT INTO ctxsdk.lex_state VALUES ('a', 99, 'x', 0, 0)",
            "UPDATE ctxsdk.lex_state SET revision = 99",
            "DELETE FROM ctxsdk.lex_state",
            "INSERT INTO ctxsdk.lex_docs (namespace, id, length, kinds, shape) "
            "VALUES ('a', 'shared', 1, 0, '')",
            "UPDATE ctxsdk.lex_docs SET length = 99",
            "DELETE FROM ctxsdk.lex_docs",
            "TRUNCATE ctxsdk.lex_docs",
            "INSERT INTO ctxsdk.lex_terms VALUES ('b', 'planted', 'shared', 1)",
            "UPDATE ctxsdk.lex_terms SET tf = 99",
            "DELETE FROM ctxsdk.lex_terms",
            "ALTER TABLE ctxsdk.lex_terms DISABLE ROW LEVEL SECURITY",
        ):
            _refused(sql, statement)
        for statement in (
            "LOCK TABLE ctxsdk.lex_state IN ACCESS EXCLUSIVE MODE",
            "SELECT * FROM ctxsdk.lex_state FOR UPDATE",  # the index's lock: no holding it
        ):
            sql.execute("BEGIN")
            _refused(sql, statement)
            sql.execute("ROLLBACK")
        # b's namespace through the function: refused, however it is called
        for rebuild in (False, True):
            said = _refused(
                sql,
                "SELECT ctxsdk.write_index('b', 99, %s, %s, ARRAY['shared'], ARRAY[1], "
                "ARRAY[0], ARRAY[NULL]::text[], ARRAY[NULL]::float8[], ARRAY[NULL]::text[], "
                "ARRAY[''], ARRAY['shared'], ARRAY['planted'], ARRAY[1], '{}')",
                V,
                rebuild,
            )
            assert "may not write namespace 'b'" in said
        # its own, through the function: written
        got = sql.execute(
            "SELECT ctxsdk.write_index('a', 5, %s, false, ARRAY['shared'], ARRAY[2], "
            "ARRAY[1], ARRAY['ga'], ARRAY[1.5]::float8[], ARRAY[NULL]::text[], ARRAY['s'], "
            "ARRAY['shared'], ARRAY['mine'], ARRAY[2], '{}')",
            (V,),
        )
        assert got.fetchone() == (1,)
    assert alice.lexical_state() == (5, V, 1, 2)
    assert alice.revision() == 1
    with PostgresStore(teams.dsn("bob"), namespace="b", create=False) as bob:
        assert bob.lexical_state() == (2, V, 2, 8)
        assert _terms(teams.dsn("bob")) == {
            ("b", "secret_b", "shared", 7),
            ("b", "word", "other", 1),
        }
    with psycopg.connect(teams.admin_dsn, autocommit=True) as admin:  # both are there
        got = admin.execute("SELECT namespace, count(*) FROM ctxsdk.lex_docs GROUP BY 1 ORDER BY 1")
        assert got.fetchall() == [("a", 1), ("b", 2)]
        # alice leaves the team: her open store may neither write a's index nor read it
        admin.execute(f"REVOKE {teams.role('team_a')} FROM {teams.role('alice')}")
    with pytest.raises(NamespaceDenied, match="may not use namespace 'a'") as err:
        alice.write_lexical(9, V, [], [])
    assert "password" not in str(err.value)


def test_write_index_refuses_arrays_that_do_not_line_up(teams: Teams) -> None:
    import psycopg

    with psycopg.connect(teams.dsn("alice"), autocommit=True) as sql:
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="parallel arrays"):
            sql.execute(
                "SELECT ctxsdk.write_index('a', 1, 'v', false, ARRAY['x', 'y'], ARRAY[1], "
                "ARRAY[0], ARRAY[NULL]::text[], ARRAY[NULL]::float8[], ARRAY[NULL]::text[], "
                "ARRAY[''], '{}', '{}', '{}', '{}')"
            )
        assert sql.execute("SELECT count(*) FROM ctxsdk.lex_state").fetchone() == (0,)


def test_a_version_4_database_is_migrated_to_5_by_its_owner(roles: Roles) -> None:
    import psycopg

    keeper = roles.dsn("keeper")
    with psycopg.connect(keeper, autocommit=True) as conn:
        make_database(conn, 4, {"a": roles("team_a"), "open": None}, [roles("carol")])
        assert conn.execute("SELECT to_regclass('ctxsdk.lex_docs')").fetchone() == (None,)
        assert conn.execute("SELECT to_regprocedure(%s)", V5_FUNCTIONS).fetchone() == (None,)
    put_as_of(roles.dsn("alice"), "a", "alice-v4", "observation")
    put_as_of(roles.dsn("alice"), "a", "alice-v4-dropped", "observation")
    with psycopg.connect(roles.dsn("alice"), autocommit=True) as conn:
        conn.execute("SELECT ctxsdk.delete_node('a', 'alice-v4-dropped')")
        conn.execute("SELECT ctxsdk.bump_revision('a')")
    put_as_of(roles.dsn("carol"), "open", "carol-v4", "observation")

    with psycopg.connect(keeper, autocommit=True) as conn:
        assert _version(conn) == 4
    with PostgresStore(keeper, namespace="open", create=False):  # the owner opens it
        pass
    with psycopg.connect(keeper, autocommit=True) as conn:
        assert _version(conn) == SCHEMA_VERSION >= 5
        for who in ("team_a", "alice", "carol"):
            assert _privileges(conn, roles(who))["nodes"] == {"SELECT"}, who
            assert _may_execute(conn, roles(who)) == set(WRITE_FUNCTIONS), who
            for table in (*LEX_TABLES, "gone"):
                got = conn.execute(
                    "SELECT has_table_privilege(%s, %s, p) FROM unnest(ARRAY['SELECT', "
                    "'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE']) p",
                    (roles(who), f"ctxsdk.{table}"),
                ).fetchall()
                assert got == [(True,), (False,), (False,), (False,), (False,)], (who, table)
        for table in LEX_TABLES:
            no = conn.execute(
                "SELECT has_table_privilege(%s, %s, 'SELECT')", (roles("nobody"), f"ctxsdk.{table}")
            )
            assert no.fetchone() == (False,), table
            policy = conn.execute(
                "SELECT c.relrowsecurity, (SELECT count(*) FROM pg_policy p "
                "WHERE p.polrelid = c.oid AND p.polname = 'members') FROM pg_class c "
                "WHERE c.oid = to_regclass(%s)",
                (f"ctxsdk.{table}",),
            )
            assert policy.fetchone() == (True, 1), table
        assert _may_execute(conn, roles("nobody")) == set()
        function = conn.execute(
            "SELECT pg_get_userbyid(p.proowner), p.prosecdef, p.proconfig FROM pg_proc p "
            "WHERE p.oid = to_regprocedure(%s)",
            V5_FUNCTIONS,
        ).fetchone()
        assert function == (roles("keeper"), True, ["search_path=pg_catalog, pg_temp"])
        # every other function of the schema plans its statements per call: a plan kept
        # from when a namespace was small made each put of a long batch slower than the
        # last; write_index's plans for its huge arrays are kept (made per call, a first
        # build took 35 times as long)
        configs = conn.execute(
            "SELECT p.oid::regprocedure::text, p.proconfig FROM pg_proc p "
            "WHERE p.pronamespace = 'ctxsdk'::regnamespace"
        ).fetchall()
        assert len(configs) > len(V5_FUNCTIONS)
        for name, config in configs:
            custom = "plan_cache_mode=force_custom_plan" in (config or [])
            assert custom == (name not in V5_FUNCTIONS), name
        rows = conn.execute("SELECT namespace, id FROM ctxsdk.nodes ORDER BY 1, 2").fetchall()
        assert rows == [("a", "alice-v4"), ("open", "carol-v4")]
        assert conn.execute("SELECT count(*) FROM ctxsdk.lex_state").fetchone() == (0,)

    with PostgresStore(roles.dsn("alice"), namespace="a", create=False) as alice:
        (old,) = alice.nodes()
        assert (old.id, old.created_at) == ("alice-v4", "2020-01-01")
        assert alice.revision() == 3 and alice.changes(2) == ([], ["alice-v4-dropped"])
        assert alice.lexical_state() == (-1, "", 0, 0)
        row = lexical_row(old, str.split)
        assert row is not None
        assert alice.write_lexical(3, V, [row], ["alice-v4-dropped"], rebuild=True) == 1
        assert alice.lexical_state() == (3, V, 1, row.length) and alice.revision() == 3
        new = alice.put(
            Node(id="", type="observation", name="n", text="later", sources=(Source("s", 1),))
        )
        later = lexical_row(new, str.split)
        assert later is not None and later.group is not None
        assert alice.write_lexical(4, V, [later], []) == 1
    with PostgresStore(roles.dsn("carol"), namespace="open", create=False) as carol:
        assert carol.write_lexical(1, V, [_row("carol-v4")], [], rebuild=True) == 1
        assert set(_docs(roles.dsn("carol"))) == {"carol-v4"}
    assert PostgresStore.init_schema(keeper) == SCHEMA_VERSION  # up to date: nothing to do


def test_a_version_5_database_is_migrated_to_6_and_its_index_caught_up(roles: Roles) -> None:
    """Version 6 replaces write_index in place: its owner, its grants and the index written
    by version 5's stay, and the next catch-up relinks what it writes."""
    import psycopg

    keeper = roles.dsn("keeper")
    with psycopg.connect(keeper, autocommit=True) as conn:
        make_database(conn, 5, {"a": roles("team_a")}, [roles("alice")])
    for name in "abc":
        put_as_of(roles.dsn("alice"), "a", name)
    with psycopg.connect(roles.dsn("alice"), autocommit=True) as sql:  # version 5's index
        got = sql.execute(
            "SELECT ctxsdk.write_index('a', 3, %s, true, ARRAY['a', 'c'], ARRAY[1, 1], "
            "ARRAY[0, 0], ARRAY['s', 's'], ARRAY[1.0, 3.0]::float8[], ARRAY[NULL, NULL]::text[], "
            "ARRAY['', ''], ARRAY['a', 'c'], ARRAY['word', 'word'], ARRAY[1, 1], '{}')",
            (V,),
        )
        assert got.fetchone() == (2,)
    with pytest.raises(StoreError, match="older than this ctxsdk"):
        PostgresStore(roles.dsn("alice"), namespace="a", create=False)  # no member migrates
    with PostgresStore(keeper, namespace="a", create=False):  # the owner does
        pass
    with psycopg.connect(keeper, autocommit=True) as conn:
        assert _version(conn) == SCHEMA_VERSION >= 6
        function = conn.execute(
            "SELECT pg_get_userbyid(p.proowner), p.prosecdef, p.proconfig, "
            "position('around' in p.prosrc) > 0 FROM pg_proc p "
            "WHERE p.oid = to_regprocedure(%s)",
            V5_FUNCTIONS,
        ).fetchone()
        assert function == (roles("keeper"), True, ["search_path=pg_catalog, pg_temp"], True)
        assert _may_execute(conn, roles("alice")) == set(WRITE_FUNCTIONS)
    with PostgresStore(roles.dsn("alice"), namespace="a", create=False) as alice:
        assert alice.lexical_state() == (3, V, 2, 2)
        assert _neighbours(roles.dsn("alice")) == {"a": (None, "c"), "c": ("a", None)}
        assert alice.write_lexical(4, V, [_row("b", group="s", order=2.0)], []) == 1
        assert _neighbours(roles.dsn("alice")) == {
            "a": (None, "b"),
            "b": ("a", "c"),
            "c": ("b", None),
        }
