"""Polars views of a session: events, surface, messages, tool calls, turns and tokens.

Every function takes a ``Session`` and returns a ``polars.DataFrame``
whose columns and dtypes are fixed (each function's docstring has the table); a session with
no events gives an empty frame with the same schema. The views read the raw log the fold
already validated, so they are fast and never re-parse events into pydantic models (except
``turns_df``, which reuses ``Session.turns``).

Token counts (``tokens_df`` and its group-bys) go through one
``TokenCounter``, all uncached texts in one ``count_batch`` call;
pass a ``TokenCounter`` as ``tokenizer`` to reuse its cache across calls.

polars is imported when a view is first called, never at import time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from .session import message_of

if TYPE_CHECKING:
    import polars as pl

    from .session import Session
    from .tokens import TokenCounter, Tokenizer

__all__ = [
    "events_df",
    "messages_df",
    "surface_df",
    "tokens_by_role",
    "tokens_by_tool",
    "tokens_df",
    "tools_df",
    "turns_df",
]

# --- small readers of raw JSON shapes ------------------------------------------------------------


def _blocks(msg: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    content = msg.get("content") if msg is not None else None
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, Mapping)]


def _block_text(blocks: Sequence[Mapping[str, Any]]) -> str:
    """Text blocks joined, as ``Message.text`` and ``ToolResultBlock.text`` join them."""
    return "".join(
        b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)
    )


def _display_text(msg: Mapping[str, Any] | None) -> str:
    """A message's text blocks joined, followed by the text inside its tool-result blocks."""
    blocks = _blocks(msg)
    out = _block_text(blocks)
    for b in blocks:
        if b.get("type") == "tool-result":
            out += _block_text(_blocks(b))
    return out


