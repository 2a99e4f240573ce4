"""Copying a memory between stores, exactly: a memory made from the real samples goes from
SQLite to PostgreSQL and back with every row (ids, uris, sources, archive states, times,
weights, meta values) and ``export_json`` unchanged; one namespace into another; ``load``
writes rows as ``rows`` gives them and refuses to replace one; a destination that holds a
node is refused untouched; a failure mid-copy leaves the destination empty; the command
line's ``copy``, ``init``, ``namespace`` and ``--namespace``, never printing a password.
All on a real PostgreSQL server (``postgres_dsn``) and real SQLite files."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

import ctxsdk as cx
from ctxsdk import _cli
from ctxsdk.errors import InvalidArgument, NotFound
from ctxsdk.memory import (
    CopyReport,
    Edge,
    Memory,
    Node,
    PostgresStore,
    Source,
    SQLiteStore,
    copy_memory,
)
from ctxsdk.memory._model import EDGE_LABELS
from ctxsdk.samples import real_samples

TABLES = ("nodes", "edges", "meta")
PASSWORD = "s3cret-Pw"  # trust authentication ignores it; it must never be printed


def _rows(store: Any) -> dict[str, list[dict[str, Any]]]:
    return {t: store.rows(t) for t in TABLES}


def _fill(mem: Memory, extra_nodes: int = 0) -> None:
    """The real samples ingested, then what ingest alone does not make: archived nodes, an
    edge of every label (one with an odd weight), settings, pins, a nested meta value, and
    ``extra_nodes`` more notes (so a copy spans several chunks)."""
    for sample in real_samples().values():
        mem.ingest(cx.Session.open_any(sample.path))
    nodes = mem.nodes()
    entities = [n for n in nodes if n.type == "entity"]
    mem.archive(entities[0].id)
    mem.merge(entities[1].id, entities[2].id)  # archives the second, links same_as
    a, b = entities[3].id, entities[4].id
    have = {e["label"] for e in mem.store.rows("edges")}  # type: ignore[attr-defined]
    for label in EDGE_LABELS:
        if label not in have:
            mem.link(a, b, label)
    mem.store.link(Edge(b, a, "about", 0.1234567890123, "2020-01-02T03:04:05.678Z"))
    mem.configure(top_k=7, recall="anchor")
    mem.pin("some-session", a)
    mem.store.set_meta("custom", {"z": [1, 2.5, None, "ü 中文"], "a": {"deep": True}})
    with mem.store.batch():
        for i in range(extra_nodes):
            mem.store.put(
                Node(
                    id="",
                    type="preference",
                    name=f"note {i}",
                    text=f"note number {i}",
                    sources=(Source(session="bulk", seq=i, quote=f"q{i}", via="user"),),
                    created_at="2021-05-06T07:08:09.000Z",
                )
            )


@pytest.fixture(scope="module")
def sample_memory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A memory file from the real samples (made once; tests copy from it, never into it)."""
    path = tmp_path_factory.mktemp("copy") / "samples.db"
    with Memory(path, embedder=None) as mem:
        _fill(mem, extra_nodes=400)
    return path


@pytest.fixture
def source(sample_memory: Path) -> Iterator[SQLiteStore]:
    with SQLiteStore(sample_memory, create=False) as store:
        yield store


def _with_password(dsn: str) -> str:
    return dsn.replace("postgresql://ctxsdk@", f"postgresql://ctxsdk:{PASSWORD}@", 1)


# --- round trips --------------------------------------------------------------------------


