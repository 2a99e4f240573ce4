"""The fold transaction: archive first, then change the surface, in one log batch.

1. The exact model-visible messages of the span go into a bundle, which ``put`` makes
   durable and verifies by reading back (``BundleDurable ≺ SurfaceLoss``).
2. The log gets one batch, the harness's compaction transaction: ``compaction/start``, a
   log-only ``ctxsdk/fold-checkpoint`` record (ignorable, so any reader skips it) naming the
   bundle and its hashes, ``compaction/summary`` with the shadowed range, the replacement
   checkpoint message right after it, ``compaction/end``. A masking pass writes the pruner's
   shape instead (``compaction/prune`` then a content-only ``tool/result`` rewrite, per
   result), which the harness allows only inside an open turn.
3. The batch is appended under the log's lease; if another writer got there first the fold
   is not written, its bundle is removed and ``FoldConflict`` says so.

A crash between 1 and 3 leaves an orphan bundle (reported by ``Fold.status``) and the log as
it was; after 3 the fold is whole. ``tracer(point, detail)`` sees each step.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import FoldConflict, FoldRefused, LockHeld, SurfaceError, WriteError
from ..session import EventWriter, Session, fold_source, message_of
from ._bundles import Bundle, BundleRecord, FileBundleStore

__all__ = [
    "FOLD_RECORD",
    "FoldRecord",
    "commit",
    "default_store_root",
    "lineage",
    "new_checkpoint_id",
    "read_records",
]

FOLD_RECORD = "ctxsdk/fold-checkpoint"
Tracer = Callable[[str, Mapping[str, Any]], None]


def new_checkpoint_id() -> str:
    return f"cp-{uuid.uuid4().hex[:16]}"


@dataclass(frozen=True)
class FoldRecord:
    """What the log says about one fold: its checkpoint, what it archived and where."""

    checkpoint_id: str
    mode: str
    policy: str
    record_seq: int
    shadowed: tuple[int, ...]
    shadowed_tokens: int
    checkpoint_tokens: int
    tokenizer: str
    bundle_session: str
    file_sha256: str
    logical_hash: str
    messages: int
    bytes: int
    children: tuple[str, ...] = ()
    checkpoint_seq: int | None = None  # the replacement event (None for a masking pass)
    inherited: bool = False
    text: str = field(default="", repr=False)

    def data(self) -> dict[str, Any]:
        """The record event's data (camelCase, as the log format spells keys)."""
        return {
            "checkpointId": self.checkpoint_id,
            "mode": self.mode,
            "policy": self.policy,
            "shadowedSeqs": list(self.shadowed),
            "shadowedTokenCount": self.shadowed_tokens,
            "checkpointTokenCount": self.checkpoint_tokens,
            "tokenizer": self.tokenizer,
            "children": list(self.children),
            "bundle": {
                "session": self.bundle_session,
                "fileSha256": self.file_sha256,
                "logicalHash": self.logical_hash,
                "messages": self.messages,
                "bytes": self.bytes,
            },
        }


def _record_of(ev: Mapping[str, Any], inherited: bool) -> FoldRecord | None:
    d = ev.get("data")
    try:
        assert isinstance(d, Mapping)
        b = d["bundle"]
        return FoldRecord(
            checkpoint_id=str(d["checkpointId"]),
            mode=str(d["mode"]),
            policy=str(d.get("policy", "")),
            record_seq=int(ev["seq"]),
            shadowed=tuple(int(s) for s in d["shadowedSeqs"]),
            shadowed_tokens=int(d.get("shadowedTokenCount", 0)),
            checkpoint_tokens=int(d.get("checkpointTokenCount", 0)),
            tokenizer=str(d.get("tokenizer", "")),
            bundle_session=str(b["session"]),
            file_sha256=str(b["fileSha256"]),
            logical_hash=str(b["logicalHash"]),
            messages=int(b["messages"]),
            bytes=int(b.get("bytes", 0)),
            children=tuple(str(c) for c in d.get("children", ())),
            inherited=inherited,
        )
    except (AssertionError, KeyError, TypeError, ValueError):
        return None  # a malformed record is no checkpoint: its fold reads as unrecoverable


