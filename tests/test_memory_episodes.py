"""The session map: a session's boxes (fork, checkpoints, tail) written into the memory,
chained, linked to a parent's box, kept across re-ingests and renames, cut by hand, and
never a search hit or a line of the short map."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

import ctxsdk as cx
from ctxsdk.memory import Memory, Node
from ctxsdk.memory._episodes import episode_uri, session_episodes
from ctxsdk.testing import LogBuilder

LONG_A = " about the billing service and its many parts" * 20
LONG_B = " about the ledger migration" * 30


def _talk(b: LogBuilder, text: str, n: int) -> None:
    for i in range(n):
        b.turn(f"{text} {i}").assistant(text="ok " * 50).end_turn()


def _family(version: int = 3) -> tuple[LogBuilder, LogBuilder, int]:
    """A parent with two compactions, and a child forked between them."""
    b = LogBuilder(session_id=f"parent-v{version}", runtime_context=None, version=version)
    _talk(b, "first topic" + LONG_A, 3)
    b.compact(1, "Summary one: we set up the billing service.")
    _talk(b, "second topic" + LONG_B, 2)
    cut = b.last_seq
    child = b.fork(child_id=f"child-v{version}")
    child.turn("the child goes its own way").assistant(text="ok").end_turn()
    b.compact(1, "Summary two: we migrated the ledger.")
    b.turn("latest request: ship it").assistant(text="ok").end_turn()
    return b, child, cut


def _session(b: LogBuilder) -> cx.Session:
    return cx.Session.from_events(b.header, b.events)


def _kinds(boxes: list[Node]) -> list[str]:
    return [str(n.extra["kind"]) for n in boxes]


def _out(mem: Memory, node: Node, label: str) -> list[str]:
    return [mem.store.get(e.dst).uri for e in mem.store.edges(src=node.id, labels=[label])]  # type: ignore[union-attr]


@pytest.mark.parametrize("version", [3, 2, 1])
def test_a_compaction_is_one_box_at_its_end_with_its_summary(version: int) -> None:
    b, _, _ = _family(version)
    s = _session(b)
    boxes = session_episodes(s)
    assert [e.kind for e in boxes] == ["checkpoint", "checkpoint", "tail"]
    assert [e.summary for e in boxes[:2]] == [
        "Summary one: we set up the billing service.",
        "Summary two: we migrated the ledger.",
    ]
    assert all(s.raw_events[e.at_seq]["type"] == "compaction/end" for e in boxes[:2])
    assert boxes[-1].summary == "latest request: ship it"
    assert boxes[-1].at_seq == len(s) - 1


def test_ingest_writes_the_chain_and_the_fork_links_to_the_box_holding_its_cut() -> None:
    b, child, cut = _family()
    parent, kid = _session(b), _session(child)
    for order in ((parent, kid), (kid, parent)):  # either may be ingested first
        with Memory(None) as mem:
            for s in order:
                report = mem.ingest(s)
                assert report.episodes == tuple(n.id for n in mem.episodes(s))
            boxes = mem.episodes(parent)
            assert _kinds(boxes) == ["checkpoint", "checkpoint", "tail"]
            assert [n.name for n in boxes] == ["compacted", "compacted", "current"]
            for before, after in itertools.pairwise(boxes):
                assert _out(mem, after, "continues") == [before.uri]
            assert _out(mem, boxes[0], "continues") == []
            mine = mem.episodes(kid)
            assert _kinds(mine) == ["fork", "tail"]
            assert mine[0].extra["atSeq"] == cut and mine[0].extra["parent"] == parent.id
            # The cut lies after the first compaction: the second checkpoint archived it.
            assert boxes[0].extra["atSeq"] < cut < boxes[1].extra["atSeq"]
            assert _out(mem, mine[0], "forks_from") == [boxes[1].uri]
            assert _out(mem, mine[1], "continues") == [mine[0].uri]


def test_episodes_are_never_search_hits_nor_in_the_short_map() -> None:
    b, _, _ = _family()
    with Memory(None) as mem:
        mem.ingest(_session(b))
        assert mem.episodes()
        for q in ("billing service", "Summary one", "ledger", "ship it", "compacted"):
            assert all(h.node.type != "episode" for h in mem.find(q, top_k=20))
        text = mem.map(400).text
        assert "Summary one" not in text and "compacted" not in text


def test_a_grown_session_keeps_its_boxes_and_a_renamed_box_its_name() -> None:
    b = LogBuilder(session_id="growing", runtime_context=None)
    _talk(b, "first topic" + LONG_A, 3)
    b.compact(1, "Summary one: we set up the billing service.")
    b.turn("what next?").assistant(text="ok").end_turn()
    with Memory(None) as mem:
        mem.ingest(_session(b))
        first, tail = mem.episodes("growing")
        mem.rename(tail.id, "before the migration")
        mem.rename(first.id, "billing set-up")
        _talk(b, "second topic" + LONG_B, 2)
        b.compact(1, "Summary two: we migrated the ledger.")
        b.turn("latest request: ship it").assistant(text="ok").end_turn()
        mem.ingest(_session(b))
        boxes = mem.episodes("growing")
        assert _kinds(boxes) == ["checkpoint", "checkpoint", "tail"]
        assert boxes[0].id == first.id and boxes[0].name == "billing set-up"
        assert boxes[2].id == tail.id and boxes[2].name == "before the migration"
        assert boxes[2].text == "latest request: ship it"  # the summary follows the log
        # The tail continues the new checkpoint only: the old link is gone.
        assert _out(mem, boxes[2], "continues") == [boxes[1].uri]
        assert mem.ingest(_session(b)).skipped  # again: nothing changes


def test_rename_never_touches_a_boxs_summary() -> None:
    b, _, _ = _family()
    with Memory(None) as mem:
        mem.ingest(_session(b))
        box = mem.episodes(b.session_id)[0]
        renamed = mem.rename(box.id, "billing")
        assert renamed.name == "billing" and renamed.text == box.text


def test_cut_makes_a_box_of_the_tail_without_touching_the_log() -> None:
    b = LogBuilder(session_id="cutting", runtime_context=None)
    b.turn("set up the billing service").assistant(text="ok").end_turn()
    b.turn("now add the invoices table").assistant(text="ok").end_turn()
    s = _session(b)
    before = [dict(e) for e in s.raw_events]
    with Memory(None) as mem:
        mem.ingest(s)
        box = mem.cut(s)
        assert box.extra["kind"] == "checkpoint" and box.extra["generated"] is True
        assert box.text == "now add the invoices table" and box.extra["atSeq"] == len(s) - 1
        assert box.uri == episode_uri("cutting", len(s) - 1)
        assert [dict(e) for e in s.raw_events] == before  # nothing was compacted
        boxes = mem.episodes(s)
        assert _kinds(boxes) == ["checkpoint", "tail"]
        assert boxes[1].text == "(nothing since the last checkpoint)"
        assert mem.cut(s).id == box.id and len(mem.episodes(s)) == 2  # cutting again: nothing
        b.turn("then email the customers").assistant(text="ok").end_turn()
        grown = _session(b)
        mem.ingest(grown)
        boxes = mem.episodes(grown)
        assert _kinds(boxes) == ["checkpoint", "tail"] and boxes[0].id == box.id
        assert boxes[1].text == "then email the customers"


def test_the_map_survives_export_and_import() -> None:
    b, child, _ = _family()
    with Memory(None) as mem:
        mem.ingest(_session(b))
        mem.ingest(_session(child))
        data = mem.export_json()
        with Memory(None) as copy:
            copy.import_json(data)
            assert [n.uri for n in copy.episodes()] == [n.uri for n in mem.episodes()]
            fork = copy.episodes(child.session_id)[0]
            assert _out(copy, fork, "forks_from") == _out(
                mem, mem.episodes(child.session_id)[0], "forks_from"
            )


def test_a_box_archived_by_hand_stays_archived_when_the_session_is_ingested_again() -> None:
    b, _, _ = _family()
    with Memory(None) as mem:
        mem.ingest(_session(b))
        first = mem.episodes(_session(b))[0]
        mem.archive(first.id)
        b.turn("one more request").assistant(text="ok").end_turn()
        grown = _session(b)
        report = mem.ingest(grown)  # the log grew: its boxes are written again
        assert not report.skipped
        assert mem.store.get(first.id).status == "archived"  # type: ignore[union-attr]
        assert _kinds(mem.episodes(grown)) == ["checkpoint", "tail"]
        assert mem.episodes(grown)[-1].text == "one more request"


def test_len_of_a_memory_just_opened_counts_what_find_searches(tmp_path: Path) -> None:
    b, _, _ = _family()
    path = tmp_path / "m.db"
    with Memory(path, embedder=None) as mem:
        mem.ingest(_session(b))
        gone = mem.remember("we keep the old ledger for a year")
        mem.archive(gone.id)
        assert mem.episodes() and mem.nodes("workspace")
        searched = len(mem)  # the index's own count, read in full
    with Memory(path, embedder=None) as fresh:
        assert len(fresh) == searched  # counted by the store, no node read
        assert fresh._revision < 0
        expected = [n for n in fresh.nodes() if n.type not in ("workspace", "episode")]
        assert searched == len(expected) and gone.id not in {n.id for n in expected}
