"""``cx.Merge``: the pipeline from N source sessions to one budgeted, trust-labelled block.

    m = cx.Merge([s1, s2]).budget(400).score("egalitarian")
    r = m.run(query="which database?")
    r.block.text            # the block, never over budget
    r.to_polars()           # one row per slot: decision, status, trust, kept or why not
    s = r.inject(s)         # into an open turn, as the harness plugin appends it

Stages, in the order that matters (seed ARCHITECTURE): read each source's surface and redact
it (``_branches``) → extract claims (one joint model call when ``llm=`` is given, else or on
any failure the deterministic extractor) → merge per slot with provenance → adjudicate true
ties (model only) → propagate derivations last, so an adjudicated tie counts as a premise →
check trust invariants (any violation: nothing is injected) → pack into the budget and
render. ``budget()``, ``score()`` and ``strategy()`` change the merge and return it, so calls
chain; ``copy()`` gives a second merge to change apart, and it shares the read branches and the
alignment (as a result's ``rerun`` and ``Merge.compare`` do), so trying strategies in a
notebook costs no re-reading and no second model call.

A ``Strategy`` (``_strategy``) may replace three stages with its hooks: extracting a source's
claims, scoring a slot's values and resolving a tie (before the model adjudicates what is left).
Every other stage, redaction, derivation and the trust check among them, runs for every
strategy, and the result says which strategy or stage decided each slot (``decided_by``).
"""

from __future__ import annotations

import dataclasses
import uuid
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from .._display import Rendered, badge, esc, plural, table
from ..errors import InvalidArgument, SurfaceError
from ..model import ModelProtocol
from ..session import Session, get_tokenizer
from ..session.kernel import EventWriter, widget
from ._adjudicate import Adjudication, adjudicate
from ._align import Alignment, align
from ._beliefs import Branch, Slot, Trust, build_slots
from ._branches import SourceLike, TrustLike, read_branches
from ._derive import DerivationReport, derive
from ._measures import scope_measures
from ._pack import Single, blockable
from ._projects import scope_projects
from ._prune import left_out
from ._render import Block, build_block, render_slot
from ._ruling import Ruling, label_block, rule
from ._sources import MergeSources
from ._strategy import Strategy, StrategyLike, as_strategy, decide_slots, extract_with
from ._tool import home_of
from ._trust import Violation, check_trust, presented_trust

if TYPE_CHECKING:
    from ..session import Workspace

__all__ = [
    "ADJUDICATION",
    "MERGE_PLUGIN",
    "Merge",
    "MergeResult",
    "decision_text",
    "named_strategies",
]

MERGE_PLUGIN = "ctxsdk-merge"  # the source plugin name of an injected block

ADJUDICATION = "adjudication"
"""What ``MergeResult.decided_by`` says of a tie the model adjudicator settled."""


@dataclass
class _Shared:
    """What every copy of one ``Merge`` shares: the read branches and the alignment."""

    branches: list[Branch] | None = None
    skipped: list[tuple[str, str]] = field(default_factory=list)
    alignment: Alignment | None = None
    adjudications: dict[tuple[str, int], Adjudication] = field(default_factory=dict)


@dataclass(frozen=True)
class _Decided:
    """The slots one strategy decided, before the model adjudicates: the ruling of its
    resolve hook, what decided each key, and how many hook claims held a credential."""

    ruling: Ruling
    decided_by: dict[str, str]
    withheld: int


