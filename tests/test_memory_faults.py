"""A memory file that is not a regular file, a damaged one, odd values in a log, and bad
command-line arguments: each is refused with a ``CtxError`` that says what and where, never a
hang, a traceback or a raw ``sqlite3`` / ``json`` error.

Every case uses real files: FIFOs made with ``os.mkfifo``, ``/dev/zero`` behind a symlink, a
character device, a memory made by ingesting a sample session and then damaged byte by byte
or with ``sqlite3`` directly. Calls that would hang if they regressed (opening a FIFO) run in a
child process with a timeout, so a regression fails instead of hanging the suite.
"""

from __future__ import annotations

import faulthandler
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxsdk.errors import CorruptStore, CtxError, InvalidArgument
from ctxsdk.memory import Memory
from ctxsdk.memory._model import Node
from ctxsdk.memory._sqlite import SQLiteStore
from ctxsdk.samples import sample
from ctxsdk.session import Session
from ctxsdk.session.kernel import MAX_JSON_DEPTH
from ctxsdk.testing import LogBuilder

TIMEOUT = 60.0  # seconds a child may take before the call counts as hung


# --- 1. a memory path that is not a regular file -------------------------------------------

_OPEN_CHILD = r"""
import json, sys
import ctxsdk as cx
try:
    cx.Memory(sys.argv[1]).close()
except Exception as exc:
    print(json.dumps([type(exc).__name__, str(exc), isinstance(exc, cx.errors.CtxError)]))
else:
    print(json.dumps(None))
"""


