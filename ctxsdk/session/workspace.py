"""``Workspace``: every session of a DSH home, listed, opened by id prefix, with lineage.

The harness keeps no index (spec §1): titles, lineage and event counts live only inside the
logs. Listing them therefore means reading every log once; a *derived* index caches what a
listing learned, keyed by file path with the file's size and ``mtime_ns``, so a warm listing
reads no log at all. The cache is never authoritative: an entry whose file changed is
recomputed, a removed file is dropped, a stale, foreign or corrupt cache file is ignored and
rebuilt, and ``sessions(refresh=True)`` ignores it altogether.

Cache file: ``<home>/storages/ctxsdk/index.json`` (the harness's storage root is
``<home>/storages``; ctxsdk writes only inside its own ``ctxsdk`` subdirectory), written
atomically (temp file + ``os.replace``), and never inside the installed ctxsdk package (the
shipped samples home stays read-only).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import orjson

from .._gc import gc_paused
from .._progress import Progress, resolve_progress
from ..errors import AmbiguousId, NotFound, SessionFormatError
from .codec import KNOWN_VERSIONS, Compression, DecodedLog, frame_spans, read_log
from .layout import decode_segment, is_session_file_name, sessions_root
from .layout import dsh_home as dsh_home_path
from .surface import fold_log

if TYPE_CHECKING:
    import polars as pl

    from .session import Session

__all__ = [
    "CACHE_RELPATH",
    "SESSION_COLUMNS",
    "LineageNode",
    "SessionTree",
    "Workspace",
]

CACHE_RELPATH = Path("storages") / "ctxsdk" / "index.json"
"""Where the derived index lives, relative to the DSH home."""

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
}
"""The columns of ``Workspace.sessions``, in order, with their dtypes and meaning."""

_CACHE_FORMAT = "ctxsdk.workspace-index"
_CACHE_VERSION = 1  # bump when what a summary holds, or how it is computed, changes
_LOG_SUFFIXES = (".jsonl", ".jsonl.zstd")
_PACKAGE_DIR = Path(__file__).resolve().parents[1]

Kind = Literal["root", "fork", "subagent", "child"]


def _schema() -> dict[str, Any]:
    import polars as pl

    utc_ms = pl.Datetime("ms", "UTC")
    return {
        "id": pl.Utf8,
        "title": pl.Utf8,
        "events": pl.Int64,
        "bytes": pl.Int64,
        "created": utc_ms,
        "updated": utc_ms,
        "parent": pl.Utf8,
        "origin": pl.Utf8,
        "delegation_depth": pl.Int64,
        "version": pl.Int64,
        "seeded": pl.Boolean,
        "cwd": pl.Utf8,
        "interrupted": pl.Boolean,
        "project": pl.Utf8,
        "path": pl.Utf8,
        "readable": pl.Boolean,
        "error": pl.Utf8,
    }


def _reader_tag() -> str:
    """What a cached summary depends on besides the file: this reader's version."""
    from .. import __version__

    return f"{__version__}/{_CACHE_VERSION}/{','.join(map(str, KNOWN_VERSIONS))}"


# --- the directory walk ----------------------------------------------------------------------


@dataclass
class _Found:
    """One session the walk found: a session dir's chosen log, or something the harness
    would reject (``problem`` says what, without reading the file)."""

    path: Path  # the log file, or the session dir when it has no log
    project: str
    dir_name: str | None  # the session dir name (None for a flat file)
    problem: str | None = None
    stat: os.stat_result | None = None


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _is_log_name(name: str) -> bool:
    return name.endswith(_LOG_SUFFIXES)


