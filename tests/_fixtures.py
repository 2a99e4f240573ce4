"""The shared DSH fixtures with their template placeholders filled in.

The harness's snapshot fixtures (``../shared/data/dsh-fixtures``) carry ``{{cwd}}``,
``{{tools}}``, ``{{system}}`` and ``{{sessionId}}`` placeholders. The harness's migration
chain refuses a header ``cwd`` that is not absolute and a ``request/header`` whose ``tools``
is not an array, so a test that migrates a fixture reads it with those two filled in.
"""

from __future__ import annotations

from pathlib import Path

CWD = "/home/user/project"


def filled(text: str) -> str:
    """A fixture's text with ``{{cwd}}`` an absolute path and ``{{tools}}`` an empty array."""
    return text.replace('"{{cwd}}"', f'"{CWD}"').replace('"{{tools}}"', "[]")


def filled_fixture(src: Path, dest_dir: Path) -> Path:
    """A copy of the fixture ``src`` in ``dest_dir`` with its placeholders filled in."""
    dest_dir.mkdir(parents=True, exist_ok=True)
    dest = dest_dir / src.name
    dest.write_text(filled(src.read_text()))
    return dest
