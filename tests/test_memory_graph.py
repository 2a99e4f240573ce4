"""MemoryGraph's Python side: the payload it sends for a memory (the drawn nodes and edges,
their types and stale flags, the deterministic hub layout, the max_nodes cap), and the
requests of its front end: search, read, select_event, archive, rename, merge, refresh.

The requests go through ``dispatch``, exactly what a custom message from the front end runs;
the front end is tested in a real JupyterLab in ``tests/ui/test_memory_graph_lab.py``.
"""

from __future__ import annotations

import shutil
import subprocess
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

import ctxsdk as cx
from ctxsdk.memory import Memory
from ctxsdk.widgets import MemoryGraph
from ctxsdk.widgets._bundle import bundle, bundle_css
from ctxsdk.widgets._memory_graph import HUB, PINNED, STALE, _static_files, path_edges

from .test_memory_ingest import MONDAY, SESSION_A, _session


def _ask(w: MemoryGraph, type: str, **args: Any) -> Any:
    reply = w.dispatch({"id": "t1", "type": type, **args})
    assert reply is not None and reply["id"] == "t1"
    assert reply["ok"], reply
    return reply["result"]


def _error(w: MemoryGraph, type: str, **args: Any) -> dict[str, str]:
    reply = w.dispatch({"id": "t2", "type": type, **args})
    assert reply is not None and reply["ok"] is False, reply
    assert set(reply["error"]) == {"type", "message"} and reply["error"]["message"]
    return dict(reply["error"])


def _nodes(w: MemoryGraph) -> dict[str, dict[str, Any]]:
    cols = w._graph["nodes"]
    rows = [dict(zip(cols, r, strict=True)) for r in zip(*cols.values(), strict=True)]
    return {r["id"]: r for r in rows}


def _edges(w: MemoryGraph) -> set[tuple[str, str, str]]:
    ids = w._graph["nodes"]["id"]
    e = w._graph["edges"]
    return {(ids[s], ids[t], lab) for s, t, lab in zip(e["s"], e["t"], e["label"], strict=True)}


# The seed's P2 graph: ingest reads session A through the fact kernel (entities only from
# facts' keys), then the seed's named things and their links are written as a user would, so
# the widget is tested on the same graph as before.
_SEED_LINKS = (
    ("记住：鉴权走 header X，由 AuthGateway 校验 X-Requ…", "AuthGateway", "about"),
    ("记住：鉴权走 header X，由 AuthGateway 校验 X-Requ…", "X-Request-Id", "about"),
    ("AuthGateway 的重构先别动，下周再说。", "AuthGateway", "decided"),
    ("我们采用方案 A：TriviumDB 只在一个进程里打开。", "方案 A", "decided"),
    ("我们采用方案 A：TriviumDB 只在一个进程里打开。", "TriviumDB", "decided"),
    ("Let's postpone the DeepSeek_Harness mig…", "DeepSeek_Harness", "decided"),
    ("error: pytest -q tests/test_store.py", "dsh-trivium", "fixed"),
)
_SEED_ENTITIES = (
    "方案 A",
    "dsh-trivium",
    "TriviumDB",
    "AuthGateway",
    "DeepSeek_Harness",
    "X-Request-Id",
)


def _memory(path: Path, *, days: int = 0, verbatim: bool = False) -> Memory:
    mem = cx.Memory(path, clock=MONDAY + timedelta(days=days))
    mem.ingest(_session(SESSION_A), verbatim=verbatim, now=MONDAY)
    for keyed in mem.nodes("entity"):  # the kernel's keyed entities: not the seed's graph
        mem.delete(keyed.id)
    for name in _SEED_ENTITIES:
        mem.remember(name, type="entity")
    for src, dst, label in _SEED_LINKS:
        mem.link(_by_name(mem, src), dst, label)
    return mem


def _by_name(mem: Memory, name: str) -> str:
    for n in mem.store.nodes(include_archived=True):
        if n.name == name:
            return n.id
    raise AssertionError(name)


@pytest.fixture
def mem(tmp_path: Path) -> Memory:
    """Session A, read ten days later: the two deadline decisions (下周, Friday) are stale."""
    return _memory(tmp_path / "m.db", days=10)


