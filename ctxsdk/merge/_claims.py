"""Claims: the keyed facts of a session, as the merge weighs them.

Merge reads no sentences itself. The base's fact kernel (``Session.facts()``) reads the
whole log once, deterministically, in English and Chinese: settings and key/value facts
(``key``, ``value``, ``unit``, polarity ``negated``), decisions with a key, project facts
from the tool calls (language, package manager, test command, key files ...), and the
user's instructions and preferences. This module is a thin adapter: each fact that carries
a ``key`` becomes one ``Claim``. An instruction, preference, decision or project fact the
user stated without a key becomes a *statement* claim, keyed by its own words
(``statement_key``), so two sessions whose users said the same thing meet in one slot; the
assistant's unkeyed statements, outcomes and errors give none (narrative, not beliefs to
merge).

A claim keeps two forms of its value: ``value``, the comparison form (lowercase, spaces
collapsed, the unit appended: ``60 seconds``), on which sessions agree or differ, and
``shown``, the phrase as it was said (``UUIDs``, ``PostgreSQL``), which renderings show.

Evidence by origin (the fact's source role): the user's words 4 (USER_STATED), a tool
call or its result 3 (TOOL_VERIFIED: a project fact read from a command is verified), the
assistant's text 2 (INFERRED). The kernel reads no reasoning blocks and no plugin-injected
context (not the user's voice), so neither gives claims. Every fact's strings are redacted
before they become a claim; a fact whose value was a credential gives none.

Polarity: "The API is not public." is the claim ``api`` ≠ ``public`` (``negated``); it
enters the slot state as the value ``not public``, so a session that says the opposite
disputes it. Supersession within one session: the kernel's ``Facts.current()`` keeps the
latest fact per (kind, key); then, per key, a later positive claim supersedes every earlier
claim of that key, and a later negated claim the earlier claims of its value. Superseded
claims are kept (``superseded=True``) as provenance.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Literal

from ..session import Fact, Session, redact
from ..session.kernel import instruction_kind
from ._slots import Evidence, SlotState
from ._tainted import tainted_texts

__all__ = [
    "CLAIM_KINDS",
    "STATEMENT",
    "Claim",
    "FactLike",
    "claims_of_facts",
    "claims_to_states",
    "comparison_value",
    "extract_claims",
    "statement_key",
]

ClaimKind = Literal["fact", "decision", "constraint", "refuted"]
CLAIM_KINDS: tuple[str, ...] = ("fact", "decision", "constraint", "refuted")
Origin = Literal["user", "tool", "assistant", "reasoning", "injected"]

_EVIDENCE: Mapping[str, int] = MappingProxyType(
    {
        "user": Evidence.USER_STATED,
        "tool": Evidence.TOOL_VERIFIED,
        "assistant": Evidence.INFERRED,
        "reasoning": Evidence.SPECULATIVE,
    }
)


@dataclass(frozen=True, slots=True)
class Claim:
    """One keyed assertion: ``key`` = ``value`` (or, ``negated``, ≠), said in ``text`` by
    ``source`` at event ``seq``, known at ``evidence`` 1..4. ``shown`` is the value as it
    was said (original case, with its unit); ``value`` is the comparison form."""

    key: str
    value: str
    evidence: int
    text: str
    source: str
    seq: int
    superseded: bool = False
    negated: bool = False
    kind: ClaimKind | None = None
    origin: Origin | None = None
    # The source's trust level (a ``Trust``; None = unlabelled, which the trust check refuses)
    trust: int | None = None
    # Derivation routes (alternatives, each a conjunction of premise keys) the model path names
    derived_from: tuple[tuple[str, ...], ...] = ()
    shown: str | None = None
    # A statement without a key (a user's instruction, preference or decision): its slot is
    # keyed by the statement itself (``STATEMENT``), so sessions that say it meet there.
    statement: bool = False
    # A fact of the project the session ran in (language, test command, a file): it holds
    # for that project, so sessions of different projects do not dispute it (``_projects``)
    project: bool = False

    @property
    def display(self) -> str:
        """The value as said (``shown``), else the comparison form."""
        return self.shown or self.value

    def __str__(self) -> str:
        op = "≠" if self.negated else "="
        flag = " (superseded)" if self.superseded else ""
        return f"{self.key} {op} {self.value} @{self.evidence} [{self.source}#{self.seq}]{flag}"


# A kernel fact (``Session.facts()`` items): the engine reads the base's ``Fact``.
FactLike = Fact


_KIND_OF_FACT: Mapping[str, ClaimKind] = MappingProxyType(
    {
        "setting": "fact",
        "project": "fact",
        "decision": "decision",
        "instruction": "constraint",
        "preference": "constraint",
    }
)


STATEMENT = "stated"
"""The value of a statement slot: the key holds what was said, the value only that it was."""
# what a user says without a key that holds beyond the turn: a rule, a wish, a choice, and
# how the project is ("we don't control that process - it's a 3rd party tool")
_STATEMENT_KINDS = frozenset({"instruction", "preference", "decision", "project"})


def statement_key(kind: str, text: str) -> str:
    """The slot key of an unkeyed statement: its kind and its words, lowercased, spaces
    collapsed, closing punctuation dropped (``instruction: don't produce code``)."""
    words = " ".join(text.split()).lower().rstrip(" .!。！")
    return f"{kind}: {words}"


def comparison_value(value: str, unit: str | None = None) -> str:
    """The form two sessions' values are compared in: lowercase, spaces collapsed, the unit
    appended (``"60", "seconds"`` -> ``60 seconds``)."""
    v = " ".join(value.split()).lower().strip()
    u = " ".join((unit or "").split()).lower()
    return f"{v} {u}" if u and v else v


def _said(value: str, unit: str | None) -> str:
    v = " ".join(value.split())
    return f"{v} {unit}" if unit and v else v


def _clean(text: str) -> tuple[str, bool]:
    r = redact(text)
    return r.text, r.withheld > 0


def claims_of_facts(
    source: str,
    facts: Iterable[FactLike],
    *,
    current: Iterable[FactLike] | None = None,
    trust: int | None = None,
    tainted: Mapping[int, str] | None = None,
) -> list[Claim]:
    """The claims of one session's kernel ``facts`` (log order), all from ``source`` and
    labelled ``trust``. ``current`` is the facts still in force (``Facts.current()``); a fact
    not among them is kept as a superseded claim. ``tainted`` maps the seq of an event whose
    message held a credential to its redacted text (lowercase): a fact from it is kept only
    when its words are all in that text. Facts without a key give a claim only as a user's
    statement (see the module docs)."""
    facts = [f for f in facts if _clean_in(f, tainted or {})]
    live = None if current is None else {id(f) for f in current}
    # the sentences a keyed fact came from: an instruction read from the same words
    # ("Don't use npm." is both ``package manager`` ≠ npm and an instruction) is that fact
    keyed = [(f.source.seq, f.source.quote) for f in facts if f.key and f.value]
    claims: list[Claim] = []
    sentence_ids: list[tuple[int, str]] = []
    for f in facts:
        kind = _KIND_OF_FACT.get(f.kind)
        if kind is None:
            continue
        if not f.key or f.value is None or not f.value.strip():
            if any(seq == f.source.seq and _overlap(q, f.source.quote) for seq, q in keyed):
                continue
            c = _statement(f, kind, source, live, trust)
            if c is not None:
                claims.append(c)
                sentence_ids.append((f.source.seq, f.source.quote))
            continue
        key, hidden_key = _clean(" ".join(f.key.split()))  # the kernel normalized it
        said, hidden_value = _clean(_said(f.value, f.unit))
        if hidden_key or hidden_value or "[REDACTED" in said:
            continue  # a withheld credential is no belief worth a slot
        role = f.source.role
        # the user's or assistant's exact words; for a tool fact the kernel's one line
        # ("edited src/app.py (3 changes)") says more than the bare argument it quotes
        text, _ = _clean(f.text if role == "tool" else (f.source.quote or f.text))
        origin: Origin = role if role in ("user", "tool", "assistant") else "assistant"  # type: ignore[assignment]
        claims.append(
            Claim(
                key=key,
                value=comparison_value(said),
                evidence=int(_EVIDENCE[origin]),
                text=" ".join(text.split()),
                source=source,
                seq=f.source.seq,
                superseded=live is not None and id(f) not in live,
                negated=bool(f.negated),
                kind="refuted" if f.negated else kind,
                origin=origin,
                trust=trust,
                shown=said,
                project=f.kind == "project",
            )
        )
        sentence_ids.append((f.source.seq, f.source.quote))
    return _supersede(claims, sentence_ids)


def _clean_in(f: FactLike, tainted: Mapping[int, str]) -> bool:
    """Whether ``f`` may be read: its event held no credential, or every string it carries
    is still in the event's redacted text (a credential's words never are)."""
    hay = tainted.get(f.source.seq)
    if hay is None:
        return True
    parts = [f.value or "", f.source.quote]  # the exact words, and the value as said
    return all(" ".join(p.split()).lower() in hay for p in parts if p.strip())


def _overlap(a: str, b: str) -> bool:
    a, b = " ".join(a.split()), " ".join(b.split())
    return bool(a and b) and (a in b or b in a)


def _statement(
    f: FactLike, kind: ClaimKind, source: str, live: set[int] | None, trust: int | None
) -> Claim | None:
    """An unkeyed instruction, preference, decision or project fact the user stated, as a
    statement claim (the assistant's unkeyed statements are its narrative, not a belief to
    merge)."""
    if f.kind not in _STATEMENT_KINDS or f.source.role != "user" or not f.text.strip():
        return None
    if f.kind == "instruction" and f.scope is None:
        read = instruction_kind(f.text)
        if read is not None and not read[1]:
            return None  # a one-off ask ("check the port") is work, not a belief to merge
    text, hidden = _clean(" ".join(f.text.split()))
    if hidden:
        return None
    return Claim(
        key=statement_key(f.kind, text),
        value=STATEMENT,
        evidence=int(_EVIDENCE["user"]),
        text=text,
        source=source,
        seq=f.source.seq,
        superseded=live is not None and id(f) not in live,
        kind=kind,
        origin="user",
        trust=trust,
        shown=text,
        statement=True,
    )


def extract_claims(session: Session, *, trust: int | None = None) -> list[Claim]:
    """The claims of ``session``'s whole log, read through the fact kernel
    (``session.facts()``; see the module docs), in log order; a fact read from a message
    that held a credential is kept only where its words survive redaction."""
    facts = session.facts()
    tainted = dict(tainted_texts(session, {f.source.seq for f in facts}))
    return claims_of_facts(
        str(session.id), facts, current=facts.current(), trust=trust, tainted=tainted
    )


def _supersede(claims: list[Claim], sentence_ids: list[Any]) -> list[Claim]:
    """Mark, per source and key, every claim that a later sentence re-asserted: a positive
    claim supersedes all earlier claims of its key, a negated one the earlier claims of its
    value. Claims of one sentence ("use pnpm, not npm") never supersede each other."""
    out = list(claims)
    for i, c in enumerate(claims):
        for j in range(i):
            p = out[j]
            if sentence_ids[j] == sentence_ids[i] or p.superseded:
                continue
            if p.source != c.source or p.key != c.key:
                continue
            if not c.negated or p.value == c.value:
                out[j] = replace(p, superseded=True)
    return out


def value_of(claim: Claim) -> str:
    """A claim's value in a slot state: ``not <value>`` when negated."""
    return f"not {claim.value}" if claim.negated else claim.value


def voting(claims: Iterable[Claim]) -> list[Claim]:
    """The live claims that vote in a slot: every positive one, and a source's negated ones
    unless that source also asserts a value of the key ("pnpm, not npm" says pnpm; its
    "not npm" agrees with it and adds no opinion of its own)."""
    live = [c for c in claims if not c.superseded]
    asserting = {c.source for c in live if not c.negated}
    return [c for c in live if not c.negated or c.source not in asserting]


def claims_to_states(
    claims: Iterable[Claim], *, include_negated: bool = True
) -> dict[str, SlotState]:
    """One ``SlotState`` per key from the voting claims (``voting``), each source's
    opinions built with ``SlotState.from_opinions`` at the highest evidence it gave a value,
    then joined. A negated claim enters as the value ``not <value>`` (left out with
    ``include_negated=False``). Keys come out sorted."""
    by_key: dict[str, list[Claim]] = {}
    for c in claims:
        if c.negated and not include_negated:
            continue
        by_key.setdefault(c.key, []).append(c)
    states: dict[str, SlotState] = {}
    for key in sorted(by_key):
        per: dict[str, dict[str, int]] = {}
        for c in voting(by_key[key]):
            values = per.setdefault(c.source, {})
            v = value_of(c)
            values[v] = max(values.get(v, 0), c.evidence)
        if not per:
            continue
        state = SlotState()
        for source, values in sorted(per.items()):
            state = state.union(SlotState.from_opinions(source, values))
        states[key] = state
    return states


def _parts(message: Mapping[str, Any], include_reasoning: bool) -> Iterable[tuple[Origin, str]]:
    """``(origin, text)`` for each readable block of a (redacted) raw message: what the
    model path's prompt shows of a branch (``branch_text``)."""
    role = message.get("role")
    source = message.get("source")
    kind = source.get("kind") if isinstance(source, Mapping) else None
    content = message.get("content")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
    own: Origin = "assistant"
    if role == "user" and kind in ("user", "tool"):
        own = "user" if kind == "user" else "tool"
    for b in blocks:
        if not isinstance(b, Mapping):
            continue
        t, text = b.get("type"), b.get("text")
        if t == "text" and isinstance(text, str) and role in ("user", "assistant"):
            yield own, text
        elif t == "reasoning" and include_reasoning and isinstance(text, str):
            yield "reasoning", text
        elif t == "tool-result":
            inner = b.get("content")
            items = inner if isinstance(inner, list) else [{"type": "text", "text": inner}]
            for i in items:
                inner_text = i.get("text") if isinstance(i, Mapping) else None
                if isinstance(inner_text, str):
                    yield "tool", inner_text
