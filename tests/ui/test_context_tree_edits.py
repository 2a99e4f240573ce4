"""ContextTree editing in chromium (the widget's real bundle in the bench harness page), on a
sample shipped in the package: the preview says the log is read-only and offers no Apply
(rather than failing after the confirm), and a key node takes a typed digest."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ctxsdk as cx
from ctxsdk.bench._widgets import Harness
from ctxsdk.samples import sample
from ctxsdk.widgets import ContextTree


@pytest.fixture(scope="module")
def page(browser: Any) -> Iterator[Any]:
    w = ContextTree(cx.Session.open(sample("long-refactor")), height=420)
    p = Harness(browser).open(w, width=1100, height=900)
    errors: list[str] = []
    p.on("pageerror", lambda e: errors.append(str(e)))
    try:
        p.evaluate("() => window.cx_first_paint()")
        yield p
    finally:
        p.close()
    assert errors == []


def test_a_shipped_sample_offers_no_apply(page: Any, artifacts: Path) -> None:
    page.locator(".cx-tree .cx-row", has_text="turn 5").first.locator(".cx-mode__btn--key").click()
    page.locator(".cx-tree [data-tab=preview]").click()
    note = page.locator(".cx-tree [data-part=read-only]")
    note.wait_for()
    assert "read-only" in note.inner_text() and "s.save(path)" in note.inner_text()
    apply = page.locator(".cx-tree [data-action=apply]")
    assert apply.is_disabled() and "read-only" in (apply.get_attribute("title") or "")
    page.locator(".cx-tree .cx-apply").screenshot(
        path=str(artifacts / "context-tree-read-only.png")
    )


def test_a_key_node_takes_a_typed_digest(page: Any, artifacts: Path) -> None:
    page.locator(".cx-tree [data-tab=message]").click()
    row = page.locator(".cx-tree .cx-row", has_text="assistant").first
    row.locator(".cx-mode__btn--key").click()
    row.click()
    area = page.locator(".cx-tree [data-part=digest]")
    area.wait_for()
    area.fill("Split ledger/core.py into modules; every test passes.")
    page.locator(".cx-tree [data-action=set-digest]").click()
    page.wait_for_function(
        "() => document.querySelector('.cx-tree .cx-status')?.textContent.startsWith('digest set')"
    )
    page.locator(".cx-tree .cx-digest").screenshot(path=str(artifacts / "context-tree-digest.png"))
