"""Fitting a session into a token budget: choose modes so the derived messages fit.

Never collapsed: the system prompt, the latest user message, and the tool call group the next
step depends on. A tool result can be collapsed alone (a content rewrite keeps its pairing); an
assistant that calls tools is collapsed with its results. Collapsing order is least relevant to the
query first (BM25 over the node texts, lightly smoothed over neighbours), then oldest first.
``key`` is preferred where its digest is really shorter; ``off`` only when key is not enough.
The estimate that drives the choice is checked against the exact planner at the end.
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
    tool_groups,
)
from ._digest import DigestConfig, auto_digest, off_marker
from ._modes import Mode
from ._planner import PlanOp, Target, compile_plan, current_modes

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
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        raise InvalidArgument(f"a token budget is a whole number >= 0, not {budget!r}")
    ix = index if index is not None and index.session is session else None
    ix = ix or FitIndex.build(session, counter, config)
    surface, seqs, full, keep, now = ix.surface, ix.seqs, ix.full, ix.keep, ix.now
    before = sum(full)
    targets: dict[int, Target] = dict(base or {})
    result = FitResult(
        budget, targets, before, before, sorted(seqs[p] for p in keep), _surface=seqs
    )
    if before <= budget:
        result.notes.append("already within budget; nothing collapsed")
        return result

    rel = ix.bm25.scores(query) if query else [0.0] * len(surface)
    smooth = [
        r
        + _NEIGHBOUR_WEIGHT * max(rel[i - 1] if i else 0.0, rel[i + 1] if i + 1 < len(rel) else 0.0)
        for i, r in enumerate(rel)
    ]
    units = [
        u for u in ix.units if all(now[p] == "full" or p in targets for p in range(u[0], u[1] + 1))
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
    total = before

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
        result.ops, result.notes, result.tokens_after = ops, notes, after
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
            result.notes.append(
                f"cannot fit {budget} tokens: protected nodes alone need about "
                f"{sum(full[p] for p in keep)}"
            )
            break
        for u in more:
            mode_of[u] = "off"
    result.targets = targets
    return result
