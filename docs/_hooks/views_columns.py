"""mkdocs hook: the column tables of the Views page, generated from the views' column specs.

A line ``<!-- columns: NAME -->`` in a page is replaced by the Markdown table of the view
``NAME`` (``events_df``, ``tokens_by_role``, ...), rendered from
``ctxsdk.session._views._columns``, the same specs the frames' schemas come from. An unknown
name fails the build.
"""

from __future__ import annotations

import re
from typing import Any

from mkdocs.exceptions import PluginError

from ctxsdk.session._views._columns import COLUMNS, markdown_table

PLACEHOLDER = re.compile(r"^<!-- columns: (\w+) -->$", re.MULTILINE)


def render(markdown: str, where: str = "the page") -> str:
    """``markdown`` with every columns placeholder replaced by its view's table."""

    def table(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in COLUMNS:
            known = ", ".join(COLUMNS)
            raise PluginError(f"{where}: no view called {name!r} for its columns; use {known}")
        return markdown_table(COLUMNS[name])

    return PLACEHOLDER.sub(table, markdown)


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    return render(markdown, page.file.src_uri)
