"""Assembly: per-node context editing (full / key / off) compiled to harness replace ops."""

from __future__ import annotations

from .._public import publish
from ._assembly import Assembly, Preview, Rule
from ._digest import DigestConfig
from ._drafts import DraftStore
from ._fit import FitIndex, FitResult, fit_plan
from ._modes import MODES, Mode
from ._planner import PlanOp, Target, apply_ops, compile_plan, current_modes
from ._tool import DESCRIPTION as ASSEMBLER_TOOL_DESCRIPTION
from ._tool import AssemblerArgs, context_assembler
from ._tree import Row

__all__ = [
    "ASSEMBLER_TOOL_DESCRIPTION",
    "MODES",
    "AssemblerArgs",
    "Assembly",
    "DigestConfig",
    "DraftStore",
    "FitIndex",
    "FitResult",
    "Mode",
    "PlanOp",
    "Preview",
    "Row",
    "Rule",
    "Target",
    "apply_ops",
    "compile_plan",
    "context_assembler",
    "current_modes",
    "fit_plan",
]

publish(__name__, globals(), __all__)