def test_sqlite_to_postgres_to_sqlite_keeps_every_row(
    source: SQLiteStore, postgres_dsn: str, tmp_path: Path
) -> None:
    original = _rows(source)
    labels = {e["label"] for e in original["edges"]}
    assert labels == set(EDGE_LABELS)  # every edge label is in the copy
    assert any(n["status"] == "archived" for n in original["nodes"])
    assert len(original["nodes"]) > 500  # more than one chunk
    calls: list[tuple[int, int, str]] = []
    with PostgresStore(postgres_dsn, namespace="team-a") as pg:
        up = copy_memory(source, pg, progress=lambda *a: calls.append(a))
        assert _rows(pg) == original
        back = SQLiteStore(tmp_path / "back.db")
        with back:
            down = copy_memory(pg, back, progress=False)
            assert _rows(back) == original
    total = sum(len(r) for r in original.values())
    assert isinstance(up, CopyReport) and up.rows == total
    assert up.counts() == {t: len(original[t]) for t in TABLES} == down.counts()
    assert up.archived == sum(n["status"] == "archived" for n in original["nodes"]) >= 2
    # Progress: from 0 to every row, in steps of at most 500 rows.
    assert calls[0] == (0, total, "copy") and calls[-1] == (total, total, "copy")
    done = [c[0] for c in calls]
    assert done == sorted(done) and all(b - a <= 500 for a, b in itertools.pairwise(done))
    assert len(calls) >= 4
    with (
        Memory(SQLiteStore(source.location, create=False), embedder=None) as first,
        Memory(tmp_path / "back.db", embedder=None) as last,
    ):
        assert last.export_json() == first.export_json()
        assert last.find("note number 7").hits  # the copy is a working memory


def test_a_copy_keeps_times_exactly_and_leaves_the_embedding_cache(
    source: SQLiteStore, tmp_path: Path
) -> None:
    node = next(n for n in source.nodes() if n.type == "entity")
    with SQLiteStore(tmp_path / "with-vectors.db") as store:
        copy_memory(source, store, progress=False)
        assert store.get(node.id) == node  # updated_at too: nothing stamped
        assert store.put_vectors("test-model/4", [(node.id, "h", b"\0" * 16)]) == 1
        with SQLiteStore(tmp_path / "second.db") as second:
            report = copy_memory(store, second, progress=False)
            assert second.vectors("test-model/4") == {}
            assert _rows(second) == _rows(source)
    text = str(report)
    assert text.splitlines()[0].startswith(f"copy {tmp_path / 'with-vectors.db'} -> ")
    assert "embeddings are not copied" in text and "next search" in text
    assert repr(report) == (
        f"CopyReport({report.nodes} nodes, {report.edges} edges, {report.meta} meta)"
    )
    assert "cx-title" in report._repr_mimebundle_()["text/html"]


def test_one_namespace_into_another(source: SQLiteStore, postgres_dsn: str) -> None:
    a = PostgresStore(postgres_dsn, namespace="team-a")
    copy_memory(source, a, progress=False)
    with Memory(a, embedder=None) as mem:  # closes the store at the end
        report = mem.copy_to(postgres_dsn, namespace="team-b")
        with PostgresStore(postgres_dsn, namespace="team-b", create=False) as b:
            assert _rows(b) == _rows(a) == _rows(source)
    assert report.destination.endswith("#team-b")


def test_copy_to_takes_a_path_a_url_or_a_store(
    source: SQLiteStore, postgres_dsn: str, tmp_path: Path
) -> None:
    with Memory(SQLiteStore(source.location, create=False), embedder=None) as mem:
        mem.copy_to(tmp_path / "new" / "dir" / "copy.db")  # its directory is made
        with SQLiteStore(tmp_path / "store.db") as store:
            mem.copy_to(store)
            assert _rows(store) == _rows(source)  # a store passed in stays open
        with pytest.raises(InvalidArgument, match="namespace belongs to a PostgreSQL"):
            mem.copy_to(tmp_path / "x.db", namespace="team-a")
        report = mem.copy_to(_with_password(postgres_dsn), namespace="up")
    assert PASSWORD not in str(report) and report.destination.endswith("#up")
    with SQLiteStore(tmp_path / "new" / "dir" / "copy.db", create=False) as copied:
        assert _rows(copied) == _rows(source)


# --- refusals and failures ------------------------------------------------------------------


