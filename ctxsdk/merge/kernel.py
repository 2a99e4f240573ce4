"""Merge's kernel: the slot algebra and strategy plumbing, for prototyping and the layers above.

``ctxsdk.merge`` is what a user needs to merge sessions and write a strategy; this second
face holds the pieces the docs teach one at a time (building slots, the built-in scores,
the trust check, the heuristic extractor, the block header) and the strategy registry the
widgets and benchmarks read.
"""

from __future__ import annotations

from .._public import publish
from ._adjudicate import ADJUDICATE_INSTRUCTION
from ._align import heuristic_claims
from ._beliefs import build_slots
from ._branches import SourceLike
from ._merge import decision_text, named_strategies
from ._render import HEADER, banner
from ._slots import (
    SCORES,
    Representation,
    Score,
    decision_key,
    egalitarian,
    elitist,
    repr_collapse,
    repr_count,
    repr_join,
    select,
)
from ._strategy import STRATEGIES, StrategyLike, as_strategy
from ._tool import (
    MERGE_SESSIONS_DESCRIPTION,
    MergeSessionsArgs,
    merge_sessions,
    workspace_candidates,
)
from ._trust import check_trust

__all__ = [
    "ADJUDICATE_INSTRUCTION",
    "HEADER",
    "MERGE_SESSIONS_DESCRIPTION",
    "SCORES",
    "STRATEGIES",
    "MergeSessionsArgs",
    "Representation",
    "Score",
    "SourceLike",
    "StrategyLike",
    "as_strategy",
    "banner",
    "build_slots",
    "check_trust",
    "decision_key",
    "decision_text",
    "egalitarian",
    "elitist",
    "heuristic_claims",
    "merge_sessions",
    "named_strategies",
    "repr_collapse",
    "repr_count",
    "repr_join",
    "select",
    "workspace_candidates",
]

publish(__name__, globals(), __all__)
