"""Memory: a graph memory across sessions, in SQLite (the dsh-trivium seed).

    mem = cx.Memory("work/memory.db")      # one file per workspace; many processes at once
    mem.ingest(session)                     # preferences, decisions, entities, experiences
    mem.find("AuthGateway")                 # hybrid retrieval + the seed's graph rules
    mem.read(node_id), mem.map(budget=400)  # full text with edges; the session-start map

Typed nodes (``Node``: entity, preference, decision, experience, verbatim observation) with
their sources, and labelled, weighted edges (``Edge``), kept by a ``MemoryStore``
(``SQLiteStore``: WAL, versioned schema, every write a transaction). Rules read sessions
(``extract``); ``find`` ranks with the base's ``Retriever`` and walks the business edges;
``export_graph`` / ``import_graph`` round-trip exactly; ``to_markdown`` projects it.

Every text that enters a memory passes one door (``_door``): its credentials are redacted
and the rest kept; a text that is nothing but credentials is refused (``MemoryRefused``,
``refuse_secret`` says why). What goes out to a model is neutralized. ``Memory.scrub`` passes
what a file already holds (written before the door, or under older rules) through it again.
"""

from __future__ import annotations

from .._public import publish
from ._episodes import Episode, session_episodes
from ._find import FindResult, MemoryHit
from ._graph import to_networkx
from ._ingest import (
    DEFAULT_CAPS,
    IMPORT_CAPS,
    Caps,
    Extraction,
    extract,
    observations,
    refuse_secret,
)
from ._io import export_graph, import_graph, parse_memory_md, to_markdown
from ._map import MemoryMap
from ._memory import IngestReport, Memory, NodeView, RecallMode, ScrubReport
from ._model import (
    BUSINESS_EDGES,
    EDGE_LABELS,
    EDGE_WEIGHTS,
    NODE_TYPES,
    Candidate,
    Edge,
    Node,
    Source,
    node_uri,
)
from ._sqlite import SCHEMA_VERSION, SQLiteStore
from ._store import MemoryStore

__all__ = [
    "BUSINESS_EDGES",
    "DEFAULT_CAPS",
    "EDGE_LABELS",
    "EDGE_WEIGHTS",
    "IMPORT_CAPS",
    "NODE_TYPES",
    "SCHEMA_VERSION",
    "Candidate",
    "Caps",
    "Edge",
    "Episode",
    "Extraction",
    "FindResult",
    "IngestReport",
    "Memory",
    "MemoryHit",
    "MemoryMap",
    "MemoryStore",
    "Node",
    "NodeView",
    "RecallMode",
    "SQLiteStore",
    "ScrubReport",
    "Source",
    "export_graph",
    "extract",
    "import_graph",
    "node_uri",
    "observations",
    "parse_memory_md",
    "refuse_secret",
    "session_episodes",
    "to_markdown",
    "to_networkx",
]

publish(__name__, globals(), __all__)
