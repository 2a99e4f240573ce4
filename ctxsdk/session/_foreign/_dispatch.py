"""One reader by format name (``importers.import_file``, what ``ctxsdk import FORMAT PATH``
calls)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from ._aider import read_aider
from ._chat import load_chat_file
from ._claude_code import read_claude_code
from ._codex import read_codex
from ._common import MAX_IMPORT_BYTES, fail
from ._emit import ImportedLog
from ._gemini_cli import read_gemini_cli
from ._locomo import read_locomo
from ._mini_swe_agent import read_mini_swe_agent
from ._openhands import read_openhands
from ._swe_agent import read_swe_agent

__all__ = ["FORMATS", "read_file"]

# The formats read from one file by a function of their own (the chat formats and LoCoMo
# take more than a path, and are dispatched below).
_BY_FILE: Final[dict[str, Callable[..., ImportedLog]]] = {
    "claude-code": read_claude_code,
    "codex": read_codex,
    "gemini-cli": read_gemini_cli,
    "openhands": read_openhands,
    "aider": read_aider,
    "swe-agent": read_swe_agent,
    "mini-swe-agent": read_mini_swe_agent,
}
FORMATS: Final[tuple[str, ...]] = ("openai", "anthropic", *_BY_FILE, "locomo")
"""The format names ``import_file`` knows."""


def read_file(
    format: str,
    path: str | Path,
    *,
    conversation: int | str | None = None,
    max_bytes: int = MAX_IMPORT_BYTES,
    **options: Any,
) -> ImportedLog:
    """The v3 log ``ctxsdk.session.importers.import_file`` makes a session of (it documents
    the arguments), built and checked as the harness checks a log on load."""
    if conversation is not None and format != "locomo":
        fail("read_file", f"conversation= applies to locomo only, not {format!r}")
    if format in ("openai", "anthropic"):
        return load_chat_file(format, path, max_bytes=max_bytes, **options)  # type: ignore[arg-type]
    if format in _BY_FILE:
        return _BY_FILE[format](path, max_bytes=max_bytes, **options)
    if format == "locomo":
        where = 0 if conversation is None else conversation
        return read_locomo(path, where, max_bytes=max_bytes, **options)
    fail("read_file", f"unknown format {format!r}", f"use one of {', '.join(FORMATS)}")
