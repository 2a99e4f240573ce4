"""MemoryGraph in a real JupyterLab, driven by chromium: the graph renders nodes of each
type (a stale decision marked), a search highlights the hits and their path edges, clicking
a node opens its sources, a clicked seq reaches the kernel (``selected_event``), rename from
the panel changes the label in the DOM and the store, a merge of two types shows the engine's
error in the panel, archive removes the node, ↻ shows a change made in Python, the session
map lists each session's boxes and opens them, and light / dark screenshots; no console
errors.

One notebook (one kernel) serves the tests of this module, in order. The memory is the seed's
session A, read ten days later (its two deadline decisions are stale), with four named
entities and the edges to them added explicitly (``mem.remember`` / ``mem.link``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import Lab, notebook_page
from .test_context_tree_lab import Notebook

SETUP = """\
import sys
sys.path.insert(0, {root!r})
from datetime import timedelta
import ctxsdk as cx
from ctxsdk.widgets import MemoryGraph
from ctxsdk.widgets._memory_graph import path_edges
from tests.test_memory_ingest import SESSION_A, MONDAY, _session

mem = cx.Memory({db!r}, clock=MONDAY + timedelta(days=10))
mem.ingest(_session(SESSION_A), now=MONDAY)
# The ingest keeps the project's facts as entities (test command, the stack, ...), not
# names said in the chat: the named entities the tests click, and the edges to them, are set
# here with the public API.
for name in ("AuthGateway", "X-Request-Id", "TriviumDB", "DeepSeek_Harness"):
    mem.remember(name, type="entity")
# (each said sentence is also an observation, the record: link the memories)
by_text = {{n.text: n.id for n in mem.nodes() if n.type != "observation"}}
pref = by_text["记住：鉴权走 header X，由 AuthGateway 校验 X-Request-Id。"]
mem.link(pref, "AuthGateway", "about")
mem.link(pref, "X-Request-Id", "about")
for text, entity in (
    ("AuthGateway 的重构先别动，下周再说。", "AuthGateway"),
    ("我们采用方案 A：TriviumDB 只在一个进程里打开。", "TriviumDB"),
    ("就用这个单文件的方案，不要拆成多个模块。", "TriviumDB"),
    ("Let's postpone the DeepSeek_Harness migration until Friday.", "DeepSeek_Harness"),
):
    mem.link(by_text[text], entity, "decided")
