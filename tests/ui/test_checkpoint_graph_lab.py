"""CheckpointGraph in a real JupyterLab, driven by chromium: the graph of a folded session
renders its checkpoints and the frontier, drag pans and the wheel and buttons zoom, a click
shows a checkpoint's state, recall shows its exact messages page by page, the keyboard moves
between nodes, and light / dark screenshots; no console errors.

One notebook (one kernel) serves the tests of this module, in order. It works on a copy of
the samples' DSH home in a temporary directory (the samples are read-only): long-refactor
folded twice (forced) and rebased, as in ``tests/test_checkpoint_graph.py``.
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
import shutil
from pathlib import Path
import ctxsdk as cx
from ctxsdk.samples import SAMPLES_HOME, sample

WORK = Path({work!r})
home = WORK / "home"
if not home.exists():
    shutil.copytree(SAMPLES_HOME, home)
s = cx.Session.open(home / sample("long-refactor").relative_to(SAMPLES_HOME))
f = cx.Fold(s, store=WORK / "store", window=8192)
if not f.records:
    f.run(force=True)
    f.run(force=True)
    f.rebase()
w = f.widget(height=420)
print("folds:", len(f.records))
"""
SHOW = "w"


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("work")


_ERRORS: list[str] = []


@pytest.fixture(scope="module")
def nb(lab: Lab, browser: Any, work: Path) -> Iterator[Notebook]:
    url = lab.notebook("checkpoint_graph.ipynb", [SETUP.format(work=str(work)), SHOW])
    with notebook_page(browser, url, ".cx-graph .cx-node", _ERRORS) as page:
        yield Notebook(page)


def _transform(page: Any, nth: int = 0) -> tuple[float, float, float]:
    t = page.locator(".cx-graph .cx-graph__viewport").nth(nth).get_attribute("transform")
    x, y, k = (float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", str(t))[:3])
    return x, y, k


def _records(nb: Notebook) -> list[tuple[str, str, int]]:
    out = nb.run(
        "print('records', [(r.checkpoint_id, r.mode, len(r.shadowed)) for r in f.records])",
        "records",
    )
    return [(c, m, int(n)) for c, m, n in re.findall(r"\('(cp-[0-9a-f]+)', '(\w+)', (\d+)\)", out)]


def test_the_graph_renders_the_checkpoints_and_the_frontier(nb: Notebook) -> None:
    page = nb.page
    records = _records(nb)
    assert records, "the setup folded nothing"
    graph = page.locator(".cx-graph")
    for cid, mode, n in records:
        node = graph.locator(f'.cx-node[data-id="cp:{cid}"]')
        assert node.count() == 1, cid
        text = str(node.text_content())  # SVG: text_content, not inner_text
        assert f"{mode} · cp:{cid[3:11]}" in text and f"{n} node" in text
    # The root is on the surface (frozen); the leaf it merged hangs under it (superseded).
    assert graph.locator(".cx-node--checkpoint.cx-node--frozen").count() >= 1
    assert graph.locator(".cx-node--superseded").count() >= 1
    assert graph.locator(".cx-edge--merged").count() >= 1
    assert graph.locator(".cx-node--head").count() == 1
    assert graph.locator(".cx-node--open").count() == 1
    # The frontier: a line between the frozen band and the open band, with token figures.
    assert graph.locator("line.cx-frontier").count() == 1
    assert "frozen prefix ·" in str(graph.locator(".cx-graph__bands").text_content())
    out = nb.run("p = f.pressure(); print('pressure', p.total, p.frozen)", "pressure")
    total, frozen = (int(v) for v in out.split("pressure", 1)[1].split())
    assert graph.locator("[data-stat=surface] .cx-stat__value").inner_text() == f"{total:,} tok"
    assert f"open · {total - frozen - _head(nb):,} tok" in str(
        graph.locator(".cx-graph__bands").text_content()
    )
    assert (
        nb.run("print(repr(w))", "CheckpointGraph(")
        .strip()
        .startswith("CheckpointGraph(b93e27d4, 1 checkpoints")
    )


def _head(nb: Notebook) -> int:
    out = nb.run("print('head', w.summary['head'])", "head")
    return int(out.split("head", 1)[1])


def test_drag_pans_and_the_wheel_and_buttons_zoom(nb: Notebook) -> None:
    page = nb.page
    svg = page.locator(".cx-graph .cx-graph__svg")
    svg.scroll_into_view_if_needed()
    box = svg.bounding_box()
    x0, y0, k0 = _transform(page)
    page.mouse.move(box["x"] + 8, box["y"] + 8)
    page.mouse.down()
    page.mouse.move(box["x"] + 60, box["y"] + 48, steps=6)
    page.mouse.up()
    x1, y1, k1 = _transform(page)
    assert (round(x1 - x0), round(y1 - y0), k1) == (52, 40, k0)
    assert page.locator(".cx-graph .cx-node--selected").count() == 0  # a drag is no click
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -300)
    page.wait_for_function(
        "(k) => !document.querySelector('.cx-graph .cx-graph__viewport').getAttribute('transform').endsWith(`scale(${k})`)",
        arg=f"{k1:.4f}",
    )
    _, _, k2 = _transform(page)
    assert k2 > k1
    page.locator(".cx-graph [data-action=zoom-out]").click()
    _, _, k3 = _transform(page)
    assert k3 == pytest.approx(k2 / 1.25, rel=1e-3)
    page.locator(".cx-graph [data-action=fit]").click()
    assert _transform(page)[2] == pytest.approx(k0, rel=1e-3)  # fit is where it started


