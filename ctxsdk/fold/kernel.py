"""Fold's kernel: the event reducer, anchors and frontier the CLI and benchmarks build on.

``ctxsdk.fold`` is what a user needs; this second face holds the deterministic reducer
(``reduce_events``), anchor events, the prefix split, frontier location and canonical JSON.
"""

from __future__ import annotations

from .._public import publish
from ._bundles import canonical_json
from ._economics import prefix_split
from ._frontier import locate_frontier
from ._policy import POLICIES
from ._recall import MAX_PAGE, resolve_ref
from ._state import anchor_event, reduce_events, state_metrics
from ._tools import RECALL_DESCRIPTION, RecallArgs, context_recall, folded_search
from ._transaction import default_store_root, no_store_reason

__all__ = [
    "MAX_PAGE",
    "POLICIES",
    "RECALL_DESCRIPTION",
    "RecallArgs",
    "anchor_event",
    "canonical_json",
    "context_recall",
    "default_store_root",
    "folded_search",
    "locate_frontier",
    "no_store_reason",
    "prefix_split",
    "reduce_events",
    "resolve_ref",
    "state_metrics",
]

publish(__name__, globals(), __all__)
