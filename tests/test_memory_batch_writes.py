"""Memory writes in batches: the merge rule by an index (the same answers as reading every
node), the store's batch path (``put_many``, ``link_many``, ``by_uris``: what the calls one
by one would do), an ingest written together equal to one written call by call, a write
rolled back leaving no trace in what later writes merge into, writer processes on one file
(nothing lost, one entity per name), and the write bench producing its figures."""

from __future__ import annotations

import multiprocessing as mp
import random
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ctxsdk.errors import InvalidArgument, NotFound
from ctxsdk.memory import Memory
from ctxsdk.memory._ingest import MergeIndex, merge_target
from ctxsdk.memory._model import Candidate, Edge, Node, Source
from ctxsdk.memory._sqlite import SQLiteStore
from ctxsdk.memory._store import BatchStore, MemoryStore
from ctxsdk.session import Session

WORDS = "run the tests first before you commit always use pnpm deploy on tuesday".split()


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 7)))


def _candidate(rng: random.Random, kind: str) -> Candidate:
    text = _text(rng)
    extra: dict[str, Any] = {}
    if kind == "entity" and rng.random() < 0.5:
        extra["scope"] = rng.choice(["a", "b"])
    name = rng.choice(WORDS).upper() if kind == "entity" and rng.random() < 0.5 else text
    return Candidate(type=kind, name=name, text=text, source=Source(via="user"), extra=extra)  # type: ignore[arg-type]


def _compared(node: Node | None) -> tuple[Any, ...] | None:
    """What the merge rule compares of a node (the index keeps the nodes other writers
    wrote with that alone: ``SQLiteStore.match_changes``)."""
    if node is None:
        return None
    return (node.id, node.type, node.name, node.text, node.aliases, node.status, node.extra)


def _new_node(rng: random.Random, cand: Candidate, kind: str) -> Node:
    """A node another writer puts for ``cand`` (an entity sometimes with an alias)."""
    aliases = (rng.choice(WORDS),) if kind == "entity" and rng.random() < 0.3 else ()
    return Node(
        id="",
        type=cand.type,
        name=cand.name,
        text=cand.text,
        aliases=aliases,
        extra=cand.extra,
    )


def test_the_merge_index_answers_as_the_rule_over_every_node(tmp_path: Path) -> None:
    rng = random.Random(7)
    store = SQLiteStore(tmp_path / "m.db")
    index = MergeIndex()
    kinds = ("preference", "decision", "entity")
    for step in range(400):
        kind = rng.choice(kinds)
        cand = _candidate(rng, kind)
        index.sync(store)
        pool = store.nodes(types=[kind])
        assert _compared(index.target(cand)) == _compared(merge_target(cand, pool)), (step, cand)
        name = cand.name if rng.random() < 0.7 else cand.name.lower()
        scan = next(
            (
                n
                for n in store.nodes(types=["entity"])
                if name.casefold().strip()
                in {n.name.casefold(), *(a.casefold() for a in n.aliases)}
            ),
            None,
        )
        assert _compared(index.entity(name)) == _compared(scan)
        roll = rng.random()
        if roll < 0.6:  # a new node (another writer: the index learns it from the store)
            store.put(_new_node(rng, cand, kind))
        elif roll < 0.75 and pool:  # archived, deleted, or its text changed
            victim = rng.choice(pool)
            what = rng.random()
            if what < 0.3:
                store.put(replace(victim, status="archived"))
            elif what < 0.6:
                store.delete(victim.id)
            else:
                store.put(replace(victim, text=_text(rng)))
    store.close()


