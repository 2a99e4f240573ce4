"""Assembly: per-node context editing (full / key / off) compiled to harness replace ops."""

from __future__ import annotations

from .._public import moved_names, publish
from ._assembly import Assembly, Preview, Rule
from ._digest import DigestConfig
from ._drafts import DraftStore
from ._fit import FitResult
from ._modes import Mode
from ._planner import PlanOp, Target, compile_plan
from ._tool import context_assembler
from ._tree import Row

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
    "compile_plan",
    "context_assembler",
]

publish(__name__, globals(), __all__)

# Names this namespace exported before its user face was cut: still importable, with a
# DeprecationWarning that says where they live now (for one release).
__getattr__ = moved_names(
    __name__,
    {
        "ASSEMBLER_TOOL_DESCRIPTION": "ctxsdk.assemble.kernel",
        "AssemblerArgs": "ctxsdk.assemble.kernel",
        "FitIndex": "ctxsdk.assemble.kernel",
        "MODES": "ctxsdk.assemble._modes",
        "apply_ops": "ctxsdk.assemble.kernel",
        "current_modes": "ctxsdk.assemble._planner",
        "fit_plan": "ctxsdk.assemble.kernel",
    },
)
