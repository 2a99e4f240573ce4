"""ContextTree in a real JupyterLab, driven by chromium: render, switch, expand, preview,
apply, keyboard, drafts across a kernel restart, and light / dark screenshots.

One notebook (one kernel) serves the tests of this module, in order; each test sets up what
it checks. The notebook works on a copy of the ``long-refactor`` sample in a temporary
directory (the samples are read-only), with a DraftStore next to it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ctxsdk as cx

from .conftest import Lab, open_notebook

SETUP = """\
from pathlib import Path
import ctxsdk as cx
from ctxsdk.samples import sample
from ctxsdk.assemble import DraftStore
from ctxsdk.widgets import ContextTree

WORK = Path({work!r})
log = next(WORK.glob("long-refactor/*.jsonl*"), None)
if log is None:
    log = cx.Session.open(sample("long-refactor")).save(WORK / "long-refactor")
a = cx.Assembly(cx.Session.open(log), tokenizer="estimate", drafts=DraftStore(WORK / "drafts"))
w = ContextTree(a, height=360)
print("log:", log)
"""
SHOW = "w"

_RUN_CELL = """async (code) => {
  const panel = window.jupyterapp.shell.currentWidget;
  const nb = panel.content;
  const index = nb.model.cells.length;
  nb.model.sharedModel.insertCell(index, { cell_type: "code", source: code });
  nb.activeCellIndex = index;
  await window.jupyterapp.commands.execute("notebook:run-cell");
  return index;
}"""
_OUTPUT = """(index) => {
  const cell = window.jupyterapp.shell.currentWidget.content.widgets[index];
  return cell && cell.outputArea ? cell.outputArea.node.innerText : "";
}"""


class Notebook:
    """The open notebook: run code in a new cell and read what it printed."""

    def __init__(self, page: Any) -> None:
        self.page = page

    def run(self, code: str, expect: str | None = None, timeout: float = 30_000) -> str:
        index = self.page.evaluate(_RUN_CELL, code)
        if expect is not None:
            self.page.wait_for_function(
                f"(i) => ({_OUTPUT})(i).includes({expect!r})", arg=index, timeout=timeout
            )
        else:
            self.page.wait_for_function(
                f"(i) => ({_OUTPUT})(i).trim().length > 0", arg=index, timeout=timeout
            )
        return str(self.page.evaluate(_OUTPUT, index))

    def cells(self) -> int:
        return int(
            self.page.evaluate("() => window.jupyterapp.shell.currentWidget.content.widgets.length")
        )

    def theme(self, name: str) -> None:
        self.page.evaluate(
            "(t) => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})", name
        )
        light = "true" if "Light" in name else "false"
        self.page.wait_for_selector(
            f'body[data-jp-theme-light="{light}"]', state="attached", timeout=20_000
        )
        self.page.wait_for_timeout(600)  # the theme's stylesheet settles


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("work")


@pytest.fixture(scope="module")
def nb(lab: Lab, browser: Any, work: Path) -> Iterator[Notebook]:
    url = lab.notebook("context_tree.ipynb", [SETUP.format(work=str(work)), SHOW])
    context = browser.new_context(viewport={"width": 1280, "height": 1400})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        open_notebook(page, url, ".cx-tree .cx-row")
        yield Notebook(page)
        page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
    finally:
        context.close()
    assert not [e for e in errors if "cx" in e or "context_tree" in e], errors


def _log(work: Path) -> Path:
    return next(work.glob("long-refactor/*.jsonl*"))


_SCROLL_TO = """([text, selector]) => {
  const list = document.querySelector(".cx-tree .cx-list");
  const has = () => [...list.querySelectorAll(selector)].some((r) => {
    const top = r.getBoundingClientRect().top - list.getBoundingClientRect().top;
    return r.innerText.includes(text) && top >= 0 && top < list.clientHeight - 28;
  });
  return new Promise((done) => {
    list.scrollTop = 0;
    const step = () => {
      if (has()) return done(true);
      if (list.scrollTop + list.clientHeight >= list.scrollHeight) return done(false);
      list.scrollTop += Math.floor(list.clientHeight / 2);
      requestAnimationFrame(() => requestAnimationFrame(step));
    };
    requestAnimationFrame(() => requestAnimationFrame(step));
  });
}"""


def _row(page: Any, text: str, selector: str = ".cx-row") -> Any:
    """The first row (``selector``) showing ``text``, scrolled into the virtual list's view."""
    assert page.evaluate(_SCROLL_TO, [text, selector]), f"no row {selector} shows {text!r}"
    return page.locator(f".cx-tree {selector}", has_text=text).first


