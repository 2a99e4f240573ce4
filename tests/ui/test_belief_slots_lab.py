"""BeliefSlots in a real JupyterLab, driven by chromium: the rows of a merge render, a row
expands to its provenance with the verbatim quotes, a clicked seq reaches the kernel, the
strategy switch and the budget re-run the merge (a row's status and the block's kept set
change in the DOM), a 250-slot merge keeps the DOM bounded, and light / dark screenshots;
no console errors.

One notebook (one kernel) serves the tests of this module, in order. The merge is built in
the kernel from LogBuilder sessions: four assistants (evidence 2, weight 2 each) say MySQL, a
user (evidence 4, weight 8) says PostgreSQL after a one-off ask that gives no slot (egalitarian
ties 8 against 8, elitist picks PostgreSQL), and a user session states a dozen more facts so
the budget has something to choose. Claims come from what users and assistants say, never from
a tool's output text, and values are shown in their original case.
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
import ctxsdk as cx
from ctxsdk.testing import LogBuilder
from ctxsdk.merge._merge import Merge
from ctxsdk.widgets import BeliefSlots

def assistant(sid, text):
    b = LogBuilder(session_id=sid, runtime_context=None)
    b.turn("Look at the config.").assistant(text=text).end_turn()
    return cx.Session.from_events(b.header, b.events)

def user(sid, lines):
    b = LogBuilder(session_id=sid, runtime_context=None)
    for line in lines:
        b.turn(line).assistant(text="Noted.").end_turn()
    return cx.Session.from_events(b.header, b.events)

facts = [f"The service{i:02d} port is {8000 + i}." for i in range(12)]
facts += ["The test framework is jest.", "The test framework is pytest."]
sources = [
    assistant("a1b2c3d4-aaaa", "The database is MySQL."),
    assistant("b2c3d4e5-bbbb", "The database is MySQL."),
    assistant("e5f6a7b8-eeee", "The database is MySQL."),
    assistant("f6a7b8c9-ffff", "The database is MySQL."),
    user("c3d4e5f6-cccc", ["Check the config.", "The database is PostgreSQL."]),
    user("d4e5f6a7-dddd", facts),
]
r = Merge(sources).budget(700).run()
w = BeliefSlots(r, height=380)
print("slots:", len(r.slots), "kept:", len(r.block.slots))
"""
SHOW = "w"


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("work")


_ERRORS: list[str] = []


@pytest.fixture(scope="module")
def nb(lab: Lab, browser: Any) -> Iterator[Notebook]:
    url = lab.notebook("belief_slots.ipynb", [SETUP, SHOW])
    with notebook_page(browser, url, ".cx-slots .cx-srow[data-key]", _ERRORS) as page:
        yield Notebook(page)


def _py(nb: Notebook, expr: str, tag: str) -> str:
    out = nb.run(f"print({tag!r}, {expr})", tag)
    return out.split(tag, 1)[1].strip()


def _kept(page: Any, nth: int = 0) -> list[str]:
    items = page.locator(".cx-slots").nth(nth).locator(".cx-block__item--kept")
    return [str(items.nth(i).get_attribute("data-key")) for i in range(items.count())]


def test_the_rows_render_one_per_slot(nb: Notebook) -> None:
    page = nb.page
    keys = _py(nb, "[s.key for s in w.result.slots]", "keys")
    expected = re.findall(r"'([^']+)'", keys)
    widget = page.locator(".cx-slots").first
    rows = widget.locator(".cx-srow[data-key]")
    assert [rows.nth(i).get_attribute("data-key") for i in range(rows.count())] == expected
    db = widget.locator('.cx-srow[data-key="database"]')
    assert db.get_attribute("data-status") == "disputed"
    text = db.inner_text()
    assert "MySQL | PostgreSQL" in text and "disputed" in text and "E4" in text
    assert "external" in text and "kept #" in text
    assert "tied under the score, not guessed" in text
    tf = widget.locator('.cx-srow[data-key="test framework"]')
    assert "pytest" in tf.inner_text() and tf.get_attribute("data-status") == "resolved"
    # The block panel lists what the budget kept, in layout order.
    assert _kept(page) == re.findall(
        r"'([^']+)'", _py(nb, "[s.key for s in w.result.block.slots]", "kept")
    )
    tokens = _py(nb, "w.result.block.tokens", "tokens")
    assert (
        f"{int(tokens):,} / 700 tokens" in widget.locator("[data-part=block-tokens]").inner_text()
    )
    assert nb.run("print(repr(w))", "BeliefSlots(").strip().startswith("BeliefSlots(")