def test_a_destination_that_holds_nodes_is_refused_untouched(
    source: SQLiteStore, postgres_dsn: str, tmp_path: Path
) -> None:
    with Memory(tmp_path / "busy.db", embedder=None) as busy:
        busy.remember("Always run the linter first.")
    with SQLiteStore(tmp_path / "busy.db") as dst:
        rows, revision = _rows(dst), dst.revision()
        held = len(rows["nodes"])  # its root, the preference, what it is about
        with pytest.raises(InvalidArgument) as err:
            copy_memory(source, dst, progress=False)
        assert str(tmp_path / "busy.db") in str(err.value)
        assert f"the destination already holds {held} nodes;" in str(err.value)
        assert _rows(dst) == rows and dst.revision() == revision
    with PostgresStore(postgres_dsn, namespace="busy") as pg:
        pg.put(Node(id="", type="entity", name="x"))
        rows = _rows(pg)
        with pytest.raises(InvalidArgument, match=r"#busy: the destination already holds 1 node;"):
            copy_memory(source, pg, progress=False)
        assert _rows(pg) == rows


def test_a_row_refused_mid_copy_leaves_the_destination_empty(
    source: SQLiteStore, postgres_dsn: str, tmp_path: Path
) -> None:
    # PostgreSQL text cannot hold NUL; SQLite can. The node sorts last, in the second chunk,
    # so the first 500 rows were written when it is refused.
    with SQLiteStore(tmp_path / "nul.db") as src:
        copy_memory(source, src, progress=False)
        src.put(Node(id="nzzzzzzzzzzzzzzzzzzz", type="entity", name="nul", text="a\x00b"))
        with PostgresStore(postgres_dsn, namespace="team-a") as pg:
            revision = pg.revision()
            calls: list[tuple[int, int, str]] = []
            with pytest.raises(InvalidArgument, match="nzzzzzzzzzzzzzzzzzzz.*NUL"):
                copy_memory(src, pg, progress=lambda *a: calls.append(a))
            assert calls[-1][0] >= 500  # a chunk was loaded before the refusal
            assert _rows(pg) == {t: [] for t in TABLES} and pg.revision() == revision


def test_a_meta_key_already_there_rolls_back_nodes_and_edges(
    source: SQLiteStore, tmp_path: Path
) -> None:
    # The destination holds no node but a meta value the source has too: the copy gets as
    # far as meta (after every node and edge), is refused, and takes everything back.
    with SQLiteStore(tmp_path / "meta.db") as dst:
        dst.set_meta("custom", "mine")
        with pytest.raises(InvalidArgument, match="would replace meta key 'custom'"):
            copy_memory(source, dst, progress=False)
        assert _rows(dst) == {
            "nodes": [],
            "edges": [],
            "meta": [{"key": "custom", "value": "mine"}],
        }


# --- load, on both stores -------------------------------------------------------------------


@pytest.fixture(params=["sqlite", "postgres"])
def empty_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "sqlite":
        store: Any = SQLiteStore(tmp_path / "load.db")
    else:
        store = PostgresStore(request.getfixturevalue("postgres_dsn"), namespace="load")
    with store:
        yield store


def _node_row(nid: str, uri: str, **changes: Any) -> dict[str, Any]:
    row = {
        "id": nid,
        "type": "entity",
        "name": "Auth",
        "text": "the gateway",
        "aliases": ["auth"],
        "uri": uri,
        "sources": [{"session": "s1", "seq": 3, "quote": "q", "via": "user", "odd": 1}],
        "until": None,
        "until_at": None,
        "fail": None,
        "fix": "restart it",
        "status": "archived",
        "created_at": "2019-01-01T00:00:00.000Z",
        "updated_at": "2019-02-02T00:00:00.000Z",
        "extra": {"k": [1, {"x": None}]},
    }
    return {**row, **changes}