def _first(page: Any, selector: str) -> Any:
    """The topmost row matching ``selector`` (the DOM order of recycled rows is not theirs)."""
    row_id = page.evaluate(
        "(sel) => [...document.querySelectorAll(sel)]"
        ".sort((a, b) => a.dataset.i - b.dataset.i)[0].id",
        f".cx-tree {selector}",
    )
    return page.locator(f"#{row_id}")


def _stat(page: Any, name: str) -> str:
    return str(page.locator(f".cx-tree [data-stat={name}] .cx-stat__value").inner_text())


def _reset(nb: Notebook) -> None:
    nb.run("a.reset(); a.save_draft(); w.refresh(); print('reset', len(a.draft))", "reset 0")
    nb.page.wait_for_function(
        "() => document.querySelector('.cx-tree [data-stat=draft] .cx-stat__value')"
        ".textContent === 'none'"
    )


def test_it_renders_a_real_sample(nb: Notebook, work: Path) -> None:
    page = nb.page
    s = cx.Session.open(_log(work))
    assert page.locator(".cx-tree .cx-title__name").inner_text() == s.title
    visible = cx.Assembly(s, tokenizer="estimate").tree().tokens
    assert _stat(page, "visible") == f"{visible:,}"
    assert _stat(page, "nodes") == str(len(s.surface()))
    # Only the rows in view are in the DOM; the tree starts with turn 1.
    rows = page.locator(".cx-tree .cx-row")
    assert 5 < rows.count() < 60
    assert "turn 1" in rows.first.inner_text()
    assert page.locator(".cx-tree .cx-comp .cx-stack").count() == 2  # window + parts
    # The widget's text/plain is deterministic (nbval compares it).
    assert (
        nb.run("print(repr(w))", "ContextTree(")
        .strip()
        .startswith("ContextTree(b93e27d4, 65 nodes")
    )


def test_a_mode_switch_changes_the_draft_in_the_kernel(nb: Notebook) -> None:
    page = nb.page
    _reset(nb)
    _row(page, "turn 6").locator(".cx-mode__btn--off").click()
    page.wait_for_function(
        "() => document.querySelector('.cx-tree [data-stat=draft] .cx-stat__value')"
        ".textContent !== 'none'"
    )
    out = nb.run("print('draft', sorted(a.draft), {t.mode for t in a.draft.values()})", "draft")
    seqs = [int(x) for x in re.findall(r"\d+", out.split("[", 1)[1].split("]", 1)[0])]
    t6 = next(r for r in cx.Assembly(a_session(nb)).tree().walk() if r.id == "t6")
    assert seqs == sorted(r.seq for r in t6.leaves() if r.seq is not None)
    assert "{'off'}" in out
    assert _stat(page, "draft").startswith(f"{len(seqs)} nodes")
    assert "cx-row--mode-off" in str(_row(page, "turn 6").get_attribute("class"))
    # The draft is in the store too (the widget saves it after each switch).
    out = nb.run(
        "print('stored', len(DraftStore(WORK / 'drafts').load(a.session.id)[0]))", "stored"
    )
    assert f"stored {len(seqs)}" in out


def a_session(nb: Notebook) -> cx.Session:
    out = nb.run("print('path', a.session.path)", "path")
    return cx.Session.open(out.split("path", 1)[1].strip())


def test_expanding_a_fold_shows_the_events_it_covers(nb: Notebook) -> None:
    page = nb.page
    region = _row(page, "", ".cx-row--region")
    assert page.locator(".cx-tree .cx-row--shadowed").count() == 0
    region.locator(".cx-caret").click()
    page.wait_for_selector(".cx-tree .cx-row--shadowed")
    shadowed = page.locator(".cx-tree .cx-row--shadowed")
    assert shadowed.count() > 5
    first = _first(page, ".cx-row--shadowed")
    assert first.locator(".cx-row__seq").inner_text() == "(3)"
    # Its message is fetched on demand and says it is not sent.
    first.click()
    page.wait_for_selector(".cx-tree .cx-msg__head")
    head = page.locator(".cx-tree .cx-msg__head").inner_text()
    assert "not sent to the model" in head
    assert "ledger/core.py has grown" in page.locator(".cx-tree .cx-panel__body").inner_text()
    region.locator(".cx-caret").click()
    page.wait_for_function("() => !document.querySelector('.cx-tree .cx-row--shadowed')")


