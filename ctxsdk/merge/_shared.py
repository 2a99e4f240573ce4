"""Shared names: what two or more merged sessions both name, as cross-session claims.

A name (``_anchors``) that several sessions mention is a belief they share: the file the
work is in, the command that builds, the version the project needs. Each session that
names it gives one claim of the slot ``<kind> <name>`` (``file docs/agents.md``), with its
own provenance (the line it was named in, its seq), so the slot is backed by every one of
them and packing ranks it with the facts sessions agree on.

Not every shared name is worth a line. A session *uses* a name when its user or a tool
call names it, or its assistant names a file, command, version or directory (work either
way); a tool result only *shows* a name (two sessions that read one README share its every
word), and a bare code name in the assistant's prose is narrative. A shared name is one
that two or more sessions use (a version, a value rather than a thing read alike, also
when one session uses it and another's tool output shows it); a file whose name is one
plain word (``README.md``, ``types.ts``) must also share a directory (it names no one file
alone), and a name a slot already holds as its value (``language`` = TypeScript) adds
nothing. The rest are ranked by how many sessions use it, then how many name it at all,
then by kind (a command before a file or version, a bare code name last) and mentions; only
the best ``limit`` become claims, so a block is not flooded by two sessions that read the
same code. A bare code name that sessions of unrelated code (``_related``) use is shared
only through a call line both ran (``echo SUBMIT`` of one harness): ``ValueError`` in two
repositories' fixes is one word, not one thing.

A file is compared by its name and shown by the longest path form two sessions share
(``docs/AGENTS.md`` rather than ``AGENTS.md``); a session uses it only by a form that names
that path (the path or a trailing part of it): ``src/agents/core/session/types.ts`` in one
session and ``src/agents/core/metrics/types.ts`` in another are two files of one name.
Evidence per session: the user 4, a call or a result 3 (what a tool ran or showed), the
assistant 2. A session the kernel has a ``file`` fact of for the shown file (it edited, created
or kept reading it, by any path that names it) quotes that fact's line instead, at no lower
evidence: the slot's line then says what was done to the file (``_work``).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from types import MappingProxyType

from ._anchors import Anchor, AnchorKind, Use, anchors
from ._beliefs import Branch
from ._claims import Claim, Origin
from ._implied import same_file
from ._related import unrelated_pairs
from ._slots import Evidence

__all__ = [
    "EVIDENCE_OF_USE",
    "ORIGIN_OF_USE",
    "SHARED_LIMIT",
    "SharedName",
    "Table",
    "mention_claim",
    "name_table",
    "shared_claims",
    "shared_names",
]

SHARED_LIMIT = 8
"""How many shared names at most become claims (the best ranked)."""

EVIDENCE_OF_USE: Mapping[Use, int] = MappingProxyType(
    {
        "user": int(Evidence.USER_STATED),
        "call": int(Evidence.TOOL_VERIFIED),
        "result": int(Evidence.TOOL_VERIFIED),
        "assistant": int(Evidence.INFERRED),
    }
)
ORIGIN_OF_USE: Mapping[Use, Origin] = MappingProxyType(
    {"user": "user", "call": "tool", "result": "tool", "assistant": "assistant"}
)
# The line a slot quotes: what a session said about the name reads better than a listing.
_QUOTE_ORDER: Mapping[Use, int] = MappingProxyType(
    {"assistant": 0, "user": 1, "call": 2, "result": 3}
)
_KIND_RANK: Mapping[AnchorKind, int] = MappingProxyType(
    {"command": 4, "file": 3, "version": 3, "directory": 2, "name": 1}
)
_USED = frozenset({"user", "assistant", "call"})
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


@dataclass
class SharedName:
    """One name and its mentions per source (branch id -> mentions, message order)."""

    kind: AnchorKind
    ident: str
    mentions: dict[str, list[Anchor]] = field(default_factory=dict)

    @property
    def sources(self) -> int:
        return len(self.mentions)

    @property
    def users(self) -> int:
        """How many sessions use the name: name it in a call or the user's words, or (a
        file, command, version or directory, which are work either way) in the assistant's
        text; a bare code name in the assistant's prose is its narrative."""
        return sum(self.used_by(src) for src in self.mentions)

    def shared(self, unrelated: Collection[frozenset[str]] = ()) -> bool:
        """Whether the name is a shared belief: two sessions use it; a version (a value, not
        a thing two sessions merely read alike) also when one session uses it and another's
        tool output shows it (a tool-verified corroboration). A bare code name two sessions
        of ``unrelated`` code use (``_related``) is shared only through one call line both
        ran (a harness's submit command): else it is one word in two codebases."""
        if self.kind == "version":
            return self.users >= 1 and self.sources >= 2
        if self.kind != "name" or not unrelated:
            return self.users >= 2
        users = [src for src in self.mentions if self.used_by(src)]
        calls = {src: self._calls(src) for src in users}
        return any(
            frozenset((a, b)) not in unrelated or calls[a] & calls[b]
            for a, b in itertools.combinations(users, 2)
        )

    def _calls(self, source: str) -> set[str]:
        return {" ".join(a.line.split()) for a in self.mentions[source] if a.use == "call"}

    def specific(self) -> bool:
        """Whether the shared form names one thing: a file whose name is one plain word
        (``README.md``, ``types.ts``, ``__init__.py``) does so only with a directory both
        sessions give (``metrics/types.ts``)."""
        if self.kind != "file":
            return True
        shown = self.shown()
        stem = shown.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        return "/" in shown or len(_WORD.findall(stem)) >= 2

    def used_by(self, source: str) -> bool:
        """Whether ``source`` uses the name (``users`` counts these sessions); a file only
        by a form that names the shown file (``of_shown``)."""
        used = _USED if self.kind != "name" else _USED - {"assistant"}
        return any(a.use in used for a in self.of_shown(source))

    def of_shown(self, source: str) -> list[Anchor]:
        """``source``'s mentions of the thing shown: for a file, those whose path is the
        shown one or a trailing part of it (a name is compared by its file name, so
        ``src/agents/core/session/types.ts`` is a mention of ``types.ts`` but not of the
        shown ``metrics/types.ts``: another file of that name, and its bare ``types.ts``
        says not which); else all of them."""
        ms = self.mentions.get(source, [])
        if self.kind != "file":
            return ms
        shown = self._shown_path
        paths = [_path(a.form) for a in ms]
        # a bare file name is ambiguous in a session that names another file of that name
        other = any("/" in p and not same_file(p, shown) for p in paths)
        return [
            a
            for a, p in zip(ms, paths, strict=True)
            if same_file(p, shown) and ("/" in p or not other)
        ]

    @cached_property
    def _shown_path(self) -> str:
        # read once the table is complete (``name_table`` fills the mentions first)
        return _path(self.shown())

    @property
    def count(self) -> int:
        return sum(len(ms) for ms in self.mentions.values())

    def rank(self) -> tuple[int, int, int, float, str]:
        return (
            self.users,
            self.sources,
            _KIND_RANK[self.kind],
            math.log1p(self.count),
            self.ident,
        )

    def shown(self) -> str:
        """The form to show: for a file, the longest trailing path two sessions share."""
        if self.kind != "file":
            return _most_common(a.form for ms in self.mentions.values() for a in ms)
        tails: dict[str, set[str]] = {}
        cased: dict[str, str] = {}
        for src, ms in self.mentions.items():
            for a in ms:
                parts = [p for p in a.form.split("/") if p not in ("", ".")]
                for i in range(len(parts)):
                    tail = "/".join(parts[i:])
                    tails.setdefault(tail.lower(), set()).add(src)
                    cased.setdefault(tail.lower(), tail)
        both = [t for t, srcs in tails.items() if len(srcs) >= 2] or [self.ident]
        best = max(both, key=lambda t: (t.count("/"), len(t), t))
        return cased.get(best, best)


