"""``tokens_df`` and its sums per role and per tool: tokens of each message the model receives,
counted through one ``TokenCounter``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._text import message_of
from ._columns import TOKENS, TOKENS_BY_ROLE, TOKENS_BY_TOOL, conform, documented, frame
from ._raw import blocks, field_of, of_type, strings
from ._tools import pair_calls

if TYPE_CHECKING:
    import polars as pl

    from .._session_like import SessionLike
    from .._tokens import TokenCounter, Tokenizer


def _counter(tokenizer: str | Tokenizer | TokenCounter) -> TokenCounter:
    from .._tokens import TokenCounter

    return tokenizer if isinstance(tokenizer, TokenCounter) else TokenCounter(tokenizer)


def _tools(
    s: SessionLike, seqs: Sequence[int], msgs: Sequence[Mapping[str, Any]]
) -> list[str | None]:
    """The ``tool`` column: the tool a result answers (rewrites answer the same call), or the
    distinct tools an assistant message calls, joined with ``,`` in call order."""
    raw = s.raw_events
    tool_of_result: dict[int, str] = {}
    for call in pair_calls(s):
        if call.result_seq is not None and call.name is not None:
            for q in (call.result_seq, *call.rewrites):
                tool_of_result[q] = call.name
    out: list[str | None] = []
    for q, m in zip(seqs, msgs, strict=True):
        if raw[q]["type"] == "tool/result":
            out.append(tool_of_result.get(q))
        else:
            names = strings(of_type(blocks(m), "tool-call"), "name")
            out.append(",".join(dict.fromkeys(names)) if names else None)
    return out


@documented(TOKENS)
def tokens_df(
    s: SessionLike, tokenizer: str | Tokenizer | TokenCounter = "cl100k_base"
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

    ``tool`` joins the distinct names an assistant message calls with ``,``, in call order.
    ``tokens`` is ``count_message``.
    """
    from .._tokens import CHAT_TOKENS_PER_MESSAGE, estimate_message, estimate_system

    counter = _counter(tokenizer)
    raw = s.raw_events
    seqs = s.message_seqs()
    msgs: list[Mapping[str, Any]] = [message_of(raw[q]) or {} for q in seqs]
    system = s.system_prompt if s.version < 3 else None
    system_msg = {"role": "system", "content": [{"type": "text", "text": system}]}
    batch = [*msgs, system_msg] if system else msgs
    counts = counter.count_messages(batch)  # one count_batch call for everything uncached
    data: dict[str, list[Any]] = {
        "seq": list(seqs),
        "role": field_of(msgs, "role"),
        "type": [raw[q]["type"] for q in seqs],
        "tool": _tools(s, seqs, msgs),
        "tokens": counts[: len(msgs)],
        "estimate": [estimate_message(m) for m in msgs],
    }
    if system:
        exact = counter.tokenizer.name != "estimate"
        first = {
            "seq": s.index.header_seqs[-1],
            "role": "system",
            "type": "request/header",
            "tool": None,
            # count_message adds the chat framing; Session.tokens counts the prompt bare
            "tokens": counts[-1] - CHAT_TOKENS_PER_MESSAGE if exact else estimate_system(system),
            "estimate": estimate_system(system),
        }
        for k, v in first.items():
            data[k].insert(0, v)
    return frame(data, TOKENS)


def _summed(df: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """``df``'s rows counted (``messages``) and their tokens and estimates summed per ``by``,
    most tokens first."""
    import polars as pl

    sums = df.group_by(by).agg(
        pl.len().cast(pl.Int64).alias("messages"),
        pl.col("tokens").sum().cast(pl.Int64),
        pl.col("estimate").sum().cast(pl.Int64),
    )
    return sums.sort(["tokens", *by], descending=[True] + [False] * len(by), nulls_last=True)


@documented(TOKENS_BY_ROLE)
def tokens_by_role(
    s: SessionLike, tokenizer: str | Tokenizer | TokenCounter = "cl100k_base"
) -> pl.DataFrame:
    """``tokens_df`` summed per role, most tokens first."""
    import polars as pl

    df = tokens_df(s, tokenizer)
    total = int(df["tokens"].sum())
    share = (pl.col("tokens") / total if total else pl.lit(0.0)).cast(pl.Float64)
    out = _summed(df, ["role"]).with_columns(share.alias("share"))
    return conform(out, TOKENS_BY_ROLE)


@documented(TOKENS_BY_TOOL)
def tokens_by_tool(
    s: SessionLike, tokenizer: str | Tokenizer | TokenCounter = "cl100k_base"
) -> pl.DataFrame:
    """``tokens_df`` summed per tool and side (the calling assistant messages, or the
    results), over the messages that have a ``tool``; most tokens first.

    An assistant message that calls several tools counts once, under its joined ``tool``
    (``"bash,read"``): its tokens (text and reasoning included) cannot be split exactly.
    """
    import polars as pl

    df = tokens_df(s, tokenizer).filter(pl.col("tool").is_not_null())
    return conform(_summed(df, ["tool", "type"]), TOKENS_BY_TOOL)
