"""A standalone HTML page of rendered results (``ctxsdk demo --html``, reports)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ._html import esc

__all__ = ["page"]

_BODY = (
    "body{margin:24px;background:#fff;font-family:system-ui,sans-serif;}"
    "@media (prefers-color-scheme: dark){body{background:#0d1117;}}"
    "h1{font:600 18px system-ui,sans-serif;margin:0 0 12px;}"
    "h1,.cx-page-note{color:#59636e;}"
    ".cx-page-block{margin:0 0 20px;}"
)


def page(title: str, results: Iterable[Any], *, note: str = "") -> str:
    """A complete HTML document showing each result's HTML form, one after another."""
    blocks = "".join(
        f"<div class='cx-page-block'>{r._repr_mimebundle_()['text/html']}</div>" for r in results
    )
    extra = f"<p class='cx-page-note'>{esc(note)}</p>" if note else ""
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<meta name='color-scheme' content='light dark'><title>{esc(title)}</title>"
        f"<style>{_BODY}</style></head><body><h1>{esc(title)}</h1>{extra}{blocks}</body></html>\n"
    )
