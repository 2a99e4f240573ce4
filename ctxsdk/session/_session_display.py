"""The text and HTML forms of a session and its views (``Session``, ``Surface``,
``TokenTable``, the turn list): what ``print()`` and a notebook show.

Long lists print their first ``ROWS`` rows and say how many more there are; the polars views
(``s.surface_df()``, ``s.tokens_df()``, ``s.turns_df()``) hold all of them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .._display import badge, bar, esc, kv, plural, section, table
from ._composition import composition
from ._text import gist, one_line

if TYPE_CHECKING:
    from ._session import Session, Surface, TokenTable, Turn

__all__ = [
    "ROWS",
    "session_html",
    "session_text",
    "shown_path",
    "surface_html",
    "surface_text",
    "tokens_html",
    "tokens_text",
    "turns_html",
    "turns_text",
]

ROWS = 200  # rows a list prints before it says how many more there are
_GIST = 70


def _more(shown: int, total: int, where: str) -> str:
    return f"… {total - shown:,} more ({where} has them all)" if total > shown else ""


def _more_html(shown: int, total: int, where: str) -> str:
    text = _more(shown, total, where)
    return f"<div class='cx-muted'>{esc(text)}</div>" if text else ""


# --- the surface -----------------------------------------------------------------------------


def _node_cells(surface: Surface) -> list[tuple[int, str, str, str, str]]:
    rows: list[tuple[int, str, str, str, str]] = []
    for n in surface[:ROWS]:
        role = "tool" if n.message.tool_results else n.message.role
        covers = f"replaces {len(n.shadowed)}" if n.shadowed else ""
        rows.append((n.seq, n.type, role, covers, gist(n.message, _GIST)))
    return rows


def surface_text(surface: Surface) -> str:
    lines = [
        f"Surface: {plural(len(surface), 'node')} in model order, "
        f"{plural(surface.generation, 'replacement')} applied"
    ]
    for seq, etype, role, covers, text in _node_cells(surface):
        lines.append(f"  {seq:>6}  {etype:<17} {role:<9} {covers:<13} {text}")
    more = _more(min(len(surface), ROWS), len(surface), "s.surface_df()")
    return "\n".join(lines + ([f"  {more}"] if more else []))


def surface_html(surface: Surface) -> str:
    rows = [
        (seq, etype, badge(role, role), esc(covers), esc(text))
        for seq, etype, role, covers, text in _node_cells(surface)
    ]
    head = (
        f"Surface <span class='cx-muted'>{plural(len(surface), 'node')}, "
        f"{plural(surface.generation, 'replacement')}</span>"
    )
    body = table(("seq", "event", "role", "", "gist"), rows, numeric=(0,), raw=(2, 3, 4))
    more = _more_html(min(len(surface), ROWS), len(surface), "s.surface_df()")
    return f"<div class='cx-title'>{head}</div>{body}{more}"


# --- tokens ----------------------------------------------------------------------------------


def tokens_text(t: TokenTable) -> str:
    lines = [f"Tokens ({t.tokenizer}): {t.total:,} in {plural(len(t.rows), 'message')}"]
    by_role = ", ".join(f"{role} {n:,}" for role, n in t.by_role().items())
    if t.system:
        by_role = f"system prompt (header) {t.system:,}, " + by_role
    lines.append(f"  by role: {by_role}")
    for r in t.rows[:ROWS]:
        lines.append(f"  {r.seq:>6}  {r.role:<9} {r.tokens:>8,}")
    more = _more(min(len(t.rows), ROWS), len(t.rows), "s.tokens_df()")
    return "\n".join(lines + ([f"  {more}"] if more else []))


def tokens_html(t: TokenTable) -> str:
    peak = max((r.tokens for r in t.rows), default=1)
    rows = [
        (r.seq, badge(r.role, r.role), f"{r.tokens:,}", bar(r.tokens, peak, kind=r.role))
        for r in t.rows[:ROWS]
    ]
    head = (
        f"Tokens <span class='cx-muted'>{esc(t.tokenizer)} · {t.total:,} in "
        f"{plural(len(t.rows), 'message')}</span>"
    )
    roles = kv([(role, f"{n:,}") for role, n in t.by_role().items()])
    body = table(("seq", "role", "tokens", ""), rows, numeric=(0, 2), raw=(1, 3))
    more = _more_html(min(len(t.rows), ROWS), len(t.rows), "s.tokens_df()")
    return f"<div class='cx-title'>{head}</div>{roles}{body}{more}"


# --- turns -----------------------------------------------------------------------------------


def _turn_cells(turns: Sequence[Turn]) -> list[tuple[int, str, str, str, str]]:
    rows = []
    for t in list(turns)[-ROWS:]:
        usage = f"in {t.usage.input_tokens:,} / out {t.usage.output_tokens:,}" if t.usage else ""
        rows.append(
            (
                t.turn,
                plural(len(t.steps), "step"),
                t.reason or "open",
                usage,
                one_line(t.prompt or "", _GIST),  # "…" says it goes on
            )
        )
    return rows


def turns_text(turns: Sequence[Turn]) -> str:
    lines = [f"{plural(len(turns), 'turn')}"]
    for turn, steps, reason, usage, prompt in _turn_cells(turns):
        lines.append(f"  {turn:>4}  {steps:<9} {reason:<10} {usage:<26} {prompt}")
    if len(turns) > ROWS:
        lines.insert(1, f"  … the first {len(turns) - ROWS:,} not shown (s.turns_df() has all)")
    return "\n".join(lines)


def turns_html(turns: Sequence[Turn]) -> str:
    rows = [
        (turn, steps, badge(reason, "error" if reason in ("error", "aborted") else None), u, p)
        for turn, steps, reason, u, p in _turn_cells(turns)
    ]
    body = table(("turn", "steps", "outcome", "usage", "prompt"), rows, numeric=(0,), raw=(2,))
    skipped = len(turns) - ROWS
    note = (
        f"<div class='cx-muted'>the first {skipped:,} not shown (s.turns_df() has all)</div>"
        if skipped > 0
        else ""
    )
    return f"<div class='cx-title'>{plural(len(turns), 'turn')}</div>{note}{body}"


# --- the session -----------------------------------------------------------------------------


def shown_path(path: Path) -> str:
    """``path`` as the text form shows it: relative to the working directory when it is
    near (so a notebook's output is the same in every checkout), else with ``~`` for home."""
    try:
        near = os.path.relpath(path)
    except ValueError:  # another drive
        near = str(path)
    if not near.startswith(os.path.join("..", "..", "..")):
        return near
    home = str(Path.home())
    text = str(path)
    return "~" + text[len(home) :] if home != "/" and text.startswith(home + os.sep) else text


def _facts(s: Session) -> list[tuple[str, str]]:
    surface = s.surface()
    facts = [
        ("id", s.id),
        ("format", f"v{s.version}, {s.compression}"),
        ("log", f"{plural(len(s), 'event')}, {plural(len(s.index.turns), 'turn')}"),
        (
            "surface",
            f"{plural(len(surface), 'node')}, {plural(surface.generation, 'replacement')}",
        ),
        ("the model gets", f"{plural(len(s.message_seqs()), 'message')}"),
    ]
    if s.path is not None:
        facts.append(("path", shown_path(s.path)))
    if s.parent_id:
        kind = "fork" if s.is_fork else (s.origin or "child")
        facts.append(("lineage", f"{kind} of {s.parent_id}"))
    state = []
    if s.is_interrupted:
        state.append("ends inside an open turn (s.repaired() closes it)")
    if s.pending_events:
        state.append(f"{plural(len(s.pending_events), 'pending event')} not written")
    if s.recovery is not None:
        state.append(f"read with recovery: {s.recovery}")
    if state:
        facts.append(("state", "; ".join(state)))
    return facts


def session_text(s: Session) -> str:
    title = s.title or "(untitled)"
    lines = [f"Session {s.id[:8]}: {title}"]
    lines += [f"  {k}: {v}" for k, v in _facts(s)]
    c = composition(s, "estimate")
    lines.append(f"  tokens: about {c.used:,} (estimate; s.tokens() counts exactly)")
    return "\n".join(lines)


def session_html(s: Session) -> str:
    title = esc(s.title or "(untitled)")
    head = f"<div class='cx-title'>{title} <span class='cx-muted'>{esc(s.id[:8])}</span></div>"
    comp = composition(s, "estimate")._html_()
    turns = s.turns()
    recent = turns_html(turns[-10:]) if turns else ""
    more = (
        f"<div class='cx-muted'>the last 10 of {plural(len(turns), 'turn')}: s.turns()</div>"
        if len(turns) > 10
        else ""
    )
    return head + kv(_facts(s)) + comp + section("", recent + more)
