"""mkdocs hook: draw the package's import graph, read from the code, into architecture.md."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "import_graph.py"
_PLACEHOLDER = "<!-- import-graph -->"


def _edges() -> list[tuple[str, str]]:
    spec = importlib.util.spec_from_file_location("_ctxsdk_import_graph", _SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    edges: list[tuple[str, str]] = module.unit_edges()
    return edges


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if _PLACEHOLDER not in markdown:
        return markdown
    by_unit: dict[str, list[str]] = {}
    for a, b in _edges():
        by_unit.setdefault(a, []).append(b)
    width = max(len(a) for a in by_unit)
    lines = [f"{a:<{width}}  ->  {', '.join(bs)}" for a, bs in sorted(by_unit.items())]
    return markdown.replace(_PLACEHOLDER, "```text\n" + "\n".join(lines) + "\n```")
