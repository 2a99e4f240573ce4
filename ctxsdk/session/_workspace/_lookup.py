"""Finding one listed session by its id or a unique prefix of it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...errors import AmbiguousId, NotFound


def match(rows: Sequence[dict[str, Any]], prefix: str, root: Path) -> dict[str, Any]:
    """The row whose id is ``prefix``, else the one row whose id starts with it. Raises
    ``NotFound`` naming the prefix, or ``AmbiguousId`` listing the candidates."""
    if not isinstance(prefix, str) or not prefix:
        raise NotFound(f"give a session id or a unique prefix of one, not {prefix!r}")
    exact = [r for r in rows if r["id"] == prefix]
    hits = exact or [r for r in rows if r["id"].startswith(prefix)]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise NotFound(
            f"no session id starts with {prefix!r} in {root} "
            f"({len(rows)} session{'' if len(rows) == 1 else 's'}); "
            "Workspace.sessions() lists them"
        )
    if exact:
        where = "; ".join(r["path"] for r in hits)
        raise AmbiguousId(
            f"{len(hits)} sessions have the id {prefix!r} (copied directories?): {where}; "
            "open one by path with Session.open(path)"
        )
    shown = hits[:10]
    listed = ", ".join(f"{r['id']} ({r['title']!r})" if r["title"] else str(r["id"]) for r in shown)
    more = f" and {len(hits) - len(shown)} more" if len(hits) > len(shown) else ""
    raise AmbiguousId(
        f"{prefix!r} is ambiguous: {len(hits)} sessions start with it: {listed}{more}; "
        "give more of the id"
    )
