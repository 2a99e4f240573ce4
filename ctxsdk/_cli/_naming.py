"""How a command line names a session: a path, or a unique id prefix in the DSH home.

In a module of its own: every command that reads a session (``show``, ``assemble``,
``fold``, ``merge``, ``memory``) opens it here, and ``demo`` runs some of them.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import NotFound

if TYPE_CHECKING:
    from ctxsdk.session import Session

__all__ = ["named_session", "open_session"]


def _looks_like_path(ref: str) -> bool:
    return (
        "/" in ref
        or "\\" in ref
        or ref.startswith((".", "~"))
        or ref.endswith((".jsonl", ".zstd", ".jsonl.zstd"))
    )


def open_session(
    ref: str, home: str | None, *, normalized: bool = False, max_bytes: int | None = None
) -> Session:
    """A path if it exists or looks like one, else a unique id prefix in the DSH home.

    ``normalized`` (``--normalized``) reads a log whose seq/time were stripped (the harness's
    snapshot fixtures); such a session has no file to append to. ``max_bytes``
    (``--max-bytes``) is the decompression cap of the read (and of the home's listing, for
    an id prefix); None keeps the reader's default."""
    from ctxsdk.session import Session

    # Without the flag, the reader's own default (which may recognise a fully stripped log).
    options: dict[str, Any] = {"normalized": True} if normalized else {}
    if max_bytes is not None:
        options["max_bytes"] = max_bytes
    p = Path(ref).expanduser()
    if p.exists():
        return Session.open(p, **options)
    if _looks_like_path(ref):
        raise NotFound(
            f"{ref}: no such session file or directory (an id prefix has no '/' and does not "
            "start with '.' or '~'; `ctxsdk sessions` lists the ids)"
        )
    from ctxsdk.session import Workspace

    ws = Workspace(home) if max_bytes is None else Workspace(home, max_bytes=max_bytes)
    return ws.open(ref, **options)


def named_session(args: argparse.Namespace) -> Session:
    """The session a command's ``SESSION`` argument names, read with its ``--normalized``
    and ``--max-bytes``."""
    return open_session(
        args.session, args.home, normalized=args.normalized, max_bytes=args.max_bytes
    )
