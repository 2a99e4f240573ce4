"""``MemoryGraph``: a ``cx.Memory`` as a graph of typed memories and their typed edges.

Everything comes from the Memory engine's public API: ``store.nodes`` and ``store.edges``
(what is drawn), ``find`` (the search box: hits and their edge paths), ``read`` (the side
panel: full text, aliases, deadline, failure and fix, every source, edges in and out), and
the validated writes ``archive``, ``rename`` and ``merge`` (the panel's actions; an error from
the engine is the request's error reply, shown in the panel). ``now()`` decides which
decisions are stale.

The layout is computed here, deterministically: entities are hubs, ordered by how connected
they are; every other memory sits on a ring around the entity it is linked to by a business
edge (about, decided, broke, fixed; the most connected entity when there are several), an
observation around the hub of the memory it supports; memories linked to no entity sit in a
grid after the hubs. At most ``max_nodes`` are drawn: search hits and the nodes at the ends
of their paths first, then the most connected; the payload says how many are hidden, per type.
The graph is one column-wise payload (``_graph``); after a change made in Python,
``refresh()`` (the ↻ button) re-reads the memory. Below it, ``session_map`` lists the
session map's boxes (``Memory.episodes``) a row per session; a box opens in the same panel.

Every text shown comes from sessions and people, so it is sent neutralized
(``ctxsdk.session.kernel.neutralize``): control, bidi and zero-width characters arrive as visible
escapes (``\\x1b``, ``\\u202e``), never acted on by the page. Ids stay as they are: they are
what the front end asks for.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import traitlets

from .._display import table
from ..errors import InvalidArgument, NotFound
from ..session.kernel import (
    match_spans,
    neutralize,
    one_line,
    query_terms_in,
    query_window,
    short_id,
)
from ._base import BaseWidget, handler
from ._bundle import bundle, bundle_css

if TYPE_CHECKING:
    from ctxsdk.memory import Edge, Node

    from ..memory import Memory

__all__ = ["MemoryGraph"]

SHOWN_TYPES = ("entity", "preference", "decision", "experience")
"""The types drawn by default; observations only when ``observations=True``."""
DRAWN_LABELS = frozenset({"about", "decided", "broke", "fixed", "same_as", "observed_in"})
BUSINESS = frozenset({"about", "decided", "broke", "fixed"})
_NEVER = ("workspace", "episode")
_TYPE_RANK = {"entity": 0, "decision": 1, "preference": 2, "experience": 3, "observation": 4}

# Node flags (the front end reads the same bits).
STALE, HUB, PINNED, UNTIL = 1, 2, 4, 8

# Layout, in graph units (SVG user space before the pan / zoom transform).
RING0, RING_STEP, SLOT = 64.0, 52.0, 40.0  # first ring radius, ring spacing, arc per node
LABEL_ROOM = 66.0  # around a cluster's outer ring, for the labels
MIN_ROW_W = 640.0  # clusters are packed in rows at least this wide (wider for many)
ASPECT = 1.35  # the packed clusters' width : height, about
GRID_W, GRID_H = 190.0, 58.0  # the grid of memories linked to no entity
_LABEL_CHARS = 30
_TIP_CHARS = 240
_QUOTE_CHARS = 2_000
_TEXT_CHARS = 20_000
_MAX_CHOICES = 500  # same-type nodes the merge picker lists
_MAP_SESSIONS = 12  # sessions in the session map strip (the most recently written)
_MAP_BOXES = 16  # boxes per session there (the latest; a fork's box always)
_PATH = re.compile(r"^<-(?P<in>[a-z_]+)-(?P<src>[^(\s]+)|^(?P<out>[a-z_]+)->(?P<dst>[^(\s]+)")


def _cut(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters, its controls made visible."""
    return neutralize(one_line(text, limit))


def _shown(text: str | None) -> str | None:
    return None if text is None else neutralize(text)


