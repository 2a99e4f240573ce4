"""The columns of every view, written once: name, dtype and meaning.

Each view's frame is built with the schema these specs give (``frame``, ``conform``), and the
column tables of the docs and of the view functions' docstrings are rendered from them
(``markdown_table``), so the three cannot drift apart. Dtypes are spelled as the docs show them
and turned into polars dtypes only when a frame is built (polars loads lazily).
"""

from __future__ import annotations

import inspect
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar, cast, get_args

from ..._display import shown_text

if TYPE_CHECKING:
    import polars as pl

Dtype = Literal[
    "Int64", "Utf8", "Boolean", "Float64", "List(Int64)", "List(Utf8)", "Datetime(ms, UTC)"
]
_DTYPES: Final[frozenset[str]] = frozenset(get_args(Dtype))


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a view: its name, dtype, whether it may hold nulls, and what it means."""

    name: str
    dtype: Dtype
    doc: str
    nullable: bool = False


def _columns(table: str) -> tuple[Column, ...]:
    """The columns of a table written one per line: name, dtype (``(null)`` when the column
    may hold nulls) and meaning, separated by two or more spaces; a line indented deeper than
    the names continues the meaning above it."""
    rows: list[list[str]] = []
    for line in textwrap.dedent(table).strip("\n").splitlines():
        if line.startswith(" "):
            rows[-1][2] += " " + line.strip()
        else:
            rows.append(re.split(r"\s{2,}", line.strip(), maxsplit=2))
    out = []
    for name, dtype, doc in rows:
        base = dtype.removesuffix(" (null)")
        if base not in _DTYPES:
            raise AssertionError(f"column {name!r}: unknown dtype {dtype!r}")
        out.append(Column(name, cast(Dtype, base), doc, nullable=base != dtype))
    return tuple(out)


EVENTS: Final = _columns(
    """
    seq          Int64               the event's seq (0-based, contiguous)
    type         Utf8                event type, e.g. `tool/result`
    time         Datetime(ms, UTC)   the event's `time` (epoch ms; may go backwards)
    turn         Int64 (null)        the turn whose `turn/start..turn/end` holds the event
    step         Int64 (null)        the step (within `turn`) whose span holds the event
    surface_op   Utf8 (null)         `"append"`, `"replace"`, or null for log-only events
    sources      List(Int64) (null)  `sourceEventSeqs`, `[start,end]` ranges expanded
    on_surface   Boolean             the event is a node of the current surface
    shadowed_by  Int64 (null)        the replacement that took this node off the surface
    bytes        Int64               size of the event as compact JSON (UTF-8, no newline)
    """
)

SURFACE: Final = _columns(
    """
    position         Int64        0-based position on the surface
    seq              Int64        the event that is this node
    type             Utf8         `system/message`, `user/message`, `assistant/message` or
                                  `tool/result`
    role             Utf8         the message's role (`system`/`user`/`assistant`)
    op               Utf8         `"append"` or `"replace"` (a replacement node)
    shadowed         List(Int64)  the nodes a replacement took the place of (`[]` for an append)
    message_id       Utf8         the message id (stable forever)
    text             Utf8         text blocks joined, then the text inside tool-result blocks
    tokens_estimate  Int64        the harness's chars/4 estimate of the message (spec §14)
    """
)

MESSAGES: Final = _columns(
    """
    index            Int64        0-based position in `s.messages()`
    seq              Int64        the surface event the message comes from
    id               Utf8         the message id
    role             Utf8         `system`, `user` or `assistant`
    source_kind      Utf8         `source.kind`: `user`, `model`, `tool`, `plugin`, ...
    text             Utf8         as in `surface_df`
    n_blocks         Int64        number of content blocks
    n_tool_calls     Int64        number of `tool-call` blocks
    tool_call_ids    List(Utf8)   the ids of those tool calls, in block order
    answers_call_id  Utf8 (null)  for a tool result: the call id it answers
    reasoning_chars  Int64        characters (code points) in `reasoning` blocks
    """
)

TOOLS: Final = _columns(
    """
    call_id          Utf8            the tool-call id
    name             Utf8 (null)     the tool's name
    arguments        Utf8 (null)     the raw JSON arguments text the model produced
    assistant_seq    Int64 (null)    the `assistant/message` holding the call
    call_seq         Int64 (null)    the `tool/call` event (null if the tool never started)
    result_seq       Int64 (null)    the `tool/result` appended for it (null while pending)
    rewrite_seq      Int64 (null)    the latest content-only rewrite of that result, if any
    turn             Int64 (null)    the turn of the call (of the result for an orphan result)
    step             Int64 (null)    the step of the call
    is_error         Boolean (null)  the result's `isError` (null without a result)
    error_code       Utf8 (null)     `error.code` of the result, e.g. `TOOL_OUTCOME_UNKNOWN`
    result_chars     Int64 (null)    characters of the original result's text
    arguments_chars  Int64 (null)    characters of `arguments`
    on_surface       Boolean         the result (original or rewritten) is on the surface now
    pruned           Boolean         the result was rewritten by a content-only replacement
    """
)

TURNS: Final = _columns(
    """
    turn                Int64         turn number (1, 2, ...)
    start_seq           Int64         its `turn/start`
    end_seq             Int64 (null)  its `turn/end` (null while the turn is open)
    reason              Utf8 (null)   `turn/end.reason.kind`: `completed`, `aborted`, ...
    steps               Int64         number of steps
    prompt              Utf8 (null)   the first user-sourced text of the turn
    input_tokens        Int64 (null)  sum of `inputTokens` (excludes cache reads)
    output_tokens       Int64 (null)  sum of `outputTokens`
    cache_read_tokens   Int64 (null)  sum of `cacheReadTokens`
    cache_write_tokens  Int64 (null)  sum of `cacheWriteTokens`
    reasoning_tokens    Int64 (null)  sum of `reasoningTokens`
    tool_calls          Int64         tool-call blocks in the turn's assistant messages
    duration_ms         Int64 (null)  `time(turn/end) - time(turn/start)` (null while open)
    """
)

TOKENS: Final = _columns(
    """
    seq       Int64        the surface event of the message
    role      Utf8         `system`, `user` or `assistant`
    type      Utf8         the surface event type (`tool/result`, ...)
    tool      Utf8 (null)  the tool a result answers, or the tools a message calls
    tokens    Int64        exact tokens, text plus chat framing
    estimate  Int64        the harness's chars/4 estimate (spec §14)
    """
)

TOKENS_BY_ROLE: Final = _columns(
    """
    role      Utf8     `system`, `user` or `assistant`
    messages  Int64    rows of `tokens_df` with that role
    tokens    Int64    exact tokens
    estimate  Int64    the harness's estimate
    share     Float64  `tokens` / all tokens (0.0 when there are none)
    """
)

TOKENS_BY_TOOL: Final = _columns(
    """
    tool      Utf8   the `tool` of `tokens_df`
    type      Utf8   `assistant/message` (the calls) or `tool/result` (the results)
    messages  Int64  rows summed
    tokens    Int64  exact tokens
    estimate  Int64  the harness's estimate
    """
)

COLUMNS: Final[Mapping[str, tuple[Column, ...]]] = {
    "events_df": EVENTS,
    "surface_df": SURFACE,
    "messages_df": MESSAGES,
    "tools_df": TOOLS,
    "turns_df": TURNS,
    "tokens_df": TOKENS,
    "tokens_by_role": TOKENS_BY_ROLE,
    "tokens_by_tool": TOKENS_BY_TOOL,
}
"""Every view's columns, in order, by the name of the function that builds the view."""


