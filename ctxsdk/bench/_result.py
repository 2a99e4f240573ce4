"""The result every benchmark returns: metrics, same-run baselines, targets and verdicts."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

__all__ = ["BenchResult", "Target", "best_of", "wall_and_cpu"]


class Target(BaseModel):
    """``metric op value``, e.g. ``load_over_floor_ratio <= 2.0``."""

    metric: str
    op: Literal["<=", ">="]
    value: float

    @classmethod
    def at_most(cls, metric: str, value: float) -> Target:
        return cls(metric=metric, op="<=", value=value)

    @classmethod
    def at_least(cls, metric: str, value: float) -> Target:
        return cls(metric=metric, op=">=", value=value)

    def met_by(self, metrics: dict[str, float]) -> bool:
        v = metrics.get(self.metric)
        if v is None:
            return False
        return v <= self.value if self.op == "<=" else v >= self.value

    def __str__(self) -> str:
        return f"{self.metric} {self.op} {self.value:g}"


class BenchResult(BaseModel):
    name: str
    metrics: dict[str, float]
    baselines: dict[str, float] = Field(default_factory=dict)
    published: dict[str, float] = Field(default_factory=dict)
    targets: list[Target] = Field(default_factory=list)
    notes: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _can_fail(self) -> BenchResult:
        """A benchmark must be able to fail: a result without a target is refused (a target
        whose metric is absent counts as missed)."""
        if not self.targets:
            raise ValueError(
                f"benchmark {self.name!r} declares no target; a benchmark must be able to fail "
                "(add Target.at_most / Target.at_least on one of its metrics)"
            )
        return self

    @property
    def met(self) -> dict[str, bool]:
        return {str(t): t.met_by(self.metrics) for t in self.targets}

    @property
    def all_met(self) -> bool:
        return all(self.met.values())

    def to_json_dict(self) -> dict[str, Any]:
        out = self.model_dump(mode="json")
        out["targets"] = [str(t) for t in self.targets]
        out["met"] = self.met
        return out

    def table(self) -> str:
        rows = [("metric", "value")]
        rows += [(k, _fmt(v)) for k, v in self.metrics.items()]
        rows += [(f"baseline: {k}", _fmt(v)) for k, v in self.baselines.items()]
        rows += [(f"published: {k}", _fmt(v)) for k, v in self.published.items()]
        rows += [(f"target: {t}", "met" if ok else "MISSED") for t, ok in self.met.items()]
        width = max(len(r[0]) for r in rows)
        lines = [f"== bench {self.name} =="]
        lines += [f"{a.ljust(width)}  {b}" for a, b in rows]
        return "\n".join(lines)


def _fmt(v: float) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def best_of(fn: Callable[[], object], repeat: int) -> float:
    """Best wall time of ``repeat`` runs, with the cyclic GC off while timing (as timeit does)."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        was = gc.isenabled()
        gc.disable()
        try:
            t0 = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t0)
        finally:
            if was:
                gc.enable()
    return best


def wall_and_cpu(fn: Callable[[], object]) -> tuple[float, float]:
    """One run's wall time and this process's CPU time (every thread, user and system),
    the cyclic GC off. The CPU time is what a run costs whether or not the process was
    descheduled meanwhile: on a shared machine it is the steadier of the two."""
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        return time.perf_counter() - t0, time.process_time() - c0
    finally:
        if was:
            gc.enable()
