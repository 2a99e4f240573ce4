"""The files a Python script the session wrote rewrites in place: ``patch_plot.py`` that
reads ``seaborn/_core/plot.py``, changes lines and writes it back. Bash-only agents edit
this way when ``sed`` quoting gets hard; running the script is the edit.

Only a read-then-write of one named file counts (``open(p)`` … ``open(p, 'w')``, or
``Path(p).read_text()`` … ``.write_text()``): a script that only writes makes an output
(a log, a figure), not an edit of the project."""

from __future__ import annotations

import re


def _literal(group: int) -> str:
    """A quoted string whose quote is capture group ``group`` (its text the next)."""
    return rf"""(?:[rRbB]?(['"])([^'"\n]+)\{group})"""


# name = 'path' / name = Path('path'): the last binding wins
_BIND = re.compile(
    r"^[ \t]*([A-Za-z_]\w*)[ \t]*=[ \t]*(?:(?:\w+\.)?Path\([ \t]*)?" + _literal(2), re.M
)
# open(<path or name>[, mode]) with the mode as written ('' when none: read)
_OPEN = re.compile(
    r"\bopen\([ \t]*(?:" + _literal(1) + r"|([A-Za-z_]\w*))[ \t]*"
    r"(?:,[ \t]*(?:mode[ \t]*=[ \t]*)?(['\"])([rwaxbt+]+)\4)?"
)
# Path(<path>).read_text() / name.write_text(...)
_PATH_IO = re.compile(
    r"(?:(?:\w+\.)?Path\([ \t]*" + _literal(1) + r"[ \t]*\)|\b([A-Za-z_]\w*))"
    r"\.(read|write)_(?:text|bytes)\("
)


def _line(code: str, at: int) -> int:
    return code.count("\n", 0, at)


def _bindings(code: str) -> dict[str, str]:
    return {m.group(1): m.group(3) for m in _BIND.finditer(code)}


def rewritten_files(code: str) -> list[str]:
    """The files ``code`` reads and then writes back, in order of their first write."""
    names = _bindings(code)
    read: set[str] = set()
    out: list[str] = []
    # (line, writes, path): a read on a write's line is its argument (``write_text(read_text())``)
    uses: list[tuple[int, bool, str]] = []
    for m in _OPEN.finditer(code):
        path = m.group(2) or names.get(m.group(3) or "", "")
        mode = m.group(5) or "r"
        if "r" in mode and "+" in mode:  # r+: read and written back through one handle
            uses.append((_line(code, m.start()), False, path))
        uses.append((_line(code, m.start()), bool(set(mode) & set("wax+")), path))
    for m in _PATH_IO.finditer(code):
        path = m.group(2) or names.get(m.group(3) or "", "")
        uses.append((_line(code, m.start()), m.group(4) == "write", path))
    for _, writes, path in sorted(uses):
        if not path or path.startswith("/dev/"):
            continue
        if writes and path in read and path not in out:
            out.append(path)
        elif not writes:
            read.add(path)
    return out
