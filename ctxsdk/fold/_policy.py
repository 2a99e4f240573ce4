"""When to fold and what: the named policies, pressure, span selection and admission.

Every decision is arithmetic over exact node token counts and the context window, and says
why in words (``Decision.reason``), so a run that does nothing explains itself instead of
looping.

- ``basic``: the harness's compaction-basic (dsh-session-format §10): fold when the surface
  reaches ``floor(window × 0.8)``; keep a verbatim tail of ``floor(window × 0.16)`` tokens, cut
  only where tool calls balance; the span is head-anchored (everything after the system
  head), so it re-folds earlier checkpoints; the checkpoint is the eight-section summary.
- ``masking``: observation masking: tool results older than the retained tail become a
  one-line pointer to their archived bytes; nothing else changes.
- ``economy`` (default), ``balanced``, ``quality``: the seed's ladder. Leaf folds start at the
  frontier (never re-folding a checkpoint); economic admission refuses a fold whose reclaim
  is too small, and the reachability check says when no fold can get under the threshold;
  a root rebase merges the checkpoints into one when its payback horizon is short enough
  (at most once per ``rebase_cooldown`` folds), when no leaf can be made or admitted, or
  when the frozen prefix holds over ``rebase_frozen_share`` of the room a leaf can free.
  A fold under pressure over the policy's own checkpoints takes them with it into one root
  checkpoint when the room that wins back (at the warm price, every later request) pays for
  the larger checkpoint read cold once within ``payback_horizon`` requests (``_merged``);
  else the leaf keeps them and the cache prefix. ``economy`` keeps a verbatim tail of 0.04
  of the window in the folds it decides itself (``pressure_retain_ratio``): what it folds
  is archived exactly and recallable, and each token of tail is paid for, cold once and
  warm on every request until the next fold, so it keeps the work in progress, not the
  last sixth of the window (a fold you ask for keeps ``retain_ratio``, 0.16).
  ``balanced`` keeps a longer tail (0.24); ``quality`` adds a model rationale (which never
  feeds state).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

from .._display import Rendered, kv, section
from ..errors import InvalidArgument, UnknownName
from ._economics import EconomicsProfile, profile
from ._frontier import Frontier

__all__ = [
    "POLICIES",
    "Decision",
    "FoldPolicy",
    "Pressure",
    "balanced_cut",
    "decide",
    "leaf_span",
    "measure_pressure",
    "resolve_policy",
]

PolicyName = Literal["basic", "masking", "economy", "balanced", "quality"]
Action = Literal["none", "leaf", "root", "emergency", "mask"]

# The seed measured its first checkpoint's framing at 530 tokens; ours is far shorter, but
# an estimate is only used before the checkpoint text exists (we render it exactly first).
_FIRST_CHECKPOINT_ESTIMATE = 160


@dataclass(frozen=True)
class FoldPolicy:
    """A fold policy's settings. ``resolve_policy("economy", retain_ratio=0.2)`` starts from a
    preset and overrides what you name."""

    name: str = "economy"
    threshold_ratio: float = 0.8
    retain_ratio: float = 0.16
    retain_tokens: int | None = None
    pressure_retain_ratio: float | None = None
    window: int | None = None
    reserve_tokens: int = 0
    span: Literal["frontier", "head"] = "frontier"
    checkpoint: Literal["state", "summary", "mask"] = "state"
    admission: Literal["always", "economic"] = "economic"
    min_reclaim_tokens: int = 256
    min_reclaim_ratio: float = 0.25
    root: Literal["never", "economics"] = "economics"
    rebase_cooldown: int = 5
    rebase_frozen_share: float = 0.5
    payback_horizon: float = 12.0
    cache_realisation: float = 0.9
    profile: str | EconomicsProfile = "deepseek-flash-2026-09"
    rationale: bool = False

    def __post_init__(self) -> None:
        if not 0 < self.threshold_ratio <= 1:
            raise InvalidArgument(f"threshold_ratio must be in (0, 1], got {self.threshold_ratio}")
        if not 0 <= self.retain_ratio < self.threshold_ratio:
            raise InvalidArgument(
                f"retain_ratio must be in [0, threshold_ratio), got {self.retain_ratio}"
            )
        lean = self.pressure_retain_ratio
        if lean is not None and not 0 <= lean < self.threshold_ratio:
            raise InvalidArgument(
                f"pressure_retain_ratio must be in [0, threshold_ratio), got {lean}"
            )
        if self.window is not None and self.window < 1:
            raise InvalidArgument(f"window must be a positive token count, got {self.window}")

    @property
    def economics(self) -> EconomicsProfile:
        return profile(self.profile)

    def window_for(self, logged: int | None) -> int:
        """The context window: set here, else the log's route, else the profile's."""
        if self.window is not None:
            return self.window
        return logged if logged is not None else self.economics.window_tokens

    def to_json(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["profile"] = self.economics.id
        return out


POLICIES: dict[str, FoldPolicy] = {
    "basic": FoldPolicy(
        "basic", span="head", checkpoint="summary", admission="always", root="never"
    ),
    "masking": FoldPolicy("masking", checkpoint="mask", admission="always", root="never"),
    "economy": FoldPolicy("economy", pressure_retain_ratio=0.04),
    "balanced": FoldPolicy("balanced", retain_ratio=0.24),
    "quality": FoldPolicy("quality", retain_ratio=0.24, rationale=True),
}


def resolve_policy(policy: str | FoldPolicy, **overrides: Any) -> FoldPolicy:
    """A preset by name (or a policy) with explicit settings overriding it."""
    if isinstance(policy, FoldPolicy):
        base = policy
    else:
        try:
            base = POLICIES[policy]
        except KeyError:
            raise UnknownName(
                f"no fold policy {policy!r}; the policies are: {', '.join(POLICIES)}"
            ) from None
    known = {f.name for f in fields(FoldPolicy)}
    bad = sorted(set(overrides) - known)
    if bad:
        raise InvalidArgument(
            f"unknown fold setting(s) {', '.join(bad)}; "
            f"the settings are: {', '.join(sorted(known))}"
        )
    if ("retain_ratio" in overrides or "retain_tokens" in overrides) and (
        "pressure_retain_ratio" not in overrides
    ):
        overrides["pressure_retain_ratio"] = None  # the tail you name is the tail you get
    return replace(base, **overrides) if overrides else base


@dataclass(frozen=True)
class Pressure:
    """The surface against the window: ``total`` tokens now, ``head`` of them in the system
    head, ``frozen`` in checkpoints, the fold ``threshold`` and the hard ``capacity`` (window
    minus reserve)."""

    total: int
    frozen: int
    checkpoints: int
    threshold: int
    capacity: int
    window: int
    window_measured: bool
    head: int = 0

    @property
    def open(self) -> int:
        """Tokens in the open nodes (neither the head nor a checkpoint)."""
        return self.total - self.frozen - self.head

    @property
    def ratio(self) -> float:
        return self.total / self.threshold if self.threshold else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "head": self.head,
            "frozen": self.frozen,
            "threshold": self.threshold,
            "capacity": self.capacity,
            "window": self.window,
            "windowMeasured": self.window_measured,
            "regime": self.regime,
        }

    @property
    def regime(self) -> Literal["idle", "frozen-bound", "open-bound"]:
        if self.total < self.threshold:
            return "idle"
        return (
            "frozen-bound" if self.checkpoints and self.frozen >= self.threshold else "open-bound"
        )


def measure_pressure(
    frontier: Frontier, tokens: Sequence[int], policy: FoldPolicy, logged_window: int | None
) -> Pressure:
    window = policy.window_for(logged_window)
    frozen = sum(tokens[c.position] for c in frontier.frozen)
    return Pressure(
        total=sum(tokens),
        frozen=min(frozen, sum(tokens)),
        checkpoints=len(frontier.frozen),
        threshold=int(window * policy.threshold_ratio),
        capacity=window - policy.reserve_tokens,
        window=window,
        window_measured=policy.window is None and logged_window is not None,
        head=sum(tokens[: frontier.head]),
    )


def balanced_cut(cut: int, lo: int, groups: Sequence[tuple[int, int]]) -> int:
    """Move ``cut`` left until no tool group (first, last) straddles it: a call and its
    results leave the surface together or not at all. Never below ``lo``."""
    moved = True
    while moved and cut > lo:
        moved = False
        for first, last in groups:
            if first < cut <= last:
                cut = max(first, lo)
                moved = True
    return cut


def leaf_span(
    start: int, tokens: Sequence[int], retain: int, groups: Sequence[tuple[int, int]]
) -> tuple[int, int] | None:
    """Positions ``[start, cut)`` a leaf fold may take: the verbatim tail holds at least
    ``retain`` tokens (walked from the end), the cut is moved left until tool groups balance.
    None if nothing is left to fold."""
    n = len(tokens)
    cut, kept = n, 0
    while cut > start and kept < retain:
        cut -= 1
        kept += tokens[cut]
    cut = balanced_cut(cut, start, groups)
    if cut <= start:
        return None
    # A group that starts before ``start`` and ends inside the span is a frontier problem,
    # not ours to split: refuse rather than orphan its results.
    if any(first < start <= last < cut for first, last in groups):
        return None
    return start, cut


_ACTIONS = {
    "none": "no fold",
    "leaf": "leaf fold",
    "root": "root rebase",
    "emergency": "emergency fold",
    "mask": "mask tool output",
}


@dataclass(frozen=True)
class Decision(Rendered):
    """What a policy decided, and why (``reason`` holds the arithmetic). ``span`` is the
    positions ``[start, end)`` to fold; ``checkpoint_tokens`` the exact size of the
    checkpoint text when it was rendered to decide. Prints and renders as a short report
    (``print(f.plan())``)."""

    action: Action
    reason: str
    span: tuple[int, int] | None = None
    span_tokens: int = 0
    checkpoint_tokens: int | None = None
    unreachable: bool = False
    checkpoint_id: str | None = None  # the id the checkpoint was rendered with, to count it

    @property
    def folds(self) -> bool:
        return self.action != "none"

    @property
    def reclaim(self) -> int:
        if self.checkpoint_tokens is None:
            return 0
        return max(0, self.span_tokens - self.checkpoint_tokens)

    def _rows(self) -> list[tuple[str, str]]:
        rows = [("decision", _ACTIONS.get(self.action, self.action)), ("why", self.reason)]
        if self.span is not None:
            start, end = self.span
            rows.append(("span", f"positions {start}–{end - 1} ({self.span_tokens:,} tokens)"))
        if self.checkpoint_tokens is not None:
            rows.append(("checkpoint", f"{self.checkpoint_tokens:,} tokens"))
            rows.append(("reclaims", f"{self.reclaim:,} tokens"))
        if self.unreachable:
            rows.append(("note", "even a fold of every open node leaves it over the threshold"))
        return rows

    def _text_(self) -> str:
        return "Fold plan\n" + "\n".join(f"  {k:<10} {v}" for k, v in self._rows())

    def _html_(self) -> str:
        return section("Fold plan", kv(self._rows()))


def decide(
    policy: FoldPolicy,
    frontier: Frontier,
    tokens: Sequence[int],
    groups: Sequence[tuple[int, int]],
    pressure: Pressure,
    *,
    checkpoint_tokens: Any,
    folds_since_root: int,
    force: bool = False,
) -> Decision:
    """The policy's decision for this surface. ``checkpoint_tokens(span, root)`` renders the
    checkpoint a fold of ``span`` would write and returns its exact token count.

    A leaf fold comes first; when none can be made or admitted and the frozen prefix holds
    two or more checkpoints, a root rebase is tried instead (the leaf cannot suffice because
    the prefix itself is the load), so pressure never ends in a fold every step that
    reclaims nothing, nor in a request over the window while a rebase could make room."""
    surface = _Surface(frontier, tokens, groups, pressure, checkpoint_tokens)
    leaf = _decide_leaf(policy, surface, folds_since_root=folds_since_root, force=force)
    idle = pressure.total < pressure.threshold and not force
    if leaf.folds or idle or policy.root == "never":
        return leaf
    if len(frontier.frozen) < 2 or policy.checkpoint != "state":
        return leaf
    root = _root(frontier, tokens, pressure, checkpoint_tokens, "the leaf cannot suffice")
    if root.folds:
        return replace(root, reason=f"{root.reason}; a leaf would not: {leaf.reason}")
    return leaf


@dataclass(frozen=True, slots=True)
class _Surface:
    """What a decision reads of the surface: ``decide``'s arguments, passed on as one."""

    frontier: Frontier
    tokens: Sequence[int]
    groups: Sequence[tuple[int, int]]
    pressure: Pressure
    checkpoint_tokens: Any


