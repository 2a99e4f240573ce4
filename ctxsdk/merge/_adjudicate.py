"""Adjudication: a constrained model call settles true ties, and only what survives a
symmetry check is kept.

The merge never guesses: a slot whose top values score the same is ``disputed``. The
adjudicator shows the model each disputed slot's options (sources, evidence, quotes) and asks
for one of four outcomes: ``choose`` one of the tied values, ``both`` (they are compatible),
``conditional`` (each holds under a guard) or ``unresolvable`` (a good answer). The answer is
validated (unknown and duplicate keys, bad outcomes, an empty guard and a chosen value that
is not one of the options are dropped, so an invented value leaves the tie standing), then
the same question is asked with every conflict's options reversed: a resolution is kept only
when both answers agree, one that flips becomes ``unresolvable`` with
``order_sensitive=True``, and one without a counterpart is rejected.

A resolution is attached as ``slot.resolution``; ``state`` and ``decision`` are never
changed. Any model failure leaves every slot as it was (``mode="error"``).
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import InvalidArgument, LLMError, LLMOutputError
from ..model import ModelProtocol
from ._align import ask_json
from ._beliefs import Resolution, Slot

__all__ = [
    "ADJUDICATE_INSTRUCTION",
    "Adjudication",
    "Conflict",
    "Option",
    "adjudicate",
    "find_conflicts",
]

_log = logging.getLogger("ctxsdk.merge")
_OUTCOMES = ("choose", "both", "conditional", "unresolvable")
_MAX_QUOTES = 3


@dataclass(frozen=True)
class Option:
    """One tied value of a disputed slot: who holds it, at what best evidence, and up to
    three of its quotes (highest evidence first)."""

    value: str
    sources: tuple[str, ...]
    max_evidence: int
    quotes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Conflict:
    """A disputed slot as the adjudicator sees it: its key and its tied options."""

    key: str
    options: tuple[Option, ...]

    @property
    def source_count(self) -> int:
        return sum(len(o.sources) for o in self.options)

    def reversed(self) -> Conflict:
        return Conflict(self.key, self.options[::-1])


@dataclass(frozen=True)
class Adjudication:
    """What adjudication did: the ``slots`` (disputed ones settled carry a ``resolution``),
    the ``mode`` (``off``: no model; ``none``: nothing disputed; ``llm``: asked; ``error``:
    the call failed and the slots are unchanged), why, the ``conflicts`` asked and the
    number of model ``calls``."""

    slots: tuple[Slot, ...]
    mode: Literal["off", "none", "llm", "error"]
    reason: str | None = None
    conflicts: tuple[Conflict, ...] = ()
    calls: int = 0

    @property
    def resolved(self) -> dict[str, Resolution]:
        """key -> the resolution attached to it."""
        return {s.key: s.resolution for s in self.slots if s.resolution is not None}


def find_conflicts(slots: Sequence[Slot]) -> list[Conflict]:
    """One ``Conflict`` per disputed slot, keys sorted: per tied value its sorted distinct
    sources, its best evidence and up to three quotes (highest evidence first)."""
    out: list[Conflict] = []
    for slot in slots:
        if slot.decision.outcome != "disputed":
            continue
        per_value = slot.state.per_value()
        options = []
        for value in slot.decision.tied:
            supports = per_value.get(value, ())
            claims = sorted(slot.supporting(value), key=lambda c: (-c.evidence, c.seq, c.text))
            quotes: list[str] = []
            for c in claims:
                if c.text and c.text not in quotes:
                    quotes.append(c.text)
            options.append(
                Option(
                    value=value,
                    sources=tuple(sorted({s for s, _ in supports})),
                    max_evidence=max((e for _, e in supports), default=0),
                    quotes=tuple(quotes[:_MAX_QUOTES]),
                )
            )
        out.append(Conflict(slot.key, tuple(options)))
    return sorted(out, key=lambda c: c.key)


def _bound(conflicts: Sequence[Conflict], max_conflicts: int) -> list[Conflict]:
    """The cost bound: the most-sourced ``max_conflicts`` conflicts (key breaks ties),
    returned in key order."""
    ranked = sorted(conflicts, key=lambda c: (-c.source_count, c.key))[:max_conflicts]
    return sorted(ranked, key=lambda c: c.key)


ADJUDICATE_INSTRUCTION = """\
Several agent sessions disagree, with equal weight of evidence, on the slots below. For each
slot decide ONE outcome:
- "choose": one option is right; give its "value" (the option's value, exactly);
- "both": the options are compatible and all hold;
- "conditional": each option holds under a condition; give that condition as "guard";
- "unresolvable": the evidence does not settle it (this is a good answer; prefer it to a
  guess).
The order in which options are listed carries no meaning. Do not invent values.
Answer with JSON only, in this shape:
{"resolutions": [{"key": "<slot key>", "outcome": "choose", "value": "<option value>",
  "guard": null, "premises": [], "rationale": "<one short sentence>"}]}
"""


def _prompt(conflicts: Sequence[Conflict]) -> list[dict[str, str]]:
    lines: list[str] = []
    for i, c in enumerate(conflicts, 1):
        lines.append(f"c{i}: slot {json.dumps(c.key)}")
        for j, o in enumerate(c.options, 1):
            lines.append(
                f"  c{i}.o{j}: value {json.dumps(o.value)}; sources {', '.join(o.sources)}; "
                f"best evidence {o.max_evidence} (4 user, 3 tool, 2 assistant, 1 guess)"
            )
            lines += [f"    quote: {json.dumps(q, ensure_ascii=False)}" for q in o.quotes]
    user = "\n".join(lines) + "\n\nAnswer with the JSON object only."
    return [
        {"role": "system", "content": ADJUDICATE_INSTRUCTION},
        {"role": "user", "content": user},
    ]


def _text(raw: object) -> str | None:
    return raw.strip() if isinstance(raw, str) and raw.strip() else None


def _parse(answer: Mapping[str, Any], conflicts: Sequence[Conflict]) -> dict[str, Resolution]:
    """The valid resolutions of one answer, by key (see the module docs). A key answered
    twice is dropped: which answer the model meant cannot be told."""
    raw = answer.get("resolutions")
    if not isinstance(raw, list):
        raise LLMOutputError(
            "the reply has no 'resolutions' list", reason="malformed reply: no 'resolutions' list"
        )
    index = {c.key: (i, c) for i, c in enumerate(conflicts, 1)}
    entries = [r for r in raw if isinstance(r, Mapping)]
    keys = Counter(_text(r.get("key")) for r in entries)
    out: dict[str, Resolution] = {}
    for r in entries:
        key = _text(r.get("key"))
        if key is None or key not in index or keys[key] > 1:
            continue
        outcome = (_text(r.get("outcome")) or "").lower()
        if outcome not in _OUTCOMES:
            continue
        i, conflict = index[key]
        value: str | None = None
        guard = _text(r.get("guard"))
        if outcome == "choose":
            given = (_text(r.get("value")) or "").lower()
            by_id = {f"c{i}.o{j}": o.value for j, o in enumerate(conflict.options, 1)}
            by_value = {o.value.strip().lower(): o.value for o in conflict.options}
            value = by_value.get(given) or by_id.get(given)
            if value is None:  # an invented value: the tie stands
                continue
        if outcome == "conditional" and guard is None:
            continue
        premises = r.get("premises")
        out[key] = Resolution(
            outcome,  # type: ignore[arg-type]  # checked against _OUTCOMES
            value=value,
            guard=guard if outcome == "conditional" else None,
            premises=tuple(p.strip() for p in premises if isinstance(p, str) and p.strip())
            if isinstance(premises, list)
            else (),
            rationale=_text(r.get("rationale")) or "",
        )
    return out


def _said(r: Resolution) -> str:
    return f"choose {r.value}" if r.outcome == "choose" else r.outcome


def _symmetric(
    forward: Mapping[str, Resolution], backward: Mapping[str, Resolution]
) -> dict[str, Resolution]:
    """Keep what both orders agree on; a flip is unresolvable and order-sensitive; an
    answer with no counterpart is rejected."""
    out: dict[str, Resolution] = {}
    for key, f in forward.items():
        b = backward.get(key)
        if b is None:
            continue
        if f.outcome == b.outcome and (f.outcome != "choose" or f.value == b.value):
            out[key] = f
        else:
            out[key] = Resolution(
                "unresolvable",
                rationale=(
                    f"the answer changed when the options were reversed ({_said(f)} vs {_said(b)})"
                ),
                order_sensitive=True,
            )
    return out


def adjudicate(
    slots: Sequence[Slot],
    llm: ModelProtocol | None = None,
    *,
    symmetry: bool = True,
    max_conflicts: int = 12,
    max_tokens: int = 2000,
) -> Adjudication:
    """Settle the disputed ``slots`` with ``llm`` (a ``ModelProtocol``, such as
    ``ctxsdk.LLM``): one call, plus one with the options reversed when ``symmetry``; see the
    module docs. Never raises for a model failure."""
    if max_conflicts < 1:
        raise InvalidArgument(f"max_conflicts must be >= 1, not {max_conflicts}")
    slots = tuple(slots)
    if llm is None:
        return Adjudication(slots, "off", "no model given")
    conflicts = _bound(find_conflicts(slots), max_conflicts)
    if not conflicts:
        return Adjudication(slots, "none", "no disputed slot")
    calls = 0
    try:
        calls += 1
        chosen = _parse(ask_json(llm, _prompt(conflicts), max_tokens=max_tokens), conflicts)
        if symmetry:
            flipped = [c.reversed() for c in conflicts]
            calls += 1
            back = _parse(ask_json(llm, _prompt(flipped), max_tokens=max_tokens), flipped)
            chosen = _symmetric(chosen, back)
    except LLMError as exc:
        _log.warning("adjudication failed; the ties stand: %s", exc.reason)
        return Adjudication(slots, "error", exc.reason, tuple(conflicts), calls)
    out = tuple(
        dataclasses.replace(s, resolution=chosen[s.key]) if s.key in chosen else s for s in slots
    )
    reason = None if chosen else "no resolution survived validation"
    return Adjudication(out, "llm", reason, tuple(conflicts), calls)