def test_clicking_a_checkpoint_shows_its_state(nb: Notebook) -> None:
    page = nb.page
    cid = (
        nb.run("print('root', f.checkpoints[0].checkpoint_id)", "root").split("root", 1)[1].strip()
    )
    page.locator(f'.cx-graph .cx-node[data-id="cp:{cid}"]').click()
    state = page.locator(".cx-graph [data-part=state]")
    state.wait_for(timeout=60_000)
    text = nb.run("print(f.checkpoints[0].text.splitlines()[0])", "")
    assert text.strip() and text.strip() in state.inner_text()
    assert page.locator(".cx-graph [data-verify=verified]").count() == 1
    assert "cx-node--selected" in str(
        page.locator(f'.cx-graph .cx-node[data-id="cp:{cid}"]').get_attribute("class")
    )
    fork = page.locator(".cx-graph [data-action=fork]")
    assert fork.is_enabled() and "Fork from here (seq" in fork.inner_text()


def test_recall_shows_the_exact_messages_page_by_page(nb: Notebook) -> None:
    page = nb.page
    leaf = next(r for r in _records(nb) if r[1] == "leaf")
    page.locator(f'.cx-graph .cx-node[data-id="cp:{leaf[0]}"]').click()
    page.locator(".cx-graph [data-action=recall]").wait_for(timeout=60_000)
    page.locator(".cx-graph [data-action=recall]").click()
    page.locator(".cx-graph [data-recall=verified]").wait_for(timeout=60_000)
    msgs = page.locator(".cx-graph .cx-msg")
    assert msgs.count() == min(20, leaf[2])
    out = nb.run(
        f"r = f.recall('cp:{leaf[0]}', 'exact', offset=0, limit=20); "
        "print('seqs', list(r.seqs)); print('first', r.messages[0]['content'][0].get('text', '')[:60])",
        "first",
    )
    seqs = [int(v) for v in re.findall(r"\d+", out.split("seqs", 1)[1].split("]", 1)[0])]
    shown = [int(str(msgs.nth(i).get_attribute("data-seq"))) for i in range(msgs.count())]
    assert shown == seqs
    first = out.split("first", 1)[1].strip()
    assert first in msgs.first.inner_text()
    assert (
        f"messages 1–{len(seqs)} of {leaf[2]}" in page.locator(".cx-graph .cx-pager").inner_text()
    )
    if leaf[2] > 20:
        page.locator(".cx-graph [data-action=next]").click()
        page.wait_for_function(
            "() => document.querySelector('.cx-graph .cx-pager__at')?.textContent.startsWith('messages 21')"
        )
        assert page.locator(".cx-graph .cx-msg").count() == min(20, leaf[2] - 20)


def test_the_keyboard_moves_between_nodes_and_opens_one(nb: Notebook) -> None:
    page = nb.page
    cells = nb.cells()
    svg = page.locator(".cx-graph .cx-graph__svg")
    svg.focus()
    page.keyboard.press("Home")
    active = lambda: page.evaluate(  # noqa: E731
        "() => document.getElementById(document.querySelector('.cx-graph .cx-graph__svg')"
        ".getAttribute('aria-activedescendant'))?.dataset.id"
    )
    assert active() == "head"
    page.keyboard.press("ArrowRight")
    assert str(active()).startswith("cp:")
    page.keyboard.press("Enter")
    page.locator(".cx-graph [data-part=state]").wait_for(timeout=60_000)
    _, _, k = _transform(page)
    page.keyboard.press("+")
    assert _transform(page)[2] == pytest.approx(k * 1.25, rel=1e-3)
    page.keyboard.press("0")
    page.keyboard.press("a")  # a notebook command outside the widget: it must not add a cell
    page.wait_for_timeout(300)
    assert nb.cells() == cells
    outline = page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"


