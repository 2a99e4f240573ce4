"""A SQLite memory's saved index (``<file>-index``, ``_saved_index``): the first find of a
new process loads it instead of reading and indexing every node, catches it up with what
other processes wrote since, and ranks exactly as a memory read whole. A missing, stale,
torn, altered or foreign file is ignored (and written again); a failed write loses
nothing. Real files and processes throughout."""

from __future__ import annotations

import copy
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ctxsdk.bench._fit import _locomo_path, load_locomo
from ctxsdk.memory import Memory
from ctxsdk.memory._lazy_nodes import LazyNodes
from ctxsdk.memory._saved_index import read, sidecar, write
from ctxsdk.memory._scrub import RULES_KEY
from ctxsdk.session import Retriever, Session

needs_locomo = pytest.mark.skipif(_locomo_path() is None, reason="LoCoMo data is not available")

_QUERIES = [
    "when did Caroline go to the LGBTQ support group",
    "what did Melanie paint",
    "pottery class with the kids",
    "what is Caroline's identity",
    "camping trip in the mountains",
    "adoption agencies",
    "Session 3",
    "what books does Melanie like",
]


def _answers(mem: Memory) -> list[str]:
    return [json.dumps(mem.find(q, top_k=10).to_json()) for q in _QUERIES]


def _locomo_session(i: int, suffix: str = "") -> Session:
    data = copy.deepcopy(load_locomo()[i])
    data["sample_id"] += suffix
    return Session.from_locomo([data], 0)


def _run(code: str, *args: str) -> str:
    """Run ``code`` in a new Python process (``sys.argv[1:]`` = ``args``); its stdout."""
    got = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert got.returncode == 0, got.stderr
    return got.stdout


_FIND_IN_A_NEW_PROCESS = """
    import json, sys
    from ctxsdk.memory import Memory
    from ctxsdk.memory._lazy_nodes import LazyNodes
    queries = json.loads(sys.argv[2])
    with Memory(sys.argv[1], embedder=None) as m:
        got = [json.dumps(m.find(q, top_k=10).to_json()) for q in queries]
        print(json.dumps({"loaded": isinstance(m._nodes, LazyNodes), "answers": got}))
"""


def _find_elsewhere(path: Path) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(_run(_FIND_IN_A_NEW_PROCESS, str(path), json.dumps(_QUERIES)))
    return out