def _reading_order(pool: dict[str, Node], ids: Sequence[str]) -> dict[str, tuple[Any, ...]]:
    """Each node's place in the sessions' reading order: typed-in memories first, then by
    session (the order sessions were first written to the memory) and event seq; a memory
    before the observation of its own message; ids break ties."""

    def first(n: Node) -> tuple[str, int] | None:
        for src in n.sources:
            if src.session is not None and src.seq is not None:
                return src.session, src.seq
        return None

    placed = {nid: first(pool[nid]) for nid in ids}
    began: dict[str, str] = {}
    for nid, at in placed.items():
        if at is not None:
            stamp = pool[nid].created_at or ""
            began[at[0]] = min(began.get(at[0], stamp), stamp)
    session_rank = {s: i for i, s in enumerate(sorted(began, key=lambda s: (began[s], s)))}
    out: dict[str, tuple[Any, ...]] = {}
    for nid, at in placed.items():
        kind = _TYPE_RANK.get(pool[nid].type, 9)
        if at is None:
            out[nid] = (0, 0, 0, kind, nid)
        else:
            out[nid] = (1, session_rank[at[0]], at[1], kind, nid)
    return out


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


_SNIPPET_CHARS = 180


def snippet(texts: Iterable[str], query: str, width: int = _SNIPPET_CHARS) -> list[list[Any]]:
    """A search hit's snippet: the window of about ``width`` characters, in the first of
    ``texts`` that holds a query word, that holds the most distinct query words; as segments
    ``[text, marked]`` (marked: a query word), each neutralized on its own. With no query
    word in any text (a hit found by retrieval or through an edge), the head of the first
    text, unmarked."""
    flat = [" ".join(t.split()) for t in texts if t and t.strip()]
    if not flat:
        return []
    terms = query_terms_in(query)
    for text in flat:
        span = query_window(text, query, width)
        if span is None:
            continue
        start, end = span
        out: list[list[Any]] = [["…", False]] if start > 0 else []
        at = start
        for a, b, _ in match_spans(text, terms):
            if a < start or b > end:
                continue
            if a > at:
                out.append([neutralize(text[at:a]), False])
            out.append([neutralize(text[a:b]), True])
            at = b
        if at < end:
            out.append([neutralize(text[at:end]), False])
        if end < len(text):
            out.append(["…", False])
        return out
    head = flat[0]
    return [[_cut(head, width), False]]


def path_edges(hit_id: str, path: Iterable[str]) -> list[tuple[str, str, str]]:
    """The edges a hit's path names, as ``(src, dst, label)``: ``<-label-id(...)`` is an
    edge into the hit, ``label->id(...)`` one out of it."""
    out: list[tuple[str, str, str]] = []
    for step in path:
        m = _PATH.match(step)
        if m is None:
            continue
        if m.group("in"):
            out.append((m.group("src"), hit_id, m.group("in")))
        else:
            out.append((hit_id, m.group("dst"), m.group("out")))
    return out


@dataclass
class _Cluster:
    hub: str | None
    members: list[str] = field(default_factory=list)
    radius: float = 0.0
    x: float = 0.0
    y: float = 0.0


def _rings(count: int) -> list[int]:
    """How many satellites each ring around a hub holds, inner first."""
    rings: list[int] = []
    left = count
    j = 0
    while left > 0:
        cap = max(6, int(2 * math.pi * (RING0 + j * RING_STEP) / SLOT))
        rings.append(min(cap, left))
        left -= rings[-1]
        j += 1
    return rings


_PICTURE_EDGES = 40  # edges listed in the static picture


