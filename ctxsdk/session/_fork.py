"""Forking a session as the harness does (spec §12): a seeded child log that inherits a prefix.

``ctx.sessions.fork(source, boundary?, childId?)`` copies the parent's events ``0..boundary``
(the boundary must end outside an open turn) verbatim as the child's seed, then the child's
own first event, ``session/end-seed``, marks the cut:

- v2/v3: header ``parentSession`` + ``isSeeded: true``; marker ``{"inherited": true}`` at
  seq ``len(prefix)`` (a child's ``inheritedEventCount`` is that seq);
- v0/v1: header ``parentSession`` + ``seedLength: len(prefix)``; marker ``{}``.

The child inherits ``cwd`` (and, as ``LogBuilder.fork`` does, ``delegationDepth``,
``origin`` and ``agentPreset``), keeps the parent's format version and encoding, and is
written next to the parent in its DSH root (same project dir, its own session dir), or
under ``dest_root``.
"""

from __future__ import annotations

import errno
import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import SurfaceError, WriteError
from ._checked import check_log
from ._codec import canonical_file_name, copy_json, is_session_file_name
from ._event_writer import EventWriter, now_ms
from ._layout import encode_segment, project_key

if TYPE_CHECKING:
    from ._session_like import SessionLike

__all__ = ["fork_cut_error", "fork_session", "parent_fork_log", "parent_fork_points"]


def fork_cut_error(session: SessionLike, at_seq: int) -> str | None:
    """Why the harness would refuse to fork ``session`` after ``at_seq``, or None.

    A cut must end outside an open turn and outside an open compaction bracket.
    """
    n = len(session)
    if type(at_seq) is not int:
        return f"a fork cut is an event seq (an int), not {at_seq!r}"
    if not 0 <= at_seq < n:
        last = f"0..{n - 1}" if n else "it has no events"
        return f"seq {at_seq} is not an event of session {session.id} ({last})"
    for turn in session.turns():
        if turn.start_seq <= at_seq and (turn.end_seq is None or at_seq < turn.end_seq):
            before = turn.start_seq - 1
            if turn.end_seq is None:
                earlier = (
                    f"cut before it, at seq {before} or earlier"
                    if before >= 0
                    else "there is no earlier cut"
                )
                return (
                    f"seq {at_seq} is inside turn {turn.turn}, which is still open at the end "
                    f"of the log (seq {n - 1}: interrupted, or live); {earlier}, or fork "
                    "session.repaired(), which closes the turn"
                )
            options = f"{before} or {turn.end_seq}" if before >= 0 else f"{turn.end_seq}"
            return (
                f"seq {at_seq} is inside turn {turn.turn} (open until seq {turn.end_seq}); "
                f"cut at a turn boundary such as {options}"
            )
    open_compactions: dict[Any, int] = {}
    for ev in session.raw_events[: at_seq + 1]:
        _track_compaction(ev, open_compactions)
    if open_compactions:
        start = min(open_compactions.values())
        return (
            f"seq {at_seq} is inside a compaction (compaction/start at seq {start} has no "
            f"compaction/end yet); cut before seq {start} or after its compaction/end"
        )
    return None


def parent_fork_points(s: SessionLike) -> list[int]:
    """Every seq the session can be forked after (outside open turns and compactions)."""
    inside: set[int] = set()
    for turn in s.turns():
        end = turn.end_seq if turn.end_seq is not None else len(s)
        inside.update(range(turn.start_seq, end))
    out: list[int] = []
    open_compactions: dict[Any, int] = {}
    for i, ev in enumerate(s.raw_events):
        _track_compaction(ev, open_compactions)
        if i not in inside and not open_compactions:
            out.append(i)
    return out


def _track_compaction(ev: dict[str, Any], open_ids: dict[Any, int]) -> None:
    """Keep ``open_ids`` (compactionId -> start seq) in step with one event."""
    etype = ev["type"]
    if etype not in ("compaction/start", "compaction/end"):
        return
    data = ev.get("data")
    cid = data.get("compactionId") if isinstance(data, dict) else None
    if etype == "compaction/end":
        open_ids.pop(cid, None)
    else:
        open_ids[cid] = ev["seq"]


