"""mkdocs hook: results rendered into the docs as a notebook would show them.

A line ``<!-- render: NAME SAMPLE -->`` is replaced by the static HTML of that result for a
bundled sample (the same ``_repr_mimebundle_`` a notebook displays, without a kernel), so the
pages show real output and stay true when the code changes. An unknown name fails the build.
"""

from __future__ import annotations

import itertools
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

import ctxsdk as cx
from ctxsdk.samples import sample
from ctxsdk.session import composition
from ctxsdk.session.kernel import turn_tokens

PLACEHOLDER = re.compile(r"^<!-- render: ([\w-]+) ([\w-]+) -->$", re.MULTILINE)


def _preview(s: cx.Session) -> Any:
    a = cx.Assembly(s)
    tool = next(r for r in a.tree().leaves() if r.kind == "tool")
    return a.set(tool.seq, "off").preview()


def _fold(then: Callable[[cx.Fold, Any], Any]) -> Callable[[cx.Session], Any]:
    """A render of a copy of the sample folded once in an 8,192-token window (the samples are
    read-only), with reproducible checkpoint ids: ``then(fold, result)``. Results render from
    their own data, so the temporary folder can go."""

    def run(s: cx.Session) -> Any:
        ids = itertools.count(1)
        with tempfile.TemporaryDirectory() as tmp:
            copy = cx.Session.open(s.save(Path(tmp) / "session"))
            f = cx.Fold(
                copy,
                store=Path(tmp) / "store",
                window=8192,
                id_factory=lambda: f"cp-{next(ids):016x}",
            )
            return then(f, f.run())

    return run


RENDERS: dict[str, Callable[[cx.Session], Any]] = {
    "tree": lambda s: cx.Assembly(s).tree(),
    "composition": lambda s: composition(s, window=32_000),
    "turn-tokens": lambda s: turn_tokens(s),
    "preview": _preview,
    "fit": lambda s: cx.Assembly(s).fit(1500, query="xdist worker port collision"),
    "fold-result": _fold(lambda f, result: result),
    "fold-search": _fold(lambda f, result: f.search("ledger/__init__.py")),
    "fold-status": _fold(lambda f, result: f.status()),
    # the sample merged with the other working sample, at a 400-token budget
    "merge-result": lambda s: (
        cx.Merge([s, cx.Session.open(sample("long-refactor"))]).budget(400).run()
    ),
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
