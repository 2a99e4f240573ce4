"""CheckpointGraph's Python side: the graph it sends for a folded session and for a workspace,
and its requests (a checkpoint's state, recall, fork), on copies of the real samples.

The requests go through ``dispatch``, exactly what a custom message from the front end runs;
the front end is tested in a real JupyterLab in ``tests/ui/test_checkpoint_graph_lab.py``.
"""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path
from typing import Any

import pytest

import ctxsdk as cx
from ctxsdk.fold import FileBundleStore
from ctxsdk.samples import SAMPLES_HOME, sample
from ctxsdk.session.kernel import fork_points, message_of
from ctxsdk.testing import LogBuilder
from ctxsdk.widgets import CheckpointGraph
from ctxsdk.widgets._checkpoint_graph import (
    FROZEN,
    LIVE,
    NODE_H,
    NODE_W,
    RECALLABLE,
    SUPERSEDED,
    _static_files,
)


def _ask(w: CheckpointGraph, type: str, **args: Any) -> Any:
    reply = w.dispatch({"id": "t1", "type": type, **args})
    assert reply is not None and reply["id"] == "t1"
    assert reply["ok"], reply
    return reply["result"]


def _error(w: CheckpointGraph, type: str, **args: Any) -> dict[str, str]:
    reply = w.dispatch({"id": "t2", "type": type, **args})
    assert reply is not None and reply["ok"] is False, reply
    return dict(reply["error"])


def _home(tmp_path: Path) -> Path:
    """A writable copy of the samples' DSH home (the samples are read-only)."""
    home = tmp_path / "home"
    shutil.copytree(SAMPLES_HOME, home)
    return home


def _folded(tmp_path: Path) -> cx.Fold:
    """long-refactor, copied into a DSH home in tmp, folded twice (forced) and rebased: one
    root checkpoint on the surface, with the leaf it merged under it."""
    home = _home(tmp_path)
    s = cx.Session.open(home / sample("long-refactor").relative_to(SAMPLES_HOME))
    f = cx.Fold(s, store=tmp_path / "store", window=8192)
    assert f.run(force=True).folded
    f.run(force=True)  # the policy may fold again, or rebase on its own (amortized)
    f.rebase()  # merges what is left on the frozen prefix, if two or more
    assert [r.mode for r in f.checkpoints] == ["root"]
    return f


@pytest.fixture(scope="module")
def folded(tmp_path_factory: pytest.TempPathFactory) -> cx.Fold:
    return _folded(tmp_path_factory.mktemp("folded"))


def _nodes(w: CheckpointGraph) -> list[dict[str, Any]]:
    cols = w._graph["nodes"]
    return [dict(zip(cols, row, strict=True)) for row in zip(*cols.values(), strict=True)]


def _edges(w: CheckpointGraph) -> list[tuple[str, str, str, str]]:
    e = w._graph["edges"]
    return list(zip(e["source"], e["target"], e["kind"], e["label"], strict=True))


def _no_overlap(nodes: list[dict[str, Any]]) -> None:
    boxes = sorted((n["x"], n["y"]) for n in nodes)
    for (x1, y1), (x2, y2) in itertools.pairwise(boxes):
        assert not (abs(x1 - x2) < NODE_W and abs(y1 - y2) < NODE_H), (x1, y1, x2, y2)


# --- the graph of a fold -------------------------------------------------------------------


def test_fold_widget_is_the_checkpoint_graph(folded: cx.Fold) -> None:
    w = folded.widget(height=300)
    assert isinstance(w, CheckpointGraph) and w.height == 300
    assert repr(w).startswith(f"CheckpointGraph({folded.session.id[:8]}, 1 checkpoints, ")
    assert "0x" not in repr(w)
    with pytest.raises(TypeError, match="heigth"):
        CheckpointGraph(folded, heigth=3)
    with pytest.raises(TypeError, match="Fold or a Workspace"):
        CheckpointGraph(folded.session)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="store="):
        CheckpointGraph(folded, store="x")