def test_the_merge_index_answers_as_the_rule_with_nodes_kept_aside(tmp_path: Path) -> None:
    """Inside a write the index keeps what other writers wrote since its last sync aside
    (``sync(defer=True)``) instead of filing it: its answers are still the rule's over every
    node, whatever those writes were (new, archived, deleted, retyped, renamed, a text
    changed), with this writer's own writes filed among them (``put``), and once filed
    (``flush``, or after a few answers) it is the index a full read makes."""
    rng = random.Random(11)
    store = SQLiteStore(tmp_path / "m.db")
    index = MergeIndex()
    kinds = ("preference", "decision", "entity")
    kept_aside = scanned = 0
    said: list[tuple[str, str]] = [("deploy", "DEPLOY")]  # every text and name written

    def cand_node(cand: Candidate) -> Node:
        text = cand.text if rng.random() < 0.5 else f"{cand.text} {rng.choice(WORDS)}"
        return Node(id="", type=cand.type, name=cand.name, text=text, extra=cand.extra)

    for step in range(500):
        kind = rng.choice(kinds)
        cand = _candidate(rng, kind)
        if rng.random() < 0.6:  # a text or name some node has or had, or a part of it
            text, name = rng.choice(said)
            if rng.random() < 0.4:
                words = text.split()
                at = rng.randrange(len(words))
                text = " ".join(words[at : at + rng.randint(1, 3)])
            cand = replace(cand, text=text, name=name if kind == "entity" else text)
        if rng.random() < 0.5:  # the text search made before the write's lock
            index.sync(store)
            index.scan_ahead([cand])
            scanned += bool(index._scanned)
            for _ in range(rng.randint(0, 2)):  # another writer's write meanwhile
                store.put(replace(cand_node(cand), aliases=()))
        index.sync(store, defer=rng.random() < 0.8)
        synced = index.revision
        kept_aside += bool(index._aside)
        pool = store.nodes(types=[kind])
        assert _compared(index.target(cand)) == _compared(merge_target(cand, pool)), (step, cand)
        name = cand.name if rng.random() < 0.7 else f" {cand.name.lower()} "
        scan = min(
            (
                n
                for n in store.nodes(types=["entity"])
                if name.casefold().strip()
                in {n.name.casefold(), *(a.casefold() for a in n.aliases)}
            ),
            key=lambda n: n.id,
            default=None,
        )
        assert _compared(index.entity(name)) == _compared(scan), step
        for _ in range(rng.randint(0, 3)):
            everything = store.nodes(include_archived=True)
            roll = rng.random()
            if roll < 0.5 or not everything:  # a new node
                node = _new_node(rng, cand, kind)
            else:
                victim = rng.choice(everything)
                aside = [n for n in everything if n.id in index._aside]
                if aside and rng.random() < 0.5:  # a node kept aside, written again
                    victim = rng.choice(aside)
                what = rng.random()
                if what < 0.2:
                    store.delete(victim.id)
                    if rng.random() < 0.5:  # this writer's own delete
                        index.discard(victim.id)
                        index.committed(synced, store.committed_revision)
                    continue
                if what < 0.4:
                    node = replace(victim, status=rng.choice(["archived", "active"]))
                elif what < 0.55:
                    node = replace(victim, type=rng.choice(kinds))
                elif what < 0.7:
                    node = replace(victim, name=rng.choice(WORDS).upper())
                elif what < 0.85:
                    node = replace(victim, aliases=(rng.choice(WORDS),))
                else:
                    node = replace(victim, text=_text(rng))
            stored = store.put(node)
            said.extend((stored.text, a) for a in (stored.name, *stored.aliases))
            if rng.random() < 0.3:  # this writer's own write, filed at once; when it is
                index.put(stored)  # the first since the sync, it is not read back
                index.committed(synced, store.committed_revision)
        index.sync(store, defer=rng.random() < 0.8)  # the same text asked after the writes
        again = merge_target(cand, store.nodes(types=[kind]))
        assert _compared(index.target(cand)) == _compared(again), step
    assert kept_aside > 100  # the answers above were given with nodes aside, often
    assert scanned > 50  # and with the text search made ahead
    index.flush()
    full = MergeIndex()
    full.sync(store)
    for cand in [_candidate(rng, rng.choice(kinds)) for _ in range(200)]:
        assert _compared(index.target(cand)) == _compared(full.target(cand))
        assert _compared(index.entity(cand.name)) == _compared(full.entity(cand.name))
    store.close()


def _entity(name: str, **kw: Any) -> Node:
    return Node(id="", type="entity", name=name, **kw)


