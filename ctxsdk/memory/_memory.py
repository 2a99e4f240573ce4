"""``cx.Memory``: a graph memory across sessions, kept in one SQLite file.

    mem = cx.Memory("work/memory.db")              # created on first use; WAL, many processes
    mem.ingest(session)                             # rule extraction; twice adds nothing
    mem.remember("Always run the tests first.", link_to="pytest")
    mem.find("how do we test?")                     # hits with their edge paths
    mem.read(hit.node.id)                           # full text, sources, edges in and out
    mem.map(budget=400)                             # the short session-start map

Every text that enters goes through one door first (``_door``): its credentials are
redacted (``[REDACTED:<kind>]``) and the rest is kept, or, when nothing but credentials is
left, it is refused with ``MemoryRefused`` naming their kinds. Every text handed to a model
(``map``, ``context``) is neutralized (``ctxsdk.session.kernel.neutralize``). Every write goes
through the store in one transaction. The search index is the base's
``Retriever`` over the active nodes, kept in step with the store by its revision number, so
a write by another process is seen at the next call.
"""

from __future__ import annotations

import hashlib
import os
import threading
import uuid
import warnings
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext, suppress
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .._display import Rendered, badge, esc, kv, plural, table
from .._gc import gc_paused
from .._progress import Progress
from ..errors import (
    DegradedSearchWarning,
    InvalidArgument,
    LockHeld,
    MemoryRefused,
    NotFound,
    WriteError,
)
from ..model import ModelProtocol
from ..session import Embedder, Retriever, Session, get_embedder, get_tokenizer
from ..session.kernel import clean_text, neutralize, redaction_memo, short_id, widget
from ._copy import CopyReport, copy_memory
from ._db_search import DatabaseSearch, IndexedStore, StoreNodes
from ._door import (
    admit,
    admit_candidate,
    admit_json,
    admit_node,
    admit_source,
    screen,
    session_key,
)
from ._episodes import boxes, write_episodes
from ._facts_in import session_words
from ._find import (
    FindResult,
    MemoryHit,
    Templates,
    edge_path,
    find_nodes,
    is_stale,
    said_text,
    shape_digest,
)
from ._index_doc import UNINDEXED, index_doc, is_embedded
from ._ingest import (
    MergeIndex,
    extract,
    is_agent_log,
    merge_target,
    merged,
    observations,
    still_matches,
    told_by,
)
from ._io import export_graph, import_graph, parse_memory_md, to_markdown
from ._lazy_nodes import LazyNodes
from ._map import MemoryMap, build_map, pinned_block
from ._model import BUSINESS_EDGES, Candidate, Edge, Node, Source, clip, edge_label, node_type
from ._open import open_store
from ._propose import Proposal, propose
from ._saved_index import anchors_of, pack, shapes_of, sidecar
from ._saved_index import read as read_saved
from ._saved_index import remove as remove_saved
from ._saved_index import write as write_saved
from ._scrub import RULES_KEY, ScrubReport, record_rules, recorded_rules, scrub_store, warn_if_stale
from ._store import Changes, MaintainedStore, MemoryStore, link_all, nodes_at, put_all

if TYPE_CHECKING:
    import networkx as nx  # type: ignore[import-untyped]
    import polars as pl

__all__ = ["IngestReport", "Memory", "NodeView", "RecallMode", "ScrubReport"]

RecallMode = Literal["off", "anchor", "auto"]
MEMORY_PLUGIN = "ctxsdk-memory"  # the source plugin of an injected map or recall block
_SETTINGS = {"recall": "off", "map_budget": 400, "top_k": 10, "expand": 1}
EMBEDDER_ENV = "CTXSDK_EMBEDDER"  # none | auto | an embedder's name: the default's override
_AUTO_EMBEDDERS = ("e5-small",)  # the local embedders "auto" takes, best first
_OFF = frozenset({"", "none", "off", "lexical", "0", "false", "no"})
_EMBED_BATCH = 256  # texts per embedding call (and per transaction when filled at search)


def default_embedder() -> Embedder | None:
    """The embedder ``Memory(path)`` uses when none is given: ``$CTXSDK_EMBEDDER`` when set
    (``none`` for lexical search, ``auto``, or an embedder's name), else ``auto``: the best
    installed local embedder (``e5-small``, from the ``embed`` extra) or none."""
    choice = os.environ.get(EMBEDDER_ENV, "auto").strip().lower()
    if choice in _OFF:
        return None
    if choice != "auto":
        return get_embedder(choice)  # UnknownName for a name no embedder has
    for name in _AUTO_EMBEDDERS:
        emb = get_embedder(name)
        installed = getattr(emb, "installed", None)
        if installed is None or installed():
            return emb
    return None


def _resolve_embedder(embedder: Embedder | str | None) -> Embedder | None:
    if isinstance(embedder, str):
        return default_embedder() if embedder == "auto" else get_embedder(embedder)
    return embedder


def vector_model(embedder: Embedder) -> str:
    """The key stored vectors are kept under: the embedder's name, dimension and version
    (a vector made by another model, or another version of it, is never reused)."""
    version = getattr(embedder, "version", "")
    return f"{embedder.name}/{embedder.dim}" + (f"/{version}" if version else "")


def _text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:32]


# What ingest derives from a session, versioned: a session ingested by older rules is read
# again once, though unchanged (2: observations carry their turn, the section retrieval uses;
# 3: observations of the whole log, kept by default; 4: entities scoped to their project,
# each node with where it came from, an agent's log marked; 5: a session's asks, plan and
# files as one line each, unkeyed project facts kept, findings limited per message).
_INGEST_RULES = 5
# new nodes a loaded index caught up with from which it is saved again (or a tenth of it)
_RESAVE = 1000
_SPOT = 16  # nodes of a saved index compared with the store before it is used
_ADMIT_MEMO_SIZE = 512  # texts the door's memo of ``remember`` keeps (cleared when full)
_ADMIT_MEMO_CHARS = 256  # the longest text it keeps (longer texts seldom repeat)


# nodes a write checked against the store before its lock (``Memory._read_ahead``)
_Checked = Mapping[str, tuple[Node, Node]] | None


def _is_anchor(node: Node) -> bool:
    """Whether ``find`` looks at ``node`` whatever the query's words: an entity (its name
    may be mentioned) or a decision with a deadline (the query may ask about it)."""
    return node.type == "entity" or bool(node.until)