def test_expanding_a_row_shows_its_provenance(nb: Notebook) -> None:
    page = nb.page
    widget = page.locator(".cx-slots").first
    widget.locator('.cx-srow[data-key="database"]').click()
    prov = widget.locator('.cx-prov[data-key="database"]')
    prov.locator(".cx-claim").first.wait_for(timeout=60_000)
    assert prov.locator(".cx-claim").count() == 5
    quotes = [prov.locator(".cx-quote").nth(i).inner_text() for i in range(5)]
    assert sorted(quotes) == sorted(
        ["The database is MySQL."] * 4 + ["The database is PostgreSQL."]
    )
    said = prov.locator('.cx-claim[data-source="c3d4e5f6-cccc"]')
    text = said.inner_text()
    assert "c3d4e5f6" in text and "E4 user-stated" in text and "user" in text
    assert "Check the config." in text  # the source session's title
    # Superseded claims are visible in provenance.
    widget.locator('.cx-srow[data-key="test framework"]').click()
    tf = widget.locator('.cx-prov[data-key="test framework"]')
    tf.locator(".cx-claim").first.wait_for(timeout=60_000)
    old = tf.locator(".cx-claim--superseded")
    assert old.count() == 1 and "jest" in old.inner_text() and "superseded" in old.inner_text()
    widget.locator('.cx-srow[data-key="test framework"]').click()  # collapse again
    assert widget.locator('.cx-prov[data-key="test framework"]').count() == 0


def test_clicking_a_seq_reaches_the_kernel(nb: Notebook) -> None:
    page = nb.page
    widget = page.locator(".cx-slots").first
    claim = widget.locator('.cx-prov[data-key="database"] .cx-claim[data-source="c3d4e5f6-cccc"]')
    seq = int(str(claim.get_attribute("data-seq")))
    claim.locator("[data-action=event]").click()
    page.wait_for_selector(".cx-slots .cx-seq--selected", timeout=60_000)
    out = _py(nb, "w.selected_event", "selected")
    assert out == f"{{'session': 'c3d4e5f6-cccc', 'seq': {seq}}}"
    expect = _py(
        nb,
        "[c.seq for c in w.result.slot('database').claims if c.source == 'c3d4e5f6-cccc']",
        "seqs",
    )
    assert expect == f"[{seq}]"


def test_switching_the_strategy_changes_a_rows_status(nb: Notebook) -> None:
    page = nb.page
    widget = page.locator(".cx-slots").first
    widget.locator("[data-control=strategy]").select_option("elitist")
    page.wait_for_selector(
        '.cx-slots .cx-srow[data-key="database"][data-status="resolved"]', timeout=30_000
    )
    row = widget.locator('.cx-srow[data-key="database"]')
    assert "PostgreSQL" in row.inner_text() and "MySQL" not in row.inner_text()
    assert _py(nb, "w.result.score, str(w.result.slot('database').decision)", "now") == (
        "elitist postgresql"
    )
    assert widget.locator("[data-control=strategy]").input_value() == "elitist"
    widget.locator("[data-control=strategy]").select_option("egalitarian")
    page.wait_for_selector(
        '.cx-slots .cx-srow[data-key="database"][data-status="disputed"]', timeout=30_000
    )


def test_changing_the_budget_changes_the_kept_set(nb: Notebook) -> None:
    page = nb.page
    widget = page.locator(".cx-slots").first
    before = _kept(page)
    assert len(before) >= 10
    budget = widget.locator("[data-control=budget]")
    budget.fill("250")
    budget.dispatch_event("change")
    page.wait_for_function(
        "() => document.querySelector('.cx-slots [data-part=block-tokens]')"
        ".textContent.endsWith('/ 250 tokens')",
        timeout=30_000,
    )
    after = _kept(page)
    assert after and len(after) < len(before)
    assert after == re.findall(
        r"'([^']+)'", _py(nb, "[s.key for s in w.result.block.slots]", "kept")
    )
    out = widget.locator(".cx-block__item--dropped")
    assert out.count() == widget.locator(".cx-srow[data-key]").count() - len(after)
    assert "left out" in out.first.inner_text() or "budget" in out.first.inner_text()
    dropped = widget.locator(".cx-srow--dropped")
    assert dropped.count() >= 1 and "out" in dropped.first.inner_text()
    assert _py(nb, "w.result.budget", "budget") == "250"
    budget.fill("700")
    budget.dispatch_event("change")
    page.wait_for_function(
        "() => document.querySelector('.cx-slots [data-part=block-tokens]')"
        ".textContent.endsWith('/ 700 tokens')",
        timeout=30_000,
    )
    assert _kept(page) == before


