"""The columns of ``Workspace.sessions`` and the table built from listing rows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..._display import shown_text
from ._summary import SUMMARY_KEYS

if TYPE_CHECKING:
    import polars as pl

SESSION_COLUMNS: dict[str, str] = {
    "id": "Utf8: the header id (decoded from the directory name when the log is unreadable)",
    "title": "Utf8: the latest session/title, null if none",
    "events": "Int64: the number of events (packed v0/v1 chunk rows expanded)",
    "bytes": "Int64: the log file's size on disk",
    "created": "Datetime(ms, UTC): header createdAt",
    "updated": "Datetime(ms, UTC): the time of the last event (null when there is none)",
    "parent": "Utf8: header parentSession",
    "origin": "Utf8: header origin ('subagent' or null)",
    "delegation_depth": "Int64: header delegationDepth",
    "version": "Int64: the format generation (header version, else the file name's)",
    "seeded": "Boolean: a seeded child (isSeeded, or a v0/v1 seedLength > 0)",
    "cwd": "Utf8: header cwd",
    "interrupted": "Boolean: the log ends inside an open turn (crash or live session)",
    "project": "Utf8: the project directory name (projectKey(cwd) or _no-cwd)",
    "path": "Utf8: the log file (or the directory, when it holds no log)",
    "readable": "Boolean: Session.open(path) reads and validates it",
    "error": "Utf8: why it is unreadable (one line), null otherwise",
    "format": "Utf8: what wrote the log: 'dsh', or the agent format it was imported from "
    "(Workspace.agent_home; null when no format could be detected)",
}
"""The columns of ``Workspace.sessions``, in order, with their dtypes and meaning."""


def _schema() -> dict[str, Any]:
    """The polars dtype of each column: the one its ``SESSION_COLUMNS`` entry names, so the
    documented dtypes are the table's."""
    import polars as pl

    dtypes = {
        "Utf8": pl.Utf8,
        "Int64": pl.Int64,
        "Boolean": pl.Boolean,
        "Datetime(ms, UTC)": pl.Datetime("ms", "UTC"),
    }
    return {name: dtypes[doc.split(":", 1)[0]] for name, doc in SESSION_COLUMNS.items()}


def _raw_schema() -> dict[str, Any]:
    """The schema of listing rows as they are built (times still epoch ms)."""
    import polars as pl

    schema = _schema()
    schema["created"] = pl.Int64
    schema["updated"] = pl.Int64
    return {k: schema[k] for k in (*SUMMARY_KEYS, "bytes", "project", "path")}


def sessions_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """Listing rows as the ``SESSION_COLUMNS`` table, newest first (by last event time, else
    creation time; then id and path)."""
    import polars as pl

    if not rows:
        return pl.DataFrame(schema=_schema())
    try:
        df = pl.DataFrame(rows, schema=_raw_schema())
    except UnicodeEncodeError:  # a lone surrogate in a title (polars holds UTF-8): U+FFFD
        shown = [
            {k: shown_text(v) if isinstance(v, str) else v for k, v in r.items()} for r in rows
        ]
        df = pl.DataFrame(shown, schema=_raw_schema())
    key = pl.coalesce("updated", "created")
    return (  # one lazy query: a warm listing of thousands of rows collects once
        df.lazy()
        .with_columns(
            pl.col("created").cast(pl.Datetime("ms")).dt.replace_time_zone("UTC"),
            pl.col("updated").cast(pl.Datetime("ms")).dt.replace_time_zone("UTC"),
        )
        .with_columns(key.alias("_key"))
        .sort(["_key", "id", "path"], descending=[True, False, False], nulls_last=True)
        .select(list(_schema()))
        .collect()
    )