def test_the_payload_holds_the_memories_their_types_edges_and_stale_flags(mem: Memory) -> None:
    w = MemoryGraph(mem)
    nodes = _nodes(w)
    expected = {
        n.id: n.type
        for n in mem.store.nodes()
        if n.type in ("entity", "preference", "decision", "experience")
    }
    assert {i: r["type"] for i, r in nodes.items()} == expected
    # 6 entities, 6 preferences (the kernel reads "always use tabs in it" as one), 4 decisions,
    # 1 experience
    assert len(expected) == 17
    ids = set(nodes)
    store_edges = {
        (e.src, e.dst, e.label) for n in ids for e in mem.store.edges(src=n) if e.dst in ids
    }
    assert _edges(w) == store_edges and len(store_edges) == 7
    stale = {i for i, r in nodes.items() if r["flags"] & STALE}
    assert stale == {
        _by_name(mem, "AuthGateway 的重构先别动，下周再说。"),
        _by_name(mem, "Let's postpone the DeepSeek_Harness mig…"),
    }
    assert w.summary["stale"] == 2 and w.summary["hidden"] == 0
    assert w.summary["total"]["entity"] == 6 and w.summary["shown"]["decision"] == 4
    # entities are the hubs; their business-edge neighbours sit around them
    hubs = {i for i, r in nodes.items() if r["flags"] & HUB}
    assert hubs == {i for i, t in expected.items() if t == "entity"}
    auth = nodes[_by_name(mem, "AuthGateway")]
    pref = nodes[_by_name(mem, "记住：鉴权走 header X，由 AuthGateway 校验 X-Requ…")]
    assert abs(pref["x"] - auth["x"]) ** 2 + abs(pref["y"] - auth["y"]) ** 2 < 150**2
    # labels are short; the full name is the tip
    assert all(len(r["label"]) <= 30 for r in nodes.values())
    assert repr(w) == (
        "MemoryGraph(6/6 entity, 6/6 preference, 4/4 decision, 1/1 experience, 7 edges, 0 hidden)"
    )


def test_the_layout_is_deterministic(tmp_path: Path) -> None:
    a = MemoryGraph(_memory(tmp_path / "a.db"))
    b = MemoryGraph(_memory(tmp_path / "b.db"))
    ca, cb = a._graph["nodes"], b._graph["nodes"]
    assert ca["x"] == cb["x"] and ca["y"] == cb["y"] and ca["type"] == cb["type"]
    assert ca["label"] == cb["label"]
    again = dict(a._graph)
    a.refresh()
    assert a._graph == again and a.revision == 2


def test_observations_are_hidden_by_default_and_shown_when_asked(tmp_path: Path) -> None:
    mem = _memory(tmp_path / "v.db", verbatim=True)
    obs = {n.id for n in mem.nodes("observation")}
    assert obs
    w = MemoryGraph(mem)
    assert not obs & set(_nodes(w))
    assert w.summary["total"]["observation"] == len(obs) and not w.summary["observations"]
    assert w.summary["hidden"] == 0  # hidden by the toggle, not by the cap
    w.observations = True
    assert obs <= set(_nodes(w))
    assert w.summary["shown"]["observation"] == len(obs)
    w2 = MemoryGraph(mem, observations=True)
    assert set(_nodes(w2)) == set(_nodes(w))
    # workspace and episode nodes are never drawn
    assert {r["type"] for r in _nodes(w).values()} <= {
        "entity",
        "preference",
        "decision",
        "experience",
        "observation",
    }


def test_a_search_returns_hits_and_the_edges_of_their_paths(mem: Memory) -> None:
    w = MemoryGraph(mem)
    r = _ask(w, "search", query="AuthGateway")
    found = mem.find("AuthGateway")
    assert [h["id"] for h in r["hits"]] == [h.node.id for h in found]
    auth = _by_name(mem, "AuthGateway")
    pref = _by_name(mem, "记住：鉴权走 header X，由 AuthGateway 校验 X-Requ…")
    xreq = _by_name(mem, "X-Request-Id")
    edges = {tuple(e) for e in r["edges"]}
    assert (pref, auth, "about") in edges and (pref, xreq, "about") in edges
    assert edges <= _edges(w)  # every path edge is drawn
    hit = r["hits"][0]
    assert hit["id"] == auth and hit["type"] == "entity" and hit["path"]
    assert {"score", "via", "stale", "text", "name"} <= set(hit)
    # hits and path ends are pinned, so they are drawn even under a tight cap
    assert all(_nodes(w)[h["id"]]["flags"] & PINNED for h in r["hits"])
    # an empty query clears the search
    cleared = _ask(w, "search", query="  ")
    assert cleared["hits"] == [] and not any(r["flags"] & PINNED for r in _nodes(w).values())
    assert _ask(w, "search", query="天气")["hits"] == []