def test_the_graph_is_the_frontier_and_the_records(folded: cx.Fold) -> None:
    w = CheckpointGraph(folded)
    frontier = folded.frontier()
    records = {r.checkpoint_id: r for r in folded.records}
    nodes = _nodes(w)
    lane = [n for n in nodes if n["y"] == 0]
    # The main lane: the system head, the frozen checkpoints in surface order, the open tail.
    assert lane[0]["kind"] == "head" and lane[-1]["kind"] == "open"
    on_surface = [n for n in lane if n["kind"] in ("checkpoint", "compaction")]
    assert [n["ref"] for n in on_surface if n["kind"] == "checkpoint"] == [
        f"cp:{c}" for c in frontier.checkpoint_ids
    ]
    assert all(n["flags"] & FROZEN and n["flags"] & LIVE for n in on_surface)
    # The root's merged checkpoints hang under it, superseded and still recallable.
    root = records[frontier.checkpoint_ids[0]]
    assert root.mode == "root" and root.children
    merged = {t for s, t, k, _ in _edges(w) if s == f"cp:{root.checkpoint_id}" and k == "merged"}
    assert merged == {f"cp:{c}" for c in root.children}
    for n in nodes:
        if n["id"] in merged:
            assert n["kind"] == "superseded" and n["y"] > 0
            assert n["flags"] & SUPERSEDED and n["flags"] & RECALLABLE
            rec = records[n["ref"][3:]]
            assert n["sub"] == (
                f"{len(rec.shadowed)} nodes · {rec.shadowed_tokens:,} → {rec.checkpoint_tokens:,} tok"
            )
    # Every fold is a node, once.
    assert sorted(n["ref"][3:] for n in nodes if n["ref"].startswith("cp:")) == sorted(records)
    # The frontier sits between the last frozen node and the open tail.
    open_x = lane[-1]["x"]
    assert max(n["x"] for n in on_surface) + NODE_W <= w._graph["frontier"] <= open_x
    _no_overlap(nodes)


def test_the_summary_has_the_token_figures_of_each_part(folded: cx.Fold) -> None:
    w = CheckpointGraph(folded)
    sm = w.summary
    frontier = folded.frontier()
    table = folded.session.tokens(folded.tokenizer)
    assert sm["head"] + sm["frozen"] + sm["open"] == sm["surface"] == table.total
    p = folded.pressure()
    assert (sm["frozen"], sm["surface"]) == (p.frozen, p.total)
    assert sm["checkpoints"] == len(frontier.checkpoint_ids)
    assert sm["open_nodes"] == frontier.open_nodes and sm["folds"] == len(folded.records)
    opened = _ask(w, "checkpoint", ref="open")
    assert opened["count"] == frontier.open_nodes and opened["tokens"] == sm["open"]
    assert [n["seq"] for n in opened["nodes"]] == list(
        folded.session.index.surface_seqs()[frontier.first_open :]
    )
    head = _ask(w, "checkpoint", ref="head")
    assert head["count"] == frontier.head and head["tokens"] == sm["head"]


def test_a_checkpoint_state_is_its_text_and_record(folded: cx.Fold) -> None:
    w = CheckpointGraph(folded)
    root = folded.checkpoints[0]
    st = _ask(w, "checkpoint", ref=f"cp:{root.checkpoint_id}")
    assert st["text"] == root.text == folded.recall(f"cp:{root.checkpoint_id}").text
    assert st["mode"] == "root" and st["status"] == "verified" and st["on_surface"]
    assert st["shadowed"] == len(root.shadowed) and st["file_sha256"] == root.file_sha256
    assert st["children"] == [f"cp:{c}" for c in root.children]
    err = _error(w, "checkpoint", ref="cp:cp-0000000000000000")
    assert err["type"] == "NotFound" and "refresh" in err["message"]


