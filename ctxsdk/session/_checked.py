"""A log held in memory, checked as the harness checks a file on load."""

from __future__ import annotations

from typing import Any

from ._codec import refuse_deep_events, validate_header
from ._replay import LogIndex, replay_log

__all__ = ["check_log"]


def check_log(header: dict[str, Any], events: list[dict[str, Any]]) -> tuple[int, LogIndex]:
    """The log's version and its replayed index: the header checked, no event nested too
    deep, every event replayed in order (``SessionFormatError`` names the first bad one).

    ``Session`` runs this on events it did not decode from a file; a writer that builds a
    log (an importer, a fork) runs it before it hands the log on.
    """
    version = validate_header(header)
    refuse_deep_events(events, header=header)
    return version, replay_log(events, version)
