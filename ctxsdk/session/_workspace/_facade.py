"""``Workspace``: the sessions of one DSH home, listed, opened by id prefix, with lineage."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._display import Rendered
from ..._gc import gc_paused
from ..._progress import Progress, resolve_progress
from ...errors import InvalidArgument, NotFound
from .._codec import Compression
from .._files import file_kind
from .._layout import dsh_home as dsh_home_path
from .._layout import sessions_root
from ._cache import CACHE_RELPATH, Index
from ._columns import sessions_frame
from ._lineage import SessionTree, ancestors, by_id, kind, lineage_tree, missing_row
from ._lookup import match
from ._summary import LISTING_MAX_BYTES, SUMMARY_KEYS, read_row, unreadable
from ._walk import Found, not_regular, walk, walk_agent

if TYPE_CHECKING:
    import polars as pl

    from .._session import Session

_PACKAGE_DIR = Path(__file__).resolve().parents[2]  # the installed ctxsdk package


class Workspace(Rendered):
    """The sessions of one DSH home (``$DSH_HOME``, else ``~/.dsh``), as the harness lays
    them out: ``<home>/sessions/<projectKey(cwd)>/<encodeSegment(id)>/session[.vN].jsonl[.zstd]``.

    ``progress`` reports a cold listing (only the logs that must be read). ``cache`` is
    True for the default derived index (``<home>/storages/ctxsdk/index.json``), False for
    none, or a path. ``compression`` names the root's one encoding (``"zstd"`` for the
    shipped home, ``"none"`` for plain-JSONL SDK roots); None accepts either and reports a
    session dir that holds both. ``max_bytes`` caps what a listing decodes from one log
    (``LISTING_MAX_BYTES``, 1 GiB): a log that inflates past it is a row with an error, and
    ``open`` reads under the same cap.
    """

    def __init__(
        self,
        dsh_home: str | os.PathLike[str] | None = None,
        *,
        progress: Progress | bool | None = None,
        cache: bool | str | os.PathLike[str] = True,
        compression: Compression | None = None,
        max_bytes: int = LISTING_MAX_BYTES,
    ) -> None:
        if type(max_bytes) is not int or max_bytes <= 0:
            raise InvalidArgument(
                f"max_bytes must be a positive number of bytes, not {max_bytes!r} "
                f"(the default is {LISTING_MAX_BYTES})"
            )
        self.max_bytes = max_bytes
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

        self.agent: str | None = None  # None: a DSH home; else agent_home's format

    @classmethod
    def agent_home(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        format: str = "auto",
        progress: Progress | bool | None = None,
        cache: bool | str | os.PathLike[str] = True,
        max_bytes: int = LISTING_MAX_BYTES,
    ) -> Workspace:
        """The sessions of another agent's home: a folder of its logs, listed and opened
        (imported) like a DSH home's.

        ``format`` is ``"auto"`` (every ``.jsonl``, ``.jsonl.zstd``, ``.json``, ``.traj`` and
        ``.md`` file below ``path``, and every DSH session directory, each file's format
        detected from its content) or one format name (``"claude-code"``: ``<path>/<project>/
        <uuid>.jsonl``, sub-agent files too; ``"codex"``: ``<path>/YYYY/MM/DD/rollout-*.jsonl``;
        ``"gemini-cli"``: ``<path>/<hash>/chats/session-*.json``; or any format of
        ``DETECTABLE``, read from the files with its ending). ``path`` may be left out for
        ``claude-code`` (``~/.claude/projects``), ``codex`` (``$CODEX_HOME/sessions``, else
        ``~/.codex/sessions``) and ``gemini-cli`` (``~/.gemini/tmp``).

        ``sessions()`` has the columns of a DSH home's listing, with ``format`` saying what
        each file was read as; a file that cannot be detected or imported is a row with
        ``readable = False`` and the importer's located error. ``open(prefix)`` imports the
        session. The home is only read: the derived index (``cache=True``) lives in
        ``$XDG_CACHE_HOME/ctxsdk/workspaces/`` (else ``~/.cache/...``), never in the agent's
        home; ``cache=False`` keeps none, a path puts it there. ``add`` is refused.
        """
        from .._foreign._detect import DETECTABLE

        if format != "auto" and format not in DETECTABLE:
            raise InvalidArgument(
                f"format is 'auto' or one of {', '.join(DETECTABLE)}, not {format!r}"
            )
        if path is None:
            path = _default_agent_home(format)
        ws = cls(path, progress=progress, cache=False, max_bytes=max_bytes)
        ws.home = ws.root = ws.home  # no sessions/ below it: the files are in the home itself
        ws.agent = format
        if cache is True:
            ws.cache_path = _user_cache_dir() / f"{_home_key(ws.home, format)}.json"
        elif cache is not False:
            ws.cache_path = Path(cache)
        return ws

    def __repr__(self) -> str:
        if self.agent is not None:
            return f"Workspace.agent_home({str(self.home)!r}, format={self.agent!r})"
        return f"Workspace({str(self.home)!r})"

    def _listing(self) -> tuple[str, list[tuple[str, str, str, str, str, str]]]:
        """The heading and the rows the text and HTML forms show (newest first)."""
        from ..._display import plural
        from .._session_display import shown_path

        df = self.sessions()
        rows = []
        for r in df.sort("updated", descending=True, nulls_last=True).iter_rows(named=True):
            lineage = ""
            if r["parent"]:
                kind = "fork" if r["seeded"] else (r["origin"] or "child")
                lineage = f"{kind} of {str(r['parent'])[:8]}"
            updated = r["updated"].strftime("%Y-%m-%d %H:%M") if r["updated"] else ""
            events = f"{r['events']:,}" if r["events"] is not None else ""
            title = r["title"] or ("" if r["readable"] else f"error: {r['error']}")
            rows.append((str(r["id"])[:8], updated, events, title[:60], lineage, r["error"] or ""))
        bad = sum(1 for r in rows if r[5])
        head = f"Workspace {shown_path(self.home)}: {plural(len(rows), 'session')}"
        return head + (f" ({bad} with errors)" if bad else ""), rows

    def _text_(self) -> str:
        head, rows = self._listing()
        lines = [head]
        for sid, updated, events, title, lineage, _ in rows[:200]:
            lines.append(f"  {sid}  {updated:<16}  {events:>7}  {title:<60}  {lineage}".rstrip())
        if len(rows) > 200:
            lines.append(f"  … {len(rows) - 200:,} more (ws.sessions() has them all)")
        return "\n".join(lines)

    def _html_(self) -> str:
        from ..._display import esc, table

        head, rows = self._listing()
        body = table(
            ("id", "updated", "events", "title", "lineage"),
            [r[:5] for r in rows[:500]],
            numeric=(2,),
        )
        return f"<div class='cx-title'>{esc(head)}</div>{body}"

    # --- listing -------------------------------------------------------------------------------

    def sessions(self, refresh: bool = False) -> pl.DataFrame:
        """Every session of the home as a polars DataFrame, newest first (by last event time).

        Columns and dtypes: see ``SESSION_COLUMNS``. Unreadable sessions (an unknown
        format version, corrupt bytes, a damage that cannot be repaired, a flat file or a
        second encoding the harness rejects, an empty session dir, a log this process may not
        read, a FIFO, device, socket, dangling or looping symlink where a log should be, a log
        that decodes past ``max_bytes``) are listed with ``readable = False`` and the reason in
        ``error``: never hidden, never shown as empty, never opened when not a regular file.

        ``refresh=True`` ignores the derived index and reads every log again (and rewrites
        the index).
        """
        return sessions_frame(self._rows(refresh))

    def _rows(self, refresh: bool) -> list[dict[str, Any]]:
        if not self.home.is_dir():
            if self.agent is not None:
                raise NotFound(
                    f"the agent home {self.home} does not exist (or is not a directory); "
                    "pass the folder that holds the agent's logs to Workspace.agent_home"
                )
            raise NotFound(
                f"the DSH home {self.home} does not exist (or is not a directory); pass "
                "dsh_home= or set $DSH_HOME "
                "to the directory that holds sessions/ (the bundled sample sessions are one: "
                "dsh_home=ctxsdk.samples.SAMPLES_HOME)"
            )
        index = Index(self.cache_path, self.root, self.max_bytes, self.agent or "dsh")
        if not refresh:
            index.load()
        else:
            index.dirty = self.cache_path is not None
        if self.agent is None:
            found = walk(self.root, self._compression)
        else:
            found = walk_agent(self.root, self.agent)
        prefix = len(str(self.root)) + 1  # relative paths by slicing: pathlib is slow here
        rows: list[dict[str, Any] | None] = [None] * len(found)
        todo: list[int] = []
        live: set[str] = set()
        for i, item in enumerate(found):
            path = item.where
            if item.problem is not None and not os.path.isfile(path):
                rows[i] = unreadable(item, item.problem)  # nothing to read
                continue
            try:
                item.stat = st = os.stat(path)
            except OSError as exc:
                rows[i] = _unstattable(item, exc)  # None: removed since the walk saw it
                continue
            if not stat.S_ISREG(st.st_mode):  # a FIFO, device, socket or directory: never opened
                rows[i] = unreadable(item, not_regular(path, file_kind(st.st_mode) or "odd"))
                continue
            rel = path[prefix:].replace(os.sep, "/")
            live.add(rel)
            cached = index.get(rel, item.stat, item.problem)
            if cached is not None:
                rows[i] = cached  # copied into the listing row below, never changed
            else:
                todo.append(i)
        if todo:
            report = resolve_progress(self._progress)
            report(0, len(todo), "reading sessions")
            with gc_paused():
                for n, i in enumerate(todo, 1):
                    item = found[i]
                    assert item.stat is not None
                    row, cacheable = read_row(item, self.max_bytes)
                    rows[i] = row
                    if cacheable:
                        rel = item.where[prefix:].replace(os.sep, "/")
                        index.put(rel, item.stat, item.problem, row)
                    report(n, len(todo), "reading sessions")
        index.keep_only(live)
        index.save()
        out: list[dict[str, Any]] = []
        for item, summary in zip(found, rows, strict=True):
            if summary is None:
                continue
            size = item.stat.st_size if item.stat is not None else None
            if size is None and os.path.isfile(item.where):
                with contextlib.suppress(OSError):
                    size = os.stat(item.where).st_size
            # A cached row has exactly SUMMARY_KEYS in order (Index.get checks it): copied as
            # it is; a row just read may hold fewer or more keys: picked.
            row = dict(summary) if tuple(summary) == SUMMARY_KEYS else _summary_only(summary)
            row["bytes"] = size
            row["project"] = item.project
            row["path"] = item.where
            out.append(row)
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

        Keyword arguments go to ``Session.open`` (in an agent home: ``Session.open_any``,
        which imports the file as the format it was listed as); ``max_bytes`` defaults to the
        workspace's (the cap its listing reads under). An unreadable session raises the
        reader's error.
        """
        from .._session import Session

        row = self.find(prefix)
        kwargs.setdefault("max_bytes", self.max_bytes)
        if self.agent is None:
            return Session.open(row["path"], **kwargs)
        return Session.open_any(row["path"], format=row["format"], **kwargs)

    # --- adding --------------------------------------------------------------------------------

    def add(
        self,
        session: Session | str | os.PathLike[str],
        *,
        overwrite: bool = False,
        compression: Compression | None = None,
    ) -> Session:
        """Place ``session`` in this home where the harness keeps it, and return it opened there.

        ``session`` is a ``Session`` (from an importer, a fork, ``Session.open``; pending
        events are written too) or the path of a log to open. It goes to
        ``<home>/sessions/<projectKey(cwd)>/<encodeSegment(id)>/session[.vN].jsonl[.zstd]``, in
        its own format version and in ``compression`` (default: the workspace's
        ``compression``, else ``"zstd"``, as the harness writes).

        The write is atomic (a temp file, then a no-overwrite hard link or ``os.replace``):
        nothing is ever half-written, and a failure raises ``WriteError`` naming the file and
        leaves no temp file or new directory behind. An id that already has a log anywhere
        in the home raises ``WriteError`` naming it, unless ``overwrite=True``; even then a
        log under another project directory, in the other encoding, or of a higher
        generation is not replaced (the home would hold the id twice, or keep reading the
        old log), and a v3 log is replaced under its ``session.lock`` lease (``LockHeld``
        while a live session holds it). The bundled samples home is read-only.
        """
        from .._session import Session
        from ._add import add_session

        if self.agent is not None:
            raise InvalidArgument(
                f"{self.home} is another agent's home, which ctxsdk only reads; add the "
                "session to a DSH home instead: cx.Workspace(dsh_home).add(session)"
            )
        if not isinstance(session, Session):
            session = Session.open(Path(session))
        if compression is None:
            compression = self._compression or "zstd"
        if compression not in ("zstd", "none"):
            raise InvalidArgument(f"compression is 'zstd' or 'none', not {compression!r}")
        path = add_session(self.root, session, compression=compression, overwrite=overwrite)
        return Session.open(path)

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


