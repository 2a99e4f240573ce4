"""Notebook widgets (anywidget) that view what the engines return.

``ContextTree`` shows an Assembly's context tree with a full / key / off switch on every
row; ``CheckpointGraph`` shows a Fold's checkpoints and frontier (or a workspace's sessions,
forks and subagents) as a graph, with recall and "fork from here"; ``BeliefSlots`` shows a
merge's slots with their provenance and the budgeted block; ``MemoryGraph`` shows a
``cx.Memory``'s typed memories and edges, with search, reading and edits. The widgets' front ends
are ES modules and CSS in ``widgets/``, bundled by esbuild at build time into one module and
one stylesheet per widget (``ctxsdk/widgets/_static``, shipped inside the wheel).
"""

from __future__ import annotations

from .._public import publish
from ._belief_slots import BeliefSlots
from ._checkpoint_graph import CheckpointGraph
from ._context_tree import ContextTree
from ._memory_graph import MemoryGraph

__all__ = ["BeliefSlots", "CheckpointGraph", "ContextTree", "MemoryGraph"]

publish(__name__, globals(), __all__)
