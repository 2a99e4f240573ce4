"""Small plots as inline SVG.

SVG text needs no plotting library, no script and no network: it renders the same in
JupyterLab, VS Code, a static notebook, GitHub and the docs, light or dark (colours are the
theme's CSS variables). Where a host distrusts the HTML and strips the SVG (JupyterLab before a
run, see ``_cold``), each plot has a stand-in made of plain elements with inline styles: the
same bars, and the legend and marks as text. The theme shows the SVG and hides the stand-in;
a sanitized page hides the SVG (``hidden='hidden'``: a sanitizer drops an empty ``hidden``)
and shows the stand-in.

The plots are the few a person would rather look at than read: a stacked bar (the context
composition, fit's kept vs dropped against a budget) and a bar chart with stacked series
(tokens per turn by kind).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ._cold import colour
from ._html import esc

__all__ = ["bar_chart", "stacked_bar"]


def _colour(kind: str) -> str:
    return "none" if kind == "free" else f"var(--cx-{esc(kind)}, #888)"


def _apart(elements: Sequence[str]) -> str:
    """SVG elements a line apart: the SVG draws the same, and a host that strips the tags
    but shows their texts (and ignores ``hidden``) reads them as words, not one run."""
    return "\n".join(e for e in elements if e)


def _plot(svg: str, stand_in: str) -> str:
    """The SVG for a host that keeps the stylesheet, the stand-in for one that strips it."""
    box = f"<div class='cx-plotbox' hidden='hidden'>{svg}</div>"
    return f"{box}<div class='cx-cold'>{stand_in}</div>"


def _swatch(kind: str) -> str:
    fill = "" if kind == "free" else f"background-color:{colour(kind)};"
    return (
        f"<span style='display:inline-block;width:10px;height:10px;{fill}"
        f"border:1px solid {colour('border')};vertical-align:middle'></span>"
    )


def _legend(items: Sequence[tuple[str, str]]) -> str:
    """One line of ``(text, kind)`` keys, each its swatch and its text, a dot between."""
    keys = [
        f"<span style='white-space:nowrap'>{_swatch(kind)} {esc(text)}</span>"
        for text, kind in items
    ]
    return f"<div style='margin:2px 0'>{' · '.join(keys)}</div>"


def _cold_stacked(
    parts: Sequence[tuple[str, int, str]],
    total: int,
    width: int,
    marks: Sequence[tuple[int, str]],
    legend: bool,
) -> str:
    segs = []
    for label, value, kind in parts:
        share = 100 * value / total
        if share > 0:
            fill = "" if kind == "free" else f"background-color:{colour(kind)};"
            segs.append(
                f"<span title='{esc(label)}: {value:,}' "
                f"style='display:block;flex:none;width:{share:.2f}%;{fill}height:100%'></span>"
            )
    lines = "".join(
        f"<span title='{esc(label)}' style='position:absolute;top:0;bottom:0;"
        f"left:{100 * min(value, total) / total:.2f}%;border-left:2px dashed'></span>"
        for value, label in marks
    )
    bar = (
        f"<div style='position:relative;display:flex;width:{width}px;max-width:100%;"
        f"height:14px;border:1px solid {colour('border')}'>{''.join(segs)}{lines}</div>"
    )
    notes = "".join(f"<div>┆ {esc(label)}</div>" for _, label in marks)
    keys = _legend([(f"{label} {value:,}", kind) for label, value, kind in parts]) if legend else ""
    return bar + notes + keys


def stacked_bar(
    parts: Sequence[tuple[str, int, str]],
    total: int,
    *,
    width: int = 560,
    marks: Sequence[tuple[int, str]] = (),
    title: str = "",
    legend: bool = True,
) -> str:
    """One horizontal bar of ``parts`` (label, value, kind) out of ``total``, a legend
    (unless ``legend`` is false), and vertical ``marks`` (value, label), e.g. a budget or the
    compaction threshold."""
    total = max(total, 1, sum(v for _, v, _ in parts))
    h_bar, top = 18, 4
    x = 0.0
    rects = []
    for label, value, kind in parts:
        w = width * value / total
        if w > 0:
            rects.append(
                f"<rect x='{x:.1f}' y='{top}' width='{w:.1f}' height='{h_bar}' "
                f"fill='{_colour(kind)}' stroke='var(--cx-border)' stroke-width='0.5'>"
                f"<title>{esc(label)}: {value:,}</title></rect>"
            )
        x += w
    lines = []
    for value, label in marks:
        mx = width * min(value, total) / total
        lines.append(
            f"<line x1='{mx:.1f}' x2='{mx:.1f}' y1='0' y2='{top + h_bar + 4}' "
            "stroke='var(--cx-fg)' stroke-dasharray='3,2'/>"
            f"<text x='{min(mx + 3, width - 4):.1f}' y='{top + h_bar + 14}' "
            f"text-anchor='{'end' if mx > width * 0.7 else 'start'}'>{esc(label)}</text>"
        )
    keys, lx, ly = [], 0, top + h_bar + (30 if marks else 16)
    for label, value, kind in parts if legend else ():
        item = f"{label} {value:,}"
        keys.append(
            f"<rect x='{lx}' y='{ly - 9}' width='10' height='10' fill='{_colour(kind)}' "
            f"stroke='var(--cx-border)'/><text x='{lx + 14}' y='{ly}'>{esc(item)}</text>"
        )
        lx += 24 + 6 * len(item)
        if lx > width - 80:
            lx, ly = 0, ly + 16
    height = ly + 8 if legend else top + h_bar + (22 if marks else 6)
    head = f"<title>{esc(title)}</title>" if title else ""
    svg = (
        f"<svg class='cx-plot' role='img' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}' xmlns='http://www.w3.org/2000/svg'>"
        f"{_apart([head, *rects, *lines, *keys])}</svg>"
    )
    return _plot(svg, _cold_stacked(parts, total, width, marks, legend))


def _cold_bars(
    labels: Sequence[str],
    series: Mapping[str, Sequence[int]],
    kinds: Mapping[str, str],
    width: int,
    height: int,
    peak: int,
) -> str:
    """Bars of plain elements: each label a column (its series stacked from the bottom,
    its values in its title), the labels under them when they fit, the peak, a legend."""
    cols = []
    for i, label in enumerate(labels):
        segs = "".join(
            f"<span style='display:block;flex:none;height:{height * vals[i] / peak:.1f}px;"
            f"background-color:{colour(kinds.get(name, name))}'></span>"
            for name, vals in series.items()
            if vals[i] > 0
        )
        tip = ", ".join(f"{name} {vals[i]:,}" for name, vals in series.items())
        cols.append(
            f"<span title='{esc(label)}: {esc(tip)}' style='display:flex;"
            f"flex-direction:column-reverse;flex:1 1 0;min-width:1px'>{segs}</span>"
        )
    plot = (
        f"<div style='display:flex;align-items:flex-end;gap:1px;height:{height}px;"
        f"width:{width}px;max-width:100%;border-bottom:1px solid {colour('border')}'>"
        f"{''.join(cols)}</div>"
    )
    if len(labels) <= 12:
        names = "".join(
            f"<span style='flex:1 1 0;min-width:0;text-align:center'>{esc(label)} "
            f"{sum(vals[i] for vals in series.values()):,}</span>"
            for i, label in enumerate(labels)
        )
        under = f"<div style='display:flex;gap:1px;width:{width}px;max-width:100%'>{names}</div>"
    else:
        span = f"{labels[0]} … {labels[-1]}" if labels else ""
        under = f"<div>{esc(span)} ({len(labels):,} bars)</div>"
    top = f"<div>highest {peak:,}</div>"
    keys = _legend([(name, kinds.get(name, name)) for name in series])
    return top + plot + under + keys


def bar_chart(
    labels: Sequence[str],
    series: Mapping[str, Sequence[int]],
    *,
    kinds: Mapping[str, str] | None = None,
    width: int = 560,
    height: int = 160,
    title: str = "",
) -> str:
    """Vertical bars, one per label, each stacking the ``series`` values (name -> values per
    label); ``kinds`` maps a series to its theme colour."""
    kinds = kinds or {}
    n = max(len(labels), 1)
    totals = [sum(vals[i] for vals in series.values()) for i in range(len(labels))]
    peak = max([*totals, 1])
    left, plot_h = 44, height - 18 - 22
    step = (width - left) / n
    bw = max(1.0, step * 0.8)
    out = [
        f"<line class='cx-axis' x1='{left}' x2='{width}' y1='{plot_h + 4}' y2='{plot_h + 4}'/>",
        f"<text x='{left - 4}' y='12' text-anchor='end'>{peak:,}</text>",
        f"<text x='{left - 4}' y='{plot_h + 4}' text-anchor='end'>0</text>",
    ]
    for i, label in enumerate(labels):
        y = plot_h + 4.0
        x = left + i * step + (step - bw) / 2
        for name, vals in series.items():
            hgt = plot_h * vals[i] / peak
            if hgt > 0:
                out.append(
                    f"<rect x='{x:.1f}' y='{y - hgt:.1f}' width='{bw:.1f}' height='{hgt:.1f}' "
                    f"fill='{_colour(kinds.get(name, name))}'>"
                    f"<title>{esc(label)} {esc(name)}: {vals[i]:,}</title></rect>"
                )
            y -= hgt
        if n <= 40 or i % max(1, n // 20) == 0:
            out.append(
                f"<text x='{x + bw / 2:.1f}' y='{plot_h + 16}' text-anchor='middle'>"
                f"{esc(label)}</text>"
            )
    lx = left
    for name in series:
        out.append(
            f"<rect x='{lx}' y='{height - 12}' width='10' height='10' "
            f"fill='{_colour(kinds.get(name, name))}'/>"
            f"<text x='{lx + 14}' y='{height - 3}'>{esc(name)}</text>"
        )
        lx += 24 + 6 * len(name)
    head = f"<title>{esc(title)}</title>" if title else ""
    svg = (
        f"<svg class='cx-plot' role='img' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}' xmlns='http://www.w3.org/2000/svg'>"
        f"{_apart([head, *out])}</svg>"
    )
    return _plot(svg, _cold_bars(labels, series, kinds, width, plot_h, peak))