def _walk(root: Path, compression: Compression | None) -> list[_Found]:
    """Every session dir (and every flat log file) under ``root``, sorted by path."""
    found: list[_Found] = []
    try:
        top = sorted(os.scandir(root), key=lambda e: e.name)
    except FileNotFoundError:
        return found
    for proj in top:
        if proj.is_file() and _is_log_name(proj.name):
            found.append(
                _Found(
                    Path(proj.path),
                    "",
                    None,
                    "a log file directly in the session root; the harness only reads "
                    "<root>/<projectKey(cwd)>/<encodeSegment(id)>/session[.vN].jsonl[.zstd]: "
                    "move it into its own session directory",
                )
            )
            continue
        if not proj.is_dir() or proj.name.startswith("."):
            continue  # .relocate.<sha256>.json intents and other root-level files
        try:
            entries = sorted(os.scandir(proj.path), key=lambda e: e.name)
        except OSError as exc:
            found.append(_Found(Path(proj.path), proj.name, None, f"cannot list: {exc}"))
            continue
        for entry in entries:
            if entry.is_dir():
                found.append(_session_dir(Path(entry.path), proj.name, compression))
            elif entry.is_file() and _is_log_name(entry.name):
                found.append(
                    _Found(
                        Path(entry.path),
                        proj.name,
                        None,
                        "a flat session file, which the harness rejects: a log lives in its "
                        "own directory, <project>/<encodeSegment(id)>/session[.vN].jsonl[.zstd]; "
                        "move it there",
                    )
                )
    return found


def _session_dir(path: Path, project: str, compression: Compression | None) -> _Found:
    """Choose a session dir's log: the numerically highest canonical generation (§1)."""
    gens: dict[int, dict[str, Path]] = {}
    try:
        names = os.listdir(path)
    except OSError as exc:
        return _Found(path, project, path.name, f"cannot list the session directory: {exc}")
    for name in names:
        if not is_session_file_name(name):
            continue
        gen = 0 if not name.startswith("session.v") else int(name[9 : name.index(".jsonl")])
        enc = "zstd" if name.endswith(".zstd") else "none"
        gens.setdefault(gen, {})[enc] = path / name
    if not gens:
        return _Found(
            path,
            project,
            path.name,
            "no session log in this directory (the harness writes session[.vN].jsonl[.zstd] "
            "on the first append; an empty directory is not a session)",
        )
    if compression is not None:
        usable: dict[int, dict[str, Path]] = {
            g: {compression: f[compression]} for g, f in gens.items() if compression in f
        }
        if not usable:
            other = next(iter(next(iter(gens.values())).values())).name
            return _Found(
                path,
                project,
                path.name,
                f"this root is {compression}-encoded but the directory only holds {other} "
                "(the other encoding), which the harness rejects",
            )
        gens = usable
    top = max(gens)
    files = gens[top]
    if len(files) > 1:
        return _Found(
            files["zstd"],
            project,
            path.name,
            f"both {files['none'].name} and {files['zstd'].name} exist; a root has one "
            "encoding and the harness rejects the other: pass compression='zstd' or 'none' "
            "to Workspace, or remove one",
        )
    return _Found(next(iter(files.values())), project, path.name)


# --- one session's summary ---------------------------------------------------------------------


def _located(exc: SessionFormatError, log: DecodedLog, path: Path) -> SessionFormatError:
    if exc.seq is None:
        return exc.at(path=path)
    line = log.line_of(exc.seq)
    frame = log.frame_of_line(line) if line is not None else None
    return exc.at(path=path, line=line, frame=frame)


def _summarize(path: Path) -> dict[str, Any]:
    """Read one log through the codec and the validating fold (no typed models): what a
    listing row needs. Raises what ``Session.open`` would raise."""
    log = read_log(path)
    try:
        index = fold_log(log.events, log.version)
    except SessionFormatError as exc:
        raise _located(exc, log, path) from None
    h = log.header
    title = None
    if index.title_seq is not None:
        value = log.events[index.title_seq]["data"]["title"]
        title = value if isinstance(value, str) else None
    seeded = bool(h.get("isSeeded")) if log.version >= 2 else bool(h.get("seedLength"))
    return {
        "id": h["id"],
        "title": title,
        "events": len(log.events),
        "size": log.size,
        "created": h["createdAt"],
        "updated": log.events[-1]["time"] if log.events else None,
        "parent": h.get("parentSession"),
        "origin": h.get("origin"),
        "delegation_depth": h["delegationDepth"],
        "version": log.version,
        "seeded": seeded,
        "cwd": h.get("cwd"),
        "interrupted": index.open_turn is not None,
        "readable": True,
        "error": None,
    }


