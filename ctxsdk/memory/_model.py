"""What a memory holds: typed nodes with their sources, and labelled, weighted edges.

Every stage reads these types: the store persists them, ingestion proposes ``Candidate``s,
``find`` ranks ``Node``s and walks ``Edge``s. Nodes and edges are immutable values; a change
is a new value written by the store in one transaction.

Node types (the dsh-trivium seed's, plus verbatim observations):

- ``workspace``: the one root of a memory;
- ``entity``: a named thing (``AuthGateway``, ``dsh-trivium``), with aliases;
- ``preference``: how the user wants things done ("always run the tests first");
- ``decision``: what was decided, possibly until a deadline (``until`` label, ``until_at``
  instant; a decision past it is *stale*);
- ``experience``: a failure and its fix (``fail`` / ``fix``);
- ``observation``: an utterance or tool output kept word for word, with its source;
- ``episode``: a session-map box (a checkpoint, a fork, a tail); never a search hit.

Edge labels and their weights are the seed's. The *business* edges (about, decided, broke,
fixed) are the ones search expands along: ``in_workspace`` would glue the whole graph.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from ..errors import InvalidArgument
from ..session.kernel import one_line

__all__ = [
    "BUSINESS_EDGES",
    "EDGE_LABELS",
    "EDGE_WEIGHTS",
    "LINE_MAX",
    "NODE_TYPES",
    "Candidate",
    "Edge",
    "EdgeLabel",
    "Node",
    "NodeStatus",
    "NodeType",
    "Source",
    "clip",
    "node_uri",
]

LINE_MAX = 240  # one memory's text, one map or MEMORY.md line


def clip(text: str, limit: int = LINE_MAX) -> str:
    """``text`` on one line of at most ``limit`` chars (an ellipsis marks a cut): the base's
    ``one_line``, a memory's line long by default."""
    return one_line(text, limit)


NodeType = Literal[
    "workspace", "entity", "preference", "decision", "experience", "observation", "episode"
]
NODE_TYPES: tuple[str, ...] = (
    "workspace",
    "entity",
    "preference",
    "decision",
    "experience",
    "observation",
    "episode",
)
NodeStatus = Literal["active", "archived"]

EdgeLabel = Literal[
    "about",
    "decided",
    "broke",
    "fixed",
    "same_as",
    "in_workspace",
    "from_session",
    "continues",
    "forks_from",
    "observed_in",
]
EDGE_WEIGHTS: Mapping[str, float] = MappingProxyType(
    {
        "about": 1.0,
        "decided": 1.0,
        "broke": 0.9,
        "fixed": 0.9,
        "same_as": 0.5,
        "in_workspace": 0.15,
        "from_session": 0.1,
        "continues": 0.4,
        "forks_from": 0.6,
        "observed_in": 0.3,  # an observation and the node it supports
    }
)
EDGE_LABELS: tuple[str, ...] = tuple(EDGE_WEIGHTS)
BUSINESS_EDGES: frozenset[str] = frozenset({"about", "decided", "broke", "fixed"})


def node_uri(node_type: str, key: str) -> str:
    """The stable reference of a node: ``ctx://<type>/<key>`` (the import dedupe key)."""
    return f"ctx://{node_type}/{key}"


@dataclass(frozen=True, slots=True)
class Source:
    """Where a memory came from: the ``session`` and event ``seq`` (None when typed in
    directly), the verbatim ``quote``, and ``via`` (``rule``, ``model``, ``tool``, ``import``,
    ``user``)."""

    session: str | None = None
    seq: int | None = None
    quote: str = ""
    via: str = "user"

    def to_json(self) -> dict[str, Any]:
        return {"session": self.session, "seq": self.seq, "quote": self.quote, "via": self.via}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Source:
        seq = data.get("seq")
        return cls(
            session=data.get("session") if isinstance(data.get("session"), str) else None,
            seq=seq if isinstance(seq, int) and not isinstance(seq, bool) else None,
            quote=str(data.get("quote") or ""),
            via=str(data.get("via") or "user"),
        )


@dataclass(frozen=True, slots=True)
class Node:
    """One memory (see the module docs). ``id`` is the store's; ``uri`` is stable across
    stores (export / import keep it). Times are ISO-8601 UTC strings."""

    id: str
    type: NodeType
    name: str
    text: str = ""
    aliases: tuple[str, ...] = ()
    uri: str = ""
    sources: tuple[Source, ...] = ()
    until: str | None = None
    until_at: str | None = None
    fail: str | None = None
    fix: str | None = None
    status: NodeStatus = "active"
    created_at: str = ""
    updated_at: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)  # e.g. an episode's kind and seq

    @property
    def active(self) -> bool:
        return self.status == "active"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type,
            "name": self.name,
            "text": self.text,
            "aliases": list(self.aliases),
            "uri": self.uri,
            "sources": [s.to_json() for s in self.sources],
            "until": self.until,
            "untilAt": self.until_at,
            "fail": self.fail,
            "fix": self.fix,
            "status": self.status,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "extra": dict(self.extra),
        }


@dataclass(frozen=True, slots=True)
class Edge:
    """A directed, labelled, weighted link ``src -> dst``."""

    src: str
    dst: str
    label: EdgeLabel
    weight: float = 1.0
    created_at: str = ""

    @classmethod
    def weighted(cls, src: str, dst: str, label: str) -> Edge:
        """The edge ``src -label-> dst`` with the label's weight (``EDGE_WEIGHTS``)."""
        known = edge_label(label)
        return cls(src, dst, known, EDGE_WEIGHTS[known])

    def to_json(self) -> dict[str, Any]:
        return {
            "src": self.src,
            "dst": self.dst,
            "label": self.label,
            "weight": self.weight,
            "createdAt": self.created_at,
        }


def edge_label(label: str) -> EdgeLabel:
    """``label`` if it is an edge label, else ``InvalidArgument`` naming the known ones."""
    if label not in EDGE_LABELS:
        raise InvalidArgument(f"unknown edge label {label!r}; known: {', '.join(EDGE_LABELS)}")
    return label  # type: ignore[return-value]


def node_type(type: str) -> NodeType:
    """``type`` if it is a node type, else ``InvalidArgument`` naming the known ones."""
    if type not in NODE_TYPES:
        raise InvalidArgument(f"unknown node type {type!r}; known: {', '.join(NODE_TYPES)}")
    return type  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class Candidate:
    """A memory ingestion proposes, before the filters and the merge: its ``type``,
    ``name`` and ``text``, where it came from, and the names it links to (``links``: label
    -> entity names)."""

    type: NodeType
    name: str
    text: str
    source: Source
    until: str | None = None
    until_at: str | None = None
    fail: str | None = None
    fix: str | None = None
    links: tuple[tuple[str, str], ...] = ()  # (label, entity name)
    extra: Mapping[str, Any] = field(default_factory=dict)  # an observation's turn