def test_put_many_is_put_one_by_one_in_one_transaction(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "m.db") as s:
        assert isinstance(s, BatchStore)
        before = s.revision()
        got = s.put_many([_entity(f"e{i}", text=f"t{i}") for i in range(1200)])
        assert s.revision() == before + 1  # one transaction
        assert [n.name for n in got] == [f"e{i}" for i in range(1200)]
        assert [n.id for n in got] == sorted(n.id for n in got)  # ids in the given order
        assert all(s.get(n.id) == n for n in got)
        assert s.by_uris([got[5].uri, got[700].uri, "ctx://entity/none"]) == {
            got[5].uri: got[5],
            got[700].uri: got[700],
        }
        # a node with an id is replaced, as put does
        again = s.put_many([replace(got[0], text="changed"), _entity("new")])
        assert again[0].id == got[0].id and s.get(got[0].id).text == "changed"  # type: ignore[union-attr]
        count = len(s.nodes())
        # a taken uri, or one given twice, is refused and nothing of the call is kept
        with pytest.raises(InvalidArgument, match="already node"):
            s.put_many([_entity("x"), _entity("y", uri=got[3].uri)])
        with pytest.raises(InvalidArgument, match="two new nodes"):
            s.put_many([_entity("x", uri="ctx://entity/u"), _entity("y", uri="ctx://entity/u")])
        assert len(s.nodes()) == count


def test_link_many_counts_new_edges_and_refuses_a_missing_end(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "m.db") as s:
        a, b, c = s.put_many([_entity(n) for n in "ABC"])
        s.link(Edge.weighted(a.id, b.id, "about"))
        edges = [
            Edge.weighted(a.id, b.id, "about"),  # there already
            Edge.weighted(a.id, c.id, "about"),
            Edge.weighted(a.id, c.id, "about"),  # given twice
            Edge.weighted(c.id, b.id, "decided"),
        ]
        assert s.link_many(edges) == 2
        assert {(e.src, e.dst, e.label) for e in s.edges()} == {
            (a.id, b.id, "about"),
            (a.id, c.id, "about"),
            (c.id, b.id, "decided"),
        }
        with pytest.raises(NotFound, match="no node 'nope'"):
            s.link_many([Edge.weighted(b.id, c.id, "about"), Edge.weighted(b.id, "nope", "about")])
        assert len(s.edges()) == 3  # nothing of the refused call


class _OneByOne:
    """A SQLite store seen without its batch methods: what a store without them gets."""

    def __init__(self, store: SQLiteStore) -> None:
        self._s = store

    def __getattr__(self, name: str) -> Any:
        if name in ("put_many", "link_many", "by_uris"):
            raise AttributeError(name)
        return getattr(self._s, name)

    @property
    def location(self) -> str:
        return self._s.location


def _chat(n: int, seed: int = 3) -> Session:
    rng = random.Random(seed)
    msgs = []
    for i in range(n):
        said = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12)))
        if i % 7 == 0:
            said = f"Always run the tests before you commit. We use pnpm in project {i % 3}."
        msgs.append({"role": "user" if i % 2 == 0 else "assistant", "content": said})
    return Session.from_messages(msgs)


def _shape(mem: Memory) -> tuple[list[tuple[Any, ...]], set[tuple[Any, ...]]]:
    nodes = mem.nodes(include_archived=True)
    key = {n.id: (n.type, n.name, n.text) for n in nodes}
    shaped = [
        (n.type, n.name, n.text, n.uri if n.type == "observation" else "", n.sources, n.status)
        for n in nodes
    ]
    edges = {(key[e.src], key[e.dst], e.label) for e in mem.store.edges()}
    return shaped, edges


def test_an_ingest_written_together_is_the_ingest_written_call_by_call(tmp_path: Path) -> None:
    session, other = _chat(300), _chat(120, seed=4)
    together = Memory(tmp_path / "a.db", embedder=None)
    raw = SQLiteStore(tmp_path / "b.db")
    plain = _OneByOne(raw)
    assert isinstance(plain, MemoryStore) and not isinstance(plain, BatchStore)
    one_by_one = Memory(plain, embedder=None)
    for mem in (together, one_by_one):
        first = mem.ingest(session)
        assert len(first.added) > 200 and first.edges > 0
        second = mem.ingest(other)  # its project facts merge into the first's
        assert second.merged
    assert _shape(together) == _shape(one_by_one)
    assert together.ingest(session).skipped
    together.close()
    one_by_one.close()
    raw.close()


