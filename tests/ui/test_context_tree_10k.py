"""ContextTree at 10,000 rows in chromium: the widget's real bundle in the bench harness page
(``widgets/harness/page.html``), whose model object sends every request to the widget's real
``dispatch``. Only the rows in view are in the DOM, and the keyboard and a mode switch keep up.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ctxsdk as cx
from ctxsdk.bench._widgets import Harness
from ctxsdk.testing import LogBuilder
from ctxsdk.widgets import ContextTree

ROW = 28  # px, as in context_tree.js


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> ContextTree:
    """2,500 turns of one prompt and one answer: 10,002 rows (turn, step, prompt, answer each,
    and the system prompt and runtime context of the first step)."""
    b = LogBuilder(version=3, session_id="ten-thousand-rows")
    for i in range(2500):
        b.turn(f"Question {i}: what does module_{i}.py do?")
        b.assistant(text=f"module_{i}.py parses ledger rows and checks that postings balance.")
        b.end_turn()
    path = b.write(tmp_path_factory.mktemp("big") / "big.jsonl.zstd")
    return ContextTree(cx.Session.open(path), height=420)


@pytest.fixture(scope="module")
def page(browser: Any, big: ContextTree) -> Iterator[Any]:
    p = Harness(browser).open(big, width=1100, height=900)
    errors: list[str] = []
    p.on("pageerror", lambda e: errors.append(str(e)))
    try:
        yield p
    finally:
        p.close()
    assert errors == []


def test_ten_thousand_rows_render_only_what_is_in_view(page: Any, big: ContextTree) -> None:
    assert len(big._rows["id"]) == 10_002
    paint = page.evaluate("() => window.cx_first_paint()")
    assert paint["rows"] <= 40  # 420 px of 28 px rows, plus the overscan
    height = page.evaluate(
        "() => document.querySelector('.cx-tree .cx-virtual-spacer').style.height"
    )
    assert height == f"{10_002 * ROW}px"


def test_the_keyboard_reaches_the_last_row(page: Any) -> None:
    page.locator(".cx-tree .cx-list").focus()
    page.keyboard.press("End")
    page.wait_for_function(
        "() => document.getElementById(document.querySelector('.cx-tree .cx-list')"
        ".getAttribute('aria-activedescendant'))?.innerText.includes('module_2499.py parses')"
    )
    page.keyboard.press("PageUp")
    page.keyboard.press("Home")
    active = page.evaluate(
        "() => document.querySelector('.cx-tree .cx-list').getAttribute('aria-activedescendant')"
    )
    assert active.endswith("-r0")
    assert page.locator(".cx-tree .cx-row").count() <= 40


def test_collapse_all_leaves_the_turns(page: Any) -> None:
    page.locator(".cx-tree button", has_text="Collapse all").click()
    height = page.evaluate(
        "() => document.querySelector('.cx-tree .cx-virtual-spacer').style.height"
    )
    assert height == f"{2500 * ROW}px"  # one row per turn
    page.locator(".cx-tree button", has_text="Expand all").click()
    height = page.evaluate(
        "() => document.querySelector('.cx-tree .cx-virtual-spacer').style.height"
    )
    assert height == f"{10_002 * ROW}px"


def test_a_mode_switch_at_10k_rows_reaches_the_assembly(page: Any, big: ContextTree) -> None:
    page.locator(".cx-tree .cx-list").focus()
    page.keyboard.press("Home")
    page.keyboard.press("PageDown")
    row = page.evaluate(
        "() => document.getElementById(document.querySelector('.cx-tree .cx-list')"
        ".getAttribute('aria-activedescendant')).dataset.i"
    )
    page.keyboard.press("o")
    page.wait_for_function(
        "() => document.querySelector('.cx-tree [data-stat=draft] .cx-stat__value')"
        ".textContent !== 'none'"
    )
    row_id = big._rows["id"][int(row)]
    target = next(r for r in big.assembly.tree().walk() if r.id == row_id)
    assert {s for s in big.assembly.draft} == {r.seq for r in target.leaves()}
    assert big._modes[int(row)] == "O"
    cls = page.locator(f"[data-i='{row}']").get_attribute("class")
    assert "cx-row--mode-off" in str(cls) and "cx-row--drafted" in str(cls)


def test_dark_mode_from_the_os(browser: Any, big: ContextTree, artifacts: Path) -> None:
    p = Harness(browser).open(big, width=1100, height=700, dark=True)
    try:
        p.evaluate("() => window.cx_first_paint()")
        bg = p.evaluate(
            "() => getComputedStyle(document.querySelector('.cx-tree')).backgroundColor"
        )
        p.screenshot(path=str(artifacts / "context-tree-10k-os-dark.png"))
    finally:
        p.close()
    assert bg == "rgb(13, 17, 23)"  # the dark fallback: no host theme, the OS says dark
