"""Every shipped notebook, opened cold in a real JupyterLab (not run, so not trusted), reads
as well as its text form: JupyterLab sanitizes the saved HTML of a notebook it did not run
(no ``<style>``, no ``<svg>``, no ``var()`` in a style attribute), and nothing may collapse.

For every output of every notebook in ``notebooks/``:

- it shows something wherever its ``text/plain`` has content; a widget shows its static
  picture (its HTML), never only its one-line text;
- no text reads as two run together: each visible text in the page is a text of the saved
  HTML (a stripped ``<svg>`` leaves its labels as one run-on text, ``192tool schemas``), and
  no two inline pieces touch letter to letter (``badgerole``);
- each ``label: value`` line of the text form stays apart in what the page shows;
- light and dark screenshots of notebooks 01 and 04 (``.cache/ui-artifacts/cold-*.png``).

The notebooks are copied into a fresh JupyterLab whose data directory has never signed them,
so JupyterLab treats them as a person's first open of a clone.
"""

from __future__ import annotations

import json
import re
import shutil
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from .conftest import Lab

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
SHOTS = ("01-sessions.ipynb", "04-fold.ipynb")
WIDGET = "application/vnd.jupyter.widget-view+json"

# For each output of each code cell: what JupyterLab drew and, from the visible page, every
# text that is not a text of the saved HTML and every pair of inline pieces that touch.
_READ = """() => {
  const nb = window.jupyterapp.shell.currentWidget.content;
  const word = /[\\p{L}\\p{N}]/u;
  const squash = (t) => t.replace(/\\s+/g, ' ').trim();
  const shown = (el) => el.checkVisibility ? el.checkVisibility() : el.offsetParent !== null;
  const textOf = (n) => n.nodeType === 3 ? n.data : (n.innerText ?? n.textContent ?? '');
  const inline = (n) => n.nodeType === 3 ||
    (n.nodeType === 1 && getComputedStyle(n).display.startsWith('inline') && shown(n));
  const out = [];
  nb.widgets.forEach((cell, i) => {
    if (cell.model.type !== 'code') return;
    const area = cell.outputArea;
    area.widgets.forEach((child, j) => {
      const model = area.model.get(j);
      if (!model) return;
      const node = child.node.querySelector('.jp-OutputArea-output') || child.node;
      const data = model.toJSON().data || {};
      const saved = [];
      if (typeof data['text/html'] === 'string' || Array.isArray(data['text/html'])) {
        const src = [].concat(data['text/html']).join('');
        const doc = new DOMParser().parseFromString(src, 'text/html');
        const walk = doc.createTreeWalker(doc.body, NodeFilter.SHOW_TEXT);
        for (let t = walk.nextNode(); t; t = walk.nextNode()) saved.push(squash(t.data));
      }
      const orphans = [];
      if (saved.length) {
        const walk = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
        for (let t = walk.nextNode(); t; t = walk.nextNode()) {
          const s = squash(t.data);
          if (!s || !t.parentElement || !shown(t.parentElement)) continue;
          if (!saved.some((x) => x.includes(s))) orphans.push(s.slice(0, 120));
        }
      }
      const touching = [];
      for (const el of [node, ...node.querySelectorAll('*')]) {
        if (!shown(el) || el.closest('pre')) continue;
        let prev = '';
        for (const n of el.childNodes) {
          if (!inline(n)) { prev = ''; continue; }
          const t = textOf(n);
          if (!t) continue;
          if (prev && word.test(prev.slice(-1)) && word.test(t[0]))
            touching.push(squash(prev).slice(-30) + '|' + squash(t).slice(0, 30));
          prev = t;
        }
      }
      out.push({cell: i, output: j, type: model.type, mimes: Object.keys(data),
                cls: node.className, text: node.innerText, orphans, touching,
                plain: [].concat(data['text/plain'] || []).join(''),
                trusted: model.trusted});
    });
  });
  return out;
}"""

_PAIR = re.compile(r"^\s+([A-Za-z][\w .'/-]{0,30}): (\S[^\n]*)$", re.M)


def _no_windowing(lab: Lab) -> None:
    """Draw every cell (JupyterLab draws only the cells in view by default)."""
    url = f"{lab.url}/lab/api/settings/@jupyterlab/notebook-extension:tracker"
    body = json.dumps({"raw": json.dumps({"windowingMode": "none"})}).encode()
    req = urllib.request.Request(
        url, data=body, method="PUT", headers={"Content-Type": "application/json"}
    )
    urllib.request.urlopen(req, timeout=10).close()


