"""``migrate``: a log upgraded edge by edge to the version asked for."""

from __future__ import annotations

from typing import Any

from ...errors import SessionFormatError, UnsupportedVersion
from .._codec import KNOWN_VERSIONS, validate_header
from ._common import check_chain_input, check_dense, deep_copy, envelope_order
from ._v0_to_v1 import v0_to_v1
from ._v1_to_v2 import v1_to_v2
from ._v2_to_v3 import v2_to_v3

LATEST_VERSION = 3
"""The newest format version this SDK reads and writes."""

_EDGES = {0: v0_to_v1, 1: v1_to_v2, 2: v2_to_v3}


def migrate(
    header: dict[str, Any], events: list[dict[str, Any]], to_version: int
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Upgrade a log to ``to_version`` step by step, as the harness's migration packages do.

    Returns a new header and a new event list; the arguments are left untouched. Raises
    ``SessionFormatError`` (with the offending ``seq``) where the harness refuses to migrate.
    """
    version = validate_header(header)
    if type(to_version) is not int or to_version not in KNOWN_VERSIONS:
        raise UnsupportedVersion(
            f"cannot migrate to format version {to_version!r}: ctxsdk knows versions "
            f"{', '.join(map(str, KNOWN_VERSIONS))}"
        )
    if to_version < version:
        raise SessionFormatError(
            f"cannot migrate a v{version} log down to v{to_version}: the harness has no downgrade; "
            f"keep and read the older generation file (session.v{to_version}.jsonl) instead"
        )
    new_header, new_events = deep_copy(header), deep_copy(events)
    check_dense(new_events)
    if version < to_version:
        check_chain_input(new_header, new_events, version)
    while version < to_version:
        new_header, new_events = _EDGES[version](new_header, new_events)
        version += 1
    return new_header, [envelope_order(ev) for ev in new_events]


def upgrade_to_latest(
    header: dict[str, Any], events: list[dict[str, Any]]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``migrate`` to the newest format this SDK knows (v3)."""
    return migrate(header, events, LATEST_VERSION)