def test_path_edges_reads_both_directions() -> None:
    assert path_edges("n1", ["<-about-n2(x y)", "decided->n3(z)", "same_as->n4", "junk"]) == [
        ("n2", "n1", "about"),
        ("n1", "n3", "decided"),
        ("n1", "n4", "same_as"),
    ]


def test_read_returns_the_node_its_sources_and_its_edges(mem: Memory) -> None:
    w = MemoryGraph(mem)
    pref = _by_name(mem, "记住：鉴权走 header X，由 AuthGateway 校验 X-Requ…")
    r = _ask(w, "read", node=pref)
    assert r["id"] == pref and r["type"] == "preference" and r["status"] == "active"
    assert r["text"] == "记住：鉴权走 header X，由 AuthGateway 校验 X-Request-Id。"
    assert r["sources"] == [
        {
            "session": "session-a",
            "short": "session-a",
            "seq": 18,
            "via": "rule",
            "quote": "记住：鉴权走 header X，由 AuthGateway 校验 X-Request-Id。",
        }
    ]
    assert {(e["label"], e["name"]) for e in r["outgoing"]} == {
        ("about", "AuthGateway"),
        ("about", "X-Request-Id"),
    }
    assert r["incoming"] == [] and all(e["drawn"] for e in r["outgoing"])
    # merge offers the other memories of the same type only
    assert {c["id"] for c in r["merge_choices"]} == {
        n.id for n in mem.nodes("preference") if n.id != pref
    }
    auth = _ask(w, "read", node=_by_name(mem, "AuthGateway"))
    assert {e["label"] for e in auth["incoming"]} == {"about", "decided"}
    stale = _ask(w, "read", node=_by_name(mem, "AuthGateway 的重构先别动，下周再说。"))
    assert stale["stale"] is True and stale["until"] == "下周" and stale["until_at"]
    exp = _ask(w, "read", node=_by_name(mem, "error: pytest -q tests/test_store.py"))
    assert "ModuleNotFoundError" in exp["fail"] and "pip install" in exp["fix"]
    assert _error(w, "read", node="n-nope")["type"] == "NotFound"


def test_selecting_an_event_sets_selected_event(mem: Memory) -> None:
    w = MemoryGraph(mem)
    assert w.selected_event is None
    pref = _by_name(mem, "Always run the tests before you commit.")
    r = _ask(w, "select_event", node=pref, session="session-a", seq=42)
    assert r == w.selected_event == {"session": "session-a", "seq": 42}
    assert _error(w, "select_event", node=pref, session="session-a", seq=7)["type"] == "NotFound"
    assert _error(w, "select_event", session="", seq=1)["type"] == "InvalidArgument"
    assert _error(w, "select_event", session="session-a", seq=-1)["type"] == "InvalidArgument"
    assert _error(w, "select_event", session="session-a", seq=True)["type"] == "InvalidArgument"
    assert w.selected_event == {"session": "session-a", "seq": 42}


def test_rename_through_the_handler_changes_the_store_and_the_payload(mem: Memory) -> None:
    w = MemoryGraph(mem)
    auth = _by_name(mem, "AuthGateway")
    rev = w.revision
    r = _ask(w, "rename", node=auth, name="  Auth   Gateway ")
    assert r["name"] == "Auth Gateway" and r["node"] == auth
    node = mem.store.get(auth)
    assert node is not None and node.name == "Auth Gateway" and "AuthGateway" in node.aliases
    assert _nodes(w)[auth]["label"] == "Auth Gateway" and w.revision > rev
    err = _error(w, "rename", node=auth, name="   ")
    assert err["type"] == "InvalidArgument" and "non-empty" in err["message"]
    assert _error(w, "rename", node=auth, name=3)["type"] == "InvalidArgument"
    assert _error(w, "rename", node="n-nope", name="x")["type"] == "NotFound"


def test_archive_through_the_handler_removes_the_node(mem: Memory) -> None:
    w = MemoryGraph(mem)
    pref = _by_name(mem, "以后都用 pnpm 装依赖，不要用 npm。")
    assert pref in _nodes(w)
    r = _ask(w, "archive", node=pref)
    assert r["status"] == "archived"
    node = mem.store.get(pref)
    assert node is not None and node.status == "archived"
    assert pref not in _nodes(w) and w.summary["total"]["preference"] == 5
    assert _ask(w, "read", node=pref)["status"] == "archived"  # still readable
    assert pref not in _nodes(w)  # and not drawn again
    _ask(w, "restore", node=pref)
    assert pref in _nodes(w)


