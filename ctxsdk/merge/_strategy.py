"""Strategies: how a merge scores a slot's values, settles a tie and reads its claims.

A ``Strategy`` is a name and three optional hooks; ``None`` keeps the built-in stage:

- ``score(candidate) -> comparable``: one value of one slot (``Candidate``: the value, its
  supporting claims with their source, evidence, origin, quote and trust, its
  ``(source, evidence)`` supports, the slot, and when its latest session ended). The
  highest score wins; equal highest is a dispute, never a guess. Built-in: ``egalitarian``.
- ``resolve(options) -> Candidate | str | Resolution | None``: a disputed slot's tied
  values; return the one to choose, a ``Resolution`` (``both``, ``conditional``), or None to
  leave the tie (the model adjudicator, when the merge has one, then sees it). Built-in:
  none (the model adjudicates when ``llm=`` is given).
- ``extract(branch) -> Iterable[Claim] | None``: the claims of one source session (a
  ``Branch``: its redacted messages and kernel facts); None keeps the built-in claims of
  that branch. Built-in: the fact kernel (``heuristic_claims``), or the model's alignment.

The built-in strategies (``EGALITARIAN``, ``ELITIST``) are ``Strategy`` values written with
the same hooks; a plain score over ``(source, evidence)`` pairs becomes one through
``by_supports``. Whatever a hook returns passes through the same gates as the built-ins'
output: a hook's claims are redacted (a value that held a credential is dropped) and carry
their branch's trust at most; a hook's ruling must be one of the tied values and may not
assert a redacted value or one only untrusted claims support (``_ruling``); derivation and
the trust check run after every strategy, and any violation still means nothing is injected.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ..errors import InvalidArgument, UnknownName
from ..session import redact
from ..session.kernel import REDACTION_MARKER
from ._beliefs import Branch, Resolution, Slot, Trust
from ._claims import Claim, voting
from ._order import Span, correcting_value, later_values
from ._slots import Decision, Score, Support, egalitarian, elitist, select
from ._trust import join, meet

__all__ = [
    "EGALITARIAN",
    "ELITIST",
    "STRATEGIES",
    "Candidate",
    "Extract",
    "Resolve",
    "Strategy",
    "StrategyLike",
    "ValueScore",
    "as_strategy",
    "by_supports",
    "candidates",
    "decide_slots",
    "extract_with",
]


@dataclass(frozen=True)
class Candidate:
    """One value of one slot, as a strategy's hooks see it: the ``value`` (comparison form),
    the live ``claims`` that give it (each with source, seq, evidence, origin, quote and
    trust), its ``supports`` (per source the best evidence), the ``slot`` and ``latest``:
    when the latest session holding it ended (epoch ms; None when unknown)."""

    value: str
    claims: tuple[Claim, ...]
    supports: tuple[Support, ...]
    slot: Slot
    latest: int | None = None

    @property
    def key(self) -> str:
        return self.slot.key

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(sorted({s for s, _ in self.supports}))

    @property
    def evidence(self) -> int:
        """The best evidence behind the value (4 user, 3 tool, 2 assistant, 1 guess)."""
        return max((e for _, e in self.supports), default=0)

    @property
    def shown(self) -> str:
        """The value as it was said (``Slot.display``)."""
        return self.slot.display(self.value)

    @property
    def trust(self) -> Trust:
        """The join of the supporting claims' trust (UNTRUSTED when none is labelled)."""
        return join(c.trust for c in self.claims)

    def __repr__(self) -> str:
        return f"Candidate({self.key!r} = {self.value!r}, evidence {self.evidence}, {self.sources})"


ValueScore = Callable[[Candidate], Any]
"""A score hook: one candidate value to anything comparable (the highest wins)."""
Resolve = Callable[[tuple[Candidate, ...]], "Candidate | str | Resolution | None"]
"""A resolve hook: a disputed slot's tied values to the ruling (None leaves the tie)."""
Extract = Callable[[Branch], "Iterable[Claim] | None"]
"""An extract hook: one source session to its claims (None keeps the built-in ones)."""


class _BySupports:
    """A score over a value's ``(source, evidence)`` pairs, lifted to a candidate score
    (the built-in scores and every plain score function are used through this)."""

    def __init__(self, fn: Score) -> None:
        if not callable(fn):
            raise InvalidArgument(f"a score is a callable, not {fn!r}")
        self.fn = fn
        self.__name__ = str(getattr(fn, "__name__", None) or repr(fn))

    def __call__(self, candidate: Candidate) -> Any:
        return self.fn(candidate.supports)

    def __repr__(self) -> str:
        return f"by_supports({self.__name__})"


