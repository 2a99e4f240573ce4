"""``CheckpointGraph``: a Fold's checkpoints, or a workspace's sessions, as a graph.

For a ``Fold`` everything comes from the engine's public API: ``records`` (every fold, with
its mode, archived seqs, tokens, bundle hashes and the children of a root), ``frontier()``
(system head, frozen checkpoints, first open node), ``recall`` (exact messages, verified),
``reader().verify`` (one bundle's health) and ``session`` (surface, tokens, ``fork``). For a
``Workspace``: ``sessions()`` and ``tree()``; with a fold ``store``, the records of the
sessions that have bundles in it. The widget lays the graph out here, deterministically (one
column per slot, children under their parent), and answers the front end's requests over the
channel of ``BaseWidget``: ``checkpoint`` (its state), ``recall`` (a page of exact messages
with the verification status), ``fork`` and ``session``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import traitlets

from ..errors import BundleMissing, CorruptBundle, InvalidArgument, NotFound
from ..fold import FileBundleStore, Fold, FoldRecord
from ..fold.kernel import MAX_PAGE
from ..session import LineageNode, Message, Session, TokenCounter, Workspace
from ..session.kernel import gist, node_tokens
from ._base import BaseWidget, handler, panel_text
from ._bundle import bundle, bundle_css

__all__ = ["CheckpointGraph"]

# Node flags (the front end reads the same bits).
FROZEN, SUPERSEDED, RECALLABLE, INHERITED, FOCUS, UNREADABLE, LIVE = 1, 2, 4, 8, 16, 32, 64

# Layout, in graph units (SVG user space before the pan / zoom transform).
SLOT_W, NODE_W, NODE_H, LEVEL_H, FRONTIER_GAP = 210, 186, 66, 104, 56
WRAP = 10  # slots in a row of the frozen prefix
WS_GAP = 120  # between a session and its children: room for the edge's label
_MAX_OPEN_LISTED = 200


@dataclass
class _Node:
    id: str
    kind: str  # head | checkpoint | compaction | superseded | mask | open | session | missing
    label: str
    sub: str
    mode: str = ""
    tokens: int = 0
    flags: int = 0
    ref: str = ""  # cp:<id> for a fold record, the session id for a session
    children: list[_Node] = field(default_factory=list)
    edge: str = "child"  # the kind of the edge from its parent
    edge_label: str = ""
    x: float = 0.0
    y: float = 0.0


def _span(node: _Node) -> int:
    """The slots a node's subtree needs side by side."""
    return max(1, sum(_span(c) for c in node.children))


def _place(node: _Node, left: float, level: int) -> None:
    """Children under their parent, left to right; the parent centred over them."""
    width = _span(node)
    node.x = left + (width * SLOT_W) / 2 - NODE_W / 2
    node.y = level * LEVEL_H
    at = left
    for c in node.children:
        _place(c, at, level + 1)
        at += _span(c) * SLOT_W


def _depth(node: _Node) -> int:
    """Levels under a node (0 for a leaf)."""
    return max((_depth(c) + 1 for c in node.children), default=0)


def _place_rows(node: _Node, top: float, depth: int) -> float:
    """A horizontal tree for lineage: depth to the right, one row per leaf; the next free
    row's top is returned."""
    node.x = depth * (NODE_W + WS_GAP)
    if not node.children:
        node.y = top
        return top + LEVEL_H * 0.9
    at = top
    for c in node.children:
        at = _place_rows(c, at, depth + 1)
    first, last = node.children[0].y, node.children[-1].y
    node.y = (first + last) / 2
    return at


def _walk(nodes: Sequence[_Node]) -> list[tuple[_Node, _Node | None]]:
    out: list[tuple[_Node, _Node | None]] = []
    stack: list[tuple[_Node, _Node | None]] = [(n, None) for n in reversed(nodes)]
    while stack:
        n, parent = stack.pop()
        out.append((n, parent))
        stack.extend((c, n) for c in reversed(n.children))
    return out


