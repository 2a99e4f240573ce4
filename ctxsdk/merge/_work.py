"""What the sessions did to a file: the line of a file slot.

A file slot is keyed by the file it holds (``file src/app.py`` = src/app.py), so the
``key = **value**`` line says the path twice and, quoting the line a session named it in,
often a third time: it says only that the file exists. What a reader can build on is what
was done to it. The kernel says that in one line per file a session changed or kept reading
(``edited X (3 changes; last: added the retry)``, ``created X: …``, ``read X (5 times)``),
and a shared file's claim is that line for a session the kernel has it of (``_shared``),
else the line the session named the file in. So the line is::

    - `file src/app.py` — edited in 2 sessions (5 changes; last in each: A | B); read 4 times;
      named in 1 more session: "…" (evidence 3; 3 sources)

each session counted once, under what it did (created or edited, else read, else it only
named the file), and a naming line quoted only when it is a sentence about the file (three
words beyond the names it holds): a bare path or a listing says nothing the key does not.
A slot keyed otherwise (a model's ``file config`` = yaml) is no file slot.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ._beliefs import Slot
from ._claims import Claim
from ._said import QUOTE_CHARS, short

__all__ = ["Work", "file_work", "only_read", "work_of"]

# The kernel's file-fact line (``ctxsdk.session._facts._tools``): the verb, the path, then
# the count and the last change told, or the one change told; a line cut at its limit may
# have lost its closing parenthesis.
_CHANGED = re.compile(
    r"(?P<verb>created|edited) .+?"
    r"(?: \((?P<n>\d+) changes(?:; last: (?P<last>.*?))?\)?|: (?P<told>.+))?",
    re.S,
)
_READ = re.compile(r"read .+? \((?P<n>\d+) times\)", re.S)
# a token that names a path or a file (``src/app.py``, ``AGENTS.md``) and a word beside it
_NAME = re.compile(r"\S*(?:/|[^\W_]\.[^\W_])\S*")
_WORD = re.compile(r"[^\W\d_]{3,}")
_SENTENCE_WORDS = 3


@dataclass(frozen=True, slots=True)
class Work:
    """What one session did to a file: ``created`` or ``edited`` it in ``count`` changes
    (the last one ``told``, when the kernel could say it), or ``read`` it ``count`` times."""

    verb: Literal["created", "edited", "read"]
    count: int
    told: str | None = None


def work_of(claim: Claim) -> Work | None:
    """The work a tool claim's text (a kernel file fact's line) says, else None."""
    if claim.origin != "tool":
        return None
    text = " ".join(claim.text.split())
    if m := _READ.fullmatch(text):
        return Work("read", int(m["n"]))
    if m := _CHANGED.fullmatch(text):
        told = (m["last"] or m["told"] or "").strip()
        verb: Literal["created", "edited"] = "created" if m["verb"] == "created" else "edited"
        return Work(verb, int(m["n"] or 1), told or None)
    return None


def _is_file(key: str, value: str) -> bool:
    return " ".join(key.split()).lower() == " ".join(f"file {value}".split()).lower()


def _about(text: str) -> bool:
    """Whether a naming line says something of the file: words beyond the names it holds."""
    return len(_WORD.findall(_NAME.sub(" ", text))) >= _SENTENCE_WORDS


def _works(slot: Slot, value: str) -> tuple[list[Work], list[Claim]]:
    """Each session's work on the file (the most it did), and the claims of the sessions
    that only named it."""
    by_source: dict[str, list[Claim]] = {}
    for c in slot.supporting(value):
        by_source.setdefault(c.source, []).append(c)
    works: list[Work] = []
    named: list[Claim] = []
    for src in sorted(by_source):
        done = [w for c in by_source[src] if (w := work_of(c)) is not None]
        if done:
            works.append(max(done, key=lambda w: (w.verb != "read", w.count, w.told or "")))
        else:
            named += by_source[src]
    return works, named


def only_read(slot: Slot) -> bool:
    """Whether ``slot`` is a file slot every session of which only read the file."""
    if slot.decision.outcome != "resolved" or slot.decision.winner is None:
        return False
    v = slot.decision.winner
    if not _is_file(slot.key, v):
        return False
    works, named = _works(slot, v)
    return bool(works) and not named and all(w.verb == "read" for w in works)


def file_work(slot: Slot, value: str) -> str | None:
    """What was done to the file of ``slot``'s ``value`` across its sessions (module
    docs), without the path; None when ``slot`` is not keyed by that file (or no claim
    gives it)."""
    if not _is_file(slot.key, value):
        return None
    works, named = _works(slot, value)
    parts: list[str] = []
    changed = [w for w in works if w.verb != "read"]
    if changed:
        parts.append(_changed(changed))
    reads = [w.count for w in works if w.verb == "read"]
    if reads:
        where = f" in {len(reads)} sessions ({sum(reads)} times)" if len(reads) > 1 else ""
        parts.append(f"read{where}" if where else f"read {reads[0]} times")
    n_named = len({c.source for c in named})
    if n_named:
        parts.append(_named(n_named, more=bool(parts), claims=named))
    return "; ".join(parts) or None


def _changed(works: Sequence[Work]) -> str:
    verb = " and ".join(sorted({w.verb for w in works}))  # "created and edited"
    where = f" in {len(works)} sessions" if len(works) > 1 else ""
    total = sum(w.count for w in works)
    tells = list(dict.fromkeys(w.told for w in works if w.told))
    told = short(" | ".join(tells), QUOTE_CHARS)
    if total > 1:
        last = "last" if len(tells) <= 1 else "last in each"
        return f"{verb}{where} ({total} changes" + (f"; {last}: {told})" if tells else ")")
    return f"{verb}{where}: {told}" if tells else f"{verb}{where}"


def _named(n: int, *, more: bool, claims: Sequence[Claim]) -> str:
    sessions = "session" if n == 1 else "sessions"
    head = f"named in {n} more {sessions}" if more else f"named in {n} {sessions}"
    about = sorted(
        (c for c in claims if _about(c.text)), key=lambda c: (-c.evidence, -len(c.text), c.seq)
    )
    return f'{head}: "{short(about[0].text)}"' if about else head
