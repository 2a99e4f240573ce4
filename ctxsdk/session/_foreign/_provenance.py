"""Where each imported message came from: the ``ctxsdk/import`` events of a session."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._emit import IMPORT_EVENT

if TYPE_CHECKING:
    from .._session_like import SessionLike

__all__ = ["import_provenance"]


def import_provenance(session: SessionLike) -> dict[int, dict[str, Any]]:
    """Message seq -> its source record, for a session made by an importer.

    Each value holds ``format``, ``source`` (the file name, or None), ``record`` (the first
    source record: a line's uuid, a message index, a dia_id ...), ``records`` (all of them:
    Claude Code splits one assistant message over several records) and format details such
    as ``line``. A rewritten node (a SWE-agent context edit, a compaction checkpoint) maps to
    the record that produced the rewrite. Native DSH logs give ``{}``.
    """
    out: dict[int, dict[str, Any]] = {}
    for ev in session.raw_events:
        data = ev.get("data")
        if ev.get("type") != IMPORT_EVENT or not isinstance(data, dict):
            continue
        seq = data.get("messageSeq")
        if type(seq) is not int:
            continue  # a skipped record or run metadata: no message
        entry = out.get(seq)
        if entry is None:
            out[seq] = {**data, "records": [data.get("record")]}
        else:
            entry["records"].append(data.get("record"))
    return out