w = MemoryGraph(mem, height=480)
ids = {{n.name: n.id for n in mem.store.nodes()}}
print("nodes:", len(mem))
"""
SHOW = "w"

AUTH = "AuthGateway"
PREF = "记住：鉴权走 header X，由 AuthGateway 校验 X-Requ…"
PNPM = "以后都用 pnpm 装依赖，不要用 npm。"

_ERRORS: list[str] = []


@pytest.fixture(scope="module")
def nb(lab: Lab, browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Notebook]:
    root = Path(__file__).resolve().parents[2]
    db = tmp_path_factory.mktemp("mem") / "memory.db"
    url = lab.notebook("memory_graph.ipynb", [SETUP.format(root=str(root), db=str(db)), SHOW])
    with notebook_page(browser, url, ".cx-mgraph .cx-mnode[data-id]", _ERRORS, height=1200) as page:
        yield Notebook(page)


def _py(nb: Notebook, expr: str, tag: str) -> str:
    out = nb.run(f"print({tag!r}, {expr})", tag)
    return out.split(tag, 1)[1].strip()


def _id(nb: Notebook, name: str) -> str:
    return _py(nb, f"ids[{name!r}]", "id")


def _node(page: Any, node_id: str) -> Any:
    return page.locator(f'.cx-mgraph .cx-mnode[data-id="{node_id}"]')


def test_the_graph_renders_nodes_of_each_type(nb: Notebook) -> None:
    page = nb.page
    widget = page.locator(".cx-mgraph").first
    for kind, n in (("entity", 9), ("preference", 6), ("decision", 4), ("experience", 1)):
        assert widget.locator(f".cx-mnode--{kind}").count() == n, kind
    assert widget.locator(".cx-mnode--observation").count() == 0
    assert widget.locator(".cx-medge").count() == 6
    assert widget.locator(".cx-mgraph__edges .cx-medge--decided").count() == 4
    assert widget.locator(".cx-mnode--hub").count() == 9
    stale = widget.locator(".cx-mnode--stale")
    assert stale.count() == 2 and "stale" in str(stale.first.get_attribute("aria-label"))
    auth = _node(page, _id(nb, AUTH))
    assert auth.locator("[data-part=label]").text_content() == AUTH
    assert "stale2" in str(widget.locator('[data-stat="stale"]').text_content())
    assert nb.run("print(repr(w))", "MemoryGraph(").strip().startswith("MemoryGraph(9/9 entity")


def test_a_search_highlights_the_hits_and_their_paths(nb: Notebook) -> None:
    page = nb.page
    widget = page.locator(".cx-mgraph").first
    widget.locator("[data-control=search]").fill("AuthGateway")
    widget.locator("[data-action=search]").click()
    page.wait_for_selector(".cx-mgraph .cx-hit", timeout=20_000)
    hits = re.findall(
        r"'(n[0-9a-f]+)'", _py(nb, "[h.node.id for h in mem.find('AuthGateway', top_k=8)]", "hits")
    )
    assert [
        widget.locator(".cx-hit").nth(i).get_attribute("data-id") for i in range(len(hits))
    ] == hits
    marked = widget.locator(".cx-mnode--hit")
    assert sorted(
        str(marked.nth(i).get_attribute("data-id")) for i in range(marked.count())
    ) == sorted(hits)
    auth, pref = _id(nb, AUTH), _id(nb, PREF)
    edge = widget.locator(f'.cx-medge--hit[data-src="{pref}"][data-dst="{auth}"]')
    assert edge.count() == 1 and edge.get_attribute("data-label") == "about"
    expected = _py(
        nb,
        "len({e for h in mem.find('AuthGateway', top_k=8) for e in path_edges(h.node.id, h.path)})",
        "paths",
    )
    assert widget.locator(".cx-medge--hit").count() == int(expected) >= 2
    # the rest fades
    assert "cx-mgraph--searching" in str(
        widget.locator("svg.cx-mgraph__svg").get_attribute("class")
    )


def test_clicking_a_node_opens_its_sources(nb: Notebook) -> None:
    page = nb.page
    widget = page.locator(".cx-mgraph").first
    pref = _id(nb, PREF)
    _node(page, pref).locator(".cx-mnode__shape").click()
    panel = widget.locator("[data-part=panel]")
    panel.locator(".cx-source").first.wait_for(timeout=60_000)
    assert panel.locator("[data-part=name]").inner_text() == PREF
    src = panel.locator(".cx-source").first
    assert (
        src.get_attribute("data-session") == "session-a" and src.get_attribute("data-seq") == "18"
    )
    assert "记住：鉴权走 header X，由 AuthGateway 校验 X-Request-Id。" in src.inner_text()
    assert "session-" in src.inner_text() and "rule" in src.inner_text()
    out = panel.locator(".cx-medgeitem")
    # its entities, and the record it was read from (observed_in the user's message at 18)
    assert sorted(out.nth(i).inner_text().split()[-1] for i in range(out.count())) == [
        "AuthGateway",
        "X-Request-Id",
        "user@18",
    ]
    assert "cx-mnode--selected" in str(_node(page, pref).get_attribute("class"))
    # an edge jumps to the node at its other end
    panel.locator('.cx-medgeitem[data-label="about"] [data-action=jump]').first.click()
    page.wait_for_function(
        "(n) => document.querySelector('.cx-mgraph [data-part=name]')?.textContent === n",
        arg=AUTH,
        timeout=60_000,
    )
    assert panel.locator(".cx-medgeitem").count() == 2  # <-about, <-decided


def test_clicking_a_seq_reaches_the_kernel(nb: Notebook) -> None:
    page = nb.page
    widget = page.locator(".cx-mgraph").first
    pnpm = _id(nb, PNPM)
    _node(page, pnpm).locator(".cx-mnode__shape").click(force=True)
    panel = widget.locator("[data-part=panel]")
    page.wait_for_function(
        "(n) => document.querySelector('.cx-mgraph [data-part=name]')?.textContent === n",
        arg=PNPM,
        timeout=60_000,
    )
    panel.locator("[data-action=event]").first.click()
    page.wait_for_selector(".cx-mgraph .cx-seq--selected", timeout=60_000)
    assert _py(nb, "w.selected_event", "selected") == "{'session': 'session-a', 'seq': 24}"


def test_rename_from_the_panel_changes_the_label_and_the_store(nb: Notebook) -> None:
    page = nb.page
    widget = page.locator(".cx-mgraph").first
    auth = _id(nb, AUTH)
    _node(page, auth).locator(".cx-mnode__shape").click(force=True)
    panel = widget.locator("[data-part=panel]")
    page.wait_for_function(
        "(n) => document.querySelector('.cx-mgraph [data-part=name]')?.textContent === n",
        arg=AUTH,
        timeout=60_000,
    )
    panel.locator("[data-control=rename]").fill("Auth Gateway")
    panel.locator("[data-action=rename]").click()
    page.wait_for_function(
        '(id) => document.querySelector(`.cx-mgraph .cx-mnode[data-id="${id}"] [data-part=label]`)'
        "?.textContent === 'Auth Gateway'",
        arg=auth,
        timeout=20_000,
    )
    assert _py(
        nb, "mem.get(ids['AuthGateway']).name, mem.get(ids['AuthGateway']).aliases", "renamed"
    ) == ("Auth Gateway ('AuthGateway',)")
    page.wait_for_function(
        "() => document.querySelector('.cx-mgraph [data-part=name]')?.textContent === 'Auth Gateway'",
        timeout=60_000,
    )
    assert "AuthGateway" in panel.locator('[data-k="aliases"]').inner_text()


def test_a_merge_of_two_types_shows_the_error_in_the_panel(nb: Notebook) -> None:
    page = nb.page
    widget = page.locator(".cx-mgraph").first
    panel = widget.locator("[data-part=panel]")
    # the picker lists entities only; force a preference id into it to see the engine refuse
    pref = _id(nb, PREF)
    panel.locator("[data-control=merge-pick]").evaluate(
        "(s, id) => { const o = document.createElement('option'); o.value = id; o.textContent = 'x';"
        " s.append(o); s.value = id; }",
        pref,
    )
    panel.locator("[data-action=merge]").click()
    err = panel.locator("[data-part=action-error]")
    err.wait_for(state="visible", timeout=60_000)
    assert err.inner_text() == (
        "InvalidArgument: merge joins memories of one type, not entity and preference"
    )
    assert _py(nb, "mem.get(ids[" + repr(PREF) + "]).status", "status") == "active"


def test_archive_removes_the_node(nb: Notebook) -> None:
    page = nb.page
    widget = page.locator(".cx-mgraph").first
    pnpm = _id(nb, PNPM)
    _node(page, pnpm).locator(".cx-mnode__shape").click(force=True)
    panel = widget.locator("[data-part=panel]")
    page.wait_for_function(
        "(n) => document.querySelector('.cx-mgraph [data-part=name]')?.textContent === n",
        arg=PNPM,
        timeout=60_000,
    )
    panel.locator("[data-action=archive]").click()
    _node(page, pnpm).wait_for(state="detached", timeout=20_000)
    panel.locator("[data-part=archived]").wait_for(timeout=60_000)
    assert _py(nb, f"mem.get({pnpm!r}).status", "status") == "archived"
    assert widget.locator(".cx-mnode--preference").count() == 5


def test_refresh_shows_a_change_made_in_python(nb: Notebook) -> None:
    page = nb.page
    widget = page.locator(".cx-mgraph").first
    new = _py(nb, "mem.remember('Use ruff for linting.', link_to='ruff').id", "new")
    assert _node(page, new).count() == 0
    widget.locator("[data-action=refresh]").click()
    _node(page, new).wait_for(timeout=20_000)
    assert widget.locator(".cx-mnode--entity").count() == 10


def test_screenshots_light_and_dark(nb: Notebook, artifacts: Path) -> None:
    page = nb.page
    widget = page.locator(".cx-mgraph").first
    widget.locator("[data-control=search]").fill("AuthGateway")
    widget.locator("[data-action=search]").click()
    page.wait_for_selector(".cx-mgraph .cx-hit", timeout=20_000)
    auth = _id(nb, AUTH)
    _node(page, auth).locator(".cx-mnode__shape").click(force=True)
    widget.locator("[data-part=panel] .cx-source").first.wait_for(timeout=60_000)
    widget.locator("[data-action=fit]").click()
    widget.scroll_into_view_if_needed()
    page.evaluate("() => document.activeElement?.blur()")
    colours = {}
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        nb.theme(theme)
        name = "light" if "Light" in theme else "dark"
        path = artifacts / f"memory-graph-{name}.png"
        widget.screenshot(path=str(path))
        print(f"screenshot: {path}")
        colours[name] = page.evaluate(
            "() => [getComputedStyle(document.querySelector('.cx-mgraph')).backgroundColor,"
            " getComputedStyle(document.querySelector('.cx-mgraph .cx-mnode__label')).fill]"
        )
    # the whole graph, no search
    widget.locator("[data-action=clear-search]").click()
    page.wait_for_function(
        "() => !document.querySelector('.cx-mgraph svg').classList.contains('cx-mgraph--searching')"
    )
    widget.screenshot(path=str(artifacts / "memory-graph-dark-all.png"))
    nb.theme("JupyterLab Light")
    widget.screenshot(path=str(artifacts / "memory-graph-light-all.png"))

    def luminance(css: str) -> float:
        r, g, b = (int(x) for x in re.findall(r"\d+", css)[:3])
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    (light_bg, light_fg), (dark_bg, dark_fg) = colours["light"], colours["dark"]
    assert luminance(light_bg) > 200 and luminance(dark_bg) < 80
    assert luminance(light_fg) < 100 and luminance(dark_fg) > 150


def test_the_observations_toggle_draws_them(nb: Notebook) -> None:
    page = nb.page
    widget = page.locator(".cx-mgraph").first
    n = int(
        _py(
            nb,
            "mem.ingest(_session(SESSION_A), verbatim=True, now=MONDAY) and "
            "len(mem.nodes('observation'))",
            "obs",
        )
    )
    assert n > 0
    widget.locator("[data-action=refresh]").click()
    page.wait_for_timeout(500)
    assert widget.locator(".cx-mgraph__nodes .cx-mnode--observation").count() == 0
    widget.locator("[data-control=observations]").check()
    page.wait_for_function(
        "(n) => document.querySelectorAll('.cx-mgraph__nodes .cx-mnode--observation').length === n",
        arg=n,
        timeout=20_000,
    )
    assert _py(nb, "w.observations, w.summary['shown']['observation']", "shown") == f"True {n}"
    widget.locator("[data-control=observations]").uncheck()
    page.wait_for_function(
        "() => !document.querySelector('.cx-mgraph__nodes .cx-mnode--observation')",
        timeout=20_000,
    )


BIG = """\
big = cx.Memory(None, clock=MONDAY)
with big.store.batch():
    for i in range(520):
        big.remember(f"Rule {i} about the build step {i}.", link_to=f"Topic{i % 40}")
