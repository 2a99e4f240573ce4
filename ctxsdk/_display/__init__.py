"""How results render themselves: readable text everywhere, HTML in a notebook.

One protocol (``Rendered``): a result says what it is as multi-line text (``_text_``) and as
an HTML fragment (``_html_``); ``_repr_mimebundle_`` offers both, so a notebook shows the HTML
and a terminal, nbval or a log shows the text, and ``print()`` prints the same text. The HTML
is static (no script), so it renders in JupyterLab, VS Code, a static notebook and the docs;
interaction is the widgets' job (``.widget()``).

The pieces are plain functions shared by the base and every engine: escaping, the theme
stylesheet, token bars, badges, tables, collapsible rows, the message viewer and small SVG
plots. Nothing here imports IPython or a widget library.
"""

from __future__ import annotations

from ._html import (
    badge,
    bar,
    details,
    esc,
    fmt_tokens,
    kv,
    message_html,
    plural,
    section,
    table,
    wrap,
)
from ._page import page
from ._protocol import Rendered, shown_text
from ._svg import bar_chart, stacked_bar

__all__ = [
    "Rendered",
    "badge",
    "bar",
    "bar_chart",
    "details",
    "esc",
    "fmt_tokens",
    "kv",
    "message_html",
    "page",
    "plural",
    "section",
    "shown_text",
    "stacked_bar",
    "table",
    "wrap",
]
