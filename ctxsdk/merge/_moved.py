"""Moved files: a file one session relies on that another session moved or renamed.

Sessions run one after another on one project, so a file one session created and used can
be gone by the time another ran ``mv game_2048.py 2048.py``. Each session is right in its
own time and the merge cannot tell which time is now: where the file is, is a real
disagreement. For each file a session's tool call moved (``_anchors.moves``) that another
session uses (a call, the user's words or the assistant's text name it: ``_shared``'s
use), the slot ``location of <file name>`` gets the user's path (its longest form of the
name) and the mover's destination, each at the evidence of its strongest use (a call: 3),
and the score decides: alike weights stay disputed. A moved name gets no shared-name slot
as well (``moved_claims`` returns it to skip): its location slot says more.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._anchors import moves
from ._beliefs import Branch
from ._claims import Claim
from ._shared import EVIDENCE_OF_USE, Table, mention_claim
from ._slots import Evidence

__all__ = ["LOCATION", "moved_claims"]

LOCATION = "location of"
"""The key prefix of a moved file's slot (``location of game_2048.py``)."""


def _name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def moved_claims(branches: Sequence[Branch], table: Table) -> tuple[list[Claim], set[str]]:
    """The location claims of every file one branch moved and another uses, and the
    idents (file names, lowercased) they cover (see the module docs)."""
    trust = {b.id: b.trust for b in branches}
    out: list[Claim] = []
    covered: set[str] = set()
    moved = {b.id: moves(b) for b in branches}
    for b in branches:
        for mv in moved[b.id]:
            ident = _name(mv.src).lower()
            name = table.get(("file", ident))
            if name is None:
                continue
            movers = {
                src for src, ms in moved.items() if any(_name(m.src).lower() == ident for m in ms)
            }
            users = [src for src in name.mentions if src not in movers and name.used_by(src)]
            if not users:
                continue
            key = f"{LOCATION} {ident}"
            if ident in covered and any(c.key == key and c.source == b.id for c in out):
                continue  # one claim per mover: its first move of the file
            covered.add(ident)
            out.append(
                Claim(
                    key=key,
                    value=mv.dst.lower(),
                    evidence=int(Evidence.TOOL_VERIFIED),
                    text=mv.line,
                    source=b.id,
                    seq=mv.seq,
                    kind="fact",
                    origin="tool",
                    trust=trust[b.id],
                    shown=mv.dst,
                )
            )
            for src in users:
                if any(c.key == key and c.source == src for c in out):
                    continue
                ms = name.mentions[src]
                form = max((a.form for a in ms), key=lambda f: (f.count("/"), len(f), f))
                best = max(ms, key=lambda a: (a.form == form, EVIDENCE_OF_USE[a.use], -a.seq))
                strongest = max(EVIDENCE_OF_USE[a.use] for a in ms)
                out.append(mention_claim(key, form, best, strongest, src, trust[src]))
    return out, covered