@dataclass(frozen=True)
class MergeResult(Rendered):
    """One run of the pipeline: every stage's output, and the block."""

    branches: tuple[Branch, ...]
    skipped: tuple[tuple[str, str], ...]
    alignment: Alignment
    adjudication: Adjudication
    derivation: DerivationReport
    violations: tuple[Violation, ...]
    slots: tuple[Slot, ...]
    trusts: Mapping[str, Trust]
    block: Block
    score: str
    budget: int
    query: str | None
    # The merge that produced this result (a widget re-runs it with another score or budget)
    merge: Merge | None = field(default=None, repr=False, compare=False)
    # The strategy that decided, per key what decided it (the strategy's name for its score
    # or resolve hook, "adjudication" for the model, "later correction" for a tie a later
    # session corrected; no entry when nothing did), and the resolve hook's refused rulings
    strategy: Strategy | None = field(default=None, repr=False, compare=False)
    decided_by: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)
    refused: tuple[tuple[str, str], ...] = ()

    def rerun(self, *, score: StrategyLike | None = None, budget: int | None = None) -> MergeResult:
        """The same merge and query under another ``score`` (a strategy, a built-in's name or
        a score function) and/or ``budget`` (the branches and the alignment are reused)."""
        if self.merge is None:
            raise InvalidArgument("this result was not made by a Merge, so it cannot re-run")
        m = self.merge.copy()  # the builders change what they are called on
        if score is not None:
            m.score(score)
        if budget is not None:
            m.budget(budget)
        return m.run(self.query)

    @property
    def text(self) -> str:
        """The rendered block (``block.text``): what ``message`` and ``inject`` carry. No
        credential is in it (the sources were redacted when read, every line again when
        rendered) and no control character (neutralized: shown as an escape)."""
        return self.block.text

    @property
    def tokens(self) -> int:
        """The block's exact token count, banner and footer included (``block.tokens``)."""
        return self.block.tokens

    def decider(self, key: str) -> str:
        """What decided slot ``key``: ``"<strategy> (resolve)"`` for a tie the strategy's
        resolve hook settled, ``"adjudication"`` (the model), ``"later correction"``, the
        strategy's name for its score; ``""`` when nothing did (disputed or empty)."""
        return self.decided_by.get(key, "")

    @property
    def disputed(self) -> tuple[Slot, ...]:
        """The slots left disputed: a true tie under the score that no adjudication settled
        (opposite polarity of one value across sessions is one)."""
        return tuple(s for s in self.slots if s.status == "disputed")

    def __bool__(self) -> bool:
        return bool(self.block)

    def __len__(self) -> int:
        return len(self.slots)

    def slot(self, key: str) -> Slot:
        for s in self.slots:
            if s.key == key:
                return s
        from ..errors import NotFound

        raise NotFound(f"no slot {key!r}; {len(self.slots)} slots, e.g. {self._some_keys()}")

    def _some_keys(self) -> str:
        return ", ".join(s.key for s in self.slots[:5]) or "none"

    def __repr__(self) -> str:
        return (
            f"MergeResult({len(self.branches)} sources, {len(self.slots)} slots, "
            f"{len(self.block.slots)} in the block, {self.block.tokens}/{self.budget} tokens)"
        )

    # -- tables --------------------------------------------------------------------------
    def to_df(self) -> pl.DataFrame:
        """Deprecated: ``to_polars()``, the one table method of every result."""
        warnings.warn(
            "MergeResult.to_df() is deprecated; use to_polars()", DeprecationWarning, stacklevel=2
        )
        return self.to_polars()

    def to_polars(self) -> pl.DataFrame:
        """One row per slot: its decision, status, evidence, trust, and whether the block
        kept it (or why not)."""
        kept = {s.key for s in self.block.slots}
        why = dict(self.block.dropped)
        rows = []
        for s in self.slots:
            rows.append(
                {
                    "key": s.key,
                    "type": s.type,
                    "status": s.status,
                    "value": " | ".join(s.shown),
                    "evidence": s.max_evidence,
                    "sources": len(s.sources),
                    "trust": self.trusts[s.key].name.lower(),
                    "in_block": s.key in kept,
                    "why_not": "" if s.key in kept else why.get(s.key, self._why_out(s)),
                    "opinions": str(s.state),
                    "decided_by": self.decider(s.key),
                }
            )
        schema = {
            "key": pl.String,
            "type": pl.String,
            "status": pl.String,
            "value": pl.String,
            "evidence": pl.Int64,
            "sources": pl.Int64,
            "trust": pl.String,
            "in_block": pl.Boolean,
            "why_not": pl.String,
            "opinions": pl.String,
            "decided_by": pl.String,
        }
        return pl.DataFrame(rows, schema=schema)

    def _why_out(self, s: Slot) -> str:
        if s.decision.outcome == "empty":
            return "no opinion"
        return self.block.reason or "not packed"

    # -- into a session -------------------------------------------------------------------
    def message(self) -> dict[str, Any] | None:
        """The block as the plugin-sourced user message an injection appends (None when the
        block is empty)."""
        if not self.block:
            return None
        return {
            "id": str(uuid.uuid4()),
            "role": "user",
            "content": [{"type": "text", "text": self.block.text}],
            "source": {"kind": "plugin", "plugin": MERGE_PLUGIN},
        }

    def inject(self, session: Session) -> Session:
        """``session`` with the block appended to its open turn as a plugin-sourced user
        message after the step's messages, as the harness plugin appends it; once per turn
        (a turn that already holds a merged block is returned unchanged, as is a session when
        the block is empty). A session at rest has no turn to append to: run the next turn
        with ``run_agent(..., inject=[merge])`` instead."""
        message = self.message()
        if message is None:
            return session
        if session.version < 3:
            from ..errors import LogTooOld

            raise LogTooOld(
                f"a merged block is appended as v3 events and this log is v{session.version}; "
                "upgrade it with session.save(path, version=3) and open the result"
            )
        if not session.is_interrupted:
            raise SurfaceError(
                "inject appends to an open turn and this session is at rest (its last turn "
                "ended); run the next turn with run_agent(session, llm, prompt, inject=[merge])"
            )
        if injected_this_turn(session):
            return session
        w = EventWriter.after(session)
        if not w.step_open:
            raise SurfaceError("the open turn has no open step to append the merged block to")
        w.emit("user/message", message, op="append")
        return session.append(w.take())

    def widget(self, **options: Any) -> Any:
        """The BeliefSlots widget over this result (switch score and budget in it)."""
        return widget("belief_slots", self, **options)

    # -- rendering -------------------------------------------------------------------------
    def _summary(self) -> str:
        a = self.alignment
        mode = a.mode + (f" ({a.reason})" if a.reason else "")
        counts: dict[str, int] = {}
        for s in self.slots:
            counts[s.status] = counts.get(s.status, 0) + 1
        status = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
        return (
            f"merge of {plural(len(self.branches), 'source')}: {plural(len(self.slots), 'slot')}"
            f" ({status or 'none'}); claims by {mode}; score {self.score}; block "
            f"{self.block.tokens}/{self.budget} tokens, {len(self.block.slots)} kept"
        )

    def _notes(self) -> list[str]:
        notes = [f"skipped {src}: {why}" for src, why in self.skipped]
        if self.block.reason:
            notes.append(f"no block: {self.block.reason}")
        notes += [f"trust violation ({v.kind}) on {v.key}: {v.detail}" for v in self.violations]
        if self.adjudication.reason:
            notes.append(f"adjudication {self.adjudication.mode}: {self.adjudication.reason}")
        notes += [f"{self.score} resolve refused on {k}: {why}" for k, why in self.refused]
        if self.block.withheld:
            notes.append(f"{plural(self.block.withheld, 'credential')} withheld by redaction")
        return notes

    def _text_(self) -> str:
        lines = [self._summary()]
        lines += [f"  {n}" for n in self._notes()]
        if self.block:
            lines += ["", self.block.text]
        return "\n".join(lines)

    def _html_(self) -> str:
        kept = {s.key for s in self.block.slots}
        kinds = {
            "resolved": "ok",
            "adjudicated": "info",
            "disputed": "warn",
            "retracted": "error",
            "empty": None,
        }
        rows = [
            (
                f"<code>{esc(s.key)}</code>",
                esc(" | ".join(s.shown)),
                badge(s.status, kinds.get(s.status)),
                s.max_evidence,
                len(s.sources),
                esc(self.trusts[s.key].name.lower()),
                esc(self.decider(s.key)),
                "kept" if s.key in kept else "",
            )
            for s in self.slots
        ]
        notes = "".join(f"<div>{esc(n)}</div>" for n in self._notes())
        block = (
            f"<pre class='cx-pre'>{esc(self.block.text)}</pre>"
            if self.block
            else "<div>(nothing injected)</div>"
        )
        return (
            f"<div class='cx-title'>{esc(self._summary())}</div>{notes}"
            + table(
                ["key", "value", "status", "evidence", "sources", "trust", "decided by", "block"],
                rows,
                numeric=(3, 4),
                raw=(0, 1, 2),
            )
            + block
        )