def test_load_writes_rows_exactly_and_refuses_to_replace_one(empty_store: Any) -> None:
    store = empty_store
    a, b = _node_row("n1", "ctx://entity/a"), _node_row("n2", "ctx://entity/b", status="active")
    edge = {"src": "n1", "dst": "n2", "label": "about", "weight": 0.3, "created_at": "2019"}
    meta = {"key": "k", "value": {"b": 1, "a": [True, None]}}
    assert store.load("nodes", [a, b]) == 2
    assert store.load("edges", [edge]) == 1 and store.load("meta", [meta]) == 1
    assert store.rows("nodes") == [a, b]  # times, status, an unknown source key: as given
    assert store.rows("edges") == [edge] and store.rows("meta") == [meta]
    assert store.load("nodes", []) == 0
    revision = store.revision()
    refusals = [
        ("nodes", _node_row("n1", "ctx://entity/new"), "would replace node 'n1'"),
        ("nodes", _node_row("n3", "ctx://entity/a"), "uri 'ctx://entity/a', which is node 'n1'"),
        ("edges", {**edge, "weight": 1.0}, "would replace edge 'n1' -about-> 'n2'"),
        ("meta", {"key": "k", "value": 2}, "would replace meta key 'k'"),
    ]
    for table, row, why in refusals:
        with pytest.raises(InvalidArgument, match=why):
            store.load(table, [row])
    with pytest.raises(NotFound, match="no node 'n9'"):
        store.load("edges", [{**edge, "dst": "n9"}])
    # In the caller's batch: the refused row takes the batch's earlier writes with it.
    with pytest.raises(InvalidArgument), store.batch():
        store.load("nodes", [_node_row("n4", "ctx://entity/d")])
        store.load("nodes", [_node_row("n5", "ctx://entity/e"), _node_row("n5", "ctx://e/f")])
    assert [r["id"] for r in store.rows("nodes")] == ["n1", "n2"]
    assert store.revision() == revision


@pytest.mark.parametrize(
    ("table", "row", "why"),
    [
        ("nodes", {"id": "n1"}, "a nodes row without aliases"),
        ("nodes", _node_row("n1", "u", type="thing"), "unknown node type 'thing'"),
        ("nodes", _node_row("n1", "u", name=3), "name is text, not int"),
        ("nodes", _node_row("n1", "u", extra=[]), "extra is not an object"),
        ("nodes", _node_row("", "u"), "id is empty"),
        ("edges", {"src": "a", "dst": "b", "label": "x", "weight": 1, "created_at": ""}, "label"),
        (
            "edges",
            {"src": "a", "dst": "b", "label": "about", "weight": float("nan"), "created_at": ""},
            "finite",
        ),
        ("meta", {"key": "__revision__", "value": 1}, "revision counter"),
        ("meta", {"key": "k", "value": 1, "more": 2}, "with unknown more"),
        ("vectors", {}, "nodes, edges or meta"),
    ],
)
def test_load_refuses_a_row_no_store_would_read_back(
    table: str, row: dict[str, Any], why: str, tmp_path: Path
) -> None:
    with SQLiteStore(tmp_path / "bad.db") as store:
        with pytest.raises(InvalidArgument, match=why):
            store.load(table, [row])
        assert _rows(store) == {t: [] for t in TABLES}


# --- the command line -----------------------------------------------------------------------