def test_recall_pages_the_exact_messages_of_the_bundle(folded: cx.Fold) -> None:
    w = CheckpointGraph(folded)
    leaf = next(r for r in folded.records if r.mode == "leaf")
    ref = f"cp:{leaf.checkpoint_id}"
    bundle = folded.reader().get(leaf.checkpoint_id, file_sha256=leaf.file_sha256)
    seen: list[int] = []
    texts: list[str] = []
    offset: int | None = 0
    while offset is not None:
        page = _ask(w, "recall", ref=ref, offset=offset, limit=20)
        assert page["status"] == "verified" and page["total"] == len(bundle.messages)
        seen += [m["seq"] for m in page["messages"]]
        texts += [m["text"] for m in page["messages"]]
        offset = page["next_offset"]
    assert seen == list(bundle.ordered_surface_seqs) == list(leaf.shadowed)
    exact = [cx.Message.model_validate(m).text for m in bundle.messages]
    assert texts == exact
    # The archived messages are the exact ones the log held before the fold.
    raws = folded.session.raw_events
    assert [message_of(raws[q]) for q in leaf.shadowed] == list(bundle.messages)


def test_a_corrupt_bundle_is_reported_with_its_reason_and_no_messages(tmp_path: Path) -> None:
    f = _folded(tmp_path)
    leaf = next(r for r in f.records if r.mode == "leaf")
    path = f.store.path(leaf.bundle_session, leaf.checkpoint_id)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.chmod(0o600)
    path.write_bytes(bytes(data))
    w = CheckpointGraph(f)
    r = _ask(w, "recall", ref=f"cp:{leaf.checkpoint_id}")
    assert r["status"] == "corrupt" and r["reason"] and r["problem"] == "file-hash"
    assert "messages" not in r
    st = _ask(w, "checkpoint", ref=f"cp:{leaf.checkpoint_id}")
    assert st["status"] == "corrupt" and st["reason"]
    path.unlink()
    r = _ask(w, "recall", ref=f"cp:{leaf.checkpoint_id}")
    assert r["status"] == "missing" and "no bundle" in r["reason"] and "messages" not in r


def test_fork_from_a_checkpoint_writes_a_child_as_the_harness_forks(tmp_path: Path) -> None:
    f = _folded(tmp_path)
    w = CheckpointGraph(f)
    leaf = next(r for r in f.records if r.mode == "leaf")
    st = _ask(w, "checkpoint", ref=f"cp:{leaf.checkpoint_id}")
    at = st["fork"]["at_seq"]
    assert at is not None and at >= leaf.record_seq
    r = _ask(w, "fork", ref=f"cp:{leaf.checkpoint_id}")
    assert r["at_seq"] == at and Path(r["path"]).is_file()
    child = cx.Session.open(r["path"])
    assert child.id == r["child_id"] and child.parent_id == f.session.id
    assert child.inherited_event_count == at + 1
    # The child inherits the fold: its checkpoint is on the child's surface.
    assert leaf.checkpoint_seq in child.index.surface_seqs()
    # It shows in the workspace as a fork at that seq.
    g = CheckpointGraph(cx.Workspace(tmp_path / "home"))
    assert (f.session.id, child.id, "fork", f"fork at seq {at}") in _edges(g)


def _turns(n: int) -> LogBuilder:
    """Turns of a coding chat: a prompt, a tool call and its result, an answer."""
    b = LogBuilder(3)
    for i in range(n):
        b.turn(f"step {i}: look at module_{i}.py " + "detail " * 30)
        b.assistant(tool_calls=[("read", {"path": f"src/module_{i}.py"})])
        b.tool_results([f"def f_{i}(x):\n    return x * {i}  # line\n" * 12])
        b.next_step().assistant(text=f"module_{i}.py multiplies by {i}. " + "More. " * 20)
        b.end_turn()
    return b


def test_fork_needs_a_session_read_from_a_file(tmp_path: Path) -> None:
    b = _turns(12)
    memory = cx.Session.from_events(b.header, b.events)
    f = cx.Fold(memory, store=tmp_path / "b", window=4000, write=False)
    assert f.run(force=True).folded
    w = CheckpointGraph(f)
    cid = f.records[0].checkpoint_id
    st = _ask(w, "checkpoint", ref=f"cp:{cid}")
    assert st["fork"]["at_seq"] is None and "not read from a file" in st["fork"]["why"]
    assert w.summary["can_fork"] is False
    err = _error(w, "fork", ref=f"cp:{cid}")
    assert err["type"] == "InvalidArgument" and "not read from a file" in err["message"]