def _str_or_none(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _int_or_none(v: Any) -> int | None:
    return v if type(v) is int else None


def _source_kind(msg: Mapping[str, Any] | None) -> str | None:
    src = msg.get("source") if msg is not None else None
    return _str_or_none(src.get("kind")) if isinstance(src, Mapping) else None


def _tool_result_block(msg: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    for b in _blocks(msg):
        if b.get("type") == "tool-result":
            return b
    return None


def _turn_step_of(s: Session) -> tuple[list[int | None], list[int | None]]:
    """Per seq: the turn and step whose start..end span holds the event (None outside)."""
    n = len(s.raw_events)
    turns: list[int | None] = [None] * n
    steps: list[int | None] = [None] * n
    for span in s.index.turns:
        end = span.end_seq if span.end_seq is not None else n - 1
        turns[span.start_seq : end + 1] = [span.turn] * (end + 1 - span.start_seq)
        for step, start, stop in span.steps:
            last = stop if stop is not None else end
            steps[start : last + 1] = [step] * (last + 1 - start)
    return turns, steps


def _frame(columns: Mapping[str, Sequence[Any]], schema: pl.Schema) -> pl.DataFrame:
    """A DataFrame with exactly ``schema``, each column built as a typed Series (much faster
    than a schema'd dict for list columns, and the same for empty columns)."""
    import polars as pl

    return pl.DataFrame([pl.Series(name, columns[name], dtype=dt) for name, dt in schema.items()])


# --- events --------------------------------------------------------------------------------------


def events_df(s: Session) -> pl.DataFrame:
    """One row per event of the log, in seq order.

    | column | dtype | meaning |
    | --- | --- | --- |
    | seq | Int64 | the event's seq (0-based, contiguous) |
    | type | Utf8 | event type, e.g. ``tool/result`` |
    | time | Datetime(ms, UTC) | the event's ``time`` (epoch ms; may go backwards) |
    | turn | Int64 (null) | the turn whose ``turn/start..turn/end`` holds the event |
    | step | Int64 (null) | the step (within ``turn``) whose span holds the event |
    | surface_op | Utf8 (null) | ``"append"``, ``"replace"``, or null for log-only events |
    | sources | List(Int64) (null) | ``sourceEventSeqs``, ``[start,end]`` ranges expanded |
    | on_surface | Boolean | the event is a node of the current surface |
    | shadowed_by | Int64 (null) | the replacement that took this node off the surface |
    | bytes | Int64 | size of the event as compact JSON (UTF-8, no newline) |

    ``turn`` is null between turns; an open turn runs to the end of the log. ``sources`` is
    null when the event has none and ``[]`` when it says "none" (a v0 empty stream).
    """

    raw = s.raw_events
    index = s.index
    surface = index.surface
    turns, steps = _turn_step_of(s)
    ops: list[str | None] = []
    for ev in raw:
        op = ev.get("surfaceOp")
        ops.append("append" if op == "append" else "replace" if isinstance(op, dict) else None)
    dumps = orjson.dumps
    data: dict[str, Sequence[Any]] = {
        "seq": list(range(len(raw))),
        "type": [ev["type"] for ev in raw],
        "time": [ev["time"] for ev in raw],
        "turn": turns,
        "step": steps,
        "surface_op": ops,
        "sources": [index.source_seqs.get(i) for i in range(len(raw))],
        "on_surface": [i in surface for i in range(len(raw))],
        "shadowed_by": [index.shadowed_by.get(i) for i in range(len(raw))],
        "bytes": [len(dumps(ev)) for ev in raw],
    }
    return _frame(data, _events_schema())


def _events_schema() -> pl.Schema:
    import polars as pl

    return pl.Schema(
        {
            "seq": pl.Int64(),
            "type": pl.Utf8(),
            "time": pl.Datetime("ms", "UTC"),
            "turn": pl.Int64(),
            "step": pl.Int64(),
            "surface_op": pl.Utf8(),
            "sources": pl.List(pl.Int64()),
            "on_surface": pl.Boolean(),
            "shadowed_by": pl.Int64(),
            "bytes": pl.Int64(),
        }
    )


# --- surface -------------------------------------------------------------------------------------


def surface_df(s: Session) -> pl.DataFrame:
    """One row per node of the current surface, in model order (spec §7).

    Nodes whose message the model does not receive (an empty ``system/message`` = "no system
    prompt", an empty assistant message) are rows too; ``messages_df`` leaves them out.

    | column | dtype | meaning |
    | --- | --- | --- |
    | position | Int64 | 0-based position on the surface |
    | seq | Int64 | the event that is this node |
    | type | Utf8 | ``system/message``, ``user/message``, ``assistant/message`` or ``tool/result`` |
    | role | Utf8 | the message's role (``system``/``user``/``assistant``) |
    | op | Utf8 | ``"append"`` or ``"replace"`` (a replacement node) |
    | shadowed | List(Int64) | the nodes a replacement took the place of (``[]`` for an append) |
    | message_id | Utf8 | the message id (stable forever) |
    | text | Utf8 | text blocks joined, then the text inside tool-result blocks |
    | tokens_estimate | Int64 | the harness's chars/4 estimate of the message (spec §14) |

    ``text`` leaves out reasoning and tool-call arguments. ``tokens_estimate`` is
    ``estimate_message``, overheads included.
    """

    from .tokens import estimate_message

    raw = s.raw_events
    index = s.index
    nodes = index.surface.nodes()
    msgs = [message_of(raw[n]) for n in nodes]
    data: dict[str, Sequence[Any]] = {
        "position": list(range(len(nodes))),
        "seq": nodes,
        "type": [raw[n]["type"] for n in nodes],
        "role": [_str_or_none(m.get("role")) if m is not None else None for m in msgs],
        "op": ["replace" if n in index.replaced else "append" for n in nodes],
        "shadowed": [list(index.replaced.get(n, ())) for n in nodes],
        "message_id": [_str_or_none(m.get("id")) if m is not None else None for m in msgs],
        "text": [_display_text(m) for m in msgs],
        "tokens_estimate": [estimate_message(m) if m is not None else 0 for m in msgs],
    }
    return _frame(data, _surface_schema())


def _surface_schema() -> pl.Schema:
    import polars as pl

    return pl.Schema(
        {
            "position": pl.Int64(),
            "seq": pl.Int64(),
            "type": pl.Utf8(),
            "role": pl.Utf8(),
            "op": pl.Utf8(),
            "shadowed": pl.List(pl.Int64()),
            "message_id": pl.Utf8(),
            "text": pl.Utf8(),
            "tokens_estimate": pl.Int64(),
        }
    )


# --- messages ------------------------------------------------------------------------------------


def messages_df(s: Session) -> pl.DataFrame:
    """One row per message the model receives (``deriveMessages()``, spec §8), in order;
    row ``index`` is the position in ``Session.messages``.

    | column | dtype | meaning |
    | --- | --- | --- |
    | index | Int64 | 0-based position in ``s.messages()`` |
    | seq | Int64 | the surface event the message comes from |
    | id | Utf8 | the message id |
    | role | Utf8 | ``system``, ``user`` or ``assistant`` |
    | source_kind | Utf8 | ``source.kind``: ``user``, ``model``, ``tool``, ``plugin``, ... |
    | text | Utf8 | as in ``surface_df`` |
    | n_blocks | Int64 | number of content blocks |
    | n_tool_calls | Int64 | number of ``tool-call`` blocks |
    | tool_call_ids | List(Utf8) | the ids of those tool calls, in block order |
    | answers_call_id | Utf8 (null) | for a tool result: the call id it answers |
    | reasoning_chars | Int64 | characters (code points) in ``reasoning`` blocks |
    """

    raw = s.raw_events
    seqs = s.message_seqs()
    msgs = [message_of(raw[q]) for q in seqs]
    ids: list[list[str]] = []
    n_blocks: list[int] = []
    reasoning: list[int] = []
    answers: list[str | None] = []
    for m in msgs:
        blocks = _blocks(m)
        n_blocks.append(len(blocks))
        ids.append(
            [
                b["id"]
                for b in blocks
                if b.get("type") == "tool-call" and isinstance(b.get("id"), str)
            ]
        )
        reasoning.append(
            sum(
                len(b["text"])
                for b in blocks
                if b.get("type") == "reasoning" and isinstance(b.get("text"), str)
            )
        )
        tr = _tool_result_block(m)
        answers.append(_str_or_none(tr.get("toolCallId")) if tr is not None else None)
    data: dict[str, Sequence[Any]] = {
        "index": list(range(len(seqs))),
        "seq": seqs,
        "id": [_str_or_none(m.get("id")) if m is not None else None for m in msgs],
        "role": [_str_or_none(m.get("role")) if m is not None else None for m in msgs],
        "source_kind": [_source_kind(m) for m in msgs],
        "text": [_display_text(m) for m in msgs],
        "n_blocks": n_blocks,
        "n_tool_calls": [len(i) for i in ids],
        "tool_call_ids": ids,
        "answers_call_id": answers,
        "reasoning_chars": reasoning,
    }
    return _frame(data, _messages_schema())


def _messages_schema() -> pl.Schema:
    import polars as pl

    return pl.Schema(
        {
            "index": pl.Int64(),
            "seq": pl.Int64(),
            "id": pl.Utf8(),
            "role": pl.Utf8(),
            "source_kind": pl.Utf8(),
            "text": pl.Utf8(),
            "n_blocks": pl.Int64(),
            "n_tool_calls": pl.Int64(),
            "tool_call_ids": pl.List(pl.Utf8()),
            "answers_call_id": pl.Utf8(),
            "reasoning_chars": pl.Int64(),
        }
    )


# --- tool calls ----------------------------------------------------------------------------------


@dataclass
class _Call:
    call_id: str | None
    name: str | None
    arguments: str | None
    assistant_seq: int | None
    turn: int | None
    step: int | None
    call_seq: int | None = None
    result_seq: int | None = None
    rewrites: list[int] = field(default_factory=list)  # content-only rewrites, in order
    is_error: bool | None = None
    error_code: str | None = None
    result_chars: int | None = None
    on_surface: bool = False
    pruned: bool = False


def _pair_calls(s: Session) -> list[_Call]:
    """Every tool call paired with its result by id, in the order the log makes them.

    Pairing follows the log as the harness folds it: a call is pending from its assistant
    message until a ``tool/result`` appended with its id answers it (so an id used again
    later starts a new pair). Calls still pending at the end (an interrupted log) keep a null
    result; a result no call expects (the synthetic ``TOOL_NOT_STARTED``) gets a row of its own
    with null call fields. Content-only ``tool/result`` replacements are followed from the
    original result to the node that is on the surface now.
    """
    raw = s.raw_events
    index = s.index
    out: list[_Call] = []
    pending: dict[str, _Call] = {}
    for seq, ev in enumerate(raw):
        etype = ev["type"]
        if etype == "assistant/message":
            if ev.get("surfaceOp") != "append":
                continue  # a (v0-v2) replacement repeats calls it does not make
            data = ev["data"]
            turn, step = _int_or_none(data.get("turn")), _int_or_none(data.get("step"))
            for b in _blocks(message_of(ev)):
                if b.get("type") != "tool-call":
                    continue
                cid = _str_or_none(b.get("id"))
                args = b.get("arguments")
                call = _Call(
                    call_id=cid,
                    name=_str_or_none(b.get("name")),
                    arguments=args if isinstance(args, str) else None,
                    assistant_seq=seq,
                    turn=turn,
                    step=step,
                )
                out.append(call)
                if cid is not None:
                    pending[cid] = call
        elif etype == "tool/call":
            call_or_none = pending.get(ev["data"].get("callId"))
            if call_or_none is not None and call_or_none.call_seq is None:
                call_or_none.call_seq = seq
        elif etype == "tool/result" and ev.get("surfaceOp") == "append":
            data = ev["data"]
            msg = message_of(ev)
            block = _tool_result_block(msg)
            cid = _str_or_none(block.get("toolCallId")) if block is not None else None
            found = pending.pop(cid, None) if cid is not None else None
            if found is None:
                found = _Call(
                    call_id=cid,
                    name=None,
                    arguments=None,
                    assistant_seq=None,
                    turn=_int_or_none(data.get("turn")),
                    step=_int_or_none(data.get("step")),
                )
                out.append(found)
            error = data.get("error")
            found.result_seq = seq
            found.is_error = block is not None and block.get("isError") is True
            found.error_code = (
                _str_or_none(error.get("code")) if isinstance(error, Mapping) else None
            )
            found.result_chars = len(_block_text(_blocks(block)))
    shadowed_by = index.shadowed_by
    for call in out:
        cur = call.result_seq
        if cur is None:
            continue
        while cur in shadowed_by:
            nxt = shadowed_by[cur]
            if raw[nxt]["type"] != "tool/result":
                break  # compacted away (or replaced by some other message)
            cur = nxt  # a tool/result replacing a tool/result is a content-only rewrite
            call.rewrites.append(cur)
        call.pruned = bool(call.rewrites)
        call.on_surface = cur in index.surface
    return out


def tools_df(s: Session) -> pl.DataFrame:
    """One row per tool call, with its result, in the order the calls were made.

    Calls pair with results by id (see spec §8's pairing rules). A call still pending at the
    end of an interrupted log has null result columns; a result that no call expects (the
    harness's synthetic ``TOOL_NOT_STARTED``) is a row with null call columns.

    | column | dtype | meaning |
    | --- | --- | --- |
    | call_id | Utf8 | the tool-call id |
    | name | Utf8 (null) | the tool's name |
    | arguments | Utf8 (null) | the raw JSON arguments text the model produced |
    | assistant_seq | Int64 (null) | the ``assistant/message`` holding the call |
    | call_seq | Int64 (null) | the ``tool/call`` event (null if the tool never started) |
    | result_seq | Int64 (null) | the ``tool/result`` appended for it (null while pending) |
    | rewrite_seq | Int64 (null) | the latest content-only rewrite of that result, if any |
    | turn | Int64 (null) | the turn of the call (of the result for an orphan result) |
    | step | Int64 (null) | the step of the call |
    | is_error | Boolean (null) | the result's ``isError`` (null without a result) |
    | error_code | Utf8 (null) | ``error.code`` of the result, e.g. ``TOOL_OUTCOME_UNKNOWN`` |
    | result_chars | Int64 (null) | characters of the original result's text |
    | arguments_chars | Int64 (null) | characters of ``arguments`` |
    | on_surface | Boolean | the result (original or rewritten) is on the surface now |
    | pruned | Boolean | the result was rewritten by a content-only replacement |

    ``on_surface`` is false once the result was compacted away, and for a call without a
    result. ``pruned`` marks the tool-result pruner's rewrites (and ``rewrite_tool_result``):
    a ``tool/result`` that replaces a ``tool/result``.
    """

    calls = _pair_calls(s)
    data: dict[str, Sequence[Any]] = {
        "call_id": [c.call_id for c in calls],
        "name": [c.name for c in calls],
        "arguments": [c.arguments for c in calls],
        "assistant_seq": [c.assistant_seq for c in calls],
        "call_seq": [c.call_seq for c in calls],
        "result_seq": [c.result_seq for c in calls],
        "rewrite_seq": [c.rewrites[-1] if c.rewrites else None for c in calls],
        "turn": [c.turn for c in calls],
        "step": [c.step for c in calls],
        "is_error": [c.is_error for c in calls],
        "error_code": [c.error_code for c in calls],
        "result_chars": [c.result_chars for c in calls],
        "arguments_chars": [len(c.arguments) if c.arguments is not None else None for c in calls],
        "on_surface": [c.on_surface for c in calls],
        "pruned": [c.pruned for c in calls],
    }
    return _frame(data, _tools_schema())


def _tools_schema() -> pl.Schema:
    import polars as pl

    return pl.Schema(
        {
            "call_id": pl.Utf8(),
            "name": pl.Utf8(),
            "arguments": pl.Utf8(),
            "assistant_seq": pl.Int64(),
            "call_seq": pl.Int64(),
            "result_seq": pl.Int64(),
            "rewrite_seq": pl.Int64(),
            "turn": pl.Int64(),
            "step": pl.Int64(),
            "is_error": pl.Boolean(),
            "error_code": pl.Utf8(),
            "result_chars": pl.Int64(),
            "arguments_chars": pl.Int64(),
            "on_surface": pl.Boolean(),
            "pruned": pl.Boolean(),
        }
    )


# --- turns ---------------------------------------------------------------------------------------


def turns_df(s: Session) -> pl.DataFrame:
    """One row per turn (``Session.turns``), with provider-reported usage summed.

    Usage columns are null when no assistant message of the turn reported usage; when some
    did, a bucket none of them reported is 0 (the buckets are disjoint, spec §4).

    | column | dtype | meaning |
    | --- | --- | --- |
    | turn | Int64 | turn number (1, 2, ...) |
    | start_seq | Int64 | its ``turn/start`` |
    | end_seq | Int64 (null) | its ``turn/end`` (null while the turn is open) |
    | reason | Utf8 (null) | ``turn/end.reason.kind``: ``completed``, ``aborted``, ... |
    | steps | Int64 | number of steps |
    | prompt | Utf8 (null) | the first user-sourced text of the turn |
    | input_tokens | Int64 (null) | sum of ``inputTokens`` (excludes cache reads) |
    | output_tokens | Int64 (null) | sum of ``outputTokens`` |
    | cache_read_tokens | Int64 (null) | sum of ``cacheReadTokens`` |
    | cache_write_tokens | Int64 (null) | sum of ``cacheWriteTokens`` |
    | reasoning_tokens | Int64 (null) | sum of ``reasoningTokens`` |
    | tool_calls | Int64 | tool-call blocks in the turn's assistant messages |
    | duration_ms | Int64 (null) | ``time(turn/end) - time(turn/start)`` (null while open) |
    """

    raw = s.raw_events
    rows: dict[str, list[Any]] = {k: [] for k in _turns_schema()}
    for t in s.turns():
        end = t.end_seq if t.end_seq is not None else len(raw) - 1
        calls = 0
        for ev in raw[t.start_seq : end + 1]:
            if ev["type"] == "assistant/message" and ev.get("surfaceOp") == "append":
                calls += sum(1 for b in _blocks(message_of(ev)) if b.get("type") == "tool-call")
        u = t.usage
        rows["turn"].append(t.turn)
        rows["start_seq"].append(t.start_seq)
        rows["end_seq"].append(t.end_seq)
        rows["reason"].append(t.reason)
        rows["steps"].append(len(t.steps))
        rows["prompt"].append(t.prompt)
        rows["input_tokens"].append(u.input_tokens if u else None)
        rows["output_tokens"].append(u.output_tokens if u else None)
        rows["cache_read_tokens"].append((u.cache_read_tokens or 0) if u else None)
        rows["cache_write_tokens"].append((u.cache_write_tokens or 0) if u else None)
        rows["reasoning_tokens"].append((u.reasoning_tokens or 0) if u else None)
        rows["tool_calls"].append(calls)
        rows["duration_ms"].append(
            raw[t.end_seq]["time"] - raw[t.start_seq]["time"] if t.end_seq is not None else None
        )
    return _frame(rows, _turns_schema())


def _turns_schema() -> pl.Schema:
    import polars as pl

    return pl.Schema(
        {
            "turn": pl.Int64(),
            "start_seq": pl.Int64(),
            "end_seq": pl.Int64(),
            "reason": pl.Utf8(),
            "steps": pl.Int64(),
            "prompt": pl.Utf8(),
            "input_tokens": pl.Int64(),
            "output_tokens": pl.Int64(),
            "cache_read_tokens": pl.Int64(),
            "cache_write_tokens": pl.Int64(),
            "reasoning_tokens": pl.Int64(),
            "tool_calls": pl.Int64(),
            "duration_ms": pl.Int64(),
        }
    )


# --- tokens --------------------------------------------------------------------------------------


def _counter(tokenizer: str | Tokenizer | TokenCounter) -> TokenCounter:
    from .tokens import TokenCounter

    return tokenizer if isinstance(tokenizer, TokenCounter) else TokenCounter(tokenizer)


def tokens_df(
    s: Session, tokenizer: str | Tokenizer | TokenCounter = "cl100k_base"
) -> pl.DataFrame:
    """Tokens of each message the model receives, the rows of ``Session.tokens``, with the
    harness's estimate beside the exact count.

    ``tokenizer`` is a name (``"cl100k_base"``, ``"o200k_base"``, ``"deepseek"``,
    ``"estimate"``), a tokenizer, or a ``TokenCounter`` whose
    cache is then reused. Every text that is not cached goes to the tokenizer in one
    ``count_batch`` call.

    A v0-v2 log whose latest request header carries a system prompt gets one more row first
    (``type`` ``request/header``, ``role`` ``system``, ``seq`` that header's seq), counted as
    ``Session.tokens`` counts it (text only, no message framing), so ``tokens.sum()``
    equals ``Session.tokens(tokenizer).total``.

    | column | dtype | meaning |
    | --- | --- | --- |
    | seq | Int64 | the surface event of the message |
    | role | Utf8 | ``system``, ``user`` or ``assistant`` |
    | type | Utf8 | the surface event type (``tool/result``, ...) |
    | tool | Utf8 (null) | the tool a result answers, or the tools a message calls |
    | tokens | Int64 | exact tokens, text plus chat framing |
    | estimate | Int64 | the harness's chars/4 estimate (spec §14) |

    ``tool`` joins the distinct names an assistant message calls with ``,``, in call order.
    ``tokens`` is ``count_message``.
    """

    from .tokens import CHAT_TOKENS_PER_MESSAGE, estimate_message, estimate_system

    counter = _counter(tokenizer)
    raw = s.raw_events
    seqs = s.message_seqs()
    msgs: list[Mapping[str, Any]] = [message_of(raw[q]) or {} for q in seqs]
    tool_of_result: dict[int, str] = {}
    for call in _pair_calls(s):
        if call.result_seq is not None and call.name is not None:
            for q in (call.result_seq, *call.rewrites):  # rewrites answer the same call
                tool_of_result[q] = call.name
    tools: list[str | None] = []
    for q, m in zip(seqs, msgs, strict=True):
        if raw[q]["type"] == "tool/result":
            tools.append(tool_of_result.get(q))
            continue
        names = [
            b["name"]
            for b in _blocks(m)
            if b.get("type") == "tool-call" and isinstance(b.get("name"), str)
        ]
        tools.append(",".join(dict.fromkeys(names)) if names else None)

    system = s.system_prompt if s.version < 3 else None
    system_msg = {"role": "system", "content": [{"type": "text", "text": system}]}
    batch = [*msgs, system_msg] if system else msgs
    counts = counter.count_messages(batch)  # one count_batch call for everything uncached
    data: dict[str, list[Any]] = {
        "seq": list(seqs),
        "role": [_str_or_none(m.get("role")) for m in msgs],
        "type": [raw[q]["type"] for q in seqs],
        "tool": tools,
        "tokens": counts[: len(msgs)],
        "estimate": [estimate_message(m) for m in msgs],
    }
    if system:
        header_seq = s.index.header_seqs[-1]
        exact = counter.tokenizer.name != "estimate"
        first = {
            "seq": header_seq,
            "role": "system",
            "type": "request/header",
            "tool": None,
            # count_message adds the chat framing; Session.tokens counts the prompt bare
            "tokens": counts[-1] - CHAT_TOKENS_PER_MESSAGE if exact else estimate_system(system),
            "estimate": estimate_system(system),
        }
        for k, v in first.items():
            data[k].insert(0, v)
    return _frame(data, _tokens_schema())


def _tokens_schema() -> pl.Schema:
    import polars as pl

    return pl.Schema(
        {
            "seq": pl.Int64(),
            "role": pl.Utf8(),
            "type": pl.Utf8(),
            "tool": pl.Utf8(),
            "tokens": pl.Int64(),
            "estimate": pl.Int64(),
        }
    )


def tokens_by_role(
    s: Session, tokenizer: str | Tokenizer | TokenCounter = "cl100k_base"
) -> pl.DataFrame:
    """``tokens_df`` summed per role, most tokens first.

    | column | dtype | meaning |
    | --- | --- | --- |
    | role | Utf8 | ``system``, ``user`` or ``assistant`` |
    | messages | Int64 | rows of ``tokens_df`` with that role |
    | tokens | Int64 | exact tokens |
    | estimate | Int64 | the harness's estimate |
    | share | Float64 | ``tokens`` / all tokens (0.0 when there are none) |
    """
    import polars as pl

    df = tokens_df(s, tokenizer)
    total = int(df["tokens"].sum())
    out = (
        df.group_by("role")
        .agg(
            pl.len().cast(pl.Int64).alias("messages"),
            pl.col("tokens").sum().cast(pl.Int64),
            pl.col("estimate").sum().cast(pl.Int64),
        )
        .with_columns(
            (pl.col("tokens") / total if total else pl.lit(0.0)).cast(pl.Float64).alias("share")
        )
        .sort(["tokens", "role"], descending=[True, False], nulls_last=True)
    )
    return out.select(list(_by_role_schema())).cast(_by_role_schema())


def _by_role_schema() -> pl.Schema:
    import polars as pl

    return pl.Schema(
        {
            "role": pl.Utf8(),
            "messages": pl.Int64(),
            "tokens": pl.Int64(),
            "estimate": pl.Int64(),
            "share": pl.Float64(),
        }
    )


def tokens_by_tool(
    s: Session, tokenizer: str | Tokenizer | TokenCounter = "cl100k_base"
) -> pl.DataFrame:
    """``tokens_df`` summed per tool and side (the calling assistant messages, or the
    results), over the messages that have a ``tool``; most tokens first.

    An assistant message that calls several tools counts once, under its joined ``tool``
    (``"bash,read"``): its tokens (text and reasoning included) cannot be split exactly.

    | column | dtype | meaning |
    | --- | --- | --- |
    | tool | Utf8 | the ``tool`` of ``tokens_df`` |
    | type | Utf8 | ``assistant/message`` (the calls) or ``tool/result`` (the results) |
    | messages | Int64 | rows summed |
    | tokens | Int64 | exact tokens |
    | estimate | Int64 | the harness's estimate |
    """
    import polars as pl

    df = tokens_df(s, tokenizer).filter(pl.col("tool").is_not_null())
    out = (
        df.group_by(["tool", "type"])
        .agg(
            pl.len().cast(pl.Int64).alias("messages"),
            pl.col("tokens").sum().cast(pl.Int64),
            pl.col("estimate").sum().cast(pl.Int64),
        )
        .sort(["tokens", "tool", "type"], descending=[True, False, False])
    )
    return out.select(list(_by_tool_schema())).cast(_by_tool_schema())


def _by_tool_schema() -> pl.Schema:
    import polars as pl

    return pl.Schema(
        {
            "tool": pl.Utf8(),
            "type": pl.Utf8(),
            "messages": pl.Int64(),
            "tokens": pl.Int64(),
            "estimate": pl.Int64(),
        }
    )
