"""The text and HTML forms of a session (what ``print(s)`` and a notebook show), and how a
path prints.

The surface, the token table and the turn list render themselves (``_surface``, ``_turns``);
long lists print their first ``ROWS`` rows (``_listing``).
"""

from __future__ import annotations

import os
from pathlib import Path

from .._display import esc, kv, plural, section
from ._composition import composition
from ._session_like import SessionLike
from ._turns import turns_html

__all__ = ["session_html", "session_text", "shown_path"]


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


def _facts(s: SessionLike) -> list[tuple[str, str]]:
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


def session_text(s: SessionLike) -> str:
    title = s.title or "(untitled)"
    lines = [f"Session {s.id[:8]}: {title}"]
    lines += [f"  {k}: {v}" for k, v in _facts(s)]
    c = composition(s, "estimate")
    lines.append(f"  tokens: about {c.used:,} (estimate; s.tokens() counts exactly)")
    return "\n".join(lines)


def session_html(s: SessionLike) -> str:
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
