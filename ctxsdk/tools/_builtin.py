"""ctxsdk's own tools (``context_messages``, ``context_search``, ``context_assembler``,
``context_recall``, ``merge_sessions``),
``default_registry`` that holds them, and the module-level ``dispatch``.

An engine's tool is registered by a function in ``_BUILTIN`` that imports the engine when it
runs, so that importing ``ctxsdk.tools`` loads no engine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from ..session.kernel import gist, message_of, search_text
from ._registry import ToolContext, ToolFn, ToolRegistry

if TYPE_CHECKING:
    from ..memory import Memory
    from ..session import Session

__all__ = [
    "ContextMessagesArgs",
    "ContextSearchArgs",
    "context_messages",
    "context_search",
    "default_registry",
    "dispatch",
]


def _message_or_empty(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    return message_of(raw) or {}


def _role(raw: Mapping[str, Any], msg: Mapping[str, Any]) -> str:
    return "tool" if raw.get("type") == "tool/result" else str(msg.get("role", ""))


class ContextMessagesArgs(BaseModel):
    """Arguments of ``context_messages``."""

    last: int = Field(5, ge=0, le=50, description="How many of the latest messages to show.")
    gist_chars: int = Field(160, ge=20, le=2000, description="Characters per message gist.")


class ContextSearchArgs(BaseModel):
    """Arguments of ``context_search``."""

    query: str = Field(min_length=1, description="Exact text to look for.")
    limit: int = Field(10, ge=1, le=100, description="At most this many hits.")
    case_sensitive: bool = Field(False, description="Match case exactly.")


def context_messages(args: ContextMessagesArgs, ctx: ToolContext) -> dict[str, Any]:
    """The messages the model receives in this session: how many, how many tokens
    (the harness's chars/4 estimate), by role, and a gist of the last few."""
    session = ctx.require_session()
    seqs = session.message_seqs()
    raws = session.raw_events
    table = session.tokens("estimate")
    last = []
    for seq in seqs[len(seqs) - args.last :] if args.last else []:
        msg = _message_or_empty(raws[seq])
        last.append({"seq": seq, "role": _role(raws[seq], msg), "gist": gist(msg, args.gist_chars)})
    by_role: dict[str, int] = {}
    for seq in seqs:
        role = _role(raws[seq], _message_or_empty(raws[seq]))
        by_role[role] = by_role.get(role, 0) + 1
    return {
        "session": session.id,
        "count": len(seqs),
        "tokens": table.total,
        "tokenizer": "estimate",
        "by_role": by_role,
        "last": last,
    }


def context_search(args: ContextSearchArgs, ctx: ToolContext) -> dict[str, Any]:
    """Exact substring search over the messages the model receives (text, reasoning, tool
    calls and results); each hit is the message's seq, role and a snippet around the match."""
    session = ctx.require_session()
    raws = session.raw_events
    needle = args.query if args.case_sensitive else args.query.lower()
    hits: list[dict[str, Any]] = []
    total = 0
    for seq in session.message_seqs():
        msg = _message_or_empty(raws[seq])
        text = search_text(msg)
        hay = text if args.case_sensitive else text.lower()
        at = hay.find(needle)
        if at < 0:
            continue
        total += 1
        if len(hits) < args.limit:
            lo, hi = max(at - 60, 0), min(at + len(needle) + 60, len(text))
            snippet = ("…" if lo else "") + text[lo:hi] + ("…" if hi < len(text) else "")
            hits.append(
                {"seq": seq, "role": _role(raws[seq], msg), "snippet": " ".join(snippet.split())}
            )
    out: dict[str, Any] = {"query": args.query, "total": total, "hits": hits}
    from ctxsdk.fold.kernel import folded_search

    folded = folded_search(session, args.query, args.limit, store=ctx.extras.get("fold_store"))
    if folded is not None:
        out["folded"] = folded
    return out


def _register_session_tools(reg: ToolRegistry) -> None:
    reg.register(
        "context_messages",
        "Summarise the messages you currently receive in this session: count, estimated "
        "tokens, counts by role and a gist of the last N messages (with their seq numbers).",
        ContextMessagesArgs,
        context_messages,
    )
    reg.register(
        "context_search",
        "Search the messages you currently receive in this session for an exact text; "
        "returns each matching message's seq, role and a snippet. When earlier parts of the "
        "conversation were folded, 'folded' lists matches in the archive too, newest first, "
        "each with a ref for context_recall.",
        ContextSearchArgs,
        context_search,
    )


def _register_assembler(reg: ToolRegistry) -> None:
    from ..assemble import context_assembler
    from ..assemble.kernel import ASSEMBLER_TOOL_DESCRIPTION as DESCRIPTION
    from ..assemble.kernel import AssemblerArgs

    def run(args: AssemblerArgs, ctx: ToolContext) -> dict[str, Any]:
        session = ctx.require_session()
        # the presets ``action: preset`` applies are the caller's (extras ``assembly_rules``)
        rules = list(ctx.extras.get("assembly_rules") or ())
        result, new = context_assembler(session, args, rules=rules, protect_current_step=True)
        if new is not None:
            if ctx.commit is None:
                result["applied"] = False
                result["notes"].append("no way to write the edit from here: dry run only")
            else:
                ctx.commit(new)
        return result

    reg.register("context_assembler", DESCRIPTION, AssemblerArgs, run)


def _register_fold(reg: ToolRegistry) -> None:
    from ctxsdk.fold.kernel import RECALL_DESCRIPTION, RecallArgs, context_recall

    def run(args: RecallArgs, ctx: ToolContext) -> dict[str, Any]:
        return context_recall(ctx.require_session(), args, store=ctx.extras.get("fold_store"))

    reg.register("context_recall", RECALL_DESCRIPTION, RecallArgs, run)


def _register_merge(reg: ToolRegistry) -> None:
    """``merge_sessions``. Extras: ``merge_sources`` (a ``ctxsdk.merge.MergeSources``, where
    the choice is kept; without it the tool answers ``unavailable``) and ``merge_candidates``
    (``(id, title)`` pairs in the order ``list`` numbers them; without it, the other sessions
    of the DSH home the session was read from, else none)."""
    from ctxsdk.merge.kernel import (
        MERGE_SESSIONS_DESCRIPTION,
        MergeSessionsArgs,
        merge_sessions,
        workspace_candidates,
    )

    def run(args: MergeSessionsArgs, ctx: ToolContext) -> dict[str, Any]:
        session = ctx.require_session()
        sources = ctx.extras.get("merge_sources")
        if sources is None:
            return {"action": args.action, "unavailable": "no merge source store is configured"}
        candidates = ctx.extras.get("merge_candidates")
        if candidates is None:
            candidates = workspace_candidates(session)
        return merge_sessions(session, args, sources=sources, candidates=candidates)

    reg.register("merge_sessions", MERGE_SESSIONS_DESCRIPTION, MergeSessionsArgs, run)


def _register_memory(reg: ToolRegistry) -> None:
    """``ctx_remember``, ``ctx_link``, ``ctx_find``, ``ctx_read``, ``ctx_edit``,
    ``ctx_delete``. Extra: ``memory`` (a
    ``ctxsdk.Memory``); without it each tool answers ``unavailable``."""
    from ..memory import kernel as t

    def unavailable(name: str) -> dict[str, Any]:
        return {"tool": name, "unavailable": "no memory is configured for this session"}

    def remember(args: t.RememberArgs, ctx: ToolContext) -> dict[str, Any]:
        mem = ctx.extras.get("memory")
        return (
            unavailable("ctx_remember") if mem is None else t.ctx_remember(ctx.session, args, mem)
        )

    def on_memory(name: str, run: Callable[[Any, Memory], dict[str, Any]]) -> ToolFn:
        """The tool that answers ``run(args, memory)`` (the session's memory is all it needs)."""

        def call(args: Any, ctx: ToolContext) -> dict[str, Any]:
            mem = ctx.extras.get("memory")
            return unavailable(name) if mem is None else run(args, mem)

        return call

    reg.register("ctx_remember", t.REMEMBER_DESCRIPTION, t.RememberArgs, remember)
    only_memory = (  # the tools that need nothing but the memory
        ("ctx_link", t.LINK_DESCRIPTION, t.LinkArgs, t.ctx_link),
        ("ctx_find", t.FIND_DESCRIPTION, t.FindArgs, t.ctx_find),
        ("ctx_read", t.READ_DESCRIPTION, t.ReadArgs, t.ctx_read),
        ("ctx_edit", t.EDIT_DESCRIPTION, t.EditArgs, t.ctx_edit),
        ("ctx_delete", t.DELETE_DESCRIPTION, t.DeleteArgs, t.ctx_delete),
    )
    for name, description, arguments, run in only_memory:
        reg.register(name, description, arguments, on_memory(name, run))


_BUILTIN: tuple[Callable[[ToolRegistry], None], ...] = (
    _register_session_tools,
    _register_assembler,
    _register_fold,
    _register_merge,
    _register_memory,
)


def default_registry() -> ToolRegistry:
    """A new registry holding ctxsdk's own tools (a fresh object each call)."""
    reg = ToolRegistry()
    for add in _BUILTIN:
        add(reg)
    return reg


def dispatch(
    name: str,
    arguments_json: str | Mapping[str, Any] | None,
    context: ToolContext | Session | None = None,
    *,
    registry: ToolRegistry | None = None,
) -> dict[str, Any]:
    """Dispatch one call through ``registry`` (default: ``default_registry``)."""
    return (registry or default_registry()).dispatch(name, arguments_json, context)


ContextMessagesArgs.__module__ = "ctxsdk.tools"
ContextSearchArgs.__module__ = "ctxsdk.tools"
default_registry.__module__ = "ctxsdk.tools"
dispatch.__module__ = "ctxsdk.tools"
