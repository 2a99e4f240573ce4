"""One session's listing row: a readable log summarized, or an unreadable one described."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from ...errors import ImportFormatError, NotFound, SessionFormatError
from .._codec import DecodedLog, frame_spans, loads_line, read_log
from .._files import FileRefusal, open_regular_file
from .._layout import decode_segment
from .._replay import LogIndex, replay_log
from ._walk import Found, generation

SUMMARY_KEYS = (
    "id",
    "title",
    "events",
    "created",
    "updated",
    "parent",
    "origin",
    "delegation_depth",
    "version",
    "seeded",
    "cwd",
    "interrupted",
    "readable",
    "error",
    "format",
)
"""The keys of a listing row that reading the log gives (and that the derived index keeps)."""

LISTING_MAX_BYTES = 1 << 30
"""The most a listing decodes from one log (1 GiB; ``Workspace(max_bytes=...)`` sets another):
a zstd frame that inflates past it (a decompression bomb) or a larger file is a row with
``readable = False`` and an error naming the path and the cap, instead of a listing that
reads until memory runs out. ``Session.open`` reads up to ``MAX_DECODED_BYTES`` (1 GiB, the same
by default; ``Session.open(path, max_bytes=...)`` sets another), ``Workspace.open`` under the
workspace's cap."""

_PEEK_BYTES = 1 << 20  # what an unreadable log's header peek reads, and decodes, at most


def _not_peeked(problem: FileRefusal, detail: str) -> Exception:
    return ValueError(detail)  # caught below: a file that is not a regular one has no header


def read_row(item: Found, max_bytes: int = LISTING_MAX_BYTES) -> tuple[dict[str, Any], bool]:
    """(row, cacheable): a summary, or the error that makes the log unreadable. A log this
    process may not read is a row too (not cached: permissions change without the mtime)."""
    assert item.stat is not None
    if item.problem is not None:  # rejected by its place: only the header is peeked at
        return unreadable(item, item.problem), True
    try:
        if item.format == "dsh":
            row = summarize(item.path, max_bytes)
        else:
            row = summarize_import(item, max_bytes)
    except (SessionFormatError, ImportFormatError) as exc:
        return unreadable(item, str(exc)), True
    except OSError as exc:  # permissions, a file removed meanwhile: not the file's fault
        return unreadable(item, f"cannot read {item.path}: {exc}"), False
    except NotFound as exc:
        return unreadable(item, str(exc)), False
    except Exception as exc:  # a reader defect must not hide the rest of the listing
        return unreadable(
            item, f"{item.path}: unexpected {type(exc).__name__} while reading: {exc}"
        ), False
    # A file that changed between stat and read is summarized but not cached.
    return row, row.pop("size") == item.stat.st_size


def _located(exc: SessionFormatError, log: DecodedLog, path: Path) -> SessionFormatError:
    if exc.seq is None:
        return exc.at(path=path)
    line = log.line_of(exc.seq)
    frame = log.frame_of_line(line) if line is not None else None
    return exc.at(path=path, line=line, frame=frame)


def summarize(path: Path, max_bytes: int = LISTING_MAX_BYTES) -> dict[str, Any]:
    """Read one log through the codec and the validating replay (no typed models): what a
    listing row needs. Raises what ``Session.open`` would raise (with the listing's cap)."""
    log = read_log(path, max_bytes=max_bytes)
    try:
        index = replay_log(log.events, log.version)
    except SessionFormatError as exc:
        raise _located(exc, log, path) from None
    return _row(log.header, log.events, log.version, index, log.size, "dsh")


def summarize_import(item: Found, max_bytes: int = LISTING_MAX_BYTES) -> dict[str, Any]:
    """Import one foreign log (its format detected when the walk did not name one; the
    found format is kept on ``item``) and summarize the session it becomes. Raises what the
    detection or the importer raises."""
    from .._foreign._detect import detect_format
    from .._session import Session

    if item.format is None:
        item.format = detect_format(item.path)
    s = Session.open_any(item.path, format=item.format, max_bytes=max_bytes)
    size = item.stat.st_size if item.stat is not None else 0
    return _row(s._header_raw, s._raw, s.version, s._index, size, item.format)


def _row(
    h: dict[str, Any],
    events: list[dict[str, Any]],
    version: int,
    index: LogIndex,
    size: int,
    fmt: str,
) -> dict[str, Any]:
    title = None
    if index.title_seq is not None:
        value = events[index.title_seq]["data"]["title"]
        title = value if isinstance(value, str) else None
    seeded = bool(h.get("isSeeded")) if version >= 2 else bool(h.get("seedLength"))
    return {
        "id": h["id"],
        "title": title,
        "events": len(events),
        "size": size,
        "created": h["createdAt"],
        "updated": events[-1]["time"] if events else None,
        "parent": h.get("parentSession"),
        "origin": h.get("origin"),
        "delegation_depth": h["delegationDepth"],
        "version": version,
        "seeded": seeded,
        "cwd": h.get("cwd"),
        "interrupted": index.open_turn is not None,
        "readable": True,
        "error": None,
        "format": fmt,
    }


def _peek_header(path: Path) -> dict[str, Any]:
    """Whatever the header line of an unreadable log still says (best effort, never raises,
    never blocks on a FIFO, and never decodes more than ``_PEEK_BYTES``)."""
    try:
        with open_regular_file(path, _not_peeked) as fd:
            head = os.read(fd, _PEEK_BYTES)
        if head[:4] == b"\x28\xb5\x2f\xfd":
            import zstandard

            spans, _ = frame_spans(head)
            if not spans:
                return {}
            reader = zstandard.ZstdDecompressor().stream_reader(head[: spans[0][1]])
            text = reader.read(_PEEK_BYTES)
        else:
            text = head
        header = loads_line(text.split(b"\n", 1)[0])
    except Exception:
        return {}
    if not isinstance(header, dict):
        return {}
    out: dict[str, Any] = {}
    for key, col, kind in (
        ("id", "id", str),
        ("createdAt", "created", int),
        ("parentSession", "parent", str),
        ("origin", "origin", str),
        ("delegationDepth", "delegation_depth", int),
        ("version", "version", int),
        ("cwd", "cwd", str),
    ):
        value = header.get(key)
        is_str = kind is str and isinstance(value, str)
        if is_str or (kind is int and type(value) is int and 0 <= value <= 2**53 - 1):
            out[col] = value
    return out


def _one_line(text: str) -> str:
    return " ".join(text.split())


def unreadable(found: Found, error: str) -> dict[str, Any]:
    """The row of a session that cannot be read: what its header and place still say."""
    row: dict[str, Any] = {"readable": False, "error": _one_line(error), "format": found.format}
    st = found.stat  # the listing's stat, reused
    regular = stat.S_ISREG(st.st_mode) if st is not None else found.path.is_file()
    if regular and found.format == "dsh":
        row.update(_peek_header(found.path))
    if "id" not in row:
        row["id"] = _id_from_name(found)
    if "version" not in row and regular and found.format == "dsh":
        row["version"] = generation(found.path.name)
    return row


def _id_from_name(found: Found) -> str:
    name = found.dir_name
    if name is None:  # a flat file: its name without the log suffix
        base = found.path.name
        for suffix in (".zstd", ".jsonl", ".json", ".traj", ".md"):
            base = base.removesuffix(suffix)
        name = base
    try:
        return decode_segment(name)
    except ValueError:
        return name
