"""Outputs that read well cold: opened without running, where the host distrusts the HTML.

JupyterLab sanitizes the HTML of a notebook it has not run (GitHub's viewer and some previews
do the same): ``<style>`` blocks and ``<svg>`` go (an SVG's texts stay, run together), and a
``style`` attribute keeps only declarations whose value passes its checks: lengths, ``%``,
hex and ``rgb()`` colours, ``display`` (grid and flex too), ``gap``, ``opacity``; never a
``var()``, ``inherit`` or ``currentColor``. Classes, ``title`` and ``hidden`` stay.

So each result's HTML carries its layout twice: in the themed stylesheet (``_theme.css``) and
inline, on each element with a ``cx-`` class, from ``STYLES`` here. An inline declaration
names a plain colour first and the theme's variable after it: a trusting host uses the
variable (the later declaration wins, so a run looks as the theme says); a sanitizer drops
the variable and keeps the plain colour. Plain colours are mid-tones, legible on a light and
on a dark page. Adjacent inline pieces get a space between them, so their texts never run
together where no stylesheet sets them apart.
"""

from __future__ import annotations

import re

__all__ = ["COLOURS", "STYLES", "cold", "colour"]

# mid-tones: legible on white and on a dark editor (JupyterLab Dark, VS Code, GitHub dark)
COLOURS = {
    "muted": "#7d8590",
    "border": "#8b949e80",
    "track": "#8b949e40",
    "accent": "#2f81f7",
    "system": "#b08800",
    "tools": "#a0804a",
    "user": "#2f81f7",
    "assistant": "#8957e5",
    "reasoning": "#b392f0",
    "tool": "#2da44e",
    "marker": "#d29922",
    "error": "#e5534b",
}


def colour(kind: str) -> str:
    """The plain colour of a kind (a theme colour name), grey for one the theme lacks."""
    return COLOURS.get(kind, "#8b949e")


def _kind(kind: str) -> str:
    return f"color:{COLOURS[kind]};color:var(--cx-{kind})"


_CELL = (
    "text-align:left;vertical-align:top;padding:2px 8px;"
    f"border-bottom:1px solid {COLOURS['border']};border-bottom-color:var(--cx-border)"
)

# class -> inline declarations, the same values as the theme's rule for that class (plus the
# plain colour before each variable). Display is left out where the theme sets it by context
# (a row is flex, or inline-flex inside a summary).
STYLES: dict[str, str] = {
    "cx-title": "font-weight:600;margin:0 0 4px",
    "cx-muted": _kind("muted"),
    "cx-pre": "white-space:pre-wrap;word-break:normal;overflow-wrap:break-word;margin:0;"
    "font-size:12px",
    "cx-table": "border-collapse:collapse;margin:4px 0",
    # a table cell (the helper inlines it: JupyterLab's own rule right-aligns every cell)
    "cx-cell": _CELL,
    "cx-num": _CELL + ";text-align:right",
    "cx-kv": "display:grid;grid-template-columns:max-content 1fr;gap:0 12px;margin:4px 0",
    "cx-badge": "display:inline-block;padding:0 6px;border-radius:8px;font-size:11px;"
    "line-height:16px;border:1px solid;white-space:nowrap",
    "cx-bar": "display:inline-block;vertical-align:middle;width:120px;height:8px;"
    f"background-color:{COLOURS['track']};background:var(--cx-bg2);border-radius:2px;"
    "overflow:hidden",
    "cx-msg": f"border:1px solid {COLOURS['border']};border-color:var(--cx-border);"
    "border-radius:6px;padding:6px 8px;margin:4px 0;background:var(--cx-bg)",
    "cx-msg-head": "display:flex;gap:8px;align-items:center;margin-bottom:4px",
    "cx-pair": "display:grid;grid-template-columns:1fr 1fr;gap:8px",
    "cx-section": "margin:6px 0",
    **{
        f"cx-k-{k}": _kind(k)
        for k in ("system", "tools", "user", "assistant", "reasoning", "tool", "marker", "error")
    },
}

# the theme indents a nested disclosure and a leaf row under one
_NESTED = "margin-left:16px"

_TAG = re.compile(r"<(/?)([a-zA-Z][\w-]*)((?:\s[^<>]*)?)>")
_CLASS = re.compile(r"""\sclass=(['"])([^'"]*)\1""")
_STYLE = re.compile(r"""\sstyle=(['"])([^'"]*)\1""")
_INLINE = "span|b|code|strong|em|i|a|small"
_TOUCHING = re.compile(rf"(</(?:{_INLINE})>)(?=<(?:{_INLINE})[\s>])")


def _styled(attrs: str, extra: str) -> str:
    """``attrs`` with ``extra`` before its own style (its own declarations win)."""
    own = _STYLE.search(attrs)
    if own is None:
        return f"{attrs} style='{extra}'"
    q, value = own.group(1), own.group(2)
    return attrs[: own.start()] + f" style={q}{extra};{value}{q}" + attrs[own.end() :]


def cold(fragment: str) -> str:
    """``fragment`` with each ``cx-`` class's layout inline and a space between inline
    pieces that touch; the same page where a stylesheet applies, a readable one where a
    sanitizer removed it."""
    depth = 0  # open <details> around the current tag

    def tag(m: re.Match[str]) -> str:
        nonlocal depth
        closing, name, attrs = m.group(1), m.group(2).lower(), m.group(3)
        if name == "details":
            if closing:
                depth = max(0, depth - 1)
                return m.group(0)
            depth += 1
            if depth > 1:
                attrs = _styled(attrs, _NESTED)
            return f"<{m.group(2)}{attrs}>"
        if closing or "class=" not in attrs:
            return m.group(0)
        found = _CLASS.search(attrs)
        if found is None:
            return m.group(0)
        classes = found.group(2).split()
        decls = [STYLES[c] for c in classes if c in STYLES]
        if "cx-leaf" in classes and depth > 0:
            decls.append(_NESTED)
        if not decls:
            return m.group(0)
        return f"<{m.group(2)}{_styled(attrs, ';'.join(decls))}>"

    return _TOUCHING.sub(r"\1 ", _TAG.sub(tag, fragment))