def test_screenshots_light_and_dark(nb: Notebook, artifacts: Path) -> None:
    page = nb.page
    widget = page.locator(".cx-graph").last
    widget.scroll_into_view_if_needed()
    leaf = next(r for r in _records(nb) if r[1] == "leaf")
    page.locator(".cx-graph [data-action=fit]").click()
    page.locator(f'.cx-graph .cx-node[data-id="cp:{leaf[0]}"]').click()
    page.locator(".cx-graph [data-action=recall]").click()
    page.locator(".cx-graph [data-recall=verified]").wait_for(timeout=60_000)
    backgrounds = {}
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        nb.theme(theme)
        name = "light" if "Light" in theme else "dark"
        path = artifacts / f"checkpoint-graph-{name}.png"
        widget.screenshot(path=str(path))
        page.screenshot(path=str(artifacts / f"checkpoint-graph-lab-{name}.png"))
        print(f"screenshot: {path}")
        backgrounds[name] = (
            page.evaluate(
                "() => getComputedStyle(document.querySelector('.cx-graph')).backgroundColor"
            ),
            page.evaluate(
                "() => getComputedStyle(document.querySelector('.cx-graph .cx-node__label')).fill"
            ),
        )
    nb.theme("JupyterLab Light")

    def luminance(css: str) -> float:
        r, g, b = (int(x) for x in re.findall(r"\d+", css)[:3])
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    light_bg, light_fg = backgrounds["light"]
    dark_bg, dark_fg = backgrounds["dark"]
    assert luminance(light_bg) > 200 and luminance(dark_bg) < 80
    assert luminance(light_fg) < 100 and luminance(dark_fg) > 150  # node text reads on both


BIG = """\
from ctxsdk.testing import LogBuilder
from ctxsdk.widgets import CheckpointGraph
b = LogBuilder(3)
for i in range(64):
    b.turn(f"step {i}: look at module_{i}.py " + "detail " * 30)
    b.assistant(tool_calls=[("read", {"path": f"src/module_{i}.py"})])
    b.tool_results([f"def f_{i}(x):\\n    return x * {i}  # line\\n" * 12])
    b.next_step().assistant(text=f"module_{i}.py multiplies by {i}. " + "More. " * 20)
    b.end_turn()
big = cx.Fold(cx.Session.from_events(b.header, b.events), store=WORK / "big", window=8192, write=False)
for _ in range(60):
    q = big.session.index.surface_seqs()
    lo = big.frontier().first_open
    big.fold((q[lo], q[lo + 3]))
wb = CheckpointGraph(big, height=360)
print("built", len(big.records))
wb
"""


def test_a_graph_of_many_checkpoints_renders_only_what_is_in_view(
    nb: Notebook, artifacts: Path
) -> None:
    page = nb.page
    nb.run(BIG, "built 60", timeout=120_000)
    big = page.locator(".cx-graph").nth(1)
    big.locator(".cx-node").first.wait_for(timeout=30_000)
    big.scroll_into_view_if_needed()
    svg = big.locator(".cx-graph__svg")
    total = 60 + 2  # the checkpoints, the head and the open tail
    # Fitted, all 62 nodes are in view, drawn without their text (far zoom).
    assert int(str(svg.get_attribute("data-nodes"))) == total
    assert "cx-graph--far" in str(svg.get_attribute("class"))
    big.screenshot(path=str(artifacts / "checkpoint-graph-many.png"))
    # Zoomed in, only the nodes in view (and a margin) are in the DOM.
    for _ in range(30):  # to 1:1
        big.locator("[data-action=zoom-in]").click()
        if _transform(page, 1)[2] >= 1:
            break
    page.wait_for_function(
        "(n) => Number(document.querySelectorAll('.cx-graph')[1]"
        ".querySelector('.cx-graph__svg').dataset.nodes) < n",
        arg=total,
    )
    shown = big.locator(".cx-node").count()
    assert shown == int(str(svg.get_attribute("data-nodes"))) and shown < total * 0.75
    assert "cx-graph--far" not in str(svg.get_attribute("class"))
    # The keyboard walks along the lane; the view follows the cursor.
    svg.focus()
    page.keyboard.press("End")
    page.keyboard.press("ArrowLeft")
    active = big.locator(".cx-node--cursor")
    active.wait_for(timeout=5_000)  # drawn in the next animation frame
    assert active.count() == 1 and "leaf" in str(active.text_content())
    box, node = svg.bounding_box(), active.bounding_box()
    assert box["x"] <= node["x"] and node["x"] + node["width"] <= box["x"] + box["width"]


