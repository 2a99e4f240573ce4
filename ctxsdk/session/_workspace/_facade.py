"""``Workspace``: the sessions of one DSH home, listed, opened by id prefix, with lineage."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._gc import gc_paused
from ..._progress import Progress, resolve_progress
from ...errors import NotFound
from .._codec import Compression
from .._layout import dsh_home as dsh_home_path
from .._layout import sessions_root
from ._cache import CACHE_RELPATH, Index
from ._columns import sessions_frame
from ._lineage import SessionTree, ancestors, by_id, kind, lineage_tree, missing_row
from ._lookup import match
from ._summary import SUMMARY_KEYS, read_row, unreadable
from ._walk import walk

if TYPE_CHECKING:
    import polars as pl

    from .._session import Session

_PACKAGE_DIR = Path(__file__).resolve().parents[2]  # the installed ctxsdk package


class Workspace:
    """The sessions of one DSH home (``$DSH_HOME``, else ``~/.dsh``), as the harness lays
    them out: ``<home>/sessions/<projectKey(cwd)>/<encodeSegment(id)>/session[.vN].jsonl[.zstd]``.

    ``progress`` reports a cold listing (only the logs that must be read). ``cache`` is
    True for the default derived index (``<home>/storages/ctxsdk/index.json``), False for
    none, or a path. ``compression`` names the root's one encoding (``"zstd"`` for the
    shipped home, ``"none"`` for plain-JSONL SDK roots); None accepts either and reports a
    session dir that holds both.
    """

    def __init__(
        self,
        dsh_home: str | os.PathLike[str] | None = None,
        *,
        progress: Progress | bool | None = None,
        cache: bool | str | os.PathLike[str] = True,
        compression: Compression | None = None,
    ) -> None:
        self.home = dsh_home_path(dsh_home)
        self.root = sessions_root(self.home)
        self._progress = progress
        self._compression: Compression | None = compression
        if cache is True:
            try:
                inside_package = self.home.resolve().is_relative_to(_PACKAGE_DIR)
            except (OSError, RuntimeError, ValueError):  # a symlink loop, a NUL in the path
                inside_package = False  # no such home: listing it raises NotFound
            self.cache_path: Path | None = None if inside_package else self.home / CACHE_RELPATH
        elif cache is False:
            self.cache_path = None
        else:
            self.cache_path = Path(cache)

    def __repr__(self) -> str:
        return f"Workspace({str(self.home)!r})"

    # --- listing -------------------------------------------------------------------------------

    def sessions(self, refresh: bool = False) -> pl.DataFrame:
        """Every session of the home as a polars DataFrame, newest first (by last event time).

        Columns and dtypes: see ``SESSION_COLUMNS``. Unreadable sessions (an unknown
        format version, corrupt bytes, a damage that cannot be repaired, a flat file or a
        second encoding the harness rejects, an empty session dir) are listed with
        ``readable = False`` and the reason in ``error``: never hidden, never shown as empty.

        ``refresh=True`` ignores the derived index and reads every log again (and rewrites
        the index).
        """
        return sessions_frame(self._rows(refresh))

    def _rows(self, refresh: bool) -> list[dict[str, Any]]:
        if not self.home.is_dir():
            raise NotFound(
                f"the DSH home {self.home} does not exist (or is not a directory); pass "
                "dsh_home= or set $DSH_HOME "
                "to the directory that holds sessions/"
            )
        index = Index(self.cache_path, self.root)
        if not refresh:
            index.load()
        else:
            index.dirty = self.cache_path is not None
        found = walk(self.root, self._compression)
        prefix = len(str(self.root)) + 1  # relative paths by slicing: pathlib is slow here
        rows: list[dict[str, Any] | None] = [None] * len(found)
        todo: list[int] = []
        live: set[str] = set()
        for i, item in enumerate(found):
            if item.problem is not None and not item.path.is_file():
                rows[i] = unreadable(item, item.problem)  # nothing to read
                continue
            path = str(item.path)
            try:
                item.stat = os.stat(path)
            except FileNotFoundError:
                continue  # removed since the walk saw it: the session is gone
            except OSError as exc:
                rows[i] = unreadable(item, f"cannot stat {item.path}: {exc}")
                continue
            rel = path[prefix:].replace(os.sep, "/")
            live.add(rel)
            cached = index.get(rel, item.stat, item.problem)
            if cached is not None:
                rows[i] = dict(cached)
            else:
                todo.append(i)
        if todo:
            report = resolve_progress(self._progress)
            report(0, len(todo), "reading sessions")
            with gc_paused():
                for n, i in enumerate(todo, 1):
                    item = found[i]
                    assert item.stat is not None
                    row, cacheable = read_row(item)
                    rows[i] = row
                    if cacheable:
                        rel = str(item.path)[prefix:].replace(os.sep, "/")
                        index.put(rel, item.stat, item.problem, row)
                    report(n, len(todo), "reading sessions")
        index.keep_only(live)
        index.save()
        out: list[dict[str, Any]] = []
        for item, summary in zip(found, rows, strict=True):
            if summary is None:
                continue
            size = item.stat.st_size if item.stat is not None else None
            if size is None and item.path.is_file():
                with contextlib.suppress(OSError):
                    size = item.path.stat().st_size
            out.append(
                {
                    **{k: summary.get(k) for k in SUMMARY_KEYS},
                    "bytes": size,
                    "project": item.project,
                    "path": str(item.path),
                }
            )
        return out

    # --- opening -------------------------------------------------------------------------------

    def find(self, prefix: str) -> dict[str, Any]:
        """The listing row of the one session whose id starts with ``prefix`` (an exact id
        wins over longer ids it prefixes). Raises ``NotFound`` naming the prefix, or
        listing the candidates when it is ambiguous."""
        rows = self.sessions().to_dicts()
        return match(rows, prefix, self.root)

    def open(self, prefix: str, **kwargs: Any) -> Session:
        """Open the session whose id starts with ``prefix`` (a unique prefix is enough).

        Keyword arguments go to ``Session.open``. An unreadable session raises the
        reader's error.
        """
        from .._session import Session

        row = self.find(prefix)
        return Session.open(row["path"], **kwargs)

    # --- lineage -------------------------------------------------------------------------------

    def children(self, session_id: str) -> pl.DataFrame:
        """Sessions whose header ``parentSession`` is this session, newest first, with a
        ``kind`` column: ``fork`` (a seeded child), ``subagent`` (a spawned, unseeded
        ``origin: 'subagent'`` child) or ``child`` (neither)."""
        import polars as pl

        df = self.sessions()
        target = self._lineage_id(df.to_dicts(), session_id)
        out = df.filter(pl.col("parent") == target)
        return out.with_columns(pl.Series("kind", [kind(r) for r in out.to_dicts()], dtype=pl.Utf8))

    def parents(self, session_id: str) -> pl.DataFrame:
        """The chain of ancestors, nearest first, up to the root, with a ``depth`` column
        (1 = the parent). An ancestor that is not in this workspace ends the chain as a row
        with ``readable = False`` and an error saying so."""
        import polars as pl

        df = self.sessions()
        rows = df.to_dicts()
        rows_by_id = by_id(rows)
        start = rows_by_id.get(match(rows, session_id, self.root)["id"])
        assert start is not None
        chain, missing = ancestors(rows_by_id, start)
        if missing is not None:
            chain.append(missing_row(missing, chain[-1] if chain else start))
        schema = dict(df.schema)
        out = pl.DataFrame(chain, schema=schema) if chain else df.clear()
        return out.with_columns(pl.Series("depth", list(range(1, len(chain) + 1)), dtype=pl.Int64))

    def tree(self, session_id: str, *, from_root: bool = True) -> SessionTree:
        """The lineage tree this session belongs to: from its topmost ancestor in the
        workspace (``from_root=False``: from the session itself) down through every fork
        and subagent."""
        rows = self.sessions().to_dicts()
        focus = match(rows, session_id, self.root)
        top, missing = focus, None
        if from_root:
            chain, missing = ancestors(by_id(rows), focus)
            top = chain[-1] if chain else focus
        return lineage_tree(rows, top, focus["id"], missing)

    def _lineage_id(self, rows: list[dict[str, Any]], session_id: str) -> str:
        """A listed session's id (by prefix), or an id only children still name."""
        try:
            return str(match(rows, session_id, self.root)["id"])
        except NotFound:
            if isinstance(session_id, str) and any(r.get("parent") == session_id for r in rows):
                return session_id
            raise


Workspace.__module__ = "ctxsdk"
