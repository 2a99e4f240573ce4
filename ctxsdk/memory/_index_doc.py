"""What a node is in the search index: the one definition the engine's in-process index
(``Memory._sync``) and a database's index (``_pg_search``) both build from.

An indexed node (active, of a type the search holds) is a document with its index text
(``index_text``), its place among its neighbours (an observation's session and sequence
number, so a conversation's next line lifts it), its section (the turn it belongs to) and
whether it is embedded. ``lexical_row`` is the same document as a database keeps it: its
index terms counted, its length, the kinds of answer text it holds, its section as one key
and the shape that says whether it is boilerplate.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable
from typing import NamedTuple

from ..session.kernel import answer_kinds
from ._find import index_text, template_shape
from ._model import Node

__all__ = [
    "UNINDEXED",
    "IndexDoc",
    "LexicalMatch",
    "LexicalRanking",
    "LexicalRow",
    "index_doc",
    "is_embedded",
    "lexical_row",
]

UNINDEXED = frozenset({"workspace", "episode"})  # types the search index leaves out


def is_embedded(node: Node) -> bool:
    """Whether search embeds ``node``. What ingest read from an agent's log (a session with
    tool output: calls, file contents, diffs, test runs, and the facts read from them) is
    found by its words: embeddings of that record made find worse at every weight tried
    (bench realworld with e5-small: top-5 0.657 hybrid against 0.738 by words alone) and
    cost minutes per session. A conversation and what people remember by hand keep the
    dense channel (LoCoMo)."""
    return not node.extra.get("agent_log")


class IndexDoc(NamedTuple):
    """One document of the search index (``Retriever.add``'s arguments)."""

    text: str
    group: str | None  # neighbours: an observation's session (not an agent log's)
    order: float | None  # its place in the group: the record's sequence number
    section: tuple[str, int] | None  # the turn it belongs to: the rest of it ranks with it
    dense: bool


def index_doc(node: Node) -> IndexDoc | None:
    """``node`` as a document of the index, or None when the search leaves it out
    (archived, or a workspace or episode)."""
    if not node.active or node.type in UNINDEXED:
        return None
    src = node.sources[0] if node.sources else None
    group = src.session if node.type == "observation" and src else None
    order = float(src.seq) if group is not None and src and src.seq is not None else None
    # An utterance's section is its turn: the rest of that exchange ranks with it.
    turn = node.extra.get("turn")
    section = (group, turn) if group is not None and isinstance(turn, int) else None
    return IndexDoc(
        index_text(node),
        # in an agent's log the next record is a call or its output, not an answer:
        # neighbours lift a conversation's turns only (measured, bench realworld)
        None if node.extra.get("agent_log") else group,
        order,
        section,
        is_embedded(node),
    )


class LexicalRow(NamedTuple):
    """An indexed node as a database's lexical index keeps it."""

    id: str
    length: int  # how many index terms
    kinds: int  # answer_kinds of its index text
    group: str | None
    order: float | None
    section: str | None  # the section as one key
    shape: str  # a digest of its template shape ("" for a node that is not an observation)
    terms: dict[str, int]  # index term -> how often


def lexical_row(node: Node, tokenize: Callable[[str], list[str]]) -> LexicalRow | None:
    """``node`` as a row of a database's lexical index (None: not indexed)."""
    doc = index_doc(node)
    if doc is None:
        return None
    terms = Counter(tokenize(doc.text))
    shape = ""
    if node.type == "observation":
        shape = hashlib.blake2b(template_shape(node.text).encode(), digest_size=16).hexdigest()
    return LexicalRow(
        node.id,
        sum(terms.values()),
        answer_kinds(doc.text),
        doc.group,
        doc.order,
        None if doc.section is None else json.dumps(doc.section, ensure_ascii=False),
        shape,
        dict(terms),
    )


class LexicalMatch(NamedTuple):
    """A document of a database's lexical ranking: its score after the neighbour step (BM25
    with the coordination factor and the answer boost, raised by its better neighbour's),
    its section and that section's best score (None without a section)."""

    id: str
    score: float
    section: str | None
    section_best: float | None


class LexicalRanking(NamedTuple):
    """The documents of a query in a database's lexical index, best first by what the
    section step can give them (at most the limit asked), with how many there are
    (``total``), the k-th best score before the section step (``floor``; 0.0 with fewer)
    and the bound of the last one returned (``cut``: no document left out scores above it)."""

    matches: list[LexicalMatch]
    total: int
    floor: float
    cut: float
