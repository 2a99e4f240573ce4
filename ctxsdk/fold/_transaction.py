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
   is not written, its bundle is removed and ``FoldConflict`` says so (any other failed
   write, a full disk, is a ``WriteError`` with the log left as it was).

A crash between 1 and 3 leaves an orphan bundle (reported by ``Fold.status``) and the log as
it was; after 3 the fold is whole. ``tracer(point, detail)`` sees each step.
"""

from __future__ import annotations

import copy
import errno
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import FoldConflict, FoldRefused, LockHeld, SurfaceError, WriteError
from ..session import Session
from ..session.kernel import (
    EventWriter,
    fold_source,
    message_of,
    read_marker,
    refuse_shipped_sample,
)
from ._bundles import _ID, Bundle, BundleRecord, FileBundleStore

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
    # ``file_sha256`` / ``logical_hash`` / ``bundle_session`` are "" when the log cannot hold
    # them (v0-v2): the bundle is then checked against the log's own copies of the messages.
    inherited: bool = False
    text: str = field(default="", repr=False)
    window: int | None = None  # the context window the fold measured against (None: unknown)

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
            **({"window": self.window} if self.window is not None else {}),
            "bundle": {
                "session": self.bundle_session,
                "fileSha256": self.file_sha256,
                "logicalHash": self.logical_hash,
                "messages": self.messages,
                "bytes": self.bytes,
            },
        }


def _count(value: Any) -> int | None:
    """A non-negative JSON integer, or None (a record written by hand may hold anything)."""
    return value if type(value) is int and value >= 0 else None


def _explicit(ev: Mapping[str, Any]) -> dict[str, Any]:
    """The fields a ``ctxsdk/fold-checkpoint`` record adds (v3 logs only); a field that is
    missing or of the wrong type is left out, never trusted."""
    d = ev.get("data")
    if not isinstance(d, Mapping):
        return {}
    found = d.get("bundle")
    b: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    out: dict[str, Any] = {"record_seq": int(ev["seq"])}
    texts: tuple[tuple[str, str, Mapping[str, Any]], ...] = (
        ("policy", "policy", d),
        ("tokenizer", "tokenizer", d),
        ("fileSha256", "file_sha256", b),
        ("logicalHash", "logical_hash", b),
    )
    for key, name, src in texts:
        if isinstance(src.get(key), str):
            out[name] = src[key]
    if isinstance(b.get("session"), str) and _ID.fullmatch(b["session"]):
        out["bundle_session"] = b["session"]
    counts = (("checkpointTokenCount", "checkpoint_tokens", d), ("messages", "messages", b))
    for key, name, src in (*counts, ("bytes", "bytes", b)):
        n = _count(src.get(key))
        if n is not None:
            out[name] = n
    window = _count(d.get("window"))
    if window:
        out["window"] = window
    if isinstance(d.get("children"), list):
        out["children"] = tuple(c for c in d["children"] if isinstance(c, str))
    return out


def _text_of(ev: Mapping[str, Any]) -> str:
    msg = message_of(ev) or {}
    content = msg.get("content")
    return (
        "".join(str(b.get("text", "")) for b in content if isinstance(b, Mapping))
        if isinstance(content, list)
        else ""
    )


def _ints(value: Any) -> tuple[int, ...]:
    return tuple(v for v in value if _count(v) is not None) if isinstance(value, list) else ()


def read_records(session: Session) -> list[FoldRecord]:
    """Every fold the log holds, in log order, found from the log itself on every format
    version: a checkpoint replacement that carries a fold mark (or a basic checkpoint's
    ``fold:basic`` stamp) with the ``compaction/summary`` of its transaction, or a masking
    pass's marked tool-result rewrites. A v3 log's ``ctxsdk/fold-checkpoint`` record adds
    the bundle's hashes and the fold's settings (v0–v2 validators refuse unknown events, so
    there the bundle is checked against the log's own copies of the messages instead)."""
    raws = session.raw_events
    cut = session.inherited_event_count
    explicit: dict[str, dict[str, Any]] = {}
    summaries: dict[str, Mapping[str, Any]] = {}
    masks: dict[str, dict[str, Any]] = {}
    out: list[FoldRecord] = []
    for ev in raws:
        etype = ev.get("type")
        data = ev.get("data")
        if not isinstance(data, Mapping):
            continue
        if etype == FOLD_RECORD and isinstance(data.get("checkpointId"), str):
            explicit[data["checkpointId"]] = _explicit(ev)
            continue
        if etype == "compaction/summary" and isinstance(data.get("compactionId"), str):
            summaries[data["compactionId"]] = ev
            continue
        if ev.get("surfaceOp") in (None, "append"):
            continue
        mark = read_marker(ev)
        if mark is None or mark.checkpoint is None:
            continue
        cid, seq = mark.checkpoint, int(ev["seq"])
        if mark.mode == "mask":
            found = masks.setdefault(cid, {"seqs": [], "first": seq, "tokens": 0})
            found["seqs"].extend(_ints(ev.get("sourceEventSeqs")))
            prune = raws[seq - 1] if seq > 0 else {}
            if prune.get("type") == "compaction/prune":
                found["tokens"] += _count(prune["data"].get("shadowedTokenCount")) or 0
            continue
        summary = summaries.get(cid)
        if summary is None:
            continue  # a checkpoint outside its transaction: not one of ours to vouch for
        sd = summary["data"]
        extra = explicit.get(cid, {})
        # a root's children: the checkpoints it took off the surface
        children = tuple(
            m.checkpoint
            for q in _ints(sd.get("shadowedSeqs"))
            if 0 <= q < len(raws)
            and (m := read_marker(raws[q])) is not None
            and m.checkpoint is not None
            and m.mode != "mask"
        )
        out.append(
            FoldRecord(
                checkpoint_id=cid,
                mode=mark.mode or "leaf",  # a basic fold is a leaf in the harness's form
                policy=extra.get("policy", "basic" if mark.kind == "compaction" else ""),
                record_seq=extra.get("record_seq", int(summary["seq"])),
                shadowed=_ints(sd.get("shadowedSeqs")),
                shadowed_tokens=_count(sd.get("shadowedTokenCount")) or 0,
                checkpoint_tokens=extra.get("checkpoint_tokens", 0),
                tokenizer=extra.get("tokenizer", ""),
                bundle_session=extra.get("bundle_session", ""),
                file_sha256=extra.get("file_sha256", ""),
                logical_hash=extra.get("logical_hash", ""),
                messages=extra.get("messages", len(_ints(sd.get("shadowedSeqs")))),
                bytes=extra.get("bytes", 0),
                children=extra.get("children", children),
                checkpoint_seq=seq,
                inherited=seq < cut,
                text=_text_of(ev),
                window=extra.get("window"),
            )
        )
    for cid, found in masks.items():
        extra = explicit.get(cid, {})
        seqs = tuple(found["seqs"])
        out.append(
            FoldRecord(
                checkpoint_id=cid,
                mode="mask",
                policy=extra.get("policy", "masking"),
                record_seq=extra.get("record_seq", found["first"]),
                shadowed=seqs,
                shadowed_tokens=int(found["tokens"]),
                checkpoint_tokens=0,
                tokenizer=extra.get("tokenizer", ""),
                bundle_session=extra.get("bundle_session", ""),
                file_sha256=extra.get("file_sha256", ""),
                logical_hash=extra.get("logical_hash", ""),
                messages=extra.get("messages", len(seqs)),
                bytes=extra.get("bytes", 0),
                checkpoint_seq=None,
                inherited=found["first"] < cut,
                window=extra.get("window"),
            )
        )
    out.sort(key=lambda r: r.record_seq)
    return out


def lineage(session: Session, records: Sequence[FoldRecord]) -> list[str]:
    """Whose bundles this session may read: its own, then its ancestors' (those its inherited
    records name, nearest first, and the parent in its header)."""
    out = [session.id]
    for rec in reversed(records):
        if rec.inherited and rec.bundle_session and rec.bundle_session not in out:
            out.append(rec.bundle_session)
    if session.parent_id and session.parent_id not in out:
        out.append(session.parent_id)
    return out


def no_store_reason(session: Session) -> str:
    """Why ``session`` has no default bundle store (``default_store_root`` gave None)."""
    if session.normalized:
        # the user did name a file: say why it does not count
        return (
            "this session was read from a stripped log (no seq/time, like the harness's "
            "snapshot fixtures), which is read-only, so there is no default place for its "
            "bundles"
        )
    return "this session was not read from a file, so there is no default place for its bundles"


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
    summarizer: tuple[str, str] = ("ctxsdk", "fold-state"),
    write: bool = True,
    tracer: Tracer | None = None,
    window: int | None = None,
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
    # Refuse before anything is stored: a fold of a shipped sample (read-only) would leave
    # bundle folders inside the installed package.
    for where in (session.path if write else None, store.root):
        if where is not None:
            refuse_shipped_sample(
                where, instead="fold a copy: s.save(path), then cx.Fold(cx.Session.open(path))"
            )
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
        window=window,
    )
    try:
        new = session.append(
            _events(session, record, content, source, masks, open_turn, summarizer)
        )
    except SurfaceError as exc:
        store.remove(stored.session_id, checkpoint_id)
        raise FoldRefused(f"the harness would refuse this fold: {exc}") from None
    if write and new.path is not None:
        try:
            new = new.append_to_log()
        except (WriteError, LockHeld) as exc:
            store.remove(stored.session_id, checkpoint_id)
            if isinstance(exc, LockHeld) or exc.errno == errno.ESTALE:
                raise FoldConflict(
                    f"{session.path}: another writer changed or holds the session, so this fold "
                    f"was not written ({exc}); its bundle {checkpoint_id} was removed. Open the "
                    "session again and decide anew"
                ) from None
            raise WriteError(
                exc.errno or errno.EIO,
                f"{session.path}: the fold was not written, the log is as it was ({exc}); its "
                f"bundle {checkpoint_id} was removed",
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
    summarizer: tuple[str, str],
) -> list[dict[str, Any]]:
    w = EventWriter.after(session)
    cid = record.checkpoint_id
    shadowed = list(record.shadowed)
    # v0-v2 validators refuse any event type they do not know, ignorable or not: the record
    # rides only in v3 logs (elsewhere records are read from the transaction itself).
    with_record = session.version >= 3
    if record.mode == "mask":
        assert masks is not None
        if with_record:
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
    if with_record:
        w.emit(FOLD_RECORD, record.data(), ignorable=True)
    summary = w.emit(
        "compaction/summary",
        {
            "compactionId": cid,
            "summary": [{"type": "text", "text": "".join(b.get("text", "") for b in content)}],
            "shadowedRange": {"start": shadowed[0], "end": shadowed[-1]},
            "shadowedSeqs": shadowed,
            "shadowedTokenCount": record.shadowed_tokens,
            # who wrote the summary: no model for a state checkpoint (required on v0-v2)
            "provider": summarizer[0],
            "model": summarizer[1],
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
