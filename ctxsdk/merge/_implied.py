"""A language the block's file lines already show.

The kernel reads a session's ``language`` from the code files it touched and says where:
the fact's seq and evidence seqs are events it was noticed in, and a ``file`` fact's are the
events that touched that file. So a language slot says nothing the block does not when
every session backing it has, among the block's file lines, a file the kernel read that
language from (``file src/agents/core/metrics/types.ts`` says TypeScript), or a file line
that quotes it at an event the kernel read the language at (a shared file's claim is the
line the session named the file in, or the kernel's line of the file, at its seq): the block
leaves it out, as it leaves out any repeat (``_prune``). A language one backer's shown files do not
back (its code is named by no file line; a ``.md`` file is no evidence of TypeScript) stays,
so what two sessions share is dropped only when each one's own files show it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence, Set

from ._beliefs import Branch, Slot
from ._inferred import base_key

__all__ = ["IMPLIED", "file_of", "same_file", "shown_languages"]

IMPLIED = "the language of files the block shows (each backer's own)"

_FILE = "file "
_LANGUAGE = "language"


def same_file(a: str, b: str) -> bool:
    """Whether two paths (lowercase, no surrounding slashes) name one file: equal, or one
    is the other's trailing part (``metrics/types.ts`` of ``src/agents/core/metrics/types.ts``)."""
    short, long = sorted((a, b), key=len)
    return long == short or long.endswith("/" + short)


def _path(key_or_value: str) -> str:
    return key_or_value.strip().strip("/").lower()


def file_of(slot: Slot) -> str | None:
    """The path a ``file`` slot shows (lowercase, no surrounding slashes), or None."""
    if not slot.key.startswith(_FILE) or not slot.presented:
        return None
    return _path(slot.presented[0])


def _seqs(branch: Branch, key: str, value: str | None = None) -> list[tuple[str, set[int]]]:
    """The branch's kernel project facts of ``key`` (of ``value`` if given; any ``file `` key
    when ``key`` is ``file ``), each as (its key, the seqs it was read at)."""
    out: list[tuple[str, set[int]]] = []
    for f in branch.facts or ():
        if f.kind != "project" or not f.key:
            continue
        if key == _FILE and not f.key.startswith(_FILE):
            continue
        if key != _FILE and (f.key != key or (f.value or "").lower() != value):
            continue
        out.append((f.key, {f.source.seq, *f.evidence}))
    return out


def _backers(slot: Slot) -> set[str]:
    return {c.source for v in slot.presented for c in slot.supporting(v)}


def shown_languages(slots: Iterable[Slot], branches: Sequence[Branch]) -> set[str]:
    """The keys of the language slots among ``slots`` that the file slots among them show
    for every backer (see the module docs)."""
    slots = list(slots)
    by_id = {b.id: b for b in branches}
    shown: dict[str, list[str]] = {}  # source -> the paths of file lines backed by it
    named: dict[str, set[int]] = {}  # source -> the seqs its claims of those lines quote
    for s in slots:
        if (path := file_of(s)) is not None:
            for src in _backers(s):
                shown.setdefault(src, []).append(path)
            for v in s.presented:
                for c in s.supporting(v):
                    named.setdefault(c.source, set()).add(c.seq)
    out: set[str] = set()
    for s in slots:
        if base_key(s.key) != _LANGUAGE or s.statement or len(s.presented) != 1:
            continue
        backers = _backers(s)
        if backers and all(
            _read_from_shown(
                by_id.get(src), s.presented[0], shown.get(src, ()), named.get(src, set())
            )
            for src in backers
        ):
            out.add(s.key)
    return out


def _read_from_shown(
    branch: Branch | None, language: str, paths: Sequence[str], named: Set[int] = frozenset()
) -> bool:
    """Whether the kernel read ``language`` for ``branch`` at an event that touched one of
    the files at ``paths``, or at an event a shown file line quotes (``named``)."""
    if branch is None or not paths:
        return False
    read = set().union(*(seqs for _, seqs in _seqs(branch, _LANGUAGE, language)))
    if read & named:
        return True
    return any(
        seqs & read
        for key, seqs in _seqs(branch, _FILE)
        if any(same_file(_path(key[len(_FILE) :]), p) for p in paths)
    )
