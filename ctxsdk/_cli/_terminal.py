"""What reaches the terminal: control characters escaped, counts and columns, and library
error messages said in the command line's terms (flags, not keyword arguments)."""

from __future__ import annotations

import io
import re
import unicodedata
from typing import TextIO

from ctxsdk.session.kernel import CONTROL_CHARS

from ..samples import SAMPLES_HOME
from ..session.kernel import neutralize

__all__ = [
    "VisibleStream",
    "cells",
    "cli_message",
    "fit_cells",
    "json_safe",
    "plural",
    "visible",
]


def visible(text: str, *, multiline: bool = False) -> str:
    """``text`` with every control character escaped (``\\x1b``, ``\\r``, ``\\u202e``);
    ``multiline=True`` keeps newlines and tabs. The base's ``neutralize``: one copy of
    what is escaped, for the terminal and for a model."""
    return neutralize(text, one_line=not multiline)


def json_safe(text: str) -> str:
    """JSON text with the controls JSON leaves raw (DEL, C1, bidi and zero-width marks)
    written as JSON's own four-hex-digit ``\\u`` escapes: the same JSON value, nothing for
    a terminal to act on."""
    return CONTROL_CHARS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class VisibleStream(io.TextIOBase):
    """stdout that escapes control characters, whatever prints to it."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(visible(text, multiline=True))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()


def plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else plural or word + 's'}"


def cells(text: str) -> int:
    """Terminal columns ``text`` takes (wide East Asian characters take two)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def fit_cells(text: str, width: int) -> str:
    """``text`` cut to ``width`` terminal columns, with ``…`` when cut, padded to ``width``."""
    if cells(text) > width:
        out, used = [], 0
        for c in text:
            w = cells(c)
            if used + w > width - 1:
                break
            out.append(c)
            used += w
        text = "".join(out) + "…"
    return text + " " * max(0, width - cells(text))


# --- errors in the command line's terms ----------------------------------------------------------

_CLI_TERMS: list[tuple[str, str]] = [
    ("pass overwrite=True to replace it", "pass --force to replace it"),
    ("Workspace.sessions() lists them", "`ctxsdk{home} sessions` lists them"),
    ("pass dsh_home= or set $DSH_HOME", "pass --home DIR or set $DSH_HOME"),
    ("pass dsh_home= for another DSH home", "pass --home DIR for another DSH home"),
    ("dsh_home=ctxsdk.samples.SAMPLES_HOME", f"--home {SAMPLES_HOME}"),
    ("open one by path with Session.open(path)", "name one by its path"),
    ("conversation= applies to locomo only", "--conversation applies to locomo only"),
    ("sessions(refresh=True)", "`ctxsdk sessions --refresh`"),
    # The byte caps of a read.
    (
        "pass a larger max_bytes= (import_file(format, path, max_bytes=...) or the importer's own)",
        "pass a larger --max-bytes N",
    ),
    (
        "pass a larger max_bytes= (Session.open(path, max_bytes=...), "
        "Workspace(home, max_bytes=...), ctxsdk.session.read_log)",
        "pass a larger --max-bytes N",
    ),
    ("max_bytes must be a positive", "--max-bytes must be a positive"),
    ("(the default is MAX_IMPORT_BYTES = ", "(the default is "),
    # A log whose seq/time were stripped (the harness's snapshot fixtures).
    ("open with normalized=True", "pass --normalized"),
    (" unless normalized=False", ""),
    ("normalized=True", "--normalized"),
    # A harness scenario's scripted input names the log it drove.
    (", with Session.open", " (name that file)"),
    # Writing into the bundled samples.
    (
        "save a copy (s.save(some_dir / 'copy')) and append to the copy "
        "(cx.Session.open(copy).append_to_log())",
        "write an edited copy with --out PATH",
    ),
    (
        "add it to a DSH home of your own (cx.Workspace(some_dir).add(s))",
        "import it into a DSH home of your own (--home DIR)",
    ),
]
_CLI_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    # A cap the command line sets with --max-bytes (a bundle store's cap it does not set).
    (
        re.compile(r"\(max_bytes=(\d+)\), the most (an import reads|one read takes)"),
        r"(--max-bytes \1), the most \2",
    ),
    (re.compile(r"\b1 (session|event|message|turn)s\b"), r"1 \1"),
    # Assembly: ``set(170, 'full')`` is ``--set 170=full`` here.
    (re.compile(r"\bset\((\w+), '(full|key|off)'\)"), r"--set \1=\2"),
    (re.compile(r" \(s\.message_at\(\d+\) reads it\)"), ""),
    (
        re.compile(
            r"\(tree rows show surface seqs, and the events a replacement covers as \(seq\)\)"
        ),
        "(`ctxsdk assemble SESSION --all` lists the surface seqs, and the events a replacement "
        "covers as (seq))",
    ),
    # Another agent's log named where a DSH session is wanted: the import command reads it.
    (
        re.compile(r"import it with cx\.Session\.open_any\(path\)(?: or Session\.\w+\([^)]*\))?"),
        "import it with `ctxsdk import PATH -o DIR`, then name DIR",
    ),
]


def cli_message(message: str, home: str | None = None) -> str:
    """A library error message as the command line says it: flags for keyword arguments."""
    flag = f" --home {home}" if home else ""
    for python, cli in _CLI_TERMS:
        message = message.replace(python, cli.format(home=flag))
    for pattern, repl in _CLI_PATTERNS:
        message = pattern.sub(repl, message)
    return message