def test_merge_through_the_handler_moves_edges_and_archives_the_other(mem: Memory) -> None:
    w = MemoryGraph(mem)
    auth = _by_name(mem, "AuthGateway")
    xreq = _by_name(mem, "X-Request-Id")
    r = _ask(w, "merge", keep=auth, drop=xreq)
    assert r["node"] == auth and r["dropped"] == xreq
    kept = mem.store.get(auth)
    assert kept is not None and "X-Request-Id" in kept.aliases
    assert xreq not in _nodes(w)
    dropped = mem.store.get(xreq)
    assert dropped is not None and dropped.status == "archived"
    assert not any(xreq in e[:2] for e in _edges(w))
    # two types: the engine's refusal is the reply, readable
    pref = _by_name(mem, "Always run the tests before you commit.")
    err = _error(w, "merge", keep=auth, drop=pref)
    assert err["type"] == "InvalidArgument"
    assert err["message"] == "merge joins memories of one type, not entity and preference"
    assert _error(w, "merge", keep=auth, drop=auth)["type"] == "InvalidArgument"
    assert _error(w, "merge", keep=auth, drop="")["type"] == "InvalidArgument"


def test_refresh_shows_changes_made_in_python(mem: Memory) -> None:
    w = MemoryGraph(mem)
    before = len(_nodes(w))
    node = mem.remember("Use ruff for linting.", link_to="ruff")
    assert node.id not in _nodes(w)
    assert _ask(w, "refresh")["revision"] == w.revision
    assert node.id in _nodes(w) and len(_nodes(w)) == before + 2  # the entity too


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ({"type": "nope"}, "LookupError"),
        ({"type": "search", "query": 5}, "InvalidArgument"),
        ({"type": "search", "query": "x", "top_k": 0}, "InvalidArgument"),
        ({"type": "search", "query": "x", "top_k": "8"}, "InvalidArgument"),
        ({"type": "read"}, "TypeError"),
        ({"type": "read", "node": None}, "InvalidArgument"),
        ({"type": "read", "node": ["a"]}, "InvalidArgument"),
        ({"type": "archive", "node": "n-nope"}, "NotFound"),
        ({"type": "merge", "keep": 1, "drop": 2}, "InvalidArgument"),
        ({"type": "rename", "node": "x", "name": "y", "extra": 1}, "TypeError"),
    ],
)
def test_bad_messages_get_error_replies(mem: Memory, message: dict[str, Any], kind: str) -> None:
    w = MemoryGraph(mem)
    assert _error(w, **message)["type"] == kind
    assert w.dispatch({"type": "search"}) is None  # no id: not a request, no reply
    assert w.dispatch("junk") is None


def test_max_nodes_caps_the_most_connected_and_reports_the_hidden(tmp_path: Path) -> None:
    mem = cx.Memory(tmp_path / "big.db", clock=MONDAY)
    with mem.store.batch():
        for i in range(520):
            mem.remember(f"Rule {i} about the build step {i}.", link_to=f"Topic{i % 40}")
    w = MemoryGraph(mem, max_nodes=100)
    nodes = _nodes(w)
    assert len(nodes) == 100
    assert w.summary["hidden"] == 560 - 100
    assert w.summary["hidden_by_type"] == {"preference": 460}
    # the 40 topics (13 or 14 edges each) are the most connected: all drawn
    assert sum(1 for r in nodes.values() if r["type"] == "entity") == 40
    assert "460 hidden" in repr(w)
    # a hit is always drawn, even one the cap hid
    hidden = next(n for n in mem.nodes("preference") if n.id not in nodes)
    r = _ask(w, "search", query=hidden.text)
    assert hidden.id in [h["id"] for h in r["hits"]]
    assert hidden.id in _nodes(w) and _nodes(w)[hidden.id]["flags"] & PINNED
    # reading a hidden node draws it too
    other = next(n for n in mem.nodes("preference") if n.id not in _nodes(w))
    _ask(w, "read", node=other.id)
    assert other.id in _nodes(w)
    # the payload stays compact: columns, short labels, edges by index
    import json

    assert len(json.dumps(w._graph)) < 40_000
    full = MemoryGraph(mem)
    assert len(_nodes(full)) == 400 and full.summary["hidden"] == 160
    assert len(json.dumps(full._graph)) < 120_000


