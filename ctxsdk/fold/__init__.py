"""Fold: lossless compaction. A span leaves the surface only after its exact messages are
archived in a hash-verified bundle; the checkpoint left in its place carries the current state
the reducer derives from the raw log; everything folded stays searchable and recallable.

``Fold`` is the engine; the policies, the frontier, the state reducer, the bundle store,
search and recall, and the price profiles are its parts.
"""

from __future__ import annotations

from .._public import publish
from ._bundles import (
    BUNDLE_FORMAT,
    BUNDLE_FORMAT_VERSION,
    Bundle,
    BundleReader,
    BundleRecord,
    BundleRef,
    BundleStatus,
    FileBundleStore,
    canonical_json,
)
from ._checkpoint import FRAMING
from ._economics import PROFILES, EconomicsProfile, PrefixSplit, UsageCost, prefix_split, usage_cost
from ._fold import Figure, Fold, FoldResult, FoldStatus
from ._frontier import CheckpointNode, Frontier, locate_frontier
from ._policy import POLICIES, Decision, FoldPolicy, Pressure, resolve_policy
from ._recall import MAX_PAGE, Recall, SearchHit, SearchResult
from ._state import (
    ANCHOR_EVENT,
    Anchor,
    FoldState,
    StateLimits,
    StateMetrics,
    anchor_event,
    reduce_events,
    state_metrics,
)
from ._transaction import FOLD_RECORD, FoldRecord, read_records

__all__ = [
    "ANCHOR_EVENT",
    "BUNDLE_FORMAT",
    "BUNDLE_FORMAT_VERSION",
    "FOLD_RECORD",
    "FRAMING",
    "MAX_PAGE",
    "POLICIES",
    "PROFILES",
    "Anchor",
    "Bundle",
    "BundleReader",
    "BundleRecord",
    "BundleRef",
    "BundleStatus",
    "CheckpointNode",
    "Decision",
    "EconomicsProfile",
    "Figure",
    "FileBundleStore",
    "Fold",
    "FoldPolicy",
    "FoldRecord",
    "FoldResult",
    "FoldState",
    "FoldStatus",
    "Frontier",
    "PrefixSplit",
    "Pressure",
    "Recall",
    "SearchHit",
    "SearchResult",
    "StateLimits",
    "StateMetrics",
    "UsageCost",
    "anchor_event",
    "canonical_json",
    "locate_frontier",
    "prefix_split",
    "read_records",
    "reduce_events",
    "resolve_policy",
    "state_metrics",
    "usage_cost",
]

publish(__name__, globals(), __all__)
