"""A cache of text embeddings by content hash, shared by every process of the user.

A vector is stored under sha256 of (model name, model version, kind, text), ``kind`` being
``"query"`` or ``"passage"`` for a model that embeds the two differently (E5) and
``"passage"`` for the rest, so nothing the same model embedded before is embedded twice,
across runs and processes. It is one SQLite file, ``embeddings.sqlite`` in
``$CTXSDK_CACHE_DIR``, else ``$XDG_CACHE_HOME/ctxsdk``, else ``~/.cache/ctxsdk``; in WAL
mode, written with ``INSERT OR IGNORE`` in short transactions under a busy timeout, so
concurrent processes neither block long nor lose a write. ``CTXSDK_EMBEDDING_CACHE=0`` (or
``off``, ``false``, ``no``) turns it off.

It is bounded: when the pages its rows use pass ``CTXSDK_EMBEDDING_CACHE_MAX_MB`` (MiB,
default 1024, about half a million 384-d vectors; ``unlimited`` for no bound) the least
recently used vectors are deleted, down to 90% of it, in one write transaction, on open and
after a write that passed it (never on a read). Rows are kept in the order of their last use:
a vector is written at the table's end, and once the file passes half its bound a hit on one
in the older half of the table moves it there (batched, 256 to a transaction, or with the
next write, or when the cache closes); a hit on a recent vector, or any hit while the file is
under half its bound, writes nothing, so a hot loop reads only. Deleting the oldest rows
thus frees whole pages, which the next vectors reuse: the file stays near the bound.
:meth:`EmbeddingCache.clear` (``clear_default_cache()``) empties it and gives its space
back.

A vector comes back bit-identical to the one stored: float32 bytes when the floats are all
float32 values (the local models' output), float64 bytes otherwise. A cache that cannot be
opened, read or written (a corrupted file, a read-only directory, a full disk) is never an
error: one :class:`EmbeddingCacheWarning` is emitted and the embedder embeds as if there
were no cache.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import sqlite3
import struct
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

__all__ = [
    "EmbeddingCache",
    "EmbeddingCacheWarning",
    "cache_dir",
    "cached_embed",
    "clear_default_cache",
    "default_cache",
    "max_bytes_from_env",
    "reset_default_cache",
]

_OFF = frozenset({"0", "off", "false", "no"})
_FILE = "embeddings.sqlite"
_CHUNK = 400  # keys per SELECT (under SQLite's variable limit)
_BUSY_MS = 30_000
_MAX_ENV = "CTXSDK_EMBEDDING_CACHE_MAX_MB"
_DEFAULT_MAX_MB = 1024
_UNLIMITED = frozenset({"unlimited", "none", "inf"})
_LOW_WATER = 0.9  # a prune deletes down to this share of the bound
_FROM_ENV = -1  # EmbeddingCache's max_bytes when not given: the environment's, or the default
_TOUCH_BATCH = 256  # hits on old vectors moved to the table's end in one transaction
_MARK_EVERY = 32  # reads between two looks at where the table's older half ends
# A rowid table, the key in its own index: a vector (1.5 KB for 384 float32) fits in its
# table page, where a WITHOUT ROWID row that size spills into an overflow page (3x the file).
_SCHEMA = """
CREATE TABLE IF NOT EXISTS embedding (
    key BLOB NOT NULL UNIQUE,
    dtype TEXT NOT NULL,
    vec BLOB NOT NULL
)
"""


class EmbeddingCacheWarning(UserWarning):
    """The embedding cache could not be used (opened, read or written): embedding goes on
    without it. Emitted once per cache file per process."""


def cache_dir() -> Path | None:
    """``$CTXSDK_CACHE_DIR``, else ``$XDG_CACHE_HOME/ctxsdk``, else ``~/.cache/ctxsdk``
    (None without a home directory)."""
    own = os.environ.get("CTXSDK_CACHE_DIR", "").strip()
    if own:
        return Path(own)
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    if xdg:
        return Path(xdg) / "ctxsdk"
    try:
        return Path.home() / ".cache" / "ctxsdk"
    except RuntimeError:
        return None


def cache_key(model: str, version: str, kind: str, text: str) -> bytes:
    """sha256 of the four, each length-prefixed so no two tuples share an encoding."""
    h = hashlib.sha256()
    for part in (model, version, kind, text):
        raw = part.encode("utf-8", "surrogatepass")
        h.update(struct.pack("<Q", len(raw)))
        h.update(raw)
    return h.digest()


def _pack(vec: Sequence[float]) -> tuple[str, bytes]:
    """float32 bytes when that loses nothing, else float64 bytes."""
    n = len(vec)
    f32 = struct.pack(f"<{n}f", *vec) if n else b""
    if list(struct.unpack(f"<{n}f", f32)) == list(vec):
        return "f4", f32
    return "f8", struct.pack(f"<{n}d", *vec)


def _unpack(dtype: str, blob: bytes) -> list[float] | None:
    size = 4 if dtype == "f4" else 8 if dtype == "f8" else 0
    if not size or len(blob) % size:
        return None
    return list(struct.unpack(f"<{len(blob) // size}{'f' if size == 4 else 'd'}", blob))


@contextlib.contextmanager
def _immediate(conn: sqlite3.Connection) -> Iterator[None]:
    """One write transaction (``BEGIN IMMEDIATE``: the lock taken up front), rolled back when
    its body raises."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _create(conn: sqlite3.Connection) -> None:
    """The table, in one write transaction; the first layout's ``vectors`` table (a WITHOUT
    ROWID table, three times the size on disk) is copied into it and dropped."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "embedding" in tables and "vectors" not in tables:
        return  # no write: a read-only file still serves
    with _immediate(conn):
        conn.execute(_SCHEMA)
        old = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vectors'"
        ).fetchone()
        if old:
            conn.execute("INSERT OR IGNORE INTO embedding SELECT key, dtype, vec FROM vectors")
            conn.execute("DROP TABLE vectors")


def max_bytes_from_env() -> int | None:
    """The bound ``CTXSDK_EMBEDDING_CACHE_MAX_MB`` sets, in bytes (MiB, a number above 0;
    ``unlimited``: None); unset, the default 1024 MiB. A value that is none of these warns
    and the default holds."""
    raw = os.environ.get(_MAX_ENV, "").strip().lower()
    if not raw:
        return _DEFAULT_MAX_MB << 20
    if raw in _UNLIMITED:
        return None
    try:
        mb = float(raw)
    except ValueError:
        mb = -1.0
    if not mb > 0 or mb == float("inf"):
        warnings.warn(
            f"{_MAX_ENV}={raw!r} is not a size in MiB above 0 nor 'unlimited'; "
            f"the embedding cache keeps to {_DEFAULT_MAX_MB} MiB",
            EmbeddingCacheWarning,
            stacklevel=3,
        )
        return _DEFAULT_MAX_MB << 20
    return max(1, int(mb * (1 << 20)))


def _pages_used(conn: sqlite3.Connection) -> int:
    """Bytes of the file's pages that hold something (its size less its free pages)."""
    pages = int(conn.execute("PRAGMA page_count").fetchone()[0])
    free = int(conn.execute("PRAGMA freelist_count").fetchone()[0])
    size = int(conn.execute("PRAGMA page_size").fetchone()[0])
    return (pages - free) * size