def by_supports(fn: Score) -> ValueScore:
    """A score hook from a score over ``(source, evidence)`` pairs (``egalitarian``,
    ``elitist`` or your own): what ``Merge.score(fn)`` did before strategies had hooks."""
    return _BySupports(fn)


@dataclass(frozen=True)
class Strategy:
    """How a merge decides (module docs): a ``name`` (what tables and the block call it)
    and the optional ``score``, ``resolve`` and ``extract`` hooks; None keeps the built-in
    stage. ``description`` is one line for tables and the widget."""

    name: str
    score: ValueScore | None = None
    resolve: Resolve | None = None
    extract: Extract | None = None
    description: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise InvalidArgument(f"a strategy's name is a non-empty string, not {self.name!r}")
        for hook in ("score", "resolve", "extract"):
            fn = getattr(self, hook)
            if fn is not None and not callable(fn):
                raise InvalidArgument(f"strategy {self.name!r}: {hook} must be callable or None")

    @property
    def hooks(self) -> tuple[str, ...]:
        """The hooks this strategy sets (the others are the built-in stages)."""
        return tuple(h for h in ("score", "resolve", "extract") if getattr(self, h) is not None)

    @property
    def builtin(self) -> bool:
        return STRATEGIES.get(self.name) is self

    def named(self, name: str) -> Strategy:
        """The same hooks under another name."""
        return dataclasses.replace(self, name=name)

    def __repr__(self) -> str:
        hooks = ", ".join(self.hooks) or "built-in stages"
        return f"Strategy({self.name!r}: {hooks})"


_EGALITARIAN = by_supports(egalitarian)
EGALITARIAN = Strategy(
    "egalitarian",
    score=_EGALITARIAN,
    description="weighted sum of evidence (1, 2, 4, 8): agreeing sources add up",
)
ELITIST = Strategy(
    "elitist",
    score=by_supports(elitist),
    description="evidence levels compared best first: the strongest single word decides",
)
STRATEGIES: Mapping[str, Strategy] = MappingProxyType(
    {"egalitarian": EGALITARIAN, "elitist": ELITIST}
)

StrategyLike = str | Score | Strategy

# one Strategy per plain score function, so a merge's caches see the same object each time
_LIFTED: weakref.WeakKeyDictionary[Any, Strategy] = weakref.WeakKeyDictionary()


def as_strategy(strategy: StrategyLike, name: str | None = None) -> Strategy:
    """A ``Strategy`` from a strategy, a built-in's name or a plain score function over
    ``(source, evidence)`` pairs (named by the function); ``name`` renames it."""
    if isinstance(strategy, Strategy):
        out = strategy
    elif isinstance(strategy, str):
        found = STRATEGIES.get(strategy)
        if found is None:
            raise UnknownName(
                f"no strategy {strategy!r}; known: {', '.join(sorted(STRATEGIES))} (or pass a "
                "Strategy, or a callable (supports) -> comparable)"
            )
        out = found
    elif callable(strategy):
        try:
            out = _LIFTED.get(strategy) or _lift(strategy)
        except TypeError:  # not weak-referenceable (a builtin callable): not cached
            out = _lift(strategy)
    else:
        raise InvalidArgument(
            f"a strategy is a Strategy, a name or a score function, not {strategy!r}"
        )
    return out if name is None or name == out.name else out.named(name)


def _lift(fn: Score) -> Strategy:
    s = Strategy(str(getattr(fn, "__name__", None) or repr(fn)), score=by_supports(fn))
    _LIFTED[fn] = s
    return s


# -- the score hook --------------------------------------------------------------------------


def candidates(
    slot: Slot, values: Iterable[str] | None = None, spans: Mapping[str, Span] | None = None
) -> tuple[Candidate, ...]:
    """The slot's values (or ``values``) as candidates, in value order."""
    per_value = slot.state.per_value()
    chosen = sorted(per_value) if values is None else list(values)
    out = []
    for v in chosen:
        supports = per_value.get(v, ())
        ends = [spans[s][1] for s, _ in supports if spans and s in spans]
        out.append(Candidate(v, slot.supporting(v), supports, slot, max(ends) if ends else None))
    return tuple(out)


def _score_fn(strategy: Strategy) -> ValueScore:
    return strategy.score if strategy.score is not None else _EGALITARIAN


