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
the banner charged). ``t1_experiment`` rebuilds the seed's exhaustive confluence experiment.
``MergeSources`` and the ``merge_sessions`` tool choose a session's sources from the
conversation.
"""

from __future__ import annotations

from .._public import publish
from ._adjudicate import (
    ADJUDICATE_INSTRUCTION,
    Adjudication,
    Conflict,
    Option,
    adjudicate,
    find_conflicts,
)
from ._align import ALIGN_INSTRUCTION, Alignment, align, branch_text, heuristic_claims
from ._beliefs import (
    SLOT_TYPES,
    Branch,
    BranchMessage,
    Derivation,
    Resolution,
    Slot,
    SlotType,
    Trust,
    build_slots,
)
from ._branches import read_branch, read_branches, trust_level
from ._claims import (
    CLAIM_KINDS,
    STATEMENT,
    Claim,
    FactLike,
    claims_of_facts,
    claims_to_states,
    comparison_value,
    extract_claims,
    statement_key,
)
from ._confluence import T1_REPRESENTATIONS, T1_SPACES, T1Space, compare_t1, t1_experiment
from ._derive import DerivationReport, derive, routes_of
from ._merge import ADJUDICATION, MERGE_PLUGIN, Merge, MergeResult, injected_this_turn
from ._pack import (
    TYPE_STABILITY,
    TYPE_VALUE,
    Packing,
    pack,
    personal,
    preserved_prefix,
    query_terms,
    relevance,
    stability,
    utility,
)
from ._render import HEADER, Block, banner, build_block, render_slot
from ._ruling import Ruling
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
from ._sources import MergeSources, SourceSelection, resolve_refs
from ._strategy import (
    EGALITARIAN,
    ELITIST,
    STRATEGIES,
    Candidate,
    Extract,
    Resolve,
    Strategy,
    StrategyLike,
    ValueScore,
    as_strategy,
    by_supports,
    candidates,
)
from ._tool import MERGE_SESSIONS_DESCRIPTION, MergeSessionsArgs, merge_sessions
from ._trust import Violation, ViolationKind, check_trust, join, meet, presented_trust, trust_of

__all__ = [
    "ADJUDICATE_INSTRUCTION",
    "ADJUDICATION",
    "ALIGN_INSTRUCTION",
    "CLAIM_KINDS",
    "EGALITARIAN",
    "ELITIST",
    "HEADER",
    "MERGED_SOURCE",
    "MERGE_PLUGIN",
    "MERGE_SESSIONS_DESCRIPTION",
    "REPRESENTATIONS",
    "SCORES",
    "SLOT_TYPES",
    "STATEMENT",
    "STRATEGIES",
    "T1_REPRESENTATIONS",
    "T1_SPACES",
    "TYPE_STABILITY",
    "TYPE_VALUE",
    "WEIGHTS",
    "Adjudication",
    "Alignment",
    "Block",
    "Branch",
    "BranchMessage",
    "Candidate",
    "Claim",
    "Conflict",
    "Decision",
    "Derivation",
    "DerivationReport",
    "Evidence",
    "Extract",
    "FactLike",
    "Item",
    "Merge",
    "MergeResult",
    "MergeSessionsArgs",
    "MergeSources",
    "Merged",
    "Option",
    "Packing",
    "Representation",
    "Resolution",
    "Resolve",
    "Ruling",
    "Score",
    "Slot",
    "SlotState",
    "SlotType",
    "SourceSelection",
    "Strategy",
    "StrategyLike",
    "Support",
    "T1Space",
    "Trust",
    "ValueScore",
    "Violation",
    "ViolationKind",
    "adjudicate",
    "align",
    "as_strategy",
    "banner",
    "branch_text",
    "build_block",
    "build_slots",
    "by_supports",
    "candidates",
    "check_trust",
    "claims_of_facts",
    "claims_to_states",
    "compare_t1",
    "comparison_value",
    "confluence_violation",
    "decision_key",
    "derive",
    "egalitarian",
    "elitist",
    "extract_claims",
    "find_conflicts",
    "heuristic_claims",
    "injected_this_turn",
    "is_confluent",
    "join",
    "meet",
    "merge_incremental",
    "merge_nary",
    "merge_sessions",
    "merge_streaming",
    "pack",
    "personal",
    "presented_trust",
    "preserved_prefix",
    "query_terms",
    "read_branch",
    "read_branches",
    "relevance",
    "render_slot",
    "repr_collapse",
    "repr_count",
    "repr_join",
    "resolve_refs",
    "routes_of",
    "select",
    "stability",
    "statement_key",
    "t1_experiment",
    "trust_level",
    "trust_of",
    "utility",
]

publish(__name__, globals(), __all__)