def _matches(
    retriever: Retriever,
    nodes: LazyNodes,
    shapes: Mapping[str, bytes],
    anchors: set[str],
    *,
    skip: Collection[str] = frozenset(),
) -> bool:
    """Whether a loaded index is this memory's and today's rules': ``_SPOT`` of its
    nodes, spread over it, read from the store and made into documents again give the
    saved text, neighbour group, section, length in terms, template shape and anchor
    (``skip``: nodes written since, which the catch-up indexes again)."""
    ids = list(nodes)
    slots = [s for s, nid in enumerate(ids) if nid not in skip] if skip else range(len(ids))
    if not slots:
        return True
    picks = [slots[i * (len(slots) - 1) // max(_SPOT - 1, 1)] for i in range(_SPOT)]
    picks = sorted(set(picks))
    nodes.prefetch(ids[s] for s in picks)
    for s in picks:
        node = nodes.get(ids[s])
        doc = None if node is None else index_doc(node)
        if node is None or doc is None or not retriever.same_doc(s, *doc):
            return False
        shape = shape_digest(node.text) if node.type == "observation" else None
        if shapes.get(node.id) != shape or (node.id in anchors) != _is_anchor(node):
            return False
    return True


def _edited(node: Node) -> str:
    """When ``node`` was last edited and how many times ("" when never)."""
    e = node.extra.get("edited")
    if not isinstance(e, Mapping):
        return ""
    times = e.get("times")
    return f"{e.get('at', '?')}" + (
        f" ({times} times)" if isinstance(times, int) and times > 1 else ""
    )


@dataclass(frozen=True)
class NodeView(Rendered):
    """One node read in full: the node, and its edges in and out with the nodes at their
    other ends."""

    node: Node
    incoming: tuple[tuple[Edge, Node], ...]
    outgoing: tuple[tuple[Edge, Node], ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node.to_json(),
            "incoming": [{**e.to_json(), "name": n.name, "type": n.type} for e, n in self.incoming],
            "outgoing": [{**e.to_json(), "name": n.name, "type": n.type} for e, n in self.outgoing],
        }

    def __repr__(self) -> str:
        return f"NodeView({self.node.id} {self.node.type} {self.node.name!r})"

    def _text_(self) -> str:
        n = self.node
        lines = [f"{n.id} {n.type} {n.name!r} [{n.status}] {n.uri}"]
        if n.text and n.text != n.name:
            lines.append(f"  {n.text}")
        for label, value in (
            ("aliases", ", ".join(n.aliases)),
            ("until", n.until),
            ("fail", n.fail),
            ("fix", n.fix),
        ):
            if value:
                lines.append(f"  {label}: {value}")
        edited = _edited(n)
        if edited:
            lines.append(f"  edited: {edited}")
        for s in n.sources:
            where = f"{short_id(s.session)}#{s.seq}" if s.session else "typed in"
            lines.append(f"  source ({s.via}) {where}: {s.quote[:120]}")
        for e, other in self.incoming:
            lines.append(f"  <-{e.label}- {other.id} {other.type} {other.name[:60]!r}")
        for e, other in self.outgoing:
            lines.append(f"  -{e.label}-> {other.id} {other.type} {other.name[:60]!r}")
        return "\n".join(lines)

    def _html_(self) -> str:
        n = self.node
        pairs: list[tuple[str, object]] = [("type", n.type), ("status", n.status), ("uri", n.uri)]
        pairs += [
            (k, v)
            for k, v in (
                ("aliases", ", ".join(n.aliases)),
                ("until", n.until),
                ("fail", n.fail),
                ("fix", n.fix),
                ("edited", _edited(n)),
            )
            if v
        ]
        rows = [
            (s.via, f"{short_id(s.session)}#{s.seq}" if s.session else "typed in", esc(s.quote))
            for s in n.sources
        ]
        edges = [(f"&larr; {esc(e.label)}", esc(o.id), esc(o.name)) for e, o in self.incoming]
        edges += [(f"{esc(e.label)} &rarr;", esc(o.id), esc(o.name)) for e, o in self.outgoing]
        return (
            f"<div class='cx-title'>{esc(n.name)} {badge(n.type)}</div>"
            + (f"<div>{esc(n.text)}</div>" if n.text and n.text != n.name else "")
            + kv(pairs)
            + (table(["via", "where", "quote"], rows, raw=(2,)) if rows else "")
            + (table(["edge", "node", "name"], edges, raw=(0, 1, 2)) if edges else "")
        )


@dataclass(frozen=True)
class IngestReport(Rendered):
    """What one ``ingest`` wrote: nodes added and merged, edges added, what was dropped."""

    session: str
    added: tuple[str, ...]
    merged: tuple[str, ...]
    edges: int
    dropped: tuple[tuple[str, str], ...]
    skipped: bool = False
    model: Proposal | None = None  # the optional model pass: what it kept, refused, or why not
    episodes: tuple[str, ...] = ()  # the session map's boxes, in order (``Memory.episodes``)

    def __repr__(self) -> str:
        return (
            f"IngestReport({self.session[:8]}: {len(self.added)} added, "
            f"{len(self.merged)} merged, {self.edges} edges)"
        )

    def _text_(self) -> str:
        if self.skipped:
            return f"ingest {self.session}: already ingested, nothing added"
        lines = [
            f"ingest {self.session}: {plural(len(self.added), 'node')} added, "
            f"{len(self.merged)} merged, {plural(self.edges, 'edge')} added, "
            f"{len(self.dropped)} dropped"
        ]
        whys: dict[str, int] = {}
        for _, why in self.dropped:
            whys[why] = whys.get(why, 0) + 1
        if whys:
            lines.append("  dropped: " + ", ".join(f"{n} {w}" for w, n in sorted(whys.items())))
        if self.model is not None:
            m = self.model
            if m.reason:
                lines.append(f"  model: not used ({m.reason})")
            else:
                lines.append(
                    f"  model: {len(m.candidates)} proposals kept, {len(m.dropped)} refused"
                )
        return "\n".join(lines)

    def _html_(self) -> str:
        return f"<div class='cx-title'>{esc(self._text_().splitlines()[0])}</div>"


def _through_door(
    cands: Sequence[Candidate],
) -> tuple[list[Candidate], list[tuple[str, str]]]:
    """The candidates the memory's door admits (redacted), and a ``(text, "secret")`` drop
    for each one it refuses (nothing but credentials): extraction drops, never raises."""
    kept: list[Candidate] = []
    dropped: list[tuple[str, str]] = []
    for cand in cands:
        try:
            kept.append(admit_candidate(cand))
        except MemoryRefused:
            dropped.append((clip(screen(cand.text).text), "secret"))
    return kept, dropped


def _setting_ok(key: str, value: Any) -> bool:
    """Whether ``configure`` takes ``value`` for the setting ``key``."""
    if key == "recall":
        return value in ("off", "anchor", "auto")
    ok = key in _SETTINGS and isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return ok and (key != "top_k" or 1 <= value <= 100)


def _now_iso(now: datetime) -> str:
    return now.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _told_through_door(
    cands: Sequence[Candidate], told: Mapping[str, Any]
) -> tuple[list[Candidate], list[tuple[str, str]]]:
    """``_through_door`` of ``cands`` with ``told`` (the session's words, whether it is an
    agent's log) in each one's ``extra``. ``told`` is the same for every candidate, so it
    passes the door once, and each candidate's own fields once: what the door makes of
    each candidate whole (``admit_json`` admits every key and value alone). A ``told`` the
    door refuses (nothing but credentials) goes with each candidate, refusing each."""
    if told:
        try:
            told = admit_json(dict(told), "extra")
        except MemoryRefused:
            return _through_door([replace(c, extra={**c.extra, **told}) for c in cands])
    kept, refused = _through_door(cands)
    return [replace(c, extra={**c.extra, **told}) if told else c for c in kept], refused


def _observation_uri(cand: Candidate) -> str:
    """An observation's uri: one node per (seq, text). A fork's inherited copy of a message
    (same seq, same words, another session) joins the parent's node as a second source."""
    key = hashlib.sha256(f"{cand.source.seq}#{cand.text}".encode()).hexdigest()[:16]
    return f"ctx://observation/{key}"


def _observed(old: Node, cand: Candidate) -> Node:
    """The observation ``old`` with ``cand`` (same uri) joined: its source appended, or,
    ingested before by older rules, what they did not record (the turn) added; ``old``
    itself when nothing changes."""
    s = cand.source
    if s in old.sources:
        extra = {**cand.extra, **old.extra}
        return old if extra == old.extra else replace(old, extra=extra)
    extra = {**old.extra, **told_by(old.extra, cand.extra)}
    return replace(old, sources=(*old.sources, s), extra=extra)


class Memory:
    """A graph memory in one SQLite file, or in a team's PostgreSQL database (see the
    module docs).

    ``path``: the database file (created with its directory); a ``postgresql://`` URL opens
    ``namespace`` (default ``"default"``) of a PostgreSQL database (``PostgresStore``;
    needs the ``postgres`` extra); a ``MemoryStore`` is used as it is; ``None`` is a
    private in-memory database. ``embedder``: dense embeddings for
    search, ``"auto"`` by default: the best installed local embedder (``e5-small`` with the
    ``embed`` extra) or none, unless ``$CTXSDK_EMBEDDER`` says otherwise (``none``, or a
    name); ``None`` searches lexically; an ``Embedder`` object or a name is used as given.
    Each node's vector is stored in the memory file with the hash of its text, written with
    the node and reused by every process; a node without one is embedded at the next
    search. ``clock``: what "now" is, for stale decisions (default: the wall clock).
    ``timeout``: how long a write waits for another writer (then ``LockHeld``), and, for a
    server, for a connection (then ``StoreUnavailable``). ``search``: where ``find`` ranks:
    ``"engine"`` in this process over every node it reads, ``"database"`` in a store that
    keeps its own index (PostgreSQL: the same lexical ranking, without reading the whole
    namespace; ``_db_search``); ``"auto"`` (default) is the database's when the store has an
    index and the search is lexical (no embedder), else the engine's.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | MemoryStore | None = None,
        *,
        workspace: str = "workspace",
        embedder: Embedder | str | None = "auto",
        clock: Any = None,
        namespace: str | None = None,
        timeout: float = 30.0,
        search: Literal["auto", "engine", "database"] = "auto",
    ) -> None:
        if search not in ("auto", "engine", "database"):
            raise InvalidArgument(f"search is 'auto', 'engine' or 'database', not {search!r}")
        self.store = open_store(path, namespace=namespace, timeout=timeout)
        self._clock = clock
        embedder = _resolve_embedder(embedder)
        self._embedder = embedder
        self._model = vector_model(embedder) if embedder is not None else ""
        self._revision = -1
        # every node once read; after a saved index was loaded, read as search asks
        self._nodes: dict[str, Node] | LazyNodes = {}
        self._anchors: list[Node] = []
        self._anchor_ids: set[str] = set()
        self._boilerplate: frozenset[str] = frozenset()
        self._templates = Templates()  # what _boilerplate is computed from
        self._edges: dict[str, tuple[list[Edge], list[Edge]]] = {}  # find's, per revision
        # No feedback words: a first round's best matches in a memory are often long tool
        # outputs or another topic's turns, and the words they add pulled answers out of the
        # top k on both LoCoMo (R@5 63.8 -> 65.2 without) and real sessions (bench realworld).
        self._retriever = Retriever(embedder=embedder, feedback=0)
        self._db: DatabaseSearch | None = None
        refused = ""
        if search != "engine" and isinstance(self.store, IndexedStore):
            if embedder is None:
                self._db = DatabaseSearch(self.store, self._retriever)
            elif search == "database":
                refused = (
                    "search='database' ranks lexically: open the memory with embedder=None "
                    "(with an embedder the engine ranks, scoring the stored vectors here)"
                )
        elif search == "database":
            refused = f"{self.store.location}: this store keeps no search index of its own"
        if refused:
            if not isinstance(path, MemoryStore):  # opened here: closed here
                self.store.close()
            raise InvalidArgument(refused)
        self._db_revision = -1
        self._db_anchors: list[Node] = []
        self._warned_degraded = False
        self.root = self._root(workspace)
        warn_if_stale(self.store, stacklevel=2)  # once per open: scrub() is the remedy

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str] | MemoryStore | None = None,
        *,
        workspace: str = "workspace",
        embedder: Embedder | str | None = "auto",
        clock: Any = None,
        namespace: str | None = None,
        timeout: float = 30.0,
        search: Literal["auto", "engine", "database"] = "auto",
    ) -> Memory:
        """``Memory.open(path)``: the same as ``Memory(path, ...)`` (the documented call)."""
        return cls(
            path,
            workspace=workspace,
            embedder=embedder,
            clock=clock,
            namespace=namespace,
            search=search,
            timeout=timeout,
        )

    # -- plumbing -----------------------------------------------------------------------------
    def now(self) -> datetime:
        clock = self._clock
        value = clock() if callable(clock) else clock
        return value if isinstance(value, datetime) else datetime.now(UTC)

    def _root(self, name: str) -> Node:
        roots = self.store.nodes(types=["workspace"])
        if roots:
            return roots[0]
        with self.store.batch():
            roots = self.store.nodes(types=["workspace"])  # another process may have won
            if roots:
                return roots[0]
            # Archived by hand, or a damaged row (the store names it): never a second root.
            held = self.store.by_uri("ctx://workspace")
            if held is not None:
                return held
            # A new file: every text it will hold enters through today's door. (Nodes put
            # without a root came straight through the store, past the door: not recorded.)
            if not any(self.store.count(include_archived=True).values()):
                record_rules(self.store)
            return self.store.put(Node(id="", type="workspace", name=name, uri="ctx://workspace"))

    def _sync(self) -> None:
        """Bring the node cache and the search index in step with the store: the nodes
        written and deleted since the last sync (``store.changes``), or every node when
        the store cannot say or nothing was read yet."""
        rev = self.store.revision()
        if rev == self._revision:
            return
        first = self._revision < 0
        if first and isinstance(self._nodes, LazyNodes):  # after a scrub: built afresh
            self._fresh_index()
        # the first read, every node: the garbage collector paused (not while nodes are
        # embedded: a model's or an endpoint's objects)
        quiet = gc_paused if first else nullcontext
        loaded: Changes | None = None  # what changed since a loaded index's revision
        changed: list[Node] = []
        # what scrub rewrites: read before the nodes, stamped on a saved index (_save_index)
        redaction = self.store.get_meta(RULES_KEY) if first else None
        if first and not self._nodes and self._embedder is None:
            with quiet():
                loaded = self._load_index(rev, redaction)  # caught up below, as a sync would
        if rev != self._revision:
            with quiet():
                changed, anchors_moved = self._read_changes(loaded)
            vectors = (
                {}
                if self._embedder is None
                else self._vectors([n for n in changed if is_embedded(n)])
            )
            with quiet():
                self._index(changed, vectors, anchors_moved)
        self._edges.clear()  # read again as find needs them, while this revision stands
        self._revision = rev
        if first and self._embedder is None and (loaded is None or len(changed) >= _RESAVE):
            self._save_index(rev, redaction)  # a full read, or a catch-up worth saving

    def _fresh_index(self) -> None:
        """An empty cache and index (the next sync reads every node)."""
        self._retriever = Retriever(embedder=self._embedder, feedback=0)
        self._templates = Templates()
        self._nodes, self._anchors, self._anchor_ids = {}, [], set()
        self._boilerplate = frozenset()

    def _save_index(self, rev: int, redaction: Any) -> None:
        """Write the index just read whole beside the memory file (``_saved_index``), for
        the next process's first ``find``; skipped where there is no file or the index
        cannot be saved, and a failed write loses nothing. ``redaction`` is the memory's
        redaction record as it was before the read: a scrub in another process since
        then (it records its rules) means the index holds texts the scrub took out, so
        the file is removed again (scrub removes it after it records them: in either
        order, no index of the old texts is left)."""
        path = sidecar(self.store)
        if path is None or list(self._nodes) != self._retriever.ids:
            return
        nodes = self._nodes
        uris = nodes.uris() if isinstance(nodes, LazyNodes) else [n.uri for n in nodes.values()]
        shapes = self._templates.shapes()
        got = pack(rev, self._retriever, uris, shapes, self._anchor_ids, redaction)
        if got is None or not write_saved(path, *got, like=Path(self.store.location)):
            return
        if self.store.get_meta(RULES_KEY) != redaction:
            with suppress(OSError):
                path.unlink(missing_ok=True)

    def _load_index(self, rev: int, redaction: Any) -> Changes | None:
        """Load the saved index (``_saved_index``) as the state of its revision ``r0``: what
        changed since ``r0`` when it was loaded (``_revision`` is then ``r0``: the sync
        catches it up with those changes, not read twice), None (and nothing changed) when
        there is none, or it is not this memory's, or the store cannot say what changed
        since ``r0``, or so much did that a full read is cheaper."""
        path = sidecar(self.store)
        saved = None if path is None else read_saved(path)
        if saved is None:
            return None
        try:
            r0 = int(saved.header["revision"])
            ids = saved.strings["ids"]
            uris = saved.strings["uris"]
        except (KeyError, TypeError, ValueError):
            return None
        if r0 > rev or len(uris) != len(ids) or saved.header.get("redaction") != redaction:
            return None  # newer than the store, torn, or read before a scrub
        delta = self.store.changes(r0) if r0 < rev else Changes([], [])
        if delta is None or len(delta.nodes) + len(delta.gone) > max(_RESAVE, len(ids) // 10):
            return None
        # the count the catch-up will leave, against the store's
        have = set(ids)
        after = len(ids) - sum(1 for nid in delta.gone if nid in have)
        for node in delta.nodes:
            after += (index_doc(node) is not None) - (node.id in have)
        if after != sum(n for t, n in self.store.count().items() if t not in UNINDEXED):
            return None
        retriever = Retriever(embedder=None, feedback=0)
        try:
            retriever.load_lexical_state(saved.arrays, saved.strings)
            shapes = shapes_of(saved)
            anchors = anchors_of(saved)
        except (InvalidArgument, KeyError, IndexError, ValueError, TypeError):
            return None
        nodes = LazyNodes(self.store, ids, uris)
        written = {n.id for n in delta.nodes}
        if not _matches(retriever, nodes, shapes, anchors, skip=written):
            return None
        self._retriever, self._nodes, self._anchor_ids = retriever, nodes, anchors
        self._templates = Templates()
        self._templates.restore(shapes)
        self._anchors = self._anchor_nodes()
        self._boilerplate = self._templates.ids()
        self._revision = r0
        return delta

    def _anchor_nodes(self) -> list[Node]:
        """The anchors, in the cache's order (by id)."""
        nodes = self._nodes
        if isinstance(nodes, LazyNodes):
            nodes.prefetch(self._anchor_ids)
            return [n for i in sorted(self._anchor_ids) if (n := nodes.get(i)) is not None]
        return [n for n in nodes.values() if _is_anchor(n)]

    def _read_changes(self, delta: Changes | None = None) -> tuple[list[Node], bool]:
        """``_sync``'s read: the nodes gone since the last sync taken out of the cache and
        the index; returns the nodes to index (new or changed) and whether an anchor went.
        ``delta``: what changed since the last sync, when it was read already."""
        if delta is None and self._revision >= 0:
            delta = self.store.changes(self._revision)
        if delta is None:
            fresh = {n.id: n for n in self.store.nodes() if n.type not in UNINDEXED}
            gone = [nid for nid in self._nodes if nid not in fresh]
            written = list(fresh.values())
        else:
            gone = list(delta.gone)
            written = []
            for node in delta.nodes:
                if index_doc(node) is not None:
                    written.append(node)
                else:  # archived now (or never indexed): out of the index
                    gone.append(node.id)
        anchors_moved = False  # an anchor came, went or changed: the list is made again
        nodes = self._nodes
        for nid in gone:
            if nid in nodes:
                del nodes[nid]
                self._retriever.remove(nid)
                self._templates.remove(nid)
                anchors_moved = anchors_moved or nid in self._anchor_ids
                self._anchor_ids.discard(nid)
        # a node not read yet (a loaded index's) is indexed again: its old form is unknown
        peek = nodes.peek if isinstance(nodes, LazyNodes) else nodes.get
        return [n for n in written if peek(n.id) != n], anchors_moved

    def _index(self, changed: list[Node], vectors: Mapping[str, Any], anchors_moved: bool) -> None:
        """``_sync``'s indexing: ``changed`` into the cache and the index (``vectors``: the
        embeddings of those embedded, by id), the anchors and the boilerplate made again."""
        new_ids = [n.id for n in changed if n.id not in self._nodes]
        tail = next(reversed(self._nodes), "")
        docs = []
        for node in changed:
            doc = index_doc(node)
            assert doc is not None  # an active node of an indexed type
            docs.append(
                (
                    node.id,
                    doc.text,
                    doc.group,
                    doc.order,
                    doc.section,
                    vectors.get(node.id),
                    doc.dense,
                )
            )
        self._retriever.add_many(docs)  # a first read's every node in one pass
        anchor_ids = self._anchor_ids
        for node in changed:
            if _is_anchor(node):
                anchors_moved = True
                anchor_ids.add(node.id)
            elif node.id in anchor_ids:
                anchors_moved = True
                anchor_ids.discard(node.id)
            self._nodes[node.id] = node
            self._templates.add(node)
        # in the store's order (by id), as a full read gives them: new ids (in id order)
        # past the last one are in place already (generated ids grow)
        if new_ids and min(new_ids) < tail:
            if isinstance(self._nodes, LazyNodes):
                self._nodes.sort()
            else:
                self._nodes = dict(sorted(self._nodes.items()))
        if anchors_moved:
            self._anchors = self._anchor_nodes()
        self._boilerplate = self._templates.ids()

    # -- stored embeddings -------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder | None:
        """The embedder search uses (None: lexical only)."""
        return self._embedder

    def _vectors(
        self,
        nodes: Sequence[Node],
        *,
        ready: Mapping[str, Any] | None = None,
        unstored: frozenset[str] = frozenset(),
    ) -> dict[str, Any]:
        """The vectors of ``nodes`` for the memory's embedder: the stored ones whose text
        hash still matches, those embedded ahead (``ready``, by text hash: a write embeds
        before it takes the write lock, ``_embed_ahead``), and the rest embedded now in
        batches, each batch stored at once (its own transaction, or the caller's batch), so
        an interrupted fill keeps what it did and another process never embeds it again.
        ``unstored``: ids known to have no stored vector (nodes this write made), not
        looked up. When the embedder fails, the nodes left get none here: the retriever
        tries again at the search, which answers lexically if it fails there too
        (``degraded_reason``)."""
        emb = self._embedder
        if emb is None or not nodes:
            return {}
        import numpy as np  # the embedders' own dependency: present whenever one is set

        dim = emb.dim
        # a node's own words are embedded (the kind words of ``index_text`` are for BM25)
        want = {n.id: _text_hash(said_text(n)) for n in nodes}
        asked = {k: v for k, v in want.items() if k not in unstored}
        stored = (
            self.store.vectors(self._model, None if len(asked) > 2000 else asked) if asked else {}
        )
        out: dict[str, Any] = {}
        todo: list[Node] = []
        early: list[tuple[str, str, bytes]] = []
        for n in nodes:
            got = stored.get(n.id)
            if got is not None and got[0] == want[n.id] and len(got[1]) == 4 * dim:
                out[n.id] = np.frombuffer(got[1], dtype="<f4")
            elif ready is not None and want[n.id] in ready:
                out[n.id] = ready[want[n.id]]
                early.append((n.id, want[n.id], out[n.id].tobytes()))
            else:
                todo.append(n)
        persist = True
        if early:
            try:
                self.store.put_vectors(self._model, early)
            except (LockHeld, WriteError):
                persist = False  # used in this process; stored by a later search
        for at in range(0, len(todo), _EMBED_BATCH):
            chunk = todo[at : at + _EMBED_BATCH]
            try:
                vecs = np.asarray(emb.embed([said_text(n) for n in chunk]), dtype="<f4")
            except Exception:  # the search degrades (and says why); nothing stored
                break
            if vecs.shape != (len(chunk), dim):
                break  # the retriever reports the wrong shape at the search
            rows = [(n.id, want[n.id], v.tobytes()) for n, v in zip(chunk, vecs, strict=True)]
            for n, v in zip(chunk, vecs, strict=True):
                out[n.id] = v
            if persist:
                try:
                    self.store.put_vectors(self._model, rows)
                except (LockHeld, WriteError):
                    persist = False  # used in this process; stored by a later search
        return out

    def _embed_ahead(self, cands: Sequence[Candidate]) -> dict[str, Any]:
        """The vectors of the nodes ``cands`` would make, by text hash, embedded in batches
        before a write takes the lock (the lock is held for the writes alone; a candidate
        merged into another text is embedded inside, by ``_vectors``). Empty without an
        embedder, and when it fails (``_vectors`` tries again and degrades as it says)."""
        emb = self._embedder
        if emb is None:
            return {}
        import numpy as np

        texts: dict[str, str] = {}
        for c in cands:
            if c.type not in UNINDEXED and not c.extra.get("agent_log"):
                text = said_text(self._new(c, ""))
                texts.setdefault(_text_hash(text), text)
        items = list(texts.items())
        out: dict[str, Any] = {}
        for at in range(0, len(items), _EMBED_BATCH):
            chunk = items[at : at + _EMBED_BATCH]
            try:
                vecs = np.asarray(emb.embed([t for _, t in chunk]), dtype="<f4")
            except Exception:  # embedded (or not) inside the write, as before
                break
            if vecs.shape != (len(chunk), emb.dim):
                break
            out.update(zip((h for h, _ in chunk), vecs, strict=True))
        return out

    def _store_vectors(
        self,
        ids: Sequence[str],
        written: Mapping[str, Node] | None = None,
        ready: Mapping[str, Any] | None = None,
        unstored: frozenset[str] = frozenset(),
    ) -> None:
        """Embed and store the vectors of the nodes ``ids`` that lack a current one (inside
        the caller's batch: one transaction with the nodes themselves). ``written``: the
        nodes as this write stored them (the rest are read); ``ready``: vectors embedded
        ahead (``_embed_ahead``); ``unstored``: ids with no stored vector yet."""
        if self._embedder is None or not ids:
            return
        have = written or {}
        nodes = [
            n
            for nid in dict.fromkeys(ids)
            if (n := have.get(nid) or self.store.get(nid)) is not None
            and n.type not in UNINDEXED
            and is_embedded(n)
        ]
        self._vectors(nodes, ready=ready, unstored=unstored)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        counts = self.store.count()
        shown = ", ".join(f"{n} {t}" for t, n in sorted(counts.items()) if n and t != "workspace")
        return f"Memory({self.store.location}: {shown or 'empty'})"

    def __len__(self) -> int:
        """The memories find searches (active, not a workspace or episode)."""
        if self._revision < 0:  # nothing read yet: the store counts, no node is loaded
            counts = self.store.count()
            return sum(n for t, n in counts.items() if t not in UNINDEXED)
        self._sync()
        return len(self._nodes)

    # -- reading ----------------------------------------------------------------------------
    def get(self, ref: str) -> Node:
        """The node with id ``ref``, or with that ``ctx://`` uri, or the entity of that name."""
        node = self.store.get(ref) or (self.store.by_uri(ref) if ref.startswith("ctx://") else None)
        if node is None:
            node = self._entity(ref)
        if node is None:
            raise NotFound(f"no memory {ref!r} (an id, a ctx:// uri or an entity name)")
        return node

    def nodes(self, type: str | None = None, *, include_archived: bool = False) -> list[Node]:
        types = None if type is None else [node_type(type)]
        return self.store.nodes(types=types, include_archived=include_archived)

    def read(self, ref: str) -> NodeView:
        """A node in full with its incoming and outgoing edges."""
        node = self.get(ref)
        get = self.store.get
        ins = tuple((e, n) for e in self.store.edges(dst=node.id) if (n := get(e.src)))
        outs = tuple((e, n) for e in self.store.edges(src=node.id) if (n := get(e.dst)))
        return NodeView(node, ins, outs)

    def find(
        self,
        query: str,
        *,
        top_k: int | None = None,
        expand: int = 1,
        types: Sequence[str] | None = None,
    ) -> FindResult:
        """The memories for ``query``, best first, each with its edge path (see ``_find``):
        ``top_k`` of them (default: the ``top_k`` setting, 10; ``configure(top_k=…)``).
        When the memory's embedder fails, the hits are the lexical ranking alone and the
        result says why (``degraded_reason``); a ``DegradedSearchWarning`` is emitted the
        first time."""
        if top_k is None:
            top_k = int(self.settings()["top_k"])
        if not 1 <= top_k <= 100:
            raise InvalidArgument(f"top_k is 1..100, not {top_k}")
        if self._db is not None:
            result = self._find_in_database(clean_text(str(query)), top_k, expand, types)
        else:
            self._sync()
            result = find_nodes(
                self.store,
                self._retriever,
                self._nodes,
                clean_text(str(query)),
                top_k=top_k,
                expand=expand,
                now=self.now(),
                types=types,
                anchors=self._anchors,
                hidden_ids=self._boilerplate,
                edge_cache=self._edges,
                prefetch_nodes=(
                    self._nodes.prefetch if isinstance(self._nodes, LazyNodes) else None
                ),
            )
        if result.degraded_reason is not None and not self._warned_degraded:
            self._warned_degraded = True
            warnings.warn(
                DegradedSearchWarning(
                    f"{self.store.location}: find answered lexically: "
                    f"{result.degraded_reason}; it tries the embedder again at each search",
                    reason=result.degraded_reason,
                ),
                stacklevel=2,
            )
        return result

    def _find_in_database(
        self, query: str, top_k: int, expand: int, types: Sequence[str] | None
    ) -> FindResult:
        """``find`` ranked by the store's own index: the rules are the engine's, the nodes
        read as they are needed (``StoreNodes``), the anchors once per revision."""
        db = self._db
        assert db is not None and isinstance(self.store, IndexedStore)
        rev = db.catch_up()
        if rev != self._db_revision:
            self._edges.clear()
            self._db_anchors = self.store.anchor_nodes()
            self._db_revision = rev
        view = StoreNodes(self.store)
        return find_nodes(
            self.store,
            db,
            view,
            query,
            top_k=top_k,
            expand=expand,
            now=self.now(),
            types=types,
            anchors=self._db_anchors,
            hidden_ids=view.hidden,
            edge_cache=self._edges,
            prefetch_nodes=view.prefetch,
        )

    @property
    def search_mode(self) -> str:
        """Where ``find`` ranks: ``"database"`` or ``"engine"`` (the ``search`` option)."""
        return "engine" if self._db is None else "database"

    def edge_path(self, node_id: str) -> tuple[str, ...]:
        self._sync()
        return edge_path(
            node_id, self.store.edges(dst=node_id), self.store.edges(src=node_id), self._nodes.get
        )

    # -- writing ----------------------------------------------------------------------------
    def _entity(self, name: str) -> Node | None:
        want = name.casefold().strip()
        for n in self.store.nodes(types=["entity"]):
            if want == n.name.casefold() or want in (a.casefold() for a in n.aliases):
                return n
        return None

    def remember(
        self,
        text: str,
        *,
        type: str = "preference",
        name: str | None = None,
        link_to: str | Sequence[str] | None = None,
        label: str = "about",
        source: Source | None = None,
        until: str | None = None,
    ) -> Node:
        """Keep ``text`` as a ``type`` memory (merged into an equal one if there is one),
        linked ``label`` to ``link_to`` (entity names or ids; a missing entity is created).
        Every text given (``text``, ``name``, ``link_to``, ``source``'s quote, ``until``)
        passes the memory's door: a credential in it is stored as ``[REDACTED:<kind>]``, and
        one that is nothing but credentials is refused with ``MemoryRefused`` naming their
        kinds (nothing is written then)."""
        if type not in ("preference", "decision", "entity", "experience", "observation"):
            raise InvalidArgument(
                f"remember a preference, decision, entity, experience or observation, not {type!r}"
            )
        # A lone surrogate (which json decodes from "\ud800") becomes U+FFFD, as every text
        # the project reads does: SQLite keeps UTF-8 only.
        text = clean_text(str(text))
        if not text.strip():
            raise MemoryRefused("nothing to remember: the text is empty")
        # Every argument through the door before anything reshapes, clips or writes it (a
        # key block whose lines were joined, or a cut secret, might no longer be recognised).
        text = " ".join(self._admitted(text, "the text").split())
        name = self._admitted(clean_text(name), "the name") if name else name
        until = self._admitted(clean_text(until), "until") if until else until
        source = (
            admit_source(replace(source, quote=clean_text(source.quote)))
            if source
            else Source(via="user", quote=text)
        )
        targets = [
            self._admitted(clean_text(t), "link_to")
            for t in ([link_to] if isinstance(link_to, str) else link_to or [])
        ]
        edge_label(label)
        until_at = None
        if until:
            from ._ingest import parse_until

            parsed = parse_until(until, self.now())
            if parsed is not None:
                until, until_at = parsed
        cand = Candidate(
            type=type,  # type: ignore[arg-type]
            name=name or (text if type == "entity" else text[:60]),
            text=text,
            source=source,
            until=until,
            until_at=until_at,
        )
        # before the write lock, which is held for the writes: the embedding, the targets
        # given by id, and the entities named, checked (a name is looked up again inside,
        # where entities are made)
        ready = self._embed_ahead([cand])
        by_id, checked = self._read_ahead(targets)
        # the row of a new node built too (a store that can: ``SQLiteStore.prepared``),
        # used when the text merges into no other; one put would refuse is built inside
        prepare = getattr(self.store, "prepared", None)
        fresh = None
        if prepare is not None and type != "observation":
            try:
                fresh = prepare(self._new(cand, ""))
            except InvalidArgument:  # refused inside by put, as ever
                fresh = None
        with self._writing(ahead=[cand], read_ahead=False):
            # every text above passed the door
            node, _ = self._apply(cand, admitted=True, checked=checked, fresh=fresh)
            for t in targets:
                other = by_id[t] or self._indexed_entity(t, checked)
                if other is None:
                    other, _ = self._apply(
                        Candidate(type="entity", name=t, text=t, source=cand.source),
                        admitted=True,
                    )
                    if other.id == node.id:
                        node = other  # merged into it: as it is stored now
                self._link(node.id, other.id, label)
            self._store_vectors([node.id], {node.id: node}, ready)
        if fresh is not None:  # a store whose put returns the node as it stores it
            return node
        return self.store.get(node.id) or node

    _admit_memo: dict[str, str] | None = None  # ``_admitted``: short texts through the door

    def _admitted(self, text: str, what: str) -> str:
        """``admit(text, what)``, remembered for short texts: ``remember`` passes the same
        entity names (``link_to``) and often the same texts again and again, and the door's
        redaction is a pure function of the text (a refusal is raised again each time)."""
        if len(text) > _ADMIT_MEMO_CHARS:
            return admit(text, what)
        memo = self._admit_memo
        if memo is None:
            memo = self._admit_memo = {}
        got = memo.get(text)
        if got is None:
            got = admit(text, what)  # raises MemoryRefused: nothing kept
            if len(memo) >= _ADMIT_MEMO_SIZE:
                memo.clear()
            memo[text] = got
        return got

    # -- the merge rule, indexed (``MergeIndex``): a write reads what changed, not the file
    _merge_index: MergeIndex | None = None
    _synced_by: int | None = None  # the thread whose write synced the index in its lock

    def _merging(self) -> MergeIndex:
        """The merge index, in step with the store (called inside the write's batch, so
        it sees every other process's commits and this transaction's writes; once per
        ``_writing`` batch)."""
        index = self._merge_index
        if index is None:
            index = self._merge_index = MergeIndex()
        if self._synced_by != threading.get_ident():
            index.sync(self.store)
        return index

    def _merged(self, node: Node) -> None:
        """``node`` as this write stored it, into the merge index."""
        if self._merge_index is not None:
            self._merge_index.put(node)

    @contextmanager
    def _writing(
        self, ahead: Sequence[Candidate] = (), *, read_ahead: bool = True
    ) -> Iterator[None]:
        """The batch of a ``remember`` or ``ingest``, with the merge index in step: read
        up to date before the write lock is taken (reads need none), then only what other
        writers committed meanwhile, inside it. A batch that fails leaves the index holding
        nodes it rolled back: it is read again. Inside a caller's batch the writes are not
        committed yet: the index is read again once that batch is over. ``ahead``: the
        candidates the write applies, whose merge-rule text search runs before the lock
        (``MergeIndex.scan_ahead``). ``read_ahead=False``: the index is not read before
        the lock, only the nodes kept aside are filed (one write of one item: the read
        inside the lock finds the same nodes, and a read outside it costs a statement of
        its own, the pages other writers changed read again)."""
        outer = bool(getattr(self.store, "in_batch", False))
        index = self._merge_index
        if index is None:
            index = self._merge_index = MergeIndex()
        if not outer:
            index.settle()
            if read_ahead or index.revision < 0:
                index.sync(self.store)
            else:
                index.flush()
            index.scan_ahead(ahead)  # the merge rule's text search, out of the lock
        me = threading.get_ident()
        synced = -1
        try:
            with self.store.batch():
                index.sync(self.store, defer=True)  # filed after the write (``flush``)
                synced = index.revision
                self._synced_by = me
                try:
                    yield
                finally:
                    self._synced_by = None
        except BaseException:
            index.reset()
            raise
        if outer:
            index.unsettled()
        else:
            index.committed(synced, getattr(self.store, "committed_revision", None))

    def _merge_target(self, cand: Candidate, checked: _Checked = None) -> Node | None:
        """``merge_target(cand, <every active node of its type>)``, by the index."""
        answered, node = self._by_index(lambda index: index.target(cand), checked)
        return node if answered else merge_target(cand, self.store.nodes(types=[cand.type]))

    def _indexed_entity(self, name: str, checked: _Checked = None) -> Node | None:
        """``_entity(name)``, by the index."""
        answered, node = self._by_index(lambda index: index.entity(name), checked)
        return node if answered else self._entity(name)

    def _read_ahead(
        self, targets: Sequence[str]
    ) -> tuple[dict[str, Node | None], dict[str, tuple[Node, Node]]]:
        """Before the write lock: ``remember``'s link targets given by id (target -> its
        node, None for a name), and the entities named by the others as the merge index
        holds them now (outside a caller's batch), each checked against the store as
        ``_by_index`` checks inside the lock: id -> (the index's node, the store's). Inside
        the lock, a lookup that gives the very node object checked here (the change feed
        brought no newer one of it since) takes the store's node read here instead of
        reading it again while every other writer waits. (A merge target is looked up
        inside only: most texts have none, and the lookup would be made twice.) Both are
        read in one statement where the store can (``by_ids``): each read of a file
        another writer committed to since this process's last one reads its pages again."""
        if not targets:
            return {}, {}
        index = self._merge_index
        hits: dict[str, Node | None] = {}
        if index is not None and not getattr(self.store, "in_batch", False):
            hits = {t: index.entity(t) for t in targets}
        many = getattr(self.store, "by_ids", None)
        if many is not None:
            got: dict[str, Node] = many([*targets, *(h.id for h in hits.values() if h)])
            by_id = {t: got.get(t) for t in targets}
        else:
            by_id = {t: self.store.get(t) for t in targets}
            got = {}
        checked: dict[str, tuple[Node, Node]] = {}
        for t in targets:
            hit = hits.get(t)
            if by_id[t] is None and hit is not None and hit.id not in checked:
                fresh = got.get(hit.id) if many is not None else self.store.get(hit.id)
                if fresh is not None and still_matches(hit, fresh):
                    checked[hit.id] = (hit, fresh)
        return by_id, checked

    def _by_index(
        self, ask: Callable[[MergeIndex], Node | None], checked: _Checked = None
    ) -> tuple[bool, Node | None]:
        """What ``ask`` finds in the merge index, read from the store (the write's
        transaction): (True, the node, or None for nothing found). A node that no longer
        matches what the index held makes the index read the store whole again and answer
        again; (False, None) when it still does not (the caller asks the store itself).
        ``checked``: nodes checked before the lock (``_read_ahead``), not read again while
        the index still holds the same node object."""
        for _ in range(2):
            index = self._merging()
            hit = ask(index)
            if hit is None:
                return True, None
            seen = checked.get(hit.id) if checked else None
            if seen is not None and seen[0] is hit:
                return True, seen[1]
            fresh = self.store.get(hit.id)
            if fresh is not None and still_matches(hit, fresh):
                return True, fresh
            index.reset()
            index.sync(self.store)  # read whole again, inside this write
        return False, None

    def _apply(
        self,
        cand: Candidate,
        *,
        admitted: bool = False,
        checked: _Checked = None,
        fresh: Any = None,
    ) -> tuple[Node, bool]:
        """Merge ``cand`` into its target or insert it; returns the node and whether it is
        new. Observations are identified by their source (uri), the rest by the seed's rule
        (``_merge_target``). Every candidate passes the door here, whoever made it
        (``MemoryRefused``), unless the caller passed it already (``admitted``). ``fresh``:
        the new node's row built before the write lock (``SQLiteStore.prepared``; only for
        an admitted candidate that is not an observation)."""
        if not admitted:
            cand = admit_candidate(cand)
        if cand.type == "observation":
            uri = _observation_uri(cand)
            old = self.store.by_uri(uri)
            if old is None:
                return self.store.put(self._new(cand, uri)), True
            after = _observed(old, cand)
            return (old if after is old else self.store.put(after)), False
        target = self._merge_target(cand, checked)
        if target is None:
            if fresh is not None:
                stored = self.store.put_prepared(fresh)  # type: ignore[attr-defined]
            else:
                stored = self.store.put(self._new(cand, ""))
            self._merged(stored)
            return stored, True
        after = merged(target, cand)
        if after == target:
            return target, False
        stored = self.store.put(after)
        self._merged(stored)
        return stored, False

    def _new(self, cand: Candidate, uri: str) -> Node:
        return Node(
            id="",
            type=cand.type,
            name=cand.name or cand.text[:60],
            text=cand.text,
            uri=uri,
            sources=(cand.source,),
            until=cand.until,
            until_at=cand.until_at,
            fail=cand.fail,
            fix=cand.fix,
            extra=dict(cand.extra),
        )

    def _link(self, src: str, dst: str, label: str) -> bool:
        if src == dst:
            return False
        return self.store.link(Edge.weighted(src, dst, label))

    def link(self, src: str, dst: str, label: str = "about") -> Edge:
        """Link two memories (ids, uris or entity names) with ``label``."""
        edge_label(label)
        a, b = self.get(src), self.get(dst)
        if a.id == b.id:
            raise InvalidArgument(f"a memory does not link to itself ({a.id})")
        self._link(a.id, b.id, label)
        return Edge.weighted(a.id, b.id, label)

    def archive(self, ref: str) -> Node:
        """Hide a memory from search and the map (kept, and restorable with ``restore``)."""
        node = self.get(ref)
        return self.store.put(replace(node, status="archived"))

    def restore(self, ref: str) -> Node:
        node = self.store.get(ref) or self.get(ref)
        return self.store.put(replace(node, status="active"))

    def rename(self, ref: str, name: str) -> Node:
        """Give a memory a new name; an entity keeps the old one as an alias. The name passes
        the memory's door (a credential redacted; nothing but credentials refused)."""
        name = clean_text(name)
        if not name.strip():
            raise InvalidArgument("a name is a non-empty text")
        name = " ".join(admit(name, "the name").split())
        node = self.get(ref)
        aliases = node.aliases
        if node.type == "entity" and node.name and node.name not in aliases and node.name != name:
            aliases = (*aliases, node.name)
        kept = tuple(a for a in aliases if a != name)
        # an entity's text is its name unless someone wrote more: keep them together
        text = name if node.type == "entity" and node.text in ("", node.name) else node.text
        return self.store.put(replace(node, name=name, aliases=kept, text=text))

    def edit(
        self,
        ref: str,
        text: str | None = None,
        *,
        name: str | None = None,
        until: str | None = None,
    ) -> Node:
        """Change a memory in place: its ``text``, its ``name`` (an entity keeps the old
        one as an alias, as ``rename`` does) and its deadline (``until``; ``""`` clears
        it). The node keeps its id, uri, sources and edges; search sees the new text at the
        next call, in this process and in every other one. ``extra["edited"]`` records
        when it was last edited and how many times. Every text given passes the memory's
        door (a credential redacted; one that is nothing but credentials refused with
        ``MemoryRefused``, nothing written). ``NotFound`` when there is no such memory."""
        if text is None and name is None and until is None:
            raise InvalidArgument("edit needs a new text, name or until")
        if text is not None:
            text = clean_text(str(text))
            if not text.strip():
                raise InvalidArgument("a memory's text is a non-empty text (delete removes one)")
            text = " ".join(admit(text, "the text").split())
        if name is not None:
            name = clean_text(str(name))
            if not name.strip():
                raise InvalidArgument("a name is a non-empty text")
            name = " ".join(admit(name, "the name").split())
        until_at: str | None = None
        if until:
            until = admit(clean_text(str(until)), "until")
            from ._ingest import parse_until

            parsed = parse_until(until, self.now())
            if parsed is not None:
                until, until_at = parsed
        with self.store.batch():
            node = self.get(ref)
            if node.type == "workspace":
                raise InvalidArgument(f"{node.id} is the workspace root; it is not edited")
            after = node
            if name is not None and name != node.name:
                aliases = node.aliases
                if node.type == "entity" and node.name and node.name not in aliases:
                    aliases = (*aliases, node.name)
                keep_text = node.type == "entity" and node.text in ("", node.name)
                after = replace(
                    after,
                    name=name,
                    aliases=tuple(a for a in aliases if a != name),
                    text=name if keep_text and text is None else after.text,
                )
            if text is not None:
                # a name that was the old text's opening follows the text (not an entity's)
                derived = node.type != "entity" and name is None and node.name == node.text[:60]
                after = replace(after, text=text, name=text[:60] if derived else after.name)
            if until is not None:
                after = replace(after, until=until or None, until_at=until_at if until else None)
            if after == node:
                return node
            prior = node.extra.get("edited")
            times = prior.get("times", 0) if isinstance(prior, Mapping) else 0
            times = times if isinstance(times, int) and not isinstance(times, bool) else 0
            edited = {"at": _now_iso(self.now()), "times": times + 1}
            stored = self.store.put(replace(after, extra={**after.extra, "edited": edited}))
            self._store_vectors([stored.id])  # the old text's vector went with the put
            return stored

    def delete(self, ref: str) -> Node:
        """Remove a memory for good: the node, every edge into or out of it, and its place
        in the search index (here at once, in other processes at their next call). Returns
        what was removed. ``NotFound`` (naming ``ref``) when there is no such memory; the
        workspace root is not deleted. ``archive`` is the soft, restorable delete."""
        with self.store.batch():
            node = self.get(ref)
            if node.type == "workspace":
                raise InvalidArgument(f"{node.id} is the workspace root; it is not deleted")
            if not self.store.delete(node.id):  # pragma: no cover - get() just found it
                raise NotFound(f"no memory {ref!r}")
        self._sync()
        return node

    def merge(self, keep: str, drop: str) -> Node:
        """Merge ``drop`` into ``keep`` (one type only): its edges move to the keeper, its
        names become aliases, its sources are kept, a ``same_as`` edge records the merge and
        ``drop`` is archived."""
        a, b = self.get(keep), self.get(drop)
        if a.id == b.id:
            raise InvalidArgument("merge needs two different memories")
        if a.type != b.type:
            raise InvalidArgument(f"merge joins memories of one type, not {a.type} and {b.type}")
        with self.store.batch():
            for e in self.store.edges(src=b.id):
                if e.label != "same_as" and e.dst != a.id:
                    self._link(a.id, e.dst, e.label)
                self.store.unlink(e.src, e.dst, e.label)
            for e in self.store.edges(dst=b.id):
                if e.src != a.id:
                    self._link(e.src, a.id, e.label)
                self.store.unlink(e.src, e.dst, e.label)
            names = [n for n in (b.name, *b.aliases) if n and n != a.name and n not in a.aliases]
            sources = (*a.sources, *(s for s in b.sources if s not in a.sources))
            kept = self.store.put(replace(a, aliases=(*a.aliases, *names), sources=sources))
            self.store.put(replace(b, status="archived"))
            self._link(b.id, a.id, "same_as")
        return kept

    # -- credentials already stored ---------------------------------------------------------
    @property
    def redaction_rules(self) -> int | None:
        """The redaction rules' version every stored text went through (recorded by
        ``scrub`` and when the file was made); None when the file records none (written
        before it was recorded, or by an older ctxsdk). Below
        ``ctxsdk.session.kernel.REDACTION_RULES_VERSION``, opening the file warns
        (``StaleRedactionWarning``)."""
        return recorded_rules(self.store.get_meta(RULES_KEY))

    def scrub(self, *, dry_run: bool = False) -> ScrubReport:
        """Pass every text the memory already holds through its door again, with today's
        redaction rules: node fields (JSON columns' strings and keys too), edges and meta.
        What changed is written in one transaction (a failure leaves the file as it was)
        with the rules' version; then the file is compacted (VACUUM, the WAL truncated), so
        the old bytes are gone from the file and its WAL. A text that is nothing but
        credentials keeps its ``[REDACTED:<kind>]`` form, and a node left meaningless by
        that (an entity whose name was only a credential) is archived, not deleted (see
        ``_scrub``). ``dry_run`` reports what would change and writes nothing. The store
        must be one that can be rewritten (``SQLiteStore``); not inside a batch."""
        store = self.store
        if not isinstance(store, MaintainedStore):
            raise InvalidArgument(
                f"scrub() rewrites a store's rows and compacts it; {type(store).__name__} "
                "cannot (SQLiteStore can)"
            )
        if store.in_batch:
            raise InvalidArgument(
                "scrub() inside a batch or snapshot: it compacts the file, which needs no "
                "open transaction; call it outside"
            )
        report = scrub_store(store, dry_run=dry_run)
        saved = None if dry_run else sidecar(store)
        if saved is not None:  # it holds the old texts: gone with them (the next read saves)
            remove_saved(saved)
        self._revision = -1  # the next read syncs the index with the rewritten rows
        self.root = store.get(self.root.id) or self.root
        return report

    # -- getting memories in ----------------------------------------------------------------
    def ingest(
        self,
        session: Session,
        *,
        verbatim: bool = True,
        now: datetime | None = None,
        llm: ModelProtocol | None = None,
    ) -> IngestReport:
        """Extract memories from ``session`` by the seed's rules (``_ingest``) and write
        them in one transaction: entities first, then the rest, merged into equal memories,
        linked to the entities they name. ``verbatim`` (the default) also keeps each
        message of the whole log (user, assistant with its calls, tool output) as an
        observation, word for word and redacted: ``find`` answers from what was said, not
        only from what was distilled; ``verbatim=False`` keeps the distilled memories
        alone. ``llm`` (optional) proposes more candidates, kept only when they pass the
        rules' filters (``_propose``; ``report.model`` says what it did). The same session
        ingested again adds nothing."""
        sid = session_key(session)
        marker = f"ingested:{sid}"
        through = len(session)
        done = self.store.get_meta(marker)
        if (
            isinstance(done, Mapping)
            and done.get("through") == through
            and done.get("rules") == _INGEST_RULES
            and (done.get("verbatim") or not verbatim)
        ):
            return IngestReport(sid, (), (), 0, (), skipped=True)
        # one session's texts pass redaction several times (its facts, its observations,
        # the door): each is redacted once within this block, the same result every time.
        # Reading a session allocates millions of small objects that form no cycles: the
        # collector's full passes over them cost about a tenth of an ingest (``gc_paused``).
        with gc_paused(), redaction_memo():
            ex = extract(session, now=now)
            model: Proposal | None = None
            if llm is not None:
                ex, model = propose(session, llm, now=now or self.now(), rules=ex)
            cands: list[Candidate] = list(ex.candidates)
            if verbatim:
                cands += list(observations(session))
            words = session_words(session)
            told: dict[str, object] = {"from": words} if words else {}
            if is_agent_log(session):
                told["agent_log"] = True
            cands, refused = _told_through_door(cands, told)
        ready = self._embed_ahead(cands)  # before the write lock: it is held for writes
        with gc_paused(), self._writing():
            written: dict[str, Node] = {}
            added, touched, edges = self._write_candidates(cands, admitted=True, written=written)
            # with the nodes, in this transaction (a new node has no stored vector yet)
            self._store_vectors([*added, *touched], written, ready, frozenset(added))
            boxes = write_episodes(self.store, session, self._cuts(sid))
            self.store.set_meta(
                marker, {"through": through, "verbatim": verbatim, "rules": _INGEST_RULES}
            )
        merged_ids = tuple(dict.fromkeys(n for n in touched if n not in added))
        return IngestReport(
            sid,
            tuple(added),
            merged_ids,
            edges,
            (*ex.dropped, *refused),
            model=model,
            episodes=tuple(b.id for b in boxes),
        )

    # -- the session map --------------------------------------------------------------------
    def _cuts(self, session_id: str) -> list[int]:
        cuts = self.store.get_meta(f"cuts:{session_id}")
        return [c for c in cuts if isinstance(c, int)] if isinstance(cuts, list) else []

    def episodes(self, session: str | Session | None = None) -> list[Node]:
        """The session map's boxes (``_episodes``): of one session in order (fork, then
        checkpoints, then the tail), or of every session, session by session. Archived
        boxes (checkpoints a replaced log no longer holds) are left out."""
        sid = None if session is None else session_key(session)
        return boxes(self.store, sid)

    def cut(self, session: Session) -> Node:
        """ "Generate checkpoint": cut the session's open tail into a box of its own at the
        log's last seq, without compacting anything the model sees. The new box is
        summarised by the last user message; the tail starts again after it. Cutting where a
        box already ends adds nothing and returns that box."""
        sid = session_key(session)
        last = len(session.raw_events) - 1
        cuts = self._cuts(sid)
        with self.store.batch():
            if last not in cuts:
                self.store.set_meta(f"cuts:{sid}", [*cuts, last])
            boxes = write_episodes(self.store, session, self._cuts(sid))
        return next(b for b in boxes if b.extra.get("atSeq") == last and b.extra["kind"] != "tail")

    def _write_candidates(
        self,
        cands: Sequence[Candidate],
        *,
        admitted: bool = False,
        written: dict[str, Node] | None = None,
    ) -> tuple[list[str], list[str], int]:
        """Apply ``cands`` (entities first, so links find them), then link each to the
        entities it names, and a memory ``observed_in`` the observation it was read from (the
        same session and seq, when the record is kept); returns the new ids, the merged-into
        ids and the edges added. The observations (most of a session) are written together
        (``_apply_observations``), the edges in one call (``link_all``). ``admitted``: the
        candidates passed the door already (else they pass it here); ``written`` collects
        the nodes as stored. The caller holds the batch."""
        ordered = sorted(cands, key=lambda c: c.type != "entity")
        if not admitted:
            ordered = [admit_candidate(c) for c in ordered]
        results: list[tuple[Node, bool] | None] = [None] * len(ordered)
        mine: dict[str, Node] = {}  # this write's entities: a name links to its own project's
        for i, cand in enumerate(ordered):
            if cand.type != "observation":
                node, new = self._apply(cand, admitted=True)
                results[i] = (node, new)
                if node.type == "entity":
                    mine.setdefault(cand.name.casefold(), node)
        seen = [i for i, c in enumerate(ordered) if c.type == "observation"]
        observed = self._apply_observations([ordered[i] for i in seen])
        for i, result in zip(seen, observed, strict=True):
            results[i] = result
        added: list[str] = []
        touched: list[str] = []
        applied: list[tuple[Candidate, Node]] = []
        final: dict[str, Node] = {}
        for cand, got in zip(ordered, results, strict=True):
            assert got is not None
            node, new = got
            (added if new else touched).append(node.id)
            applied.append((cand, node))
            final[node.id] = node  # the last write of a node is what it holds
        if written is not None:
            written.update(final)
        # the record a memory was read from: the observation of its (session, seq)
        said_at = {
            (c.source.session, c.source.seq): n.id for c, n in applied if c.type == "observation"
        }
        links: list[Edge] = []
        for cand, node in applied:
            for label, name in cand.links:
                other = mine.get(name.casefold()) or self._indexed_entity(name)
                if other is not None and other.id != node.id:
                    links.append(Edge.weighted(node.id, other.id, label))
            said = said_at.get((cand.source.session, cand.source.seq))
            if cand.type != "observation" and said and said != node.id:
                links.append(Edge.weighted(node.id, said, "observed_in"))
        edges = link_all(self.store, links)
        return added, touched, edges

    def _apply_observations(self, cands: Sequence[Candidate]) -> list[tuple[Node, bool]]:
        """``[_apply(c) for c in cands]`` for observations that passed the door, written
        together: the nodes of their uris read in a few queries, the new ones inserted in
        one call (``put_all``), ids in the candidates' order. Two with one uri (a message
        said twice at one seq) make one node, as one by one."""
        uris = [_observation_uri(c) for c in cands]
        have = nodes_at(self.store, uris)
        fresh: list[Node] = []  # the new nodes, in order
        fresh_at: dict[str, int] = {}  # uri -> its place in fresh
        plan: list[tuple[str, bool]] = []  # per candidate: its uri, and whether it made it
        for cand, uri in zip(cands, uris, strict=True):
            if uri in fresh_at:
                at = fresh_at[uri]
                fresh[at] = _observed(fresh[at], cand)
                plan.append((uri, False))
            elif uri in have:
                old = have[uri]
                after = _observed(old, cand)
                if after is not old:
                    have[uri] = self.store.put(after)
                plan.append((uri, False))
            else:
                fresh_at[uri] = len(fresh)
                fresh.append(self._new(cand, uri))
                plan.append((uri, True))
        stored = put_all(self.store, fresh)
        for uri, at in fresh_at.items():
            have[uri] = stored[at]
        return [(have[uri], new) for uri, new in plan]

    def import_memory_md(self, text: str) -> IngestReport:
        """A one-shot import of a MEMORY.md file (strict: the seed's cues and caps)."""
        ex = parse_memory_md(clean_text(text), now=self.now())
        cands, refused = _through_door(ex.candidates)
        with self.store.batch():
            added, _, edges = self._write_candidates(cands)
        return IngestReport("MEMORY.md", tuple(added), (), edges, (*ex.dropped, *refused))

    # -- out ------------------------------------------------------------------------------------
    def export_json(self, *, include_archived: bool = True) -> dict[str, Any]:
        """The whole graph as JSON (``import_json`` reads it back exactly)."""
        nodes = self.store.nodes(include_archived=include_archived)
        ids = {n.id for n in nodes}
        edges = [e for n in nodes for e in self.store.edges(src=n.id) if e.dst in ids]
        return export_graph(nodes, edges)

    def import_json(self, data: Mapping[str, Any]) -> IngestReport:
        """Nodes and edges of an export, merged by uri (a node already here is kept, its
        edges joined); ids are remapped. One transaction. Every text of every node (and
        ``extra``, keys too) passes the memory's door first: credentials are redacted, and a
        field that is nothing but credentials refuses the whole import (``MemoryRefused``
        naming its JSON path and the kinds) before anything is written."""
        nodes, edges = import_graph(data)
        nodes = [admit_node(n, f"$.nodes[{i}]") for i, n in enumerate(nodes)]
        edges = [
            replace(e, created_at=admit(e.created_at, f"$.edges[{i}].createdAt"))
            for i, e in enumerate(edges)
        ]
        idmap: dict[str, str] = {}
        with self.store.batch():
            # the nodes already here by uri read together, the new ones written together
            # (``put_all``), the edges in one call (``link_all``); a uri given twice is one
            # node, as one by one
            have = nodes_at(self.store, [n.uri for n in nodes if n.uri and n.type != "workspace"])
            fresh: list[Node] = []
            slot: dict[str, int] = {}  # a new node's uri -> its place in fresh
            place: dict[str, int] = {}  # an imported id -> its new node's place in fresh
            for n in nodes:
                if n.type == "workspace":
                    idmap[n.id] = self.root.id
                elif n.uri and n.uri in have:
                    idmap[n.id] = have[n.uri].id
                elif n.uri and n.uri in slot:
                    place[n.id] = slot[n.uri]
                else:
                    if n.uri:
                        slot[n.uri] = len(fresh)
                    place[n.id] = len(fresh)
                    fresh.append(replace(n, id=""))
            stored = put_all(self.store, fresh)
            for old_id, at in place.items():
                idmap[old_id] = stored[at].id
            count = link_all(
                self.store,
                [
                    replace(e, src=idmap[e.src], dst=idmap[e.dst])
                    for e in edges
                    if e.src in idmap and e.dst in idmap
                ],
            )
        return IngestReport("import", tuple(n.id for n in stored), (), count, ())

    def copy_to(
        self,
        dst: str | os.PathLike[str] | MaintainedStore,
        *,
        namespace: str | None = None,
        progress: Progress | bool | None = None,
    ) -> CopyReport:
        """Copy this memory, exactly, into an empty one (``copy_memory``): every node with
        its id, uri, sources, status and times, archived ones too, every edge and meta
        value; not the embedding cache (re-embedded at the next search there). ``dst``: a
        file path (made when missing), a ``postgresql://`` URL (``namespace``, default
        ``"default"``, made when missing), or a store (left open). A destination that holds
        a node is refused; a failure leaves it empty (one transaction)."""
        target = open_store(dst, namespace=namespace)
        try:
            return copy_memory(self.store, target, progress=progress)
        finally:
            if target is not dst:
                target.close()

    def to_markdown(self) -> str:
        """A read-only Markdown projection (never parsed back)."""
        nodes = self.store.nodes()
        ids = {n.id for n in nodes}
        edges = [e for n in nodes for e in self.store.edges(src=n.id) if e.dst in ids]
        return to_markdown(nodes, edges)

    def graph(self, *, include_archived: bool = False) -> nx.MultiDiGraph:
        """The memory as a networkx graph (nodes by id with their fields, edges keyed by
        label), for analysis."""
        from ._graph import to_networkx

        return to_networkx(self.store, include_archived=include_archived)

    def to_df(self) -> pl.DataFrame:
        """Deprecated: ``to_polars()``, the one table method of every result."""
        warnings.warn(
            "Memory.to_df() is deprecated; use to_polars()", DeprecationWarning, stacklevel=2
        )
        return self.to_polars()

    def to_polars(self) -> pl.DataFrame:
        """Every node but the workspace, archived ones included: id, type, name, text,
        until, whether it is stale now, how many sources, status."""
        import polars as pl

        self._sync()
        now = self.now()
        rows = [
            {
                "id": n.id,
                "type": n.type,
                "name": n.name,
                "text": n.text,
                "until": n.until,
                "stale": is_stale(n, now),
                "sources": len(n.sources),
                "status": n.status,
            }
            for n in self.store.nodes(include_archived=True)
            if n.type != "workspace"
        ]
        schema = {
            "id": pl.String,
            "type": pl.String,
            "name": pl.String,
            "text": pl.String,
            "until": pl.String,
            "stale": pl.Boolean,
            "sources": pl.Int64,
            "status": pl.String,
        }
        return pl.DataFrame(rows, schema=schema)

    # -- the session-start map, pins and recall ---------------------------------------------
    def settings(self) -> dict[str, Any]:
        stored = self.store.get_meta("settings")
        # A value configure() would refuse (a damaged file) reads as unset, as a
        # settings value that is not an object does.
        kept = (
            {k: v for k, v in stored.items() if _setting_ok(k, v)}
            if isinstance(stored, Mapping)
            else {}
        )
        return {**_SETTINGS, **kept}

    def configure(self, **changes: Any) -> dict[str, Any]:
        """Change settings: ``recall`` (off / anchor / auto), ``map_budget``, ``top_k``,
        ``expand``. Only the settings ever changed are stored: the others follow the
        defaults of the ctxsdk that reads the file."""
        stored = self.store.get_meta("settings")
        current = (
            {k: v for k, v in stored.items() if _setting_ok(k, v)}
            if isinstance(stored, Mapping)
            else {}
        )
        for k, v in changes.items():
            if k not in _SETTINGS:
                raise InvalidArgument(f"no setting {k!r}; known: {', '.join(_SETTINGS)}")
            if k == "recall" and v not in ("off", "anchor", "auto"):
                raise InvalidArgument(f"recall is off, anchor or auto, not {v!r}")
            if k != "recall" and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
                raise InvalidArgument(f"{k} is a whole number >= 0, not {v!r}")
            if k == "top_k" and not 1 <= v <= 100:
                raise InvalidArgument(f"top_k is a number of hits from 1 to 100, not {v!r}")
            current[k] = v
        self.store.set_meta("settings", current)
        return {**_SETTINGS, **current}

    def map(self, budget: int | None = None, *, tokenizer: str = "cl100k_base") -> MemoryMap:
        """The short session-start map: how to search, what kinds of memories there are,
        and a few names; within ``budget`` tokens (default: the setting, 400). A budget that
        is not a whole number >= 0 is ``InvalidArgument`` (a negative one used to give an
        empty map in silence)."""
        if budget is not None and (type(budget) is not int or budget < 0):
            raise InvalidArgument(f"budget is a whole number of tokens >= 0, not {budget!r}")
        b = self.settings()["map_budget"] if budget is None else budget
        tk, now = get_tokenizer(tokenizer), self.now()
        if self._revision < 0:  # nothing read yet: the named kinds only, observations counted
            named = self.store.nodes(types=("entity", "preference", "decision", "experience"))
            seen = self.store.count()["observation"]
            return build_map(named, b, tk, now, observations=seen)
        self._sync()
        return build_map(list(self._nodes.values()), b, tk, now)

    def pin(self, session_id: str, ref: str) -> list[str]:
        node = self.get(ref)
        if node.type not in ("preference", "decision", "entity"):
            raise InvalidArgument(
                f"only preferences, decisions and entities are pinned, not {node.type}"
            )
        pins = self.pins(session_id)
        if node.id not in pins:
            pins.append(node.id)
        self.store.set_meta(f"pins:{session_key(session_id)}", pins)
        return pins

    def unpin(self, session_id: str, ref: str) -> list[str]:
        node = self.get(ref)
        pins = [p for p in self.pins(session_id) if p != node.id]
        self.store.set_meta(f"pins:{session_key(session_id)}", pins or None)
        return pins

    def pins(self, session_id: str) -> list[str]:
        """The pinned node ids of a session (archived ones pruned)."""
        raw = self.store.get_meta(f"pins:{session_key(session_id)}")
        ids = [p for p in raw if isinstance(p, str)] if isinstance(raw, list) else []
        return [p for p in ids if (n := self.store.get(p)) is not None and n.active]

    def inherit_pins(self, parent: str, child: str) -> list[str]:
        """Copy a session's pins to its fork (forks inherit only when asked)."""
        pins = self.pins(parent)
        self.store.set_meta(f"pins:{session_key(child)}", pins or None)
        return pins

    def context(self, session: Session, prompt: str | None = None) -> str | None:
        """What this memory adds to a turn of ``session``: the short map on its first turn,
        its pinned memories (≤300 tokens), and what the recall mode finds for ``prompt``
        (``anchor``: named entities and their neighbours; ``auto``: the top 3 hits).
        Control characters in it are neutralized (``ctxsdk.session.kernel.neutralize``)."""
        self._sync()
        parts: list[str] = []
        first = not any(
            e.get("type") == "user/message"
            and (e.get("data", {}).get("source") or {}).get("plugin") == MEMORY_PLUGIN
            for e in session.raw_events
        )
        tk = get_tokenizer("cl100k_base")
        if first:
            m = self.map()
            if m.text:
                parts.append(m.text)
        pins = [self._nodes[p] for p in self.pins(str(session.id)) if p in self._nodes]
        if pins:
            parts.append(pinned_block(pins, 300, tk))
        mode = self.settings()["recall"]
        if prompt and mode != "off":
            hits = self.find(prompt, top_k=3 if mode == "auto" else 8)
            if mode == "anchor":
                asked = prompt.casefold()
                # the entities the prompt names, and the hits one business edge from them
                named = {
                    h.node.id
                    for h in hits
                    if h.node.type == "entity"
                    and (h.via in ("anchor", "match") or h.node.name.casefold() in asked)
                }
                near = {
                    e.src if e.dst in named else e.dst
                    for nid in named
                    for e in (*self.store.edges(src=nid), *self.store.edges(dst=nid))
                    if e.label in BUSINESS_EDGES
                }
                # the neighbours themselves, whether or not they ranked among the hits:
                # direct matches come first in ``find``, so a neighbour may rank below them
                chosen = [h for h in hits if h.node.id in named]
                have = {h.node.id for h in chosen}
                for nid in sorted(near - have):
                    node = self._nodes.get(nid)
                    if node is not None and node.active:
                        chosen.append(MemoryHit(node=node, score=0.0, via="expansion"))
            else:
                chosen = list(hits)
            if chosen:
                lines = ["Memory recall (use ctx_read for the full text):"]
                # neutralized before it is counted: the escapes are what the model reads
                lines += [neutralize(f"- {h.node.id} {h.node.type}: {h.short}") for h in chosen]
                block = "\n".join(lines)
                while tk.count(block) > 300 and len(lines) > 2:
                    lines.pop()
                    block = "\n".join(lines)
                parts.append(block)
        return "\n\n".join(parts) or None

    def __call__(self, session: Session) -> dict[str, Any] | None:
        """``run_agent``'s ``inject=`` hook: the turn's memory context as a plugin message."""
        prompt = None
        for raw in reversed(session.raw_events):
            if raw.get("type") == "user/message":
                src = raw.get("data", {}).get("source") or {}
                if src.get("kind") == "user":
                    prompt = " ".join(
                        b.get("text", "")
                        for b in raw["data"].get("content", [])
                        if isinstance(b, Mapping)
                    )
                    break
        text = self.context(session, prompt)
        if text is None:
            return None
        return {
            "id": str(uuid.uuid4()),
            "role": "user",
            "content": [{"type": "text", "text": text}],
            "source": {"kind": "plugin", "plugin": MEMORY_PLUGIN},
        }

    def widget(self, **options: Any) -> Any:
        """The MemoryGraph widget over this memory."""
        return widget("memory_graph", self, **options)