def _columns(
    lane: Sequence[_Node], lane_edges: Sequence[tuple[str, str, str, str]]
) -> dict[str, Any]:
    """Nodes by column, edges as lists, and the bounds (in graph units)."""
    flat = _walk(lane)
    cols: dict[str, list[Any]] = {
        k: [] for k in ("id", "kind", "label", "sub", "mode", "tokens", "flags", "ref", "x", "y")
    }
    edges: dict[str, list[Any]] = {"source": [], "target": [], "kind": [], "label": []}
    for n, parent in flat:
        cols["id"].append(n.id)
        cols["kind"].append(n.kind)
        cols["label"].append(n.label)
        cols["sub"].append(n.sub)
        cols["mode"].append(n.mode)
        cols["tokens"].append(n.tokens)
        cols["flags"].append(n.flags)
        cols["ref"].append(n.ref)
        cols["x"].append(round(n.x, 1))
        cols["y"].append(round(n.y, 1))
        if parent is not None:
            edges["source"].append(parent.id)
            edges["target"].append(n.id)
            edges["kind"].append(n.edge)
            edges["label"].append(n.edge_label)
    for source, target, kind, label in lane_edges:
        edges["source"].append(source)
        edges["target"].append(target)
        edges["kind"].append(kind)
        edges["label"].append(label)
    xs, ys = cols["x"], cols["y"]
    bounds = [min(xs, default=0), min(ys, default=0), max(xs, default=0) + NODE_W]
    bounds.append(max(ys, default=0) + NODE_H)
    return {"nodes": cols, "edges": edges, "bounds": bounds, "node": [NODE_W, NODE_H]}


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


