"""What the context-composition bar and the stats bar show, read from a session and its tree.

``composition`` is the bar's view of ``ctxsdk.session.composition`` (the numbers are the
base's; this only shapes them for the front end). ``fold_stats`` sums what a tree's
replacement rows stand for.
"""

from __future__ import annotations

from typing import Any

from ..assemble import Row
from ..session import Session, TokenCounter
from ..session import composition as base_composition
from ..session.kernel import COMPOSITION_PARTS, message_of

__all__ = ["composition", "fold_stats"]

_KEYS = {"markers": "folds"}  # the front end's name for the base's part


def composition(
    session: Session, *, tokenizer: str = "estimate", window: int | None = None
) -> dict[str, Any]:
    """``ctxsdk.session.composition`` as the bar reads it: ``{"window", "threshold",
    "used", "free", "parts": [{key, label, value}], "tokenizer"}`` (the parts in the order
    the bar draws them; ``folds`` is the base's ``markers``)."""
    c = base_composition(session, tokenizer, window=window)
    parts = [
        {"key": _KEYS.get(key, key), "label": label, "value": c.parts[key]}
        for key, label in COMPOSITION_PARTS
    ]
    return {
        "window": c.window,
        "threshold": c.threshold,
        "used": c.used,
        "free": c.free,
        "parts": parts,
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
