"""A project fact holds for its project: sessions of different projects do not dispute it.

The kernel reads project facts from what a session ran (``language`` TypeScript from the
files it touched, ``test command`` from the runner it called). Two sessions of one project
that differ on one are a real disagreement (pytest against bin/test); two sessions of
*different* projects that differ (a Flask app in Python, a 2048 game in JavaScript) are not:
each value is its own project's fact. So where every pair of sessions giving different
values of a project key are of different projects, each session's claims of that key are
keyed per project (``language (2048-game)``) and shown side by side, not as a dispute.
Sessions that agree share one slot whatever their project (both use Python).

Two sessions are of different projects only when their directories (the header's ``cwd``)
say so: both are known, neither is inside the other (``spotter-fum/assets`` is part of
``spotter-fum``) and they end in different names (one repository checked out at two paths,
``/Users/a/repos/codemie-code`` and ``/Users/b/work/codemie-code``, is one project). A
session whose directory is unknown may be of the other's project, and a real dispute must
not be hidden: two such sessions that touched no file in common still dispute (two sessions
of one repository often edit different files), but for a language or a framework, which
the kernel reads from the files touched: values read from disjoint files describe different
code, not one thing two ways (``_inferred``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..session.kernel import short_id
from ._beliefs import Branch
from ._claims import Claim, value_of, voting
from ._inferred import FROM_FILES

__all__ = ["different_projects", "disjoint", "scope_projects", "touched"]

_FILE = "file "


def different_projects(a: str | None, b: str | None) -> bool:
    """Whether directories ``a`` and ``b`` are known to be of different projects (module docs)."""
    if a is None or b is None:
        return False
    pa, pb = a.rstrip("/"), b.rstrip("/")
    if pa == pb or pa.startswith(pb + "/") or pb.startswith(pa + "/"):
        return False
    return pa.rsplit("/", 1)[-1] != pb.rsplit("/", 1)[-1]


def touched(branch: Branch) -> frozenset[str]:
    """The names (last path part, lowercased) of the files the branch's kernel facts say it
    touched (``file src/app.py`` -> ``app.py``)."""
    names: set[str] = set()
    for f in branch.facts or ():
        if f.kind == "project" and f.key and f.key.startswith(_FILE):
            names.add(f.key[len(_FILE) :].rstrip("/").rsplit("/", 1)[-1].lower())
    return frozenset(names)


def disjoint(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether two sessions' ``touched`` files are known to share no name: both touched
    files, none in common (a session that touched none may have touched any)."""
    return bool(a) and bool(b) and not a & b


def _label(branch: Branch) -> str:
    """A project's name in a key: its directory's last part, else the session's short id
    without an importer's agent prefix (``aider:``), which every session of a kind shares."""
    if branch.cwd:
        return branch.cwd.rsplit("/", 1)[-1] or branch.cwd
    _, _, rest = branch.id.partition(":")
    return short_id(rest or branch.id, width=32)


def scope_projects(claims: Sequence[Claim], branches: Sequence[Branch]) -> list[Claim]:
    """``claims`` with the project facts that only sessions of different projects differ on
    keyed per project (see the module docs); every other claim as it was."""
    cwd = {b.id: b.cwd for b in branches}
    files = {b.id: touched(b) for b in branches}
    none: frozenset[str] = frozenset()
    by_key: dict[str, list[Claim]] = {}
    for c in claims:
        if c.project and not c.key.startswith(_FILE):
            by_key.setdefault(c.key, []).append(c)
    split: set[str] = set()
    for key, cs in by_key.items():
        values: dict[str, set[str]] = {}
        for c in voting(cs):
            values.setdefault(c.source, set()).add(value_of(c))
        pairs = [(a, b) for a in values for b in values if a < b and values[a] != values[b]]
        read_from_files = key in FROM_FILES
        if pairs and all(
            different_projects(cwd.get(a), cwd.get(b))
            or (read_from_files and disjoint(files.get(a, none), files.get(b, none)))
            for a, b in pairs
        ):
            split.add(key)
    if not split:
        return list(claims)
    label = {b.id: _label(b) for b in branches}
    return [
        replace(c, key=f"{c.key} ({label.get(c.source, short_id(c.source))})")
        if c.project and c.key in split
        else c
        for c in claims
    ]
