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


def test_an_entity_changed_after_the_check_ahead_is_read_again(tmp_path: Path) -> None:
    """Another connection archives the entity a remember links to between the check
    before the lock and the lock: the change feed gives the index a newer node, so the
    entity is looked up again inside the lock, and a new one is made rather than an edge
    to the archived one."""
    path = tmp_path / "m.db"
    mine, theirs = Memory(path, embedder=None), Memory(path, embedder=None)
    mine.remember("Always run the linters before you push a branch.", link_to="CI")
    (ci,) = mine.nodes("entity")
    real = mine._check_ahead

    def check_then_archive(names):  # type: ignore[no-untyped-def]
        out = real(names)
        assert ci.id in out  # checked before the lock
        theirs.archive(ci.id)
        return out

    mine._check_ahead = check_then_archive  # type: ignore[method-assign]
    node = mine.remember("Deploys wait for the nightly integration run.", link_to="CI")
    (now,) = mine.nodes("entity")
    assert now.id != ci.id and now.name == "CI"
    assert [e.dst for e in mine.store.edges(src=node.id)] == [now.id]
    mine._check_ahead = real  # type: ignore[method-assign]
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
