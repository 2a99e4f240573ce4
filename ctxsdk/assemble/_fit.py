"""Fitting a session into a token budget: choose modes so the derived messages fit.

Never collapsed: the system prompt, the latest user message, and the tool call group the next
step depends on. A tool result can be collapsed alone (a content rewrite keeps its pairing); an
assistant that calls tools is collapsed with its results. What stays is chosen by relevance to
the query (the base's ``Retriever`` over the node texts: BM25 with fit's additions, lightly
smoothed over neighbours, fused with embeddings when an embedder is given) per token spent, where
the tokens spent include the marker of every off run the choice makes or saves (``_pack``);
equal relevance goes to the most recent. ``key`` alone is tried first where its digest is
really shorter; ``off`` only when key is not enough. The estimate that drives the choice is
checked against the exact planner, and what it left unspent is spent. Modes already in the
draft (explicit choices) are never changed; when the budget cannot be met, the notes name what
cannot move and what it costs.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any, cast

from .._display import Rendered, esc, plural, stacked_bar, table
from ..errors import InvalidArgument
from ..session import Embedder, Session, SurfaceNode, TokenCounter
from ..session.kernel import (
    assembly_header,
    digest_text,
    estimate_text,
    node_tokens,
    read_marker,
    tool_groups,
)
from ._digest import DigestConfig, auto_digest, off_marker, off_rewrite
from ._modes import Mode
from ._pack import FULL, OFF, Packer
from ._planner import PlanOp, Target, compile_plan, current_modes
from ._rank import Ranker
from ._tree import header_system_tokens

__all__ = ["FitIndex", "FitResult", "fit_plan"]

_HEADER_TOKENS = 14  # ⟨assembled:key items=N tokens≈M⟩ and framing
_SHARPNESS = 5
_MAX_ROUNDS = 12


@dataclass
class FitResult(Rendered):
    """The chosen modes (a draft you can inspect and adjust) and what they cost.

    Printed: the verdict, the ops and the notes; in a notebook also a bar of what stays
    verbatim, what the replacements cost and what left, against the budget."""

    budget: int
    targets: dict[int, Target]
    tokens_before: int
    tokens_after: int
    protected: list[int]
    ops: list[PlanOp] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Kept user messages that carry an adjacent off run (``DigestConfig(absorb_off=True)``):
    # re-emitted verbatim as the run's replacement, so the model still reads them whole.
    carried: list[int] = field(default_factory=list)

    @property
    def fits(self) -> bool:
        return self.tokens_after <= self.budget

    @property
    def kept(self) -> list[int]:
        """Surface seqs the model still reads verbatim (a carried message counts)."""
        collapsed = {s for op in self.ops for s in op.shadowed if op.kind != "expand"}
        collapsed -= set(self.carried)
        return [s for s in self._surface if s not in collapsed]

    def marker_tokens(self, counter: TokenCounter) -> int:
        """Tokens the plan spends saying what left: every off op but what a carried message
        brings along verbatim, and the header line of each key op (its digest is content)."""
        out = 0
        for op in self.ops:
            if op.mode == "off":
                carried = [s for s in op.shadowed if s in self.carried]
                out += op.tokens_after - sum(self._carried_tokens.get(s, 0) for s in carried)
            elif op.mode == "key" and op.text:
                out += counter.tokenizer.count(op.text.split("\n", 1)[0])
        return out

    _carried_tokens: dict[int, int] = field(default_factory=dict, repr=False)

    _surface: list[int] = field(default_factory=list, repr=False)

    def __repr__(self) -> str:
        verdict = "fits" if self.fits else "does NOT fit"
        return (
            f"FitResult(budget {self.budget}: {self.tokens_before} -> {self.tokens_after} tokens, "
            f"{verdict}; {len(self.ops)} ops, {len(self.protected)} protected nodes)"
        )

    def _headline(self) -> str:
        verdict = "fits" if self.fits else "does NOT fit"
        return (
            f"Fit to {self.budget:,} tokens: {self.tokens_before:,} -> {self.tokens_after:,} "
            f"({verdict}); {plural(len(self.ops), 'op')}, {len(self.kept)} of "
            f"{plural(len(self._surface), 'node')} verbatim, {len(self.protected)} protected"
        )

    def _parts(self) -> list[tuple[str, int, str]]:
        replacements = sum(op.tokens_after for op in self.ops if op.kind != "expand")
        kept = max(0, self.tokens_after - replacements)
        left = max(0, self.tokens_before - self.tokens_after)
        return [
            ("verbatim", kept, "accent"),
            ("replacements", replacements, "marker"),
            ("left the context", left, "free"),
        ]

    def _op_lines(self) -> list[tuple[str, str, str, str]]:
        return [
            (
                op.mode,
                f"{op.start_seq}..{op.end_seq}",
                plural(len(op.shadowed), "node"),
                f"{op.tokens_before:,} -> {op.tokens_after:,}",
            )
            for op in self.ops
        ]

    def _text_(self) -> str:
        lines = [self._headline()]
        lines += [f"  {m:<4} {seqs:>12}  {n:>9}  {t}" for m, seqs, n, t in self._op_lines()]
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    def _html_(self) -> str:
        plot = stacked_bar(
            self._parts(),
            max(self.tokens_before, self.budget),
            marks=[(self.budget, f"budget {self.budget:,}")],
            title="what fit keeps, what the replacements cost, what left",
        )
        ops = table(("mode", "seqs", "covers", "tokens"), self._op_lines(), numeric=(1, 3))
        notes = "".join(f"<div class='cx-muted'>note: {esc(n)}</div>" for n in self.notes)
        return f"<div class='cx-title'>{esc(self._headline())}</div>{plot}{ops}{notes}"


def _protected(surface: list[SurfaceNode], groups: list[tuple[int, int]]) -> set[int]:
    keep: set[int] = set()
    if surface and surface[0].type == "system/message":
        keep.add(0)
    last_user = max(
        (
            i
            for i, n in enumerate(surface)
            if n.type == "user/message" and n.message.source.kind == "user"
        ),
        default=None,
    )
    if last_user is not None:
        keep.add(last_user)
    # The trailing tool group: the results the next model step reads.
    last_assistant = max(
        (i for i, n in enumerate(surface) if n.message.role == "assistant"), default=None
    )
    if last_assistant is not None:
        for a, b in groups:
            if a == last_assistant:
                keep.update(range(a, b + 1))
        keep.add(last_assistant)
    return keep


def _units(surface: list[SurfaceNode], groups: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Collapse units: a tool result alone (a content rewrite keeps its pairing), an assistant that
    calls tools together with its results (collapsing it widens to them anyway), any other node
    alone."""
    group_at = dict(groups)
    return [(p, group_at.get(p, p)) for p in range(len(surface))]


