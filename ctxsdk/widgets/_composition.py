"""What the context-composition bar and the stats bar show, read from a session and its tree.

``composition`` is the one place the widgets take the composition numbers from. It is an
adapter over public ``ctxsdk.session`` calls (``Session.tokens``, ``Session.surface``,
``Session.tools``, ``get_tokenizer``) and will switch to ``ctxsdk.session.composition`` when
the base provides it; the widgets only read the dictionary it returns. ``fold_stats`` sums
what a tree's replacement rows stand for.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ..assemble import Row
from ..session import Session, TokenCounter, get_tokenizer, message_of

__all__ = ["COMPACT_AT", "PARTS", "composition", "fold_stats"]

# The harness compacts when the context reaches this share of the window.
COMPACT_AT = 0.8

# key, label: the parts of a request, in the order the bar draws them.
PARTS: tuple[tuple[str, str], ...] = (
    ("system", "system prompt"),
    ("tools", "tool schemas"),
    ("user", "user"),
    ("assistant", "assistant"),
    ("reasoning", "reasoning"),
    ("tool_results", "tool results"),
    ("folds", "fold markers"),
)


def composition(
    session: Session, *, tokenizer: str = "estimate", window: int | None = None
) -> dict[str, Any]:
    """The tokens of one request by part, against the context window.

    Returns ``{"window", "threshold", "used", "free", "parts": [{key, label, value}],
    "tokenizer"}``: ``window`` is ``window`` or ``session.context_window`` (None when
    neither is known), ``threshold`` is where the harness compacts,
    ``floor(window * 0.8)``. The parts sum to ``used``: the messages the model receives
    (``session.tokens(tokenizer)``, so ``used`` minus ``tools`` is its ``total``) plus the
    tool schemas of the latest request. A replacement on the surface (a collapse, a
    compaction checkpoint, a prune) counts as a fold marker; an assistant message's
    reasoning counts apart from its text and calls.

    This adapter will switch to ``ctxsdk.session.composition`` once the base provides it;
    the keys of the dictionary stay as they are.
    """
    table = session.tokens(tokenizer)
    tk = get_tokenizer(tokenizer)
    replaced = {n.seq for n in session.surface() if n.shadowed}
    parts = dict.fromkeys((k for k, _ in PARTS), 0)
    parts["system"] += table.system
    tools = session.tools
    if tools:
        parts["tools"] += tk.count(json.dumps(tools, ensure_ascii=False, separators=(",", ":")))
    messages = dict(zip(session.message_seqs(), session.messages(), strict=True))
    for row in table.rows:
        message = messages.get(row.seq)
        if row.seq in replaced:
            parts["folds"] += row.tokens
        elif row.role == "system":
            parts["system"] += row.tokens
        elif message is not None and message.tool_results:
            parts["tool_results"] += row.tokens
        elif row.role == "assistant" and message is not None:
            reasoning = "\n".join(
                str(getattr(b, "text", "")) for b in message.content if b.type == "reasoning"
            )
            share = min(row.tokens, tk.count(reasoning)) if reasoning else 0
            parts["reasoning"] += share
            parts["assistant"] += row.tokens - share
        else:
            parts["user"] += row.tokens
    used = sum(parts.values())
    window = window if window is not None else session.context_window
    threshold = math.floor(window * COMPACT_AT) if window else None
    return {
        "window": window,
        "threshold": threshold,
        "used": used,
        "free": max(0, window - used) if window else None,
        "parts": [{"key": k, "label": label, "value": parts[k]} for k, label in PARTS],
        "tokenizer": tokenizer,
    }


def fold_stats(root: Row, session: Session, counter: TokenCounter) -> dict[str, int]:
    """The replacements on the surface and what they stand for.

    ``regions``: replacement rows (collapses, compaction checkpoints, prunes); ``folded``:
    what they cost now; ``original``: the tokens of the events they cover, each counted once
    at its innermost level (a rewrite of a rewrite counts the first text); ``saved``:
    ``original - folded``."""
    regions = [r for r in root.walk() if r.seq is not None and r.state == "live" and r.shadowed]
    folded = sum(r.tokens for r in regions)
    originals: list[int] = []
    for region in regions:
        stack = list(region.children)
        while stack:
            row = stack.pop()
            if row.state != "shadowed" or row.event_seq is None:
                continue
            inner = [c for c in row.children if c.state == "shadowed"]
            if inner:
                stack.extend(inner)
            else:
                originals.append(row.event_seq)
    raws = session.raw_events
    counts = counter.count_messages(message_of(raws[s]) or {} for s in originals)
    original = sum(counts)
    return {
        "regions": len(regions),
        "folded": folded,
        "original": original,
        "saved": original - folded,
    }