def _peek_header(path: Path) -> dict[str, Any]:
    """Whatever the header line of an unreadable log still says (best effort, never raises)."""
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 20)
        if head[:4] == b"\x28\xb5\x2f\xfd":
            import zstandard

            spans, _ = frame_spans(head)
            if not spans:
                return {}
            text = zstandard.ZstdDecompressor().decompressobj().decompress(head[: spans[0][1]])
        else:
            text = head
        header = orjson.loads(text.split(b"\n", 1)[0])
    except Exception:
        return {}
    if not isinstance(header, dict):
        return {}
    out: dict[str, Any] = {}
    for key, col, kind in (
        ("id", "id", str),
        ("createdAt", "created", int),
        ("parentSession", "parent", str),
        ("origin", "origin", str),
        ("delegationDepth", "delegation_depth", int),
        ("version", "version", int),
        ("cwd", "cwd", str),
    ):
        value = header.get(key)
        is_str = kind is str and isinstance(value, str)
        if is_str or (kind is int and type(value) is int and 0 <= value <= 2**53 - 1):
            out[col] = value
    return out


def _unreadable(found: _Found, error: str) -> dict[str, Any]:
    row: dict[str, Any] = {"readable": False, "error": _one_line(error)}
    if found.path.is_file():
        row.update(_peek_header(found.path))
    if "id" not in row:
        row["id"] = _id_from_name(found)
    if "version" not in row and found.path.is_file():
        row["version"] = _generation(found.path.name)
    return row


def _id_from_name(found: _Found) -> str:
    name = found.dir_name
    if name is None:  # a flat file: its name without the log suffix
        base = found.path.name
        for suffix in (".zstd", ".jsonl"):
            base = base.removesuffix(suffix)
        name = base
    try:
        return decode_segment(name)
    except ValueError:
        return name


def _generation(name: str) -> int | None:
    if not is_session_file_name(name):
        return None
    return 0 if not name.startswith("session.v") else int(name[9 : name.index(".jsonl")])


# --- the derived index -------------------------------------------------------------------------


_CACHED_KEYS = (
    "id",
    "title",
    "events",
    "created",
    "updated",
    "parent",
    "origin",
    "delegation_depth",
    "version",
    "seeded",
    "cwd",
    "interrupted",
    "readable",
    "error",
)


class _Index:
    """The derived index file: ``{rel path: {size, mtime_ns, problem, row}}``; never
    authoritative. ``problem`` is what the walk found wrong with the file's place (a flat
    file, a second encoding): an entry only holds while that is unchanged too."""

    def __init__(self, path: Path | None, root: Path) -> None:
        self.path = path
        self.root = root
        self.entries: dict[str, dict[str, Any]] = {}
        self.dirty = False

    def load(self) -> None:
        if self.path is None:
            return
        try:
            doc = orjson.loads(self.path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return  # missing or corrupt: start empty, rebuild
        if (
            not isinstance(doc, dict)
            or doc.get("format") != _CACHE_FORMAT
            or doc.get("reader") != _reader_tag()
            or doc.get("root") != str(self.root)
            or not isinstance(doc.get("entries"), dict)
        ):
            self.dirty = True  # foreign, stale or for another root: rewrite it
            return
        self.entries = doc["entries"]

    def get(self, rel: str, st: os.stat_result, problem: str | None) -> dict[str, Any] | None:
        entry = self.entries.get(rel)
        if not isinstance(entry, dict):
            return None
        if entry.get("size") != st.st_size or entry.get("mtime_ns") != st.st_mtime_ns:
            return None
        if entry.get("problem") != problem:  # the file is fine but its place changed, or back
            return None
        row = entry.get("row")
        if not isinstance(row, dict) or not all(k in row for k in _CACHED_KEYS):
            return None
        return row

    def put(self, rel: str, st: os.stat_result, problem: str | None, row: dict[str, Any]) -> None:
        self.entries[rel] = {
            "size": st.st_size,
            "mtime_ns": st.st_mtime_ns,
            "problem": problem,
            "row": {k: row.get(k) for k in _CACHED_KEYS},
        }
        self.dirty = True

    def keep_only(self, live: set[str]) -> None:
        gone = [k for k in self.entries if k not in live]
        for k in gone:
            del self.entries[k]
        self.dirty = self.dirty or bool(gone)

    def save(self) -> None:
        """Write atomically (temp file + ``os.replace``); any failure leaves the cache as it
        was and is otherwise ignored (the cache is an optimisation)."""
        if self.path is None or not self.dirty:
            return
        doc = {
            "format": _CACHE_FORMAT,
            "reader": _reader_tag(),
            "root": str(self.root),
            "entries": self.entries,
        }
        tmp: str | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".index.", suffix=".tmp", dir=self.path.parent)
            with os.fdopen(fd, "wb") as f:
                f.write(orjson.dumps(doc))
            os.replace(tmp, self.path)
            tmp = None
            self.dirty = False
        except OSError:
            pass
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


