"""Fold: lossless compaction. A span leaves the surface only after its exact messages are
archived in a hash-verified bundle; the checkpoint left in its place carries the current state
the reducer derives from the raw log; everything folded stays searchable and recallable.

``Fold`` is the engine; the policies, the frontier, the state reducer, the bundle store,
search and recall, and the price profiles are its parts.
"""

from __future__ import annotations

from .._public import moved_names, publish
from ._bundles import Bundle, FileBundleStore
from ._economics import PROFILES, EconomicsProfile
from ._fold import Fold, FoldResult, FoldStatus
from ._policy import Decision, FoldPolicy, resolve_policy
from ._recall import Recall, SearchHit, SearchResult
from ._state import FoldState, StateLimits
from ._transaction import FoldRecord

__all__ = [
    "PROFILES",
    "Bundle",
    "Decision",
    "EconomicsProfile",
    "FileBundleStore",
    "Fold",
    "FoldPolicy",
    "FoldRecord",
    "FoldResult",
    "FoldState",
    "FoldStatus",
    "Recall",
    "SearchHit",
    "SearchResult",
    "StateLimits",
    "resolve_policy",
]

publish(__name__, globals(), __all__)

# Names this namespace exported before its user face was cut: still importable, with a
# DeprecationWarning that says where they live now (for one release).
__getattr__ = moved_names(
    __name__,
    {
        "ANCHOR_EVENT": "ctxsdk.fold._state",
        "Anchor": "ctxsdk.fold._state",
        "BUNDLE_FORMAT": "ctxsdk.fold._bundles",
        "BUNDLE_FORMAT_VERSION": "ctxsdk.fold._bundles",
        "BundleReader": "ctxsdk.fold._bundles",
        "BundleRecord": "ctxsdk.fold._bundles",
        "BundleRef": "ctxsdk.fold._bundles",
        "BundleStatus": "ctxsdk.fold._bundles",
        "CheckpointNode": "ctxsdk.fold._frontier",
        "FOLD_RECORD": "ctxsdk.fold._transaction",
        "FRAMING": "ctxsdk.fold._checkpoint",
        "Figure": "ctxsdk.fold._fold",
        "Frontier": "ctxsdk.fold._frontier",
        "MAX_PAGE": "ctxsdk.fold.kernel",
        "POLICIES": "ctxsdk.fold.kernel",
        "PrefixSplit": "ctxsdk.fold._economics",
        "Pressure": "ctxsdk.fold._policy",
        "StateMetrics": "ctxsdk.fold._state",
        "UsageCost": "ctxsdk.fold._economics",
        "anchor_event": "ctxsdk.fold.kernel",
        "canonical_json": "ctxsdk.fold.kernel",
        "locate_frontier": "ctxsdk.fold.kernel",
        "prefix_split": "ctxsdk.fold.kernel",
        "read_records": "ctxsdk.fold._transaction",
        "reduce_events": "ctxsdk.fold.kernel",
        "state_metrics": "ctxsdk.fold._state",
        "usage_cost": "ctxsdk.fold._economics",
    },
)
