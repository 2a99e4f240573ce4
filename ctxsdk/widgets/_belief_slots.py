"""``BeliefSlots``: a merge's slots, their provenance and the block the budget packed.

Everything comes from a ``MergeResult`` (``cx.Merge(...).run()``): ``slots`` (each slot's
key, presented value, status, evidence and claims), ``trusts``, ``branches`` (the source
sessions' ids and titles) and ``block`` (what the budget kept, in layout order, and every
``(key, why)`` it dropped). The widget sends one compact, column-wise payload of the slots
and the block; a slot's provenance (every claim with its source, event seq, evidence,
origin and verbatim quote, superseded ones included) comes over the request channel of
``BaseWidget`` when a row is expanded. The front end's controls ask the kernel to re-run the
merge under another strategy or budget (``result.rerun``); the latest result is
``widget.result``. Clicking a claim's seq sets ``selected_event`` to ``{session, seq}``.

Each row says what decided its slot (``MergeResult.decider``: the strategy's score, its
resolve hook, the model's adjudication, a later correction); a tie a strategy's resolve hook
settled shows as ``ruled``, not ``adjudicated``. With ``compare`` (on when a strategy of
your own is offered) every offered strategy's decision of each slot is sent too
(``Merge.compare``): a row where they differ is marked, the filter can show only those, and
the expanded row lists each strategy's decision beside the built-ins'.

Keys, values, quotes, titles and reasons come from other sessions, so every text is sent
neutralized (``ctxsdk.session.kernel.neutralize``): control, bidi and zero-width characters arrive
as visible escapes, never acted on by the page. A slot is asked for by the key as shown;
session ids stay as they are (they are what a click reports).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import traitlets

from ..errors import InvalidArgument, NotFound
from ..session.kernel import neutralize, short_id
from ._base import BaseWidget, handler
from ._bundle import bundle, bundle_css

if TYPE_CHECKING:
    from ctxsdk.merge import MergeResult, Slot, Strategy

__all__ = ["BeliefSlots"]

BUILTIN_STRATEGIES = ("egalitarian", "elitist")
EVIDENCE_LABELS = {1: "speculative", 2: "inferred", 3: "tool-verified", 4: "user-stated"}
TRUST_LABELS = {0: "untrusted", 1: "external", 2: "trusted"}
STATUSES = ("resolved", "disputed", "adjudicated", "ruled", "retracted", "empty")
RULED = " (resolve)"  # the suffix of ``MergeResult.decider`` for a strategy's resolve hook
MAX_BUDGET = 1_000_000
_QUOTE_CHARS = 2_000
_BLOCK_CHARS = 200_000

# Row flags (the front end reads the same bits).
KEPT, DROPPED, SUPERSEDED_CLAIMS, NEGATED_CLAIMS = 1, 2, 4, 8


def _cut(text: str, limit: int) -> str:
    return neutralize(text if len(text) <= limit else text[: limit - 1] + "…")


def _shown(text: str | None) -> str | None:
    return None if text is None else neutralize(text)


def _detail(slot: Slot, by: str = "") -> str:
    """What the status means for this slot: the adjudication's (or the strategy's ruling's)
    outcome, the unmet premises of a retraction, the tied values of a dispute."""
    d = slot.derivation
    if d is not None and d.status == "retracted":
        unmet = ", ".join(d.unmet) or "none named"
        return f"unmet premises: {unmet}" + (f" ({d.reason})" if d.reason else "")
    r = slot.resolution
    if slot.decision.outcome == "disputed":
        if r is not None and r.outcome != "unresolvable":
            who = f"ruled by {by.removesuffix(RULED)}" if by.endswith(RULED) else "adjudicated"
            if r.outcome == "choose":
                return f"{who}: chose {slot.display(r.value or '')}"
            if r.outcome == "conditional":
                return f"{who}: conditional on {r.guard or '?'}"
            return f"{who}: both hold"
        if r is not None:
            why = "order-sensitive" if r.order_sensitive else "unresolvable"
            return f"tie kept open ({why})"
        if slot.later:  # outweighed by the score, but said by later sessions
            later = ", ".join(slot.display(v) for v in slot.later)
            return f"a later session says otherwise ({later}), not guessed"
        return "tied under the score, not guessed"
    if slot.decision.outcome == "empty":
        return "no opinion"
    if d is not None and d.status == "founded" and d.satisfied_by:
        return f"derived from {', '.join(d.satisfied_by)}"
    return ""


def _opinions(slot: Slot, titles: Mapping[str, str]) -> list[dict[str, Any]]:
    """The slot's state as the panel lists it: one entry per value (the presented ones
    first), with the sessions that hold it and the evidence each gave, as labelled fields
    rather than the state's internal text."""
    presented = list(slot.presented)
    by_value: dict[str, list[dict[str, Any]]] = {}
    for value, source, evidence in slot.state.items:
        by_value.setdefault(value, []).append(
            {
                "source": source,
                "short": neutralize(short_id(source)),
                "title": neutralize(titles.get(source, "")),
                "evidence": int(evidence),
                "evidence_label": EVIDENCE_LABELS.get(int(evidence), str(evidence)),
            }
        )
    order = sorted(
        by_value,
        key=lambda v: (v not in presented, -max(o["evidence"] for o in by_value[v]), v),
    )
    return [
        {"value": neutralize(v), "presented": v in presented, "holders": by_value[v]} for v in order
    ]


