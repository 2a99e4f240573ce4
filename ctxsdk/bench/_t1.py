"""The T1 confluence experiment, rebuilt: does incremental merging agree with n-ary merging?

Research code, run by ``ctxsdk bench merge``; it reads the merge kernel's slot algebra.

Exhaustive over two small spaces (seed-algorithms.md §1(d)), three branches, every one of
the 6 arrival orders compared with the n-ary merge:

- Space A: values ``a, b, c``, evidence ``{1, 2}``; a branch opines on each value with
  nothing/1/2 ⇒ 27 templates ⇒ 19,683 profiles; *well-formed* (at most one opinion per
  branch) ⇒ 7 templates ⇒ 343.
- Space B: values ``a, b``, evidence ``{1..4}`` ⇒ 25 templates ⇒ 15,625; well-formed 9 ⇒ 729.

Also the minimal witnesses (Space A), the idempotence table and the compounded JTMS search
(a claim is IN iff its slot resolves to ``assert`` and all its premises are IN). The result
has the shape and field names of the published ``t1_results.json``, so the two compare field
by field (``compare_t1``). Representations use T1's names: ``JOIN``, ``COUNT``, ``MAX``
(= ``repr_collapse``).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..merge import Decision, SlotState
from ..merge.kernel import (
    SCORES,
    Representation,
    Score,
    decision_key,
    repr_collapse,
    repr_count,
    repr_join,
    select,
)

__all__ = [
    "T1_REPRESENTATIONS",
    "T1_SPACES",
    "T1Space",
    "compare_t1",
    "t1_experiment",
]

_Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class T1Space:
    name: str
    values: tuple[str, ...]
    evidences: tuple[int, ...]
    n_branches: int = 3

    def templates(self, well_formed: bool) -> list[tuple[tuple[str, int], ...]]:
        """Every way one branch can opine on one slot, in T1's enumeration order."""
        if well_formed:
            return [(), *(((v, e),) for v in self.values for e in self.evidences)]
        options: list[int | None] = [None, *self.evidences]
        return [
            tuple((v, e) for v, e in zip(self.values, combo, strict=True) if e is not None)
            for combo in itertools.product(options, repeat=len(self.values))
        ]


T1_SPACES: tuple[T1Space, ...] = (
    T1Space("A", ("a", "b", "c"), (1, 2)),
    T1Space("B", ("a", "b"), (1, 2, 3, 4)),
)
T1_REPRESENTATIONS: Mapping[str, Representation] = {
    "JOIN": repr_join,
    "COUNT": repr_count,
    "MAX": repr_collapse,
}


class _Folder:
    """Incremental merging with every step cached: the same (accumulator, branch) pair
    recurs across profiles and orders, so each union + representation is computed once."""

    def __init__(self, score: Score, representation: Representation) -> None:
        self.score = score
        self.rep = representation
        self._step: dict[tuple[SlotState, SlotState], SlotState] = {}
        self._decision: dict[SlotState, Decision] = {}

    def decide(self, state: SlotState) -> Decision:
        d = self._decision.get(state)
        if d is None:
            d = self._decision[state] = select(state, self.score)
        return d

    def step(self, acc: SlotState, branch: SlotState) -> SlotState:
        key = (acc, branch)
        out = self._step.get(key)
        if out is None:
            out = self._step[key] = self.rep(acc.union(branch), self.score)
        return out

    def fold(self, branches: Sequence[SlotState]) -> SlotState:
        acc = branches[0]
        for b in branches[1:]:
            acc = self.step(acc, b)
        return acc


def _violation(
    branches: Sequence[SlotState], folder: _Folder, nary: _Folder
) -> tuple[Decision, tuple[int, ...], Decision] | None:
    reference = folder.decide(nary.fold(branches))
    ref_key = decision_key(reference)
    for order in itertools.permutations(range(len(branches))):
        got = folder.decide(folder.fold([branches[i] for i in order]))
        if decision_key(got) != ref_key:
            return reference, order, got
    return None


