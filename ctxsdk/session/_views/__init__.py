"""Polars views of a session: events, surface, messages, tool calls, turns and tokens.

Every function takes a ``Session`` and returns a ``polars.DataFrame`` whose columns and dtypes
are fixed: each view's columns are written once, in ``_columns`` (name, dtype, meaning), and
both the frame's schema and the column tables (in each function's docstring and on the docs'
Views page) come from there. A session with no events gives an empty frame with the same
schema. The views read the raw log the replay already validated, so they are fast and never
re-parse events into pydantic models (except ``turns_df``, which reuses ``Session.turns``).

Token counts (``tokens_df`` and its group-bys) go through one ``TokenCounter``, all uncached
texts in one ``count_batch`` call; pass a ``TokenCounter`` as ``tokenizer`` to reuse its cache
across calls.

The parts: ``_columns`` holds the column specs and builds frames from them, ``_raw`` reads raw
JSON shapes, ``_events``, ``_messages`` (surface and messages), ``_tools``, ``_turns`` and
``_tokens`` build the views. polars is imported when a view is first called, never at import
time.
"""

from __future__ import annotations

from ._events import events_df
from ._messages import messages_df, surface_df
from ._tokens import tokens_by_role, tokens_by_tool, tokens_df
from ._tools import tools_df
from ._turns import turns_df

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