def test_fork_inside_an_open_turn_says_why(tmp_path: Path) -> None:
    b = LogBuilder(3)
    for i in range(4):
        b.turn(f"look at file {i}").assistant(tool_calls=[("read", {"path": f"f{i}.py"})])
        b.tool_results(["x = 1\n" * 200])
        b.next_step().assistant(text="read it").end_turn()
    b.turn("now continue")
    live = cx.Session.from_events(b.header, b.events)
    path = live.save(tmp_path / "live")
    f = cx.Fold(cx.Session.open(path), store=tmp_path / "b", policy="masking", window=4000)
    r = f.run(force=True)
    assert r.folded and r.action == "mask"
    w = CheckpointGraph(f)
    mask = next(n for n in _nodes(w) if n["kind"] == "mask")
    assert mask["flags"] & LIVE and "masked" in mask["sub"]
    assert (("open", mask["id"], "mask", "on the surface")) in _edges(w)
    st = _ask(w, "checkpoint", ref=mask["ref"])
    assert st["mode"] == "mask" and st["fork"]["at_seq"] is None
    assert "still open" in st["fork"]["why"]
    page = _ask(w, "recall", ref=mask["ref"])
    assert page["status"] == "verified" and all(
        "x = 1" in m["results"][0]["text"] for m in page["messages"]
    )


def test_refresh_shows_folds_made_in_python(tmp_path: Path) -> None:
    home = _home(tmp_path)
    s = cx.Session.open(home / sample("long-refactor").relative_to(SAMPLES_HOME))
    f = cx.Fold(s, store=tmp_path / "store", window=8192)
    w = CheckpointGraph(f)
    before = (w.revision, w.summary["folds"])
    f.run(force=True)
    assert w.summary["folds"] == before[1]
    assert _ask(w, "refresh")["revision"] == before[0] + 1
    assert w.summary["folds"] == before[1] + 1


def test_many_checkpoints_lay_out_without_overlap(tmp_path: Path) -> None:
    b = _turns(44)
    f = cx.Fold(
        cx.Session.from_events(b.header, b.events), store=tmp_path / "b", window=8192, write=False
    )
    for _ in range(40):
        seqs = f.session.index.surface_seqs()
        lo = f.frontier().first_open
        f.fold((seqs[lo], seqs[lo + 3]))
    w = CheckpointGraph(f)
    nodes = _nodes(w)
    assert sum(1 for n in nodes if n["kind"] == "checkpoint") == 40
    _no_overlap(nodes)
    f.rebase()
    w.refresh()
    nodes = _nodes(w)
    assert sum(1 for n in nodes if n["kind"] == "superseded") == 40
    _no_overlap(nodes)
    # The layout is deterministic: the same fold gives the same graph.
    assert CheckpointGraph(f)._graph == w._graph


# --- the graph of a workspace --------------------------------------------------------------


def test_a_workspace_graph_has_sessions_forks_and_subagents(tmp_path: Path) -> None:
    home = _home(tmp_path)
    ws = cx.Workspace(home)
    w = CheckpointGraph(ws)
    rows = ws.sessions().to_dicts()
    nodes = _nodes(w)
    assert sorted(n["id"] for n in nodes) == sorted(r["id"] for r in rows)
    edges = _edges(w)
    for r in rows:
        if r["parent"] is None:
            continue
        kind = "subagent" if r["origin"] == "subagent" else "fork"
        (edge,) = [e for e in edges if e[1] == r["id"]]
        assert edge[:3] == (r["parent"], r["id"], kind)
        if kind == "fork":
            child = ws.open(r["id"])
            assert edge[3] == f"fork at seq {child.inherited_event_count - 1}"
    assert w.summary["sessions"] == len(rows) and w.summary["store"] is None
    assert w.summary["forks"] == 1 and w.summary["subagents"] == 1
    _no_overlap(nodes)
    row = _ask(w, "session", ref=rows[0]["id"])
    assert row["id"] == rows[0]["id"] and row["events"] == rows[0]["events"]
    assert _error(w, "recall", ref="cp:x")["type"] == "InvalidArgument"


