"""A log that ``Session.open`` refuses because it is another agent's format, not a DSH log.

``Session.open`` reads DeepSeek Harness logs only; a Claude Code or Codex file fails on its
first line. The bare format error says what is wrong but not what to do, so the refusal
names the detected format and the importer that reads it.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import CtxError, SessionFormatError

__all__ = ["foreign_log_hint"]


def foreign_log_hint(exc: SessionFormatError, path: str | Path) -> SessionFormatError:
    """``exc`` with the way to import ``path`` added when ``path`` is another agent's log.

    Only a refused header (line 1, or no line) is looked at: a DSH log broken further down
    is a DSH log. Detection failures keep ``exc`` as it was."""
    if exc.line not in (None, 1) or exc.frame is not None or exc.seq is not None:
        return exc
    from ._foreign._detect import detect_format, scripted_input_todo  # only on a refusal

    try:
        fmt = detect_format(path)
    except (CtxError, OSError):
        # no agent's log; a harness scenario's scripted input (``*.input.json``) says which
        # log it drove
        todo = scripted_input_todo(path)
        if not todo:
            return exc
        return type(exc)(f"{exc.reason}; {todo}", path=exc.path, line=exc.line, frame=exc.frame)
    if fmt == "dsh":
        return exc
    ways = "cx.Session.open_any(path)"
    if fmt in ("openai", "anthropic"):
        ways += f" or Session.from_messages(messages, format={fmt!r})"
    elif fmt != "locomo":
        ways += f" or Session.from_{fmt.replace('-', '_')}(path)"
    hint = f"this is not a DSH session but a {fmt} log: import it with {ways}"
    return type(exc)(f"{exc.reason}; {hint}", path=exc.path, line=exc.line, frame=exc.frame)