def _read_whole(path: Path, tmp: Path) -> list[str]:
    """The answers of a memory read whole: a copy of the file without its saved index."""
    tmp.mkdir()
    other = tmp / "copy.db"
    shutil.copy(path, other)
    with Memory(other, embedder=None) as mem:
        got = _answers(mem)
        assert not isinstance(mem._nodes, LazyNodes)
    return got


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A memory of two LoCoMo conversations, ingested, closed, without a saved index."""
    if _locomo_path() is None:
        pytest.skip("LoCoMo data is not available")
    path = tmp_path_factory.mktemp("ingested") / "memory.db"
    with Memory(path, embedder=None) as mem:
        for i in range(2):
            mem.ingest(_locomo_session(i))
    Path(str(path) + "-index").unlink(missing_ok=True)
    return path


def _fresh(ingested: Path, tmp_path: Path) -> Path:
    path = tmp_path / "memory.db"
    shutil.copy(ingested, path)
    return path


@needs_locomo
def test_a_new_process_loads_the_saved_index_and_ranks_as_a_full_read(
    ingested: Path, tmp_path: Path
) -> None:
    path = _fresh(ingested, tmp_path)
    with Memory(path, embedder=None) as mem:
        whole = _answers(mem)  # the first find read every node and saved the index
    assert Path(str(path) + "-index").is_file()
    got = _find_elsewhere(path)
    assert got["loaded"]
    assert got["answers"] == whole


@needs_locomo
def test_writes_and_deletes_by_another_process_are_caught_up(
    ingested: Path, tmp_path: Path
) -> None:
    path = _fresh(ingested, tmp_path)
    with Memory(path, embedder=None) as mem:
        mem.find("warm")
    saved_at = read(Path(str(path) + "-index"))
    assert saved_at is not None
    _run(
        """
        import copy, sys
        from ctxsdk.bench._fit import load_locomo
        from ctxsdk.memory import Memory
        from ctxsdk.session import Session
        data = copy.deepcopy(load_locomo()[2])
        with Memory(sys.argv[1], embedder=None) as m:
            m.ingest(Session.from_locomo([data], 0))
            obs = m.store.nodes(types=["observation"])
            for n in obs[5:200:40]:
                m.delete(n.id)
        """,
        str(path),
    )
    got = _find_elsewhere(path)
    assert got["loaded"]
    assert got["answers"] == _read_whole(path, tmp_path / "whole")


@needs_locomo
def test_edits_in_this_process_after_a_load_rank_as_a_full_read(
    ingested: Path, tmp_path: Path
) -> None:
    path = _fresh(ingested, tmp_path)
    with Memory(path, embedder=None) as mem:
        mem.find("warm")
    with Memory(path, embedder=None) as mem:
        mem.find("warm")
        assert isinstance(mem._nodes, LazyNodes)
        obs = mem.store.nodes(types=["observation"])
        mem.edit(obs[10].id, text="Caroline went to a pottery class with the kids")
        mem.delete(obs[20].id)
        mem.remember("Melanie paints sunsets by the lake", type="preference")
        mine = _answers(mem)
    assert mine == _read_whole(path, tmp_path / "whole")


@needs_locomo
@pytest.mark.parametrize("damage", ["truncated", "flipped", "garbage", "empty", "foreign"])
def test_a_damaged_or_foreign_index_is_ignored_and_written_again(
    ingested: Path, tmp_path: Path, damage: str
) -> None:
    path = _fresh(ingested, tmp_path)
    with Memory(path, embedder=None) as mem:
        whole = _answers(mem)
    index = Path(str(path) + "-index")
    blob = index.read_bytes()
    if damage == "truncated":
        index.write_bytes(blob[: len(blob) // 2])
    elif damage == "flipped":
        at = len(blob) // 3
        index.write_bytes(blob[:at] + bytes([blob[at] ^ 1]) + blob[at + 1 :])
    elif damage == "garbage":
        index.write_bytes(b"\x00not an index" * 100)
    elif damage == "empty":
        index.write_bytes(b"")
    else:  # another memory's index, whole and valid, at a revision this file may reach
        other = tmp_path / "other.db"
        with Memory(other, embedder=None) as mem:
            mem.ingest(_locomo_session(3))
            mem.find("warm")
        shutil.copy(Path(str(other) + "-index"), index)
    got = _find_elsewhere(path)
    assert not got["loaded"]
    assert got["answers"] == whole
    assert _find_elsewhere(path)["loaded"]  # the full read saved a good one


@needs_locomo
@pytest.mark.parametrize("key", ["prev", "p_slots", "anchors", "shape_slot", "section"])
def test_an_index_rewritten_whole_with_numbers_out_of_range_is_ignored(
    ingested: Path, tmp_path: Path, key: str
) -> None:
    """A file whose digest is right but whose numbers point outside it (written by hand,
    not by a torn write) is refused, not trusted into a search that would fail."""
    path = _fresh(ingested, tmp_path)
    with Memory(path, embedder=None) as mem:
        whole = _answers(mem)
    index = Path(str(path) + "-index")
    saved = read(index)
    assert saved is not None
    arrays = dict(saved.arrays)
    value = len(saved.strings["ids"]) + 7 if key != "anchors" else -3
    bad = arrays[key].astype(np.int64)
    if len(bad):
        bad[len(bad) // 2] = value
    else:  # (a memory without entities has no anchors)
        bad = np.asarray([value], dtype=np.int64)
    arrays[key] = bad
    header = {k: v for k, v in saved.header.items() if k != "format"}
    assert write(index, header, arrays, saved.strings)
    got = _find_elsewhere(path)
    assert not got["loaded"]
    assert got["answers"] == whole


@needs_locomo
def test_an_index_older_than_many_writes_is_rebuilt(ingested: Path, tmp_path: Path) -> None:
    """So many nodes written since the index was saved that a full read is cheaper."""
    path = _fresh(ingested, tmp_path)
    with Memory(path, embedder=None) as mem:
        mem.find("warm")
    old = Path(str(path) + "-index").read_bytes()
    with Memory(path, embedder=None) as mem:
        for i in range(3, 5):
            mem.ingest(_locomo_session(i))
        mem.find("warm")  # loaded and caught up in this process
    Path(str(path) + "-index").write_bytes(old)  # as if that save had not been made
    got = _find_elsewhere(path)
    assert not got["loaded"]
    assert got["answers"] == _read_whole(path, tmp_path / "whole")


@needs_locomo
def test_a_failed_save_loses_nothing(ingested: Path, tmp_path: Path) -> None:
    """The index cannot be written (a directory holds its name): find answers as it
    would, the directory is left as it was, and no temporary file is left behind."""
    path = _fresh(ingested, tmp_path)
    blocker = Path(str(path) + "-index")
    blocker.mkdir()
    (blocker / "keep").write_text("mine")
    got = _find_elsewhere(path)
    assert not got["loaded"]
    assert got["answers"] == _read_whole(path, tmp_path / "whole")
    assert [p.name for p in blocker.iterdir()] == ["keep"]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@needs_locomo
def test_processes_racing_to_save_leave_one_whole_index(ingested: Path, tmp_path: Path) -> None:
    path = _fresh(ingested, tmp_path)
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                textwrap.dedent(_FIND_IN_A_NEW_PROCESS),
                str(path),
                json.dumps(_QUERIES),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e for _, e in outs]
    answers = [json.loads(o)["answers"] for o, _ in outs]
    assert answers[0] == answers[1] == answers[2]
    assert read(Path(str(path) + "-index")) is not None
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    got = _find_elsewhere(path)
    assert got["loaded"] and got["answers"] == answers[0]


def test_an_in_memory_store_has_no_saved_index() -> None:
    with Memory(None, embedder=None) as mem:
        mem.remember("the lighthouse keeper logged a storm", type="observation")
        assert mem.find("lighthouse").hits
        assert sidecar(mem.store) is None


def test_a_scrubbed_memory_is_read_whole_again(tmp_path: Path) -> None:
    """After ``scrub`` (the rows rewritten) a memory that had loaded its index reads every
    node again and ranks as a new reader does."""
    path = tmp_path / "memory.db"
    words = "hail sleet fog wind rain snow ice thunder gale mist spray frost".split()
    with Memory(path, embedder=None) as mem:
        for i in range(80):
            mem.remember(f"the keeper logged {words[i % 12]} on day {i}", type="observation")
        mem.find("keeper")
    with Memory(path, embedder=None) as mem:
        mem.find("keeper")
        assert isinstance(mem._nodes, LazyNodes)
        mem.scrub()
        after = [json.dumps(mem.find(q).to_json()) for q in ("fog", "day 7", "keeper")]
        assert not isinstance(mem._nodes, LazyNodes)
    with Memory(path, embedder=None) as again:
        assert [json.dumps(again.find(q).to_json()) for q in ("fog", "day 7", "keeper")] == after


_SECRET = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _with_an_unscrubbed_secret(path: Path) -> None:
    """A memory whose file records no redaction rules (an old ctxsdk's) and holds a token
    in one node's text, as scrub finds such files."""
    with Memory(path, embedder=None) as mem:
        for i in range(40):
            mem.remember(f"the keeper logged rain on day {i}", type="observation")
    raw = sqlite3.connect(path)
    with raw:
        raw.execute(
            "UPDATE nodes SET text = ? WHERE text = ?",
            (f"the keeper logged rain on day 3 with {_SECRET}", "the keeper logged rain on day 3"),
        )
        raw.execute("DELETE FROM meta WHERE key = ?", (RULES_KEY,))
    raw.close()
    Path(str(path) + "-index").unlink(missing_ok=True)


def test_an_index_read_before_a_scrub_in_another_memory_is_not_left(tmp_path: Path) -> None:
    """One memory reads every node (the token among them); another scrubs the file before
    the first saves its index: the save is removed again, so no index of the old texts is
    left beside the scrubbed file."""
    path = tmp_path / "memory.db"
    _with_an_unscrubbed_secret(path)
    with Memory(path, embedder=None) as reader, Memory(path, embedder=None) as scrubber:
        read_changes = reader._read_changes

        def then_scrub(*args: Any) -> Any:
            got = read_changes(*args)
            assert scrubber.scrub().changes  # the token is taken out of the file
            return got

        reader._read_changes = then_scrub  # type: ignore[method-assign]
        reader.find("keeper")
    index = Path(str(path) + "-index")
    assert not index.exists() or _SECRET.encode() not in index.read_bytes()
    assert _SECRET.encode() not in path.read_bytes()


def test_an_index_saved_before_a_scrub_is_not_loaded(tmp_path: Path) -> None:
    """An index saved before a scrub (put back beside the file after it): a new memory
    does not load it (its stamp is not the file's redaction record) and answers from the
    scrubbed texts."""
    path = tmp_path / "memory.db"
    _with_an_unscrubbed_secret(path)
    with Memory(path, embedder=None) as mem:
        assert any(_SECRET in h.node.text for h in mem.find("day 3 keeper", top_k=5))
    index = Path(str(path) + "-index")
    old = index.read_bytes()
    assert _SECRET.encode() in old
    with Memory(path, embedder=None) as mem:
        mem.scrub()
    assert not index.exists()
    index.write_bytes(old)
    with Memory(path, embedder=None) as mem:
        hits = mem.find("day 3 keeper", top_k=5)
        assert not isinstance(mem._nodes, LazyNodes)
        assert hits and not any(_SECRET in h.node.text for h in hits)
    assert _SECRET.encode() not in index.read_bytes()  # saved again, from the new texts


def _filled(n: int) -> Retriever:
    r = Retriever(feedback=0)
    words = "amber basil cedar delta ember fjord grove harbor".split()
    r.add_many(
        (
            f"d{i:03}",
            f"{words[i % 8]} {words[(i * 3) % 8]} note {i} of the {words[(i * 5) % 8]} log",
            f"g{i % 4}" if i % 5 else None,
            float(i // 4) if i % 3 else None,
            (f"g{i % 4}", i // 10) if i % 2 else None,
            None,
            i % 7 != 0,
        )
        for i in range(n)
    )
    return r


def test_a_retrievers_lexical_state_loads_as_the_same_index() -> None:
    r = _filled(200)
    state = r.lexical_state()
    assert state is not None
    again = Retriever(feedback=0)
    again.load_lexical_state(state.arrays, state.strings)
    for q in ["amber note", "fjord log 17", "harbor basil", "note 150 of the grove"]:
        assert [(h.doc_id, h.score) for h in again.search(q, 20)] == [
            (h.doc_id, h.score) for h in r.search(q, 20)
        ]
    for doc_id in ["d007", "d100"]:
        assert again.neighbours(doc_id) == r.neighbours(doc_id)
    # a loaded index (its postings still in the saved arrays) saves the same state again
    resaved = again.lexical_state()
    assert resaved is not None and resaved.strings == state.strings
    assert sorted(resaved.arrays) == sorted(state.arrays)
    assert all((resaved.arrays[k] == state.arrays[k]).all() for k in state.arrays)
    # what it does next is what the original does
    for x in (r, again):
        x.remove("d010")
        x.add("d999", "amber harbor note", group="g1", order=3.5, section=("g1", 4))
    assert [(h.doc_id, h.score) for h in again.search("amber harbor", 20)] == [
        (h.doc_id, h.score) for h in r.search("amber harbor", 20)
    ]


def test_a_retriever_with_a_removed_document_is_not_saved() -> None:
    r = _filled(100)
    r.remove("d003")
    assert r.lexical_state() is None


def _a_small_memory(path: Path) -> None:
    """A memory of 40 observations, found once (which saves its index); each says
    something of its own (copies of one template that differ only in numbers are not
    shown as hits)."""
    words = "hail sleet fog wind rain snow ice thunder gale mist spray frost".split()
    places = "pier dunes harbour cliffs beacon jetty reef".split()
    with Memory(path, embedder=None) as mem:
        for i in range(40):
            text = f"the keeper logged {words[i % 12]} by the {places[i % 7]} on day {i}"
            mem.remember(text, type="observation")
        assert mem.find("fog").hits


def _temp_files(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if p.name.endswith(".tmp"))


def test_a_crashed_saves_temp_file_is_removed_by_the_next_save(tmp_path: Path) -> None:
    """A save killed between writing its temp file and renaming it leaves the temp file
    (as big as the index); the next save removes it once it is old enough that no save can
    still be writing it, and leaves a fresh one (another process's save in progress)."""
    path = tmp_path / "memory.db"
    _a_small_memory(path)
    index = Path(str(path) + "-index")
    index.unlink(missing_ok=True)
    crashed = tmp_path / "memory.db-index.abc123.tmp"
    crashed.write_bytes(b"half an index")
    old = time.time() - 3600
    os.utime(crashed, (old, old))
    writing = tmp_path / "memory.db-index.def456.tmp"
    writing.write_bytes(b"a save in progress")
    unrelated = tmp_path / "notes.txt.x.tmp"
    unrelated.write_bytes(b"not ours")
    with Memory(path, embedder=None) as mem:
        assert mem.find("fog").hits
    assert read(index) is not None
    assert _temp_files(path) == ["memory.db-index.def456.tmp", "notes.txt.x.tmp"]


def test_scrub_removes_the_temp_files_of_saves_with_the_index(tmp_path: Path) -> None:
    """Scrub deletes the saved index (it holds the terms of the texts scrub rewrites) and
    every temp file a save left beside it, of any age: they hold the same terms."""
    path = tmp_path / "memory.db"
    _a_small_memory(path)
    index = Path(str(path) + "-index")
    assert read(index) is not None
    leftover = tmp_path / "memory.db-index.abc123.tmp"
    shutil.copy(index, leftover)
    with Memory(path, embedder=None) as mem:
        mem.scrub()
    assert not index.exists()
    assert _temp_files(path) == []