def test_a_rolled_back_write_leaves_nothing_later_writes_merge_into(tmp_path: Path) -> None:
    mem = Memory(tmp_path / "m.db", embedder=None)
    mem.remember("Deploys go out on Tuesdays after the review.")
    with pytest.raises(RuntimeError), mem.store.batch():
        mem.remember("Always run the tests before you commit.", link_to="CI")
        raise RuntimeError("the caller's batch fails")
    node = mem.remember("Always run the tests before you commit.", link_to="CI")
    assert mem.store.get(node.id) == node
    assert [n.text for n in mem.nodes("preference")] == [
        "Deploys go out on Tuesdays after the review.",
        "Always run the tests before you commit.",
    ]
    assert [n.name for n in mem.nodes("entity")] == ["CI"]
    # a write that fails inside remember itself (an unknown label) keeps nothing either
    with pytest.raises(InvalidArgument):
        mem.remember("Use pnpm, never npm.", link_to="npm", label="no-such-label")
    assert mem.remember("Use pnpm, never npm, in every project.").text.startswith("Use pnpm")
    assert len(mem.nodes("preference")) == 3
    mem.close()


def test_a_remember_merges_into_what_another_process_wrote(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    mine, theirs = Memory(path, embedder=None), Memory(path, embedder=None)
    first = mine.remember("Always run the tests before you commit.")
    held = theirs.remember("Use pnpm, never npm.")
    theirs.archive(first.id)
    again = mine.remember("use PNPM,  never npm.", source=Source(via="user", quote="again"))
    assert again.id == held.id and len(again.sources) == 2  # merged into theirs
    assert [n.id for n in mine.nodes("preference")] == [held.id]
    assert mine.remember("Always run the tests before you commit.").id != first.id
    mine.close()
    theirs.close()


def _remember(path: str, tag: str, n: int) -> None:
    with Memory(path, embedder=None, timeout=60) as mem:
        for i in range(n):
            mem.remember(f"{tag} keeps rule {i} for the service.", link_to="SharedService")


def test_writer_processes_lose_nothing_and_make_one_entity_per_name(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    Memory(path, embedder=None).close()
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_remember, args=(path, f"P{i}", 25)) for i in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(300)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    with Memory(path, embedder=None) as mem:
        texts = {n.text for n in mem.nodes("preference")}
        assert texts == {
            f"P{i} keeps rule {j} for the service." for i in range(4) for j in range(25)
        }
        (shared,) = mem.nodes("entity")
        assert shared.name == "SharedService"
        assert len(mem.store.edges(dst=shared.id)) == 100


def _figures(names: Iterable[str], got: dict[str, float]) -> Sequence[str]:
    return [n for n in names if n not in got]


def test_the_write_bench_gives_its_figures_and_targets() -> None:
    from ctxsdk.bench._memory_engine import WRITE_TARGETS, writer_throughput

    got = writer_throughput(6, procs=(1, 4), rounds=1, batch_messages=150)
    assert not _figures([t.metric for t in WRITE_TARGETS], got)
    assert got["writers_1_lost"] == got["writers_4_lost"] == 0.0
    assert got["writer_errors"] == 0.0
    assert got["memory_batch_items"] > 150
    assert got["memory_batch_10k_over_executemany_ratio"] > 0
    assert got["memory_batch_10k_store_over_executemany_ratio"] > 0
    # the trials write the same items in all: one writer as many as the four together
    assert got["writers_items_per_trial"] == 24.0
    assert got["writers_1_cpu_ms_per_item"] > 0 and got["writers_4_cpu_ms_per_item"] > 0


def test_the_write_bench_splits_a_trials_items_evenly() -> None:
    from ctxsdk.bench._memory_engine import _shares

    for total in (0, 1, 7, 24, 101):
        for writers in (1, 3, 4, 16):
            shares = _shares(total, writers)
            assert len(shares) == writers and sum(shares) == total
            assert max(shares) - min(shares) <= 1


def test_a_writers_cpu_time_counts_its_other_threads() -> None:
    # a store's gate waiter is a thread of its own; the main thread's clock alone missed it
    import threading
    import time

    from ctxsdk.bench._memory_engine import _task_seconds

    if _task_seconds() is None:
        pytest.skip("no /proc/self/task here")
    burned: list[float] = []
    done, stop = threading.Event(), threading.Event()

    def burn() -> None:
        t0 = time.thread_time()
        while time.thread_time() - t0 < 0.2:
            pass
        burned.append(time.thread_time() - t0)
        done.set()
        stop.wait(30)  # alive when the second reading is taken

    before = _task_seconds()
    main0 = time.thread_time()
    worker = threading.Thread(target=burn)
    worker.start()
    done.wait(30)
    after = _task_seconds()
    main = time.thread_time() - main0
    stop.set()
    worker.join()
    assert before is not None and after is not None
    assert after[0] - before[0] >= burned[0] + main * 0.5 > 0.19


def test_a_writer_reports_the_cpu_of_its_trial_when_asked(tmp_path: Path) -> None:
    import queue
    import threading
    from functools import partial

    from ctxsdk.bench._memory_engine import writer_loop

    inbox: queue.Queue[Any] = queue.Queue()
    outbox: queue.Queue[Any] = queue.Queue()
    opener = partial(Memory, tmp_path / "m.db", embedder=None)
    for task in [(opener, 30, "A", True), "go", (opener, 2, "B"), "go", None]:
        inbox.put(task)
    thread = threading.Thread(target=writer_loop, args=(inbox, outbox))
    thread.start()
    thread.join(60)
    got = [outbox.get_nowait() for _ in range(4)]
    assert [m[0] for m in got] == ["ready", "done", "ready", "done"]
    assert len(got[1]) == 5 and got[1][3] == "" and got[1][4][0] > 0
    assert len(got[3]) == 4 and got[3][3] == ""  # the old message, as other benches read it
    with Memory(tmp_path / "m.db", embedder=None) as mem:
        assert len(mem.nodes("preference")) == 32


class _LockWatchingEmbedder:
    """Embeds a hashed bag of words, and notes whether its store held a write transaction
    at each call."""

    name = "lock-watching"
    dim = 16
    version = "1"

    def __init__(self) -> None:
        self.store: SQLiteStore | None = None
        self.in_lock: list[bool] = []
        self.texts: list[str] = []

    def _vec(self, text: str) -> list[float]:
        v = [0.0] * self.dim
        for w in text.lower().split():
            v[sum(w.encode()) % self.dim] += 1.0
        return v

    def embed(self, texts: list[str]) -> list[list[float]]:
        assert self.store is not None
        self.in_lock.append(self.store.in_batch)
        self.texts += texts
        return [self._vec(t) for t in texts]

    def embed_query(self, texts: list[str]) -> list[list[float]]:
        return [self._vec(t) for t in texts]


def test_a_write_embeds_before_it_takes_the_write_lock(tmp_path: Path) -> None:
    emb = _LockWatchingEmbedder()
    store = SQLiteStore(tmp_path / "m.db")
    emb.store = store
    mem = Memory(store, embedder=emb)
    report = mem.ingest(_chat(40))
    mem.remember("Deploys go out on Tuesdays after the review.")
    assert emb.texts and emb.in_lock and not any(emb.in_lock)
    # every node written got its vector in the same transaction, none embedded twice
    model = f"{emb.name}/{emb.dim}/{emb.version}"
    stored = store.vectors(model)
    assert set(report.added) <= set(stored)
    assert len(emb.texts) == len(set(emb.texts))
    before = len(emb.texts)
    assert mem.find("when do deploys go out?")[0].node.text.startswith("Deploys go out")
    assert len(emb.texts) == before  # the search embedded no node again
    mem.close()
    store.close()


def test_postgres_ingests_the_same_memory_and_reads_uris_together(
    postgres_dsn: str, tmp_path: Path
) -> None:
    from ctxsdk.memory import PostgresStore

    session, other = _chat(120), _chat(60, seed=4)
    pg = PostgresStore(postgres_dsn, namespace="batch")
    on_pg = Memory(pg, embedder=None)
    on_file = Memory(tmp_path / "m.db", embedder=None)
    for mem in (on_file, on_pg):
        assert mem.ingest(session).added
        assert mem.ingest(other).merged
    assert _shape(on_pg) == _shape(on_file)
    uris = [*[n.uri for n in on_pg.nodes(include_archived=True)][::3], "ctx://entity/none"]
    assert pg.by_uris(uris) == {u: n for u in uris if (n := pg.by_uri(u)) is not None}
    on_pg.close()
    on_file.close()
    pg.close()


def test_a_target_the_store_no_longer_holds_is_looked_up_again(tmp_path: Path) -> None:
    mem = Memory(tmp_path / "m.db", embedder=None)
    real = mem.remember("Always run the tests before you commit, every time.")
    index = mem._merge_index
    assert index is not None
    # what a write rolled back elsewhere could leave: a node the store does not hold,
    # equal to the next text (an equal text wins over the real node, which contains it)
    index.put(replace(real, id="n00000000000000000000", text="Always run the tests first."))
    got = mem.remember("always run the tests  first.")
    assert got.id != "n00000000000000000000" and mem.store.get(got.id) == got
    assert [n.id for n in mem.nodes("preference")] == [real.id, got.id]
    index.put(
        replace(real, id="n00000000000000000001", text="Always run the tests before you commit")
    )
    merged_in = mem.remember("Always run the tests before you commit")
    assert merged_in.id == real.id  # the real node holds that text: merged into it
    assert len(mem.nodes("preference")) == 2
    mem.close()


def test_a_node_prepared_before_the_lock_is_stored_as_put_stores_it(tmp_path: Path) -> None:
    """``prepared`` checks a new node as ``put`` does (the same refusals) and
    ``put_prepared`` stores the row ``put`` would (its id, uri and times set inside); a
    remember that builds its row ahead returns the node as the store holds it, whichever
    way it went in (new, merged, merged into by its own link target)."""
    with SQLiteStore(tmp_path / "m.db") as s:
        made = s.put_prepared(
            s.prepared(_entity("A", aliases=("a1",), text="t", extra={"k": [1, "ü"]}))
        )
        assert made.id and made.uri == f"ctx://entity/{made.id}" and made.created_at
        assert s.get(made.id) == made
        assert s.rows("nodes")[0]["extra"] == {"k": [1, "ü"]}
        bad = [
            replace(_entity("B"), type="nope"),
            _entity("B", extra={"x": object()}),
            _entity("B", text="a\ud800b"),
            _entity("B", uri="ctx://" + "u" * 5000),
        ]
        for node in bad:
            with pytest.raises(InvalidArgument) as by_put:
                s.put(node)
            with pytest.raises(InvalidArgument) as by_prepared:
                s.prepared(node)
            assert str(by_prepared.value) == str(by_put.value)
        with pytest.raises(InvalidArgument, match="no id"):
            s.prepared(made)
        taken = s.prepared(_entity("C", uri=made.uri))
        with pytest.raises(InvalidArgument, match=f"already node '{made.id}'"):
            s.put_prepared(taken)
        assert [n.id for n in s.nodes()] == [made.id]
    mem = Memory(tmp_path / "r.db", embedder=None)
    calls: list[dict[str, Any]] = [
        {"text": "Deploy from main only.", "link_to": "CI"},
        {"text": "Deploy from main only.", "link_to": ["CI", "Ops"]},  # merged
        {"text": "Deploy from main only, on Fridays too", "link_to": "CI"},  # merged
        {"text": "Kafka", "type": "entity", "link_to": "kafka"},  # itself
        {"text": "Kafka broker", "type": "entity", "name": "Kafka", "link_to": "KAFKA"},
        {"text": "use tabs ü", "until": "until friday", "name": "tabs"},
        {"text": "seen once", "type": "observation"},
    ]
    for call in calls:
        node = mem.remember(**call)
        assert node == mem.store.get(node.id), call
    mem.close()
