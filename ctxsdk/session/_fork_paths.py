"""``fork_log`` and ``fork_points`` as the faces export them: each takes a ``Session`` or the
path of a log (opened as ``Session.open`` opens it); the cut itself is ``_fork``'s."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ._fork import parent_fork_log, parent_fork_points
from ._session import Session

__all__ = ["fork_log", "fork_points"]


def _as_session(session: Session | str | os.PathLike[str]) -> Session:
    return session if isinstance(session, Session) else Session.open(Path(session))


def fork_log(
    session: Session | str | os.PathLike[str],
    *,
    at_seq: int | None = None,
    child_id: str | None = None,
    created_at: int | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The child's header and events (the inherited prefix, then the seed marker), validated
    as the harness validates a log, without writing anything.

    Raises ``SurfaceError`` when the cut is one the harness refuses.
    """
    parent = _as_session(session)
    return parent_fork_log(parent, at_seq=at_seq, child_id=child_id, created_at=created_at)


def fork_points(session: Session | str | os.PathLike[str]) -> list[int]:
    """Every seq the session can be forked after (outside open turns and compactions)."""
    return parent_fork_points(_as_session(session))
