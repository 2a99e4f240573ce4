"""A cache of text embeddings by content hash, shared by every process of the user.

A vector is stored under sha256 of (model name, model version, kind, text), ``kind`` being
``"query"`` or ``"passage"`` for a model that embeds the two differently (E5) and
``"passage"`` for the rest, so nothing the same model embedded before is embedded twice,
across runs and processes. It is one SQLite file, ``embeddings.sqlite`` in
``$CTXSDK_CACHE_DIR``, else ``$XDG_CACHE_HOME/ctxsdk``, else ``~/.cache/ctxsdk``; in WAL
mode, written with ``INSERT OR IGNORE`` in short transactions under a busy timeout, so
concurrent processes neither block long nor lose a write. ``CTXSDK_EMBEDDING_CACHE=0`` (or
``off``, ``false``, ``no``) turns it off.

A vector comes back bit-identical to the one stored: float32 bytes when the floats are all
float32 values (the local models' output), float64 bytes otherwise. A cache that cannot be
opened, read or written (a corrupted file, a read-only directory, a full disk) is never an
error: one :class:`EmbeddingCacheWarning` is emitted and the embedder embeds as if there
were no cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import struct
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = [
    "EmbeddingCache",
    "EmbeddingCacheWarning",
    "cache_dir",
    "cached_embed",
    "default_cache",
    "reset_default_cache",
]

_OFF = frozenset({"0", "off", "false", "no"})
_FILE = "embeddings.sqlite"
_CHUNK = 400  # keys per SELECT (under SQLite's variable limit)
_BUSY_MS = 30_000
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


def _create(conn: sqlite3.Connection) -> None:
    """The table, in one write transaction; the first layout's ``vectors`` table (a WITHOUT
    ROWID table, three times the size on disk) is copied into it and dropped."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "embedding" in tables and "vectors" not in tables:
        return  # no write: a read-only file still serves
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(_SCHEMA)
        old = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vectors'"
        ).fetchone()
        if old:
            conn.execute("INSERT OR IGNORE INTO embedding SELECT key, dtype, vec FROM vectors")
            conn.execute("DROP TABLE vectors")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


class EmbeddingCache:
    """One SQLite cache file; its connection is opened on first use (again in a forked
    child) and shared by the process's threads under a lock."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = -1
        self._broken = False  # no reads nor writes: the file could not be opened or read
        self._readonly = False  # reads go on, writes stopped failing
        self.hits = 0
        self.misses = 0

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
        return conn

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
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

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
                        f"SELECT key, dtype, vec FROM embedding WHERE key IN ({marks})", part
                    ).fetchall()
                    for key, dtype, blob in rows:
                        vec = _unpack(dtype, blob)
                        if vec is not None and (dim is None or len(vec) == dim):
                            out[bytes(key)] = vec
            except sqlite3.Error as e:
                self._give_up(f"cannot read it ({e})")
                return {}
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

            def write() -> None:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    conn.executemany(
                        "INSERT OR IGNORE INTO embedding (key, dtype, vec) VALUES (?, ?, ?)", rows
                    )
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")

            try:
                self._retry(write)
            except sqlite3.Error as e:
                self._readonly = True
                warnings.warn(
                    f"embedding cache {self.path}: cannot write it ({e}); new embeddings "
                    "are not cached",
                    EmbeddingCacheWarning,
                    stacklevel=3,
                )

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