def _path(form: str) -> str:
    return "/".join(p for p in form.lower().split("/") if p not in ("", "."))


def _most_common(forms: Iterable[str]) -> str:
    counts: dict[str, int] = {}
    for f in forms:
        counts[f] = counts.get(f, 0) + 1
    return max(sorted(counts), key=lambda f: counts[f])


Table = dict[tuple[AnchorKind, str], SharedName]


def name_table(branches: Sequence[Branch]) -> Table:
    """Every name ``branches`` mention, with its mentions per branch (read once)."""
    table: Table = {}
    for b in branches:
        for a in anchors(b):
            name = table.setdefault((a.kind, a.ident), SharedName(a.kind, a.ident))
            name.mentions.setdefault(b.id, []).append(a)
    return table


def shared_names(
    branches: Sequence[Branch] | Table,
    *,
    limit: int = SHARED_LIMIT,
    known: Iterable[str] = (),
    skip: Iterable[str] = (),
    unrelated: Collection[frozenset[str]] = (),
) -> list[SharedName]:
    """The names two or more of ``branches`` (or a ``name_table`` of them) use, best first
    (at most ``limit``; see the module docs). A name whose ident is in ``known`` (a value a
    slot already holds, such as ``language`` = TypeScript) adds nothing, and one in ``skip``
    has a slot of its own (a moved file's location); both are left out."""
    table = branches if isinstance(branches, dict) else name_table(branches)
    if limit <= 0:
        return []
    left_out = {k.lower() for k in known} | {k.lower() for k in skip}
    shared = [
        n
        for n in table.values()
        if n.shared(unrelated) and n.ident not in left_out and n.specific()
    ]
    shared.sort(key=lambda n: n.rank(), reverse=True)
    return shared[:limit]


