"""``remember`` by several writers on one file, taking turns: each merges into what the
others wrote since its last call (its merge index reads them inside the write lock only),
and the stored result is the one a single writer makes with the same calls. The door's
memo of ``remember`` answers a repeated text as the door does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxsdk.errors import MemoryRefused
from ctxsdk.memory import Memory

from .test_memory_ingest import KEY


def _calls() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for k in range(24):
        j = (k * 7) % 11
        out.append({"text": f"Always use tabs in project {j % 5} files", "link_to": f"P{j % 5}"})
        if k % 3 == 0:
            out.append(
                {
                    "text": f"always use TABS  in project {j % 5} files and docs",
                    "link_to": [f"P{j % 5}", "Team"],
                }
            )
        if k % 4 == 1:
            out.append({"text": f"We chose postgres {j % 3} for storage", "type": "decision"})
        if k % 5 == 2:
            out.append({"text": f"postgres {j % 3}", "type": "decision", "link_to": "Storage"})
        if k % 6 == 3:
            out.append({"text": f"Service{j % 4}", "type": "entity", "name": f"svc{j % 4}"})
    return out


def _dump(path: Path) -> tuple[list[str], list[str]]:
    """Nodes and edges as text, ids replaced by the node's type, name and text."""
    with Memory(path, embedder=None) as mem:
        nodes = mem.store.nodes(include_archived=True)
        key = {n.id: f"{n.type}:{n.name}:{n.text}" for n in nodes}
        rows = []
        for n in nodes:
            j = {k: v for k, v in n.to_json().items() if k not in ("id", "uri") and "At" not in k}
            j["sources"] = sorted(json.dumps(s, sort_keys=True) for s in j["sources"])
            rows.append(json.dumps(j, sort_keys=True))
        edges = [f"{key[e.src]} -{e.label}-> {key[e.dst]}" for e in mem.store.edges()]
    return sorted(rows), sorted(edges)


def test_writers_taking_turns_store_what_one_writer_stores(tmp_path: Path) -> None:
    calls = _calls()
    with Memory(tmp_path / "one.db", embedder=None) as mem:
        for kw in calls:
            mem.remember(**kw)
    writers = [Memory(tmp_path / "many.db", embedder=None) for _ in range(3)]
    try:
        for i, kw in enumerate(calls):
            writers[i % 3].remember(**kw)
    finally:
        for w in writers:
            w.close()
    one, many = _dump(tmp_path / "one.db"), _dump(tmp_path / "many.db")
    assert one == many
    prefs = [r for r in one[0] if '"type": "preference"' in r]
    assert len(prefs) == 5  # every project's rule merged, its near duplicate too
    assert all(r.count("quote") > 1 for r in prefs)  # merged, not made again


def test_a_writer_merges_into_what_another_wrote_since_its_last_call(tmp_path: Path) -> None:
    a = Memory(tmp_path / "m.db", embedder=None)
    b = Memory(tmp_path / "m.db", embedder=None)
    try:
        first = a.remember("Run the linter before each commit.", link_to="CI")
        b.remember("Unrelated: tests run on two cores.", link_to="CI")
        again = b.remember("run the linter before each commit.", link_to="CI")
        longer = b.remember("Always: run the linter before each commit.", link_to="CI")
        assert again.id == first.id == longer.id
        assert len(a.nodes("preference")) == 2 and len(a.nodes("entity")) == 1
    finally:
        a.close()
        b.close()


def test_a_repeated_link_to_passes_the_door_every_time(tmp_path: Path) -> None:
    with Memory(tmp_path / "m.db", embedder=None) as mem:
        for _ in range(2):
            with pytest.raises(MemoryRefused, match="only a credential"):
                mem.remember("Use the staging cluster.", link_to=f" {KEY} ")
        assert mem.nodes("preference") == [] and mem.nodes("entity") == []
        for _ in range(2):
            node = mem.remember("Use the staging cluster.", link_to=f"Staging {KEY}")
            (entity,) = mem.nodes("entity")
            assert entity.name == "Staging [REDACTED:openai]" and KEY not in str(entity)
            assert mem.read(entity.id).incoming[0][1].id == node.id