def parent_fork_log(
    parent: SessionLike,
    *,
    at_seq: int | None = None,
    child_id: str | None = None,
    created_at: int | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The child's header and events (the inherited prefix, then the seed marker), validated
    as the harness validates a log, without writing anything.

    Raises ``SurfaceError`` when the cut is one the harness refuses.
    """
    events = parent.raw_events
    if not events:
        raise SurfaceError(f"session {parent.id} has no events; there is nothing to fork")
    end = len(events) - 1 if at_seq is None else at_seq
    why = fork_cut_error(parent, end)
    if why is not None:
        raise SurfaceError(f"cannot fork session {parent.id} after seq {end!r}: {why}")
    cid = str(uuid.uuid4()) if child_id is None else child_id
    if cid == parent.id:
        raise SurfaceError(f"the child id {cid!r} is the parent's own id; give a new id")
    when = now_ms() if created_at is None else created_at
    prefix: list[dict[str, Any]] = copy_json(list(events[: end + 1]))
    marker: dict[str, Any] = {"inherited": True} if parent.version >= 2 else {}
    w = EventWriter(parent.version, base=prefix)
    w.emit("session/end-seed", marker, time=when)
    prefix += w.take()
    header = _child_header(parent, cid, when, seed_length=end + 1)
    _, index = check_log(header, prefix)  # the header and every event checked as on load
    if parent.version >= 2 and index.end_seed_seqs[-1:] != [end + 1]:
        raise AssertionError(f"fork of {parent.id}: the seed marker is not at seq {end + 1}")
    return header, prefix


def _child_header(
    parent: SessionLike, child_id: str, created_at: int, seed_length: int
) -> dict[str, Any]:
    """The child header, keys in the harness's order (§2.3)."""
    h: dict[str, Any] = {
        "type": "session",
        "version": parent.version,
        "id": child_id,
        "createdAt": created_at,
    }
    if parent.header.cwd is not None:
        h["cwd"] = parent.header.cwd
    h["parentSession"] = parent.id
    if parent.version >= 2:
        h["isSeeded"] = True
    else:
        h["seedLength"] = seed_length
    if parent.origin is not None:
        h["origin"] = parent.origin
    h["delegationDepth"] = parent.delegation_depth
    if parent.header.agent_preset is not None:
        h["agentPreset"] = parent.header.agent_preset
    return h


def fork_session(
    parent: SessionLike,
    *,
    at_seq: int | None = None,
    child_id: str | None = None,
    dest_root: str | os.PathLike[str] | None = None,
    created_at: int | None = None,
) -> Path:
    """Write a seeded child of ``session`` that inherits its events ``0..at_seq``; returns
    the new log file.

    ``at_seq`` defaults to the last event and must end outside an open turn (else
    ``SurfaceError`` names the turn and the nearest boundaries).
    ``child_id`` defaults to a new uuid4, ``created_at`` (epoch ms, also the marker's time)
    to now. The child keeps the parent's version and encoding and is written, atomically and
    never over an existing file, to ``<project dir of the parent>/<encodeSegment(child)>/``
    when the parent was read from a DSH root, or to
    ``<dest_root>/<projectKey(cwd)>/<encodeSegment(child)>/`` (``dest_root`` is a session
    root, such as ``<home>/sessions``). A failed write raises ``WriteError`` naming the file
    and leaves nothing behind (no temp file, no new session directory).

    A session's pending (unsaved) events are part of it and are inherited too.
    """
    from ._file_writer import refuse_shipped_sample, write_new

    header, events = parent_fork_log(
        parent, at_seq=at_seq, child_id=child_id, created_at=created_at
    )
    cid = header["id"]
    if dest_root is not None:
        project = Path(dest_root) / project_key(header.get("cwd"))
    else:
        project = _parent_project_dir(parent)
    directory = project / encode_segment(cid)
    dest = directory / canonical_file_name(parent.version, parent.compression)
    refuse_shipped_sample(
        dest,
        instead="pass dest_root= (a session root such as <home>/sessions) to write the child "
        "elsewhere",
    )
    try:
        logs = (
            sorted(n for n in os.listdir(directory) if is_session_file_name(n))
            if directory.is_dir()
            else []
        )
    except OSError as exc:
        raise WriteError(
            exc.errno, f"{directory}: cannot list the child's session directory ({exc})"
        ) from None
    if logs:
        raise WriteError(
            errno.EEXIST,
            f"session {cid} already exists at {directory / logs[-1]}; give another child_id",
        )
    return write_new(dest, header, events, compression=parent.compression)


def _parent_project_dir(parent: SessionLike) -> Path:
    path = parent.path
    if (
        path is not None
        and is_session_file_name(path.name)
        and path.parent.name == encode_segment(parent.id)
    ):
        return path.parent.parent
    where = "was not read from a file" if path is None else f"is at {path}"
    raise WriteError(
        errno.EINVAL,
        f"session {parent.id} {where}, not in a DSH root "
        "(<root>/<project>/<encodeSegment(id)>/session[.vN].jsonl[.zstd]), so there is no "
        "'next to the parent'; pass dest_root= (a session root such as <home>/sessions)",
    )
