"""Joint alignment: one model call reads every branch and names the slots they share.

The deterministic extractor keys a claim by the words a session used, so two sessions that
say one thing in different words meet only when a pattern happens to catch both. The model
path asks ONE call over all branches for dotted keys (``database.engine``), short canonical
values and a verbatim quote per opinion, so paraphrases align by meaning.

The model is not trusted with provenance. Its answer is validated the seed's way (unknown
branch ids, empty values and duplicate keys dropped; evidence clamped to 1..4; opinions and
slots sorted; ``max_slots`` enforced), and two checks are added: an opinion whose quote is
not in its branch is dropped as invented, and an opinion's evidence is capped at the origin
of the message its quote is in (a model cannot promote an assistant guess to user
testimony). Any failure (no model, a failed call, malformed JSON, zero usable slots) falls
back to the deterministic extractor, with the reason recorded.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from ..errors import InvalidArgument, LLMError, LLMOutputError
from ..model import ModelProtocol
from ..model import ask_json as model_ask_json
from ..session.kernel import extract_json, redact_json, truncate_keep_tail
from ._beliefs import SLOT_TYPES, Branch, SlotType, Trust
from ._claims import (
    _EVIDENCE,
    CLAIM_KINDS,
    Claim,
    ClaimKind,
    Origin,
    _parts,
    _supersede,
    claims_of_facts,
)
from ._derive import routes_of
from ._message import one_per_message
from ._moved import moved_claims
from ._shared import name_table, shared_claims
from ._slots import Evidence

__all__ = ["ALIGN_INSTRUCTION", "Alignment", "align", "branch_text", "heuristic_claims"]

_log = logging.getLogger("ctxsdk.merge")


# -- the model seam ------------------------------------------------------------------------
# An engine never imports ``ctxsdk.llm`` (tests/test_architecture.py): the model is any
# ``ctxsdk.model.ModelProtocol`` (``ctxsdk.LLM`` is one), asked through ``ctxsdk.model``'s
# ``ask_json``; cutting an input to its tail is the base's (``truncate_keep_tail``).
def parse_reply(text: str) -> dict[str, Any]:
    """The JSON object of a model reply (a fence, an object in prose); ``LLMOutputError``
    (``malformed-json``) when there is none."""
    obj: dict[str, Any] = extract_json(text)
    return obj


def _redacted(obj: dict[str, Any]) -> dict[str, Any]:
    answer: dict[str, Any] = redact_json(obj)
    return answer


def ask_json(
    llm: ModelProtocol, messages: list[dict[str, str]], *, max_tokens: int
) -> dict[str, Any]:
    """One deterministic call (``ctxsdk.model.ask_json``: temperature 0, no reasoning, JSON
    mode) and its JSON object. Every failure is an ``LLMError`` whose ``reason`` says what
    went wrong. Every string of the answer is redacted as soon as it is parsed: keys and
    values are normalized (lowercased) later, and a lowercased credential would no longer be
    recognised."""
    return model_ask_json(llm, messages, validate=_redacted, max_tokens=max_tokens).unwrap()


@dataclass(frozen=True)
class Alignment:
    """What alignment produced: every claim of every branch (branch order, then message
    order), the slot ``types`` the model named, whether the model's answer was used
    (``mode``), ``reason`` when it was not, and one line per opinion or slot that
    validation ``dropped``."""

    claims: tuple[Claim, ...]
    types: Mapping[str, SlotType] = field(default_factory=lambda: MappingProxyType({}))
    mode: Literal["llm", "heuristic"] = "heuristic"
    reason: str | None = None
    dropped: tuple[str, ...] = ()


# Evidence each origin can carry at most (injected context is a guess at best).
_ORIGIN_CAP: Mapping[str, int] = MappingProxyType(
    {**_EVIDENCE, "injected": int(Evidence.SPECULATIVE)}
)
_TYPE_ALIASES: Mapping[str, SlotType] = MappingProxyType(
    {"openq": "question", "open question": "question", "open_question": "question"}
)

ALIGN_INSTRUCTION = """\
You align the beliefs of several agent sessions ("branches") into shared slots.
Valid branch ids: {ids}.