def _decide_leaf(
    policy: FoldPolicy, surface: _Surface, *, folds_since_root: int, force: bool
) -> Decision:
    frontier, tokens, groups = surface.frontier, surface.tokens, surface.groups
    pressure, checkpoint_tokens = surface.pressure, surface.checkpoint_tokens
    if pressure.total < pressure.threshold and not force:
        return Decision(
            "none",
            f"idle: {pressure.total:,} tokens on the surface, under the fold threshold "
            f"{pressure.threshold:,} ({policy.threshold_ratio:.0%} of a {pressure.window:,}-token "
            "window)",
        )
    retain = policy.retain_tokens
    if retain is None:
        ratio = policy.retain_ratio
        if policy.pressure_retain_ratio is not None and not force:
            ratio = policy.pressure_retain_ratio
        retain = int(pressure.window * ratio)
    if policy.checkpoint == "mask":
        span = leaf_span(frontier.head, tokens, retain, groups)
        if span is None:
            return Decision("none", f"nothing older than the {retain:,}-token tail to mask")
        return Decision("mask", f"mask tool results before the {retain:,}-token tail", span)
    start = frontier.head if policy.span == "head" else frontier.first_open
    if policy.span == "frontier" and not frontier.consistent:
        if policy.root != "never" and len(frontier.frozen) + 1 >= 2:
            return _root(frontier, tokens, pressure, checkpoint_tokens, "inconsistent frontier")
        return Decision("none", f"leaf folds refuse: {frontier.problem}")
    emergency = pressure.total >= pressure.capacity
    if policy.root == "economics" and len(frontier.frozen) >= 2:
        if pressure.regime == "frozen-bound":
            return _root(frontier, tokens, pressure, checkpoint_tokens, "frozen-bound")
        # The room a leaf fold can win back is what lies between the frozen prefix and the
        # verbatim tail; once the prefix holds more than this share of the room above the
        # head, leaf folds come ever closer together, so the prefix is merged first.
        room = max(1, pressure.threshold - pressure.head - retain)
        if pressure.frozen > policy.rebase_frozen_share * room:
            root = _root(
                frontier,
                tokens,
                pressure,
                checkpoint_tokens,
                f"the frozen prefix ({pressure.frozen:,}) holds over "
                f"{policy.rebase_frozen_share:.0%} of the {room:,} tokens a leaf can free",
            )
            if root.folds:
                return root
    span = leaf_span(start, tokens, retain, groups)
    if span is None:
        return Decision(
            "none",
            f"no legal span: the {len(tokens) - start} open node(s) after position {start} "
            f"are all inside the {retain:,}-token verbatim tail or one tool call's group",
        )
    span_tokens = sum(tokens[span[0] : span[1]])
    cp = int(checkpoint_tokens(span, False))
    action: Action = "emergency" if emergency else "leaf"
    if cp >= span_tokens:
        return Decision(
            "none",
            f"the checkpoint ({cp:,} tokens) would not be smaller than the {span_tokens:,} "
            "tokens it replaces",
            span,
            span_tokens,
            cp,
        )
    reclaim = span_tokens - cp
    if policy.admission == "economic" and not emergency and not force:
        widest = leaf_span(start, tokens, 0, groups)
        widest_tokens = sum(tokens[widest[0] : widest[1]]) if widest else 0
        best = pressure.total - max(0, widest_tokens - cp)
        if best >= pressure.threshold:
            return Decision(
                "none",
                f"unreachable: even folding every open node ({widest_tokens:,} tokens) leaves "
                f"{best:,} ≥ the threshold {pressure.threshold:,}; no fold can get under it",
                span,
                span_tokens,
                cp,
                unreachable=True,
            )
        ratio = reclaim / span_tokens if span_tokens else 0.0
        if reclaim < policy.min_reclaim_tokens or ratio < policy.min_reclaim_ratio:
            return Decision(
                "none",
                f"not worth it: a fold would reclaim {reclaim:,} tokens ({ratio:.0%} of "
                f"{span_tokens:,}); the policy asks at least {policy.min_reclaim_tokens:,} and "
                f"{policy.min_reclaim_ratio:.0%}",
                span,
                span_tokens,
                cp,
            )
    if policy.root == "economics" and frontier.frozen and not emergency and not force:
        merged = _merged(policy, surface, span, span_tokens, cp)
        if merged is not None:
            return merged
    if (
        policy.root == "economics"
        and len(frontier.frozen) >= 2
        and folds_since_root >= policy.rebase_cooldown
    ):
        root = _root(frontier, tokens, pressure, checkpoint_tokens, "amortized", policy=policy)
        if root.folds:
            return root
    why = "emergency" if emergency else "pressure"
    against = f"≥ threshold {pressure.threshold:,}"
    if pressure.total < pressure.threshold:
        why, against = "forced", f"(under the threshold {pressure.threshold:,})"
    return Decision(
        action,
        f"{why}: {pressure.total:,} tokens {against}; fold {span_tokens:,} tokens into a "
        f"{cp:,}-token checkpoint, reclaiming {reclaim:,}",
        span,
        span_tokens,
        cp,
    )


