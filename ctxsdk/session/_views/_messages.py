"""``surface_df`` and ``messages_df``: the surface nodes, and the messages the model receives."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._text import display_text, message_of
from ._columns import MESSAGES, SURFACE, documented, frame
from ._raw import blocks, field_of, of_type, strings, tool_result

if TYPE_CHECKING:
    import polars as pl

    from .._session_like import SessionLike


@documented(SURFACE)
def surface_df(s: SessionLike) -> pl.DataFrame:
    """One row per node of the current surface, in model order (spec §7).

    Nodes whose message the model does not receive (an empty ``system/message`` = "no system
    prompt", an empty assistant message) are rows too; ``messages_df`` leaves them out.

    ``text`` leaves out reasoning and tool-call arguments. ``tokens_estimate`` is
    ``estimate_message``, overheads included.
    """
    from .._tokens import estimate_message

    raw = s.raw_events
    replaced = s.index.replaced
    nodes = list(s.index.surface_seqs())
    msgs = [message_of(raw[n]) for n in nodes]
    data: dict[str, Sequence[Any]] = {
        "position": list(range(len(nodes))),
        "seq": nodes,
        "type": [raw[n]["type"] for n in nodes],
        "role": field_of(msgs, "role"),
        "op": ["replace" if n in replaced else "append" for n in nodes],
        "shadowed": [list(replaced.get(n, ())) for n in nodes],
        "message_id": field_of(msgs, "id"),
        "text": [display_text(m) for m in msgs],
        "tokens_estimate": [estimate_message(m) if m is not None else 0 for m in msgs],
    }
    return frame(data, SURFACE)


def _source(msg: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    src = msg.get("source") if msg is not None else None
    return src if isinstance(src, Mapping) else None


@documented(MESSAGES)
def messages_df(s: SessionLike) -> pl.DataFrame:
    """One row per message the model receives (``deriveMessages()``, spec §8), in order;
    row ``index`` is the position in ``Session.messages``.
    """
    raw = s.raw_events
    seqs = s.message_seqs()
    msgs = [message_of(raw[q]) for q in seqs]
    content = [blocks(m) for m in msgs]
    call_ids = [strings(of_type(bs, "tool-call"), "id") for bs in content]
    data: dict[str, Sequence[Any]] = {
        "index": list(range(len(seqs))),
        "seq": seqs,
        "id": field_of(msgs, "id"),
        "role": field_of(msgs, "role"),
        "source_kind": field_of([_source(m) for m in msgs], "kind"),
        "text": [display_text(m) for m in msgs],
        "n_blocks": [len(bs) for bs in content],
        "n_tool_calls": [len(ids) for ids in call_ids],
        "tool_call_ids": call_ids,
        "answers_call_id": field_of([tool_result(bs) for bs in content], "toolCallId"),
        "reasoning_chars": [
            sum(map(len, strings(of_type(bs, "reasoning"), "text"))) for bs in content
        ],
    }
    return frame(data, MESSAGES)