Read every branch below and list at most {max_slots} slots (fewer is better than noisy).
A slot is one durable thing the branches hold a belief about: a fact, a decision, a
constraint, a goal, something refuted, an open question or an artifact. Align by MEANING,
not wording: "we moved to Postgres" and "the DB is PostgreSQL" are the same slot. Ignore
harness boilerplate, greetings and chatter.

For each slot give:
- "key": a dotted lowercase machine key, e.g. "database.engine";
- "type": one of {types};
- "derivedFrom" (optional): the keys of the slots this one rests on, a list of keys (all
  needed) or a list of lists of keys (alternatives);
- "opinions": one per branch that holds a view, each
  {{"source": <branch id>, "value": <short canonical lowercase token>,
   "evidence": 1-4, "quote": <the exact words from that branch, verbatim>}}.
  evidence: 4 the user said it, 3 a tool or file showed it, 2 the assistant concluded it,
  1 a guess or reasoning.

Never invent an opinion, a source or a quote: a branch with no view on a slot gives no
opinion there. Answer with JSON only, no prose, in this shape:

{{"slots": [
  {{"key": "database.engine", "type": "decision",
   "opinions": [{{"source": "a", "value": "postgresql", "evidence": 4,
                 "quote": "Use PostgreSQL for the database."}},
                {{"source": "b", "value": "mysql", "evidence": 2,
                 "quote": "I set the database up on MySQL."}}]}},
  {{"key": "orm.migrations", "type": "decision", "derivedFrom": ["database.engine"],
   "opinions": [{{"source": "a", "value": "alembic", "evidence": 2,
                 "quote": "Alembic handles migrations on Postgres."}}]}}
]}}
"""


# -- the prompt form ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Segment:
    seq: int
    origin: Origin
    text: str


def _segments(
    branch: Branch, *, include_reasoning: bool, include_injected: bool
) -> Iterator[_Segment]:
    """The readable blocks of a branch in model order, as the heuristic reads them."""
    for m in branch.messages:
        if m.raw.get("role") == "system" or (m.injected and not include_injected):
            continue
        for origin, text in _parts(m.raw, include_reasoning):
            yield _Segment(m.seq, "injected" if m.injected else origin, text)


def branch_text(
    branch: Branch,
    *,
    include_reasoning: bool = True,
    include_injected: bool = False,
    max_chars: int | None = 6000,
) -> str:
    """A branch as the model reads it: one ``[origin] text`` line per block, cut to
    ``max_chars`` keeping the tail (the latest content matters most)."""
    segs = _segments(branch, include_reasoning=include_reasoning, include_injected=include_injected)
    text = "\n".join(f"[{s.origin}] {s.text.strip()}" for s in segs)
    return truncate_keep_tail(text, max_chars)


def heuristic_claims(
    branches: Sequence[Branch], *, include_reasoning: bool = True, include_injected: bool = False
) -> tuple[Claim, ...]:
    """The deterministic path over every branch: the claims of its kernel facts
    (``claims_of_facts``), labelled with the branch's id and trust, and the names two or
    more branches use (``shared_claims``: files, commands, versions shared across
    sessions); the fallback when the model is absent or unusable. Neither reads reasoning
    or injected context, so ``include_reasoning`` and ``include_injected`` shape only the
    model's prompt; a branch built from messages alone (no ``facts``) gives no claims."""
    del include_reasoning, include_injected  # the kernel's reading rules hold here
    out: list[Claim] = []
    for b in branches:
        if b.facts is not None:
            out += claims_of_facts(
                b.id, b.facts, current=b.current, trust=b.trust, tainted=dict(b.tainted)
            )
    # what a user said in one message is one statement
    out = one_per_message(out, {(b.id, b.opening) for b in branches})
    read = [b for b in branches if b.facts is not None]
    table = name_table(read)
    moved, covered = moved_claims(read, table)
    known = {c.value for c in out if not c.statement}
    out += moved + shared_claims(read, known=known, skip=covered, table=table, files=out)
    return tuple(out)