class EmbeddingCache:
    """One SQLite cache file; its connection is opened on first use (again in a forked
    child) and shared by the process's threads under a lock.

    ``max_bytes`` bounds the bytes its pages use (the least recently used vectors go first);
    by default ``CTXSDK_EMBEDDING_CACHE_MAX_MB`` or 1024 MiB, None for no bound."""

    def __init__(self, path: str | os.PathLike[str], *, max_bytes: int | None = _FROM_ENV) -> None:
        self.path = Path(path)
        self.max_bytes = max_bytes_from_env() if max_bytes == _FROM_ENV else max_bytes
        if self.max_bytes is not None and self.max_bytes <= 0:
            raise ValueError(f"max_bytes must be above 0 or None, not {self.max_bytes}")
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = -1
        self._broken = False  # no reads nor writes: the file could not be opened or read
        self._readonly = False  # reads go on, writes stopped failing
        self._old_below = 0  # a hit on a rowid under this moves the vector to the end
        self._touch: dict[bytes, tuple[str, bytes]] = {}  # key -> its row, to move
        self._gets = 0
        self.hits = 0
        self.misses = 0
        self.evicted = 0  # vectors this object's prunes deleted

    # -- connection ----------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection | None:
        if self._broken:
            return None
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        self._conn = None  # a parent's connection is never used in a forked child
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                self.path, timeout=_BUSY_MS / 1000, isolation_level=None, check_same_thread=False
            )
            try:
                conn.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
                if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                    self._retry(lambda: conn.execute("PRAGMA journal_mode = WAL"))
                conn.execute("PRAGMA synchronous = NORMAL")
                self._retry(lambda: _create(conn))
            except BaseException:
                conn.close()
                raise
        except (sqlite3.Error, OSError) as e:
            self._give_up(f"cannot open it ({e})")
            return None
        self._conn, self._pid = conn, os.getpid()
        self._touch.clear()  # a parent's pending moves are the parent's to write
        try:
            self._prune(conn)  # on open: a bound lowered since, or another ctxsdk's writes
            self._mark_old(conn)
        except sqlite3.Error:
            pass  # a read-only file still serves; its bound is its writers' to keep
        return conn

    def _mark_old(self, conn: sqlite3.Connection) -> None:
        """Where the table's older half ends: a hit below it is moved to the end. Nothing is
        moved while the file is under half its bound (or has none): no eviction is near,
        and a read then writes nothing."""
        if self.max_bytes is None or _pages_used(conn) <= self.max_bytes // 2:
            self._old_below = 0
            return
        lo = conn.execute("SELECT min(rowid) FROM embedding").fetchone()[0]
        hi = conn.execute("SELECT max(rowid) FROM embedding").fetchone()[0]
        self._old_below = 0 if lo is None else lo + (hi - lo + 1) // 2

    def _prune(self, conn: sqlite3.Connection, *, within: bool = False) -> int:
        """Delete the least recently used vectors (the table's first rows) while the pages
        used pass the bound, down to ``_LOW_WATER`` of it; the count deleted. Its own write
        transaction unless ``within`` one; checked again inside it, so two processes that
        both saw the file over the bound prune once."""
        bound = self.max_bytes
        if bound is None or _pages_used(conn) <= bound:
            return 0  # two PRAGMA reads: the common case costs nothing more
        deleted = 0
        with contextlib.nullcontext() if within else _immediate(conn):
            target = int(bound * _LOW_WATER)
            for _ in range(8):  # freed pages may lag the rows deleted (a page shared by rows)
                used = _pages_used(conn)
                if used <= target:
                    break
                count = int(conn.execute("SELECT count(*) FROM embedding").fetchone()[0])
                if count == 0:
                    break
                n = max(1, -(-count * (used - target) // used))
                cur = conn.execute(
                    "DELETE FROM embedding WHERE rowid IN "
                    "(SELECT rowid FROM embedding ORDER BY rowid LIMIT ?)",
                    (n,),
                )
                deleted += cur.rowcount
        self.evicted += deleted
        return deleted

    @staticmethod
    def _retry(op: Callable[[], object], tries: int = 20) -> None:
        """``op``, retried while another process holds the lock past the busy timeout's
        reach (schema and journal changes can see SQLITE_BUSY without waiting)."""
        for attempt in range(tries):
            try:
                op()
                return
            except sqlite3.OperationalError as e:
                if ("locked" not in str(e) and "busy" not in str(e)) or attempt == tries - 1:
                    raise
                time.sleep(0.05 * (attempt + 1))

    def _give_up(self, why: str) -> None:
        self._broken = True
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._conn = None
        warnings.warn(
            f"embedding cache {self.path}: {why}; embedding without it "
            "(CTXSDK_EMBEDDING_CACHE=0 turns it off, CTXSDK_CACHE_DIR moves it)",
            EmbeddingCacheWarning,
            stacklevel=4,
        )

    def close(self) -> None:
        """Write the pending moves of recently hit vectors, and close the file."""
        with self._lock:
            if self._conn is not None:
                if self._pid == os.getpid():
                    self._flush_touches(self._conn)
                self._conn.close()
                self._conn = None

    def flush(self) -> None:
        """Write the pending moves of recently hit vectors now (``close`` does it too)."""
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._flush_touches(self._conn)

    def clear(self) -> int:
        """Delete every vector, and give the file's space back (a ``VACUUM``, skipped while
        another process reads it); the count deleted."""
        with self._lock:
            conn = self._connect()
            if conn is None:
                return 0
            self._touch.clear()
            try:
                n = conn.execute("DELETE FROM embedding").rowcount
                conn.execute("PRAGMA busy_timeout = 1000")  # not half a minute for a VACUUM
                try:
                    with contextlib.suppress(sqlite3.OperationalError):
                        conn.execute("VACUUM")
                    with contextlib.suppress(sqlite3.OperationalError):
                        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                finally:
                    conn.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
            except sqlite3.Error as e:
                self._give_up(f"cannot clear it ({e})")
                return 0
            self._old_below = 0
            return max(0, n)

    @staticmethod
    def _write_touches(conn: sqlite3.Connection, rows: list[tuple[bytes, str, bytes]]) -> None:
        """Move these vectors to the table's end (inside a write transaction): deleted and
        written again, a new rowid each, so the table keeps their order of use."""
        if rows:
            conn.executemany("DELETE FROM embedding WHERE key = ?", [(r[0],) for r in rows])
            conn.executemany(
                "INSERT OR IGNORE INTO embedding (key, dtype, vec) VALUES (?, ?, ?)", rows
            )

    def _pending(self) -> list[tuple[bytes, str, bytes]]:
        rows = [(key, dtype, blob) for key, (dtype, blob) in self._touch.items()]
        self._touch.clear()
        return rows

    def _flush_touches(self, conn: sqlite3.Connection) -> None:
        rows = self._pending()
        if not rows or self._readonly:
            return

        def write() -> None:
            with _immediate(conn):
                self._write_touches(conn, rows)

        try:
            self._retry(write)
            self._mark_old(conn)
        except sqlite3.Error:
            pass  # an order of use is a hint: lost, nothing is wrong

    # -- reads and writes ----------------------------------------------------------------

    def get(self, keys: Sequence[bytes], dim: int | None = None) -> dict[bytes, list[float]]:
        """The cached vectors among ``keys`` (of length ``dim`` when given)."""
        out: dict[bytes, list[float]] = {}
        if not keys:
            return out
        with self._lock:
            conn = self._connect()
            if conn is None:
                return out
            try:
                unique = list(dict.fromkeys(keys))
                for at in range(0, len(unique), _CHUNK):
                    part = unique[at : at + _CHUNK]
                    marks = ",".join("?" * len(part))
                    rows = conn.execute(
                        f"SELECT rowid, key, dtype, vec FROM embedding WHERE key IN ({marks})",
                        part,
                    ).fetchall()
                    old: dict[bytes, tuple[str, bytes]] = {}
                    for rowid, key, dtype, blob in rows:
                        vec = _unpack(dtype, blob)
                        if vec is not None and (dim is None or len(vec) == dim):
                            out[bytes(key)] = vec
                            if rowid < self._old_below:  # soon evicted: moved to the end
                                old[bytes(key)] = (dtype, bytes(blob))
                    for key in part if old else ():  # in the order asked for
                        if key in old:
                            self._touch[key] = old[key]
            except sqlite3.Error as e:
                self._give_up(f"cannot read it ({e})")
                return {}
            if len(self._touch) >= _TOUCH_BATCH:
                self._flush_touches(conn)
            else:
                self._gets += 1
                if self._gets % _MARK_EVERY == 0:  # others' writes and prunes move the half
                    with contextlib.suppress(sqlite3.Error):
                        self._mark_old(conn)
        return out

    def put(self, items: Sequence[tuple[bytes, Sequence[float]]]) -> None:
        """Store ``(key, vector)`` pairs; a key already there keeps its vector."""
        if not items:
            return
        rows = [(key, *_pack(vec)) for key, vec in items]
        with self._lock:
            if self._readonly:
                return
            conn = self._connect()
            if conn is None:
                return

            touches = self._pending()  # written with the new vectors, one transaction

            def write() -> None:
                with _immediate(conn):
                    self._write_touches(conn, touches)
                    conn.executemany(
                        "INSERT OR IGNORE INTO embedding (key, dtype, vec) VALUES (?, ?, ?)", rows
                    )
                    self._prune(conn, within=True)

            try:
                self._retry(write)
                self._mark_old(conn)
            except sqlite3.Error as e:
                self._readonly = True
                warnings.warn(
                    f"embedding cache {self.path}: cannot write it ({e}); new embeddings "
                    "are not cached",
                    EmbeddingCacheWarning,
                    stacklevel=3,
                )

    def bytes_used(self) -> int:
        """Bytes of the file's pages that hold vectors (what ``max_bytes`` bounds); 0 when
        the file cannot be read."""
        with self._lock:
            conn = self._connect()
            if conn is None:
                return 0
            try:
                return _pages_used(conn)
            except sqlite3.Error:
                return 0

    def __len__(self) -> int:
        with self._lock:
            conn = self._connect()
            if conn is None:
                return 0
            try:
                return int(conn.execute("SELECT count(*) FROM embedding").fetchone()[0])
            except sqlite3.Error:
                return 0


_DEFAULT: dict[Path, EmbeddingCache] = {}
_DEFAULT_LOCK = threading.Lock()


def default_cache() -> EmbeddingCache | None:
    """The user's cache (one per file per process), or None when it is turned off."""
    if os.environ.get("CTXSDK_EMBEDDING_CACHE", "").strip().lower() in _OFF:
        return None
    where = cache_dir()
    if where is None:
        return None
    path = where / _FILE
    with _DEFAULT_LOCK:
        cache = _DEFAULT.get(path)
        if cache is None:
            cache = _DEFAULT[path] = EmbeddingCache(path)
        return cache


def clear_default_cache() -> int:
    """Empty the user's cache (``ctxsdk.session.kernel`` has it; the file stays, emptied and
    shrunk); the count of vectors deleted, 0 when the cache is off."""
    cache = default_cache()
    return 0 if cache is None else cache.clear()


@atexit.register
def _flush_defaults() -> None:
    with _DEFAULT_LOCK:
        for cache in _DEFAULT.values():
            with contextlib.suppress(Exception):
                cache.flush()


def reset_default_cache() -> None:
    """Close and forget the per-process caches (a test that moves ``CTXSDK_CACHE_DIR``)."""
    with _DEFAULT_LOCK:
        for cache in _DEFAULT.values():
            cache.close()
        _DEFAULT.clear()


def cached_embed(
    embed: Callable[[list[str]], list[list[float]]],
    texts: Sequence[str],
    *,
    model: str,
    version: str,
    kind: str,
    dim: int,
    cache: EmbeddingCache | None = None,
) -> list[list[float]]:
    """``embed(texts)`` through the cache: the texts never embedded by this model (version,
    kind) are embedded once each, in one call and in their given order, and stored; the
    rest are read back. With the cache off or unusable this is ``embed(texts)``."""
    texts = list(texts)
    if not texts:
        return []
    if cache is None:
        cache = default_cache()
    if cache is None:
        return embed(texts)
    keys = [cache_key(model, version, kind, t) for t in texts]
    found = cache.get(keys, dim)
    todo: dict[bytes, int] = {}  # key -> index of its first text, each missing text once
    for i, key in enumerate(keys):
        if key not in found and key not in todo:
            todo[key] = i
    cache.hits += len(texts) - len(todo)
    cache.misses += len(todo)
    if todo:
        fresh = embed([texts[i] for i in todo.values()])
        if len(fresh) != len(todo):  # the caller's shape check reports it
            return embed(texts)
        new = list(zip(todo, fresh, strict=True))
        found.update(new)
        if all(len(v) == dim for _, v in new):
            cache.put(new)
    return [list(found[key]) for key in keys]
