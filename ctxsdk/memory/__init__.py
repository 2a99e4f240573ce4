"""Memory: a graph memory across sessions, in SQLite (the dsh-trivium seed).

Typed nodes (entities, preferences, decisions, experiences, verbatim observations) with
their sources, and labelled, weighted edges; ``cx.Memory`` remembers, links, finds, reads,
ingests sessions and writes the short session-start map. Under construction: the public
names are added as the pieces land.
"""

from __future__ import annotations

__all__: list[str] = []
