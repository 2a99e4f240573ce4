"""Merge: beliefs from N sessions, merged slot by slot (the BeliefMerge seed).

A slot is one semantic key; its ``SlotState`` keeps every ``(value, source, evidence)``
opinion, so merging is a join and the result does not depend on the order branches arrive
in. ``select`` decides a slot by a score (``egalitarian``, ``elitist`` or your own) and
never guesses: a true tie is ``disputed``. ``t1_experiment`` rebuilds the seed's exhaustive
confluence experiment.
"""

from __future__ import annotations

from .._public import publish
from ._confluence import T1_REPRESENTATIONS, T1_SPACES, T1Space, compare_t1, t1_experiment
from ._slots import (
    MERGED_SOURCE,
    REPRESENTATIONS,
    SCORES,
    WEIGHTS,
    Decision,
    Evidence,
    Item,
    Merged,
    Representation,
    Score,
    SlotState,
    Support,
    confluence_violation,
    decision_key,
    egalitarian,
    elitist,
    is_confluent,
    merge_incremental,
    merge_nary,
    merge_streaming,
    repr_collapse,
    repr_count,
    repr_join,
    select,
)

__all__ = [
    "MERGED_SOURCE",
    "REPRESENTATIONS",
    "SCORES",
    "T1_REPRESENTATIONS",
    "T1_SPACES",
    "WEIGHTS",
    "Decision",
    "Evidence",
    "Item",
    "Merged",
    "Representation",
    "Score",
    "SlotState",
    "Support",
    "T1Space",
    "compare_t1",
    "confluence_violation",
    "decision_key",
    "egalitarian",
    "elitist",
    "is_confluent",
    "merge_incremental",
    "merge_nary",
    "merge_streaming",
    "repr_collapse",
    "repr_count",
    "repr_join",
    "select",
    "t1_experiment",
]

publish(__name__, globals(), __all__)