def test_a_tool_row_shows_its_call_and_result_side_by_side(nb: Notebook) -> None:
    page = nb.page
    _row(page, "tool bash").click()
    page.wait_for_selector(".cx-tree .cx-pair")
    pair = page.locator(".cx-tree .cx-pair").first
    assert "bash" in pair.locator(".cx-pair__call").inner_text()
    assert pair.locator(".cx-pair__result").inner_text().strip()


def test_message_text_breaks_between_words_inside_jupyterlab(nb: Notebook) -> None:
    """JupyterLab styles every output <pre> with word-break: break-all ("directl y"): the
    widget's text blocks break between words."""
    page = nb.page
    _row(page, "tool bash").click()
    page.wait_for_selector(".cx-tree .cx-pair pre")
    breaks = page.evaluate(
        "() => [...document.querySelectorAll('.cx-tree pre')]"
        ".map(e => getComputedStyle(e).wordBreak)"
    )
    assert breaks and set(breaks) == {"normal"}, breaks


def test_preview_shows_the_diff(nb: Notebook) -> None:
    page = nb.page
    _reset(nb)
    _row(page, "turn 6").locator(".cx-mode__btn--key").click()
    page.wait_for_function(
        "() => document.querySelector('.cx-tree [data-stat=draft] .cx-stat__value')"
        ".textContent !== 'none'"
    )
    page.locator(".cx-tree .cx-tab", has_text="Preview").click()
    page.wait_for_selector(".cx-tree [data-preview=summary]")
    body = page.locator(".cx-tree .cx-panel__body")
    assert "collapse" in body.locator(".cx-ops").inner_text()
    assert page.locator(".cx-tree .cx-diff__del").count() == 13  # turn 6's 13 nodes
    assert page.locator(".cx-tree .cx-diff__add").count() == 1  # one digest
    out = nb.run("p = a.preview(); print('preview', p.tokens_before, p.tokens_after)", "preview")
    before, after = (int(x) for x in out.split("preview", 1)[1].split())
    assert f"{before:,} → {after:,} tokens" in body.inner_text()


def test_model_view_is_what_the_model_receives_after_the_draft(nb: Notebook) -> None:
    page = nb.page
    page.locator(".cx-tree .cx-tab", has_text="Model view").click()
    page.wait_for_selector(".cx-tree .cx-model__msg")
    out = nb.run("print('messages', len(a.preview().messages))", "messages")
    total = int(out.split("messages", 1)[1])
    note = page.locator(".cx-tree .cx-panel__body .cx-note").first.inner_text()
    assert f"after the draft: {total} messages" in note
    assert page.locator(".cx-tree .cx-model__msg").count() == total  # fewer than a page


def test_apply_appends_to_the_log_only_after_confirming(nb: Notebook, work: Path) -> None:
    page = nb.page
    log = _log(work)
    size, events = log.stat().st_size, len(cx.Session.open(log))
    page.locator(".cx-tree .cx-tab", has_text="Preview").click()
    page.wait_for_selector(".cx-tree [data-action=apply]:not([disabled])")
    page.locator(".cx-tree [data-action=apply]").click()
    page.wait_for_selector(".cx-tree .cx-confirm")
    assert log.stat().st_size == size  # asking is not writing
    page.locator(".cx-tree [data-action=confirm-apply]").click()
    page.wait_for_selector(".cx-tree [data-result=apply]")
    result = page.locator(".cx-tree [data-result=apply]").inner_text()
    assert log.stat().st_size > size
    reread = cx.Session.open(log)
    assert len(reread) > events
    assert f"the log now has {len(reread)} events (was {events})" in result
    t6 = next(r for r in reread.assemble().tree().walk() if r.id == "t6")
    assert t6.mode == "key" and t6.leaves()[0].kind == "replacement"
    # The widget shows the new session, with an empty draft, and so does the kernel.
    page.wait_for_function(
        "() => document.querySelector('.cx-tree [data-stat=draft] .cx-stat__value')"
        ".textContent === 'none'"
    )
    assert f"events {len(reread)}" in nb.run("print('events', len(a.session))", "events")


