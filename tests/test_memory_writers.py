"""Writers on one memory file: what a write does before and while it holds SQLite's write
lock, a writer waiting for it, and the WAL's checkpoints (real processes, real files)."""

from __future__ import annotations

import multiprocessing as mp
import threading
import time
from pathlib import Path

import pytest

from ctxsdk.errors import InvalidArgument, NotFound
from ctxsdk.memory import Memory, SQLiteStore
from ctxsdk.memory._model import Edge, Node
from ctxsdk.memory._sqlite import _CHECKPOINT_FRAMES

_SAME = [f"Every release of service {i} waits for the nightly integration run." for i in range(12)]


def _remember_same(path: str, order: int) -> None:
    texts = _SAME if order % 2 == 0 else list(reversed(_SAME))
    with Memory(path, embedder=None, timeout=60) as mem:
        for text in texts:
            mem.remember(text, link_to="Releases")


def test_processes_remembering_the_same_texts_make_one_node_each(tmp_path: Path) -> None:
    """Four processes remember the same twelve preferences at once (two in each order),
    each through the merge target found before its lock and checked again inside it: one
    node per text and one entity, with every process's link to it."""
    path = str(tmp_path / "m.db")
    Memory(path, embedder=None).close()
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_remember_same, args=(path, i)) for i in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(300)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    with Memory(path, embedder=None) as mem:
        prefs = mem.nodes("preference")
        assert sorted(n.text for n in prefs) == sorted(_SAME)
        (entity,) = mem.nodes("entity")
        assert entity.name == "Releases"
        assert {e.src for e in mem.store.edges(dst=entity.id)} == {n.id for n in prefs}


def test_an_entity_changed_after_the_read_ahead_is_read_again(tmp_path: Path) -> None:
    """Another connection archives the entity a remember links to between the check
    before the lock and the lock: the change feed gives the index a newer node, so the
    entity is looked up again inside the lock, and a new one is made rather than an edge
    to the archived one."""
    path = tmp_path / "m.db"
    mine, theirs = Memory(path, embedder=None), Memory(path, embedder=None)
    mine.remember("Always run the linters before you push a branch.", link_to="CI")
    (ci,) = mine.nodes("entity")
    real = mine._read_ahead

    def check_then_archive(targets):  # type: ignore[no-untyped-def]
        by_id, checked = real(targets)
        assert ci.id in checked  # checked before the lock
        theirs.archive(ci.id)
        return by_id, checked

    mine._read_ahead = check_then_archive  # type: ignore[method-assign]
    node = mine.remember("Deploys wait for the nightly integration run.", link_to="CI")
    (now,) = mine.nodes("entity")
    assert now.id != ci.id and now.name == "CI"
    assert [e.dst for e in mine.store.edges(src=node.id)] == [now.id]
    mine._read_ahead = real  # type: ignore[method-assign]
    again = mine.remember("Releases are tagged from main only.", link_to="CI")
    assert [e.dst for e in mine.store.edges(src=again.id)] == [now.id]
    mine.close()
    theirs.close()


def test_a_waiting_writer_writes_once_the_lock_is_free(tmp_path: Path) -> None:
    """While another connection holds the write lock, a write waits (its tries are
    SQLite's busy_timeout off) and goes in once the lock is free; the connection's
    ``busy_timeout`` is back afterwards, and after a write that failed."""
    path = tmp_path / "m.db"
    holder, waiter = SQLiteStore(path), SQLiteStore(path)
    held = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with holder.batch():
            holder.put(Node(id="", type="preference", name="held", text="held"))
            held.set()
            release.wait(10)

    t = threading.Thread(target=hold)
    t.start()
    assert held.wait(10)
    threading.Timer(0.2, release.set).start()
    began = time.monotonic()
    node = waiter.put(Node(id="", type="preference", name="after", text="after"))
    assert time.monotonic() - began >= 0.15
    t.join(10)
    assert {n.name for n in waiter.nodes()} == {"held", "after"} and node.id
    want = int(waiter._timeout * 1000)
    assert waiter._conn().execute("PRAGMA busy_timeout").fetchone()[0] == want
    with pytest.raises(NotFound):
        waiter.link(Edge.weighted(node.id, "ghost", "about"))
    assert waiter._conn().execute("PRAGMA busy_timeout").fetchone()[0] == want
    holder.close()
    waiter.close()


