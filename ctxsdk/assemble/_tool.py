"""The ``context_assembler`` agent tool: an agent reads its context tree and collapses its own
finished sub-tasks (actions ``tree``, ``set``, ``preset``, ``messages``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from ..session import Session
from ..session.kernel import gist
from ._assembly import Assembly, Rule
from ._modes import Mode

__all__ = ["DESCRIPTION", "AssemblerArgs", "context_assembler"]

DESCRIPTION = (
    "Inspect and edit your own context. action=tree lists the rows the model sees (seq, kind, "
    "mode, tokens, gist). action=set collapses rows: give ops [{surfaceSeq, mode, digest?}] with "
    "mode key (replace with a digest: prefer writing your own short digest of what matters) or "
    "off (drop to a marker), or full (restore a collapse). Collapse finished sub-tasks and "
    "failures you have already diagnosed; never collapse what your current step depends on; "
    "collapse a tool call "
    "together with its results. dryRun=true (default) only reports what would change. "
    "action=preset applies the configured rules; action=messages shows the derived messages."
)

_MAX_ROWS = 80


class AssemblerOp(BaseModel):
    surfaceSeq: int
    mode: Mode
    digest: str | None = None


class AssemblerArgs(BaseModel):
    action: Literal["tree", "set", "preset", "messages"]
    ops: list[AssemblerOp] = Field(default_factory=list)
    dryRun: bool = True
    applyPresets: bool = False


def context_assembler(
    session: Session,
    args: AssemblerArgs,
    *,
    rules: list[Rule] | None = None,
    protect_current_step: bool = False,
) -> tuple[dict[str, Any], Session | None]:
    """Run one tool call; returns the JSON result and the new session when ops were applied.

    ``protect_current_step`` (for a model calling this as a tool): nothing from the last
    assistant message on is collapsed, since the step in progress depends on it.
    """
    a = Assembly(session, rules=rules or ())
    if args.action == "tree":
        leaves = a.tree().leaves()
        rows = [
            {
                "seq": r.seq,
                "kind": r.kind,
                "mode": r.mode,
                "tokens": r.tokens,
                "gist": r.gist,
                "turn": r.turn,
            }
            for r in leaves[-_MAX_ROWS:]
        ]
        return {
            "rows": rows,
            "omitted": max(0, len(leaves) - _MAX_ROWS),
            "tokens": sum(r.tokens for r in leaves),
        }, None
    if args.action == "messages":
        msgs = session.messages()
        return {
            "count": len(msgs),
            "messages": [{"role": m.role, "gist": gist(m)} for m in msgs[-_MAX_ROWS:]],
        }, None
    notes: list[str] = []
    if args.action == "preset" or args.applyPresets:
        a.apply_rules()
        if not rules:
            notes.append("no rules are configured: presets change nothing")
    for op in args.ops:  # explicit ops win over presets
        a.set(op.surfaceSeq, op.mode, op.digest)
    if protect_current_step:
        callers = [n.seq for n in session.surface() if n.message.role == "assistant"]
        if callers:
            for seq in [s for s in a.draft if s >= callers[-1]]:
                a.set(seq, "full")
                notes.append(f"seq {seq} belongs to the current step and stays as it is")
    preview = a.preview()
    result: dict[str, Any] = {
        "ops": [
            {
                "kind": op.kind,
                "mode": op.mode,
                "startSeq": op.start_seq,
                "endSeq": op.end_seq,
                "nodes": len(op.shadowed),
                "tokensBefore": op.tokens_before,
                "tokensAfter": op.tokens_after,
            }
            for op in preview.ops
        ],
        "notes": notes + list(preview.notes),
        "tokensBefore": preview.tokens_before,
        "tokensAfter": preview.tokens_after,
        "applied": False,
    }
    if args.dryRun or not preview.ops:
        return result, None
    new = a.apply(write=False)
    result["applied"] = True
    return result, new
