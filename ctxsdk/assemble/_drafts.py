"""Drafts: unapplied assembly edits, persisted per session and inherited along fork lineage.

A fork child starts with its parent's draft (the inherited prefix has the same seqs) until it
records its own; recording an empty draft stops the inheritance. The store is one JSON file,
written atomically; it is derived convenience state, never part of the log.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._modes import MODES
from ._planner import Target

__all__ = ["DraftStore"]

_MAX_LINEAGE = 64


class DraftStore:
    """``drafts.json`` under a directory (by default ``<DSH home>/storages/ctxsdk/assemble``)."""

    def __init__(self, directory: str | Path | None = None) -> None:
        if directory is None:
            from ..session.kernel import dsh_home

            directory = dsh_home() / "storages" / "ctxsdk" / "assemble"
        self.path = Path(directory) / "drafts.json"

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}  # missing or damaged: drafts are convenience state, start empty
        return data if isinstance(data, dict) else {}

    def save(
        self, session_id: str, targets: dict[int, Target], *, parent: str | None = None
    ) -> None:
        data = self._read()
        data[session_id] = {
            "parent": parent,
            "targets": {str(s): {"mode": t.mode, "digest": t.digest} for s, t in targets.items()},
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".drafts.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(data, f, indent=1, sort_keys=True)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def load(
        self,
        session_id: str,
        *,
        parent: str | None = None,
        parent_of: Callable[[str], str | None] | None = None,
        max_seq: int | None = None,
    ) -> tuple[dict[int, Target], str | None]:
        """The draft for a session and the id it came from (itself, an ancestor, or None).

        Ancestors are found through ``parent`` (the session's header), then ``parent_of`` or
        the parents recorded with saved drafts. ``max_seq`` keeps only seqs that exist in the
        child (its inherited prefix).
        """
        data = self._read()
        current: str | None = session_id
        seen: set[str] = set()
        for depth in range(_MAX_LINEAGE):
            if current is None or current in seen:
                break
            seen.add(current)
            entry = data.get(current)
            if isinstance(entry, dict) and isinstance(entry.get("targets"), dict):
                targets = _parse(entry["targets"])
                if depth and max_seq is not None:
                    targets = {s: t for s, t in targets.items() if s < max_seq}
                return targets, current
            if depth == 0 and parent is not None:
                current = parent
            elif parent_of is not None:
                current = parent_of(current)
            else:
                rec = data.get(current)
                current = rec.get("parent") if isinstance(rec, dict) else None
        return {}, None


def _parse(raw: dict[str, Any]) -> dict[int, Target]:
    out = {}
    for seq, t in raw.items():
        if isinstance(t, dict) and t.get("mode") in MODES and seq.isdigit():
            digest = t.get("digest")
            out[int(seq)] = Target(t["mode"], digest if isinstance(digest, str) else None)
    return out