def injected_this_turn(session: Session) -> bool:
    """Whether the open (or last) turn already holds a merged block."""
    for raw in reversed(session.raw_events):
        t = raw.get("type")
        if t == "turn/start":
            return False
        if t == "user/message":
            src = raw.get("data", {}).get("source")
            if isinstance(src, Mapping) and src.get("plugin") == MERGE_PLUGIN:
                return True
    return False


class Merge:
    """Beliefs from N source sessions, merged slot by slot into one block (module docs).

    ``sources``: sessions, log paths, or session ids with ``workspace=``. A source that
    cannot be read is skipped (``result.skipped`` says why). ``trust``: the level every
    source's claims carry (``"external"``: another session), or ``{session_id: level}``.
    ``llm``: optional; when given, claims come from one joint alignment call and true ties
    are adjudicated (asked twice, options reversed); any model failure falls back to the
    deterministic path with the reason. ``tokenizer`` costs the block in exact tokens.
    ``single``: which single-session slots the block may carry beside the cross-session
    ones (facts two or more sessions agree on, disputes): ``"all"`` (default) every one,
    ranked after the cross-session ones and a user's above a tool's above the assistant's;
    ``"user"`` only those a user stated (the others stay in ``result.slots``).
    ``score``: the ``Strategy`` that decides (``cx.merge.Strategy``: hooks for extracting
    claims, scoring values and resolving ties), a built-in's name (``"egalitarian"``,
    ``"elitist"``) or a score function over a value's ``(source, evidence)`` pairs.
    """

    def __init__(
        self,
        sources: Sequence[SourceLike],
        *,
        llm: ModelProtocol | None = None,
        trust: TrustLike | Mapping[str, TrustLike] = Trust.EXTERNAL,
        workspace: Workspace | None = None,
        exclude: str | None = None,
        include_reasoning: bool = True,
        include_injected: bool = False,
        tokenizer: str = "cl100k_base",
        budget: int = 1200,
        score: StrategyLike = "egalitarian",
        adjudicate: bool = True,
        symmetry: bool = True,
        algorithm: Literal["density", "partial"] = "partial",
        max_slots: int = 40,
        max_chars_per_branch: int = 6000,
        single: Single = "all",
    ) -> None:
        if isinstance(sources, (str, Session)) or not isinstance(sources, Sequence):
            raise InvalidArgument("Merge takes a list of sources: Merge([s1, s2, ...])")
        self._sources = tuple(sources)
        self._llm = llm
        self._trust = trust
        self._workspace = workspace
        self._exclude = exclude
        self._include_reasoning = include_reasoning
        self._include_injected = include_injected
        self._tokenizer = get_tokenizer(tokenizer)
        self._budget = _check_budget(budget)
        self._strategy: Strategy = as_strategy(score)
        self._adjudicate = adjudicate
        self._symmetry = symmetry
        if algorithm not in ("density", "partial"):
            raise InvalidArgument(f"algorithm is 'density' or 'partial', not {algorithm!r}")
        self._algorithm: Literal["density", "partial"] = algorithm
        self._max_slots = max_slots
        self._max_chars = max_chars_per_branch
        if single not in ("user", "all"):
            raise InvalidArgument(f"single is 'user' or 'all', not {single!r}")
        self._single: Single = single
        self._shared = _Shared()

    # -- the builder: each method changes this merge and returns it, so calls chain ----------
    def _copy(self, **changes: Any) -> Merge:
        new = object.__new__(Merge)
        new.__dict__.update(self.__dict__)
        new.__dict__.update(changes)
        return new

    def copy(self) -> Merge:
        """A new merge with these settings, to change apart from this one; it shares the
        read branches and the alignment, so it reads and aligns nothing again."""
        return self._copy()

    def budget(self, tokens: int) -> Merge:
        """Set the token budget of the whole block to ``tokens``. Changes this merge and
        returns it, so calls chain (``copy()`` first to keep this one as it is)."""
        self._budget = _check_budget(tokens)
        return self

    def score(self, score: StrategyLike) -> Merge:
        """Decide slots by ``score``: a ``Strategy``, ``"egalitarian"``, ``"elitist"``, or a
        function from a value's ``(source, evidence)`` supports to anything comparable.
        Changes this merge and returns it, so calls chain (``copy()`` first to keep this one
        as it is)."""
        self._strategy = as_strategy(score)
        return self

    def strategy(self, strategy: StrategyLike) -> Merge:
        """Decide under ``strategy`` (``score`` under its strategy name). Changes this merge
        and returns it, so calls chain."""
        return self.score(strategy)

    @property
    def current_strategy(self) -> Strategy:
        """The strategy this merge decides by."""
        return self._strategy

    def __repr__(self) -> str:
        return (
            f"Merge({len(self._sources)} sources, budget {self._budget}, "
            f"strategy {self._strategy.name})"
        )

    # -- stages ------------------------------------------------------------------------------
    @property
    def branches(self) -> list[Branch]:
        """The sources, read and redacted once (shared by every copy of this merge)."""
        sh = self._shared
        if sh.branches is None:
            sh.branches, sh.skipped = read_branches(
                self._sources, trust=self._trust, workspace=self._workspace, exclude=self._exclude
            )
        return sh.branches

    @property
    def alignment(self) -> Alignment:
        """The claims of every branch (model-aligned, or deterministic with the reason)."""
        sh = self._shared
        if sh.alignment is None:
            sh.alignment = align(
                self.branches,
                self._llm,
                include_reasoning=self._include_reasoning,
                include_injected=self._include_injected,
                max_slots=self._max_slots,
                max_chars_per_branch=self._max_chars,
            )
        return sh.alignment

    def _spans(self) -> dict[str, tuple[int, int]]:
        return {b.id: b.span for b in self.branches if b.span is not None}

    def _claimed(self) -> tuple[list[Slot], int]:
        """The slots of this strategy's claims (its extract hook's, or the alignment's), with
        the state every score reads, and how many hook claims held a credential."""
        a = self.alignment
        claims, withheld = extract_with(self._strategy, self.branches, a.claims)
        # a project fact holds for its project: different projects' values are no dispute
        scoped = scope_projects(scope_measures(claims), self.branches)
        return build_slots(scoped, "egalitarian", types=a.types, spans=self._spans()), withheld

    def slots(self) -> list[Slot]:
        """The merged slots under this merge's strategy's score, before any tie is
        resolved (by its resolve hook or the model)."""
        built, _ = self._claimed()
        decided, _ = decide_slots(built, self._strategy, self._spans())
        return decided

    def _decided(self) -> _Decided:
        """The slots after this strategy's score and resolve hook (no model call)."""
        built, withheld = self._claimed()
        spans = self._spans()
        decided, labels = decide_slots(built, self._strategy, spans)
        ruling = rule(decided, self._strategy, spans)
        labels.update({k: f"{self._strategy.name} (resolve)" for k in ruling.ruled})
        return _Decided(ruling, labels, withheld)

    def _adjudicated(self, slots: Sequence[Slot]) -> Adjudication:
        """The model's adjudication of the ties no hook settled (the others pass through)."""
        llm = self._llm if self._adjudicate else None
        open_ = [s for s in slots if s.resolution is None]
        cache_key = (self._strategy.name, id(self._strategy))
        sh = self._shared
        cached = sh.adjudications.get(cache_key)
        if cached is None or [s.key for s in cached.slots] != [s.key for s in open_]:
            cached = adjudicate(open_, llm, symmetry=self._symmetry)
            sh.adjudications[cache_key] = cached
        settled = {s.key: s for s in cached.slots}
        merged = tuple(settled.get(s.key, s) if s.resolution is None else s for s in slots)
        return dataclasses.replace(cached, slots=merged)

    def run(self, query: str | None = None) -> MergeResult:
        """Run the pipeline; ``query`` makes packing prefer the slots it mentions."""
        branches = self.branches
        alignment = self.alignment
        decided = self._decided()
        adjudication = self._adjudicated(decided.ruling.slots)
        decided_by = dict(decided.decided_by)
        settled = (k for k, r in adjudication.resolved.items() if r.asserts)
        decided_by.update({k: ADJUDICATION for k in settled if k not in decided_by})
        derivation = derive(adjudication.slots)
        slots = derivation.slots
        trusts = {s.key: presented_trust(s) for s in slots}
        violations = check_trust(slots, trusts)
        withheld = sum(b.redactions for b in branches) + decided.withheld
        ruled = {k: self._strategy.name for k in decided.ruling.ruled}
        if violations:
            block = build_block((), self._budget, trusts=trusts, tokenizer=self._tokenizer)
            reason = (
                f"trust check failed ({plural(len(violations), 'violation')}): nothing injected"
            )
            block = dataclasses.replace(block, reason=reason, withheld=withheld)
        else:
            cands = [s for s in slots if blockable(s, self._single)]
            # a session's task and a slot another already shows stay out (``_prune``)
            out = left_out(cands, branches, lambda s: render_slot(s, trusts[s.key]))

            def pack(budget: int) -> Block:
                block = build_block(
                    [s for s in cands if s.key not in out],
                    budget,
                    trusts=trusts,
                    tokenizer=self._tokenizer,
                    query=query,
                    withheld=withheld,
                    algorithm=self._algorithm,
                )
                if out:
                    why = tuple(sorted({**dict(block.dropped), **out}.items()))
                    block = dataclasses.replace(block, dropped=why)
                return block

            block = pack(self._budget)
            if ruled:  # a tie a strategy's hook settled is labelled by the strategy
                block = label_block(block, ruled, trusts, self._tokenizer, pack)
        return MergeResult(
            branches=tuple(branches),
            skipped=tuple(self._shared.skipped),
            alignment=alignment,
            adjudication=adjudication,
            derivation=derivation,
            violations=violations,
            slots=tuple(slots),
            trusts=trusts,
            block=block,
            score=self._strategy.name,
            budget=self._budget,
            query=query,
            merge=self.copy(),  # as it ran: a later builder call on self does not change it
            strategy=self._strategy,
            decided_by=decided_by,
            refused=decided.ruling.refused,
        )

    @classmethod
    def for_session(
        cls,
        session: Session,
        sources: MergeSources,
        *,
        workspace: Workspace | None = None,
        **options: Any,
    ) -> Merge:
        """The merge ``session`` has chosen: the sources its ``merge_sessions`` selection
        names (the runtime layer, else the config default), looked up in ``workspace`` (by
        default the DSH home ``session`` was read from), never ``session`` itself. A
        selection that is off gives a merge with no sources (an empty block)."""
        selection = sources.get(str(session.id))
        ws = workspace
        if ws is None and selection.sources:
            home = home_of(session)
            if home is not None:
                from ..session import Workspace

                ws = Workspace(home, progress=False)
        return cls(list(selection.sources), workspace=ws, exclude=str(session.id), **options)

    # -- the turn-context hook ---------------------------------------------------------------
    def __call__(self, session: Session) -> dict[str, Any] | None:
        """The merged block for ``session``'s new turn, as a message (``run_agent``'s
        ``inject=`` hook); packed for the turn's prompt, never merging ``session`` itself."""
        m = self if self._exclude == str(session.id) else self._for(session)
        return m.run(query=_latest_prompt(session)).message()

    def _for(self, session: Session) -> Merge:
        new = self._copy(_exclude=str(session.id))
        new._shared = _Shared()
        return new

    # -- comparing strategies ---------------------------------------------------------------
    @staticmethod
    def compare(
        strategies: Sequence[StrategyLike] | Mapping[str, StrategyLike],
        sources: Sequence[SourceLike] | Merge,
        **options: Any,
    ) -> pl.DataFrame:
        """How each strategy decides each slot: one row per key, one column per strategy
        (the winner, the value its resolve hook chose, ``disputed{a,b}``, or ``""`` when its
        claims have no such key), ``differs`` when they disagree, and the ``opinions`` they
        decided from. Strategies are ``Strategy`` values, built-in names or score functions
        (a mapping names them). ``sources`` may be a ``Merge`` (its branches and alignment
        are reused). No model is asked: a tie no hook settles stays disputed here."""
        named = named_strategies(strategies)
        names = [s.name for s in named]
        base = sources if isinstance(sources, Merge) else Merge(sources, **options)
        per: dict[str, dict[str, str]] = {}
        first: dict[str, Slot] = {}
        for s in named:
            slots = base.copy().strategy(s)._decided().ruling.slots  # base stays as it was
            for slot in slots:
                first.setdefault(slot.key, slot)
            per[s.name] = {slot.key: decision_text(slot) for slot in slots}
        rows = []
        for key in sorted(first):
            slot = first[key]
            decided = {name: per[name].get(key, "") for name in names}
            rows.append(
                {
                    "key": key,
                    "type": slot.type,
                    **decided,
                    "differs": len(set(decided.values())) > 1,
                    "opinions": str(slot.state),
                }
            )
        schema: dict[str, Any] = {"key": pl.String, "type": pl.String}
        schema.update({n: pl.String for n in names})
        schema.update({"differs": pl.Boolean, "opinions": pl.String})
        return pl.DataFrame(rows, schema=schema)