def schema(columns: Sequence[Column]) -> pl.Schema:
    """The polars schema of a view."""
    import polars as pl

    dtypes: dict[Dtype, pl.DataType] = {
        "Int64": pl.Int64(),
        "Utf8": pl.Utf8(),
        "Boolean": pl.Boolean(),
        "Float64": pl.Float64(),
        "List(Int64)": pl.List(pl.Int64()),
        "List(Utf8)": pl.List(pl.Utf8()),
        "Datetime(ms, UTC)": pl.Datetime("ms", "UTC"),
    }
    return pl.Schema({c.name: dtypes[c.dtype] for c in columns})


def frame(data: Mapping[str, Sequence[Any]], columns: Sequence[Column]) -> pl.DataFrame:
    """The view built from one list per column, each a typed Series (much faster than a
    schema'd dict for list columns, and the same for empty columns)."""
    import polars as pl

    series = []
    for name, dt in schema(columns).items():
        try:
            series.append(pl.Series(name, data[name], dtype=dt))
        except UnicodeEncodeError:  # a lone surrogate (polars holds UTF-8): shown as U+FFFD
            series.append(pl.Series(name, _shown(data[name]), dtype=dt))
    return pl.DataFrame(series)


def _shown(value: Any) -> Any:
    """``value`` with each str in it made valid Unicode (``shown_text``): a lone UTF-16
    surrogate, which a harness log can hold, becomes U+FFFD in a polars view only."""
    if isinstance(value, str):
        return shown_text(value)
    if isinstance(value, dict):
        return {shown_text(k) if isinstance(k, str) else k: _shown(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_shown(v) for v in value]
    return value


def conform(df: pl.DataFrame, columns: Sequence[Column]) -> pl.DataFrame:
    """``df``'s columns in the view's order, cast to its dtypes."""
    target = schema(columns)
    return df.select(list(target)).cast(target)


def markdown_table(columns: Sequence[Column]) -> str:
    """The column table of a view, as Markdown (``column | dtype | meaning``)."""
    rows = [f"| {c.name} | {c.dtype}{' (null)' if c.nullable else ''} | {c.doc} |" for c in columns]
    return "\n".join(["| column | dtype | meaning |", "| --- | --- | --- |", *rows])


_F = TypeVar("_F", bound=Callable[..., Any])


def documented(columns: Sequence[Column]) -> Callable[[_F], _F]:
    """Append the view's column table to the function's docstring (for ``help()``; the docs
    site renders the same table with its mkdocs hook)."""

    def add_table(fn: _F) -> _F:
        doc = inspect.cleandoc(fn.__doc__ or "")
        fn.__doc__ = f"{doc}\n\nColumns:\n\n{markdown_table(columns)}\n"
        return fn

    return add_table
