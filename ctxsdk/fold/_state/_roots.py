"""Which events may feed and ground state: append-origin and log-only events only (never a
replacement, whose narrative would poison the state), and which authorities each kind of
root event can grant (the seed's authority table).

Used by the authority gate of explicit anchors, by the reducer's dispatch and by the metrics.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

# Which event types may ground which authority (seed authority.ts).
_GRANTS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "user/message": frozenset({"normative", "decision"}),
        "system/message": frozenset({"normative"}),
        "tool/result": frozenset({"empirical", "procedural"}),
        "assistant/message": frozenset({"hypothesis", "decision"}),
    }
)


def _feeds(ev: Mapping[str, Any]) -> bool:
    """Append-origin or log-only: the events state may be derived from."""
    op = ev.get("surfaceOp")
    return op is None or op == "append"


def _grants(ev: Mapping[str, Any]) -> frozenset[str] | None:
    """The authorities an event can ground, or None when it is not a valid root."""
    if not _feeds(ev):
        return None
    return _GRANTS.get(str(ev.get("type")))
