"""mkdocs hook: results rendered into the docs as a notebook would show them.

A line ``<!-- render: NAME SAMPLE -->`` is replaced by the static HTML of that result for a
bundled sample (the same ``_repr_mimebundle_`` a notebook displays, without a kernel), so the
pages show real output and stay true when the code changes. An unknown name fails the build.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from mkdocs.exceptions import PluginError

import ctxsdk as cx
from ctxsdk.samples import sample
from ctxsdk.session import composition, turn_tokens

PLACEHOLDER = re.compile(r"^<!-- render: ([\w-]+) ([\w-]+) -->$", re.MULTILINE)


def _preview(s: cx.Session) -> Any:
    a = cx.Assembly(s)
    tool = next(r for r in a.tree().leaves() if r.kind == "tool")
    return a.set(tool.seq, "off").preview()


RENDERS: dict[str, Callable[[cx.Session], Any]] = {
    "tree": lambda s: cx.Assembly(s).tree(),
    "composition": lambda s: composition(s, window=32_000),
    "turn-tokens": lambda s: turn_tokens(s),
    "preview": _preview,
    "fit": lambda s: cx.Assembly(s).fit(1500, query="xdist worker port collision"),
}


def render(markdown: str, where: str = "the page") -> str:
    def html(match: re.Match[str]) -> str:
        name, name_of_sample = match.groups()
        if name not in RENDERS:
            raise PluginError(f"{where}: no render called {name!r}; use {', '.join(RENDERS)}")
        result = RENDERS[name](cx.Session.open(sample(name_of_sample)))
        # One line: Markdown would read an indented or blank-separated HTML line as text.
        return str(result._repr_mimebundle_()["text/html"]).replace("\n", " ")

    return PLACEHOLDER.sub(html, markdown)


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    return render(markdown, page.file.src_uri)
