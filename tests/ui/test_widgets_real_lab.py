"""MemoryGraph and BeliefSlots on real sessions, in a real JupyterLab driven by chromium:
what a person sees must read as a tool. On a real Claude Code transcript of the
agent-sessions corpus (skipped when ``../shared/data`` is absent) and, through
``test_widgets_sample_lab.py`` (its own JupyterLab), on the embedded samples:

- a search lists its hits with a snippet of the matching text, the query's words marked;
- after the observations toggle, every drawn node is inside the graph's viewport (the view
  fits again);
- no two visible node labels overlap by more than a few pixels;
- the panels show labelled fields, never an internal line (``opinions {…}``) or a raw
  ``{key: value}`` dump; verbatim texts (a memory's text, a quote) are the data itself and
  are left out of that check;
- light and dark screenshots of both widgets (``.cache/ui-artifacts/real-*.png``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import Lab, notebook_page
from .test_context_tree_lab import Notebook

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "data" / "agent-sessions" / "claude-code"
REAL_MEMORY = CORPUS / "codemie__session-196820da.jsonl"
REAL_MERGE = [REAL_MEMORY, CORPUS / "codemie__session-624a4a58.jsonl"]

SAMPLE = """\
import sys
sys.path.insert(0, {root!r})
import ctxsdk as cx
from ctxsdk.samples import sample_paths
paths = sample_paths()
sessions = [cx.Session.open(paths[n]) for n in ("fix-flaky-test", "long-refactor")]
merge_sessions = [cx.Session.open(paths[n]) for n in ("long-refactor", "long-refactor-docs-audit")]
QUERY = "test"
"""
REAL = """\
import sys
sys.path.insert(0, {root!r})
import ctxsdk as cx
sessions = [cx.Session.from_claude_code({memory!r})]
merge_sessions = [cx.Session.from_claude_code(p) for p in {merge!r}]
QUERY = "session file"
"""
BUILD = """\
mem = cx.Memory({db!r})
for s in sessions:
    mem.ingest(s)
    mem.ingest(s, verbatim=True)