@pytest.fixture(scope="module")
def cold_page(lab: Lab, browser: Any) -> Any:
    _no_windowing(lab)
    for name in NOTEBOOKS:
        shutil.copy(ROOT / "notebooks" / name, lab.root / name)
    # tall: a screenshot shows a notebook's first outputs, not one screen of it
    context = browser.new_context(viewport={"width": 1280, "height": 3000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    try:
        yield page, errors
    finally:
        context.close()


def _open(page: Any, lab: Lab, name: str) -> list[dict[str, Any]]:
    page.goto(f"{lab.url}/lab/tree/{name}?reset")
    page.wait_for_selector(".jp-OutputArea-output", timeout=90_000)
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget?.content?.widgets?.length > 0"
    )
    page.wait_for_timeout(800)  # outputs of the last cells settle
    outputs: list[dict[str, Any]] = page.evaluate(_READ)
    return outputs


def _problems(outputs: list[dict[str, Any]]) -> list[str]:
    found: list[str] = []
    for o in outputs:
        where = f"cell {o['cell']} output {o['output']}"
        text, plain = o["text"], o["plain"]
        if o["trusted"]:
            found.append(f"{where}: trusted, so this is no cold open")
        if plain.strip() and not text.strip():
            found.append(f"{where}: shows nothing; its text form is {plain[:80]!r}")
        if WIDGET in o["mimes"]:
            name = plain.split("(", 1)[0]
            if "jp-RenderedHTMLCommon" not in o["cls"] or name not in text:
                found.append(f"{where}: a {name} shows no static picture: {text[:80]!r}")
        found += [f"{where}: run-on text {t!r}" for t in o["orphans"]]
        found += [f"{where}: pieces touch {t!r}" for t in o["touching"]]
        flat = re.sub(r"\s+", " ", text)
        for label, value in _PAIR.findall(plain):
            first = value.split()[0]
            if f"{label}{first}" in flat:
                found.append(f"{where}: {label!r} runs into its value {first!r}")
    return found


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_a_notebook_opened_cold_reads_as_its_text(
    cold_page: tuple[Any, list[str]], lab: Lab, name: str
) -> None:
    page, errors = cold_page
    outputs = _open(page, lab, name)
    assert outputs, f"{name}: no outputs drawn"
    rich = [o for o in outputs if "text/html" in o["mimes"]]
    assert rich, f"{name}: no HTML output to check"
    problems = _problems(outputs)
    assert not problems, f"{name} opened cold:\n" + "\n".join(problems[:40])
    assert not errors, errors


def test_the_checks_find_what_a_sanitizer_collapses(
    cold_page: tuple[Any, list[str]], lab: Lab
) -> None:
    # the checks above are not vacuous: outputs as ctxsdk wrote them before (an inline SVG,
    # badges side by side, a widget with only its text form) are each caught
    import nbformat

    bad = {
        "svg": "<div><svg><title>the window</title><rect><title>user: 252</title></rect>"
        "<text>free 9</text></svg></div>",
        "touch": "<div><span class='cx-badge'>user</span><span>seq 3</span></div>",
    }
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    for html in bad.values():
        cell = nbformat.v4.new_code_cell("x")
        data = {"text/html": html, "text/plain": "x"}
        cell.outputs = [nbformat.v4.new_output("execute_result", data=data, execution_count=1)]
        nb.cells.append(cell)
    widget = nbformat.v4.new_code_cell("w")
    view = {"model_id": "0" * 32, "version_major": 2, "version_minor": 0}
    data = {WIDGET: view, "text/plain": "ContextTree(5f0c9a7e, 31 nodes)"}
    widget.outputs = [nbformat.v4.new_output("execute_result", data=data, execution_count=2)]
    nb.cells.append(widget)
    nbformat.write(nb, lab.root / "collapsed.ipynb")
    page, _ = cold_page
    found = "\n".join(_problems(_open(page, lab, "collapsed.ipynb")))
    assert "run-on text 'the windowuser: 252free 9'" in found, found
    assert "pieces touch 'user|seq 3'" in found, found
    assert "a ContextTree shows no static picture" in found, found


def test_cold_screenshots_light_and_dark(
    cold_page: tuple[Any, list[str]], lab: Lab, artifacts: Path
) -> None:
    page, _ = cold_page
    for name in SHOTS:
        _open(page, lab, name)
        for theme in ("JupyterLab Light", "JupyterLab Dark"):
            page.evaluate(
                "(t) => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})",
                theme,
            )
            light = "true" if "Light" in theme else "false"
            page.wait_for_selector(
                f'body[data-jp-theme-light="{light}"]', state="attached", timeout=20_000
            )
            page.wait_for_timeout(600)
            path = artifacts / f"cold-{name[:2]}-{'light' if light == 'true' else 'dark'}.png"
            page.screenshot(path=str(path))
            assert path.stat().st_size > 10_000
    page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme', "
        "{theme: 'JupyterLab Light'})"
    )