def _confluence(report: dict[str, Any], progress: _Progress | None) -> None:
    done, total = 0, len(T1_SPACES) * 2 * len(SCORES) * len(T1_REPRESENTATIONS)
    witnesses: dict[tuple[bool, str, str], dict[str, Any]] = {}
    for space in T1_SPACES:
        for well_formed in (False, True):
            templates = space.templates(well_formed)
            states = [
                [SlotState.from_opinions(f"b{i}", t) for t in templates]
                for i in range(space.n_branches)
            ]
            for score_name, score in SCORES.items():
                nary = _Folder(score, repr_join)
                for rep_name, rep in T1_REPRESENTATIONS.items():
                    folder = _Folder(score, rep)
                    folder._decision = nary._decision  # same score: share the decisions
                    failures = count = 0
                    best: tuple[int, list[SlotState], Any] | None = None
                    for combo in itertools.product(range(len(templates)), repeat=space.n_branches):
                        branches = [states[i][t] for i, t in enumerate(combo)]
                        count += 1
                        v = _violation(branches, folder, nary)
                        if v is None:
                            continue
                        failures += 1
                        size = sum(len(b) for b in branches)
                        if best is None or size < best[0]:
                            best = (size, branches, v)
                    report["confluence"].append(
                        {
                            "space": space.name,
                            "score": score_name,
                            "representation": rep_name,
                            "well_formed": well_formed,
                            "failures": failures,
                            "total": count,
                            "rate": failures / count if count else 0.0,
                        }
                    )
                    if space.name == "A" and rep_name != "JOIN" and best is not None:
                        size, branches, (ref, order, got) = best
                        witnesses[(well_formed, score_name, rep_name)] = {
                            "well_formed": well_formed,
                            "score": score_name,
                            "representation": rep_name,
                            "size": size,
                            "profile": [str(b) for b in branches],
                            "n_ary": str(ref),
                            "order": list(order),
                            "incremental": str(got),
                        }
                    done += 1
                    if progress is not None:
                        progress(done, total, f"T1 space {space.name}")
    for well_formed in (False, True):
        for score_name in SCORES:
            for rep_name in T1_REPRESENTATIONS:
                w = witnesses.get((well_formed, score_name, rep_name))
                if w is not None:
                    report["minimal_witness"].append(w)


_IDEMPOTENCE_SAMPLES = (
    SlotState.of(("a", "b0", 2), ("b", "b0", 1)),
    SlotState.of(("a", "b0", 1), ("b", "b0", 1)),
    SlotState.of(("a", "b0", 4), ("a", "b0", 1)),
    SlotState.of(("a", "b0", 1), ("a", "b0", 2), ("b", "b0", 2)),
)


def _idempotence(report: dict[str, Any]) -> None:
    for score_name, score in SCORES.items():
        for rep_name, rep in T1_REPRESENTATIONS.items():
            decision_ok = all(
                decision_key(select(s, score))
                == decision_key(select(rep(s.union(s), score), score))
                for s in _IDEMPOTENCE_SAMPLES
            )
            state_ok = all(rep(s.union(s), score) == s for s in _IDEMPOTENCE_SAMPLES)
            report["idempotence"].append(
                {
                    "score": score_name,
                    "representation": rep_name,
                    "decision_level": decision_ok,
                    "state_level": state_ok,
                }
            )


# -- the compounded (JTMS) search ----------------------------------------
_Opinion = tuple[int, str, int]  # (claim id, "assert" | "refute", evidence)
_Specs = tuple[tuple[int, frozenset[int]], ...]  # (claim id, premises)


def _slot(opinions: frozenset[_Opinion], sid: str, cid: int) -> SlotState:
    return SlotState(tuple((v, sid, e) for c, v, e in opinions if c == cid))


def _propagate(specs: _Specs, decisions: Mapping[int, Decision]) -> frozenset[int]:
    inn: set[int] = set()
    changed = True
    while changed:
        changed = False
        for cid, premises in specs:
            if cid in inn:
                continue
            d = decisions[cid]
            if d.outcome == "resolved" and d.winner == "assert" and premises <= inn:
                inn.add(cid)
                changed = True
    return frozenset(inn)


def _compound_failure(
    specs: _Specs, branches: Sequence[frozenset[_Opinion]], folder: _Folder, nary: _Folder
) -> tuple[frozenset[int], frozenset[int]] | None:
    slots = {cid: [_slot(b, f"b{i}", cid) for i, b in enumerate(branches)] for cid, _ in specs}
    reference = _propagate(specs, {c: folder.decide(nary.fold(s)) for c, s in slots.items()})
    for order in itertools.permutations(range(len(branches))):
        got = _propagate(
            specs,
            {c: folder.decide(folder.fold([s[i] for i in order])) for c, s in slots.items()},
        )
        if got != reference:
            return reference, got
    return None