def test_the_keyboard_moves_expands_and_sets_modes(nb: Notebook) -> None:
    page = nb.page
    _reset(nb)
    cells = nb.cells()
    page.locator(".cx-tree .cx-list").focus()
    page.keyboard.press("Home")
    page.keyboard.press("ArrowDown")  # step 1 of turn 1
    active = page.locator(".cx-tree .cx-list").get_attribute("aria-activedescendant")
    assert active and "step 1" in page.locator(f"#{active}").inner_text()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")  # turn 5
    page.keyboard.press("o")
    page.wait_for_function(
        "() => document.querySelector('.cx-tree [data-stat=draft] .cx-stat__value')"
        ".textContent !== 'none'"
    )
    assert "{'off'}" in nb.run("print('modes', {t.mode for t in a.draft.values()})", "modes")
    # Enter collapses and expands; the notebook does not see the keys ("a" adds no cell).
    page.locator(".cx-tree .cx-list").focus()
    page.keyboard.press("Home")
    expanded = (
        "() => document.getElementById(document.querySelector('.cx-tree .cx-list')"
        ".getAttribute('aria-activedescendant')).getAttribute('aria-expanded')"
    )
    assert page.evaluate(expanded) == "true"
    page.keyboard.press("Enter")
    assert page.evaluate(expanded) == "false"
    page.keyboard.press(" ")
    assert page.evaluate(expanded) == "true"
    page.keyboard.press("a")
    page.wait_for_timeout(300)
    assert nb.cells() == cells + 1  # the print cell above, nothing more
    # Tab leaves the list with a visible focus ring on the next control.
    page.locator(".cx-tree .cx-list").focus()
    page.keyboard.press("Tab")
    outline = page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"


def test_drafts_survive_a_kernel_restart(nb: Notebook) -> None:
    page = nb.page
    drafted = _stat(page, "draft")
    assert drafted != "none"
    page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.restart()"
    )
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status === 'idle'",
        timeout=60_000,
    )
    page.evaluate(  # the setup and the widget cells again (not the test cells after them)
        """async () => {
          const nb = window.jupyterapp.shell.currentWidget.content;
          for (const i of [0, 1]) {
            nb.activeCellIndex = i;
            await window.jupyterapp.commands.execute("notebook:run-cell");
          }
        }"""
    )
    out = nb.run("print('after restart', len(a.draft), a.draft_source == a.session.id)", "after")
    assert "True" in out and "after restart 0" not in out
    page.wait_for_function(
        "(d) => [...document.querySelectorAll('.cx-tree [data-stat=draft] .cx-stat__value')]"
        ".some(e => e.textContent === d)",
        arg=drafted,
    )


def test_screenshots_light_and_dark(nb: Notebook, artifacts: Path) -> None:
    page = nb.page
    widget = page.locator(".cx-tree").last
    widget.scroll_into_view_if_needed()
    _row(page, "tool bash").click()
    page.wait_for_selector(".cx-tree .cx-pair")
    shots = {}
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        nb.theme(theme)
        name = "light" if "Light" in theme else "dark"
        path = artifacts / f"context-tree-lab-{name}.png"
        page.screenshot(path=str(path), full_page=False)
        widget.screenshot(path=str(artifacts / f"context-tree-{name}.png"))
        shots[name] = page.evaluate(
            "() => getComputedStyle(document.querySelector('.cx-tree')).backgroundColor"
        )
        page.locator(".cx-tree .cx-tab", has_text="Preview").click()
        page.wait_for_selector(".cx-tree [data-preview=summary]")
        widget.screenshot(path=str(artifacts / f"context-tree-preview-{name}.png"))
        page.locator(".cx-tree .cx-tab", has_text="Message").click()
        print(f"screenshot: {path}")
    nb.theme("JupyterLab Light")

    def luminance(css: str) -> float:
        r, g, b = (int(x) for x in re.findall(r"\d+", css)[:3])
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    assert luminance(shots["light"]) > 200 and luminance(shots["dark"]) < 80, shots