def shared_claims(
    branches: Sequence[Branch],
    *,
    limit: int = SHARED_LIMIT,
    known: Iterable[str] = (),
    skip: Iterable[str] = (),
    table: Table | None = None,
    files: Iterable[Claim] = (),
) -> list[Claim]:
    """One claim per session for each shared name (``shared_names``): key ``<kind> <shown
    form, lowercased>``, value the shown form, evidence by its strongest use, quoting the
    line it was named in. For a file, a session's own ``file`` claim among ``files`` (the
    kernel's: ``edited src/app.py (3 changes)``) of that one file is quoted instead: what
    the session did to it says more than where it named it (``_work``)."""
    trust = {b.id: b.trust for b in branches}
    names = table if table is not None else name_table(branches)
    work = _file_claims(files)
    out: list[Claim] = []
    pairs = unrelated_pairs(branches)
    for name in shared_names(names, limit=limit, known=known, skip=skip, unrelated=pairs):
        shown = name.shown()
        key = f"{name.kind} {shown.lower()}"
        for src, ms in name.mentions.items():
            # the quote and the evidence are of the shown file, not another of that name
            mine = name.of_shown(src) or ms
            best = min(mine, key=lambda a: (_QUOTE_ORDER[a.use], a.seq))
            strongest = max(EVIDENCE_OF_USE[a.use] for a in mine)
            c = mention_claim(key, shown, best, strongest, src, trust[src])
            done = _of_file(work.get(src, ()), _path(shown)) if name.kind == "file" else None
            if done is not None:
                evidence = max(strongest, done.evidence)
                c = replace(c, text=done.text, seq=done.seq, evidence=evidence, origin="tool")
            out.append(c)
    return out


def _file_claims(claims: Iterable[Claim]) -> dict[str, list[tuple[str, Claim]]]:
    """The live claims of a ``file`` key by source, each with its path (compared form)."""
    out: dict[str, list[tuple[str, Claim]]] = {}
    for c in claims:
        if c.key.lower().startswith("file ") and not c.superseded and not c.statement:
            out.setdefault(c.source, []).append((_path(c.value), c))
    return out


def _of_file(claims: Sequence[tuple[str, Claim]], path: str) -> Claim | None:
    """The one claim of the file at ``path`` (None when none is, or two files could be)."""
    mine = [c for p, c in claims if same_file(p, path)]
    return mine[0] if len(mine) == 1 else None


def mention_claim(
    key: str, shown: str, best: Anchor, evidence: int, src: str, trust: int | None
) -> Claim:
    """One session's claim of a name it uses: the value as shown, quoted from ``best`` (its
    line and seq), weighed by ``evidence`` (the strongest use)."""
    return Claim(
        key=key,
        value=shown.lower(),
        evidence=evidence,
        text=best.line,
        source=src,
        seq=best.seq,
        kind="fact",
        origin=ORIGIN_OF_USE[best.use],
        trust=trust,
        shown=shown,
    )
