"""Merge: beliefs from N sessions, merged slot by slot into one budgeted block.

    r = cx.Merge([s1, s2]).budget(400).score("egalitarian").run(query=None)
    r.block.text, r.to_polars(), r.inject(session)
    cx.Merge.compare(["egalitarian", "elitist"], [s1, s2])   # a polars table per slot
    mine = cx.merge.Strategy("mine", resolve=lambda options: ...)  # hooks: score, resolve, extract

The pipeline (``Merge``): each source's surface is read and redacted (``read_branches``), its
claims extracted (``align``: one joint model call when ``llm=`` is given, else or on any failure
the keyed facts of the base's fact kernel, ``extract_claims``), merged per key
(``build_slots``: a ``SlotState`` keeps every ``(value, source, evidence)``, so merging is a join
and the result does not depend on the order branches arrive in; ``select`` never guesses, a
true tie is ``disputed``), true ties resolved by the strategy's hook when it has one (``Strategy``:
hooks for extracting claims, scoring values and resolving ties), the rest adjudicated
(``adjudicate``, model only, asked twice with the options reversed), derivations propagated
(``derive``, a JTMS), trust invariants checked
(``check_trust``; any violation means nothing is injected), and the slots packed into the
budget and rendered (``build_block``: a submodular utility, a knapsack solver, exact tokens,
the banner charged). The seed's exhaustive confluence experiment (T1) is research code, in
``ctxsdk bench merge``.
``MergeSources`` and the ``merge_sessions`` tool choose a session's sources from the
conversation.
"""

from __future__ import annotations

from .._public import moved_names, publish
from ._beliefs import Branch, Derivation, Resolution, Slot, Trust
from ._claims import Claim
from ._merge import Merge, MergeResult
from ._slots import Decision, Evidence, SlotState
from ._sources import MergeSources
from ._strategy import EGALITARIAN, ELITIST, Candidate, Strategy

__all__ = [
    "EGALITARIAN",
    "ELITIST",
    "Branch",
    "Candidate",
    "Claim",
    "Decision",
    "Derivation",
    "Evidence",
    "Merge",
    "MergeResult",
    "MergeSources",
    "Resolution",
    "Slot",
    "SlotState",
    "Strategy",
    "Trust",
]

publish(__name__, globals(), __all__)

