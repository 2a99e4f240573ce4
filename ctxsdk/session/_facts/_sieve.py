"""The last gates of the reader: no keyed fact without a value, and each fact of a log once.

Every rule of the kernel reads one sentence, one call or one result; none sees the whole log.
What only the whole log shows is sifted here, on the facts the rules gave:

- ``sound``: a fact says something. A keyed fact's value must be a value: one that is only
  the redaction marker (a withheld credential) or only punctuation says nothing, and a
  setting whose value is its own key restates the key. ``FactReader`` lets no other through.
- ``once``: a thing said twice is one fact. A user re-sends a message after a failed model
  call (Aider), a harness relays the same error on every retry, an agent repeats its plan:
  the repeat adds nothing a teammate would write down, so it becomes ``evidence`` of the
  first. A setting restated with the value in force is a repeat; a value that changes back
  ("30", "60", "30") is not, since the slot's latest value is what holds
  (``Facts.current``). ``read_facts`` applies it to the whole log; ``FactReader`` does not,
  since an incremental reader (Fold's) refreshes a restated item itself.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

from .._redact import MARKER
from ._model import Fact

__all__ = ["once", "sound"]

_FOLD = re.compile(r"[\s\"'`*_.,;:!?。！？，；：…]+")


def _norm(text: str) -> str:
    """A fact's text for comparison: case, whitespace, quotes and stops ignored."""
    return _FOLD.sub(" ", text.casefold()).strip()


def sound(fact: Fact) -> bool:
    """Whether a fact says something: its text has words besides a redaction marker, and a
    keyed fact's value is a value (not the marker alone, not its own key)."""
    if not re.search(r"\w", MARKER.sub("", fact.text)):
        return False
    if fact.key is None or fact.value is None:
        return True
    if not re.search(r"\w", MARKER.sub("", fact.value)):
        return False  # "token = [REDACTED:github]": the value was withheld
    return fact.kind != "setting" or _norm(fact.value) != _norm(fact.key)


def once(facts: Iterable[Fact]) -> list[Fact]:
    """The facts in order, a repeat folded into the first as its ``evidence`` (module docs)."""
    out: list[Fact] = []
    said: dict[tuple[str, str], int] = {}  # (kind, text) -> index in out
    held: dict[str, tuple[tuple[str, str | None, bool], int]] = {}  # slot -> value in force
    own_evidence: dict[int, tuple[int, ...]] = {}  # index -> the evidence its rule gave
    for f in facts:
        at: int | None
        slot = f.slot
        if slot is not None and f.value is not None:
            value = (_norm(f.value), f.unit, f.negated)
            now = held.get(slot)
            at = now[1] if now is not None and now[0] == value else None
            if at is None:
                held[slot] = (value, len(out))
        else:
            text = (f.kind, _norm(f.text))
            at = said.get(text)
            if at is None:
                said[text] = len(out)
        if at is None:
            out.append(f)
            continue
        first = out[at]
        own = own_evidence.setdefault(at, first.evidence)
        repeats = tuple(s for s in first.evidence if s not in own)
        # the repeats go before the fact's own evidence, whose last seq (an error's passing
        # run) keeps its place
        seqs = (*repeats, f.source.seq, *own)
        extra = tuple(dict.fromkeys(s for s in seqs if s != first.source.seq))
        out[at] = dataclasses.replace(first, evidence=extra)
    return out