def test_a_workspace_graph(nb: Notebook, artifacts: Path) -> None:
    page = nb.page
    nb.run(
        "wsg = CheckpointGraph(cx.Workspace(home), store=WORK / 'store', height=320)\n"
        "print('sessions', wsg.summary['sessions'])\nwsg",
        "sessions",
    )
    g = page.locator(".cx-graph").nth(2)
    g.locator(".cx-node--session").first.wait_for(timeout=30_000)
    assert g.locator(".cx-edge--fork").count() >= 1
    assert g.locator(".cx-edge--subagent").count() == 1
    assert "1 checkpoint" in str(g.locator(".cx-node--frozen").first.text_content())
    g.locator(".cx-node--frozen").first.click()
    g.locator(".cx-kv").wait_for(timeout=60_000)
    assert "on the surface" in g.locator(".cx-panel").inner_text()
    g.scroll_into_view_if_needed()
    g.screenshot(path=str(artifacts / "checkpoint-graph-workspace-light.png"))
    nb.theme("JupyterLab Dark")
    g.screenshot(path=str(artifacts / "checkpoint-graph-workspace-dark.png"))
    nb.theme("JupyterLab Light")


def test_labels_do_not_overlap_and_the_header_counts_the_lane(nb: Notebook) -> None:
    """Notebook 04's graph: a fold, a second fold and a rebase that merged both leaves. The
    group is labelled once, and no edge label touches another label or a node; the header's
    checkpoint count is what the lane shows frozen (the merged leaves hang under the root,
    off the surface)."""
    page = nb.page
    nb.run(
        "home04 = WORK / 'home04'\n"
        "shutil.copytree(SAMPLES_HOME, home04, dirs_exist_ok=True)\n"
        "s04 = cx.Session.open(home04 / sample('long-refactor').relative_to(SAMPLES_HOME))\n"
        "f4 = cx.Fold(s04, store=WORK / 'store04', window=8192)\n"
        "f4.run(force=True)\n"
        "f4 = cx.Fold(f4.session, store=WORK / 'store04', window=8192, retain_tokens=600)\n"
        "f4.fold()\nf4.rebase()\n"
        "print('merged', [len(r.children) for r in f4.records if r.mode == 'root'])\n"
        "f4.widget(height=420)",
        "merged",
    )
    graph = page.locator(".cx-graph").last
    graph.locator(".cx-node").first.wait_for(timeout=30_000)
    graph.scroll_into_view_if_needed()
    graph.locator("[data-action=fit]").click()
    assert graph.locator(".cx-edge--merged").count() >= 2  # the setup's rebase merged two
    assert graph.locator(".cx-edge__label", has_text="merged by rebase").count() == 1
    boxes = page.evaluate(
        """() => {
        const all = document.querySelectorAll('.cx-graph'); const g = all[all.length - 1];
        const box = (el) => { const r = el.getBoundingClientRect();
            return [el.textContent, r.left, r.top, r.right, r.bottom]; };
        return {
            labels: [...g.querySelectorAll('.cx-edge__label')].map(box),
            nodes: [...g.querySelectorAll('.cx-node__box')].map(box),
        };
    }"""
    )

    def meet(a: list[Any], b: list[Any]) -> bool:
        return bool(a[1] < b[3] and b[1] < a[3] and a[2] < b[4] and b[2] < a[4])

    labels, nodes = boxes["labels"], boxes["nodes"]
    assert labels and nodes
    for i, a in enumerate(labels):
        assert not any(meet(a, b) for b in labels[i + 1 :]), a
        assert not any(meet(a, b) for b in nodes), a
    shown = graph.locator("[data-stat=checkpoints] .cx-stat__value").inner_text()
    lane = graph.locator(".cx-node--frozen:not(.cx-node--superseded):not(.cx-node--head)").count()
    frozen = graph.locator("[data-stat=frontier] .cx-stat__value").inner_text()
    assert shown == f"{lane} checkpoint{'' if lane == 1 else 's'}", (shown, lane)
    assert frozen.startswith(f"{lane} frozen"), (frozen, lane)


def test_no_console_errors() -> None:
    assert not _ERRORS, _ERRORS