class MemoryGraph(BaseWidget):
    """A memory's entities, preferences, decisions and experiences as a pannable, zoomable
    graph (see the module docs for the layout).

    ``memory`` is a ``cx.Memory`` (or ``memory.widget()``). Node shape and colour say the
    type, edge style the label; a stale decision (its deadline passed) is dashed and marked.
    The search box runs ``memory.find`` in the kernel and highlights the hits, the edges of
    their paths and the nodes at the ends. Click a node to read it: its text, aliases,
    deadline, failure and fix, every source (session, seq, via, the verbatim quote; click the
    seq and ``selected_event`` becomes ``{"session": id, "seq": n}``), its edges in and out
    (click one to go to that node), and archive, rename and merge (the same validated calls
    as in Python). ``observations`` shows verbatim observations too. ``height`` is the
    graph's height in pixels; ``max_nodes`` caps what is drawn (the most connected first,
    search hits always).
    """

    _esm = bundle("memory_graph.js")
    _css = bundle_css("memory_graph.css")

    _graph = traitlets.Dict().tag(sync=True)
    """nodes (by column: id, type, label, tip, x, y, flags, deg), edges (by column: s, t as
    node indices, label), clusters (by column: x, y, r, hub), bounds [x0, y0, x1, y1]."""
    summary = traitlets.Dict().tag(sync=True)
    """Counts by type (total and drawn), edges, stale decisions, hidden nodes, location."""
    selected_event = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
    """The source event clicked last: ``{session, seq}`` (None before any)."""
    observations = traitlets.Bool(False).tag(sync=True, option=True)
    """Draw verbatim observations too."""
    height = traitlets.Int(520).tag(sync=True, option=True)
    """The graph's height in pixels."""
    max_nodes = traitlets.Int(400).tag(sync=True, option=True)
    """At most this many nodes are drawn (the most connected first, search hits always)."""
    session_map = traitlets.List(traitlets.Dict()).tag(sync=True)
    """The session map (``Memory.episodes``), a row per session, newest first: ``session``,
    ``label``, ``boxes`` (id, kind, name, at, text), ``hidden`` (older boxes not listed) and
    ``from`` (the parent's box a fork starts from: id, label; None)."""

    def __init__(
        self,
        memory: Memory,
        *,
        height: int = 520,
        max_nodes: int = 400,
        observations: bool = False,
        **kwargs: Any,
    ) -> None:
        self._check_keywords(kwargs)
        from ..memory import Memory

        if not isinstance(memory, Memory):
            raise TypeError(
                f"MemoryGraph() shows a cx.Memory (cx.Memory('memory.db')), not "
                f"{type(memory).__name__}"
            )
        if isinstance(max_nodes, bool) or not isinstance(max_nodes, int) or max_nodes < 1:
            raise InvalidArgument(f"max_nodes is a whole number >= 1, not {max_nodes!r}")
        self.memory: Memory = memory
        self._pinned_search: list[str] = []
        self._pinned_read: str | None = None
        self._drawn: set[str] = set()
        self._row_w = MIN_ROW_W
        self._loose_per_row = 1
        self._ready = False
        super().__init__(height=height, max_nodes=max_nodes, observations=observations, **kwargs)
        self._ready = True
        self.observe(self._on_option, names=["observations", "max_nodes"])
        self.refresh()

    def _on_option(self, _change: Any) -> None:
        if self._ready:
            self.refresh()

    # --- the payload -------------------------------------------------------------------------

    def _types(self) -> tuple[str, ...]:
        return (*SHOWN_TYPES, "observation") if self.observations else SHOWN_TYPES

    def refresh(self) -> MemoryGraph:
        """Re-read the memory (after changes made in Python) and redraw."""
        from ctxsdk.memory.kernel import is_stale

        mem = self.memory
        now = mem.now()
        types = self._types()
        everything = {
            n.id: n
            for n in mem.store.nodes()
            if n.type not in ("workspace", "episode") and n.active
        }
        pinned = [p for p in (*self._pinned_search, self._pinned_read or "") if p in everything]
        pool = {nid: n for nid, n in everything.items() if n.type in types or nid in pinned}
        edges: list[Edge] = []
        for nid in pool:
            for e in mem.store.edges(src=nid):
                if e.dst in pool and e.label in DRAWN_LABELS and e.dst != nid:
                    edges.append(e)
        degree = dict.fromkeys(pool, 0)
        for e in edges:
            degree[e.src] += 1
            degree[e.dst] += 1
        first = set(pinned)
        order = sorted(
            pool,
            key=lambda n: (
                n not in first,
                -degree[n],
                _TYPE_RANK.get(pool[n].type, 9),
                n,
            ),
        )
        cap = max(1, int(self.max_nodes))
        drawn_ids = order[: max(cap, len(first))]
        drawn = set(drawn_ids)
        drawn_edges = [e for e in edges if e.src in drawn and e.dst in drawn]
        ddeg = dict.fromkeys(drawn, 0)
        for e in drawn_edges:
            ddeg[e.src] += 1
            ddeg[e.dst] += 1
        clusters = self._layout(pool, drawn_ids, drawn_edges, ddeg)
        pos: dict[str, tuple[float, float]] = {}
        for c in clusters:
            self._place(c, pool, pos)
        # the columns, in drawing order (hubs first, then by cluster)
        ids = [nid for c in clusters for nid in ([c.hub] if c.hub else []) + c.members]
        at = {nid: i for i, nid in enumerate(ids)}
        cols: dict[str, list[Any]] = {
            k: [] for k in ("id", "type", "label", "tip", "x", "y", "flags", "deg")
        }
        stale_n = 0
        hubs = {c.hub for c in clusters if c.hub}
        for nid in ids:
            n = pool[nid]
            flags = 0
            if is_stale(n, now):
                flags |= STALE
                stale_n += 1
            if nid in hubs:
                flags |= HUB
            if nid in first:
                flags |= PINNED
            if n.until:
                flags |= UNTIL
            name = n.name or n.text
            label = _cut(name, _LABEL_CHARS)
            x, y = pos[nid]
            cols["id"].append(nid)
            cols["type"].append(n.type)
            cols["label"].append(label)
            full = neutralize(" ".join(name.split()))
            cols["tip"].append(_cut(name, _TIP_CHARS) if label != full else "")
            cols["x"].append(round(x, 1))
            cols["y"].append(round(y, 1))
            cols["flags"].append(flags)
            cols["deg"].append(ddeg[nid])
        ecols: dict[str, list[Any]] = {"s": [], "t": [], "label": []}
        for e in sorted(drawn_edges, key=lambda e: (at[e.src], at[e.dst], e.label)):
            ecols["s"].append(at[e.src])
            ecols["t"].append(at[e.dst])
            ecols["label"].append(e.label)
        ccols: dict[str, list[Any]] = {"x": [], "y": [], "r": [], "hub": []}
        for c in clusters:
            ccols["x"].append(round(c.x, 1))
            ccols["y"].append(round(c.y, 1))
            ccols["r"].append(round(c.radius, 1))
            ccols["hub"].append(at[c.hub] if c.hub else -1)
        xs, ys = cols["x"], cols["y"]
        bounds = [
            min(xs, default=0) - 120,
            min(ys, default=0) - 60,
            max(xs, default=0) + 120,
            max(ys, default=0) + 60,
        ]
        total = dict.fromkeys((*SHOWN_TYPES, "observation"), 0)
        for n in everything.values():
            if n.type in total:
                total[n.type] += 1
        shown = dict.fromkeys(total, 0)
        for nid in ids:
            shown[pool[nid].type] += 1
        hidden = {t: (total[t] - shown[t]) for t in types}
        summary = {
            "location": neutralize(mem.store.location),
            "total": total,
            "shown": shown,
            "hidden": sum(hidden.values()),
            "hidden_by_type": {t: n for t, n in hidden.items() if n},
            "edges": len(drawn_edges),
            "edges_total": len(edges),
            "stale": stale_n,
            "max_nodes": cap,
            "observations": bool(self.observations),
            "now": now.isoformat(timespec="minutes"),
        }
        self._drawn = drawn
        rows, summary["sessions"] = self._session_map()
        with self.hold_sync():
            self.revision += 1
            self._graph = {"nodes": cols, "edges": ecols, "clusters": ccols, "bounds": bounds}
            self.summary = summary
            self.session_map = rows
        return self

    def _session_map(self) -> tuple[list[dict[str, Any]], int]:
        """The rows of the session map strip (see ``session_map``), and how many sessions
        the map has in all."""
        mem = self.memory
        by_session: dict[str, list[Node]] = {}
        for box in mem.episodes():
            by_session.setdefault(str(box.extra.get("session")), []).append(box)
        newest = sorted(
            by_session, key=lambda s: (max(b.updated_at for b in by_session[s]), s), reverse=True
        )
        rows: list[dict[str, Any]] = []
        for sid in newest[:_MAP_SESSIONS]:
            boxes = by_session[sid]
            fork = [b for b in boxes if b.extra.get("kind") == "fork"]
            rest = [b for b in boxes if b.extra.get("kind") != "fork"]
            shown = fork + rest[-_MAP_BOXES:]
            origin = None
            for b in fork:
                for e in mem.store.edges(src=b.id, labels=["forks_from"]):
                    parent = mem.store.get(e.dst)
                    if parent is not None:
                        at = parent.extra.get("atSeq")
                        label = _cut(f"{short_id(str(parent.extra.get('session')))}#{at}", 80)
                        origin = {"id": parent.id, "label": label}
            rows.append(
                {
                    "session": sid,
                    "label": _cut(short_id(sid), 40),
                    "boxes": [
                        {
                            "id": b.id,
                            "kind": str(b.extra.get("kind")),
                            "name": _cut(b.name, 40),
                            "at": b.extra.get("atSeq"),
                            "text": _cut(b.text, _TIP_CHARS),
                        }
                        for b in shown
                    ],
                    "hidden": len(boxes) - len(shown),
                    "from": origin,
                }
            )
        return rows, len(by_session)

    def _layout(
        self,
        pool: dict[str, Node],
        drawn_ids: Sequence[str],
        edges: Sequence[Edge],
        degree: dict[str, int],
    ) -> list[_Cluster]:
        """Entities are hubs; every other node joins the hub it is linked to (see the module
        docs); the rest is a hub-less group at the end."""
        drawn = set(drawn_ids)
        entities = sorted(
            (n for n in drawn_ids if pool[n].type == "entity"), key=lambda n: (-degree[n], n)
        )
        rank = {n: i for i, n in enumerate(entities)}
        near: dict[str, list[str]] = {n: [] for n in drawn}
        supports: dict[str, list[str]] = {n: [] for n in drawn}
        for e in edges:
            if e.label in BUSINESS:
                near[e.src].append(e.dst)
                near[e.dst].append(e.src)
            elif e.label == "observed_in":
                supports[e.src].append(e.dst)
        home: dict[str, str | None] = {}

        def hub_of(nid: str) -> str | None:
            if nid in rank:
                return nid
            if nid in home:
                return home[nid]
            cands = [o for o in near[nid] if o in rank]
            home[nid] = min(cands, key=lambda o: rank[o]) if cands else None
            return home[nid]

        clusters = {h: _Cluster(h) for h in entities}
        loose = _Cluster(None)
        for nid in drawn_ids:
            if nid in rank:
                continue
            hub = hub_of(nid)
            if hub is None and pool[nid].type == "observation":
                for target in sorted(supports[nid]):
                    hub = hub_of(target) if target not in rank else target
                    if hub is not None:
                        break
            (clusters[hub] if hub is not None else loose).members.append(nid)
        out = [clusters[h] for h in entities]
        reading = _reading_order(pool, drawn_ids)
        for c in out:
            c.members.sort(key=lambda n: (_TYPE_RANK.get(pool[n].type, 9), reading[n]))
            rings = _rings(len(c.members))
            c.radius = (RING0 + (len(rings) - 1) * RING_STEP if rings else 24.0) + LABEL_ROOM
        # pack the hubs in rows, about ASPECT times as wide as high
        area = sum((2 * c.radius) ** 2 for c in out)
        row_w = max(
            MIN_ROW_W, math.sqrt(area * ASPECT), max((2 * c.radius for c in out), default=0)
        )
        self._row_w = row_w
        x = y = 0.0
        row_h = 0.0
        for c in out:
            d = 2 * c.radius
            if x > 0 and x + d > row_w + 1:
                x = 0.0
                y += row_h
                row_h = 0.0
            c.x, c.y = x + c.radius, y + c.radius
            x += d
            row_h = max(row_h, d)
        if loose.members:
            # in reading order: a memory sits just before the observation it was read from,
            # so its observed_in edge is short and the grid reads as the sessions went
            loose.members.sort(key=lambda n: reading[n])
            # the grid about ASPECT times as wide as high, at least as wide as the hubs' rows
            square = math.ceil(math.sqrt(len(loose.members) * ASPECT * GRID_H / GRID_W))
            per_row = max(1, int(row_w // GRID_W), square)
            self._loose_per_row = per_row
            rows = math.ceil(len(loose.members) / per_row)
            loose.x = 0.0
            loose.y = y + row_h + (40.0 if out else 0.0)
            loose.radius = rows * GRID_H
            out.append(loose)
        return out

    def _place(
        self, c: _Cluster, pool: dict[str, Node], pos: dict[str, tuple[float, float]]
    ) -> None:
        if c.hub is None:
            per_row = self._loose_per_row
            for i, nid in enumerate(c.members):
                r, k = divmod(i, per_row)
                pos[nid] = (c.x + GRID_W / 2 + k * GRID_W, c.y + GRID_H / 2 + r * GRID_H)
            return
        pos[c.hub] = (c.x, c.y)
        at = 0
        for j, count in enumerate(_rings(len(c.members))):
            radius = RING0 + j * RING_STEP
            turn = (j % 2) * math.pi / max(count, 1)  # alternate rings are offset
            for k in range(count):
                a = -math.pi / 2 + turn + 2 * math.pi * k / count
                pos[c.members[at]] = (c.x + radius * math.cos(a), c.y + radius * math.sin(a))
                at += 1

    def _repr_fields(self) -> list[str]:
        s = self.summary
        shown = s.get("shown", {})
        total = s.get("total", {})
        parts = [
            f"{shown.get(t, 0)}/{total.get(t, 0)} {t}" for t in self._types() if total.get(t, 0)
        ]
        return [
            ", ".join(parts) or "empty",
            _plural(int(s.get("edges", 0)), "edge"),
            f"{s.get('hidden', 0)} hidden",
        ]

    def _picture_body(self) -> str:
        """The drawn nodes by type and the edges between them, as tables (a Memory has no
        HTML form of its own)."""
        nodes, edges = self._graph.get("nodes", {}), self._graph.get("edges", {})
        labels: list[str] = list(nodes.get("label", []))
        by_type: dict[str, list[str]] = {}
        for kind, label in zip(nodes.get("type", []), labels, strict=False):
            by_type.setdefault(kind, []).append(label)
        kinds = table(("type", "nodes"), [(k, "; ".join(v)) for k, v in by_type.items()])
        ends = zip(edges.get("s", []), edges.get("t", []), edges.get("label", []), strict=True)
        links = [(labels[a], label, labels[b]) for a, b, label in ends]
        more = len(links) - _PICTURE_EDGES
        tail = f"<div class='cx-muted'>… {more:,} more edges</div>" if more > 0 else ""
        pairs = table(("from", "edge", "to"), links[:_PICTURE_EDGES]) if links else ""
        return kinds + pairs + tail

    # --- helpers for the handlers --------------------------------------------------------------

    @staticmethod
    def _ref(value: Any, what: str = "a node") -> str:
        if not isinstance(value, str) or not value.strip():
            raise InvalidArgument(f"{what} is named by its id (a non-empty string), not {value!r}")
        return value.strip()

    def _view(self, ref: str) -> dict[str, Any]:
        from ctxsdk.memory.kernel import is_stale

        mem = self.memory
        view = mem.read(ref)
        n = view.node
        now = mem.now()

        def source(s: Any) -> dict[str, Any]:
            return {
                "session": s.session,
                "short": _cut(short_id(s.session or ""), 40),
                "seq": s.seq,
                "via": neutralize(s.via),
                "quote": _cut(s.quote, _QUOTE_CHARS) if s.quote else "",
            }

        def edge(e: Edge, other: Node) -> dict[str, Any]:
            return {
                "id": other.id,
                "type": other.type,
                "name": _cut(other.name or other.text, 80),
                "label": e.label,
                "active": other.active,
                "drawn": other.id in self._drawn,
            }

        choices: list[dict[str, str]] = []
        same = 0
        if n.active and n.type not in ("workspace", "episode"):
            for other in mem.store.nodes(types=[n.type]):
                if other.id == n.id:
                    continue
                same += 1
                if len(choices) < _MAX_CHOICES:
                    choices.append({"id": other.id, "name": _cut(other.name or other.text, 70)})
        return {
            "id": n.id,
            "type": n.type,
            "name": neutralize(n.name),
            "text": neutralize(n.text[:_TEXT_CHARS]),
            "aliases": [neutralize(a) for a in n.aliases],
            "uri": neutralize(n.uri),
            "status": n.status,
            "until": _shown(n.until),
            "until_at": _shown(n.until_at),
            "stale": is_stale(n, now),
            "fail": _shown(n.fail),
            "fix": _shown(n.fix),
            "created": n.created_at,
            "updated": n.updated_at,
            "sources": [source(s) for s in n.sources],
            "incoming": [edge(e, o) for e, o in view.incoming if o.type != "workspace"],
            "outgoing": [edge(e, o) for e, o in view.outgoing if o.type != "workspace"],
            "drawn": n.id in self._drawn,
            "merge_choices": choices,
            "merge_total": same,
        }

    # --- requests from the front end -----------------------------------------------------------

    @handler("refresh")
    def _refresh(self) -> dict[str, Any]:
        """The ↻ button: re-read the memory."""
        self.refresh()
        return {"revision": self.revision}

    @handler("search")
    def _search(self, query: Any = "", top_k: Any = 8) -> dict[str, Any]:
        """``memory.find(query)``: the hits and the edges of their paths. Hits and the nodes
        at their paths' ends are drawn even when ``max_nodes`` would hide them."""
        if not isinstance(query, str):
            raise InvalidArgument(f"a search query is a text, not {query!r}")
        if isinstance(top_k, float) and top_k.is_integer():
            top_k = int(top_k)
        if isinstance(top_k, bool) or not isinstance(top_k, int):
            raise InvalidArgument(f"top_k is a whole number 1..100, not {top_k!r}")
        query = " ".join(query.split())
        if not query:
            if self._pinned_search:
                self._pinned_search = []
                self.refresh()
            return {"query": "", "hits": [], "edges": [], "nodes": [], "revision": self.revision}
        found = self.memory.find(query, top_k=top_k)
        hits = []
        edges: list[tuple[str, str, str]] = []
        ends: list[str] = []
        for h in found:
            pe = path_edges(h.node.id, h.path)
            for e in pe:
                if e not in edges:
                    edges.append(e)
                for end in (e[0], e[1]):
                    if end != h.node.id and end not in ends:
                        ends.append(end)
            hits.append(
                {
                    "id": h.node.id,
                    "type": h.node.type,
                    "name": _cut(h.node.name or h.node.text, 80),
                    "text": neutralize(h.short),
                    "snippet": snippet(
                        [h.node.text, h.node.name, *(src.quote for src in h.node.sources)],
                        query,
                    ),
                    "score": round(h.score, 3),
                    "via": h.via,
                    "stale": h.stale,
                    "until": _shown(h.node.until),
                    "path": [neutralize(p) for p in h.path],
                }
            )
        hit_ids = [h["id"] for h in hits]
        want = [*hit_ids, *(e for e in ends if e not in hit_ids)]
        if want != self._pinned_search or not set(want) <= self._drawn:
            self._pinned_search = want
            self.refresh()
        return {
            "query": neutralize(query),
            "hits": hits,
            "edges": [list(e) for e in edges],
            "nodes": [e for e in ends if e not in hit_ids],
            "revision": self.revision,
        }

    @handler("read")
    def _read(self, node: Any) -> dict[str, Any]:
        """``memory.read(id)`` for the panel; the node is drawn if it was hidden."""
        ref = self._ref(node)
        found = self.memory.store.get(ref)
        if found is None:
            raise NotFound(f"no memory {ref!r} (it may have been merged or deleted)")
        if found.active and found.id not in self._drawn and found.type not in _NEVER:
            self._pinned_read = found.id
            self.refresh()
        return self._view(found.id)

    @handler("select_event")
    def _select_event(self, session: Any, seq: Any, node: Any = None) -> dict[str, Any]:
        """A source's seq was clicked: ``selected_event = {session, seq}``."""
        if not isinstance(session, str) or not session:
            raise InvalidArgument(f"an event's session is a session id, not {session!r}")
        if isinstance(seq, bool) or not isinstance(seq, int) or seq < 0:
            raise InvalidArgument(f"an event's seq is a whole number >= 0, not {seq!r}")
        nodes: list[Node]
        if node is not None:
            one = self.memory.store.get(self._ref(node))
            nodes = [one] if one is not None else []
        else:
            nodes = self.memory.store.nodes(include_archived=True)
        if not any(s.session == session and s.seq == seq for n in nodes for s in n.sources):
            raise NotFound(f"no memory has a source at {short_id(session)}#{seq}")
        self.selected_event = {"session": session, "seq": seq}
        return dict(self.selected_event)

    @handler("archive")
    def _archive(self, node: Any) -> dict[str, Any]:
        """``memory.archive(id)``: hidden from search, the map and the graph."""
        done = self.memory.archive(self._ref(node))
        if self._pinned_read == done.id:
            self._pinned_read = None
        self.refresh()
        return {"node": done.id, "status": done.status, "revision": self.revision}

    @handler("restore")
    def _restore(self, node: Any) -> dict[str, Any]:
        """``memory.restore(id)``: an archived memory back."""
        done = self.memory.restore(self._ref(node))
        self.refresh()
        return {"node": done.id, "status": done.status, "revision": self.revision}

    @handler("rename")
    def _rename(self, node: Any, name: Any) -> dict[str, Any]:
        """``memory.rename(id, name)``."""
        if not isinstance(name, str):
            raise InvalidArgument(f"a name is a text, not {name!r}")
        done = self.memory.rename(self._ref(node), name)
        self.refresh()
        return {"node": done.id, "name": neutralize(done.name), "revision": self.revision}

    @handler("merge")
    def _merge(self, keep: Any, drop: Any) -> dict[str, Any]:
        """``memory.merge(keep, drop)`` (one type only)."""
        a = self._ref(keep, "the memory to keep")
        b = self._ref(drop, "the memory to merge into it")
        kept = self.memory.merge(a, b)
        self._pinned_search = [p for p in self._pinned_search if p != b]
        self.refresh()
        return {"node": kept.id, "dropped": b, "revision": self.revision}


def _static_files() -> list[Path]:
    """The front-end files this widget is built from (for tests and docs)."""
    from ._bundle import static_files

    return static_files("memory_graph")
