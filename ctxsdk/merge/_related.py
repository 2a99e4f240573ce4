"""Whether two sessions may work on one codebase, for what only a codebase gives a meaning.

A bare code name (``ValueError``, ``main``, ``Config``) names a thing of one codebase: two
sessions of one project that both use it share a belief about it, but two sessions of
unrelated code that both use it share a word (two issues in two repositories whose fixes
both raise ``ValueError``). Two sessions are *unrelated* only when something says so:
their directories are of different projects (``_projects.different_projects``), or, a
directory unknown, each touched files (the kernel's ``file`` project facts) and none of one
name in common. A session that touched no file may be of the other's project.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from ._beliefs import Branch
from ._projects import different_projects, disjoint, touched

__all__ = ["unrelated_pairs"]


def _unrelated(a: Branch, b: Branch, files: dict[str, frozenset[str]]) -> bool:
    if a.cwd and b.cwd:
        return different_projects(a.cwd, b.cwd)
    return disjoint(files[a.id], files[b.id])


def unrelated_pairs(branches: Sequence[Branch]) -> frozenset[frozenset[str]]:
    """Every pair of branch ids known to be of unrelated code (see the module docs)."""
    files = {b.id: touched(b) for b in branches}
    return frozenset(
        frozenset((a.id, b.id))
        for a, b in itertools.combinations(branches, 2)
        if _unrelated(a, b, files)
    )