class _Memo:
    """An embedder that remembers the vector of every text it embedded, so the surface of a
    session is embedded once however many indexes and fits rank it."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim  # an embedder's identity never changes
        self.embedded = 0  # texts the inner embedder was asked for
        self._vecs: dict[str, Any] = {}

    def embed(self, texts: list[str]) -> list[list[float]]:
        todo = [t for t in dict.fromkeys(texts) if t not in self._vecs]
        if todo:
            import numpy

            vecs = numpy.asarray(self.inner.embed(todo), dtype=numpy.float32)
            if vecs.shape != (len(todo), self.inner.dim):
                raise InvalidArgument(
                    f"embedder {self.inner.name!r} returned shape {vecs.shape}, "
                    f"expected ({len(todo)}, {self.inner.dim})"
                )
            self.embedded += len(todo)
            self._vecs.update(zip(todo, vecs, strict=True))
        return cast("list[list[float]]", [self._vecs[t] for t in texts])

    def embed_query(self, texts: list[str]) -> list[list[float]]:
        fn = getattr(self.inner, "embed_query", None) or self.inner.embed
        out: list[list[float]] = fn(texts)
        return out


# Per session (held weakly: a session that is gone takes its vectors along), per embedder.
_MEMOS: weakref.WeakKeyDictionary[Session, list[_Memo]] = weakref.WeakKeyDictionary()


def _memo(session: Session, embedder: Embedder) -> _Memo:
    if isinstance(embedder, _Memo):
        return embedder
    memos = _MEMOS.setdefault(session, [])
    for m in memos:
        if m.inner is embedder:
            return m
    memos.append(_Memo(embedder))
    return memos[-1]


@dataclass
class FitIndex:
    """What fitting needs that does not depend on the budget or the query: built once per
    session and reused across many fits (a benchmark fits one session hundreds of times).

    ``ranker`` is lexical; :meth:`ranker_for` gives the hybrid ranker of an embedder, built
    once per index, over embeddings computed once per session and embedder."""

    session: Session
    surface: list[SurfaceNode]
    seqs: list[int]
    full: list[int]
    groups: list[tuple[int, int]]
    keep: set[int]
    now: list[Mode]
    ranker: Ranker
    units: list[tuple[int, int]]
    key_cost: dict[tuple[int, int], int]
    off_cost: int  # an off run's message, in its longest form (the estimate is an upper bound)
    off_tool_cost: int  # an off tool-result rewrite's header line, likewise
    carrier: list[bool]  # plain user messages that can carry an adjacent off run
    config: DigestConfig
    system: int = 0  # a v0-v2 header system prompt: sent, but no surface node counts it
    texts: list[str] = field(default_factory=list)  # what the ranker reads, per node
    sections: list[int | None] = field(default_factory=list)  # each node's turn
    _hybrid: list[tuple[Embedder, Ranker]] = field(default_factory=list, repr=False)

    def ranker_for(self, embedder: Embedder | None) -> Ranker:
        """The lexical ranker, or with ``embedder`` the hybrid one (lexical fused with the
        nodes' embeddings), built on first use and kept with this index."""
        if embedder is None:
            return self.ranker
        for e, r in self._hybrid:
            if e is embedder:
                return r
        r = Ranker(self.texts, sections=self.sections, embedder=_memo(self.session, embedder))
        self._hybrid.append((embedder, r))
        return r

    @classmethod
    def build(cls, session: Session, counter: TokenCounter, config: DigestConfig) -> FitIndex:
        surface = list(session.surface())
        seqs = [n.seq for n in surface]
        groups = tool_groups(surface)
        keep = _protected(surface, groups)
        units = [
            u for u in _units(surface, groups) if not any(p in keep for p in range(u[0], u[1] + 1))
        ]
        key_cost = {}
        for a, b in units:
            members = [(surface[p].seq, surface[p].message) for p in range(a, b + 1)]
            key_cost[(a, b)] = _HEADER_TOKENS + estimate_text(auto_digest(members, config))
        full = node_tokens(session, counter)
        # The longest numbers a marker can hold here: the last seq, every node, every token.
        top, items, tokens = max(seqs, default=0), len(seqs) * 10, sum(full) * 10
        marker = off_marker(config, items, tokens, top, top + 1) if seqs else ""
        rewrite = off_rewrite(config, assembly_header("off", items, tokens), top)
        now = current_modes(session, surface)
        texts = [digest_text(n.message) for n in surface]
        turns = [session.index.turn_of(n.seq) for n in surface]
        sections = [t.turn if t is not None else None for t in turns]
        # A carrier is re-emitted verbatim: a user message the model sees as it was written
        # (not a replacement), and not one fit must leave alone.
        carrier = [
            n.type == "user/message" and n.op == "append" and now[p] == "full" and p not in keep
            for p, n in enumerate(surface)
        ]
        return cls(
            off_cost=counter.count_message(
                {"role": "user", "content": [{"type": "text", "text": marker}] if marker else []}
            ),
            off_tool_cost=counter.count_message(
                {"role": "tool", "content": [{"type": "text", "text": rewrite}]}
            ),
            carrier=carrier,
            config=config,
            session=session,
            surface=surface,
            seqs=seqs,
            full=full,
            groups=groups,
            keep=keep,
            now=now,
            ranker=Ranker(texts, sections=sections),
            texts=texts,
            sections=sections,
            units=units,
            key_cost=key_cost,
            system=header_system_tokens(session, counter.tokenizer.name),
        )


def fit_plan(
    session: Session,
    budget: int,
    *,
    query: str | None,
    counter: TokenCounter,
    config: DigestConfig,
    base: dict[int, Target] | None = None,
    index: FitIndex | None = None,
    embedder: Embedder | None = None,
) -> FitResult:
    """Modes for every node so the derived messages fit ``budget`` tokens.

    ``base`` holds choices made before (``set``, rules, a loaded draft): fit never changes
    them, nor the tool group they sit in, and fits the rest around them. With ``embedder``
    the query ranks the nodes by hybrid scores (lexical fused with embeddings); the nodes
    are embedded once per session and embedder, not once per fit."""
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise InvalidArgument(
            f"a token budget is a positive whole number of tokens (at least 1), not {budget!r}"
        )
    ix = index if index is not None and index.session is session else None
    ix = ix if ix is not None and ix.config == config else None
    ix = ix or FitIndex.build(session, counter, config)
    seqs, full, keep, now = ix.seqs, ix.full, ix.keep, ix.now
    before = sum(full) + ix.system
    targets: dict[int, Target] = dict(base or {})
    result = FitResult(
        budget, targets, before, before, sorted(seqs[p] for p in keep), _surface=seqs
    )
    pos_of = {s: p for p, s in enumerate(seqs)}
    fixed = {pos_of[s] for s in targets if s in pos_of}
    start = before
    base_ops: list[PlanOp] = []
    if targets:  # the explicit choices, planned exactly: fit starts from what they give
        base_ops, notes = compile_plan(session, targets, counter=counter, config=config)
        start = before - sum(op.saved for op in base_ops)
        result.ops, result.notes, result.tokens_after = base_ops, notes, start
    if start <= budget:
        result.notes.append(
            "already within budget with the draft as it is; nothing more collapsed"
            if targets
            else "already within budget; nothing collapsed"
        )
        return result
    explicit_cost = sum(
        full[p] for p in fixed if not any(seqs[p] in op.shadowed for op in base_ops)
    ) + sum(op.tokens_after for op in base_ops)
    if explicit_cost > budget:
        result.notes.append(
            f"your explicit choices alone ({_choices(targets, seqs, fixed)}) need about "
            f"{explicit_cost:,} tokens, more than the budget of {budget:,}: fit does not "
            "override them"
        )
    # Moving a node inside a tool group that holds an explicit choice could widen a run over
    # that choice (the planner keeps calls with their results), so such groups stay as they are.
    planned = {pos_of[s] for op in base_ops for s in op.shadowed if s in pos_of}
    held = fixed | planned
    for a, b in ix.groups:
        if any(a <= p <= b for p in held):
            held.update(range(a, b + 1))

    smooth = ix.ranker_for(embedder).scores(query)
    units = [
        u
        for u in ix.units
        if all(now[p] == "full" and p not in held for p in range(u[0], u[1] + 1))
    ]
    key_cost = ix.key_cost
    # A key unit next to an explicit key node would join its run and take its digest.
    explicit_key = {p for p in fixed if targets[seqs[p]].mode == "key"}
    # Key alone, least relevant first, where it is really shorter: when that fits, nothing
    # needs to go off.
    order = sorted(units, key=lambda u: (max(smooth[u[0] : u[1] + 1]), u[1] > u[0], u[0]))
    keyed: dict[tuple[int, int], Mode] = {}
    total = start
    for unit in order:
        if total <= budget:
            break
        if unit[0] - 1 in explicit_key or unit[1] + 1 in explicit_key:
            continue
        old = sum(full[unit[0] : unit[1] + 1])
        # the zero-token option spends no marker, and a key digest's header is one
        if not config.absorb_off and key_cost[unit] < 0.8 * old:
            keyed[unit] = "key"
            total += key_cost[unit] - old
    plan: _Plan | None = None
    if total <= budget:
        plan = _plan(ix, targets, keyed, [], counter, config)
        plan = plan if plan.after <= budget else None
    if plan is None:
        pk = _packer(ix, units, smooth, explicit_key, base_ops, start, config)
        pk.grow(budget)
        best: _Plan | None = None
        for _ in range(_MAX_ROUNDS):
            got = _plan(ix, targets, *_modes_of(ix, pk, config), counter, config)
            if got.after <= budget:
                best = got
                # The estimate charges each marker its longest form: spend what is left.
                if got.after == budget or not pk.grow(pk.total + budget - got.after):
                    break
            elif best is not None:
                break  # a plan that fits is in hand; growing again overshot
            elif not pk.shrink(got.after - budget):
                plan = got
                break  # nothing more can go: the notes say what cannot move
            plan = got
        plan = best or plan
    assert plan is not None
    result.targets = targets = plan.targets
    result.ops, result.tokens_after = plan.ops, plan.after
    result.notes += plan.notes
    result.carried = [seqs[p] for p in plan.carried]
    result._carried_tokens = {seqs[p]: full[p] for p in plan.carried}
    result.notes = list(dict.fromkeys(result.notes))
    if not result.fits:
        result.notes.append(_cannot_move(ix, result, held, fixed, planned, base_ops))
    return result


@dataclass
class _Plan:
    targets: dict[int, Target]
    ops: list[PlanOp]
    notes: list[str]
    after: int
    carried: list[int]


def _plan(
    ix: FitIndex,
    base: dict[int, Target],
    modes: dict[tuple[int, int], Mode],
    carried: list[int],
    counter: TokenCounter,
    config: DigestConfig,
) -> _Plan:
    """The explicit choices plus fit's modes, planned exactly."""
    targets = dict(base)
    for (a, b), mode in modes.items():
        for p in range(a, b + 1):
            targets[ix.seqs[p]] = Target(mode)
    for p in carried:  # re-emitted verbatim as its run's replacement
        targets[ix.seqs[p]] = Target("off", digest_text(ix.surface[p].message))
    ops, notes = compile_plan(ix.session, targets, counter=counter, config=config)
    after = sum(ix.full) + ix.system - sum(op.saved for op in ops)
    return _Plan(targets, ops, notes, after, carried)


def _packer(
    ix: FitIndex,
    units: list[tuple[int, int]],
    smooth: list[float],
    explicit_key: set[int],
    base_ops: list[PlanOp],
    start: int,
    config: DigestConfig,
) -> Packer:
    n = len(ix.surface)
    base_off = [m == "off" for m in ix.now]
    pos_of = {s: p for p, s in enumerate(ix.seqs)}
    for op in base_ops:
        if op.mode == "off":
            for s in op.shadowed:
                base_off[pos_of[s]] = True
    keyable = {
        i: ix.key_cost[u]
        for i, u in enumerate(units)
        if not config.absorb_off  # no key header in the zero-token option
        and u[0] - 1 not in explicit_key
        and u[1] + 1 not in explicit_key
        and ix.key_cost[u] < 0.8 * sum(ix.full[u[0] : u[1] + 1])
    }
    # Recency breaks ties and gives unscored units a faint order: newest first.
    # The value of keeping a unit grows faster than its score (a best match is far likelier to
    # be what the query needs than two half matches), so the packer's value per token follows
    # the ranking closely; recency breaks ties and orders what no query word reaches.
    value = [max(smooth[a : b + 1]) ** _SHARPNESS + 1e-9 * (a + 1) / n for a, b in units]
    return Packer(
        cost=ix.full,
        units=units,
        value=value,
        key_cost=keyable,
        base_off=base_off,
        carrier=ix.carrier,
        lone_tool=[node.type == "tool/result" for node in ix.surface],
        marker=ix.off_cost,
        tool_marker=ix.off_tool_cost,
        absorb=config.absorb_off,
        total=start,
    )


def _modes_of(
    ix: FitIndex, pk: Packer, config: DigestConfig
) -> tuple[dict[tuple[int, int], Mode], list[int]]:
    """The packer's state as modes per unit, and the carriers of its off runs (absorb mode:
    finding them may send a unit off, so they come first)."""
    carried = pk.carriers() if config.absorb_off else []
    modes: dict[tuple[int, int], Mode] = {}
    for unit, state in zip(pk.units, pk.state, strict=True):
        if state != FULL:
            modes[unit] = "off" if state == OFF else "key"
    return modes, carried


def _choices(targets: dict[int, Target], seqs: list[int], fixed: set[int]) -> str:
    """The explicit choices in a few words: ``3 nodes set full (seq 208-214), 1 set off``."""
    by_mode: dict[str, list[int]] = {}
    for p in sorted(fixed):
        by_mode.setdefault(targets[seqs[p]].mode, []).append(seqs[p])
    parts = []
    for mode, got in by_mode.items():
        parts.append(f"{len(got)} node{'s' * (len(got) > 1)} set {mode} ({_span(got)})")
    return ", ".join(parts)


def _span(seqs: list[int]) -> str:
    return f"seq {seqs[0]}" if len(seqs) == 1 else f"seqs {seqs[0]}-{seqs[-1]}"


def _tok(n: int) -> str:
    return f"{n:,} token{'s' * (n != 1)}"


def _cannot_move(
    ix: FitIndex,
    result: FitResult,
    held: set[int],
    fixed: set[int],
    planned: set[int],
    base_ops: list[PlanOp],
) -> str:
    """Why a budget cannot be met, naming what cannot move and what each costs."""
    surface, seqs, full, keep = ix.surface, ix.seqs, ix.full, ix.keep
    parts: list[str] = []
    named = 0
    if ix.system:
        parts.append(f"the system prompt ({_tok(ix.system)}, sent in the request header)")
        named += ix.system
    if 0 in keep and surface[0].type == "system/message" and full[0]:
        parts.append(f"the system prompt ({_tok(full[0])})")
        named += full[0]
    rest = sorted(keep - {0} - fixed)
    user = [p for p in rest if surface[p].type == "user/message"]
    for p in user:
        parts.append(f"the latest user prompt (seq {seqs[p]}, {_tok(full[p])})")
        named += full[p]
    tail = [p for p in rest if p not in user]
    if tail:
        cost = sum(full[p] for p in tail)
        what = (
            "the last assistant message"
            if len(tail) == 1
            else "the last assistant message and the tool results the next step reads"
        )
        parts.append(f"{what} ({_span([seqs[p] for p in tail])}, {_tok(cost)})")
        named += cost
    if fixed:
        mine = sum(full[p] for p in fixed if not any(seqs[p] in op.shadowed for op in base_ops))
        mine += sum(op.tokens_after for op in base_ops)
        parts.append(
            f"your explicit choices ({_choices(result.targets, seqs, fixed)}, {_tok(mine)})"
        )
        named += mine
    collapsed = [
        p for p in range(len(surface)) if ix.now[p] != "full" and p not in keep and p not in held
    ]
    for p in sorted(collapsed, key=lambda p: -full[p])[:4]:
        raw = ix.session.raw_events[seqs[p]]
        mark = read_marker(raw)
        if mark is not None and mark.kind == "compaction":
            what = "harness compaction checkpoint"
        elif mark is not None and mark.kind == "assembly":
            what = f"{ix.now[p]} collapse written earlier"
        else:
            what = "replacement written by another tool"
        parts.append(f"a {full[p]:,}-token {what} (seq {seqs[p]})")
        named += full[p]
    if len(collapsed) > 4:
        more = sorted(collapsed, key=lambda p: -full[p])[4:]
        cost = sum(full[p] for p in more)
        parts.append(f"{len(more)} more nodes collapsed earlier ({_tok(cost)})")
        named += cost
    grouped = sorted(held - fixed - planned)
    if grouped:
        cost = sum(full[p] for p in grouped)
        parts.append(
            f"{len(grouped)} node{'s' * (len(grouped) > 1)} in a tool group with an explicit "
            f"choice ({_tok(cost)})"
        )
        named += cost
    markers = result.tokens_after - named
    if markers > 0:
        parts.append(f"the markers and digests of what was collapsed ({_tok(markers)})")
    return (
        f"cannot fit {result.budget:,} tokens: with everything that can move collapsed, the "
        f"context is {result.tokens_after:,} tokens; what cannot move is " + ", ".join(parts)
    )
