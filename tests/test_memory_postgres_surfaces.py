"""What a person touches works unchanged on a PostgreSQL memory: the MemoryGraph widget, the
model's memory tools and the command line give what they give on a SQLite file (a real
server from the ``postgres_dsn`` fixture; the same real sample session in both), and
``Memory(..., timeout=)`` reaches either store."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import ctxsdk as cx
from ctxsdk._cli import main
from ctxsdk.errors import LockHeld, StoreUnavailable
from ctxsdk.samples import real_samples
from ctxsdk.tools import ToolContext, default_registry

CLOCK = "2026-12-01T00:00:00+00:00"


def _memories(tmp_path: Path, dsn: str) -> tuple[cx.Memory, cx.Memory]:
    from datetime import datetime

    when = datetime.fromisoformat(CLOCK)
    session = cx.Session.open_any(real_samples()["claude-code"].path)
    file = cx.Memory(tmp_path / "memory.db", embedder=None, clock=when)
    team = cx.Memory(dsn, namespace="team-a", embedder=None, clock=when)
    for mem in (file, team):
        mem.ingest(session)
    return file, team


def _graph_shape(mem: cx.Memory) -> dict[str, Any]:
    """The widget's payload without what differs by store: generated ids and the location."""
    w = mem.widget()
    graph, summary = w._graph, dict(w.summary)
    summary.pop("location")
    labels = graph["nodes"]["label"]
    edges = Counter(
        (labels[s], labels[t], label)
        for s, t, label in zip(
            graph["edges"]["s"], graph["edges"]["t"], graph["edges"]["label"], strict=True
        )
    )
    return {
        "summary": summary,
        "nodes": sorted(zip(graph["nodes"]["type"], labels, strict=True)),
        "edges": edges,
        "sessions": [[(b["kind"], b["name"]) for b in row["boxes"]] for row in w.session_map],
    }


def test_the_memory_graph_draws_the_same_memory(tmp_path: Path, postgres_dsn: str) -> None:
    file, team = _memories(tmp_path, postgres_dsn)
    with file, team:
        shape = _graph_shape(team)
        assert shape == _graph_shape(file)
        assert shape["nodes"] and shape["edges"]
        w = team.widget()
        assert (
            w.summary["location"].startswith("postgresql://")
            and "#team-a" in (w.summary["location"])
        )


def test_the_memory_tools_answer_alike(tmp_path: Path, postgres_dsn: str) -> None:
    file, team = _memories(tmp_path, postgres_dsn)
    reg = default_registry()
    session = cx.Session.open_any(real_samples()["claude-code"].path)
    answers = []
    with file, team:
        for mem in (file, team):
            ctx = ToolContext(session=session, extras={"memory": mem})

            def call(name: str, mem_ctx: ToolContext = ctx, **args: object) -> dict[str, Any]:
                return reg.dispatch(name, json.dumps(args), mem_ctx)

            made = call("ctx_remember", text="Run ruff before every commit.", type="preference")
            found = call("ctx_find", query="ruff before commit")
            hits = [h for group in found["by_type"].values() for h in group]
            read = call("ctx_read", id=made["id"])
            answers.append(
                (
                    made["type"],
                    found["hits"],
                    sorted(h["text"] for h in hits),
                    (read["node"]["type"], read["node"]["text"], read["node"]["sources"]),
                )
            )
    assert answers[0] == answers[1]
    assert "Run ruff before every commit." in answers[1][2]


def test_the_command_line_reads_a_namespace(
    tmp_path: Path, postgres_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    file, team = _memories(tmp_path, postgres_dsn)
    file.close()
    team.close()
    query = "what did the session decide?"
    outs = []
    for argv in (
        [str(tmp_path / "memory.db"), "find", query, "--json"],
        [postgres_dsn, "find", query, "--json", "--namespace", "team-a"],
    ):
        assert main(["memory", *argv]) == 0
        hits = json.loads(capsys.readouterr().out)["hits"]
        outs.append([(h["type"], h["text"]) for h in hits])
    assert outs[0] == outs[1] and outs[0]


def test_memory_takes_a_timeout_for_a_server_that_does_not_answer() -> None:
    # Nothing listens on the port: the open fails within the timeout, naming the server and
    # never the password.
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    dsn = f"postgresql://alice:hunter2-secret@127.0.0.1:{port}/memory"
    with pytest.raises(StoreUnavailable) as caught:
        cx.Memory(dsn, namespace="team-a", timeout=0.5, embedder=None)
    assert f"127.0.0.1:{port}/memory" in str(caught.value)
    assert "hunter2" not in str(caught.value) and "hunter2" not in repr(caught.value)


def test_memory_passes_its_timeout_to_a_file_store(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "memory.db"
    cx.Memory(path, embedder=None).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with cx.Memory(path, embedder=None, timeout=0.2) as mem, pytest.raises(LockHeld):
            mem.remember("Run ruff before every commit.", type="preference")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