class CheckpointGraph(BaseWidget):
    """A fold's checkpoints, or a workspace's sessions, as a pannable, zoomable graph.

    ``target`` is a ``Fold`` (the system head, the frozen checkpoints on the surface, the
    checkpoints a root rebase merged under it, masking passes, the frontier and the open
    tail; click a checkpoint for its state, its exact messages (recalled and verified) and
    "fork from here") or a ``Workspace`` (sessions with their fork and subagent edges; with
    ``store=`` a fold bundle store, each folded session's checkpoint count). ``height`` is
    the graph's height in pixels. "Fork from here" writes the child next to the session in
    its DSH home, as the harness does, or under ``fork_root`` (a sessions root) when given:
    a log outside a DSH home needs one. After folds made in Python, ``refresh()`` shows them.
    """

    _esm = bundle("checkpoint_graph.js")
    _css = bundle_css("checkpoint_graph.css")

    height = traitlets.Int(460).tag(sync=True, option=True)
    """The graph's height in pixels."""

    _graph = traitlets.Dict().tag(sync=True)
    """nodes (by column: id, kind, label, sub, mode, tokens, flags, ref, x, y), edges
    (source, target, kind, label), bounds, node size, frontier (x of the boundary)."""
    summary = traitlets.Dict().tag(sync=True)
    """The figures the header shows (tokens of head / frozen / open, counts)."""
    title = traitlets.Dict().tag(sync=True)
    """What is drawn: kind (fold or workspace), name, short id, the fold's policy."""

    def __init__(
        self,
        target: Fold | Workspace,
        *,
        store: str | Path | FileBundleStore | None = None,
        fork_root: str | Path | None = None,
        height: int = 460,
        **kwargs: Any,
    ) -> None:
        self._check_keywords(kwargs)
        if isinstance(target, Fold):
            if store is not None:
                raise TypeError(
                    "CheckpointGraph(fold) reads the fold's own store; pass store= to "
                    "Fold(...) instead (store= here is for a Workspace)"
                )
            self.fold: Fold | None = target
            self.workspace: Workspace | None = None
        elif isinstance(target, Workspace):
            self.fold = None
            self.workspace = target
        else:
            raise TypeError(
                f"CheckpointGraph() shows a Fold or a Workspace, not {type(target).__name__}"
            )
        self.store: FileBundleStore | None = (
            store if isinstance(store, FileBundleStore) or store is None else FileBundleStore(store)
        )
        self.fork_root = Path(fork_root) if fork_root is not None else None
        self._records: dict[str, FoldRecord] = {}
        self._rows: dict[str, dict[str, Any]] = {}
        self._folded: dict[str, tuple[int, int]] = {}
        super().__init__(height=height, **kwargs)
        self._rebuild()

    # --- the graph -----------------------------------------------------------------------------

    def refresh(self) -> CheckpointGraph:
        """Re-read the fold or the workspace (after folds, forks or new sessions)."""
        self._rebuild()
        return self

    def _rebuild(self) -> None:
        graph, summary, title = self._fold_graph() if self.fold is not None else self._ws_graph()
        with self.hold_sync():
            self.revision += 1
            self._graph = graph
            self.summary = summary
            self.title = title

    def _fold_graph(self) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        f = self.fold
        assert f is not None
        s = f.session
        records = f.records
        self._records = {r.checkpoint_id: r for r in records}
        shown_id = _short_checkpoint_ids([r.checkpoint_id for r in records])
        frontier = f.frontier()
        surface = s.surface()
        # The engine's own split of the surface (its tokenizer); per-node counts for the boxes.
        pressure = f.pressure()
        tokens = node_tokens(s, TokenCounter(f.tokenizer))
        head_tokens, frozen_tokens = pressure.head, pressure.frozen
        open_tokens = pressure.open

        made: set[str] = set()

        def record_node(rec: FoldRecord, kind: str, flags: int, current: int | None) -> _Node:
            made.add(rec.checkpoint_id)
            shown = rec.checkpoint_tokens if current is None else current
            span = f"seq {rec.shadowed[0]}–{rec.shadowed[-1]}" if rec.shadowed else ""
            node = _Node(
                id=f"cp:{rec.checkpoint_id}",
                kind=kind,
                label=f"{rec.mode} · cp:{shown_id[rec.checkpoint_id]}",
                sub=f"{_plural(len(rec.shadowed), 'node')} · {rec.shadowed_tokens:,} → "
                f"{shown:,} tok",
                mode=rec.mode,
                tokens=shown,
                flags=flags | RECALLABLE | (INHERITED if rec.inherited else 0),
                ref=f"cp:{rec.checkpoint_id}",
                edge_label=span,
            )
            for child in rec.children:
                sub = self._records.get(child)
                if sub is None or child in made:
                    continue
                kid = record_node(sub, "superseded", SUPERSEDED, None)
                kid.edge = "merged"
                # One label for the group: side by side, a label per edge reads as one run
                # ("merged by rebase merged by rebase") and crosses the dashed edges.
                kid.edge_label = (
                    "" if any(k.edge == "merged" for k in node.children) else "merged by rebase"
                )
                node.children.append(kid)
            return node

        lane: list[_Node] = [
            _Node(
                id="head",
                kind="head",
                label="system head",
                sub=f"{_plural(frontier.head, 'node')} · {head_tokens:,} tok",
                tokens=head_tokens,
                flags=FROZEN,
            )
        ]
        for c in frontier.frozen:
            rec = self._records.get(c.checkpoint_id or "")
            if rec is not None:
                lane.append(record_node(rec, "checkpoint", FROZEN | LIVE, tokens[c.position]))
            else:  # a harness compaction checkpoint (or a fold whose record is unreadable)
                lane.append(
                    _Node(
                        id=f"seq:{c.seq}",
                        kind="compaction",
                        label=f"{c.mode} · seq {c.seq}",
                        sub=f"harness checkpoint · {tokens[c.position]:,} tok",
                        mode=c.mode,
                        tokens=tokens[c.position],
                        flags=FROZEN | LIVE,
                        ref=f"seq:{c.seq}",
                    )
                )
        open_node = _Node(
            id="open",
            kind="open",
            label="open tail",
            sub=f"{_plural(frontier.open_nodes, 'node')} · {open_tokens:,} tok",
            tokens=open_tokens,
        )
        lane.append(open_node)
        # Masking passes rewrite tool results in place: live while a surface node still
        # replaces one of the results they masked.
        replaced = {seq for n in surface if n.shadowed for seq in n.shadowed}
        masks = [r for r in records if r.mode == "mask"]
        for rec in masks:
            node = record_node(rec, "mask", 0, None)
            live = any(seq in replaced for seq in rec.shadowed)
            node.sub = (
                f"{_plural(len(rec.shadowed), 'result')} masked · {rec.shadowed_tokens:,} tok"
            )
            node.flags |= LIVE if live else SUPERSEDED
            node.edge = "mask"
            node.edge_label = "on the surface" if live else "since folded"
            open_node.children.append(node)
        # A fold whose checkpoint left the surface without a root naming it (a harness
        # compaction over it, say) still has its bundle: list it after the open tail.
        strays = [r for r in records if r.checkpoint_id not in made]
        for rec in strays:
            node = record_node(rec, "superseded", SUPERSEDED, None)
            node.edge = "off"
            lane.append(node)

        # The frozen prefix wraps into rows of at most WRAP slots (a long prefix stays a
        # block, not a thin line); the open tail and what follows it sit right of the frontier.
        at = lane.index(open_node)
        rows: list[list[_Node]] = [[]]
        used = 0
        for n in lane[:at]:
            if rows[-1] and used + _span(n) > WRAP:
                rows.append([])
                used = 0
            rows[-1].append(n)
            used += _span(n)
        level, right = 0, 0.0
        wraps: set[str] = set()
        for row in rows:
            left = 0.0
            for n in row:
                _place(n, left, level)
                left += _span(n) * SLOT_W
            wraps.add(row[0].id)
            level += max(_depth(n) for n in row) + 1
            right = max(right, left)
        left = right + FRONTIER_GAP  # room for the frontier between frozen and open
        for n in lane[at:]:
            _place(n, left, 0)
            left += _span(n) * SLOT_W
        lane_edges = [
            (a.id, b.id, "wrap" if b.id in wraps else "surface", "")
            for a, b in itertools.pairwise(lane)
            if b.kind != "superseded"
        ]
        graph = _columns(lane, lane_edges)
        graph["frontier"] = right + FRONTIER_GAP / 2
        graph["layout"] = "fold"
        summary = {
            "surface": sum(tokens),
            "head": head_tokens,
            "frozen": frozen_tokens,
            "open": open_tokens,
            "checkpoints": len(frontier.checkpoint_ids),
            "frozen_nodes": len(frontier.frozen),
            "open_nodes": frontier.open_nodes,
            "folds": len(records),
            "masks": len(masks),
            "problem": frontier.problem,
            "tokenizer": f.tokenizer,
            "path": str(s.path) if s.path is not None else None,
            "can_fork": s.path is not None,
        }
        title = {
            "kind": "fold",
            "name": s.title or s.id[:8],
            "id": s.id[:8],
            "policy": f.policy.name,
        }
        return graph, summary, title

    def _ws_graph(self) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        ws = self.workspace
        assert ws is not None
        rows = ws.sessions().to_dicts()
        self._rows = {str(r["id"]): r for r in rows}
        folded = self._folded = self._folded_sessions()
        made: set[str] = set()
        edges_n = {"fork": 0, "subagent": 0, "child": 0}

        def build(ln: LineageNode) -> _Node:
            made.add(ln.id)
            row = self._rows.get(ln.id, {})
            events = row.get("events")
            cps = folded.get(ln.id)
            sub = f"{events:,} events" if isinstance(events, int) else "not readable"
            if cps is not None:
                sub += f" · {_plural(cps[0], 'checkpoint')}"
            node = _Node(
                id=ln.id,
                kind="session" if ln.readable else "missing",
                label=_short(ln.title or ln.id[:8], 22),
                sub=sub,
                mode=ln.kind,
                tokens=cps[0] if cps is not None else 0,
                flags=(0 if ln.readable else UNREADABLE) | (FROZEN if cps else 0),
                ref=ln.id,
            )
            for c in ln.children:
                if c.id in made:
                    continue
                kid = build(c)
                kid.edge = c.kind
                edges_n[c.kind] = edges_n.get(c.kind, 0) + 1
                if c.kind == "fork":
                    at = self._fork_seq(c.id)
                    kid.edge_label = f"fork at seq {at}" if at is not None else "fork"
                else:
                    kid.edge_label = c.kind
                node.children.append(kid)
            return node

        roots: list[_Node] = []
        for r in sorted(rows, key=lambda r: (str(r.get("created") or ""), str(r["id"]))):
            sid = str(r["id"])
            parent = r.get("parent")
            if sid in made or (parent is not None and parent in self._rows):
                continue
            tree = ws.tree(sid, from_root=False)
            roots.append(build(tree.root))
        for r in rows:  # sessions inside a parent cycle: no root reaches them
            if str(r["id"]) not in made:
                roots.append(build(ws.tree(str(r["id"]), from_root=False).root))
        top = 0.0
        for n in roots:
            top = _place_rows(n, top, 0) + LEVEL_H * 0.3
        graph = _columns(roots, [])
        graph["frontier"] = None
        graph["layout"] = "workspace"
        summary = {
            "sessions": len(rows),
            "roots": len(roots),
            "forks": edges_n.get("fork", 0),
            "subagents": edges_n.get("subagent", 0),
            "folded": len(folded),
            "checkpoints": sum(c for c, _ in folded.values()),
            "store": str(self.store.root) if self.store is not None else None,
        }
        title = {"kind": "workspace", "name": str(ws.root), "id": "", "policy": ""}
        return graph, summary, title

    def _folded_sessions(self) -> dict[str, tuple[int, int]]:
        """Session id -> (checkpoints on its surface, folds over its life), for the sessions
        with bundles in the store (only those are opened)."""
        if self.store is None or self.workspace is None:
            return {}
        out: dict[str, tuple[int, int]] = {}
        owners = sorted({b.session_id for b in self.store.bundles()})
        for sid in owners:
            if sid not in self._rows:
                continue
            try:
                f = Fold(Session.open(str(self._rows[sid]["path"])), store=self.store, write=False)
                out[sid] = (len(f.frontier().checkpoint_ids), len(f.records))
            except (OSError, ValueError, KeyError):
                continue  # an unreadable session shows as such; no count
        return out

    def _fork_seq(self, child_id: str) -> int | None:
        # The listing has no seed length (the engine should carry it): a fork's cut is the
        # last inherited event, read from the child itself.
        row = self._rows.get(child_id)
        if row is None or not row.get("path"):
            return None
        try:  # by the listed path: ws.open(id) would list the workspace again, per child
            child = Session.open(str(row["path"]))
        except (OSError, ValueError, KeyError):
            return None
        n = child.inherited_event_count
        return n - 1 if n > 0 else None

    def _repr_fields(self) -> list[str]:
        s = self.summary
        if self.fold is not None:
            return [
                self.fold.session.id[:8],
                f"{s.get('checkpoints', 0)} checkpoints",
                f"{s.get('folds', 0)} folds",
                f"{s.get('open_nodes', 0)} open nodes",
            ]
        return [f"{s.get('sessions', 0)} sessions", f"{s.get('forks', 0)} forks"]

    # --- requests from the front end -----------------------------------------------------------

    def _fold_or_refuse(self, what: str) -> Fold:
        if self.fold is None:
            raise InvalidArgument(f"{what} needs a Fold target; this graph shows a workspace")
        return self.fold

    def _record(self, ref: Any) -> FoldRecord:
        if not isinstance(ref, str) or not ref.startswith("cp:"):
            raise InvalidArgument(f"a checkpoint is named 'cp:<id>', not {ref!r}")
        rec = self._records.get(ref[3:])
        if rec is None:
            raise NotFound(f"no checkpoint {ref} in this fold (it may have changed: refresh)")
        return rec

    @handler("refresh")
    def _refresh(self) -> dict[str, Any]:
        self.refresh()
        return {"revision": self.revision}

    @handler("checkpoint")
    def _checkpoint(self, ref: str) -> dict[str, Any]:
        """A node's state: a checkpoint's text and record, a harness checkpoint's text, the
        system head or the open tail."""
        f = self._fold_or_refuse("a checkpoint's state")
        s = f.session
        if ref == "head" or ref == "open":
            frontier = f.frontier()
            surface = s.surface()
            nodes = surface[: frontier.head] if ref == "head" else surface[frontier.first_open :]
            tokens = node_tokens(s, TokenCounter(f.tokenizer))
            part = tokens[: frontier.head] if ref == "head" else tokens[frontier.first_open :]
            return {
                "ref": ref,
                "kind": ref,
                "nodes": [
                    {
                        "seq": n.seq,
                        "role": _role(n.message),
                        "gist": gist(n.message.to_json_dict(), 140),
                        "tokens": t,
                    }
                    for n, t in list(zip(nodes, part, strict=True))[:_MAX_OPEN_LISTED]
                ],
                "count": len(nodes),
                "tokens": sum(part),
                "text": panel_text(s.system_prompt or "")
                if ref == "head" and s.version < 3
                else "",
            }
        if ref.startswith("seq:"):
            seq = int(ref[4:])
            return {
                "ref": ref,
                "kind": "compaction",
                "seq": seq,
                "text": panel_text(s.message_at(seq).text),
                "recallable": False,
                "why": "a harness compaction checkpoint: its messages were not archived in a "
                "fold bundle, so there is nothing to recall",
            }
        rec = self._record(ref)
        status = f.reader().verify(rec.checkpoint_id, file_sha256=rec.file_sha256)
        text = rec.text
        if not text:  # a masking pass has no checkpoint text: the summary lists what it holds
            try:
                text = f.recall(ref, "summary").text
            except (BundleMissing, CorruptBundle) as exc:
                text = f"(no summary: {getattr(exc, 'reason', str(exc))})"
        return {
            "ref": ref,
            "kind": "checkpoint",
            "id": rec.checkpoint_id,
            "mode": rec.mode,
            "policy": rec.policy,
            "text": panel_text(text),
            "shadowed": len(rec.shadowed),
            "first_seq": rec.shadowed[0] if rec.shadowed else None,
            "last_seq": rec.shadowed[-1] if rec.shadowed else None,
            "record_seq": rec.record_seq,
            "checkpoint_seq": rec.checkpoint_seq,
            "shadowed_tokens": rec.shadowed_tokens,
            "checkpoint_tokens": rec.checkpoint_tokens,
            "tokenizer": rec.tokenizer,
            "messages": rec.messages,
            "bytes": rec.bytes,
            "file_sha256": rec.file_sha256,
            "logical_hash": rec.logical_hash,
            "bundle_session": rec.bundle_session,
            "children": [f"cp:{c}" for c in rec.children],
            "inherited": rec.inherited,
            "on_surface": rec.checkpoint_id in f.frontier().checkpoint_ids,
            "status": status.state,
            "reason": status.reason,
            "recallable": True,
            "fork": self._fork_at(f, rec),
        }

    @handler("recall")
    def _recall(self, ref: str, offset: int = 0, limit: int = MAX_PAGE) -> dict[str, Any]:
        """``fold.recall(ref, "exact", offset, limit)``: a page of the exact archived messages,
        verified; or the status ``missing`` / ``corrupt`` with the reason and no messages."""
        f = self._fold_or_refuse("recall")
        rec = self._record(ref)
        base = {"ref": ref, "offset": offset, "total": rec.messages}
        try:
            r = f.recall(ref, "exact", offset=offset, limit=limit)
        except CorruptBundle as exc:
            return {**base, "status": "corrupt", "problem": exc.problem, "reason": exc.reason}
        except BundleMissing as exc:
            return {**base, "status": "missing", "reason": str(exc)}
        return {
            **base,
            "status": "verified" if r.verified else "unverified",
            "total": r.total,
            "next_offset": r.next_offset,
            "logical_hash": r.logical_hash,
            "messages": [
                {"seq": seq, **_message_view(m)} for seq, m in zip(r.seqs, r.messages, strict=True)
            ],
        }

    @handler("fork")
    def _fork(self, ref: str) -> dict[str, Any]:
        """``session.fork(at_seq)`` as the harness forks, after the checkpoint's fold: at the
        first turn boundary at or after its record."""
        f = self._fold_or_refuse("fork")
        rec = self._record(ref)
        plan = self._fork_at(f, rec)
        if plan["at_seq"] is None:
            raise InvalidArgument(plan["why"])
        child = f.session.fork(at_seq=plan["at_seq"], dest_root=self.fork_root)
        return {
            "ref": ref,
            "at_seq": plan["at_seq"],
            "child_id": child.id,
            "path": str(child.path) if child.path is not None else None,
        }

    @staticmethod
    def _fork_at(f: Fold, rec: FoldRecord) -> dict[str, Any]:
        """Where "fork from here" cuts: the first seq the session can be forked after, at or
        after the fold's record (so the fold's whole transaction is inherited)."""
        s = f.session
        if s.path is None:
            return {
                "at_seq": None,
                "why": "this session was not read from a file, so there is no log to fork "
                "next to; save it first (s.save(path)) and fold the saved copy",
            }
        point = f.fork_point(rec.checkpoint_id)
        if point is None:
            return {
                "at_seq": None,
                "why": f"no turn ends after the fold's record (seq {rec.record_seq}): the turn "
                f"it was made in is still open at the end of the log (seq {len(s) - 1}); "
                "fork session.repaired() to close it",
            }
        return {"at_seq": point, "why": ""}

    @handler("session")
    def _session(self, ref: str) -> dict[str, Any]:
        """A workspace session: its listing row (and, when folded, its checkpoints)."""
        if self.workspace is None:
            raise InvalidArgument("a session's row needs a Workspace target")
        row = self._rows.get(ref)
        if row is None:
            raise NotFound(f"no session {ref!r} in this workspace (refresh?)")
        out = {
            k: (v if isinstance(v, str | int | float | bool) or v is None else str(v))
            for k, v in row.items()
        }
        counts = self._folded.get(ref)
        out["checkpoints"] = counts[0] if counts else None
        out["folds"] = counts[1] if counts else None
        parent = row.get("parent")
        out["fork_seq"] = self._fork_seq(ref) if parent else None
        return out


