"""Fold: lossless compaction. So far its first piece, the bundle store: the exact messages a
fold removes from the surface, archived and hash-verified before they leave it."""

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

__all__ = [
    "BUNDLE_FORMAT",
    "BUNDLE_FORMAT_VERSION",
    "Bundle",
    "BundleReader",
    "BundleRecord",
    "BundleRef",
    "BundleStatus",
    "FileBundleStore",
    "canonical_json",
]

publish(__name__, globals(), __all__)