def test_a_workspace_with_a_store_counts_each_sessions_checkpoints(tmp_path: Path) -> None:
    f = _folded(tmp_path)
    w = CheckpointGraph(cx.Workspace(tmp_path / "home"), store=tmp_path / "store")
    node = next(n for n in _nodes(w) if n["id"] == f.session.id)
    n = len(f.frontier().checkpoint_ids)
    assert node["sub"].endswith(f"{n} checkpoint" + ("" if n == 1 else "s"))
    assert node["flags"] & FROZEN
    assert w.summary["folded"] == 1 and w.summary["checkpoints"] == n
    row = _ask(w, "session", ref=f.session.id)
    assert row["checkpoints"] == n and row["folds"] == len(f.records)
    # A FileBundleStore works as well as a path.
    same = CheckpointGraph(
        cx.Workspace(tmp_path / "home"), store=FileBundleStore(tmp_path / "store")
    )
    assert same._graph == w._graph


def test_a_workspace_of_hundreds_of_sessions(tmp_path: Path) -> None:
    home = _home(tmp_path)
    ws = cx.Workspace(home)
    listed = ws.sessions().to_dicts()
    small = min((r for r in listed if r["parent"] is None), key=lambda r: r["events"])
    s = ws.open(small["id"])
    points = fork_points(s)
    cuts = [points[i % len(points)] for i in range(150)]
    children = {s.fork(at_seq=at).id: at for at in cuts}
    w = CheckpointGraph(cx.Workspace(home))
    nodes = _nodes(w)
    assert len(nodes) == len(listed) + 150
    _no_overlap(nodes)
    labels = {t: label for src, t, kind, label in _edges(w) if src == s.id and kind == "fork"}
    new = {c: label for c, label in labels.items() if c in children}
    assert new == {c: f"fork at seq {at}" for c, at in children.items()}


def test_the_front_end_files_exist_and_bundle() -> None:
    for path in _static_files():
        assert path.is_file(), path
    esm = CheckpointGraph._esm
    assert "as default" in esm and "https://" not in esm.replace("http://www.w3.org/2000/svg", "")
    assert ".cx-graph" in CheckpointGraph._css and "--jp-" in CheckpointGraph._css


def test_checkpoints_from_a_counter_get_labels_that_tell_them_apart(tmp_path: Path) -> None:
    home = _home(tmp_path)
    s = cx.Session.open(home / sample("long-refactor").relative_to(SAMPLES_HOME))
    ids = (f"cp-{n:016d}" for n in itertools.count(1))
    f = cx.Fold(s, store=tmp_path / "store", window=8192, id_factory=lambda: next(ids))
    assert f.run(force=True).folded
    f.run(force=True)
    f.rebase()
    labels = [n["label"] for n in _nodes(CheckpointGraph(f)) if "cp:" in n["label"]]
    assert len(labels) >= 2 and len(set(labels)) == len(labels), labels
    assert all("cp:00000000" not in x for x in labels)


def test_a_rebase_of_two_leaves_is_labelled_once_and_the_header_counts_the_lane(
    tmp_path: Path,
) -> None:
    """Notebook 04's fold: a leaf, a second leaf with a short tail, then a rebase merging
    both. One label for the merged group (two side by side ran together and overlapped); the
    summary's checkpoint and frozen counts are the checkpoints on the lane, not the leaves."""
    home = _home(tmp_path)
    s = cx.Session.open(home / sample("long-refactor").relative_to(SAMPLES_HOME))
    f = cx.Fold(s, store=tmp_path / "store", window=8192)
    assert f.run(force=True).folded
    f = cx.Fold(f.session, store=tmp_path / "store", window=8192, retain_tokens=600)
    assert f.fold().folded
    root = f.rebase().record
    assert root is not None and len(root.children) >= 2
    w = CheckpointGraph(f)
    merged = [e for e in _edges(w) if e[0] == f"cp:{root.checkpoint_id}" and e[2] == "merged"]
    assert len(merged) == len(root.children)
    assert [label for *_, label in merged if label] == ["merged by rebase"]
    lane = [n for n in _nodes(w) if n["y"] == 0 and n["kind"] in ("checkpoint", "compaction")]
    assert w.summary["checkpoints"] == len(lane) == 1
    assert w.summary["frozen_nodes"] == len(lane)