def _witness_row(
    cost: int, branches: Sequence[frozenset[_Opinion]], ref: frozenset[int], got: frozenset[int]
) -> dict[str, Any]:
    return {
        "cost": cost,
        "branches": [[list(o) for o in sorted(b)] for b in branches],
        "n_ary_IN": sorted(ref),
        "incremental_IN": sorted(got),
    }


def _options(evidences: Sequence[int]) -> list[tuple[str, int] | None]:
    return [None, *(("assert", e) for e in evidences), *(("refute", e) for e in evidences)]


def _opinions(specs: _Specs, combo: Sequence[tuple[str, int] | None]) -> frozenset[_Opinion]:
    return frozenset(
        (cid, o[0], o[1]) for (cid, _), o in zip(specs, combo, strict=True) if o is not None
    )


def _compounded(report: dict[str, Any], *, random_search: bool) -> None:
    score = SCORES["egalitarian"]
    nary = _Folder(score, repr_join)
    folder = _Folder(score, repr_collapse)
    folder._decision = nary._decision
    options = _options((1, 2))

    # [3a] c0 (axiom), c1 <- {c0}: exhaustive over 3 branches.
    specs2: _Specs = ((0, frozenset()), (1, frozenset({0})))
    templates = [_opinions(specs2, c) for c in itertools.product(options, repeat=len(specs2))]
    found: list[dict[str, Any]] = []
    for combo in itertools.product(templates, repeat=3):
        v = _compound_failure(specs2, combo, folder, nary)
        if v is not None:
            found.append(_witness_row(sum(len(b) for b in combo), combo, *v))
    found.sort(key=lambda row: int(row["cost"]))
    report["compounded"] = found[:2]

    if not random_search:
        return
    # [3b] c0, c1 <- {c0}, c2 <- {c1}: T1's seeded random search (100,000 samples, stop at 64).
    specs3: _Specs = ((0, frozenset()), (1, frozenset({0})), (2, frozenset({1})))
    rng = random.Random(20260917)
    found = []
    for _ in range(100_000):
        branches = [_opinions(specs3, rng.choices(options, k=len(specs3))) for _ in range(3)]
        v = _compound_failure(specs3, branches, folder, nary)
        if v is not None:
            found.append(_witness_row(sum(len(b) for b in branches), branches, *v))
            if len(found) >= 64:
                break
    found.sort(key=lambda row: int(row["cost"]))
    report["compounded_chain3"] = found[:2]


def t1_experiment(
    *, chain3: bool = True, progress: Callable[[int, int, str], None] | None = None
) -> dict[str, Any]:
    """Run the whole T1 experiment; the result has ``t1_results.json``'s keys and shape:
    ``confluence``, ``minimal_witness``, ``idempotence``, ``compounded`` and (unless
    ``chain3=False``) ``compounded_chain3``."""
    report: dict[str, Any] = {
        "confluence": [],
        "minimal_witness": [],
        "idempotence": [],
        "compounded": [],
    }
    _confluence(report, progress)
    _idempotence(report)
    _compounded(report, random_search=chain3)
    return report


def compare_t1(ours: Mapping[str, Any], published: Mapping[str, Any]) -> list[str]:
    """Every field where ``ours`` differs from ``published``, as readable paths
    (``confluence[3].failures: 7 != 8``); sections absent from ``ours`` are skipped."""
    out: list[str] = []

    def walk(a: Any, b: Any, path: str) -> None:
        if isinstance(b, Mapping):
            if not isinstance(a, Mapping):
                out.append(f"{path}: {a!r} is not an object")
                return
            for k in sorted(set(a) | set(b)):
                if k not in a or k not in b:
                    out.append(f"{path}.{k}: only in {'published' if k in b else 'ours'}")
                else:
                    walk(a[k], b[k], f"{path}.{k}")
        elif isinstance(b, list):
            if not isinstance(a, list) or len(a) != len(b):
                out.append(f"{path}: length {len(a) if isinstance(a, list) else '-'} != {len(b)}")
                return
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                walk(x, y, f"{path}[{i}]")
        elif a != b or isinstance(a, bool) != isinstance(b, bool):  # True is not 1
            out.append(f"{path}: {a!r} != {b!r}")

    for section, value in published.items():
        if section in ours:
            walk(ours[section], value, section)
    return out
