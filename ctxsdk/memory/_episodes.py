"""The session map: a session's history as boxes (the dsh-trivium seed's episodes).

A session is drawn as a chain of boxes, oldest first:

- a **fork** box where a session was seeded from its parent: at the last inherited seq,
  linked ``forks_from`` the parent's box that holds that seq (when the parent is in the
  memory too);
- a **checkpoint** box for every checkpoint the log holds: a harness compaction, at its
  ``compaction/end`` and summarised by its ``compaction/summary`` (a failed one makes no
  box), or a checkpoint written outside a compaction bracket, a fold's (a masked tool
  result is no checkpoint), summarised by its own text. A box cut by hand (``Memory.cut``)
  is a checkpoint too, marked ``generated``, whose summary is the last user message before
  the cut;
- one **tail** box: what is still open after the last checkpoint, summarised by the latest
  user message (at most 240 characters) and, after an arrow, the assistant's last reply
  (at most 1,200): the ask and where the work stood when the log ends ("… → I've created a
  complete Vue.js todo application …"; bench realworld lexical, tune stored 0.644 to 0.655
  and noise down, the last reply holding the session's outcome).

A user message is read as the person's own words (``ctxsdk.session.kernel.user_text``): a harness
template's wrapper (a ``<pr_description>``, a CTF preamble) is removed, and a message that is
boilerplate only (a background task's notification, "[Request interrupted by user]") is
skipped for the one before it.

Every summary is redacted whole before it is clipped (the memory's door, ``_door``): a
box stores ``[REDACTED:<kind>]`` where a message held a credential, and a notice of the
kinds withheld when nothing else was left. Session ids are redacted too (``session_key``).

Each box ``continues`` the one before it. Boxes are ``episode`` nodes with a stable uri
(``ctx://episode/<session>/<seq | tail | fork>``): ingesting a session again updates its
tail and adds new checkpoints, and a name given by hand survives it. Episodes are never
search hits and never in the short map; they are for people (the widget, ``to_polars``).

These are pure functions over a ``Session``; ``Memory`` writes what they return.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from ..errors import CorruptStore
from ..session import Session
from ..session.kernel import message_text, read_marker, short_id, user_text
from ._door import session_key, summary_text
from ._model import Edge, Node, Source, clip
from ._store import MemoryStore

__all__ = [
    "EPISODE_NAMES",
    "Episode",
    "box_order",
    "boxes",
    "episode_uri",
    "holding",
    "session_episodes",
    "write_episodes",
]

EpisodeKind = Literal["checkpoint", "tail", "fork"]
# The seed's generic names (当前 / 已压缩 / 分叉): a box keeps one until someone renames it.
EPISODE_NAMES: dict[str, str] = {"tail": "current", "checkpoint": "compacted", "fork": "fork"}
_SUMMARY_MAX = 4000  # a checkpoint's text, kept whole up to this many characters
_PREVIEW_MAX = 240  # the tail's summary: the latest user message
_REPLY_MAX = 1200  # and the assistant's last reply after it
_REPLY_MIN = 40


@dataclass(frozen=True)
class Episode:
    """One box of a session map: its ``kind``, the session and seq it stands at (the
    checkpoint's seq, the tail's last seq, the fork's cut), its summary text, and for a fork
    the ``parent`` session."""

    kind: EpisodeKind
    session: str
    at_seq: int
    summary: str
    parent: str | None = None
    generated: bool = False

    @property
    def uri(self) -> str:
        at = self.kind if self.kind in ("tail", "fork") else str(self.at_seq)
        return episode_uri(self.session, at)


def episode_uri(session: str, at: str | int) -> str:
    """``ctx://episode/<session>/<seq | tail | fork>``: the box's stable reference."""
    return f"ctx://episode/{session}/{at}"


def _clip(text: str, limit: int) -> str:
    # Redacted before it is cut: a clipped secret would no longer be recognised.
    return clip(summary_text(text), limit)


def _summary_text(data: Any) -> str:
    blocks = data.get("summary") if isinstance(data, dict) else None
    blocks = blocks if isinstance(blocks, list) else ()  # a number, text: no blocks to read
    parts = [b.get("text", "") for b in blocks if isinstance(b, dict)]
    return "\n".join(p for p in parts if isinstance(p, str))


def _checkpoints(session: Session, start: int) -> dict[int, str]:
    """Seq -> text of every checkpoint from ``start`` on: a harness compaction at its
    ``compaction/end`` (with the bracket's summary; a failed one is none), and a checkpoint
    written outside a bracket (a fold's) at its own seq."""
    out: dict[int, str] = {}
    summaries: dict[str, str] = {}
    bracket: str | None = None
    for seq in range(start, len(session.raw_events)):
        event = session.raw_events[seq]
        etype, data = event.get("type"), event.get("data")
        data = data if isinstance(data, dict) else {}  # the typed reader refuses the rest
        cid = data.get("compactionId")
        if etype == "compaction/start":
            bracket = str(cid)
        elif etype == "compaction/summary":
            summaries[str(cid)] = _summary_text(data)
        elif etype == "compaction/end":
            bracket = None
            if not data.get("error") and str(cid) in summaries:
                out[seq] = summaries[str(cid)]
        elif bracket is None and etype == "user/message":
            # only a message is a compaction's or a fold's checkpoint (a fold's tool-result
            # marker is a mask, no checkpoint): any other event is not read for one
            marker = read_marker(event)
            if marker and marker.kind in ("compaction", "fold") and marker.mode != "mask":
                out[seq] = message_text(session.message_at(seq))
    return out


def _user_before(session: Session, end: int, start: int) -> tuple[int, str] | None:
    """The latest message a person wrote in seqs ``start`` .. ``end`` (seq, its own words:
    a harness template's wrapper removed, ``user_text``). A message that is boilerplate
    only (a background task's notification, "[Request interrupted by user]") is skipped:
    it says nothing of what is open."""
    for seq in range(end, start - 1, -1):
        event = session.raw_events[seq]
        if event.get("type") != "user/message":
            continue
        source = (event.get("data") or {}).get("source") or {}
        if isinstance(source, dict) and source.get("kind") not in (None, "user"):
            continue
        text = (user_text(message_text(session.message_at(seq))) or "").strip()
        if text:
            return seq, text
    return None


def _reply_after(session: Session, start: int, end: int) -> str | None:
    """The assistant's last reply in seqs ``start`` .. ``end`` (its text, 40+ characters):
    where the work stood when the log ends."""
    for seq in range(end, start - 1, -1):
        if session.raw_events[seq].get("type") != "assistant/message":
            continue
        text = session.message_at(seq).text.strip()
        if len(text) >= _REPLY_MIN:
            return text
    return None


def session_episodes(session: Session, cuts: Sequence[int] = ()) -> list[Episode]:
    """The boxes of ``session`` in seq order: its fork, its checkpoints (with the hand
    ``cuts``, seqs cut by ``Memory.cut``), and its tail."""
    sid = session_key(session)
    inherited = session.inherited_event_count
    out: list[Episode] = []
    if session.parent_id and inherited > 0:
        cut = inherited - 1
        out.append(
            Episode(
                "fork",
                sid,
                cut,
                f"forked from {short_id(session_key(session.parent_id))} at seq {cut}",
                parent=session_key(session.parent_id),
            )
        )
    last = len(session.raw_events) - 1
    marks: dict[int, Episode] = {
        seq: Episode("checkpoint", sid, seq, _clip(text, _SUMMARY_MAX))
        # inherited checkpoints are the parent's boxes
        for seq, text in _checkpoints(session, inherited).items()
    }
    for seq in cuts:
        if inherited <= seq <= last and seq not in marks:
            said = _user_before(session, seq, inherited)
            summary = _clip(said[1], _PREVIEW_MAX) if said else f"cut at seq {seq}"
            marks[seq] = Episode("checkpoint", sid, seq, summary, generated=True)
    out += [marks[s] for s in sorted(marks)]
    since = max(marks, default=inherited - 1) + 1
    said = _user_before(session, last, since) if last >= since else None
    tail = _clip(said[1], _PREVIEW_MAX) if said else "(nothing since the last checkpoint)"
    reply = _reply_after(session, said[0] if said else since, last)
    if reply:
        tail = f"{tail} → {_clip(reply, _REPLY_MAX)}"
    out.append(Episode("tail", sid, last, tail))
    return out


# -- writing them ----------------------------------------------------------------------------
def boxes(store: MemoryStore, session: str | None = None) -> list[Node]:
    """The active episode nodes in the store, of one session or of all, in map order."""
    found = [
        _box(store, n)
        for n in store.nodes(types=["episode"])
        if n.active and (session is None or n.extra.get("session") == session)
    ]
    return sorted(found, key=box_order)


def _box(store: MemoryStore, node: Node) -> Node:
    """``node``, when its ``extra`` is a box's (``write_episodes`` writes a known kind, the
    session and an int seq); else ``CorruptStore`` naming the node (a damaged file)."""
    x, at, kind = node.extra, node.extra.get("atSeq"), node.extra.get("kind")
    if (
        isinstance(kind, str)
        and kind in EPISODE_NAMES
        and isinstance(x.get("session"), str)
        and isinstance(at, int)
        and not isinstance(at, bool)
    ):
        return node
    where = store.location
    raise CorruptStore(
        f"{where}: node {node.id!r}, column extra: {str(dict(x))[:120]} is not a session-map "
        "box's kind, session and atSeq; the memory database is damaged; restore it from a backup",
        path=where,
    )


def box_order(node: Node) -> tuple[str, bool, int, bool]:
    """Sorts episode nodes as a map reads: session by session, the fork box first, then by
    seq, a tail after a checkpoint at the same seq."""
    x = node.extra
    kind = x.get("kind")
    return (str(x.get("session")), kind != "fork", int(x.get("atSeq", 0)), kind == "tail")


def holding(session_boxes: Sequence[Node], seq: int) -> Node | None:
    """The box of one session's boxes (map order) that holds ``seq``: the first whose seq
    is at or after it (a checkpoint holds what it archived), else the tail."""
    for box in session_boxes:
        if box.extra.get("kind") != "fork" and int(box.extra.get("atSeq", 0)) >= seq:
            return box
    return session_boxes[-1] if session_boxes else None


def write_episodes(store: MemoryStore, session: Session, cuts: Sequence[int] = ()) -> list[Node]:
    """Write the session map of ``session`` (see the module docs) into ``store`` and return
    its boxes in order. Boxes are matched by uri: a box already there keeps its id, name and
    status; its summary, seq and edges follow the log. The caller holds the batch."""
    sid = session_key(session)
    drawn = session_episodes(session, cuts)
    # archived boxes too: one archived by hand keeps its uri, and stays archived
    kept = {
        n.uri: n
        for n in store.nodes(types=["episode"], include_archived=True)
        if n.extra.get("session") == sid
    }
    wanted = {b.uri for b in drawn}
    for uri, gone in kept.items():  # a checkpoint the log no longer has (a replaced log)
        if uri not in wanted and gone.active:
            store.put(replace(gone, status="archived"))
    written: list[Node] = []
    for box in drawn:
        old = kept.get(box.uri)
        extra: dict[str, Any] = {"kind": box.kind, "session": sid, "atSeq": box.at_seq}
        if box.parent:
            extra["parent"] = box.parent
        if box.generated:
            extra["generated"] = True
        node = Node(
            id=old.id if old else "",
            type="episode",
            name=old.name if old else EPISODE_NAMES[box.kind],
            text=box.summary,
            uri=box.uri,
            sources=(Source(sid, box.at_seq, "", "rule"),),
            extra=extra,
        )
        if old is None:
            node = store.put(node)
        elif (old.text, old.extra, old.sources) != (node.text, extra, node.sources):
            node = store.put(replace(old, text=node.text, sources=node.sources, extra=extra))
        else:
            node = old
        written.append(node)
    for node in written:  # the chain: each box continues the one before it
        for e in store.edges(src=node.id, labels=["continues"]):
            store.unlink(e.src, e.dst, e.label)
    for before, after in itertools.pairwise(written):
        store.link(Edge.weighted(after.id, before.id, "continues"))
    _link_forks(store, sid, written)
    return written


def _link_forks(store: MemoryStore, sid: str, mine: Sequence[Node]) -> None:
    """``forks_from`` from this session's fork box to the parent's box holding the cut, and
    from each child already in the store to the box of this session holding its cut."""
    everyone = boxes(store)
    pairs: list[tuple[Node, list[Node]]] = []
    fork = next((b for b in mine if b.extra.get("kind") == "fork"), None)
    if fork is not None and fork.extra.get("parent"):
        parent = str(fork.extra["parent"])
        pairs.append((fork, [n for n in everyone if n.extra.get("session") == parent]))
    for n in everyone:
        if n.extra.get("kind") == "fork" and n.extra.get("parent") == sid:
            pairs.append((n, list(mine)))
    for child_fork, parent_boxes in pairs:
        for e in store.edges(src=child_fork.id, labels=["forks_from"]):
            store.unlink(e.src, e.dst, e.label)
        target = holding(parent_boxes, int(child_fork.extra.get("atSeq", 0)))
        if target is not None:
            store.link(Edge.weighted(child_fork.id, target.id, "forks_from"))