def test_filters_narrow_the_rows(nb: Notebook) -> None:
    page = nb.page
    widget = page.locator(".cx-slots").first
    rows = widget.locator(".cx-srow[data-key]")
    total = rows.count()
    widget.locator("[data-control=filter]").fill("service0")
    page.wait_for_function(
        "() => document.querySelectorAll('.cx-slots .cx-srow[data-key]').length === 10"
    )
    assert all(
        "service0" in str(rows.nth(i).get_attribute("data-key")) for i in range(rows.count())
    )
    widget.locator("[data-control=filter]").fill("")
    widget.locator("[data-control=status]").select_option("disputed")
    page.wait_for_function(
        "() => document.querySelectorAll('.cx-slots .cx-srow[data-key]').length === 1"
    )
    assert rows.first.get_attribute("data-key") == "database"
    widget.locator("[data-control=status]").select_option("all")
    page.wait_for_function(
        f"() => document.querySelectorAll('.cx-slots .cx-srow[data-key]').length === {total}"
    )


def test_screenshots_light_and_dark(nb: Notebook, artifacts: Path) -> None:
    page = nb.page
    widget = page.locator(".cx-slots").first
    widget.scroll_into_view_if_needed()
    if widget.locator('.cx-prov[data-key="database"]').count() == 0:
        widget.locator('.cx-srow[data-key="database"]').click()
    widget.locator('.cx-prov[data-key="database"] .cx-claim').first.wait_for(timeout=60_000)
    page.evaluate("() => document.activeElement?.blur()")  # no focus ring in the picture
    colours = {}
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        nb.theme(theme)
        name = "light" if "Light" in theme else "dark"
        path = artifacts / f"belief-slots-{name}.png"
        widget.screenshot(path=str(path))
        print(f"screenshot: {path}")
        colours[name] = page.evaluate(
            "() => [getComputedStyle(document.querySelector('.cx-slots')).backgroundColor,"
            " getComputedStyle(document.querySelector('.cx-slots .cx-srow__value')).color]"
        )
    nb.theme("JupyterLab Light")

    def luminance(css: str) -> float:
        r, g, b = (int(x) for x in re.findall(r"\d+", css)[:3])
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    (light_bg, light_fg), (dark_bg, dark_fg) = colours["light"], colours["dark"]
    assert luminance(light_bg) > 200 and luminance(dark_bg) < 80
    assert luminance(light_fg) < 100 and luminance(dark_fg) > 150


BIG = """\
big_a = user("big-a", [" ".join(f"The key{i:03d} is set to value{i}." for i in range(250))])
big_b = user("big-b", [" ".join(f"The key{i:03d} is set to other{i}." for i in range(0, 250, 9))])
big = Merge([big_a, big_b]).budget(300).run()
wb = BeliefSlots(big, height=360, page_size=40)
print("built", len(big.slots))
wb
"""


def test_a_250_slot_merge_keeps_the_dom_bounded(nb: Notebook, artifacts: Path) -> None:
    page = nb.page
    nb.run(BIG, "built 250", timeout=120_000)
    big = page.locator(".cx-slots").nth(1)
    big.locator(".cx-srow[data-key]").first.wait_for(timeout=30_000)
    big.scroll_into_view_if_needed()
    rows = big.locator(".cx-srow[data-key]")
    assert rows.count() == 40
    assert rows.first.get_attribute("data-key") == "key000"
    assert "slots 1–40 of 250" in big.locator(".cx-pager__at").inner_text()
    assert "disputed28" in str(big.locator('[data-stat="disputed"]').text_content())
    big.locator("[data-action=next]").click()
    assert rows.first.get_attribute("data-key") == "key040" and rows.count() == 40
    # A kept slot in the block panel brings its row into view, expanded.
    last_kept = _kept(page, 1)[-1]
    big.locator(f'.cx-block__item--kept[data-key="{last_kept}"] button').click()
    big.locator(f'.cx-prov[data-key="{last_kept}"] .cx-claim').first.wait_for(timeout=60_000)
    assert rows.count() <= 40
    big.locator("[data-control=filter]").fill("key24")
    page.wait_for_function(
        "() => document.querySelectorAll('.cx-slots')[1].querySelectorAll('.cx-srow[data-key]')"
        ".length === 10"
    )
    assert "of 10 (filtered from 250)" in big.locator(".cx-pager__at").inner_text() or (
        big.locator(".cx-pager").is_hidden()
    )
    # The block panel lists at most 100 dropped keys and says how many more there are.
    assert big.locator(".cx-block__item--dropped").count() == 100
    assert "143 more" in big.locator("[data-part=dropped-more]").inner_text()
    big.screenshot(path=str(artifacts / "belief-slots-many.png"))