def _child(*argv: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [sys.executable, *argv],
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=TIMEOUT,
            env={**os.environ, "PYTHONIOENCODING": "utf-8", "DSH_HOME": "/nonexistent"},
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{argv[-1]}: no answer within {TIMEOUT:.0f} s (hung)")


def _not_regular_paths(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Name -> (path, the word its error must hold), for what this platform has."""
    out: dict[str, tuple[Path, str]] = {}
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo.db")
        out["fifo"] = (tmp_path / "fifo.db", "FIFO")
        os.symlink(tmp_path / "fifo.db", tmp_path / "to-fifo.db")
        out["symlink to a fifo"] = (tmp_path / "to-fifo.db", "FIFO")
    (tmp_path / "dir.db").mkdir()
    out["directory"] = (tmp_path / "dir.db", "directory")
    if os.path.exists("/dev/zero"):
        os.symlink("/dev/zero", tmp_path / "zero.db")
        out["/dev/zero via a symlink"] = (tmp_path / "zero.db", "character device")
    if os.path.exists("/dev/null"):
        out["a character device"] = (Path("/dev/null"), "character device")
    return out


@pytest.fixture
def not_regular(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    return _not_regular_paths(tmp_path)


def test_memory_refuses_a_path_that_is_not_a_regular_file(
    tmp_path: Path, not_regular: dict[str, tuple[Path, str]]
) -> None:
    from ctxsdk.errors import InvalidArgument

    for name, (path, word) in not_regular.items():
        proc = _child("-c", _OPEN_CHILD, str(path))
        assert proc.returncode == 0, (name, proc.stderr[-2000:])
        got = json.loads(proc.stdout.strip().splitlines()[-1])
        assert got is not None, f"{name}: opened as a memory"
        kind, message, is_ctx = got
        assert is_ctx and kind == InvalidArgument.__name__, (name, got)
        assert str(path) in message and word in message, (name, message)
        assert "not a regular file" in message, (name, message)
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(("-wal", "-shm"))]


def test_cli_memory_show_refuses_a_path_that_is_not_a_regular_file(
    not_regular: dict[str, tuple[Path, str]],
) -> None:
    for name, (path, word) in not_regular.items():
        proc = _child("-m", "ctxsdk", "memory", str(path), "show")
        assert proc.returncode == 2, (name, proc.stdout, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("ctxsdk: error: "), (name, proc.stderr)
        assert str(path) in lines[0] and word in lines[0], (name, lines[0])
        assert "Traceback" not in proc.stderr and proc.stdout == ""


# --- 2. a damaged memory file: every read works or raises CorruptStore ---------------------


def _checkpoint(path: Path) -> None:
    """Fold the WAL into the main file, so the main file alone is the whole memory."""
    db = sqlite3.connect(path)
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()


@pytest.fixture(scope="module")
def base_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real memory: a sample session ingested verbatim (observations, episodes), an
    entity with an alias and edges, a decision with a deadline, settings and pins."""
    path = tmp_path_factory.mktemp("base") / "memory.db"
    with Memory(path) as mem:
        mem.ingest(Session.open(sample("fix-flaky-test")), verbatim=True)
        gw = mem.remember("AuthGateway", type="entity")
        alias = mem.remember("auth-gateway", type="entity")
        gw = mem.merge(gw.id, alias.id)
        mem.remember("always run the tests with -x", type="preference", link_to=gw.id)
        mem.remember(
            "AuthGateway refactor waits until Friday",
            type="decision",
            link_to=gw.id,
            until="Friday",
        )
        mem.configure(map_budget=300)
        mem.pin("s-1", gw.id)
    _checkpoint(path)
    return path


def _copy(base: Path, dest: Path) -> Path:
    dest.write_bytes(base.read_bytes())
    return dest


@pytest.fixture(scope="module")
def session() -> Session:
    return Session.open(sample("fix-flaky-test"))


def _reads(mem: Memory, ids: list[str], session: Session) -> list[tuple[str, Callable[[], Any]]]:
    """Every public read a user makes of a memory, by name (``read`` of each of ``ids``)."""
    calls: list[tuple[str, Callable[[], Any]]] = [
        ("nodes", lambda: mem.nodes(include_archived=True)),
        ("find", lambda: mem.find("xdist workers AuthGateway")),
        ("map", mem.map),
        ("episodes", mem.episodes),
        ("len", lambda: len(mem)),
        ("repr", lambda: repr(mem)),
        ("export_json", lambda: json.dumps(mem.export_json())),
        ("to_markdown", mem.to_markdown),
        ("graph", mem.graph),
        ("to_polars", mem.to_polars),
        ("settings", mem.settings),
        ("pins", lambda: mem.pins("s-1")),
        ("context", lambda: mem.context(session, "xdist")),
    ]
    calls += [(f"read {i}", lambda i=i: mem.read(i)) for i in ids]
    return calls


def _raw(path: str | Path, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
    db = sqlite3.connect(path)
    try:
        rows = db.execute(sql, params).fetchall()
        db.commit()
        return rows
    finally:
        db.close()


def _each_read_works_or_is_corrupt_store(path: Path, *words: str) -> list[str]:
    """Open ``path`` and run every read; return the names of the reads that raised
    ``CorruptStore`` (each naming ``words``); any other exception fails the test."""
    failed: list[str] = []
    ids = [r[0] for r in _raw(path, "SELECT id FROM nodes ORDER BY id")]
    with Memory(path) as mem:
        for name, call in _reads(mem, ids, Session.open(sample("fix-flaky-test"))):
            try:
                call()
            except CorruptStore as exc:
                for w in words:
                    assert w in str(exc), (name, w, str(exc))
                failed.append(name)
    return failed


_DEEP = "[" * 100_000  # json raises RecursionError on it
_NESTED = "[" * 300 + "]" * 300  # decodes, but nests past MAX_JSON_DEPTH
_BAD_JSON: dict[str, dict[str, str]] = {  # column -> case name -> what is written
    "aliases": {
        "not-json": "not json",
        "deep": _DEEP,
        "nested": _NESTED,
        "object": '{"a": 1}',
        "number": "5",
        "string": '"x"',
        "number-item": "[5]",
        "null-item": "[null]",
        "null": "null",
    },
    "sources": {
        "not-json": "{broken",
        "deep": _DEEP,
        "nested": _NESTED,
        "object": "{}",
        "string": '"x"',
        "number-item": "[5]",
        "list-item": '[["a"]]',
        "null": "null",
    },
    "extra": {
        "not-json": "}",
        "deep": _DEEP,
        "nested": '{"a": ' + _NESTED + "}",
        "list": "[]",
        "number": "5",
        "string": '"x"',
        "null": "null",
    },
}
_JSON_CASES = [(c, name) for c, cases in _BAD_JSON.items() for name in cases]


@pytest.mark.parametrize(("column", "case"), _JSON_CASES, ids=[f"{c}-{n}" for c, n in _JSON_CASES])
@pytest.mark.parametrize("node_type", ["entity", "observation", "episode", "decision"])
def test_bad_json_in_a_node_column_is_corrupt_store_naming_node_and_column(
    base_db: Path, tmp_path: Path, node_type: str, column: str, case: str
) -> None:
    value = _BAD_JSON[column][case]
    path = _copy(base_db, tmp_path / "memory.db")
    (node_id,) = _raw(path, "SELECT id FROM nodes WHERE type = ? LIMIT 1", (node_type,))[0]
    _raw(path, f"UPDATE nodes SET {column} = ? WHERE id = ?", (value, node_id))
    failed = _each_read_works_or_is_corrupt_store(path, node_id, column)
    assert "nodes" in failed and f"read {node_id}" in failed
    if node_type == "episode":
        assert "episodes" in failed
    else:
        assert "find" in failed
        # a memory just opened maps its named kinds and only counts its observations
        assert ("map" in failed) == (node_type != "observation")


_BAD_VALUES: list[tuple[str, str]] = [
    ("name", "x'35'"),  # a blob where text belongs (a number is stored as text: affinity)
    ("text", "x'00ff'"),
    ("name", "CAST(x'ff' AS TEXT)"),  # text that is not UTF-8
    ("type", "'entitx'"),
    ("status", "'gone'"),
    ("until", "x'00'"),
    ("created_at", "x'01'"),
]


@pytest.mark.parametrize(("column", "sql"), _BAD_VALUES, ids=[f"{c}={v}" for c, v in _BAD_VALUES])
def test_a_wrong_value_in_a_node_column_is_corrupt_store(
    base_db: Path, tmp_path: Path, column: str, sql: str
) -> None:
    path = _copy(base_db, tmp_path / "memory.db")
    (node_id,) = _raw(path, "SELECT id FROM nodes WHERE type = 'decision' LIMIT 1")[0]
    _raw(path, f"UPDATE nodes SET {column} = {sql} WHERE id = ?", (node_id,))
    failed = _each_read_works_or_is_corrupt_store(path, node_id, column)
    assert "nodes" in failed and f"read {node_id}" in failed


@pytest.mark.parametrize(
    ("column", "sql"),
    [("label", "'bogus'"), ("weight", "'heavy'"), ("weight", "x'00'"), ("created_at", "x'37'")],
    ids=["label", "weight-text", "weight-blob", "created_at"],
)
def test_a_wrong_value_in_an_edge_column_is_corrupt_store(
    base_db: Path, tmp_path: Path, column: str, sql: str
) -> None:
    path = _copy(base_db, tmp_path / "memory.db")
    src, dst = _raw(path, "SELECT src, dst FROM edges WHERE label = 'about' LIMIT 1")[0]
    _raw(path, f"UPDATE edges SET {column} = {sql} WHERE src = ? AND dst = ?", (src, dst))
    failed = _each_read_works_or_is_corrupt_store(path, src, dst, column)
    assert f"read {src}" in failed and f"read {dst}" in failed and "export_json" in failed


@pytest.mark.parametrize(
    "value", ["{not json", _DEEP, _NESTED, "x'ff'"], ids=["not-json", "deep", "nested", "utf8"]
)
@pytest.mark.parametrize("key", ["settings", "pins:s-1", "ingested:%"])
def test_bad_json_in_a_meta_value_is_corrupt_store_naming_the_key(
    base_db: Path, tmp_path: Path, key: str, value: str
) -> None:
    path = _copy(base_db, tmp_path / "memory.db")
    ((name,),) = _raw(path, "SELECT key FROM meta WHERE key LIKE ?", (key,))
    if value.startswith("x'"):
        _raw(path, f"UPDATE meta SET value = CAST({value} AS TEXT) WHERE key = ?", (name,))
    else:
        _raw(path, "UPDATE meta SET value = ? WHERE key = ?", (value, name))
    failed = _each_read_works_or_is_corrupt_store(path, name, "meta")
    if key == "settings":
        assert "map" in failed and "settings" in failed
    elif key.startswith("pins"):
        assert "pins" in failed
    else:
        with Memory(path) as mem, pytest.raises(CorruptStore, match=name):
            mem.ingest(Session.open(sample("fix-flaky-test")))


def test_a_damaged_revision_counter_is_corrupt_store(base_db: Path, tmp_path: Path) -> None:
    path = _copy(base_db, tmp_path / "memory.db")
    _raw(path, "UPDATE meta SET value = 'many' WHERE key = '__revision__'")
    with pytest.raises(CorruptStore, match="__revision__"), Memory(path) as mem:
        mem.find("AuthGateway")


@pytest.mark.parametrize("version", [-1, -(2**31)])
def test_a_negative_schema_version_is_corrupt_store(
    base_db: Path, tmp_path: Path, version: int
) -> None:
    """A flipped sign bit in the header's user_version (found by the fuzz below): it used
    to index the migrations from the end (IndexError)."""
    path = _copy(base_db, tmp_path / "memory.db")
    _raw(path, f"PRAGMA user_version={version}")
    before = path.read_bytes()
    with pytest.raises(CorruptStore, match=f"schema version {version}"):
        Memory(path)
    assert path.read_bytes() == before


def test_a_damaged_workspace_root_is_corrupt_store_naming_it(base_db: Path, tmp_path: Path) -> None:
    """The root's type flipped (found by the fuzz): opening said InvalidArgument "uri
    'ctx://workspace' is already node ..." while trying to make a second root."""
    path = _copy(base_db, tmp_path / "memory.db")
    ((root,),) = _raw(path, "SELECT id FROM nodes WHERE type = 'workspace'")
    _raw(path, "UPDATE nodes SET type = 'workspacf' WHERE id = ?", (root,))
    with pytest.raises(CorruptStore, match=f"node '{root}', column type"):
        Memory(path)


def test_an_archived_workspace_root_still_opens(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with Memory(path) as mem:
        root = mem.root.id
        mem.archive(root)
    with Memory(path) as mem:
        assert mem.root.id == root
        assert [n.id for n in mem.nodes("workspace", include_archived=True)] == [root]


_BOX_EXTRA = {  # case -> the JSON path set in an episode's extra, and its new value (SQL)
    "atSeq-text": ("$.atSeq", "'x'"),
    "atSeq-list": ("$.atSeq", "json('[1]')"),
    "atSeq-bool": ("$.atSeq", "json('true')"),
    "kind-number": ("$.kind", "5"),
    "kind-unknown": ("$.kind", "'box'"),
    "kind-list": ("$.kind", "json('[\"tail\"]')"),
    "session-number": ("$.session", "5"),
}


@pytest.mark.parametrize("case", list(_BOX_EXTRA))
def test_a_session_map_box_with_a_wrong_extra_is_corrupt_store(
    base_db: Path, tmp_path: Path, case: str
) -> None:
    """Valid JSON of the right type whose fields are not a box's: ``episodes()`` raised
    ValueError or TypeError (``int(atSeq)``, a ``kind`` formatted by the CLI)."""
    path = _copy(base_db, tmp_path / "memory.db")
    where, value = _BOX_EXTRA[case]
    (node_id,) = _raw(path, "SELECT id FROM nodes WHERE type = 'episode' LIMIT 1")[0]
    _raw(
        path,
        f"UPDATE nodes SET extra = json_set(extra, '{where}', {value}) WHERE id = ?",
        (node_id,),
    )
    failed = _each_read_works_or_is_corrupt_store(path, node_id, "extra")
    assert failed == ["episodes"]
    proc = _child("-m", "ctxsdk", "memory", str(path), "episodes")
    assert proc.returncode == 2 and node_id in proc.stderr and "Traceback" not in proc.stderr


def test_settings_with_wrong_values_fall_back_to_the_defaults(
    base_db: Path, tmp_path: Path
) -> None:
    """A settings value ``configure`` would refuse (damage, or an older writer) is read as
    unset, as a settings value that is not an object already was: ``map()`` raised
    TypeError comparing the budget."""
    path = _copy(base_db, tmp_path / "memory.db")
    bad = {"map_budget": "x", "recall": 5, "top_k": -1, "expand": True, "other": 1}
    _raw(path, "UPDATE meta SET value = ? WHERE key = 'settings'", (json.dumps(bad),))
    assert _each_read_works_or_is_corrupt_store(path) == []
    with Memory(path) as mem:
        assert mem.settings() == {"recall": "off", "map_budget": 400, "top_k": 10, "expand": 1}
        assert mem.configure(map_budget=100)["map_budget"] == 100  # and it can be set again


# --- 2b. random bytes flipped in a real memory file ----------------------------------------

_FUZZ = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
WATCHDOG = 600.0  # seconds the fuzz may take before the process is stopped (a hang)


@pytest.fixture
def watchdog() -> Iterator[None]:
    """Stop the test process, with every thread's traceback, if a read hangs on a damaged
    file (a regression then fails the run instead of hanging it)."""
    faulthandler.dump_traceback_later(WATCHDOG, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


class _Image(tuple[bytes, list[int], list[str]]):
    """A fuzz base that hypothesis reports by name, not as 70 kB of bytes."""

    def __repr__(self) -> str:
        return f"<memory image, {len(self[0])} bytes>"


@pytest.fixture(scope="module")
def base_image(base_db: Path) -> tuple[bytes, list[int], list[str]]:
    """The memory file's bytes, the offsets worth flipping most (JSON punctuation, the
    file header, each page's b-tree header) and the node ids."""
    data = base_db.read_bytes()
    page = int.from_bytes(data[16:18], "big") or 65536
    hot = [i for i, b in enumerate(data) if b in b'[]{}":,\\']
    hot += list(range(100))
    hot += [p + k for p in range(0, len(data), page) for k in range(12) if p + k < len(data)]
    ids = [r[0] for r in _raw(base_db, "SELECT id FROM nodes ORDER BY id")]
    return _Image((data, sorted(set(hot)), ids))


@_FUZZ
@given(data=st.data())
def test_flipped_bytes_in_a_memory_file_read_or_raise_ctx_errors(
    base_image: tuple[bytes, list[int], list[str]],
    session: Session,
    watchdog: None,
    data: st.DataObject,
) -> None:
    image, hot, ids = base_image
    # Offsets from a drawn seed: hypothesis's own integers crowd the ends of a range (the
    # file header, which only ever gives "not a database"); a seed spreads them evenly.
    rng = random.Random(data.draw(st.integers(0, 2**64), label="seed"))
    buf = bytearray(image)
    for _ in range(rng.randint(1, 8)):
        at = rng.choice(hot) if rng.random() < 0.5 else rng.randrange(len(buf))
        buf[at] ^= rng.randint(1, 255)
    with tempfile.TemporaryDirectory(prefix="ctxsdk-flip-") as tmp:
        path = Path(tmp) / "memory.db"
        path.write_bytes(bytes(buf))
        try:
            mem = Memory(path)
        except CtxError:
            return
        with mem:
            calls = _reads(mem, ids[:: max(1, len(ids) // 12)], session)
            calls.append(("ingest", lambda: mem.ingest(session, verbatim=True)))
            for name, call in calls:
                try:
                    call()
                except CtxError:
                    pass
                except Exception as exc:
                    exc.add_note(f"ctxsdk: the call was {name}() on a memory with flipped bytes")
                    raise


def test_the_store_writes_only_json_its_reader_takes(tmp_path: Path) -> None:
    """``extra`` nested to ``MAX_JSON_DEPTH`` levels round-trips; one level more is refused
    on ``put`` (the reader would call it damage), and nothing is written."""

    def nested(levels: int) -> dict[str, Any]:
        value: dict[str, Any] = {}
        for _ in range(levels - 1):
            value = {"a": value}
        return value

    with SQLiteStore(tmp_path / "memory.db") as store:
        ok = store.put(Node(id="", type="entity", name="deep", extra=nested(MAX_JSON_DEPTH)))
        assert store.get(ok.id) == ok
        with pytest.raises(InvalidArgument, match="nests deeper than"):
            store.put(Node(id="", type="entity", name="deeper", extra=nested(MAX_JSON_DEPTH + 1)))
        assert [n.name for n in store.nodes()] == ["deep"]


# --- 3. odd values a log may hold, read by ingest as the session reader reads them ---------


def _compacted_log() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    b = LogBuilder(session_id="s-odd-values", runtime_context=None)
    for i in range(3):
        b.turn(f"step {i} of the billing service migration " * 8).assistant(text="ok " * 40)
        b.end_turn()
    b.compact(1, "Summary: we migrated the billing service.")
    b.turn("now ship the ledger change").assistant(text="shipped").end_turn()
    return b.header, b.events


def _set(data: dict[str, Any], key: str, value: Any) -> None:
    data[key] = value


def _summary_text_of(data: dict[str, Any], value: Any) -> None:
    data["summary"][0]["text"] = value


_ODD = {  # case -> (event type, how its data is changed)
    "summary-number": ("compaction/summary", lambda d: _set(d, "summary", 5)),
    "summary-float": ("compaction/summary", lambda d: _set(d, "summary", 1.5)),
    "summary-bool": ("compaction/summary", lambda d: _set(d, "summary", True)),
    "summary-string": ("compaction/summary", lambda d: _set(d, "summary", "plain text")),
    "summary-object": ("compaction/summary", lambda d: _set(d, "summary", {"text": "x"})),
    "summary-null": ("compaction/summary", lambda d: _set(d, "summary", None)),
    "summary-number-block": ("compaction/summary", lambda d: _set(d, "summary", [5])),
    "summary-number-text": ("compaction/summary", lambda d: _summary_text_of(d, 7)),
    "compaction-id-number": ("compaction/summary", lambda d: _set(d, "compactionId", 9)),
    "end-error-number": ("compaction/end", lambda d: _set(d, "error", 3)),
}


@pytest.mark.parametrize("case", list(_ODD))
def test_ingest_reads_odd_compaction_values_as_the_reader_does(tmp_path: Path, case: str) -> None:
    """A log the reader opens without a warning is ingested: a compaction summary that is
    not a list of text blocks gives its box no summary text, never a TypeError."""
    header, events = _compacted_log()
    etype, change = _ODD[case]
    (seq,) = [i for i, e in enumerate(events) if e["type"] == etype]
    change(events[seq]["data"])
    path = tmp_path / "session.v3.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in (header, *events)), encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = Session.open(path)
        s.surface()
    with Memory(tmp_path / "memory.db") as mem:
        report = mem.ingest(s, verbatim=True)
        boxes = mem.episodes(s)
        assert [b.id for b in boxes] == list(report.episodes)
        assert all(isinstance(b.text, str) for b in boxes)
        assert boxes[-1].extra["kind"] == "tail"
        mem.find("billing service"), mem.map()
        assert mem.ingest(s, verbatim=True).skipped


def test_compaction_end_data_that_is_not_an_object_is_ingested(tmp_path: Path) -> None:
    header, events = _compacted_log()
    (seq,) = [i for i, e in enumerate(events) if e["type"] == "compaction/end"]
    events[seq]["data"] = 5
    s = Session.from_events(header, events)
    with Memory(tmp_path / "memory.db") as mem:
        report = mem.ingest(s)
        assert [b.extra["kind"] for b in mem.episodes(s)][-1] == "tail"
        assert report.episodes


# --- 4. bad command-line arguments: exit 2 and one line that says what is wrong -------------

_BAD_ARGS = {  # case -> (arguments after DB, words the message must hold)
    "find without a query": (["find"], ["QUERY"]),
    "find with a blank query": (["find", "  "], ["QUERY"]),
    "map with a negative budget": (["map", "--budget", "-1"], ["--budget", "-1"]),
    "find with top-k 0": (["find", "xdist", "--top-k", "0"], ["--top-k", "0"]),
    "find with top-k 101": (["find", "xdist", "--top-k", "101"], ["--top-k", "101"]),
    "ingest without a session": (["ingest"], ["SESSION"]),
    "read without an id": (["read"], ["ID"]),
    "map with an argument": (["map", "100"], ["map", "100", "--budget"]),
    "show with an argument": (["show", "extra"], ["show", "extra"]),
    "export with an argument": (["export", "x"], ["export", "x"]),
}


@pytest.mark.parametrize("case", list(_BAD_ARGS))
def test_cli_memory_bad_arguments_exit_2_with_one_line(tmp_path: Path, case: str) -> None:
    args, words = _BAD_ARGS[case]
    db = tmp_path / "memory.db"
    proc = _child("-m", "ctxsdk", "memory", str(db), *args)
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ctxsdk: error: "), proc.stderr
    assert all(w in lines[0] for w in words), lines[0]
    assert "Traceback" not in proc.stderr and "top_k" not in lines[0]
    assert not db.exists()  # refused before the memory file is made


def test_cli_memory_good_arguments_still_work(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    assert _child("-m", "ctxsdk", "memory", str(db), "map", "--budget", "0").returncode == 0
    found = _child("-m", "ctxsdk", "memory", str(db), "find", "xdist", "--top-k", "100")
    assert found.returncode == 0, found.stderr


# --- 6. a path under a file, and a map budget the Python API cannot take -------------------


def test_memory_under_a_regular_file_is_invalid_argument_naming_the_path(tmp_path: Path) -> None:
    blocker = tmp_path / "notes.txt"
    blocker.write_text("a file, not a directory")
    for path in (blocker / "memory.db", blocker / "sub" / "memory.db"):
        with pytest.raises(InvalidArgument) as err:
            Memory(path)
        msg = str(err.value)
        assert msg.startswith(f"{path}: ") and str(blocker) in msg, msg
        assert "not a directory" in msg, msg
    assert blocker.read_text() == "a file, not a directory"  # left as it was
    proc = _child("-m", "ctxsdk", "memory", str(blocker / "memory.db"), "show")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


@pytest.mark.parametrize("budget", [-1, -400, 1.5, "400", True, [400]])
def test_memory_map_refuses_a_budget_that_is_not_a_count_of_tokens(budget: Any) -> None:
    mem = Memory()
    try:
        with pytest.raises(InvalidArgument, match=r"budget is a whole number of tokens >= 0"):
            mem.map(budget=budget)
        assert mem.map(budget=0).text == "" and mem.map().budget == 400  # still fine
    finally:
        mem.close()