def _short_checkpoint_ids(ids: list[str], width: int = 8) -> dict[str, str]:
    """Each checkpoint id as a graph labels it: ``width`` characters of its body (after
    ``cp-``) that tell it from the others: its head for random ids, else its tail (ids from a
    counter, ``cp-0000000000000002``, differ only there), else all of it."""
    bodies = {i: i[3:] if i.startswith("cp-") else i for i in ids}
    for tail in (False, True):
        shown = {
            i: b if len(b) <= width else "…" + b[-width:] if tail else b[:width]
            for i, b in bodies.items()
        }
        if len(set(shown.values())) == len(shown):
            return shown
    return bodies


def _short(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _role(message: Message) -> str:
    return "tool" if message.tool_results else message.role


def _message_view(raw: Mapping[str, Any]) -> dict[str, Any]:
    """An archived message for the panel: role, text, reasoning, tool calls and results."""
    try:
        m = Message.model_validate(raw)
    except ValueError:
        return {"role": str(raw.get("role", "")), "kind": "unknown", "text": panel_text(str(raw))}
    return {
        "role": m.role,
        "kind": _role(m),
        "text": panel_text(m.text),
        "reasoning": [
            panel_text(str(getattr(b, "text", ""))) for b in m.content if b.type == "reasoning"
        ],
        "calls": [
            {"name": c.name, "arguments": panel_text(c.arguments, 20_000)} for c in m.tool_calls
        ],
        "results": [
            {"text": panel_text(r.text, 20_000), "is_error": bool(r.is_error)}
            for r in m.tool_results
        ],
    }


def _static_files() -> list[Path]:
    """The front-end files this widget is built from (for tests and docs)."""
    from ._bundle import static_files

    return static_files("checkpoint_graph")