def named_strategies(
    strategies: Sequence[StrategyLike] | Mapping[str, StrategyLike],
) -> list[Strategy]:
    """Strategies by name (a mapping renames them); at least one, no name twice."""
    if isinstance(strategies, Mapping):
        named = [as_strategy(s, str(n)) for n, s in strategies.items()]
    elif isinstance(strategies, (str, Strategy)) or callable(strategies):
        named = [as_strategy(strategies)]
    else:
        named = [as_strategy(s) for s in strategies]
    if not named:
        raise InvalidArgument("compare needs at least one strategy")
    names = [s.name for s in named]
    if len(set(names)) != len(names):
        raise InvalidArgument(f"strategy names repeat: {names}; pass a mapping to name them")
    return named


def decision_text(slot: Slot) -> str:
    """A slot's decision as a comparison table shows it: the winner, the value a ruling
    chose, ``both{a,b}`` / ``conditional{a,b}``, else ``disputed{a,b}`` or ``<empty>``."""
    r = slot.resolution
    if slot.decision.outcome == "disputed" and r is not None and r.asserts:
        if r.outcome == "choose" and r.value is not None:
            return r.value
        return f"{r.outcome}{{{','.join(slot.decision.tied)}}}"
    return str(slot.decision)


def _check_budget(tokens: object) -> int:
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
        raise InvalidArgument(f"a budget is a whole number of tokens >= 0, not {tokens!r}")
    return tokens


def _latest_prompt(session: Session) -> str | None:
    for raw in reversed(session.raw_events):
        if raw.get("type") == "user/message":
            data = raw.get("data", {})
            src = data.get("source")
            if isinstance(src, Mapping) and src.get("kind") == "user":
                parts = [
                    b.get("text", "")
                    for b in data.get("content", [])
                    if isinstance(b, Mapping) and b.get("type") == "text"
                ]
                return " ".join(p for p in parts if isinstance(p, str)) or None
    return None