wb = MemoryGraph(big, height=420, max_nodes=200)
print("built", len(big))
wb
"""


def test_a_large_memory_is_capped_and_says_how_many_are_hidden(
    nb: Notebook, artifacts: Path
) -> None:
    page = nb.page
    nb.run(BIG, "built 560", timeout=120_000)
    big = page.locator(".cx-mgraph").nth(1)
    big.locator(".cx-mnode").first.wait_for(timeout=30_000)
    big.scroll_into_view_if_needed()
    assert big.locator(".cx-mnode").count() == 200
    assert big.locator(".cx-mnode--hub").count() == 40
    note = big.locator("[data-part=hidden]").inner_text()
    assert "360 more not drawn" in note and "360 preference" in note
    big.screenshot(path=str(artifacts / "memory-graph-many.png"))


FAMILY = """\
from tests.test_memory_episodes import _family, _session as _log
parent, child, cut = _family()
mem.ingest(_log(parent)); mem.ingest(_log(child))
w.refresh()
print("map", [r["label"] for r in w.session_map])
"""


def test_the_session_map_shows_each_session_s_boxes_and_opens_them(
    nb: Notebook, artifacts: Path
) -> None:
    page = nb.page
    nb.run(FAMILY, "map [", timeout=60_000)
    widget = page.locator(".cx-mgraph").first
    smap = widget.locator("[data-part=session-map]")
    smap.locator('.cx-smap__row[data-session="parent-v3"]').wait_for(timeout=20_000)
    parent = smap.locator('.cx-smap__row[data-session="parent-v3"] .cx-smap__box')
    assert [parent.nth(i).get_attribute("data-kind") for i in range(parent.count())] == [
        "checkpoint",
        "checkpoint",
        "tail",
    ]
    child = smap.locator('.cx-smap__row[data-session="child-v3"]')
    assert child.locator(".cx-smap__box").first.get_attribute("data-kind") == "fork"
    # a box opens in the panel: its summary and its chain
    parent.nth(1).click()
    panel = widget.locator("[data-part=panel]")
    panel.locator("[data-part=text]").wait_for(timeout=60_000)
    assert "Summary two: we migrated the ledger." in panel.inner_text()
    assert panel.locator('.cx-medgeitem[data-label="continues"]').count() >= 1
    assert "cx-smap__box--selected" in (parent.nth(1).get_attribute("class") or "")
    # a box is renamed from the panel, never merged or archived there
    assert panel.locator("[data-action=rename]").count() == 1
    assert panel.locator("[data-action=merge], [data-action=archive]").count() == 0
    # the fork's origin is a link to the parent's box that holds the cut
    child.locator("[data-action=fork-origin]").click()
    page.wait_for_function(
        "() => document.querySelector('.cx-mgraph .cx-smap__box--selected')"
        "?.closest('.cx-smap__row')?.dataset.session === 'parent-v3'",
        timeout=60_000,
    )
    smap.scroll_into_view_if_needed()
    page.evaluate("() => document.activeElement?.blur()")
    for theme in ("JupyterLab Dark", "JupyterLab Light"):
        nb.theme(theme)
        name = "light" if "Light" in theme else "dark"
        widget.screenshot(path=str(artifacts / f"memory-graph-session-map-{name}.png"))


def test_no_console_errors() -> None:
    assert not _ERRORS, _ERRORS
