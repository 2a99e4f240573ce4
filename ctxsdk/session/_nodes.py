"""What engines need to know about surface nodes: tool-call groups and token counts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ._surface import SurfaceNode
from ._text import message_of

if TYPE_CHECKING:
    from ._session_like import SessionLike
    from ._tokens import TokenCounter

__all__ = ["node_tokens", "tool_groups"]


def tool_groups(surface: Sequence[SurfaceNode]) -> list[tuple[int, int]]:
    """(first, last) surface positions of each assistant message that calls tools, through
    its last result: the spans an edit must keep whole (a call never loses its result)."""
    where: dict[str, int] = {}
    for pos, node in enumerate(surface):
        for r in node.message.tool_results:
            where[r.tool_call_id] = pos
    groups = []
    for pos, node in enumerate(surface):
        ids = [c.id for c in node.message.tool_calls]
        ends = [where[i] for i in ids if i in where and where[i] > pos]
        if ends:
            groups.append((pos, max(ends)))
    return groups


def node_tokens(session: SessionLike, counter: TokenCounter) -> list[int]:
    """Tokens of each surface node's message, in surface order (the counter caches them).

    A node the model does not receive (an empty system message, "no system prompt"; an empty
    assistant message) costs 0, as in ``Session.tokens()``: the two always sum the same.
    """
    raws = session.raw_events
    sent = set(session.message_seqs())
    seqs = session.index.surface_seqs()
    counts = counter.count_messages(message_of(raws[s]) or {} for s in seqs if s in sent)
    it = iter(counts)
    return [next(it) if s in sent else 0 for s in seqs]