def decide_slots(
    slots: Sequence[Slot], strategy: Strategy, spans: Mapping[str, Span] | None = None
) -> tuple[list[Slot], dict[str, str]]:
    """Each slot decided by ``strategy``'s score, and per decided key the label of what
    decided it. ``slots`` come from ``build_slots`` (any score: the state does not depend
    on it). A pair score (the built-ins, ``by_supports``) decides as ``build_slots`` does;
    any score keeps the time rules of ``_order``: a value only later sessions state keeps a
    slot disputed, and a later explicit correction settles a tie."""
    fn = _score_fn(strategy)
    out: list[Slot] = []
    labels: dict[str, str] = {}
    for slot in slots:
        decision, later, by = _decide(slot, fn, strategy.name, spans or {})
        out.append(dataclasses.replace(slot, decision=decision, later=later))
        if by:
            labels[slot.key] = by
    return out, labels


def _decide(
    slot: Slot, fn: ValueScore, name: str, spans: Mapping[str, Span]
) -> tuple[Decision, tuple[str, ...], str]:
    if isinstance(fn, _BySupports):
        decision = select(slot.state, fn.fn)
    else:
        scored = []
        for c in candidates(slot, spans=spans):
            try:
                scored.append((c.value, fn(c)))
            except Exception as exc:
                raise InvalidArgument(
                    f"strategy {name!r}: its score hook failed on {c!r}: {exc}"
                ) from exc
        if not scored:
            decision = Decision("empty")
        else:
            best = max(s for _, s in scored)
            winners = sorted(v for v, s in scored if s == best)
            decision = (
                Decision("resolved", winners[0])
                if len(winners) == 1
                else Decision("disputed", None, tuple(winners))
            )
    # the time rules of ``build_slots`` (``_order``), whatever the score
    if spans and decision.outcome == "resolved" and decision.winner is not None:
        later = later_values(decision.winner, voting(slot.claims), spans)
        if later:
            tied = tuple(sorted({decision.winner, *later}))
            return Decision("disputed", None, tied), later, ""
        return decision, (), name
    if spans and decision.outcome == "disputed":
        corrected = correcting_value(decision.tied, slot.claims, spans)
        if corrected is not None:
            return Decision("resolved", corrected), (), "later correction"
    return decision, (), name if decision.outcome == "resolved" else ""


# -- the extract hook ------------------------------------------------------------------------


def extract_with(
    strategy: Strategy, branches: Sequence[Branch], claims: Sequence[Claim]
) -> tuple[tuple[Claim, ...], int]:
    """``claims`` with each branch's replaced by what ``strategy.extract`` returns for it
    (None keeps the branch's own), and how many hook claims were dropped for holding a
    credential. A hook's claim is its branch's: the source is the branch, its trust at most
    the branch's, its evidence clamped to 1..4, and its key, value, quote and shown value
    redacted (a key or value that held a credential drops the claim)."""
    hook = strategy.extract
    if hook is None:
        return tuple(claims), 0
    out = list(claims)
    withheld = 0
    for b in branches:
        try:
            got = hook(b)
        except Exception as exc:
            raise InvalidArgument(
                f"strategy {strategy.name!r}: its extract hook failed on {b.id!r}: {exc}"
            ) from exc
        if got is None:
            continue
        mine: list[Claim] = []
        for c in got:
            if not isinstance(c, Claim):
                raise InvalidArgument(
                    f"strategy {strategy.name!r}: extract returns Claims, not {type(c).__name__}"
                )
            clean = _clean_claim(c, b)
            if clean is None:
                withheld += 1
            elif clean.key and clean.value:
                mine.append(clean)
        out = [c for c in out if c.source != b.id] + mine
    return tuple(out), withheld


def _clean_claim(c: Claim, branch: Branch) -> Claim | None:
    key, value = redact(c.key.strip()), redact(c.value.strip())
    if key.withheld or value.withheld or REDACTION_MARKER.search(value.text):
        return None
    evidence = c.evidence if isinstance(c.evidence, int) and not isinstance(c.evidence, bool) else 1
    trust = branch.trust if c.trust is None else meet([c.trust, branch.trust])
    return dataclasses.replace(
        c,
        key=key.text,
        value=value.text,
        text=redact(c.text).text,
        shown=redact(c.shown).text if c.shown else c.shown,
        source=branch.id,
        evidence=min(4, max(1, evidence)),
        trust=int(trust),
    )