# --- lineage -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class LineageNode:
    """One session in a lineage tree, with its children (forks and subagents)."""

    id: str
    kind: Kind  # root, or how this session relates to its parent
    title: str | None
    path: str
    readable: bool
    children: tuple[LineageNode, ...] = field(default=(), repr=False)

    def walk(self, depth: int = 0) -> Iterator[tuple[int, LineageNode]]:
        """(depth, node) pairs, this node first, then its children depth-first."""
        yield depth, self
        for child in self.children:
            yield from child.walk(depth + 1)


@dataclass(frozen=True)
class SessionTree:
    """The lineage tree a session belongs to (``Workspace.tree``).

    ``root`` is the topmost ancestor found in the workspace; ``missing_parent`` names its
    parent when the header points at a session that is not in this workspace.
    """

    root: LineageNode
    focus: str
    missing_parent: str | None = None

    def __iter__(self) -> Iterator[LineageNode]:
        return (node for _, node in self.root.walk())

    def __len__(self) -> int:
        return sum(1 for _ in self.root.walk())

    def find(self, session_id: str) -> LineageNode:
        for node in self:
            if node.id == session_id:
                return node
        raise NotFound(f"session {session_id} is not in this lineage tree (root {self.root.id})")

    def to_polars(self) -> pl.DataFrame:
        """One row per session, depth-first: id, parent, kind, depth, title, readable, path."""
        import polars as pl

        rows: list[dict[str, Any]] = []

        def visit(node: LineageNode, parent: str | None, depth: int) -> None:
            rows.append(
                {
                    "id": node.id,
                    "parent": parent,
                    "kind": node.kind,
                    "depth": depth,
                    "title": node.title,
                    "readable": node.readable,
                    "path": node.path,
                }
            )
            for child in node.children:
                visit(child, node.id, depth + 1)

        visit(self.root, self.missing_parent, 0)
        schema = {
            "id": pl.Utf8,
            "parent": pl.Utf8,
            "kind": pl.Utf8,
            "depth": pl.Int64,
            "title": pl.Utf8,
            "readable": pl.Boolean,
            "path": pl.Utf8,
        }
        return pl.DataFrame(rows, schema=schema)

    def __str__(self) -> str:
        lines: list[str] = []
        if self.missing_parent is not None:
            lines.append(f"({self.missing_parent}: parent not in this workspace)")

        def label(node: LineageNode) -> str:
            mark = "  <--" if node.id == self.focus else ""
            kind = "" if node.kind == "root" else f"[{node.kind}] "
            title = node.title if node.title is not None else "(untitled)"
            bad = "" if node.readable else " (unreadable)"
            return f"{kind}{node.id[:8]}  {title}{bad}{mark}"

        def visit(node: LineageNode, prefix: str, last: bool, top: bool) -> None:
            if top:
                lines.append(label(node))
                child_prefix = ""
            else:
                lines.append(f"{prefix}{'└── ' if last else '├── '}{label(node)}")
                child_prefix = prefix + ("    " if last else "│   ")
            for i, child in enumerate(node.children):
                visit(child, child_prefix, i == len(node.children) - 1, False)

        visit(self.root, "", True, True)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)


def _kind(row: dict[str, Any]) -> Kind:
    """How a session relates to its parent (§12): seeded children are forks, unseeded
    ``origin: 'subagent'`` children are spawned subagents."""
    if row.get("parent") is None:
        return "root"
    if row.get("seeded"):
        return "fork"
    if row.get("origin") == "subagent":
        return "subagent"
    return "child"