def _prompt(
    branches: Sequence[Branch],
    *,
    include_reasoning: bool,
    include_injected: bool,
    max_slots: int,
    max_chars: int,
) -> list[dict[str, str]]:
    ids = ", ".join(json.dumps(b.id) for b in branches)
    system = ALIGN_INSTRUCTION.format(ids=ids, max_slots=max_slots, types=", ".join(SLOT_TYPES))
    parts = []
    for b in branches:
        body = branch_text(
            b,
            include_reasoning=include_reasoning,
            include_injected=include_injected,
            max_chars=max_chars,
        )
        parts.append(f"=== branch {json.dumps(b.id)} ===\n{body or '(empty)'}")
    user = "\n\n".join(parts) + "\n\nAnswer with the JSON object only."
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


# -- validation -----------------------------------------------------------------------------
_WS = re.compile(r"\s+")
_LABEL = re.compile(r"^\[(?:user|assistant|tool|reasoning|injected)\]\s*", re.I)


def _norm(text: str) -> str:
    return _WS.sub(" ", text).strip().casefold()


def _evidence(raw: object) -> int:
    """Clamp to 1..4; anything that is not a finite number (a bool included) is 2."""
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        return int(Evidence.INFERRED)
    if isinstance(raw, float) and not math.isfinite(raw):
        return int(Evidence.INFERRED)
    return max(1, min(4, round(raw)))


def _routes(raw: object, own_key: str) -> tuple[tuple[str, ...], ...]:
    """``derivedFrom`` as routes (``routes_of``'s shapes), keys lowercased; a slot never
    rests on itself."""
    out = set()
    for route in routes_of(raw):
        keys = tuple(sorted({k.strip().lower() for k in route} - {own_key}))
        if keys:
            out.add(keys)
    return tuple(sorted(out))


def _locate(quote: str, segments: Sequence[_Segment]) -> _Segment | None:
    """The block ``quote`` is in (case and whitespace ignored): the strongest origin among
    those that contain it, the latest of those."""
    q = _norm(_LABEL.sub("", quote.strip()))
    if not q:
        return None
    hits = [s for s in segments if q in _norm(s.text)]
    if not hits:
        return None
    return max(hits, key=lambda s: (_ORIGIN_CAP[s.origin], s.seq))


def _folded(value: object) -> str:
    """A reply's key or value as slots compare it (trimmed, lower case); "" if not a string."""
    return value.strip().lower() if isinstance(value, str) else ""


def _slot_type(raw: object) -> SlotType | None:
    if not isinstance(raw, str):
        return None
    t = raw.strip().lower()
    if t in _TYPE_ALIASES:
        return _TYPE_ALIASES[t]
    for known in SLOT_TYPES:
        if t == known:
            return known  # type: ignore[return-value]  # SLOT_TYPES spells SlotType
    return None


def _opinion(
    op: object,
    where: str,
    key: str,
    kind: ClaimKind | None,
    routes: tuple[tuple[str, ...], ...],
    trust: Mapping[str, Trust],
    segments: Mapping[str, Sequence[_Segment]],
) -> Claim | str:
    """One opinion of a slot as a claim, or why it is dropped: an unknown branch, an empty
    value, a quote its branch does not hold; evidence is capped by the quote's origin."""
    if not isinstance(op, Mapping):
        return f"{where}: not an object"
    source = op.get("source")
    if not isinstance(source, str) or source not in trust:
        return f"{where}: unknown branch id {source!r}"
    value = _folded(op.get("value"))
    if not value:
        return f"{where} ({source}): empty value"
    quote = op.get("quote")
    seg = _locate(quote, segments[source]) if isinstance(quote, str) else None
    if seg is None:
        return f"{where} ({source}={value}): quote not in the branch (invented)"
    return Claim(
        key=key,
        value=value,
        evidence=min(_evidence(op.get("evidence")), _ORIGIN_CAP[seg.origin]),
        text=str(quote).strip(),
        source=source,
        seq=seg.seq,
        kind=kind,
        origin=seg.origin,
        trust=trust[source],
        derived_from=routes,
    )


