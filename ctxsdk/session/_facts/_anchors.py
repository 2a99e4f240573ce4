"""Names in a text: the paths, versions and code names a session refers to.

A name is read, not a sentence: a file by its extension, a directory by its rooted or deep
form, a version (``24.0.0``), a code name (``CamelCase``, ``UPPER_SNAKE``, ``snake_case``).
Prose that only looks like a path (``and/or``, ``CI/CD``, ``/def`` in a sed address, a date)
names none. Merge compares sessions by these names; Fold keeps the assistant's statements
that carry them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Literal
from urllib.parse import unquote

__all__ = ["NameKind", "names_in", "path_name"]

NameKind = Literal["file", "directory", "version", "name"]

_EXT = frozenset(
    """py pyi ipynb ts tsx js jsx mjs cjs json jsonl md mdx rst txt toml yaml yml cfg ini
    sh bash zsh ps1 rs go java kt c h cc cpp hpp cs html css scss sql rb php swift lock xml
    csv lua vue svelte dart scala ex exs gradle proto tf""".split()
)
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.I)
# A path-like run of characters; a URL's pieces never start one (``://`` blocks them).
_PATHLIKE = re.compile(r"(?<![\w/.~:@{}$-])(?:~|\.{1,2})?/?[\w@{}.-]*(?:/[\w@{}.-]*)*")
# x.y.z, not part of a longer dotted number (an address); a sentence's full stop may follow
# A word (a run without whitespace) holding a "/" or a ".": the only words a path is read
# from. No match of ``_PATHLIKE`` holds whitespace, and each word starts after whitespace
# (its look-behind passes), so its matches within a word are those of a scan of the whole
# line; a match with neither character is no path.
_DOTTED_WORD = re.compile(r"(?<!\S)\S*[./]\S*")
_VERSION = re.compile(r"(?<![\w.])v?(\d{1,4}\.\d{1,4}\.\d{1,4})(?!\.?\d)")
_NAMES = (
    re.compile(r"(?<![\w.$/-])[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+(?![\w/-])"),  # CamelCase
    re.compile(r"(?<![\w.$/-])[A-Z][A-Z0-9]+(?:_[A-Z0-9]+)+(?![\w/-])"),  # UPPER_SNAKE
    re.compile(r"(?<![\w.$/-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w./-])"),  # snake_case
)
_LINE_CHARS = 240


def _clip_line(line: str, start: int, end: int) -> str:
    """The words around one match, at most ``_LINE_CHARS`` characters."""
    flat = line.strip()
    if len(flat) <= _LINE_CHARS:
        return flat
    left = max(0, start - _LINE_CHARS // 2)
    return line[left : left + _LINE_CHARS].strip()


def path_name(raw: str) -> tuple[NameKind, str, str] | None:
    """``(kind, ident, form)`` of a path-like word (``ident``: lowercase, a file by its name,
    so ``src/app.py`` and ``app.py`` meet), or None when it is prose (``and/or``, ``CI/CD``:
    two bare words with a slash), a number or a sentence end."""
    form = raw.rstrip(".-")
    parts = [p for p in form.split("/") if p]
    if not parts or any(len(p) > 80 for p in parts):
        return None
    last = parts[-1]
    stem, dot, ext = last.rpartition(".")
    if dot and stem.strip(".") and ext.lower() in _EXT and re.search(r"[A-Za-z_]", stem):
        return "file", last.lower(), form
    if "/" not in form or not any(ch.isalpha() for ch in form):
        return None
    # a directory is a place when it is deep or home-rooted: ``/def`` in a sed address, a
    # bare ``/tmp`` or ``a/b`` in prose name none
    if len(parts) < (2 if form.startswith(("/", "~/", "./", "../")) else 3):
        return None
    if "{" in form or any(p.isdigit() for p in parts):
        return None  # a template (``{sessionId}``) or a date, not one place
    clean = form.rstrip("/").removeprefix("./")
    return "directory", clean.lower(), clean


def names_in(text: str) -> Iterator[tuple[NameKind, str, str, str]]:
    """``(kind, ident, form, line)`` for every path, version and code name in ``text``, in
    line order; ``line`` is the words around the name (at most 240 characters)."""
    for line in text.splitlines():
        if not line.strip():
            continue
        decoded = unquote(line) if "%" in line else line
        for m in _VERSION.finditer(decoded):
            yield "version", m.group(1), m.group(1), _clip_line(decoded, m.start(), m.end())
        bare = _URL.sub(" ", line)
        covered: list[tuple[int, int]] = []
        for word in _DOTTED_WORD.finditer(bare):
            for m in _PATHLIKE.finditer(bare, word.start(), word.end()):
                if "/" not in m.group(0) and "." not in m.group(0):
                    continue
                got = path_name(m.group(0))
                if got is not None:
                    covered.append(m.span())
                    yield *got, _clip_line(bare, m.start(), m.end())
        for rx in _NAMES:
            for m in rx.finditer(bare):
                if any(a <= m.start() < b for a, b in covered):
                    continue
                yield "name", m.group(0).lower(), m.group(0), _clip_line(bare, m.start(), m.end())
