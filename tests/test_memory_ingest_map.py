"""The session-start map after ingest: labels shown once, the named line filled to the
budget (ending at a whole label, never lost), errors met before what the assistant found."""

from __future__ import annotations

from pathlib import Path

import ctxsdk as cx
from ctxsdk.session import get_tokenizer
from ctxsdk.testing import LogBuilder, ToolOutput


def _project(name: str) -> cx.Session:
    b = LogBuilder(session_id=name, runtime_context=None, cwd=f"/home/dev/{name}")
    b.turn(f"Always run pytest -q before you commit in {name}.").assistant(
        tool_calls=[("bash", {"cmd": "pytest -q"})]
    )
    out = f"E   ModuleNotFoundError: No module named {name}_db\n1 error in 0.12s"
    b.tool_results([ToolOutput.failed(out, "ExitCode", "1")]).next_step()
    b.assistant(tool_calls=[("bash", {"cmd": f"pip install {name}-db"})])
    b.tool_results([f"Successfully installed {name}-db-1.0"]).next_step()
    b.assistant(tool_calls=[("bash", {"cmd": "pytest -q"})])
    b.tool_results(["3 passed in 0.10s"]).next_step()
    b.assistant(
        text=f"The {name} store keeps its rows in ~/.{name}/rows.sqlite with 4096 byte pages."
    ).end_turn()
    return cx.Session.from_events(b.header, b.events)


def test_the_map_shows_a_label_once_and_fills_its_budget(tmp_path: Path) -> None:
    tk = get_tokenizer("cl100k_base")
    with cx.Memory(tmp_path / "m.db", embedder=None) as mem:
        names = ["billing", "ledger", "orders", "search", "profile", "gateway"]
        for n in names:
            mem.ingest(_project(n))
        m = mem.map(400)
        assert m.tokens <= 400 and tk.count(m.text) == m.tokens
        named = m.text.splitlines()[2]
        labels = named.removeprefix("named: ").split("; ")
        assert labels.count("stack: Python, pip") == 1  # six projects, one label
        assert len(labels) == len({lb.casefold() for lb in labels})
        # more than the sixteen labels of a fixed count: the budget ends the line
        assert len(labels) > 16
        # errors met come before what the assistant found
        first_error = next(i for i, lb in enumerate(labels) if "ModuleNotFoundError" in lb)
        found = [i for i, lb in enumerate(labels) if "rows.sqlite" in lb]
        assert all(first_error < i for i in found)
        # a small budget keeps the line, ending at a whole label
        small = mem.map(80)
        assert small.tokens <= 80 and small.text.count("\n") == 2
        assert small.text.splitlines()[2].startswith("named: ")


def test_a_memory_just_opened_gives_the_same_map_without_reading_its_log(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with cx.Memory(path, embedder=None) as mem:
        for n in ["billing", "ledger", "orders"]:
            mem.ingest(_project(n))
        mem.archive(mem.remember("Never deploy on a Friday.").id)  # archived: not in the map
        assert mem.nodes("observation")
        expected = {b: mem.map(b).text for b in (0, 40, 80, 400, 2000)}
    for budget, text in expected.items():
        with cx.Memory(path, embedder=None) as fresh:
            assert fresh.map(budget).text == text
            assert fresh._revision < 0  # the store's rows of the named kinds, nothing indexed
    with cx.Memory(tmp_path / "only-log.db", embedder=None) as mem:  # observations alone
        mem.remember("the build takes four minutes", type="observation")
        alone = mem.map(400).text
    with cx.Memory(tmp_path / "only-log.db", embedder=None) as fresh:
        assert fresh.map(400).text == alone and "1 observation" in alone