def test_a_new_node_and_an_edge_are_checked_by_the_files_constraints(tmp_path: Path) -> None:
    """A new node and an edge are one statement each: a taken uri is still refused naming
    its holder, an edge to a missing node is still NotFound, and neither leaves a row."""
    with SQLiteStore(tmp_path / "m.db") as store:
        a = store.put(Node(id="", type="entity", name="A", uri="ctx://entity/a"))
        rev = store.revision()
        with pytest.raises(InvalidArgument, match=f"already node '{a.id}'"):
            store.put(Node(id="", type="entity", name="B", uri="ctx://entity/a"))
        with pytest.raises(NotFound, match="no node 'ghost'"):
            store.link(Edge.weighted(a.id, "ghost", "about"))
        with pytest.raises(NotFound, match="no node 'ghost'"):
            store.link(Edge.weighted("ghost", a.id, "about"))
        assert [n.id for n in store.nodes()] == [a.id] and store.edges() == []
        assert store.revision() == rev  # nothing was committed
        b = store.put(Node(id="", type="entity", name="B"))
        assert store.link(Edge.weighted(a.id, b.id, "about"))
        assert not store.link(Edge.weighted(a.id, b.id, "about"))  # there already


def _wal_frames(path: Path, store: SQLiteStore) -> int:
    wal = Path(f"{path}-wal")
    return max(wal.stat().st_size - 32, 0) // store._frame_bytes if wal.exists() else 0


def test_the_wal_is_checkpointed_while_writers_keep_it_open(tmp_path: Path) -> None:
    """The store checkpoints the WAL itself (SQLite's automatic checkpoint is off): with two
    connections writing in turn, and a third holding a read open part of the time, the log
    never grows far past the checkpoint mark, and every write is in the file."""
    path = tmp_path / "m.db"
    one, two = Memory(path, embedder=None), Memory(path, embedder=None)
    reader = SQLiteStore(path)
    assert one.store._conn().execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    most = 0
    for i in range(1200):  # about 11,000 frames
        mem = one if i % 2 else two
        if i % 50 == 0:
            with reader.snapshot():  # a reader holding old frames for a while
                reader.nodes()
                mem.remember(f"Rule {i} of the long list is written down.", link_to="List")
        else:
            mem.remember(f"Rule {i} of the long list is written down.", link_to="List")
        most = max(most, _wal_frames(path, one.store))
    assert _CHECKPOINT_FRAMES // 2 < most < _CHECKPOINT_FRAMES + 100
    reader.close()
    two.close()
    one.close()
    with Memory(path, embedder=None) as mem:
        assert len(mem.nodes("preference")) == 1200


class _NoByIds(SQLiteStore):
    """A store without ``by_ids`` (as one that reads a node at a time): remember reads
    its link targets with ``get``."""

    by_ids = None  # type: ignore[assignment]


def _stored(mem: Memory) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    """The nodes (type, name, text) and edges (by their ends' names), ids aside."""
    nodes = {n.id: n for n in mem.nodes(include_archived=True)}
    edges = [(nodes[e.src].name, nodes[e.dst].name, e.label) for e in mem.store.edges()]
    return sorted((n.type, n.name, n.text) for n in nodes.values()), sorted(edges)


def test_remember_reads_its_targets_in_one_statement_or_one_at_a_time_alike(
    tmp_path: Path,
) -> None:
    """Link targets given by id, by the name of an entity there is, of one there is not,
    and several at once: a store with ``by_ids`` (one read before the lock) and one without
    it (``get`` of each) store the same nodes and edges."""
    results = []
    for name, store in (("one", SQLiteStore), ("each", _NoByIds)):
        with Memory(store(tmp_path / f"{name}.db"), embedder=None) as mem:
            first = mem.remember("Keep the deploy scripts in the ops repository.", link_to="Ops")
            mem.remember("The ops team reviews every deploy script.", link_to=first.id)
            mem.remember("Deploys wait for the nightly run.", link_to=["Ops", "CI", first.id])
            mem.remember("keep the deploy scripts in the OPS repository", link_to=["ci"])
            mem.remember("Ops", type="entity", link_to=[first.id, "Nightly"])
            results.append(_stored(mem))
            mem.store.close()
    assert results[0] == results[1]
    nodes, edges = results[0]
    keep = "Keep the deploy scripts in the ops repository."
    assert [n[1] for n in nodes if n[0] == "entity"] == ["CI", "Nightly", "Ops"]
    assert sum(n[0] == "preference" for n in nodes) == 3  # the fourth merged into the first
    assert {(keep, "CI", "about"), ("Ops", keep, "about"), ("Ops", "Nightly", "about")} < set(edges)
    assert len(edges) == 8