# --- the workspace -----------------------------------------------------------------------------


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
            inside_package = self.home.resolve().is_relative_to(_PACKAGE_DIR)
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
        import polars as pl

        rows = self._rows(refresh)
        if not rows:
            return pl.DataFrame(schema=_schema())
        df = pl.DataFrame(rows, schema=_raw_schema())
        df = df.with_columns(
            pl.col("created").cast(pl.Datetime("ms")).dt.replace_time_zone("UTC"),
            pl.col("updated").cast(pl.Datetime("ms")).dt.replace_time_zone("UTC"),
        )
        key = pl.coalesce("updated", "created")
        return (
            df.with_columns(key.alias("_key"))
            .sort(["_key", "id", "path"], descending=[True, False, False], nulls_last=True)
            .drop("_key")
            .select(list(_schema()))
        )

    def _rows(self, refresh: bool) -> list[dict[str, Any]]:
        if not self.home.is_dir():
            raise NotFound(
                f"the DSH home {self.home} does not exist (or is not a directory); pass "
                "dsh_home= or set $DSH_HOME "
                "to the directory that holds sessions/"
            )
        index = _Index(self.cache_path, self.root)
        if not refresh:
            index.load()
        else:
            index.dirty = self.cache_path is not None
        found = _walk(self.root, self._compression)
        prefix = len(str(self.root)) + 1  # relative paths by slicing: pathlib is slow here
        rows: list[dict[str, Any] | None] = [None] * len(found)
        todo: list[int] = []
        live: set[str] = set()
        for i, item in enumerate(found):
            if item.problem is not None and not item.path.is_file():
                rows[i] = _unreadable(item, item.problem)  # nothing to read
                continue
            path = str(item.path)
            try:
                item.stat = os.stat(path)
            except FileNotFoundError:
                continue  # removed since the walk saw it: the session is gone
            except OSError as exc:
                rows[i] = _unreadable(item, f"cannot stat {item.path}: {exc}")
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
                    row, cacheable = self._read_one(item)
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
                    **{k: summary.get(k) for k in _CACHED_KEYS},
                    "bytes": size,
                    "project": item.project,
                    "path": str(item.path),
                }
            )
        return out

    def _read_one(self, item: _Found) -> tuple[dict[str, Any], bool]:
        """(row, cacheable): a summary, or the error that makes the log unreadable."""
        assert item.stat is not None
        if item.problem is not None:  # rejected by its place: only the header is peeked at
            return _unreadable(item, item.problem), True
        try:
            row = _summarize(item.path)
        except SessionFormatError as exc:
            return _unreadable(item, str(exc)), True
        except OSError as exc:  # permissions, a file removed meanwhile: not the file's fault
            return _unreadable(item, f"cannot read {item.path}: {exc}"), False
        except NotFound as exc:
            return _unreadable(item, str(exc)), False
        except Exception as exc:  # a reader defect must not hide the rest of the listing
            return _unreadable(
                item, f"{item.path}: unexpected {type(exc).__name__} while reading: {exc}"
            ), False
        # A file that changed between stat and read is summarized but not cached.
        return row, row.pop("size") == item.stat.st_size

    # --- opening -------------------------------------------------------------------------------

    def find(self, prefix: str) -> dict[str, Any]:
        """The listing row of the one session whose id starts with ``prefix`` (an exact id
        wins over longer ids it prefixes). Raises ``NotFound`` naming the prefix, or
        listing the candidates when it is ambiguous."""
        rows = self.sessions().to_dicts()
        return _match(rows, prefix, self.root)

    def open(self, prefix: str, **kwargs: Any) -> Session:
        """Open the session whose id starts with ``prefix`` (a unique prefix is enough).

        Keyword arguments go to ``Session.open``. An unreadable session raises the
        reader's error.
        """
        from .session import Session

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
        return out.with_columns(
            pl.Series("kind", [_kind(r) for r in out.to_dicts()], dtype=pl.Utf8)
        )

    def parents(self, session_id: str) -> pl.DataFrame:
        """The chain of ancestors, nearest first, up to the root, with a ``depth`` column
        (1 = the parent). An ancestor that is not in this workspace ends the chain as a row
        with ``readable = False`` and an error saying so."""
        import polars as pl

        df = self.sessions()
        rows = df.to_dicts()
        by_id = _by_id(rows)
        start = by_id.get(_match(rows, session_id, self.root)["id"])
        assert start is not None
        chain: list[dict[str, Any]] = []
        seen = {start["id"]}
        parent = start.get("parent")
        while parent is not None:
            row = by_id.get(parent)
            if row is None:
                chain.append(_missing_row(parent, chain[-1] if chain else start))
                break
            if row["id"] in seen:
                break  # a parentSession cycle (hand-edited headers): stop, do not loop
            seen.add(row["id"])
            chain.append(row)
            parent = row.get("parent")
        schema = dict(df.schema)
        out = pl.DataFrame(chain, schema=schema) if chain else df.clear()
        return out.with_columns(pl.Series("depth", list(range(1, len(chain) + 1)), dtype=pl.Int64))

    def tree(self, session_id: str, *, from_root: bool = True) -> SessionTree:
        """The lineage tree this session belongs to: from its topmost ancestor in the
        workspace (``from_root=False``: from the session itself) down through every fork
        and subagent."""
        rows = self.sessions().to_dicts()
        by_id = _by_id(rows)
        focus = _match(rows, session_id, self.root)
        top = focus
        missing: str | None = None
        if from_root:
            seen = {top["id"]}
            while top.get("parent") is not None:
                up = by_id.get(top["parent"])
                if up is None:
                    missing = top["parent"]
                    break
                if up["id"] in seen:
                    break
                seen.add(up["id"])
                top = up
        kids: dict[str, list[dict[str, Any]]] = {}
        for r in sorted(rows, key=_created_key):
            if r.get("parent") is not None and r["id"] != r["parent"]:
                kids.setdefault(r["parent"], []).append(r)

        def build(row: dict[str, Any], seen: frozenset[str]) -> LineageNode:
            seen = seen | {row["id"]}
            children = tuple(build(c, seen) for c in kids.get(row["id"], []) if c["id"] not in seen)
            return LineageNode(
                id=row["id"],
                kind=_kind(row),
                title=row.get("title"),
                path=row["path"],
                readable=bool(row["readable"]),
                children=children,
            )

        return SessionTree(root=build(top, frozenset()), focus=focus["id"], missing_parent=missing)

    def _lineage_id(self, rows: list[dict[str, Any]], session_id: str) -> str:
        """A listed session's id (by prefix), or an id only children still name."""
        try:
            return str(_match(rows, session_id, self.root)["id"])
        except NotFound:
            if any(r.get("parent") == session_id for r in rows):
                return session_id
            raise