def read_records(session: Session) -> list[FoldRecord]:
    """Every fold the log records, in log order, with the seq and text of its checkpoint."""
    raws = session.raw_events
    cut = session.inherited_event_count
    out: list[FoldRecord] = []
    for ev in raws:
        if ev.get("type") != FOLD_RECORD:
            continue
        rec = _record_of(ev, int(ev["seq"]) < cut)
        if rec is None:
            continue
        seq, text = _checkpoint_after(raws, rec)
        out.append(_with(rec, seq, text))
    return out


def _with(rec: FoldRecord, seq: int | None, text: str) -> FoldRecord:
    return replace(rec, checkpoint_seq=seq, text=text)


def _checkpoint_after(raws: Sequence[Mapping[str, Any]], rec: FoldRecord) -> tuple[int | None, str]:
    """The replacement that carries ``rec``'s checkpoint: the first replacement user/message
    after the record (a masking pass has none)."""
    if rec.mode == "mask":
        return None, ""
    for ev in raws[rec.record_seq + 1 : rec.record_seq + 4]:
        if ev.get("type") == "user/message" and ev.get("surfaceOp") not in (None, "append"):
            msg = message_of(ev) or {}
            text = "".join(
                b.get("text", "") for b in msg.get("content", ()) if isinstance(b, Mapping)
            )
            return int(ev["seq"]), text
    return None, ""


def lineage(session: Session, records: Sequence[FoldRecord]) -> list[str]:
    """Whose bundles this session may read: its own, then its ancestors' (those its inherited
    records name, nearest first, and the parent in its header)."""
    out = [session.id]
    for rec in reversed(records):
        if rec.inherited and rec.bundle_session not in out:
            out.append(rec.bundle_session)
    if session.parent_id and session.parent_id not in out:
        out.append(session.parent_id)
    return out


def default_store_root(session: Session) -> Path | None:
    """Where bundles go by default: ``<DSH home>/ctxsdk/fold`` for a session in a DSH home
    (``sessions/<project>/<id>/``, so forks find their parents' bundles), else a
    ``.ctxsdk-fold`` folder next to the log; None for a session not read from a file."""
    if session.path is None:
        return None
    p = session.path.resolve()
    if len(p.parents) >= 4 and p.parents[2].name == "sessions":
        return p.parents[3] / "ctxsdk" / "fold"
    return p.parent / ".ctxsdk-fold"


def archive(
    session: Session, store: FileBundleStore, checkpoint_id: str, shadowed: Sequence[int]
) -> tuple[Bundle, BundleRecord]:
    """Step 1: the exact messages of ``shadowed`` (surface seqs), stored and verified."""
    raws = session.raw_events
    messages = []
    for seq in shadowed:
        msg = message_of(raws[seq])
        if msg is None:
            raise FoldRefused(f"seq {seq} carries no message to archive")
        messages.append(copy.deepcopy(msg))
    bundle = Bundle.build(
        checkpoint_id=checkpoint_id,
        session_id=session.id,
        ordered_surface_seqs=list(shadowed),
        messages=messages,
    )
    return bundle, store.put(bundle)