def _default_agent_home(format: str) -> Path:
    """Where an agent keeps its logs by default (``Workspace.agent_home(format=...)``)."""
    if format == "claude-code":
        return Path.home() / ".claude" / "projects"
    if format == "codex":
        codex = os.environ.get("CODEX_HOME", "").strip()
        return (Path(codex).expanduser() if codex else Path.home() / ".codex") / "sessions"
    if format == "gemini-cli":
        return Path.home() / ".gemini" / "tmp"
    raise InvalidArgument(
        f"give the folder of {format!r} logs: only claude-code, codex and gemini-cli have a "
        "default home"
    )


def _user_cache_dir() -> Path:
    """Where the derived index of an agent home lives: never in the agent's own home."""
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(base) if base else Path.home() / ".cache") / "ctxsdk" / "workspaces"


def _home_key(home: Path, format: str) -> str:
    """A file name for one agent home's index: its format and a digest of its path."""
    import hashlib

    digest = hashlib.sha256(os.fsencode(str(home))).hexdigest()[:16]
    return f"{format}-{digest}"


def _summary_only(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: summary.get(k) for k in SUMMARY_KEYS}


def _unstattable(item: Found, exc: OSError) -> dict[str, Any] | None:
    """The row of a log path ``os.stat`` refused: a dangling or looping symlink, or no
    permission to look; None when the file is simply gone (removed since the walk)."""
    path = item.path
    if isinstance(exc, FileNotFoundError):
        try:
            target = os.readlink(path)
        except OSError:
            return None  # not a symlink: the session is gone
        return unreadable(item, f"{path}: a dangling symlink (to {target!r}); nothing to read")
    if exc.errno == errno.ELOOP:
        return unreadable(item, f"{path}: a symlink loop ({exc.strerror}); not read")
    return unreadable(item, f"cannot stat {path}: {exc}")


Workspace.__module__ = "ctxsdk"
