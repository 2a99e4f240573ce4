"""``import_file``: one entry point by format name (what ``ctxsdk import FORMAT PATH`` calls)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from .._session import Session
from ._aider import from_aider
from ._chat import load_chat_file
from ._claude_code import from_claude_code
from ._codex import from_codex
from ._common import MAX_IMPORT_BYTES, fail
from ._gemini_cli import from_gemini_cli
from ._locomo import from_locomo
from ._mini_swe_agent import from_mini_swe_agent
from ._openhands import from_openhands
from ._swe_agent import from_swe_agent

__all__ = ["FORMATS", "import_file"]

# The formats read from one file by a function of their own (the chat formats and LoCoMo
# take more than a path, and are dispatched below).
_BY_FILE: Final[dict[str, Callable[..., Session]]] = {
    "claude-code": from_claude_code,
    "codex": from_codex,
    "gemini-cli": from_gemini_cli,
    "openhands": from_openhands,
    "aider": from_aider,
    "swe-agent": from_swe_agent,
    "mini-swe-agent": from_mini_swe_agent,
}
FORMATS: Final[tuple[str, ...]] = ("openai", "anthropic", *_BY_FILE, "locomo")
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
    ``"claude-code"``: a Claude Code transcript ``.jsonl``; ``"codex"``: a Codex CLI rollout
    ``.jsonl``; ``"gemini-cli"``: a Gemini CLI chat ``.json``; ``"openhands"``: an OpenHands
    event-list ``.json``; ``"aider"``: an ``.aider.chat.history.md`` (or a transcript page);
    ``"swe-agent"``: a ``.traj`` file; ``"mini-swe-agent"``: a ``.traj.json`` file;
    ``"locomo"``: ``locomo10.json`` with ``conversation`` (index or sample id, default 0).
    At most ``max_bytes`` of the file are read (``MAX_IMPORT_BYTES``, 256 MiB, by default):
    a larger file, or a path that is not a regular file (a FIFO, a device, a
    directory), is an ``ImportFormatError`` naming it. Other keyword options go to the
    format's importer (``session_id`` for all).
    """
    if conversation is not None and format != "locomo":
        fail("import_file", f"conversation= applies to locomo only, not {format!r}")
    if format in ("openai", "anthropic"):
        return load_chat_file(format, path, max_bytes=max_bytes, **options)  # type: ignore[arg-type]
    if format in _BY_FILE:
        return _BY_FILE[format](path, max_bytes=max_bytes, **options)
    if format == "locomo":
        where = 0 if conversation is None else conversation
        return from_locomo(path, where, max_bytes=max_bytes, **options)
    fail("import_file", f"unknown format {format!r}", f"use one of {', '.join(FORMATS)}")
