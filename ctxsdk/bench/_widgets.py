"""``ctxsdk bench widgets``: the ContextTree front end at 10,000 rows, in headless chromium.

Two things are measured, each against the same widget at about 100 rows in the same run:

- **First paint.** The widget's real ESM bundle renders in a plain page from the real
  skeleton a ``ContextTree`` built over a synthetic session (``bench load``'s generator).
  The time runs from reading the synced state (JSON parse included) through ``render()``
  to the second animation frame after it, when the rows are painted. The target is
  ``first_paint_10k_over_100_ratio <= 3``: the virtualizer keeps only the rows in view in
  the DOM, so 100× the rows may not cost more than 3× the paint.
- **A mode switch.** The kernel side of the request a click on a mode button sends
  (``set_mode``: ``Assembly.set``, the draft saved, ``Assembly.tree()`` again, the new
  skeleton and stats), timed in Python, the 100-row and 10,000-row switches interleaved,
  best of N of each. Linear work is the target:
  ``mode_switch_per_row_10k_over_100_cpu_ratio <= 2`` (time per row at 10k over time per
  row at 100), in the process's CPU time: the work is the same on a quiet machine or a shared
  one, while a wall-clock run of half a second is descheduled on a loaded machine and one of
  4 ms mostly is not (the wall ratio, ``mode_switch_per_row_10k_over_100_ratio``, is reported
  beside it; on a quiet machine the two agree). The same request is also sent from the
  page, through a model object that forwards ``send`` to the widget's real ``dispatch``
  (playwright ``expose_function``) and applies the trait changes and the reply it returns,
  next to a no-op ``ping``: their ratio is reported as
  ``mode_switch_over_noop_round_trip_ratio_10k``.

The page's model object is the only stand-in: a small JavaScript object with anywidget's
model interface (``get``, ``set``, ``save_changes``, ``on``, ``off``, ``send``). Nothing is
faked on the Python side: every request runs the widget's own handler.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .._progress import Progress, resolve_progress
from ..errors import DataMissing
from ._result import BenchResult, Target, wall_and_cpu

__all__ = ["BROWSER_ARGS", "Harness", "chromium_path", "harness_html", "run", "synthetic_session"]

BROWSER_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
_STATE_KEYS = ("_rows", "_modes", "stats", "composition", "title", "height", "revision")


def chromium_path() -> str | None:
    """The chromium to drive: ``$CTXSDK_CHROMIUM``, else ``chromium`` on PATH."""
    return os.environ.get("CTXSDK_CHROMIUM") or shutil.which("chromium")


def _widget_state(widget: Any, keys: Any = _STATE_KEYS) -> dict[str, Any]:
    state: dict[str, Any] = widget.get_state(key=list(keys))
    return state


def harness_html(widget: Any, *, width: int = 1100, dark: bool = False) -> str:
    """A page that renders ``widget``'s real ESM and CSS from its current synced state
    (``widgets/harness/page.html``)."""
    from ctxsdk.widgets.kernel import static_dir

    def script_json(value: Any) -> str:
        return json.dumps(value).replace("</", "<\\/")

    page = (static_dir() / "harness" / "page.html").read_text(encoding="utf-8")
    return (
        page.replace("__CSS__", widget._css.replace("</", "<\\/"))
        .replace("__BODY_CLASS__", "dark" if dark else "")
        .replace("__WIDTH__", str(width))
        .replace("__ESM__", script_json(widget._esm))
        .replace("__STATE__", script_json(_widget_state(widget)))
    )


class Harness:
    """Headless chromium pages that render a widget and forward its requests to Python."""

    def __init__(self, browser: Any) -> None:
        self.browser = browser

    def open(self, widget: Any, *, width: int = 1100, height: int = 900, dark: bool = False) -> Any:
        """A page showing ``widget`` (not yet rendered: call ``cx_first_paint``)."""
        page = self.browser.new_page(viewport={"width": width + 40, "height": height})
        if dark:
            page.emulate_media(color_scheme="dark")

        def send(raw: str) -> str:
            changes: dict[str, Any] = {}

            def seen(change: dict[str, Any]) -> None:
                changes[change["name"]] = True

            widget.observe(seen, names=list(_STATE_KEYS))
            try:
                reply = widget.dispatch(json.loads(raw))
            finally:
                widget.unobserve(seen, names=list(_STATE_KEYS))
            state = _widget_state(widget, changes) if changes else {}
            return json.dumps({"state": state, "reply": reply})

        page.expose_function("cx_send", send)
        page.expose_function("cx_save", lambda raw: None)
        page.set_content(harness_html(widget, width=width, dark=dark))
        page.wait_for_function("() => window.cx_ready === true")
        return page


@contextmanager
def browser() -> Iterator[Harness]:
    """A headless chromium (the system's; nothing is downloaded), closed afterwards."""
    path = chromium_path()
    if path is None:
        raise DataMissing(
            "bench widgets needs chromium: install it (apt-get install chromium) or set "
            "CTXSDK_CHROMIUM to its path"
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as err:  # pragma: no cover - a dev dependency
        raise DataMissing(
            "bench widgets needs playwright: pip install playwright (no browser download is "
            "needed, it drives the system chromium)"
        ) from err
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, headless=True, args=BROWSER_ARGS)
        try:
            yield Harness(b)
        finally:
            b.close()


def synthetic_session(directory: Path, rows: int, *, seed: int = 11) -> Any:
    """A v3 session whose context tree has about ``rows`` rows (``bench load``'s generator:
    turns of tool calls and results, a few prunes, no compaction)."""
    from ..session import Session
    from ._load import make_log

    events = max(40, int(rows * 1.7))
    path = make_log(
        directory / f"tree-{rows}.jsonl.zstd",
        events,
        seed=seed,
        compact_every=None,
        replace_share=0.02,
    )
    return Session.open(path)


def _tree(session: Any) -> Any:
    from ..widgets import ContextTree

    return ContextTree(session, tokenizer="estimate")


def _middle_leaf(widget: Any) -> str:
    rows = widget._rows
    leaves = [
        i
        for i, k in enumerate(rows["kind"])
        if k in ("assistant", "tool", "user") and not rows["flags"][i] & 2
    ]
    return str(rows["id"][leaves[len(leaves) // 2]])


def _switcher(widget: Any) -> Callable[[], object]:
    row = _middle_leaf(widget)
    modes = iter(["off", "full"] * 1000)

    def switch() -> object:
        reply = widget.dispatch(
            {"id": "bench", "type": "set_mode", "row": row, "mode": next(modes)}
        )
        if not reply or not reply["ok"]:
            raise RuntimeError(f"set_mode failed in the benchmark: {reply}")
        return reply

    return switch


def run(*, quick: bool = False, progress: Progress | None = None) -> BenchResult:
    report = resolve_progress(progress)
    paints = 3 if quick else 7
    repeat = 1 if quick else 3
    switches = 3 if quick else 5  # interleaved rounds of set_mode at 100 and 10,000 rows
    stages = 6
    report(0, stages, "building the synthetic sessions")
    with tempfile.TemporaryDirectory(prefix="ctxsdk-bench-widgets-") as tmp:
        small_s = synthetic_session(Path(tmp), 100)
        large_s = synthetic_session(Path(tmp), 10_000)
        report(1, stages, "building the widgets (Assembly.tree at 100 and 10,000 rows)")
        t0 = time.perf_counter()
        small = _tree(small_s)
        build_small = time.perf_counter() - t0
        t0 = time.perf_counter()
        large = _tree(large_s)
        build_large = time.perf_counter() - t0
        n_small, n_large = len(small._rows["id"]), len(large._rows["id"])

        report(2, stages, "timing set_mode in the kernel")
        # 100 rows, then 10,000, round by round: drift and load hit both alike.
        to_small, to_large = _switcher(small), _switcher(large)
        switch_small = switch_large = cpu_small = cpu_large = float("inf")
        for _ in range(switches):
            wall, cpu = wall_and_cpu(to_small)
            switch_small, cpu_small = min(switch_small, wall), min(cpu_small, cpu)
            wall, cpu = wall_and_cpu(to_large)
            switch_large, cpu_large = min(switch_large, wall), min(cpu_large, cpu)

        report(3, stages, "first paint in headless chromium")
        with browser() as h:
            page_small = h.open(small)
            page_large = h.open(large)
            paint_small, paint_large, dom_rows = [], [], 0
            for _ in range(paints):  # interleaved, so drift hits both alike
                paint_small.append(page_small.evaluate("() => window.cx_first_paint()")["ms"])
                r = page_large.evaluate("() => window.cx_first_paint()")
                paint_large.append(r["ms"])
                dom_rows = max(dom_rows, int(r["rows"]))
            report(4, stages, "round trips from the page")
            row = _middle_leaf(large)
            noop, trip = [], []
            for i in range(repeat):
                noop.append(
                    page_large.evaluate(
                        "(c) => window.cx_round_trip(c)", {"id": f"p{i}", "type": "ping"}
                    )["ms"]
                )
                trip.append(
                    page_large.evaluate(
                        "(c) => window.cx_round_trip(c)",
                        {
                            "id": f"m{i}",
                            "type": "set_mode",
                            "row": row,
                            "mode": "off" if i % 2 == 0 else "full",
                        },
                    )["ms"]
                )
            page_small.close()
            page_large.close()
        report(stages, stages, "done")
    first_small, first_large = min(paint_small), min(paint_large)
    metrics = {
        "first_paint_10k_over_100_ratio": first_large / first_small,
        "first_paint_ms_10k": first_large,
        "dom_rows_at_10k": float(dom_rows),
        "mode_switch_per_row_10k_over_100_ratio": (switch_large / n_large)
        / (switch_small / n_small),
        "mode_switch_per_row_10k_over_100_cpu_ratio": (cpu_large / n_large) / (cpu_small / n_small),
        "mode_switch_10k_over_100_ratio": switch_large / switch_small,
        "mode_switch_seconds_10k": switch_large,
        "mode_switch_cpu_seconds_10k": cpu_large,
        "mode_switch_over_noop_round_trip_ratio_10k": min(trip) / max(min(noop), 1e-3),
        "widget_build_seconds_10k": build_large,
    }
    baselines = {
        "first_paint_ms_100": first_small,
        "mode_switch_seconds_100": switch_small,
        "mode_switch_cpu_seconds_100": cpu_small,
        "noop_round_trip_ms_10k": min(noop),
        "widget_build_seconds_100": build_small,
    }
    targets = [
        Target.at_most("first_paint_10k_over_100_ratio", 3.0),
        Target.at_most("dom_rows_at_10k", 120),
        Target.at_most("mode_switch_per_row_10k_over_100_cpu_ratio", 2.0),
    ]
    return BenchResult(
        name="widgets",
        metrics=metrics,
        baselines=baselines,
        targets=targets,
        notes={
            "rows_small": n_small,
            "rows_large": n_large,
            "events_large": len(large_s),
            "quick": quick,
            "paints": paints,
            "repeat": repeat,
            "switches": switches,
            "chromium": chromium_path(),
            "measured": (
                "first paint: JSON state parse + render() + two animation frames, best of "
                "paints; mode switch: the set_mode handler in Python at 100 and 10,000 rows "
                "interleaved, best of switches, wall and CPU time"
            ),
        },
    )
