"""Merge: beliefs from N sessions, merged slot by slot (the BeliefMerge seed).

A slot is one semantic key; its ``SlotState`` keeps every ``(value, source, evidence)``
opinion, so merging is a join and the result does not depend on the order branches arrive
in. ``select`` decides a slot by a score (``egalitarian``, ``elitist`` or your own) and
never guesses: a true tie is ``disputed``. ``extract_claims`` reads keyed claims from a
session without a model and ``claims_to_states`` turns them into slot states.
``t1_experiment`` rebuilds the seed's exhaustive
confluence experiment.
"""

from __future__ import annotations

from .._public import publish
from ._claims import (
    CLAIM_KINDS,
    DOMAINS,
    Claim,
    claims_to_states,
    extract_claims,
    normalize_key,
    normalize_value,
)
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
    "CLAIM_KINDS",
    "DOMAINS",
    "MERGED_SOURCE",
    "REPRESENTATIONS",
    "SCORES",
    "T1_REPRESENTATIONS",
    "T1_SPACES",
    "WEIGHTS",
    "Claim",
    "Decision",
    "Evidence",
    "Item",
    "Merged",
    "Representation",
    "Score",
    "SlotState",
    "Support",
    "T1Space",
    "claims_to_states",
    "compare_t1",
    "confluence_violation",
    "decision_key",
    "egalitarian",
    "elitist",
    "extract_claims",
    "is_confluent",
    "merge_incremental",
    "merge_nary",
    "merge_streaming",
    "normalize_key",
    "normalize_value",
    "repr_collapse",
    "repr_count",
    "repr_join",
    "select",
    "t1_experiment",
]

publish(__name__, globals(), __all__)