def _main(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = _cli.main(["memory", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def _one_error_line(code: int, err: str) -> str:
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ctxsdk: error: "), err
    return lines[0]


def test_cli_copies_up_and_back_without_showing_the_password(
    sample_memory: Path, postgres_dsn: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = _with_password(postgres_dsn)
    code, out, err = _main(capsys, sample_memory, "copy", url, "--to-namespace", "team-a")
    assert code == 0, err
    assert out.startswith(f"copy {sample_memory} -> postgresql://ctxsdk@") and "#team-a:" in out
    assert "embeddings are not copied" in out
    code, out, err = _main(capsys, url, "copy", tmp_path / "back.db", "--namespace", "team-a")
    assert code == 0, err
    with (
        SQLiteStore(sample_memory, create=False) as first,
        SQLiteStore(tmp_path / "back.db", create=False) as back,
    ):
        assert _rows(back) == _rows(first)
    # Other actions read the namespace too.
    code, out, err = _main(capsys, url, "show", "--namespace", "team-a")
    assert code == 0 and out.startswith("Memory(postgresql://ctxsdk@") and "#team-a: " in out
    # Into a namespace that holds nodes now: refused, in one line, without the password.
    code, out, err = _main(capsys, sample_memory, "copy", url, "--to-namespace", "team-a")
    line = _one_error_line(code, err)
    assert "#team-a: the destination already holds" in line
    code, out, err = _main(capsys, url, "copy", tmp_path / "x.db", "--namespace", "nope")
    assert "no namespace 'nope': nothing to copy" in _one_error_line(code, err)
    assert "create=False" not in err
    for printed in (out, err):
        assert PASSWORD not in printed


def test_cli_init_and_namespace_set_a_database_up(
    postgres_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    url, role = _with_password(postgres_dsn), f"copy_team_{uuid.uuid4().hex[:8]}"
    code, out, err = _main(capsys, url, "init")
    assert code == 0, err
    assert re.search(r"/test_\d+: schema ctxsdk created, version \d+$", out.strip()), out
    code, out, err = _main(capsys, url, "init")
    assert re.search(r": schema ctxsdk up to date, version \d+$", out.strip()), out
    code, out, err = _main(capsys, url, "namespace", "team-a", "--role", role)
    assert code == 0, err
    assert f"namespace team-a is ready, for the members of role {role}" in out
    assert PASSWORD not in out + err
    with psycopg.connect(postgres_dsn) as conn:
        got = conn.execute("SELECT role FROM ctxsdk.namespaces WHERE namespace = 'team-a'")
        assert got.fetchall() == [(role,)]
        assert conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["show", "--namespace", "team-a"], "--namespace is for a PostgreSQL memory"),
        (["copy", "other.db", "--namespace", "a"], "--namespace is for a PostgreSQL memory"),
        (["copy", "other.db", "--to-namespace", "a"], "--to-namespace is for a PostgreSQL"),
        (["copy"], "ctxsdk memory DB copy DST: name one destination"),
        (["copy", "a.db", "b.db"], "name one destination"),
        (["init"], "sets up a PostgreSQL database"),
        (["namespace", "team-a"], "sets up a PostgreSQL database"),
        (["find", "x", "--role", "r"], "--role is for `ctxsdk memory DB namespace NAME"),
        (["show", "--to-namespace", "a"], "--to-namespace is for `ctxsdk memory DB copy DST`"),
    ],
)
def test_cli_refuses_server_options_for_a_file(
    args: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "memory.db"
    code, _, err = _main(capsys, db, *args)
    assert says in _one_error_line(code, err)
    assert not db.exists()  # refused before the file is opened or made


def test_cli_refuses_a_missing_source_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _main(capsys, tmp_path / "missing.db", "copy", tmp_path / "copy.db")
    assert "no memory database here: nothing to copy" in _one_error_line(code, err)
    assert not (tmp_path / "missing.db").exists() and not (tmp_path / "copy.db").exists()


def test_the_ctxsdk_command_copies_with_progress_lines_off_a_terminal(
    tmp_path: Path, postgres_dsn: str
) -> None:
    src = tmp_path / "big.db"
    with SQLiteStore(src) as store, store.batch():
        for i in range(2100):
            store.put(Node(id="", type="preference", name=f"p{i}", text=f"prefer {i}"))
    env = {**os.environ, "CTXSDK_EMBEDDER": "none", "PYTHONIOENCODING": "utf-8"}
    url = _with_password(postgres_dsn)
    proc = subprocess.run(
        [sys.executable, "-m", "ctxsdk", "memory", str(src), "copy", url, "--to-namespace", "big"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "2,100 nodes, 0 edges, 0 meta values copied" in proc.stdout
    lines = proc.stderr.splitlines()
    assert lines[0] == "ctxsdk: memory copy: 0 of 2,100 rows (0%)"
    assert lines[-1] == "ctxsdk: memory copy: 2,100 of 2,100 rows (100%)"
    assert 3 <= len(lines) <= 11
    assert PASSWORD not in proc.stdout + proc.stderr
