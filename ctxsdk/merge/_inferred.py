"""An inferred project fact: what the kernel read from the work, not what anyone said.

The kernel infers three project facts from what a session's tools touched, none from a
sentence: ``language`` from the files' extensions, ``framework`` from paths, imports and
the programs run, ``package manager`` from lockfiles and commands. In a merged block they
are worth a line only as what sessions share or dispute:

- **one session's** (no other session holds the key) is that session's trivia: the block
  already shows the files and commands it was read from (``language`` TypeScript beside
  ``file src/app.ts``), and a reader of a merge wants what the sessions share and where
  they differ. The block leaves it out; it stays in ``result.slots`` with the reason.
- **a difference read from disjoint files** is no dispute: ``language`` and ``framework``
  are read from the files a session touched, so two sessions that touched no file in
  common describe different code (a Python service and a JavaScript front end of one
  repository; two unrelated repositories whose directories are unknown), and neither
  contradicts the other. ``_projects`` keys such values per session, and each, held by one
  session, then stays out as above.

A user who says "we use pnpm" gives a setting, not an inferred project fact: it is kept as
any stated fact is. Which keys are inferred is the kernel's vocabulary (``INFERRED``): the
kernel gives no mark of its own that a fact was inferred rather than read from a command.
"""

from __future__ import annotations

from collections.abc import Iterable

from ._beliefs import Slot
from ._claims import Claim

__all__ = ["FROM_FILES", "INFERRED", "ONE_SESSION", "base_key", "one_session_inferred"]

INFERRED = frozenset({"language", "framework", "package manager"})
"""Kernel project-fact keys inferred from what the tools touched, not read from a sentence."""

FROM_FILES = frozenset({"language", "framework"})
"""Of those, the keys read mostly from the files a session touched."""

ONE_SESSION = "one session's inferred project fact (the block shows what it was read from)"


def base_key(key: str) -> str:
    """A key without the per-project or per-session scope ``_projects`` appends."""
    return key.partition(" (")[0]


def _inferred(claim: Claim) -> bool:
    return claim.project and claim.origin == "tool" and base_key(claim.key) in INFERRED


def one_session_inferred(slots: Iterable[Slot]) -> set[str]:
    """The keys of slots whose every live claim is one session's inferred project fact."""
    out: set[str] = set()
    for s in slots:
        live = s.live
        if live and len({c.source for c in live}) == 1 and all(_inferred(c) for c in live):
            out.add(s.key)
    return out
