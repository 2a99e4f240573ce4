"""Memory: a graph memory across sessions, in SQLite or PostgreSQL (the dsh-trivium seed).

    mem = cx.Memory("work/memory.db")      # one file per workspace; many processes at once
    team = cx.Memory("postgresql://alice@db/mem", namespace="team-a")  # many machines
    mem.ingest(session)                     # preferences, decisions, entities, experiences
    mem.find("AuthGateway")                 # hybrid retrieval + the seed's graph rules
    mem.read(node_id), mem.map(budget=400)  # full text with edges; the session-start map

Typed nodes (``Node``: entity, preference, decision, experience, verbatim observation) with
their sources, and labelled, weighted edges (``Edge``), kept by a ``MemoryStore``
(``SQLiteStore``: WAL, versioned schema, every write a transaction; ``PostgresStore``: the
same in a server database, namespaces kept apart by row-level security). Rules read sessions
(``extract``); ``find`` ranks with the base's ``Retriever`` and walks the business edges;
``export_graph`` / ``import_graph`` round-trip exactly; ``to_markdown`` projects it;
``copy_memory`` (``Memory.copy_to``) copies a memory between stores, row for row.

Every text that enters a memory passes one door (``_door``): its credentials are redacted
and the rest kept; a text that is nothing but credentials is refused (``MemoryRefused``,
``refuse_secret`` says why). What goes out to a model is neutralized. ``Memory.scrub`` passes
what a file already holds (written before the door, or under older rules) through it again.
"""

from __future__ import annotations

from .._public import moved_names, publish
from ._copy import CopyReport, copy_memory
from ._episodes import Episode
from ._find import FindResult, MemoryHit
from ._io import export_graph, import_graph, to_markdown
from ._map import MemoryMap
from ._memory import IngestReport, Memory, ScrubReport
from ._model import Edge, Node, Source
from ._postgres import PostgresStore
from ._sqlite import SQLiteStore
from ._store import MemoryStore

__all__ = [
    "CopyReport",
    "Edge",
    "Episode",
    "FindResult",
    "IngestReport",
    "Memory",
    "MemoryHit",
    "MemoryMap",
    "MemoryStore",
    "Node",
    "PostgresStore",
    "SQLiteStore",
    "ScrubReport",
    "Source",
    "copy_memory",
    "export_graph",
    "import_graph",
    "to_markdown",
]

publish(__name__, globals(), __all__)

# Names this namespace exported before its user face was cut: still importable, with a
# DeprecationWarning that says where they live now (for one release).
__getattr__ = moved_names(
    __name__,
    {
        "BUSINESS_EDGES": "ctxsdk.memory._model",
        "Candidate": "ctxsdk.memory._model",
        "Caps": "ctxsdk.memory._ingest",
        "DEFAULT_CAPS": "ctxsdk.memory._ingest",
        "EDGE_LABELS": "ctxsdk.memory._model",
        "EDGE_WEIGHTS": "ctxsdk.memory._model",
        "Extraction": "ctxsdk.memory._ingest",
        "IMPORT_CAPS": "ctxsdk.memory._ingest",
        "NODE_TYPES": "ctxsdk.memory._model",
        "NodeView": "ctxsdk.memory._memory",
        "RecallMode": "ctxsdk.memory._memory",
        "SCHEMA_VERSION": "ctxsdk.memory._sqlite",
        "extract": "ctxsdk.memory._ingest",
        "node_uri": "ctxsdk.memory._model",
        "observations": "ctxsdk.memory._ingest",
        "parse_memory_md": "ctxsdk.memory._io",
        "refuse_secret": "ctxsdk.memory._ingest",
        "session_episodes": "ctxsdk.memory._episodes",
        "to_networkx": "ctxsdk.memory._graph",
    },
)
