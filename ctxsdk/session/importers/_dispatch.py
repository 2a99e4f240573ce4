"""``import_file``: one entry point by format name (what ``ctxsdk import FORMAT PATH`` calls)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from .._session import Session
from ._chat import load_chat_file
from ._claude_code import from_claude_code
from ._common import MAX_IMPORT_BYTES, fail
from ._locomo import from_locomo
from ._swe_agent import from_swe_agent

__all__ = ["FORMATS", "import_file"]

FORMATS: Final[tuple[str, ...]] = ("openai", "anthropic", "claude-code", "swe-agent", "locomo")
"""The format names ``import_file`` knows."""


def import_file(
    format: str,
    path: str | Path,
    *,
    conversation: int | str | None = None,
    max_bytes: int = MAX_IMPORT_BYTES,
    **options: Any,
) -> Session:
    """Import a file of a foreign format as a v3 DSH session.

    ``"openai"`` / ``"anthropic"``: a JSON file with a list of messages or an object
    ``{messages, system?, tools?, model?}`` (``.jsonl``: one message per line);
    ``"claude-code"``: a Claude Code transcript ``.jsonl``; ``"swe-agent"``: a ``.traj``
    file; ``"locomo"``: ``locomo10.json`` with ``conversation`` (index or sample id,
    default 0). At most ``max_bytes`` of the file are read (``MAX_IMPORT_BYTES``, 256 MiB, by
    default): a larger file, or a path that is not a regular file (a FIFO, a device, a
    directory), is an ``ImportFormatError`` naming it. Other keyword options go to the
    format's importer (``session_id`` for all).
    """
    if conversation is not None and format != "locomo":
        fail("import_file", f"conversation= applies to locomo only, not {format!r}")
    if format in ("openai", "anthropic"):
        return load_chat_file(format, path, max_bytes=max_bytes, **options)  # type: ignore[arg-type]
    if format == "claude-code":
        return from_claude_code(path, max_bytes=max_bytes, **options)
    if format == "swe-agent":
        return from_swe_agent(path, max_bytes=max_bytes, **options)
    if format == "locomo":
        where = 0 if conversation is None else conversation
        return from_locomo(path, where, max_bytes=max_bytes, **options)
    fail("import_file", f"unknown format {format!r}", f"use one of {', '.join(FORMATS)}")
