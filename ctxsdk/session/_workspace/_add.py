"""Placing a session into a DSH home where the harness keeps it (``Workspace.add``).

The place is ``<root>/<projectKey(cwd)>/<encodeSegment(id)>/<canonical file name>``; the write
is ``Session.save``'s (a temp file published by a no-overwrite hard link, or ``os.replace``
when replacing), so nothing is ever half-written. An id that already has a log anywhere in
the root is refused unless ``overwrite=True``, and even then only where replacing keeps the
home readable: the same session dir, the same encoding, no higher generation beside it.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import WriteError
from .._codec import Compression, canonical_file_name
from .._layout import encode_segment, session_dir
from ._walk import generation

if TYPE_CHECKING:
    from .._session import Session

__all__ = ["add_session", "existing_logs"]


def existing_logs(root: Path, session_id: str) -> list[Path]:
    """Every canonical log of ``session_id`` under ``root``, in any project dir (one listing
    of the root, one of each project dir that has the id's session dir)."""
    name = encode_segment(session_id)
    try:
        projects = sorted(e.path for e in os.scandir(root) if e.is_dir())
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise WriteError(exc.errno, f"cannot list the session root {root}: {exc}") from None
    found: list[Path] = []
    for project in projects:
        directory = Path(project) / name
        if not directory.is_dir():
            continue
        try:
            names = sorted(n for n in os.listdir(directory) if generation(n) is not None)
        except OSError as exc:
            raise WriteError(
                exc.errno, f"cannot list the session directory {directory}: {exc}"
            ) from None
        found += [directory / n for n in names]
    return found


def _refuse(session_id: str, dest: Path, logs: list[Path], overwrite: bool) -> None:
    """Raise ``WriteError`` when writing ``dest`` would clash with the id's existing logs."""
    if not logs:
        return
    if not overwrite:
        raise WriteError(
            errno.EEXIST,
            f"session {session_id} already exists at {logs[-1]}; pass overwrite=True to replace it",
        )
    elsewhere = [p for p in logs if p.parent != dest.parent]
    if elsewhere:
        raise WriteError(
            errno.EEXIST,
            f"session {session_id} already exists at {elsewhere[0]}, under another project "
            f"than {dest.parent} (its header cwd differs); not replaced, since the home would "
            "hold the id twice: remove that session directory first",
        )
    dest_gen = generation(dest.name)
    for p in logs:
        if p == dest:
            continue
        if p.name.endswith(".zstd") != dest.name.endswith(".zstd"):
            raise WriteError(
                errno.EEXIST,
                f"session {session_id} already exists at {p}, in the other encoding than "
                f"{dest.name}; not replaced, since a session dir holds one encoding: remove it "
                "first, or add with the compression it uses",
            )
        gen = generation(p.name)
        if gen is not None and dest_gen is not None and gen > dest_gen:
            raise WriteError(
                errno.EEXIST,
                f"session {session_id} already exists at {p}, a higher generation than "
                f"{dest.name}, which the harness would keep reading; not replaced: upgrade "
                f"the session (save(path, version={gen})) or remove that log first",
            )


def add_session(
    root: Path,
    session: Session,
    *,
    compression: Compression,
    overwrite: bool,
) -> Path:
    """Write ``session`` (pending events included) to its canonical place under ``root``;
    returns the file written. See ``Workspace.add``."""
    from .._file_writer import refuse_shipped_sample, session_lock

    dest = session_dir(root, session.header.cwd, session.id) / canonical_file_name(
        session.version, compression
    )
    refuse_shipped_sample(
        dest, instead="add it to a DSH home of your own (cx.Workspace(some_dir).add(s))"
    )
    logs = existing_logs(root, session.id)
    _refuse(session.id, dest, logs, overwrite)
    # Replacing a log in a v3 session dir: under its single-writer lease, so a running
    # harness (or another ctxsdk writer) never has its log replaced mid-append.
    live = logs and session.version >= 3  # v0-v2 had no lease file
    lock = session_lock(dest.parent) if live else contextlib.nullcontext()
    with lock:
        return session.save(dest, compression=compression, overwrite=bool(logs))
