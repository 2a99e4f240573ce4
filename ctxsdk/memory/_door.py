"""The one door into a memory: every text that enters it passes here, and is decided here.

A memory persists what it is given and hands it to the next session, so it must never keep
a credential; and it must not refuse ordinary words ("tokenizer", "the token budget",
"header X-Auth-Token"). The decision is the redaction engine's alone
(``ctxsdk.session.redact``), made the same way at every door: ``remember`` (its text,
``name``, ``link_to``, the source's quote, ``until``), ``rename``, ``import_json``, the
MEMORY.md import, ``ingest`` (every candidate, observation and session-map box, whatever is
in ``extra``), the model pass and the four memory tools.

- **Redact and keep**: each secret is replaced by ``[REDACTED:<kind>]`` and the rest is
  stored. The whole text is redacted before anything clips it (a clipped secret would no
  longer be recognised).
- **Refuse** (``MemoryRefused``, its reason naming the kinds) only when nothing meaningful
  would remain once the markers are removed: no letter or digit is left.

Rule extraction (ingest's sentences, MEMORY.md lines, the model's proposals) also drops a
sentence that held a secret: a memory distilled from "the key is …" would only point at a
withheld value. Everything else is redacted and kept.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import MemoryRefused
from ..session import Redaction, redact
from ..session.kernel import REDACTION_KINDS, REDACTION_MARKER
from ._model import Candidate, Node, Source

__all__ = [
    "Screened",
    "admit",
    "admit_candidate",
    "admit_json",
    "admit_node",
    "admit_optional",
    "admit_source",
    "hollow",
    "refusal",
    "screen",
    "session_key",
    "summary_text",
]

_NEVER_KEPT = "a memory never keeps credentials"


@dataclass(frozen=True, slots=True)
class Screened:
    """One text through the door: the ``text`` to store (redacted), the ``kinds`` of
    secret it held (withheld now, or marked before), and why it is refused (``refused``,
    None when it is kept); ``counts``: how many of each kind were withheld now."""

    text: str
    kinds: tuple[str, ...]
    refused: str | None
    counts: Mapping[str, int] = field(default_factory=dict)  # withheld now, by kind

    @property
    def held_secret(self) -> bool:
        return bool(self.kinds)


def _kinds(withheld: Mapping[str, int], text: str) -> tuple[str, ...]:
    # A marker already in the text counts too: it stands where a secret was.
    if not withheld and "[REDACTED:" not in text:
        return ()  # nothing withheld and no marker: most texts
    found = set(withheld) | set(REDACTION_MARKER.findall(text))
    known = [k for k in REDACTION_KINDS if k in found]
    return (*known, *sorted(found - set(known)))


def screen(text: str, what: str = "the text", seen: dict[str, Redaction] | None = None) -> Screened:
    """``text`` through the door (see the module docs): redacted whole, and refused when
    it held a secret and no letter or digit is left once the markers are removed. A NUL
    character (U+0000) is dropped: it is no text a memory keeps, and PostgreSQL cannot store
    one, so a memory holds the same text in every store."""
    text = text.replace("\x00", "")
    if not text:
        return Screened(text, (), None)
    red = seen.get(text) if seen is not None else None
    if red is None:
        red = redact(text)
        if seen is not None:
            seen[text] = red
    kinds = _kinds(red.counts, red.text)
    if not kinds:
        return Screened(red.text, (), None)
    if not hollow(red.text):
        return Screened(red.text, kinds, None, red.counts)
    why = f"{what} is only a credential ({', '.join(kinds)}); {_NEVER_KEPT}"
    return Screened(red.text, kinds, why, red.counts)


def hollow(text: str) -> bool:
    """Whether no letter or digit is left in ``text`` once its ``[REDACTED:…]`` markers are
    removed (the door refuses such a text when it held a secret)."""
    return not any(ch.isalnum() for ch in REDACTION_MARKER.sub(" ", text))


def refusal(text: str, what: str = "the text") -> str | None:
    """Why the door refuses ``text`` (it names the kinds of secret found), or None when it
    is kept (its secrets, if any, redacted)."""
    return screen(text, what).refused


# An observation's name, who said it and at which seq ("user@12", "assistant@4051"): every
# such text up to seq 999,999 was put through ``redact`` and came back whole, with nothing
# withheld (tests/test_doors.py samples them again), so the door keeps it without the
# redaction's scans (an ingest names one observation per message).
_SPEAKER_AT = re.compile(r"(?:user|assistant)@(?:0|[1-9][0-9]{0,5})")


def admit(text: str, what: str = "the text", seen: dict[str, Redaction] | None = None) -> str:
    """``text`` as a memory stores it (redacted), or ``MemoryRefused`` (see ``screen``).
    ``seen``: the redactions of texts already through (one candidate's text and quote are
    often the same string), filled as it goes."""
    if _SPEAKER_AT.fullmatch(text) is not None:
        return text  # an observation's name: one of the texts redaction was checked to keep
    if text and "\x00" not in text:  # most texts: nothing withheld and no marker, kept as is
        red = seen.get(text) if seen is not None else None
        if red is None:
            red = redact(text)
            if seen is not None:
                seen[text] = red
        if not red.counts and "[REDACTED:" not in red.text:
            return red.text
    s = screen(text, what, seen)
    if s.refused is not None:
        raise MemoryRefused(f"refused: {s.refused}")
    return s.text


def admit_optional(text: str | None, what: str) -> str | None:
    return None if text is None else admit(text, what)


_PLAIN = (int, float, bool)


def admit_json(value: Any, what: str) -> Any:
    """A copy of a JSON-like value (``extra``) with every string in it, keys too, through
    the door; ``what`` names where it is (a refusal says the path)."""
    if value is None or type(value) in _PLAIN:
        return value  # a number, a flag or null: no text
    if isinstance(value, str):
        return admit(value, what)
    if isinstance(value, Mapping):
        return {
            admit(str(k), f"{what} key"): admit_json(v, f"{what}.{k}") for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [admit_json(v, f"{what}[{i}]") for i, v in enumerate(value)]
    return value


def admit_source(
    source: Source, what: str = "the source", *, seen: dict[str, Redaction] | None = None
) -> Source:
    return Source(
        session=admit_optional(source.session, f"{what}'s session"),
        seq=source.seq,
        quote=admit(source.quote, f"{what}'s quote", seen),
        via=admit(source.via, f"{what}'s via"),
    )


def admit_candidate(cand: Candidate) -> Candidate:
    """Every text of ``cand`` through the door (``MemoryRefused`` names the field); a text
    and a quote that are the same string are redacted once."""
    seen: dict[str, Redaction] = {}  # its texts by value: a name, text and quote often repeat
    return replace(
        cand,
        name=admit(cand.name, "the name", seen),
        text=admit(cand.text, "the text", seen),
        source=admit_source(cand.source, seen=seen),
        until=admit_optional(cand.until, "until"),
        until_at=admit_optional(cand.until_at, "until_at"),
        fail=admit_optional(cand.fail, "fail"),
        fix=admit_optional(cand.fix, "fix"),
        links=tuple((label, admit(name, "a link")) for label, name in cand.links),
        extra=admit_json(dict(cand.extra), "extra"),
    )


def admit_node(node: Node, what: str = "the node") -> Node:
    """Every text of ``node`` through the door, its id aside (the store's own)."""
    return replace(
        node,
        name=admit(node.name, f"{what}'s name"),
        text=admit(node.text, f"{what}'s text"),
        aliases=tuple(admit(a, f"{what}'s aliases[{i}]") for i, a in enumerate(node.aliases)),
        uri=admit(node.uri, f"{what}'s uri"),
        sources=tuple(
            admit_source(s, f"{what}'s sources[{i}]") for i, s in enumerate(node.sources)
        ),
        until=admit_optional(node.until, f"{what}'s until"),
        until_at=admit_optional(node.until_at, f"{what}'s untilAt"),
        fail=admit_optional(node.fail, f"{what}'s fail"),
        fix=admit_optional(node.fix, f"{what}'s fix"),
        created_at=admit(node.created_at, f"{what}'s createdAt"),
        updated_at=admit(node.updated_at, f"{what}'s updatedAt"),
        extra=admit_json(dict(node.extra), f"{what}'s extra"),
    )


def session_key(session: object) -> str:
    """How a memory names a session (a ``Session``, or its id): its id, redacted, so a log
    whose id is a credential stores none, and every lookup names it the same way."""
    return redact(str(getattr(session, "id", session))).text


def summary_text(text: str) -> str:
    """A text that must be stored whatever it holds (a session-map box's summary): the
    door's text, or a notice of what was withheld where the door refuses it."""
    s = screen(text)
    if s.refused is None:
        return s.text
    return f"(withheld: {', '.join(s.kinds)})"