def commit(
    session: Session,
    store: FileBundleStore,
    *,
    checkpoint_id: str,
    mode: str,
    policy: str,
    shadowed: Sequence[int],
    shadowed_tokens: int,
    checkpoint_tokens: int,
    tokenizer: str,
    content: list[dict[str, Any]] | None = None,
    source: Mapping[str, Any] | None = None,
    masks: Mapping[int, tuple[str, int]] | None = None,
    children: Sequence[str] = (),
    write: bool = True,
    tracer: Tracer | None = None,
) -> tuple[Session, FoldRecord]:
    """Archive ``shadowed`` and replace it on the surface: one checkpoint message with
    ``content`` (leaf / root / emergency), or, for ``mode="mask"``, each tool result in
    ``masks`` rewritten to its pointer text (``seq -> (text, tokens)``). Returns the new
    session (written to its log when
    ``write`` and it was read from a file) and the fold's record."""
    if not shadowed:
        raise FoldRefused("nothing to fold: the span is empty")
    open_turn = session.index.open_turn
    if mode == "mask" and open_turn is None:
        raise FoldRefused(
            "masking rewrites tool results in place, which the harness allows only inside an "
            "open turn (as its tool-result pruner does at step start); run it from the agent "
            "loop, or fold the span into a checkpoint instead (policy='economy')"
        )
    generation = session.index.generation
    _, stored = archive(session, store, checkpoint_id, shadowed)
    record = FoldRecord(
        checkpoint_id=checkpoint_id,
        mode=mode,
        policy=policy,
        record_seq=-1,
        shadowed=tuple(shadowed),
        shadowed_tokens=shadowed_tokens,
        checkpoint_tokens=checkpoint_tokens,
        tokenizer=tokenizer,
        bundle_session=stored.session_id,
        file_sha256=stored.file_sha256,
        logical_hash=stored.logical_hash,
        messages=stored.message_count,
        bytes=stored.bytes,
        children=tuple(children),
    )
    try:
        if session.index.generation != generation:  # pragma: no cover - sessions are immutable
            raise FoldConflict("the surface changed while the bundle was written")
        new = session.append(_events(session, record, content, source, masks, open_turn))
    except SurfaceError as exc:
        store.remove(stored.session_id, checkpoint_id)
        raise FoldRefused(f"the harness would refuse this fold: {exc}") from None
    if write and new.path is not None:
        try:
            new = new.append_to_log()
        except (WriteError, LockHeld) as exc:
            store.remove(stored.session_id, checkpoint_id)
            raise FoldConflict(
                f"{session.path}: the fold was not written because the log could not take it "
                f"({exc}); its bundle {checkpoint_id} was removed. Another writer may have "
                "changed the session: open it again and decide anew"
            ) from None
        if tracer is not None:
            tracer("surface-appended", {"path": str(new.path), "checkpoint": checkpoint_id})
    records = [r for r in read_records(new) if r.checkpoint_id == checkpoint_id]
    return new, records[-1]


def _events(
    session: Session,
    record: FoldRecord,
    content: list[dict[str, Any]] | None,
    source: Mapping[str, Any] | None,
    masks: Mapping[int, tuple[str, int]] | None,
    open_turn: int | None,
) -> list[dict[str, Any]]:
    w = EventWriter.after(session)
    cid = record.checkpoint_id
    shadowed = list(record.shadowed)
    if record.mode == "mask":
        assert masks is not None
        w.emit(FOLD_RECORD, record.data(), ignorable=True)
        raws = session.raw_events
        for seq in shadowed:
            text, tokens = masks[seq]
            w.emit(
                "compaction/prune",
                {
                    "shadowedRange": {"start": seq, "end": seq},
                    "shadowedSeqs": [seq],
                    "shadowedTokenCount": tokens,
                },
            )
            old = raws[seq]["data"]
            msg = copy.deepcopy(old["message"])
            msg["content"][0]["content"] = [{"type": "text", "text": text}]
            w.emit("tool/result", {**old, "message": msg}, sources=[seq], op=w.replace_op(seq, seq))
        return w.take()
    assert content is not None
    start = w.emit("compaction/start", {"compactionId": cid, "turn": open_turn})
    w.emit(FOLD_RECORD, record.data(), ignorable=True)
    summary = w.emit(
        "compaction/summary",
        {
            "compactionId": cid,
            "summary": [{"type": "text", "text": "".join(b.get("text", "") for b in content)}],
            "shadowedRange": {"start": shadowed[0], "end": shadowed[-1]},
            "shadowedSeqs": shadowed,
            "shadowedTokenCount": record.shadowed_tokens,
        },
    )
    message = {
        "content": content,
        "source": dict(source) if source is not None else fold_source(record.mode, cid),
        "role": "user",
        "id": str(uuid.uuid4()),
    }
    w.replace("user/message", message, shadowed, sources=[start, summary, *shadowed])
    w.emit("compaction/end", {"compactionId": cid, "turn": open_turn})
    return w.take()