class BeliefSlots(BaseWidget):
    """A merge's slots as a filterable, paged table, with provenance and the packed block.

    ``result`` is a ``MergeResult`` (``cx.Merge([...]).run()``, or ``result.widget()``). One
    row per slot: key, presented value, status (resolved / disputed / adjudicated with its
    outcome / retracted with its unmet premises), evidence and trust; expand a row for its
    provenance: every claim with its source session (short id and title), evidence, origin,
    the verbatim quote and the event seq (click it: ``selected_event`` becomes
    ``{"session": id, "seq": n}``). Beside the table, the block: what the budget kept and
    what it dropped, and why. The strategy and budget controls re-run the merge
    (``result.rerun``); ``strategies`` adds your strategies (``Strategy`` values, or
    ``{name: Strategy or score function}``) to the built-in ``egalitarian`` and ``elitist``
    (the result's own strategy is offered too). Each row says what decided it; ``compare``
    (default: on when a strategy of your own is offered) shows every offered strategy's
    decision per slot and marks where they differ. ``widget.result`` is the latest result.
    ``height`` is the table's height in pixels; ``page_size`` the rows a page shows.
    """

    _esm = bundle("belief_slots.js")
    _css = bundle_css("belief_slots.css")

    _rows = traitlets.Dict().tag(sync=True)
    """Slots by column: key, type, value, status, detail, evidence, trust, sources, claims,
    flags, why (the block's reason a dropped slot is out), pos (layout position in the
    block, -1 when out), by (what decided the slot, "" when nothing did)."""
    _compare = traitlets.Dict().tag(sync=True)
    """Every offered strategy's decision per row, when comparing: names (in the selector's
    order), decisions ({name: [text per row]}), differs ([bool per row]); {} when off."""
    _block = traitlets.Dict().tag(sync=True)
    """text, tokens, budget, kept (keys in layout order), dropped ([key, why] pairs),
    reason, withheld, trust."""
    summary = traitlets.Dict().tag(sync=True)
    """score, budget, sources ([{id, short, title}]), counts by status, slot count, query,
    strategy ({name, hooks, description})."""
    _strategy_names = traitlets.List(traitlets.Unicode()).tag(sync=True)
    """The strategy names the front end offers."""
    selected_event = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
    """The event of the claim clicked last: ``{session, seq}`` (None before any)."""
    error = traitlets.Unicode("").tag(sync=True)
    """The latest re-run's error ("" when it succeeded)."""
    height = traitlets.Int(440).tag(sync=True, option=True)
    """The table's height in pixels."""
    page_size = traitlets.Int(50).tag(sync=True, option=True)
    """Rows a page of the table shows (the DOM holds at most this many rows)."""

    def __init__(
        self,
        result: MergeResult,
        *,
        strategies: Mapping[str, Callable[..., Any] | Strategy] | Sequence[Strategy] | None = None,
        compare: bool | None = None,
        height: int = 440,
        page_size: int = 50,
        **kwargs: Any,
    ) -> None:
        self._check_keywords(kwargs)
        from ctxsdk.merge import MergeResult

        if not isinstance(result, MergeResult):
            raise TypeError(
                f"BeliefSlots() shows a MergeResult (cx.Merge([...]).run()), not "
                f"{type(result).__name__}"
            )
        extra = _offered(strategies, result)
        if page_size < 1:
            raise InvalidArgument(f"page_size is at least 1, not {page_size!r}")
        self.strategies: dict[str, Strategy] = extra
        self.compare = bool(extra) if compare is None else bool(compare)
        self.result: MergeResult = result
        self._slots: dict[str, Slot] = {}
        super().__init__(height=height, page_size=page_size, **kwargs)
        self._strategy_names = [*BUILTIN_STRATEGIES, *extra]
        self._rebuild()

    # --- the payload -------------------------------------------------------------------------

    def _score_name(self) -> str:
        """The name the front end shows for the result's strategy."""
        return self.result.score

    def _all_strategies(self) -> list[Strategy]:
        from ..merge.kernel import STRATEGIES

        return [*(STRATEGIES[n] for n in BUILTIN_STRATEGIES), *self.strategies.values()]

    def _comparison(self, keys: Sequence[str]) -> dict[str, Any]:
        """Every offered strategy's decision of each row's slot (``Merge.compare``, no
        model), with the strategies in the selector's order; {} when not comparing."""
        m = self.result.merge
        if not self.compare or m is None:
            return {}
        from ..merge import Merge

        names = list(self._strategy_names)
        decisions: dict[str, list[str]] = {}
        for strategy in self._all_strategies():
            try:  # one strategy's failure is its column's, not the widget's
                df = Merge.compare([strategy], m)
                got = dict(zip(df["key"].to_list(), df[strategy.name].to_list(), strict=True))
                decisions[strategy.name] = [neutralize(str(got.get(k) or "")) for k in keys]
            except Exception as err:
                decisions[strategy.name] = [f"error: {type(err).__name__}"] * len(keys)
        differs = [len({decisions[n][i] for n in names}) > 1 for i in range(len(keys))]
        return {"names": names, "decisions": decisions, "differs": differs}

    def _rebuild(self) -> None:
        r = self.result
        # by the key as the front end shows it (and asks for it)
        self._slots = {neutralize(s.key): s for s in r.slots}
        kept = {s.key: i for i, s in enumerate(r.block.slots)}
        why = dict(r.block.dropped)
        cols: dict[str, list[Any]] = {
            k: []
            for k in (
                "key",
                "type",
                "value",
                "status",
                "detail",
                "evidence",
                "trust",
                "sources",
                "claims",
                "flags",
                "why",
                "pos",
                "by",
            )
        }
        counts = dict.fromkeys(STATUSES, 0)
        for s in r.slots:
            by = r.decider(s.key)
            status = "ruled" if s.status == "adjudicated" and by.endswith(RULED) else s.status
            counts[status] = counts.get(status, 0) + 1
            flags = 0
            pos = kept.get(s.key, -1)
            reason = ""
            if pos >= 0:
                flags |= KEPT
            else:
                flags |= DROPPED
                reason = why.get(s.key) or (
                    "no opinion"
                    if s.decision.outcome == "empty"
                    else (r.block.reason or "not packed")
                )
            if any(c.superseded for c in s.claims):
                flags |= SUPERSEDED_CLAIMS
            if any(c.negated for c in s.claims):
                flags |= NEGATED_CLAIMS
            trust = r.trusts.get(s.key)
            cols["key"].append(neutralize(s.key))
            cols["type"].append(s.type)
            cols["value"].append(neutralize(" | ".join(s.shown)))
            cols["status"].append(status)
            cols["detail"].append(neutralize(_detail(s, by)))
            cols["evidence"].append(int(s.max_evidence))
            cols["trust"].append(int(trust) if trust is not None else 0)
            cols["sources"].append(len(s.sources))
            cols["claims"].append(len(s.claims))
            cols["flags"].append(flags)
            cols["why"].append(neutralize(reason))
            cols["pos"].append(pos)
            cols["by"].append(neutralize(by))
        b = r.block
        block = {
            "text": _cut(b.text, _BLOCK_CHARS),
            "tokens": b.tokens,
            "budget": b.budget,
            "kept": [neutralize(s.key) for s in b.slots],
            "dropped": [[neutralize(k), neutralize(w)] for k, w in b.dropped],
            "reason": neutralize(b.reason or ""),
            "withheld": b.withheld,
            "trust": TRUST_LABELS.get(int(b.trust), str(b.trust)),
            "tokenizer": b.tokenizer,
        }
        summary = {
            "score": self._score_name(),
            "budget": r.budget,
            "query": neutralize(r.query or ""),
            "slots": len(r.slots),
            "counts": counts,
            "sources": [
                {"id": br.id, "short": neutralize(short_id(br.id)), "title": neutralize(br.title)}
                for br in r.branches
            ],
            "skipped": [[neutralize(src), neutralize(why)] for src, why in r.skipped],
            "violations": len(r.violations),
            "alignment": r.alignment.mode,
            "can_rerun": r.merge is not None,
            "strategy": {
                "name": neutralize(r.score),
                "hooks": list(r.strategy.hooks) if r.strategy is not None else [],
                "description": neutralize(r.strategy.description if r.strategy else ""),
            },
            "refused": [[neutralize(k), neutralize(w)] for k, w in r.refused],
        }
        compared = self._comparison([s.key for s in r.slots])
        with self.hold_sync():
            self.revision += 1
            self._compare = compared
            self._rows = cols
            self._block = block
            self.summary = summary

    def _repr_fields(self) -> list[str]:
        s = self.summary
        counts = s.get("counts", {})
        status = ", ".join(f"{n} {k}" for k, n in counts.items() if n)
        b = self._block
        return [
            f"{s.get('slots', 0)} slots" + (f" ({status})" if status else ""),
            f"score {s.get('score', '')}",
            f"block {b.get('tokens', 0)}/{b.get('budget', 0)} tokens, "
            f"{len(b.get('kept', []))} kept",
        ]

    # --- re-running -------------------------------------------------------------------------

    def rerun(self, *, score: str | None = None, budget: int | None = None) -> BeliefSlots:
        """Re-run the merge under the strategy named ``score`` and/or ``budget`` tokens and
        show the new result (``self.result``)."""
        if score is not None and not isinstance(score, str):
            raise InvalidArgument(f"score is a strategy name, not {score!r}")
        if budget is not None and (
            isinstance(budget, bool) or not isinstance(budget, int) or budget < 0
        ):
            raise InvalidArgument(f"a budget is a whole number of tokens >= 0, not {budget!r}")
        if budget is not None and budget > MAX_BUDGET:
            raise InvalidArgument(f"a budget is at most {MAX_BUDGET:,} tokens, not {budget:,}")
        fn: Any = None
        if score is not None:
            if score in self.strategies:
                fn = self.strategies[score]
            elif score in BUILTIN_STRATEGIES:
                fn = score
            elif score == self.result.score and self.result.strategy is not None:
                fn = self.result.strategy
            else:
                known = ", ".join(self._strategy_names)
                raise InvalidArgument(f"no strategy {score!r}; known: {known}")
        try:
            new = self.result.rerun(score=fn, budget=budget)
        except Exception as err:
            self.error = f"{type(err).__name__}: {err}"
            raise
        self.result = new
        self.error = ""
        self._rebuild()
        return self

    # --- requests from the front end -----------------------------------------------------------

    @handler("rerun")
    def _rerun(self, score: Any = None, budget: Any = None) -> dict[str, Any]:
        """The controls: re-run under ``score`` (a strategy name) and ``budget``."""
        if isinstance(budget, float) and budget.is_integer():
            budget = int(budget)
        self.rerun(score=score, budget=budget)
        return {
            "revision": self.revision,
            "score": self.summary["score"],
            "budget": self.result.budget,
        }

    @handler("provenance")
    def _provenance(self, key: Any) -> dict[str, Any]:
        """A slot's claims: source (id, short id, title), seq, evidence, origin, the quote,
        superseded / negated, and whether the claim supports a presented value."""
        if not isinstance(key, str):
            raise InvalidArgument(f"a slot is named by its key (a string), not {key!r}")
        s = self._slots.get(key)
        if s is None:
            raise NotFound(f"no slot {key!r} in this merge (it may have changed)")
        titles = {b.id: b.title for b in self.result.branches}
        presented = set(s.presented)
        claims = []
        for c in sorted(s.claims, key=lambda c: (c.source, c.seq, c.value)):
            value = f"not {c.value}" if c.negated else c.value
            claims.append(
                {
                    "source": c.source,
                    "short": neutralize(short_id(c.source)),
                    "title": neutralize(titles.get(c.source, "")),
                    "seq": c.seq,
                    "value": neutralize(value),
                    "evidence": int(c.evidence),
                    "evidence_label": EVIDENCE_LABELS.get(int(c.evidence), str(c.evidence)),
                    "origin": neutralize(c.origin or ""),
                    "kind": neutralize(c.kind or ""),
                    "trust": TRUST_LABELS.get(int(c.trust), "") if c.trust is not None else "",
                    "quote": _cut(c.text, _QUOTE_CHARS),
                    "superseded": c.superseded,
                    "negated": c.negated,
                    "presented": (not c.superseded) and value in presented,
                }
            )
        d = s.derivation
        r = s.resolution
        by = self.result.decider(s.key)
        return {
            "key": key,
            "status": "ruled" if s.status == "adjudicated" and by.endswith(RULED) else s.status,
            "by": neutralize(by),
            "detail": neutralize(_detail(s, by)),
            "opinions": _opinions(s, titles),
            "claims": claims,
            "resolution": (
                {
                    "outcome": r.outcome,
                    "value": _shown(r.value),
                    "guard": _shown(r.guard),
                    "rationale": neutralize(r.rationale),
                    "order_sensitive": r.order_sensitive,
                }
                if r is not None
                else None
            ),
            "derivation": (
                {
                    "status": d.status,
                    "unmet": [neutralize(k) for k in d.unmet],
                    "satisfied_by": [neutralize(k) for k in d.satisfied_by or ()],
                    "reason": neutralize(d.reason or ""),
                }
                if d is not None
                else None
            ),
        }

    @handler("select_event")
    def _select_event(self, session: Any, seq: Any) -> dict[str, Any]:
        """A claim's event was clicked: ``selected_event = {session, seq}``."""
        if not isinstance(session, str) or not session:
            raise InvalidArgument(f"an event's session is a session id, not {session!r}")
        if isinstance(seq, bool) or not isinstance(seq, int) or seq < 0:
            raise InvalidArgument(f"an event's seq is a whole number >= 0, not {seq!r}")
        known = {b.id for b in self.result.branches}
        if session not in known:
            raise NotFound(f"no source session {session!r} in this merge")
        self.selected_event = {"session": session, "seq": seq}
        return dict(self.selected_event)