def _raw_schema() -> dict[str, Any]:
    import polars as pl

    schema = _schema()
    schema["created"] = pl.Int64
    schema["updated"] = pl.Int64
    return {k: schema[k] for k in (*_CACHED_KEYS, "bytes", "project", "path")}


def _created_key(row: dict[str, Any]) -> tuple[Any, str]:
    created = row.get("created")
    return (created.timestamp() if created is not None else float("inf"), row["id"])


def _by_id(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Id -> row; with duplicate ids (copied dirs) the first (newest) readable row wins."""
    out: dict[str, dict[str, Any]] = {}
    for r in rows:
        prev = out.get(r["id"])
        if prev is None or (not prev["readable"] and r["readable"]):
            out[r["id"]] = r
    return out


def _missing_row(session_id: str, child: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {k: None for k in child}
    row.update(
        id=session_id,
        readable=False,
        error=(
            f"session {session_id} (parent of {child['id']}) is not in this workspace: "
            "deleted, or kept under another DSH home"
        ),
    )
    return row


def _match(rows: Sequence[dict[str, Any]], prefix: str, root: Path) -> dict[str, Any]:
    if not isinstance(prefix, str) or not prefix:
        raise NotFound(f"give a session id or a unique prefix of one, not {prefix!r}")
    exact = [r for r in rows if r["id"] == prefix]
    hits = exact or [r for r in rows if r["id"].startswith(prefix)]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise NotFound(
            f"no session id starts with {prefix!r} in {root} ({len(rows)} sessions); "
            "Workspace.sessions() lists them"
        )
    if exact:
        where = "; ".join(r["path"] for r in hits)
        raise AmbiguousId(
            f"{len(hits)} sessions have the id {prefix!r} (copied directories?): {where}; "
            "open one by path with Session.open(path)"
        )
    shown = hits[:10]
    listed = ", ".join(f"{r['id']} ({r['title']!r})" if r["title"] else str(r["id"]) for r in shown)
    more = f" and {len(hits) - len(shown)} more" if len(hits) > len(shown) else ""
    raise AmbiguousId(
        f"{prefix!r} is ambiguous: {len(hits)} sessions start with it: {listed}{more}; "
        "give more of the id"
    )
