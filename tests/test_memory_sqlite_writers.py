"""What the SQLite store does for several writers on one file (real files, real processes):
the writers' gate, an exclusive ``flock`` on ``<file>-writer`` taken before ``BEGIN
IMMEDIATE`` and released after the commit; and ``match_changes``, the change feed a writer
reads other writers' nodes from inside its lock."""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ctxsdk.errors import CorruptStore, LockHeld
from ctxsdk.memory import Memory, SQLiteStore
from ctxsdk.memory._ingest import MergeIndex
from ctxsdk.memory._model import Candidate, Node, Source
from ctxsdk.memory._rows import REVISION_KEY
from ctxsdk.memory._sqlite import _GATE


def _node(name: str) -> Node:
    return Node(id="", type="preference", name=name, text=name)


def _gate_of(path: Path) -> Path:
    return Path(f"{path}{_GATE}")


def test_a_store_that_only_reads_makes_no_gate_file(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with Memory(path, embedder=None) as mem:
        mem.remember("Run the linters before every push.")
    gate = _gate_of(path)
    assert gate.is_file() and gate.stat().st_size == 0
    gate.unlink()
    with SQLiteStore(path) as store, Memory(path, embedder=None) as mem:
        assert [n.text for n in store.nodes(types=["preference"])] == [
            "Run the linters before every push."
        ]
        assert mem.find("linters") is not None
        assert store.revision() >= 1
    assert not gate.exists()


def test_two_stores_in_one_process_exclude_each_other(tmp_path: Path) -> None:
    """The lock is the store object's own open file: a second store in the same process
    waits for the first one's batch, and gives up with LockHeld after its timeout."""
    path = tmp_path / "m.db"
    first, second = SQLiteStore(path), SQLiteStore(path, timeout=0.2)
    with first.batch():
        first.put(_node("held"))
        began = time.monotonic()
        with pytest.raises(LockHeld, match="timeout=0.2s"):
            second.put(_node("refused"))
        assert time.monotonic() - began >= 0.15
    assert [n.name for n in second.nodes()] == ["held"]
    second.put(_node("after"))
    assert sorted(n.name for n in first.nodes()) == ["after", "held"]
    first.close()
    second.close()


def test_a_waiting_store_writes_once_the_other_commits(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    holder, waiter = SQLiteStore(path), SQLiteStore(path)
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with holder.batch():
            holder.put(_node("held"))
            held.set()
            release.wait(10)

    t = threading.Thread(target=hold)
    t.start()
    assert held.wait(10)
    threading.Timer(0.2, release.set).start()
    began = time.monotonic()
    waiter.put(_node("after"))
    assert time.monotonic() - began >= 0.15
    t.join(10)
    assert sorted(n.name for n in waiter.nodes()) == ["after", "held"]
    holder.close()
    waiter.close()


def test_a_wait_given_up_leaves_the_gate_free(tmp_path: Path) -> None:
    """A write that gave up waiting (LockHeld) leaves its waiting thread blocked on the
    gate; once the holder commits, that thread lets the gate go again, so neither a third
    store nor the one that gave up is kept out, and the next wait is granted."""
    path = tmp_path / "m.db"
    holder, quitter, third = SQLiteStore(path), SQLiteStore(path, timeout=0.2), SQLiteStore(path)
    with holder.batch():
        holder.put(_node("held"))
        with pytest.raises(LockHeld):
            quitter.put(_node("refused"))
    third.put(_node("third"))
    quitter.put(_node("again"))
    with third.batch():  # the quitter waits (its thread is granted the gate) and writes
        done = threading.Event()

        def write() -> None:
            quitter.put(_node("waited"))
            done.set()

        t = threading.Thread(target=write)
        t.start()
        assert not done.wait(0.05)
    t.join(10)
    assert done.is_set()
    assert sorted(n.name for n in holder.nodes()) == ["again", "held", "third", "waited"]
    for store in (holder, quitter, third):
        store.close()


_HOLD_GATE = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(60)
"""


def test_a_gate_held_by_a_killed_process_is_free_again(tmp_path: Path) -> None:
    """Another process holds the gate: a write waits (LockHeld after its timeout, nothing
    written) and goes in once that process is killed, as the kernel drops its lock."""
    path = tmp_path / "m.db"
    SQLiteStore(path).close()
    child = subprocess.Popen(
        [sys.executable, "-c", _HOLD_GATE, str(_gate_of(path))],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        with SQLiteStore(path, timeout=0.1) as store:
            with pytest.raises(LockHeld, match=str(path)):
                store.put(_node("refused"))
            assert store.nodes() == []
        threading.Timer(0.3, child.send_signal, (signal.SIGKILL,)).start()
        with SQLiteStore(path, timeout=30) as store:
            began = time.monotonic()
            store.put(_node("after"))
            assert time.monotonic() - began >= 0.2
            assert [n.name for n in store.nodes()] == ["after"]
    finally:
        child.kill()
        child.wait(10)


def test_without_a_gate_writes_go_on_under_sqlites_lock(tmp_path: Path) -> None:
    """Something that is not a regular file where the gate would be (here a directory):
    no gate, and the store's writes are ordered by SQLite's lock alone."""
    path = tmp_path / "m.db"
    _gate_of(path).mkdir()
    with SQLiteStore(path) as a, SQLiteStore(path) as b:
        a.put(_node("a"))
        b.put(_node("b"))
        assert a._gate is None and b._gate is None
        assert sorted(n.name for n in a.nodes()) == ["a", "b"]
    assert _gate_of(path).is_dir()


def test_a_forked_child_takes_a_gate_of_its_own(tmp_path: Path) -> None:
    """A child forked after its parent's store opened the gate does not share the
    parent's lock through the descriptor it inherited: while the parent holds the gate,
    the child's write through the same store object waits for the gate and gives up
    with LockHeld; the parent's gate is still its own (and still excludes) afterwards."""
    path = tmp_path / "m.db"
    store = SQLiteStore(path, timeout=0.3)
    store.put(_node("before"))  # the gate is open
    go_r, go_w = os.pipe()
    got_r, got_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        answer = b"wrote"
        try:
            os.read(go_r, 1)
            try:
                store.put(_node("child"))
            except LockHeld as exc:
                answer = b"gate" if _GATE in str(exc) else b"sqlite"
            os.write(got_w, answer)
        finally:
            os._exit(0)
    with store.batch():
        store.put(_node("parent"))
        os.write(go_w, b"x")
        got = os.read(got_r, 16)
        os.waitpid(pid, 0)
    for fd in (go_r, go_w, got_r, got_w):
        os.close(fd)
    assert got == b"gate", got
    assert sorted(n.name for n in store.nodes()) == ["before", "parent"]
    with store.batch():
        store.put(_node("after"))
        other = os.open(_gate_of(path), os.O_RDONLY)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(other)
    store.close()


_FORK_THEN_HOLD = """
import fcntl, os, sys, threading, time
from ctxsdk.memory import SQLiteStore
from ctxsdk.memory._model import Node
path, gate = sys.argv[1], sys.argv[2]
store = SQLiteStore(path, timeout=30)
store.put(Node(id="", type="preference", name="first", text="first"))  # the gate is open
other = os.open(gate, os.O_RDONLY)
fcntl.flock(other, fcntl.LOCK_EX)  # held elsewhere: the next write waits (its waiter thread)
threading.Timer(0.2, fcntl.flock, (other, fcntl.LOCK_UN)).start()
store.put(Node(id="", type="preference", name="waited", text="waited"))
kid = os.fork()
if kid == 0:  # lives on, never writing
    time.sleep(60)
    os._exit(0)
with store.batch():
    store.put(Node(id="", type="preference", name="dies", text="dies"))
    print(kid, flush=True)
    time.sleep(60)
"""


def test_a_holder_that_dies_frees_the_gate_though_its_forked_child_lives(
    tmp_path: Path,
) -> None:
    """A process forks a child (which lives on and never writes) and then dies holding the
    gate: the child closed its copies of the gate's descriptors when it was forked, so the
    kernel drops the lock with the holder, and the next writer goes in at once."""
    path = tmp_path / "m.db"
    SQLiteStore(path).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", _FORK_THEN_HOLD, str(path), str(_gate_of(path))],
        stdout=subprocess.PIPE,
        text=True,
    )
    kid = 0
    try:
        assert holder.stdout is not None
        kid = int(holder.stdout.readline())
        holder.kill()
        holder.wait(10)
        os.kill(kid, 0)  # the child still lives
        with SQLiteStore(path, timeout=5) as store:
            store.put(_node("after"))
            assert sorted(n.name for n in store.nodes()) == ["after", "first", "waited"]
    finally:
        holder.kill()
        if kid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(kid, signal.SIGKILL)


_COMPARED = ("id", "type", "name", "text", "aliases", "status", "extra")


def test_match_changes_are_changes_with_what_the_merge_rule_compares(tmp_path: Path) -> None:
    """The same nodes and deletions as ``changes``, each with the same compared fields
    (aliases and extra decoded, archived ones and every type included) and nothing else."""
    path = tmp_path / "m.db"
    with SQLiteStore(path) as store:
        a = store.put(Node(id="", type="entity", name="Deploys", aliases=("ship", "release")))
        since = store.revision()
        b = store.put(
            Node(
                id="",
                type="preference",
                name="tests",
                text="Run the tests before you merge.",
                sources=(Source(via="user", quote="Run the tests"),),
                extra={"scope": "repo", "n": [1, 2]},
            )
        )
        store.put(Node(id="", type="episode", name="e", text="an episode"))
        store.put(Node(**{**{f: getattr(a, f) for f in _COMPARED}, "status": "archived"}))
        gone = store.put(Node(id="", type="decision", name="d", text="gone soon"))
        store.delete(gone.id)
        for at in (-1, since, store.revision()):
            full = store.changes(at)
            revision, light = store.match_changes(at)
            assert revision == store.revision()
            if full is None:
                assert light is None
                continue
            assert light is not None and light.gone == full.gone
            assert [[getattr(n, f) for f in _COMPARED] for n in light.nodes] == [
                [getattr(n, f) for f in _COMPARED] for n in full.nodes
            ]
            assert all(n.sources == () and n.uri == "" for n in light.nodes)
        _, light = store.match_changes(since)
        assert light is not None and b.id in {n.id for n in light.nodes}
        assert gone.id in light.gone
        assert store.match_changes(store.revision())[1] == ([], [])


def test_a_merge_index_kept_by_match_changes_finds_what_a_fresh_one_finds(
    tmp_path: Path,
) -> None:
    path = tmp_path / "m.db"
    with SQLiteStore(path) as mine, SQLiteStore(path) as theirs:
        kept = MergeIndex()
        kept.sync(mine)
        theirs.put(Node(id="", type="entity", name="Billing", aliases=("invoices",)))
        p = theirs.put(Node(id="", type="preference", name="p", text="Deploy on Tuesdays only."))
        kept.sync(mine)
        theirs.put(Node(**{**{f: getattr(p, f) for f in _COMPARED}, "status": "archived"}))
        theirs.put(Node(id="", type="preference", name="q", text="Tag every release on main."))
        kept.sync(mine)
        fresh = MergeIndex()
        fresh.sync(mine)
        asks = [
            Candidate(type="preference", name="x", text=t, source=Source(via="user", quote=t))
            for t in ("Deploy on Tuesdays only.", "Tag every release on main.", "release on")
        ]
        for cand in asks:
            got, want = kept.target(cand), fresh.target(cand)
            assert (got and got.id) == (want and want.id), cand.text
        assert kept.target(asks[1]) is not None and kept.target(asks[0]) is None
        for name in ("Billing", "invoices", "nobody"):
            got, want = kept.entity(name), fresh.entity(name)
            assert (got and got.id) == (want and want.id), name
        assert kept.entity("INVOICES") is not None


def test_a_damaged_value_in_the_match_changes_is_named(tmp_path: Path) -> None:
    """A compared column that is not what this store writes is read as ``get`` reads it:
    ``CorruptStore`` naming the node and the column, whichever column it is."""
    path = tmp_path / "m.db"
    with SQLiteStore(path) as store:
        since = store.revision()
        node = store.put(Node(id="", type="entity", name="Billing"))
        db = store._conn()
        db.execute('UPDATE nodes SET aliases = \'{"not": "a list"}\' WHERE id = ?', (node.id,))
        with pytest.raises(CorruptStore, match=f"node '{node.id}', column aliases"):
            store.match_changes(since)
        db.execute("UPDATE nodes SET aliases = '[]', status = 'gone' WHERE id = ?", (node.id,))
        with pytest.raises(CorruptStore, match=f"node '{node.id}', column status"):
            store.match_changes(since)
        db.execute("UPDATE nodes SET status = 'active' WHERE id = ?", (node.id,))
        db.execute("UPDATE meta SET value = 'seven' WHERE key = ?", (REVISION_KEY,))
        with pytest.raises(CorruptStore, match="not a write count"):
            store.match_changes(since)


def test_match_changes_of_a_file_nothing_was_written_to(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "m.db") as store:
        assert store.match_changes(0) == (store.revision(), ([], []))