def test_constructor_checks_its_arguments(mem: Memory) -> None:
    with pytest.raises(TypeError, match="shows a cx.Memory"):
        MemoryGraph("memory.db")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="did you mean 'max_nodes'"):
        MemoryGraph(mem, max_node=3)
    with pytest.raises(cx.errors.InvalidArgument):
        MemoryGraph(mem, max_nodes=0)
    w = mem.widget(height=300)
    assert isinstance(w, MemoryGraph) and w.height == 300


def test_an_empty_memory(tmp_path: Path) -> None:
    w = MemoryGraph(cx.Memory(tmp_path / "e.db"))
    assert w._graph["nodes"]["id"] == [] and w._graph["edges"]["s"] == []
    assert repr(w) == "MemoryGraph(empty, 0 edges, 0 hidden)"
    assert _ask(w, "search", query="anything")["hits"] == []


def test_the_front_end_files() -> None:
    names = [p.name for p in _static_files()]
    assert names[-2:] == ["memory_graph.js", "memory_graph.css"]
    assert all(p.is_file() for p in _static_files())
    assert MemoryGraph._css == bundle_css("memory_graph.css")
    esm = bundle("memory_graph.js")
    assert "https://" not in esm and "as default" in esm


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_bundle_parses_as_an_es_module(tmp_path: Path) -> None:
    path = tmp_path / "bundle.mjs"
    path.write_text(bundle("memory_graph.js"))
    subprocess.run(["node", "--check", str(path)], check=True, capture_output=True)


def test_the_session_map_is_a_row_of_boxes_per_session_and_a_box_reads_in_the_panel() -> None:
    from .test_memory_episodes import _family
    from .test_memory_episodes import _session as _log

    parent, child, cut = _family()
    with Memory(None) as m:
        m.ingest(_log(parent))
        m.ingest(_log(child))
        w = MemoryGraph(m)
        rows = {r["session"]: r for r in w.session_map}
        assert set(rows) == {"parent-v3", "child-v3"} and w.summary["sessions"] == 2
        p, c = rows["parent-v3"], rows["child-v3"]
        assert [b["kind"] for b in p["boxes"]] == ["checkpoint", "checkpoint", "tail"]
        assert p["boxes"][0]["text"] == "Summary one: we set up the billing service."
        assert p["from"] is None and p["hidden"] == 0
        # the fork starts from the parent's box that holds its cut
        assert [b["kind"] for b in c["boxes"]] == ["fork", "tail"]
        holder = next(b for b in p["boxes"] if b["at"] >= cut)
        assert c["from"] == {"id": holder["id"], "label": f"parent-v3#{holder['at']}"}
        # a box is never drawn as a graph node, but reads in the panel with its chain
        assert not set(_nodes(w)) & {b["id"] for r in rows.values() for b in r["boxes"]}
        view = _ask(w, "read", node=p["boxes"][1]["id"])
        assert view["type"] == "episode" and view["merge_choices"] == []
        assert [(e["label"], e["id"]) for e in view["outgoing"]] == [
            ("continues", p["boxes"][0]["id"])
        ]
        # a hand cut shows after a refresh
        m.cut(_log(parent))
        w.refresh()
        again = {r["session"]: r for r in w.session_map}["parent-v3"]
        assert len(again["boxes"]) == 4


def test_the_session_map_keeps_the_latest_boxes_of_a_long_session(tmp_path: Path) -> None:
    from ctxsdk.testing import LogBuilder
    from ctxsdk.widgets._memory_graph import _MAP_BOXES

    b = LogBuilder(session_id="long", runtime_context=None)
    for i in range(_MAP_BOXES + 4):
        b.turn(f"topic {i} " + "about the ledger " * 40).assistant(text="ok " * 40).end_turn()
        b.compact(1, f"Summary {i}.")
    b.turn("the latest ask").assistant(text="ok").end_turn()
    with Memory(tmp_path / "m.db") as m:
        m.ingest(cx.Session.from_events(b.header, b.events))
        (row,) = MemoryGraph(m).session_map
        assert len(row["boxes"]) == _MAP_BOXES and row["hidden"] == 5
        assert row["boxes"][-1]["kind"] == "tail" and row["boxes"][-2]["text"] == (
            f"Summary {_MAP_BOXES + 3}."
        )