def _validate(
    answer: Mapping[str, Any],
    branches: Sequence[Branch],
    segments: Mapping[str, Sequence[_Segment]],
    *,
    max_slots: int,
    dropped: list[str],
) -> tuple[tuple[Claim, ...], dict[str, SlotType]]:
    """The model's answer as claims (see the module docs); raises ``LLMOutputError`` when
    no slot survives."""
    raw_slots = answer.get("slots")
    if not isinstance(raw_slots, list):
        raise LLMOutputError(
            "the reply has no 'slots' list", reason="zero usable slots (no 'slots' list)"
        )
    trust = {b.id: b.trust for b in branches}
    seen: set[str] = set()
    slots: list[tuple[str, SlotType | None, list[Claim]]] = []
    for i, s in enumerate(raw_slots):
        if not isinstance(s, Mapping):
            dropped.append(f"slot #{i}: not an object")
            continue
        key = _folded(s.get("key"))
        if not key:
            dropped.append(f"slot #{i}: empty key")
            continue
        if key in seen:
            dropped.append(f"slot {key!r}: duplicate key")
            continue
        seen.add(key)
        stype = _slot_type(s.get("type"))
        kind: ClaimKind | None = stype if stype in CLAIM_KINDS else None  # type: ignore[assignment]
        routes = _routes(s.get("derivedFrom"), key)
        claims: list[Claim] = []
        ops = s.get("opinions")
        for j, op in enumerate(ops if isinstance(ops, list) else []):
            got = _opinion(op, f"slot {key!r} opinion #{j}", key, kind, routes, trust, segments)
            if isinstance(got, str):
                dropped.append(got)
            else:
                claims.append(got)
        if not claims:
            dropped.append(f"slot {key!r}: no usable opinion")
            continue
        claims.sort(key=lambda c: (c.source, c.value))
        slots.append((key, stype, claims))
    slots.sort(key=lambda t: t[0])
    for key, _, _ in slots[max_slots:]:
        dropped.append(f"slot {key!r}: over max_slots={max_slots}")
    slots = slots[:max_slots]
    if not slots:
        raise LLMOutputError("no usable slot in the reply", reason="zero usable slots")
    types = {key: t for key, t, _ in slots if t is not None}
    out: list[Claim] = []
    for b in branches:  # branch order, then message order; supersession within a source
        mine = sorted(
            (c for _, _, cs in slots for c in cs if c.source == b.id),
            key=lambda c: (c.seq, c.key, c.value),
        )
        out += _supersede(mine, [c.seq for c in mine])
    return tuple(out), types


# -- the stage ------------------------------------------------------------------------------
def align(
    branches: Sequence[Branch],
    llm: ModelProtocol | None = None,
    *,
    include_reasoning: bool = True,
    include_injected: bool = False,
    max_slots: int = 40,
    max_chars_per_branch: int = 6000,
    max_tokens: int = 4000,
) -> Alignment:
    """Align ``branches`` with one joint model call (``llm``: a ``ModelProtocol``, such as
    ``ctxsdk.LLM``); on any failure, or with no model, read them with the deterministic
    extractor instead and say why (see the module docs)."""
    if max_slots < 1:
        raise InvalidArgument(f"max_slots must be >= 1, not {max_slots}")
    ids = [b.id for b in branches]
    if len(set(ids)) != len(ids):
        raise InvalidArgument(f"branch ids must be unique, got {ids}")
    dropped: list[str] = []
    reason = "no model given"
    if llm is not None and not branches:
        reason = "no branches"
    elif llm is not None:
        segments = {
            b.id: tuple(
                _segments(b, include_reasoning=include_reasoning, include_injected=include_injected)
            )
            for b in branches
        }
        messages = _prompt(
            branches,
            include_reasoning=include_reasoning,
            include_injected=include_injected,
            max_slots=max_slots,
            max_chars=max_chars_per_branch,
        )
        try:
            answer = ask_json(llm, messages, max_tokens=max_tokens)
            claims, types = _validate(
                answer, branches, segments, max_slots=max_slots, dropped=dropped
            )
        except LLMError as exc:
            reason = exc.reason
            _log.warning("alignment fell back to the heuristic extractor: %s", reason)
        else:
            return Alignment(claims, MappingProxyType(types), "llm", None, tuple(dropped))
    claims = heuristic_claims(
        branches, include_reasoning=include_reasoning, include_injected=include_injected
    )
    return Alignment(claims, mode="heuristic", reason=reason, dropped=tuple(dropped))
