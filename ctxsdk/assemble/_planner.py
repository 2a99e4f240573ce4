"""The planner: per-node target modes compiled to surface replace ops the harness accepts.

Contiguous nodes with the same collapsed mode become one replacement; a run is widened so a tool
call is never split from its results (a lone tool result is instead rewritten in place, which
keeps its pairing); the v3 system head is never covered. Expanding an own collapse restores a
single node verbatim, or several as one replay message that says so.

Two harness rules shape how the ops are written (``apply_ops``), not what they do:

- The harness rewrites a ``tool/result`` only inside an open turn. When no turn is open (an
  assembly applied between turns, the usual case), a batch that holds a tool-result rewrite is
  written inside an *edit turn* the assembly opens for it: ``turn/start``, the batch,
  ``turn/end {kind: completed}``, with no step and no request. Nothing else changes: the call,
  its id and the pairing stay, and the rewrite is exactly the one that was asked for.
- A compaction checkpoint (a ``user/message`` replacement sourced ``plugin: compact``) exists
  only inside its ``compaction/start … end`` bracket. Expanding a collapse of exactly one
  checkpoint re-emits it inside a fresh bracket: ``compaction/start``, a
  ``compaction/summary`` that repeats the original summary (its provider and model; no
  ``rawOutput``, ``usage`` or ``llmStreamCall``, since no model was called), the checkpoint
  with a new id and ``compactionId``, ``compaction/end``, owned by the open turn or ``null``.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..session import Message, Session, SurfaceNode, TokenCounter
from ..session.kernel import (
    EventWriter,
    assembly_header,
    assembly_source,
    digest_text,
    estimate_message,
    message_of,
    node_tokens,
    read_marker,
    tool_groups,
)
from ._digest import DigestConfig, auto_digest, off_marker, off_rewrite, truncate
from ._modes import Mode, collapse_mark

__all__ = ["PlanOp", "Target", "apply_ops", "compile_plan", "current_modes"]

_MAX_WIDEN_ROUNDS = 64


@dataclass(frozen=True)
class Target:
    mode: Mode
    digest: str | None = None


@dataclass(frozen=True)
class PlanOp:
    """One replacement: ``shadowed`` surface nodes (``start_seq``..``end_seq``) become one."""

    kind: Literal["collapse", "tool-rewrite", "expand"]
    mode: Mode
    start_seq: int
    end_seq: int
    shadowed: tuple[int, ...]
    text: str
    tokens_before: int
    tokens_after: int
    message: dict[str, Any] | None = None  # the replacement user/system message (collapse, expand)
    tool_content: list[dict[str, Any]] | None = None  # the new result content (tool-rewrite)
    # For a checkpoint restored by an expand: the compaction/summary to re-emit it with
    # (compactionId, summary, provider, model); ``apply_ops`` writes the bracket around it.
    compaction: dict[str, Any] | None = None

    @property
    def needs_turn(self) -> bool:
        """Whether the harness accepts this op only inside an open turn (a tool-result rewrite)."""
        return self.tool_content is not None

    @property
    def saved(self) -> int:
        return self.tokens_before - self.tokens_after

    def __repr__(self) -> str:
        return (
            f"PlanOp({self.kind} {self.mode} {self.start_seq}..{self.end_seq}, "
            f"{len(self.shadowed)} nodes, {self.tokens_before} -> {self.tokens_after} tokens)"
        )


@dataclass
class _Run:
    start: int  # surface positions, inclusive
    end: int
    mode: Mode
    notes: list[str] = field(default_factory=list)


def current_modes(session: Session, surface: list[SurfaceNode]) -> list[Mode]:
    """Each node's mode now: an own collapse's mode, ``key`` for foreign replacements
    (compactions, prunes), else ``full``."""
    out: list[Mode] = []
    for node in surface:
        mark = collapse_mark(session.raw_events[node.seq])
        if mark is not None:
            out.append(mark[0])
        elif node.op == "replace" and node.message.source.kind != "tool":
            out.append("key")
        else:
            out.append("full")
    return out


def _runs(targets: list[Mode], changed: list[bool]) -> list[_Run]:
    runs: list[_Run] = []
    pos = 0
    while pos < len(targets):
        mode = targets[pos]
        end = pos
        while end + 1 < len(targets) and targets[end + 1] == mode:
            end += 1
        if mode != "full" and any(changed[pos : end + 1]):
            runs.append(_Run(pos, end, mode))
        pos = end + 1
    return runs


def _widen(
    runs: list[_Run], groups: list[tuple[int, int]], surface: list[SurfaceNode]
) -> list[_Run]:
    for _ in range(_MAX_WIDEN_ROUNDS):
        grew = False
        for run in runs:
            lone_result = run.start == run.end and surface[run.start].type == "tool/result"
            if lone_result:
                continue  # rewritten in place: pairing kept without widening
            for a, b in groups:
                overlaps = a <= run.end and run.start <= b
                inside = run.start <= a and b <= run.end
                if overlaps and not inside:
                    run.start, run.end = min(run.start, a), max(run.end, b)
                    run.notes.append(f"widened to keep tool call at position {a} with its results")
                    grew = True
        runs.sort(key=lambda r: r.start)
        merged: list[_Run] = []
        for run in runs:
            if merged and run.start <= merged[-1].end:
                last = merged[-1]
                last.end = max(last.end, run.end)
                last.notes += [*run.notes, f"merged an overlapping {run.mode} run"]
                grew = True
            else:
                merged.append(run)
        runs = merged
        if not grew:
            break
    return runs


def _leaf_count(session: Session, seq: int) -> int:
    return len(session.index.covered(seq))


def _user_message(text: str, source: dict[str, Any]) -> dict[str, Any]:
    content = [{"type": "text", "text": text}] if text else []
    return {"content": content, "source": source, "role": "user", "id": str(uuid.uuid4())}


def _expand_op(seq: int, text: str, before: int, after: int, **payload: Any) -> PlanOp:
    """An expansion replaces the one collapsed node ``seq`` in place."""
    return PlanOp("expand", "full", seq, seq, (seq,), text, before, after, **payload)


def _checkpoint_summary(session: Session, checkpoint: dict[str, Any]) -> dict[str, Any] | None:
    """The ``compaction/summary`` data of the bracket a checkpoint was written in."""
    cid = (checkpoint.get("source") or {}).get("compactionId")
    for raw in session.raw_events:
        if raw["type"] == "compaction/summary" and raw["data"].get("compactionId") == cid:
            data: dict[str, Any] = raw["data"]
            return data
    return None


def _restored_checkpoint(
    session: Session, seq: int, raw: dict[str, Any], counter: TokenCounter, before: int
) -> PlanOp | str:
    """A collapsed compaction checkpoint, re-emitted verbatim inside a fresh bracket, or why not."""
    msg = dict(message_of(raw) or {})
    summary = _checkpoint_summary(session, msg)
    if summary is None:
        return (
            f"seq {seq} collapses compaction checkpoint {raw['seq']}, whose compaction/summary is "
            "not in the log: a checkpoint can only be re-emitted inside a compaction bracket, so "
            "it stays collapsed"
        )
    cid = str(uuid.uuid4())
    source = {k: v for k, v in msg["source"].items() if k != "sourceCommandId"}
    msg["source"] = {**source, "compactionId": cid}
    msg["id"] = str(uuid.uuid4())  # ids are forever: a re-emitted message is a new one
    compaction = {
        "compactionId": cid,
        "summary": summary["summary"],
        "provider": summary["provider"],
        "model": summary["model"],
    }
    text = digest_text(Message.model_validate(msg))
    after = counter.count_message(msg)
    return _expand_op(seq, text, before, after, message=msg, compaction=compaction)


def _expand(
    session: Session, node: SurfaceNode, counter: TokenCounter, before: int
) -> PlanOp | str | None:
    """Restore what an own collapse shadowed: one node verbatim, several as one replay message
    (or a note that says why it cannot be restored)."""
    shadowed = session.index.originals(node.seq)
    if not shadowed:
        return None
    originals = [(s, session.raw_events[s]) for s in shadowed]
    if len(originals) == 1:
        seq, raw = originals[0]
        if raw["type"] == "tool/result" and node.type == "tool/result":
            shadowed_msg = message_of(raw) or {}
            content = shadowed_msg["content"][0]["content"]
            text = digest_text(Message.model_validate(shadowed_msg))
            after = counter.count_message(shadowed_msg)
            return _expand_op(node.seq, text, before, after, tool_content=list(content))
        if raw["type"] == "user/message" and node.type == "user/message":
            mark = read_marker(raw)
            if mark is not None and mark.kind == "compaction" and raw.get("surfaceOp") != "append":
                return _restored_checkpoint(session, node.seq, dict(raw), counter, before)
        if raw["type"] in ("user/message", "system/message") and node.type == raw["type"]:
            msg = dict(message_of(raw) or {})
            msg["id"] = str(uuid.uuid4())  # ids are forever: a re-emitted message is a new one
            after = counter.count_message(msg)
            text = digest_text(Message.model_validate(msg))
            return _expand_op(node.seq, text, before, after, message=msg)
    # Like a collapse's header, the expansion's names the tokens of what it covers (the originals).
    covered = counter.count_messages([message_of(r) or {} for _, r in originals])
    header = assembly_header("full", len(originals), sum(covered))
    sections = []
    for seq, raw in originals:
        inner = message_of(raw)
        if inner is None:
            continue
        original = Message.model_validate(inner)
        sections.append(f"--- seq {seq} · {raw['type']} ---\n{digest_text(original)}")
    note = (
        "Replayed verbatim as one user message: roles are flattened and tool-call blocks are "
        "shown as text, because assistant messages cannot be replacement nodes."
    )
    text = f"{header}\n{note}\n\n" + "\n\n".join(sections)
    msg = _user_message(text, assembly_source("full", len(originals), before))
    return _expand_op(node.seq, text, before, counter.count_message(msg), message=msg)


def compile_plan(
    session: Session,
    targets: Mapping[int, Target],
    *,
    counter: TokenCounter,
    config: DigestConfig | None = None,
) -> tuple[list[PlanOp], list[str]]:
    """Compile target modes (by surface seq) into replace ops, with notes on what changed."""
    cfg = config or DigestConfig()
    surface = list(session.surface())
    notes: list[str] = []
    if not surface:
        return [], notes
    seq_pos = {n.seq: i for i, n in enumerate(surface)}
    now = current_modes(session, surface)
    want = list(now)
    digests: dict[int, str] = {}
    for seq, target in targets.items():
        pos = seq_pos.get(seq)
        if pos is None:
            notes.append(f"seq {seq} is not on the surface; skipped")
            continue
        want[pos] = target.mode
        if target.digest is not None:
            digests[pos] = target.digest
    raws = [dict(session.raw_events[n.seq]) for n in surface]
    tokens = node_tokens(session, counter)
    ops: list[PlanOp] = []
    # Expands first: an own collapse asked to be full is restored on its own.
    for pos, node in enumerate(surface):
        if want[pos] != "full" or now[pos] == "full":
            continue
        if collapse_mark(raws[pos]):
            op = _expand(session, node, counter, tokens[pos])
            if isinstance(op, str):
                notes.append(op)
            elif op is not None:
                ops.append(op)
                if op.compaction is not None:
                    notes.append(
                        f"seq {node.seq} restores a compaction checkpoint: it is re-emitted inside "
                        "a fresh compaction/start … end bracket, where the harness requires a "
                        "checkpoint to be"
                    )
        else:
            notes.append(
                f"seq {node.seq} is a replacement ctxsdk did not write (a compaction, say): it "
                "cannot be expanded here; its shadowed events stay in the log"
            )
    changed = [w != n or p in digests for p, (w, n) in enumerate(zip(want, now, strict=True))]
    runs = _widen(_runs(want, changed), tool_groups(surface), surface)
    head_protected = surface[0].type == "system/message"
    for run in runs:
        if head_protected and run.start == 0:
            run.start = 1
            notes.append("the system prompt (node 0) is never collapsed; run starts at node 1")
        if run.start > run.end:
            continue
        notes += run.notes
        members = surface[run.start : run.end + 1]
        before = sum(tokens[run.start : run.end + 1])
        items = sum(_leaf_count(session, n.seq) for n in members)
        if run.mode == "key":
            explicit = [digests[p] for p in range(run.start, run.end + 1) if p in digests]
            body = (
                truncate(cfg, explicit[-1])
                if explicit
                else auto_digest([(n.seq, n.message) for n in members], cfg)
            )
        else:
            explicit = [digests[p] for p in range(run.start, run.end + 1) if p in digests]
            # An explicit off text is used as given (cutting it would lose a carried member).
            body = (
                explicit[-1]
                if explicit
                else off_marker(cfg, items, before, members[0].seq, members[-1].seq)
            )
        header = assembly_header(run.mode, items, before)
        if len(members) == 1 and members[0].type == "tool/result":
            if run.mode == "off" and not explicit:
                text = off_rewrite(cfg, header, members[0].seq)
            else:
                text = f"{header}\n{body}" if body else header
            content = [{"type": "text", "text": text}]
            old = message_of(raws[run.start]) or {}
            new_msg = {**old, "content": [{**old["content"][0], "content": content}]}
            after = counter.count_message(new_msg)
            _note_growth(notes, run.mode, members[0].seq, members[0].seq, before, after)
            ops.append(
                PlanOp(
                    "tool-rewrite",
                    run.mode,
                    members[0].seq,
                    members[0].seq,
                    (members[0].seq,),
                    text,
                    before,
                    counter.count_message(new_msg),
                    tool_content=content,
                )
            )
            continue
        # An off run's message is its marker alone (the source is its mark). An off run given a
        # member's own text carries that member: its content is re-emitted verbatim, so the
        # rest of the run costs no token (fit's zero-token option).
        text = body if run.mode == "off" else (f"{header}\n{body}" if body else "")
        msg = _user_message(text, assembly_source(run.mode, items, before))
        carried = (
            _carried(members, raws[run.start : run.end + 1], body)
            if run.mode == "off" and explicit
            else None
        )
        if carried is not None:
            msg["content"] = carried
        _note_growth(
            notes, run.mode, members[0].seq, members[-1].seq, before, counter.count_message(msg)
        )
        ops.append(
            PlanOp(
                "collapse",
                run.mode,
                members[0].seq,
                members[-1].seq,
                tuple(n.seq for n in members),
                text,
                before,
                counter.count_message(msg),
                message=msg,
            )
        )
    ops.sort(key=lambda op: seq_pos[op.start_seq])
    if session.index.open_turn is None and any(op.needs_turn for op in ops):
        notes.append(
            "the harness rewrites a tool result only inside an open turn, and none is open: "
            "the batch is written inside an edit turn (turn/start … turn/end, no step)"
        )
    return ops, notes


def _carried(
    members: list[SurfaceNode], raws: list[dict[str, Any]], text: str
) -> list[dict[str, Any]] | None:
    """The content blocks of the run member whose own text ``text`` is, if one is a user
    message: re-emitted verbatim, they count exactly what that member counted."""
    for node, raw in zip(members, raws, strict=True):
        if node.type == "user/message" and digest_text(node.message) == text:
            content = (message_of(raw) or {}).get("content") or []
            return [dict(b) for b in content] or None
    return None


def _note_growth(
    notes: list[str], mode: Mode, start: int, end: int, before: int, after: int
) -> None:
    if mode == "key" and after >= before:
        notes.append(
            f"key collapse of seq {start}..{end} is not shorter ({before} -> {after} tokens): the "
            "digest is as long as the nodes; off, or a shorter explicit digest, would save tokens"
        )


def apply_ops(session: Session, ops: list[PlanOp], *, time: int | None = None) -> Session:
    """The session with every op appended as a validated replacement (still pending).

    A batch with a tool-result rewrite and no open turn is wrapped in an edit turn; a restored
    compaction checkpoint is written inside a fresh compaction bracket (see the module notes).
    """
    out = session
    edit_turn = session.index.open_turn is None and any(op.needs_turn for op in ops)
    if edit_turn:
        w = EventWriter.after(out)
        w.start_turn(time=time)
        out = out.append(w.take())
    for op in ops:
        if op.tool_content is not None:
            out = out.rewrite_tool_result(op.start_seq, op.tool_content, time=time)
        elif op.compaction is not None:
            out = _recompact(out, op, time)
        else:
            assert op.message is not None
            out = out.replace(op.start_seq, op.end_seq, op.message, time=time)
    if edit_turn:
        w = EventWriter.after(out)
        w.end_turn({"kind": "completed"}, time=time)
        out = out.append(w.take())
    return out


def _recompact(session: Session, op: PlanOp, time: int | None) -> Session:
    """``compaction/start``, ``compaction/summary``, the checkpoint, ``compaction/end``."""
    assert op.compaction is not None and op.message is not None
    turn = session.index.open_turn
    cid = op.compaction["compactionId"]
    seq = op.start_seq
    w = EventWriter.after(session)
    start = w.emit("compaction/start", {"compactionId": cid, "turn": turn}, time=time)
    summary = w.emit(
        "compaction/summary",
        {
            "compactionId": cid,
            "summary": op.compaction["summary"],
            "shadowedRange": {"start": seq, "end": seq},
            "shadowedSeqs": [seq],
            "shadowedTokenCount": estimate_message(message_of(session.raw_events[seq]) or {}),
            "provider": op.compaction["provider"],
            "model": op.compaction["model"],
        },
        time=time,
    )
    out = session.append(w.take())
    out = out.replace(seq, seq, op.message, sources=[start, summary, seq], time=time)
    w = EventWriter.after(out)
    w.emit("compaction/end", {"compactionId": cid, "turn": turn}, time=time)
    return out.append(w.take())