wm = mem.widget()
wm.height = 460
wb = cx.Merge(merge_sessions).run().widget()
print("built", len(mem), len(wb.result.slots))
"""

# every panel text that is the widget's own (verbatim texts and quotes are left out)
_OWN_TEXT = """(sel) => { const el = document.querySelector(sel); if (!el) return "";
  const c = el.cloneNode(true);
  for (const v of c.querySelectorAll('.cx-mtext, .cx-quote, blockquote')) v.remove();
  return c.innerText; }"""
_RAW = re.compile(r"\{[^{}]*:[^{}]*\}")

_ERRORS: list[str] = []


KIND = "real"  # test_widgets_sample_lab.py runs the same tests on the embedded samples


@pytest.fixture(scope="module")
def nb(
    request: pytest.FixtureRequest,
    lab: Lab,
    browser: Any,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Notebook]:
    kind = str(request.module.KIND)
    if kind == "real" and not all(p.exists() for p in REAL_MERGE):
        pytest.skip(f"the agent-sessions corpus is not at {CORPUS}")
    db = tmp_path_factory.mktemp("mem") / "memory.db"
    head = (
        SAMPLE.format(root=str(ROOT))
        if kind == "sample"
        else REAL.format(
            root=str(ROOT), memory=str(REAL_MEMORY), merge=[str(p) for p in REAL_MERGE]
        )
    )
    cells = [head, BUILD.format(db=str(db)), "wm", "wb"]
    url = lab.notebook(f"widgets_{kind}.ipynb", cells)
    with notebook_page(browser, url, ".cx-slots .cx-srow", _ERRORS, height=1400) as page:
        page.wait_for_selector(".cx-mgraph .cx-mnode[data-id]", timeout=90_000)
        nb = Notebook(page)
        nb.kind = kind  # type: ignore[attr-defined]
        yield nb
    assert not [e for e in _ERRORS if "favicon" not in e], _ERRORS


def _labels_overlap(page: Any) -> list[str]:
    return list(
        page.evaluate(
            """() => {
      const boxes = [...document.querySelectorAll('.cx-mgraph .cx-mnode__label')]
        .filter((t) => getComputedStyle(t).display !== 'none' && t.textContent)
        .map((t) => [t.textContent, t.getBoundingClientRect()]);
      const out = [];
      for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
        const [a, p] = boxes[i], [b, q] = boxes[j];
        const w = Math.min(p.right, q.right) - Math.max(p.left, q.left);
        const h = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
        if (w > 3 && h > 3) out.push(`${a} / ${b} (${w.toFixed(1)}x${h.toFixed(1)})`);
      }
      return out;
    }"""
        )
    )


def _outside(page: Any) -> list[str]:
    return list(
        page.evaluate(
            """() => {
      const svg = document.querySelector('.cx-mgraph svg.cx-mgraph__svg').getBoundingClientRect();
      return [...document.querySelectorAll('.cx-mgraph .cx-mnode__shape')]
        .filter((s) => !s.closest('.cx-mlegend'))
        .map((s) => [s.closest('.cx-mnode').dataset.id, s.getBoundingClientRect()])
        .filter(([, r]) => r.left < svg.left - 1 || r.top < svg.top - 1 || r.right > svg.right + 1 || r.bottom > svg.bottom + 1)
        .map(([id]) => id);
    }"""
        )
    )


def test_observations_toggle_fits_every_node_in_view(nb: Notebook) -> None:
    page = nb.page
    widget = page.locator(".cx-mgraph").first
    widget.scroll_into_view_if_needed()
    assert widget.locator(".cx-mgraph__nodes .cx-mnode--observation").count() == 0
    widget.locator("[data-control=observations]").check()
    page.wait_for_function(
        "() => document.querySelectorAll('.cx-mgraph__nodes .cx-mnode--observation').length > 0",
        timeout=30_000,
    )
    page.wait_for_timeout(300)
    assert _outside(page) == []
    assert _labels_overlap(page) == []


def test_a_search_lists_hits_with_a_snippet(nb: Notebook) -> None:
    page = nb.page
    widget = page.locator(".cx-mgraph").first
    query = str(nb.run("print('q=' + QUERY)", "q=").split("q=", 1)[1].strip())
    widget.locator("[data-control=search]").fill(query)
    widget.locator("[data-action=search]").click()
    page.wait_for_selector(".cx-mgraph .cx-hit", timeout=30_000)
    hits = widget.locator(".cx-hit")
    assert hits.count() >= 1
    first = hits.first.locator("[data-part=snippet]")
    assert len(first.inner_text().strip()) > 20
    marked = [m.lower() for m in first.locator("mark").all_inner_texts()]
    words = [w for w in query.lower().split() if len(w) >= 2]
    assert marked and all(any(w in m or m in w for w in words) for m in marked)
    # the hits and the rest of the graph still keep their labels apart
    assert _labels_overlap(page) == []


def test_the_panels_show_no_internal_lines(nb: Notebook) -> None:
    page = nb.page
    graph = page.locator(".cx-mgraph").first
    graph.locator(".cx-hit .cx-hit__name").first.click()
    graph.locator("[data-part=panel] [data-part=sources]").wait_for(timeout=20_000)
    own = str(page.evaluate(_OWN_TEXT, ".cx-mgraph [data-part=panel]"))
    assert own.strip() and not _RAW.search(own) and "opinions {" not in own
    slots = page.locator(".cx-slots").first
    slots.scroll_into_view_if_needed()
    row = slots.locator(".cx-srow:not(.cx-srow--head)").first
    row.click()
    slots.locator("[data-part=opinions]").first.wait_for(timeout=20_000)
    own = str(page.evaluate(_OWN_TEXT, ".cx-slots"))
    assert "opinions {" not in own and not _RAW.search(own), own[:2000]
    held = slots.locator(".cx-opinion").count()
    assert held >= 1


def test_screenshots_light_and_dark(nb: Notebook, artifacts: Path) -> None:
    page = nb.page
    kind = nb.kind  # type: ignore[attr-defined]
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        nb.theme(theme)
        name = "light" if "Light" in theme else "dark"
        for sel, what in ((".cx-mgraph", "memory-graph"), (".cx-slots", "belief-slots")):
            w = page.locator(sel).first
            w.scroll_into_view_if_needed()
            page.evaluate("() => document.activeElement?.blur()")
            path = artifacts / f"real-{kind}-{what}-{name}.png"
            w.screenshot(path=str(path))
            print(f"screenshot: {path}")
    nb.theme("JupyterLab Light")
