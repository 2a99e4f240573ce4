"""Small plots as inline SVG.

SVG text needs no plotting library, no script and no network: it renders the same in
JupyterLab, VS Code, a static notebook, GitHub and the docs, light or dark (colours are the
theme's CSS variables). The plots are the few a person would rather look at than read: a
stacked bar (the context composition, fit's kept vs dropped against a budget) and a bar chart
with stacked series (tokens per turn by kind).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ._html import esc

__all__ = ["bar_chart", "stacked_bar"]


def _colour(kind: str) -> str:
    return "none" if kind == "free" else f"var(--cx-{esc(kind)}, #888)"


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
    return (
        f"<svg class='cx-plot' role='img' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}' xmlns='http://www.w3.org/2000/svg'>{head}"
        f"{''.join(rects)}{''.join(lines)}{''.join(keys)}</svg>"
    )


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
    return (
        f"<svg class='cx-plot' role='img' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}' xmlns='http://www.w3.org/2000/svg'>{head}"
        f"{''.join(out)}</svg>"
    )