# Names this namespace exported before its user face was cut: still importable, with a
# DeprecationWarning that says where they live now (for one release).
__getattr__ = moved_names(
    __name__,
    {
        "ADJUDICATE_INSTRUCTION": "ctxsdk.merge.kernel",
        "ADJUDICATION": "ctxsdk.merge._merge",
        "ALIGN_INSTRUCTION": "ctxsdk.merge._align",
        "Adjudication": "ctxsdk.merge._adjudicate",
        "Alignment": "ctxsdk.merge._align",
        "Block": "ctxsdk.merge._render",
        "BranchMessage": "ctxsdk.merge._beliefs",
        "CLAIM_KINDS": "ctxsdk.merge._claims",
        "Conflict": "ctxsdk.merge._adjudicate",
        "DerivationReport": "ctxsdk.merge._derive",
        "Extract": "ctxsdk.merge._strategy",
        "FactLike": "ctxsdk.merge._claims",
        "HEADER": "ctxsdk.merge.kernel",
        "Item": "ctxsdk.merge._slots",
        "MERGED_SOURCE": "ctxsdk.merge._slots",
        "MERGE_PLUGIN": "ctxsdk.merge._merge",
        "MERGE_SESSIONS_DESCRIPTION": "ctxsdk.merge._tool",
        "MergeSessionsArgs": "ctxsdk.merge._tool",
        "Merged": "ctxsdk.merge._slots",
        "Option": "ctxsdk.merge._adjudicate",
        "Packing": "ctxsdk.merge._pack",
        "REPRESENTATIONS": "ctxsdk.merge._slots",
        "Representation": "ctxsdk.merge._slots",
        "Resolve": "ctxsdk.merge._strategy",
        "Ruling": "ctxsdk.merge._ruling",
        "SCORES": "ctxsdk.merge._slots",
        "SLOT_TYPES": "ctxsdk.merge._beliefs",
        "STATEMENT": "ctxsdk.merge._claims",
        "STRATEGIES": "ctxsdk.merge.kernel",
        "Score": "ctxsdk.merge.kernel",
        "SlotType": "ctxsdk.merge._beliefs",
        "SourceSelection": "ctxsdk.merge._sources",
        "StrategyLike": "ctxsdk.merge.kernel",
        "Support": "ctxsdk.merge._slots",
        "TYPE_STABILITY": "ctxsdk.merge._pack",
        "TYPE_VALUE": "ctxsdk.merge._pack",
        "ValueScore": "ctxsdk.merge._strategy",
        "Violation": "ctxsdk.merge._trust",
        "ViolationKind": "ctxsdk.merge._trust",
        "WEIGHTS": "ctxsdk.merge._slots",
        "adjudicate": "ctxsdk.merge._adjudicate",
        "align": "ctxsdk.merge._align",
        "as_strategy": "ctxsdk.merge.kernel",
        "banner": "ctxsdk.merge.kernel",
        "branch_text": "ctxsdk.merge._align",
        "build_block": "ctxsdk.merge._render",
        "build_slots": "ctxsdk.merge.kernel",
        "by_supports": "ctxsdk.merge._strategy",
        "candidates": "ctxsdk.merge._strategy",
        "check_trust": "ctxsdk.merge.kernel",
        "claims_of_facts": "ctxsdk.merge._claims",
        "claims_to_states": "ctxsdk.merge._claims",
        "comparison_value": "ctxsdk.merge._claims",
        "confluence_violation": "ctxsdk.merge._slots",
        "decision_key": "ctxsdk.merge._slots",
        "derive": "ctxsdk.merge._derive",
        "egalitarian": "ctxsdk.merge.kernel",
        "elitist": "ctxsdk.merge.kernel",
        "extract_claims": "ctxsdk.merge._claims",
        "find_conflicts": "ctxsdk.merge._adjudicate",
        "heuristic_claims": "ctxsdk.merge.kernel",
        "injected_this_turn": "ctxsdk.merge._merge",
        "is_confluent": "ctxsdk.merge._slots",
        "join": "ctxsdk.merge._trust",
        "meet": "ctxsdk.merge._trust",
        "merge_incremental": "ctxsdk.merge._slots",
        "merge_nary": "ctxsdk.merge._slots",
        "merge_sessions": "ctxsdk.merge._tool",
        "merge_streaming": "ctxsdk.merge._slots",
        "pack": "ctxsdk.merge._pack",
        "personal": "ctxsdk.merge._pack",
        "presented_trust": "ctxsdk.merge._trust",
        "preserved_prefix": "ctxsdk.merge._pack",
        "query_terms": "ctxsdk.merge._pack",
        "read_branch": "ctxsdk.merge._branches",
        "read_branches": "ctxsdk.merge._branches",
        "relevance": "ctxsdk.merge._pack",
        "render_slot": "ctxsdk.merge._render",
        "repr_collapse": "ctxsdk.merge._slots",
        "repr_count": "ctxsdk.merge._slots",
        "repr_join": "ctxsdk.merge._slots",
        "resolve_refs": "ctxsdk.merge._sources",
        "routes_of": "ctxsdk.merge._derive",
        "select": "ctxsdk.merge._slots",
        "stability": "ctxsdk.merge._pack",
        "statement_key": "ctxsdk.merge._claims",
        "trust_level": "ctxsdk.merge._branches",
        "trust_of": "ctxsdk.merge._trust",
        "utility": "ctxsdk.merge._pack",
    },
)
