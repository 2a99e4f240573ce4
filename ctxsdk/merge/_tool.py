"""The ``merge_sessions`` agent tool: the conversation's control over which sessions Merge
reads beliefs from (the seed's ``merge_sessions`` tool and ``/merge`` command).

The tool answers with JSON an agent can act on. A reference that names no session, several,
a list number out of range or the session itself is answered with a structured error
(``{"error": {"code": "invalid_arguments", "message"}}``) that says what to do, so the model
can correct itself; nothing is changed then.

Every answer goes through ``ctxsdk.session.kernel.model_safe``: the titles and ids it lists come
from other sessions' logs, so each string is redacted and its control, bidi and zero-width
characters are shown as escapes before a model reads it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import BaseModel, Field

from ..errors import InvalidArgument, NotFound
from ..session.kernel import model_safe
from ._sources import MergeSources, SourceSelection, resolve_refs

if TYPE_CHECKING:
    from ..session import Session

__all__ = [
    "MERGE_SESSIONS_DESCRIPTION",
    "MergeSessionsArgs",
    "home_of",
    "merge_sessions",
    "workspace_candidates",
]

MERGE_SESSIONS_DESCRIPTION = (
    "Choose which other sessions' conclusions are merged into this conversation. "
    'action="list" numbers the other sessions #1, #2, ... with id, title and whether each '
    'is selected; "status" shows the current choice (layer "runtime" = chosen for this '
    'session, "config" = the default, "none" = nothing; off = merging switched off). '
    '"set" replaces the selection with `sessions`, "add" appends to it, "remove" drops from '
    'it, "off" merges nothing (even if the default names sessions), "clear" forgets this '
    "session's choice and falls back to the default. Name a session by its list number "
    '("#2", as list shows it) or by a unique prefix of its id (any case, e.g. "3f9a"). This '
    "session can never be a source. Changes are saved and answered with the new status."
)


class MergeSessionsArgs(BaseModel):
    """Arguments of ``merge_sessions``."""

    action: Literal["list", "status", "set", "add", "remove", "off", "clear"] = Field(
        description="list, status, set, add, remove, off or clear."
    )
    sessions: list[str] = Field(
        default_factory=list,
        description='For set/add/remove: list numbers ("#1") or unique id prefixes.',
    )


def _view(
    session_id: str, candidates: Sequence[tuple[str, str]], selection: SourceSelection
) -> list[tuple[str, str | None, bool]]:
    """The sessions ``list`` numbers: the candidates (the session itself left out), then any
    selected source no candidate names (so it can still be seen and removed)."""
    rows: dict[str, tuple[str, str | None, bool]] = {}
    for sid, title in candidates:
        if sid != session_id and sid not in rows:
            rows[sid] = (sid, title or None, True)
    for sid in selection.sources:
        rows.setdefault(sid, (sid, None, False))
    return list(rows.values())


def _status(
    selection: SourceSelection, titles: dict[str, str | None], known: set[str]
) -> dict[str, Any]:
    out = selection.to_json()
    out["sources"] = [
        {"id": s, "title": titles.get(s), **({} if s in known else {"missing": True})}
        for s in selection.sources
    ]
    return out


def merge_sessions(
    session: Session,
    args: MergeSessionsArgs,
    *,
    sources: MergeSources,
    candidates: Sequence[tuple[str, str]],
) -> dict[str, Any]:
    """Run one ``merge_sessions`` call for ``session``: list, status or change its sources.

    ``candidates`` are the sessions that may be chosen, ``(id, title)`` in the order ``list``
    numbers them. A bad reference is a structured error; a store that cannot be written
    raises ``WriteError``. The answer is redacted and neutralized (``model_safe``).
    """
    answer = _merge_sessions(session, args, sources=sources, candidates=candidates)
    return cast(dict[str, Any], model_safe(answer))


def _merge_sessions(
    session: Session,
    args: MergeSessionsArgs,
    *,
    sources: MergeSources,
    candidates: Sequence[tuple[str, str]],
) -> dict[str, Any]:
    sid = session.id
    current = sources.get(sid)
    view = _view(sid, candidates, current)
    titles = {s: t for s, t, _ in view}
    known = {s for s, _, k in view if k}
    if args.action in ("add", "remove") and not args.sessions:
        return _bad(f"{args.action} needs at least one session in 'sessions' (#n or id prefix)")
    ids: tuple[str, ...] = ()
    if args.action in ("set", "add", "remove"):
        try:
            ids = resolve_refs(args.sessions, [(s, t or "") for s, t, _ in view], self_id=sid)
        except (InvalidArgument, NotFound) as exc:
            return _bad(f"{exc}; call merge_sessions with action=list to see the sessions")
    if args.action == "list":
        selected = set(current.sources)
        return {
            "session": sid,
            "layer": current.layer,
            "off": current.off,
            "sessions": [
                {
                    "n": f"#{i}",
                    "id": s,
                    "title": t,
                    "selected": s in selected,
                    **({} if k else {"missing": True}),
                }
                for i, (s, t, k) in enumerate(view, 1)
            ],
            "warning": current.warning,
        }
    if args.action == "status":
        new = current
    elif args.action == "set":
        new = sources.set(sid, ids)
    elif args.action == "add":
        new = sources.add(sid, ids)
    elif args.action == "remove":
        new = sources.remove(sid, ids)
    elif args.action == "off":
        new = sources.off(sid)
    else:
        new = sources.clear(sid)
    return _status(new, titles, known)


def _bad(message: str) -> dict[str, Any]:
    return {"error": {"code": "invalid_arguments", "message": message}}


def _home_of(path: Path) -> Path | None:
    """The DSH home a log lives in: the parent of the nearest ``sessions`` directory above it
    (``<home>/sessions/<project>/<session dir>/<log>``)."""
    for parent in path.parents:
        if parent.name == "sessions":
            return parent.parent
    return None


def home_of(session: Session) -> Path | None:
    """The DSH home ``session`` was read from, or None (not read from a home)."""
    if session.path is None:
        return None
    return _home_of(Path(os.path.abspath(session.path)))


def workspace_candidates(session: Session) -> list[tuple[str, str]]:
    """The other readable sessions of the DSH home ``session`` was read from, newest first,
    as ``(id, title)``; empty when it was not read from a home (or the home cannot be
    listed), since then there is nothing on disk to choose from."""
    from ..session import Workspace

    home = home_of(session)
    if home is None:
        return []
    try:
        rows = Workspace(home, progress=False).sessions().to_dicts()
    except (NotFound, OSError):
        return []
    return [
        (str(r["id"]), str(r["title"] or ""))
        for r in rows
        if r["readable"] and r["id"] and r["id"] != session.id
    ]
