"""Assembly: per-node context editing (full / key / off) compiled to harness replace ops."""

from __future__ import annotations

from .assembly import Assembly, Preview, Rule
from .digest import DigestConfig
from .drafts import DraftStore
from .fit import FitResult
from .modes import Mode
from .planner import PlanOp, Target
from .tree import Row

__all__ = [
    "Assembly",
    "DigestConfig",
    "DraftStore",
    "FitResult",
    "Mode",
    "PlanOp",
    "Preview",
    "Row",
    "Rule",
    "Target",
]