def _offered(
    strategies: Mapping[str, Callable[..., Any] | Strategy] | Sequence[Strategy] | None,
    result: MergeResult,
) -> dict[str, Strategy]:
    """The user's strategies by name (a mapping names them; a strategy of the result that
    is not a built-in is offered too), none named like a built-in."""
    from ..merge import Strategy
    from ..merge.kernel import as_strategy

    out: dict[str, Strategy] = {}
    items: list[tuple[str | None, Any]]
    if strategies is None:
        items = []
    elif isinstance(strategies, Mapping):
        items = list(strategies.items())
    else:
        items = [(None, s) for s in strategies]
    for name, fn in items:
        if name is not None and (not isinstance(name, str) or not name):
            raise InvalidArgument(f"a strategy's name is a non-empty string, not {name!r}")
        if not isinstance(fn, Strategy) and not callable(fn):
            raise InvalidArgument(f"strategy {name!r} must be a Strategy or callable, got {fn!r}")
        s = as_strategy(fn, name)
        if s.name in BUILTIN_STRATEGIES:
            raise InvalidArgument(f"{s.name!r} is a built-in strategy; give yours another name")
        out[s.name] = s
    own = result.strategy
    if own is not None and own.name not in BUILTIN_STRATEGIES and own.name not in out:
        out = {own.name: own, **out}
    return out


def _static_files() -> list[Path]:
    """The front-end files this widget is built from (for tests and docs)."""
    from ._bundle import static_files

    return static_files("belief_slots")