STRATEGY = """\
from ctxsdk.merge import Strategy

def prefer_user(options):
    users = [o for o in options if any(c.origin == "user" for c in o.claims)]
    return users[0] if len(users) == 1 else None

mine = Strategy("user_first", resolve=prefer_user, description="a user's word breaks a tie")
ws = BeliefSlots(r.rerun(score=mine), strategies=[mine], height=380)
print("strategy ready")
ws
"""


def test_a_users_strategy_beside_the_builtins(nb: Notebook, artifacts: Path) -> None:
    page = nb.page
    nb.run(STRATEGY, "strategy ready", timeout=120_000)
    ws = page.locator(".cx-slots").nth(2)
    ws.locator(".cx-srow[data-key]").first.wait_for(timeout=30_000)
    ws.scroll_into_view_if_needed()
    select = ws.locator("[data-control=strategy]")
    assert select.input_value() == "user_first"
    options = select.locator("option")
    assert [options.nth(i).inner_text() for i in range(options.count())] == [
        "egalitarian",
        "elitist",
        "user_first",
    ]
    assert "resolve" in ws.locator("[data-part=strategy-hooks]").inner_text()
    db = ws.locator('.cx-srow[data-key="database"]')
    assert db.get_attribute("data-status") == "ruled"
    assert db.get_attribute("data-by") == "user_first (resolve)"
    assert db.get_attribute("data-differs") == "true"
    text = db.inner_text()
    assert "ruled by user_first: chose PostgreSQL" in text and "≠" in text
    # a slot every strategy decides alike is not marked, and says what decided it
    tf = ws.locator('.cx-srow[data-key="test framework"]')
    assert tf.get_attribute("data-differs") is None
    assert "decided by user_first" in tf.inner_text()
    # the filter shows only the slots the strategies decide differently
    ws.locator("[data-control=status]").select_option("differs")
    page.wait_for_function(
        "() => document.querySelectorAll('.cx-slots')[2].querySelectorAll('.cx-srow[data-key]')"
        ".length === 1"
    )
    db.click()
    panel = ws.locator('.cx-prov[data-key="database"]')
    panel.locator(".cx-claim").first.wait_for(timeout=60_000)
    per = panel.locator("[data-part=strategies] .cx-strategy")
    got = {
        str(per.nth(i).get_attribute("data-strategy")): per.nth(i)
        .locator(".cx-strategy__decision")
        .inner_text()
        for i in range(per.count())
    }
    assert got == {
        "egalitarian": "disputed{mysql,postgresql}",
        "elitist": "postgresql",
        "user_first": "postgresql",
    }
    assert "decided by user_first (resolve)" in panel.inner_text()
    block = ws.locator("[data-part=block-text]").text_content() or ""
    assert "tie broken by strategy user_first" in block
    page.evaluate("() => document.activeElement?.blur()")
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        nb.theme(theme)
        name = "light" if "Light" in theme else "dark"
        ws.screenshot(path=str(artifacts / f"belief-slots-strategy-{name}.png"))
    nb.theme("JupyterLab Light")
    # back to a built-in: the tie is open again
    ws.locator("[data-control=status]").select_option("all")
    select.select_option("egalitarian")
    page.wait_for_selector(
        '.cx-slots >> nth=2 >> .cx-srow[data-key="database"][data-status="disputed"]',
        timeout=30_000,
    )


def test_no_console_errors() -> None:
    assert not _ERRORS, _ERRORS
