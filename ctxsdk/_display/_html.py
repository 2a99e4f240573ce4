"""HTML pieces every result uses: the themed root, badges, token bars, tables, rows, messages.

All text passes through ``esc``; nothing here emits a script, so the HTML is safe to show
from any log, and static (it renders without a kernel).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Sequence
from functools import cache
from importlib import resources
from typing import Any

from ._cold import STYLES, cold, colour

__all__ = [
    "badge",
    "bar",
    "details",
    "esc",
    "fmt_tokens",
    "kv",
    "message_html",
    "plural",
    "section",
    "table",
    "wrap",
]


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 turn``, ``2 turns`` (``many`` for irregular plurals)."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def fmt_tokens(n: int) -> str:
    return f"{n:,}"


@cache
def _css() -> str:
    """The theme, minified: every output carries it, so a saved notebook stays small."""
    text = resources.files(__package__).joinpath("_theme.css").read_text(encoding="utf-8")
    # The dark palette is needed by two rules (host says dark; OS says dark, host silent):
    # the file writes it once, and each rule names it.
    defined = re.search(r"/\* @define dark\n(.*?)@end \*/", text, flags=re.S)
    if defined is not None:
        text = text.replace("/* @use dark */", defined.group(1))
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"\s+", " ", text)
    return re.sub(r"\s*([{};,>])\s*", r"\1", text).strip()


def wrap(fragment: str) -> str:
    """The fragment inside the themed root, with the stylesheet (each output stands alone),
    its layout also inline for a host that strips the stylesheet (``_cold``)."""
    return f"<div class='cx-html'><style>{_css()}</style>{cold(fragment)}</div>"


def badge(text: str, kind: str | None = None) -> str:
    cls = f" cx-k-{esc(kind)}" if kind else ""
    return f"<span class='cx-badge{cls}'>{esc(text)}</span>"


def bar(value: int, total: int, *, title: str | None = None, kind: str | None = None) -> str:
    """A token bar: ``value`` as a share of ``total``."""
    share = 0.0 if total <= 0 else max(0.0, min(1.0, value / total))
    name = esc(kind or "accent")
    # the plain colour for a host that drops the theme's variable (see _cold)
    fill = f"background-color:{colour(kind or 'accent')};background:var(--cx-{name})"
    style = f"display:block;height:100%;width:{share * 100:.1f}%;{fill}"
    tip = f" title='{esc(title)}'" if title else ""
    return f"<span class='cx-bar'{tip}><span style='{style}'></span></span>"


# the theme's .cx-table cell, inline (see _cold); a cx-num cell gets it from STYLES
_CELL = STYLES["cx-cell"]


def table(
    headers: Sequence[str],
    rows: Iterable[Sequence[object]],
    *,
    numeric: Iterable[int] = (),
    raw: Iterable[int] = (),
) -> str:
    """A table; columns in ``numeric`` align right, cells in ``raw`` columns are HTML."""
    num, keep = set(numeric), set(raw)

    def cell(i: int, v: object, tag: str) -> str:
        cls = " class='cx-num'" if i in num else f" style='{_CELL}'"
        body = str(v) if (i in keep and tag == "td") else esc(v)
        return f"<{tag}{cls}>{body}</{tag}>"

    head = "".join(cell(i, h, "th") for i, h in enumerate(headers))
    body = "".join(
        "<tr>" + "".join(cell(i, v, "td") for i, v in enumerate(r)) + "</tr>" for r in rows
    )
    return f"<table class='cx-table'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


_DT = f" style='{STYLES['cx-muted']};white-space:nowrap'"  # the theme's .cx-kv dt, inline


def kv(pairs: Iterable[tuple[str, object]]) -> str:
    """A definition list of labelled values (values escaped)."""
    items = "".join(f"<dt{_DT}>{esc(k)}</dt><dd style='margin:0'>{esc(v)}</dd>" for k, v in pairs)
    return f"<dl class='cx-kv'>{items}</dl>"


def section(title: str, body: str) -> str:
    return f"<div class='cx-section'><div class='cx-title'>{esc(title)}</div>{body}</div>"


def details(summary: str, body: str, *, open: bool = False) -> str:
    """A collapsible block; ``summary`` and ``body`` are HTML."""
    flag = " open" if open else ""
    return f"<details{flag}><summary>{summary}</summary>{body}</details>"


def _pre(text: str) -> str:
    return f"<pre class='cx-pre'>{esc(text)}</pre>"


def _result_text(block: Any) -> str:
    text = str(block.text)
    if text or not block.content:
        return text
    return "\n".join(json.dumps(b.model_dump(mode="json")) for b in block.content)


# the theme's .cx-pair > div, inline (see _cold)
_SIDE = (
    f" style='border-left:3px solid {colour('border')};border-left-color:var(--cx-border);"
    "padding-left:6px;min-width:0'"
)


def message_html(message: Any, *, seq: int | None = None, results: Sequence[Any] = ()) -> str:
    """One message: role and source, its text, reasoning folded, each tool call beside its
    result (``results``: the tool-result messages that answer this message's calls)."""
    role = "tool" if message.tool_results else message.role
    head = [badge(role, role)]
    if seq is not None:
        head.append(f"<span class='cx-muted'>seq {seq}</span>")
    head.append(f"<span class='cx-muted'>{esc(message.source.kind)}</span>")
    body: list[str] = []
    answers = {b.tool_call_id: b for r in results for b in r.tool_results}
    for block in message.content:
        kind = getattr(block, "type", "")
        if kind == "text" and block.text:
            body.append(_pre(block.text))
        elif kind == "reasoning":
            body.append(details(badge("reasoning", "reasoning"), _pre(block.text)))
        elif kind == "tool-call":
            call = f"<div{_SIDE}>{badge('call ' + block.name, 'tool')}{_pre(block.arguments)}</div>"
            answer = answers.get(block.id)
            if answer is None:
                reply = f"<div{_SIDE}><span class='cx-muted'>no result in view</span></div>"
            else:
                label = "error" if answer.is_error else "result"
                kind_ = "error" if answer.is_error else "tool"
                reply = f"<div{_SIDE}>{badge(label, kind_)}{_pre(_result_text(answer))}</div>"
            body.append(f"<div class='cx-pair'>{call}{reply}</div>")
        elif kind == "tool-result":
            label = "error" if block.is_error else "result"
            body.append(badge(label, "error" if block.is_error else "tool"))
            body.append(_pre(_result_text(block)))
        elif kind not in ("text",):
            body.append(_pre(json.dumps(block.model_dump(mode="json"), indent=1)))
    inner = "".join(body) or "<span class='cx-muted'>(empty)</span>"
    return f"<div class='cx-msg'><div class='cx-msg-head'>{' '.join(head)}</div>{inner}</div>"
