"""The API's two shape rules: a builder method changes the object and returns it (so calls
chain, and a call whose result is dropped still takes effect), and every tabular result has
``to_polars()`` as its one table method (``to_df`` is a deprecated alias for one release)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import ctxsdk as cx
from ctxsdk.assemble import DraftStore, Rule
from ctxsdk.samples import sample
from ctxsdk.testing import LogBuilder


def _session(sid: str, turns: list[tuple[str, str]]) -> cx.Session:
    b = LogBuilder(session_id=sid, runtime_context=None)
    for user, assistant in turns:
        b.turn(user).assistant(text=assistant).end_turn()
    return cx.Session.from_events(b.header, b.events)


@pytest.fixture
def sources() -> list[cx.Session]:
    # four assistants (weight 2 each) against one user (weight 8): the two scores disagree
    said = [_session(f"fl-{x}", [("Check the port.", "The port is 8080.")]) for x in "abcd"]
    return [*said, _session("fl-u", [("The port is 9090.", "OK.")])]


# -- builders: each Merge and Assembly builder, called with its result dropped -----------------

MERGE_BUILDERS: dict[str, tuple[Callable[[cx.Merge], Any], Callable[[cx.Merge], Any]]] = {
    # name: (the call, what it changed as read back through a run)
    "budget": (lambda m: m.budget(90), lambda m: m.run().budget == 90),
    "score": (lambda m: m.score("elitist"), lambda m: m.run().score == "elitist"),
    "strategy": (lambda m: m.strategy("elitist"), lambda m: m.run().score == "elitist"),
}


@pytest.mark.parametrize("name", MERGE_BUILDERS)
def test_a_merge_builder_changes_the_merge_and_returns_it(
    name: str, sources: list[cx.Session]
) -> None:
    call, took_effect = MERGE_BUILDERS[name]
    m = cx.Merge(sources)
    assert not took_effect(m)
    assert call(m) is m
    assert took_effect(m)  # the result was dropped; the merge changed anyway


def test_merge_builders_chain_to_what_the_last_call_set(sources: list[cx.Session]) -> None:
    m = cx.Merge(sources)
    r = m.budget(400).score("elitist").budget(90).run()
    assert (r.budget, r.score) == (90, "elitist")
    assert m.run().slot("port").presented == ("9090",)  # elitist: the user's (4) beats (2, 2, ...)


def test_a_copy_changes_apart_and_shares_the_reading(sources: list[cx.Session]) -> None:
    m = cx.Merge(sources).budget(400)
    other = m.copy().budget(90).score("elitist")
    assert other is not m
    assert (m.run().budget, m.run().score) == (400, "egalitarian")
    assert (other.run().budget, other.run().score) == (90, "elitist")
    assert other.branches is m.branches and other.alignment is m.alignment


def test_a_result_keeps_the_merge_as_it_ran(sources: list[cx.Session]) -> None:
    m = cx.Merge(sources).budget(400)
    r = m.run()
    m.budget(90).score("elitist")
    again = r.rerun()  # the merge that made r, not m as it is now
    assert (again.budget, again.score, again.text) == (400, "egalitarian", r.text)
    tighter = r.rerun(budget=120)
    assert (tighter.budget, tighter.score) == (120, "egalitarian")
    assert (m.run().budget, m.run().score) == (90, "elitist")  # rerun changed no merge


def test_compare_leaves_the_merge_it_is_given_as_it_was(sources: list[cx.Session]) -> None:
    m = cx.Merge(sources).score("egalitarian")
    cx.Merge.compare(["egalitarian", "elitist"], m)  # elitist last
    assert m.current_strategy.name == "egalitarian"


def _assembly(tmp_path: Path) -> tuple[cx.Assembly, int]:
    s = cx.Session.open(sample("fix-flaky-test"))
    return s.assemble(drafts=DraftStore(tmp_path)), s.surface().seqs[3]


ASSEMBLY_BUILDERS: dict[str, Callable[[cx.Assembly, int], Any]] = {
    "set": lambda a, seq: a.set(seq, "off"),
    "reset": lambda a, seq: a.reset(),
    "apply_rules": lambda a, seq: a.apply_rules([Rule(mode="off", kind="tool")]),
    "save_draft": lambda a, seq: a.save_draft(),
}


@pytest.mark.parametrize("name", ASSEMBLY_BUILDERS)
def test_an_assembly_builder_changes_the_assembly_and_returns_it(name: str, tmp_path: Path) -> None:
    a, seq = _assembly(tmp_path)
    if name in ("reset", "save_draft"):
        a.set(seq, "off")  # something to clear, or to save
    before = a.draft
    assert ASSEMBLY_BUILDERS[name](a, seq) is a
    if name == "save_draft":  # its effect is the stored draft
        store = a.drafts
        assert store is not None and store.load(a.session.id) == (before, a.session.id)
    else:
        assert a.draft != before  # the result was dropped; the draft changed anyway


def test_assembly_builders_chain(tmp_path: Path) -> None:
    a, seq = _assembly(tmp_path)
    leaves = [r.seq for r in a.tree().leaves() if r.seq is not None and r.kind != "system"]
    a.set(leaves[0], "off").set(leaves[1], "key").reset().set(seq, "off")
    assert set(a.draft) == {seq}


# -- to_polars: the one table method; to_df warns and gives the same frame ------------------


def _merge_result(sources: list[cx.Session], tmp_path: Path) -> Any:
    return cx.Merge(sources).run()


def _memory(sources: list[cx.Session], tmp_path: Path) -> Any:
    mem = cx.Memory(tmp_path / "memory.db")
    mem.remember("The deploy target is eu-west.")
    return mem


@pytest.mark.parametrize("make", [_merge_result, _memory], ids=["MergeResult", "Memory"])
def test_to_df_is_a_deprecated_alias_of_to_polars(
    make: Callable[[list[cx.Session], Path], Any], sources: list[cx.Session], tmp_path: Path
) -> None:
    obj = make(sources, tmp_path)
    frame = obj.to_polars()
    assert isinstance(frame, pl.DataFrame) and frame.height > 0
    with pytest.warns(DeprecationWarning, match=r"to_df\(\) is deprecated; use to_polars\(\)"):
        old = obj.to_df()
    assert old.equals(frame)