def _merged(
    policy: FoldPolicy, surface: _Surface, span: tuple[int, int], span_tokens: int, cp: int
) -> Decision | None:
    """The leaf fold of ``span`` (its checkpoint ``cp`` tokens) against folding the frozen
    prefix with it, into one root checkpoint: a root decision when that pays back, else None.

    After either fold everything from the new checkpoint on is read cold; the leaf keeps the
    frozen prefix warm, the merged fold replaces it. So the merged fold costs the difference
    of the two checkpoints, read cold once, and saves what the frozen prefix and the leaf
    checkpoint hold beyond the root checkpoint, at the warm price, on every later request
    (and leaves that much more room before the next fold). It is taken when that saving pays
    the cost back within ``payback_horizon`` requests."""
    frontier, tokens = surface.frontier, surface.tokens
    if not frontier.consistent or any(c.checkpoint_id is None for c in frontier.frozen):
        return None  # a harness's own compaction summary is left to a rebase to merge
    whole = (frontier.head, span[1])
    whole_tokens = sum(tokens[whole[0] : whole[1]])
    root_cp = int(surface.checkpoint_tokens(whole, True))
    if root_cp >= whole_tokens:
        return None
    econ, h = policy.economics, policy.cache_realisation
    frozen = whole_tokens - span_tokens
    saving = (frozen + cp - root_cp) * econ.warm_price(h)
    if saving <= 0:
        return None
    extra = max(0, root_cp - cp) * h * (econ.input_miss_per_m - econ.input_hit_per_m) / 1e6
    horizon = extra / saving
    if horizon > policy.payback_horizon:
        return None
    return Decision(
        "root",
        f"pressure: {surface.pressure.total:,} tokens ≥ threshold {surface.pressure.threshold:,}; "
        f"fold the {len(frontier.frozen)} checkpoint(s) ({frozen:,} tokens) with the "
        f"{span_tokens:,} open tokens into one root checkpoint of {root_cp:,} (a leaf's would "
        f"be {cp:,} behind the frozen prefix): it pays back in {horizon:.1f} requests",
        whole,
        whole_tokens,
        root_cp,
    )


