"""Fitting a session into a token budget: choose modes so the derived messages fit.

Never collapsed: the system prompt, the latest user message, and the tool call group the next
step depends on. A tool result can be collapsed alone (a content rewrite keeps its pairing); an
assistant that calls tools is collapsed with its results. Collapsing order is least relevant to the
query first (BM25 over the node texts, lightly smoothed over neighbours), then oldest first.
``key`` is preferred where its digest is really shorter; ``off`` only when key is not enough.
The estimate that drives the choice is checked against the exact planner at the end.
Modes already in the draft (explicit choices) are never changed; when the budget cannot be met,
the notes name what cannot move and what it costs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import InvalidArgument
from ..session import (
    BM25,
    Session,
    SurfaceNode,
    TokenCounter,
    assembly_header,
    digest_text,
    estimate_text,
    node_tokens,
    read_marker,
    tool_groups,
)
from ._digest import DigestConfig, auto_digest, off_marker
from ._modes import Mode
from ._planner import PlanOp, Target, compile_plan, current_modes
from ._tree import header_system_tokens

__all__ = ["FitIndex", "FitResult", "fit_plan"]

_HEADER_TOKENS = 14  # ⟨assembled:key items=N tokens≈M⟩ and framing
_NEIGHBOUR_WEIGHT = 0.35
_MAX_ROUNDS = 12


@dataclass
class FitResult:
    """The chosen modes (a draft you can inspect and adjust) and what they cost."""

    budget: int
    targets: dict[int, Target]
    tokens_before: int
    tokens_after: int
    protected: list[int]
    ops: list[PlanOp] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def fits(self) -> bool:
        return self.tokens_after <= self.budget

    @property
    def kept(self) -> list[int]:
        """Surface seqs left verbatim."""
        collapsed = {s for op in self.ops for s in op.shadowed if op.kind != "expand"}
        return [s for s in self._surface if s not in collapsed]

    _surface: list[int] = field(default_factory=list, repr=False)

    def __repr__(self) -> str:
        verdict = "fits" if self.fits else "does NOT fit"
        return (
            f"FitResult(budget {self.budget}: {self.tokens_before} -> {self.tokens_after} tokens, "
            f"{verdict}; {len(self.ops)} ops, {len(self.protected)} protected nodes)"
        )


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


@dataclass
class FitIndex:
    """What fitting needs that does not depend on the budget or the query: built once per
    session and reused across many fits (a benchmark fits one session hundreds of times)."""

    session: Session
    surface: list[SurfaceNode]
    seqs: list[int]
    full: list[int]
    groups: list[tuple[int, int]]
    keep: set[int]
    now: list[Mode]
    bm25: BM25
    units: list[tuple[int, int]]
    key_cost: dict[tuple[int, int], int]
    off_cost: int  # one off run's marker message, counted exactly
    system: int = 0  # a v0-v2 header system prompt: sent, but no surface node counts it

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
        marker = f"{assembly_header('off', 100, 10_000)}\n{off_marker(config, 100, 10_000)}"
        return cls(
            off_cost=counter.count_message(
                {"role": "user", "content": [{"type": "text", "text": marker.strip()}]}
            ),
            session=session,
            surface=surface,
            seqs=seqs,
            full=node_tokens(session, counter),
            groups=groups,
            keep=keep,
            now=current_modes(session, surface),
            bm25=BM25([digest_text(n.message) for n in surface]),
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
) -> FitResult:
    """Modes for every node so the derived messages fit ``budget`` tokens.

    ``base`` holds choices made before (``set``, rules, a loaded draft): fit never changes
    them, nor the tool group they sit in, and fits the rest around them."""
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise InvalidArgument(
            f"a token budget is a positive whole number of tokens (at least 1), not {budget!r}"
        )
    ix = index if index is not None and index.session is session else None
    ix = ix or FitIndex.build(session, counter, config)
    surface, seqs, full, keep, now = ix.surface, ix.seqs, ix.full, ix.keep, ix.now
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

    rel = ix.bm25.scores(query) if query else [0.0] * len(surface)
    smooth = [
        r
        + _NEIGHBOUR_WEIGHT * max(rel[i - 1] if i else 0.0, rel[i + 1] if i + 1 < len(rel) else 0.0)
        for i, r in enumerate(rel)
    ]
    units = [
        u
        for u in ix.units
        if all(now[p] == "full" and p not in held for p in range(u[0], u[1] + 1))
    ]
    key_cost = ix.key_cost
    # Least relevant first; among equals lone nodes before whole groups (a result rewrite
    # keeps the call visible), then oldest first.
    units.sort(key=lambda u: (max(smooth[u[0] : u[1] + 1]), u[1] > u[0], u[0]))
    mode_of: dict[tuple[int, int], Mode] = {}
    # A running estimate over per-position costs. Adjacent off nodes become one run with one
    # marker, so an off unit adds a marker only when it starts a run, and saves one when it
    # joins two; the exact planner has the last word below.
    cost = list(full)
    off = [False] * len(surface)
    for op in base_ops:
        if op.mode == "off":
            for s in op.shadowed:
                off[pos_of[s]] = True
    # A key unit next to an explicit key node would join its run and take its digest.
    explicit_key = {p for p in fixed if targets[seqs[p]].mode == "key"}
    total = start

    def collapse(unit: tuple[int, int], mode: Mode) -> None:
        nonlocal total
        a, b = unit
        if mode == "key":
            new = key_cost[unit]
        else:
            joins = (a > 0 and off[a - 1]) + (b + 1 < len(off) and off[b + 1])
            new = ix.off_cost * (1 - joins)
            off[a : b + 1] = [True] * (b - a + 1)
        total += new - sum(cost[a : b + 1])
        cost[a : b + 1] = [new] + [0] * (b - a)
        mode_of[unit] = mode

    for unit in units:  # key first, where it is really shorter
        if total <= budget:
            break
        if unit[0] - 1 in explicit_key or unit[1] + 1 in explicit_key:
            continue
        if key_cost[unit] < 0.8 * sum(cost[unit[0] : unit[1] + 1]):
            collapse(unit, "key")
    for unit in units:  # then off, least relevant first
        if total <= budget:
            break
        collapse(unit, "off")

    for _ in range(_MAX_ROUNDS):
        for (a, b), mode in mode_of.items():
            for p in range(a, b + 1):
                targets[seqs[p]] = Target(mode)
        ops, notes = compile_plan(session, targets, counter=counter, config=config)
        after = before - sum(op.saved for op in ops)
        result.ops, result.notes[:], result.tokens_after = ops, [*result.notes, *notes], after
        if after <= budget:
            break
        # The estimate was short: collapse just enough of the least relevant units still kept to
        # cover the overshoot (plus a marker each), and check again.
        more, freed = [], 0
        for u in units:
            if mode_of.get(u) == "off":
                continue
            more.append(u)
            freed += sum(full[u[0] : u[1] + 1]) - ix.off_cost
            if freed >= after - budget:
                break
        if not more:
            break
        for u in more:
            mode_of[u] = "off"
    result.notes = list(dict.fromkeys(result.notes))  # each round repeats the planner's notes
    if not result.fits:
        result.notes.append(_cannot_move(ix, result, held, fixed, planned, base_ops))
    result.targets = targets
    return result


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
