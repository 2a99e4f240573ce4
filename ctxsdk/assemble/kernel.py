"""Assembly's kernel: the pieces the model tool, widgets and benchmarks build on.

``ctxsdk.assemble`` is what a user needs; this second face holds the fit index and planner
entry points, plan application and the assembler tool's schema.
"""

from __future__ import annotations

from .._public import publish
from ._fit import FitIndex, fit_plan
from ._planner import apply_ops
from ._rank import Ranker
from ._tool import DESCRIPTION as ASSEMBLER_TOOL_DESCRIPTION
from ._tool import AssemblerArgs

__all__ = [
    "ASSEMBLER_TOOL_DESCRIPTION",
    "AssemblerArgs",
    "FitIndex",
    "Ranker",
    "apply_ops",
    "fit_plan",
]

publish(__name__, globals(), __all__)