def _root(
    frontier: Frontier,
    tokens: Sequence[int],
    pressure: Pressure,
    checkpoint_tokens: Any,
    why: str,
    *,
    policy: FoldPolicy | None = None,
) -> Decision:
    """A root rebase: the frozen prefix (and an inconsistent stray checkpoint's span) merged
    into one checkpoint. Under ``amortized`` it must pay back within the horizon."""
    start = frontier.head
    # An inconsistent frontier is repaired by folding through its last stray checkpoint.
    end = frontier.stray_end if frontier.stray_end is not None else frontier.first_open
    span = (start, end)
    span_tokens = sum(tokens[start:end])
    cp = int(checkpoint_tokens(span, True))
    if policy is not None:
        # H* = C_root / S: what the rebase costs (every token after the head re-read cold)
        # over what each later request saves (the frozen load it removes, at the warm price).
        econ = policy.economics
        h = policy.cache_realisation
        saving = max(0, span_tokens - cp) * econ.warm_price(h)
        invalid = pressure.total - sum(tokens[: frontier.head])
        cost = invalid * (econ.input_miss_per_m - econ.input_hit_per_m) / 1e6 * h
        horizon = cost / saving if saving > 0 else float("inf")
        if horizon > policy.payback_horizon:
            return Decision(
                "none",
                f"no rebase: it would pay back in {horizon:.1f} requests, over the horizon "
                f"{policy.payback_horizon:g}",
            )
        why = f"amortized (pays back in {horizon:.1f} requests)"
    if cp >= span_tokens:
        return Decision("none", f"no rebase: one root checkpoint ({cp:,}) is not smaller")
    return Decision(
        "root",
        f"root rebase ({why}): {len(frontier.frozen)} checkpoints, {span_tokens:,} tokens, into "
        f"one of {cp:,}",
        span,
        span_tokens,
        cp,
    )
