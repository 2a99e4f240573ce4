"""The Fold's current state: a pure, deterministic reducer over the RAW session log.

``reduce_events(events, upto=None, limits=StateLimits())`` reads raw DSH events in seq order
and returns a bounded ``FoldState`` (the Epistemic Fold seed's ``FoldCurrentState``): what the
agent must keep knowing after the history that said it has left the surface. It never reads
narrative, so the state cannot be poisoned by a summary that says "all tests passed":

- ``compaction/summary`` events are ignored, and so is every surface REPLACEMENT event (any
  event whose ``surfaceOp`` is not the string ``"append"``: checkpoints, assembly collapses,
  prunes, system-prompt rewrites). Only append-origin events and log-only events feed state;
  the originals a replacement shadows are still in the log and were reduced when appended.
- The reducer never raises on odd input: an event that is not a mapping, has no string type,
  no integer seq, or repeats a seq is skipped and counted in ``FoldState.skipped``; a bad or
  ungrounded anchor operation is not applied and is recorded in ``FoldState.rejected`` as
  ``(anchor id, why)``.

Where each rule lives (the reducer is one class built in layers, one module each):

- ``_anchors``: the data (``Anchor``, ``StateLimits``, the kinds and authorities);
  ``_fold_state``: ``FoldState`` and how it shows;
- ``_roots``: which events feed state and which authority each grants;
- ``_reducer_base``: the mutable state, declare, supersede and the bounds of every face;
- ``_explicit``: explicit anchor events (``anchor_event``) and the seed StateReducer rules;
- ``_facts``: the fact kernel's facts as anchors (instructions, decisions, settings, project
  facts, the run, open work);
- ``_derived``: the groups derived at the end (findings, files, key names, project rules);
- ``_calls`` and ``_tool_results``: tool calls and results (failures, their verification,
  evidence, artifacts, what a call shows of a file);
- ``_messages``: user, system and assistant messages (objective, requests) and todo lists;
- ``_reduce``: ``reduce_events``, the order and dispatch of events; ``_metrics``: ALR, SSR and
  provenance coverage.
"""

from __future__ import annotations

from ._anchors import (
    ANCHOR_EVENT,
    ANCHOR_KINDS,
    AUTHORITIES,
    FAILURE_STATES,
    RUN_KEY_PREFIX,
    STATEMENT_KEY_PREFIX,
    Anchor,
    StateLimits,
)
from ._explicit import anchor_event
from ._fold_state import FoldState
from ._metrics import StateMetrics, state_metrics
from ._reduce import reduce_events

__all__ = [
    "ANCHOR_EVENT",
    "ANCHOR_KINDS",
    "AUTHORITIES",
    "FAILURE_STATES",
    "RUN_KEY_PREFIX",
    "STATEMENT_KEY_PREFIX",
    "Anchor",
    "FoldState",
    "StateLimits",
    "StateMetrics",
    "anchor_event",
    "reduce_events",
    "state_metrics",
]
