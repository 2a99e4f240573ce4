"""``SQLiteStore``: the Memory engine's graph in one SQLite file per workspace.

The dsh-trivium seed kept its graph in a single-process database; here several processes
(an agent, a notebook, the CLI) open one workspace at once, so the store leans on SQLite's
own locking instead of an in-process cache:

- WAL journal: readers never block the writer and never see an uncommitted transaction;
- every write is ``BEGIN IMMEDIATE``: writers queue on the file lock (up to ``timeout``)
  instead of failing halfway through a transaction; this project's writers first take an
  exclusive ``flock`` on a sidecar file beside the database (``<file>-writer``, made by the
  first write), which a waiter waits for asleep until the kernel hands it over;
- ``batch()`` nests with savepoints; the outermost one commits, an exception rolls back;
- ``revision()`` is a counter in the file itself, bumped by every write transaction that
  changed something, so every process and every store object agrees on it.

Schema versions live in ``PRAGMA user_version`` and are migrated forward step by step on
open (``_MIGRATIONS``); a file from a newer version, or one that is not a SQLite database,
is refused with a ctxsdk error naming the path.
"""

from __future__ import annotations

import math
import os
import random
import sqlite3
import stat
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from pathlib import Path
from typing import Any, NamedTuple, NoReturn

from ..errors import (
    CorruptStore,
    InvalidArgument,
    LockHeld,
    NotFound,
    StoreVersionError,
    Unreadable,
    WriteError,
)
from ..session.kernel import open_regular_file
from ._model import EDGE_LABELS, NODE_TYPES, Edge, Node
from ._model import node_uri as _node_uri
from ._rows import (
    COLUMNS,
    DAMAGED,
    INDEXED,
    MAINTAINED,
    NODE_COLUMNS,
    NODE_ORDER,
    REVISION_KEY,
    STATUSES,
    VECTOR_COLUMNS,
    check_meta_key,
    check_model,
    check_node,
    damaged,
    dumps_value,
    edge_of,
    is_utf8,
    kind_of,
    load_json,
    loadable,
    new_node_id,
    new_node_ids,
    new_row,
    node_columns,
    node_of,
    now_stamp,
    stamped,
    stored_row,
    taken,
    update_params,
)
from ._store import Changes

_fcntl: Any
try:  # POSIX; elsewhere writers queue on SQLite's lock alone
    import fcntl as _fcntl
except ImportError:  # pragma: no cover - not on the platforms the project runs on
    _fcntl = None

__all__ = ["SCHEMA_VERSION", "SQLiteStore"]

_SQLITE_MAGIC = b"SQLite format 3\x00"
# ``match_changes`` in one statement: the revision (0), what the merge rule compares of each
# node written after a revision (1), the nodes deleted after it (2). (No ORDER BY: one over
# the primary key could make SQLite walk every row in id order; the few rows are sorted.)
_MATCH_SQL = (
    "SELECT 0, CAST(value AS INTEGER), NULL, NULL, NULL, NULL, NULL, NULL FROM meta"
    " WHERE key = ? AND CAST(value AS INTEGER) = value"
    " UNION ALL SELECT 1, id, type, name, text, aliases, status, extra FROM nodes"
    " WHERE changed > ?"
    " UNION ALL SELECT 2, id, NULL, NULL, NULL, NULL, NULL, NULL FROM gone WHERE changed > ?"
)


# --- schema and migrations ---------------------------------------------------------------


def _script(db: sqlite3.Connection, sql: str) -> None:
    """Run ``;``-separated DDL inside the open transaction (``executescript`` would commit
    first, and a migration must be one transaction with its ``user_version``)."""
    for statement in sql.split(";"):
        if statement.strip():
            db.execute(statement)


def _v1(db: sqlite3.Connection) -> None:
    """The first schema: nodes (without ``extra``), edges, meta, the type/status index."""
    _script(
        db,
        """
        CREATE TABLE nodes (
            id TEXT PRIMARY KEY,
            type TEXT NOT NULL,
            name TEXT NOT NULL,
            text TEXT NOT NULL DEFAULT '',
            aliases TEXT NOT NULL DEFAULT '[]',
            uri TEXT NOT NULL UNIQUE,
            sources TEXT NOT NULL DEFAULT '[]',
            until TEXT,
            until_at TEXT,
            fail TEXT,
            fix TEXT,
            status TEXT NOT NULL DEFAULT 'active',  -- uri UNIQUE is the uri index
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX nodes_type_status ON nodes (type, status);
        CREATE TABLE edges (
            src TEXT NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
            dst TEXT NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
            label TEXT NOT NULL,
            weight REAL NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (src, dst, label)
        );
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        """,
    )


def _v2(db: sqlite3.Connection) -> None:
    """v1 -> v2: the ``extra`` JSON column (an episode's kind and seq) and the index that
    makes walking edges *into* a node (``edges(dst=...)``) cheap."""
    _script(
        db,
        """
        ALTER TABLE nodes ADD COLUMN extra TEXT NOT NULL DEFAULT '{}';
        CREATE INDEX edges_dst ON edges (dst, label);
        """,
    )


def _v3(db: sqlite3.Connection) -> None:
    """v2 -> v3: the ``vectors`` table, one embedding per node and embedder (``model``:
    the embedder's name, dimension and version), with the hash of the text it embeds, so a
    search reuses what an earlier process embedded and re-embeds only what changed. A
    deleted node takes its vectors with it (ON DELETE CASCADE); an archived one keeps them."""
    _script(
        db,
        """
        CREATE TABLE vectors (
            node TEXT NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            hash TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (node, model)
        );
        CREATE INDEX vectors_model ON vectors (model);
        """,
    )


# The revision the open write transaction commits as: the writer holds the file's lock, and
# the counter is bumped once, at its commit (``_write``).
_NEXT_REVISION = (
    f"(SELECT coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = '{REVISION_KEY}'),"
    " 0) + 1)"
)


def _v4(db: sqlite3.Connection) -> None:
    """v3 -> v4: the change feed (``changes``). Every node row carries ``changed``, the
    revision that last wrote it (0: before this version), and ``gone`` keeps the ids of
    deleted nodes with the revision that deleted them, so a reader that holds the nodes of
    one revision reads only what changed since. Triggers keep both, whichever statement
    writes (put, update, load, delete, a cascade): nothing in the store's code can forget
    to. (An AFTER trigger's own UPDATE of ``changed`` fires no trigger: it names only that
    column, and the UPDATE trigger lists every other.)"""
    written = ", ".join(sorted(COLUMNS["nodes"]))
    _script(
        db,
        """
        ALTER TABLE nodes ADD COLUMN changed INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX nodes_changed ON nodes (changed);
        CREATE TABLE gone (id TEXT PRIMARY KEY, changed INTEGER NOT NULL);
        CREATE INDEX gone_changed ON gone (changed)
        """,
    )
    # one statement each: a trigger's body holds semicolons of its own
    db.execute(
        f"""CREATE TRIGGER nodes_written AFTER INSERT ON nodes BEGIN
            UPDATE nodes SET changed = {_NEXT_REVISION} WHERE rowid = NEW.rowid;
            DELETE FROM gone WHERE id = NEW.id;
        END"""
    )
    db.execute(
        f"""CREATE TRIGGER nodes_rewritten AFTER UPDATE OF {written} ON nodes BEGIN
            UPDATE nodes SET changed = {_NEXT_REVISION} WHERE rowid = NEW.rowid;
        END"""
    )
    db.execute(
        f"""CREATE TRIGGER nodes_deleted AFTER DELETE ON nodes BEGIN
            INSERT INTO gone (id, changed) VALUES (OLD.id, {_NEXT_REVISION})
                ON CONFLICT (id) DO UPDATE SET changed = excluded.changed;
        END"""
    )


# _MIGRATIONS[i] takes a file from user_version i to i + 1 (0 is a new, empty file).
_MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (_v1, _v2, _v3, _v4)
# Tables added after the first schema, and the version that added them (an older file
# lacks them until it is migrated); the embeddings table is the store's own cache.
_SINCE = {"vectors": 3}
SCHEMA_VERSION = len(_MIGRATIONS)
"""The schema version this code writes (``PRAGMA user_version``)."""


# --- values ------------------------------------------------------------------------------


# --- the store ---------------------------------------------------------------------------


# Checkpoints: SQLite's own (``wal_autocheckpoint``, 1000 frames) runs after every commit
# once the WAL holds that many frames. With several writers the log seldom restarts (another
# process is always reading from it), so it stays past the mark and every commit ran a
# checkpoint, two fsyncs each: four writers spent about a millisecond an item there. The
# store checkpoints itself (``_checkpoint_if_due``): when the log has grown by
# ``_CHECKPOINT_FRAMES`` since this connection's last checkpoint or the log's restart. The
# log's size is read from its file, which a restart truncates to ``_WAL_KEEP`` bytes
# (``journal_size_limit``), so the size follows the log. Checkpoints copy committed pages
# into the file; every commit is in the WAL when it returns, checkpointed or not.
_CHECKPOINT_FRAMES = 1000
_TEMP_STORE = "MEMORY"  # where the connection keeps its journals of savepoints (_configure)
_WAL_KEEP = 1 << 20
_WAL_HEADER = 32
_FRAME_HEADER = 24


# The writers' gate: an exclusive ``flock`` on ``<file>-writer``, taken before ``BEGIN
# IMMEDIATE`` and released after the COMMIT (or ROLLBACK). A writer waiting for SQLite's own
# lock can only try ``BEGIN IMMEDIATE`` again and again (a try that fails opens and ends a
# read of the file) and sleep between tries, so the lock is often free while every waiter
# sleeps; a writer waiting for the gate sleeps in the kernel until the holder lets go, and
# its thread is woken then (``_GateWaiter``, which also keeps the timeout). The lock belongs
# to the store object's own open file (so two stores in one process exclude each other too),
# the kernel drops it when the process dies, and a forked child opens a file of its own (its
# inherited descriptor would share its parent's lock). The gate only orders this project's
# writers: the transaction is still ``BEGIN IMMEDIATE``, retried as before, which is all that
# excludes another program (or a store that could not open the gate).
_GATE = "-writer"


class _GateWaiter:
    """A thread that waits in a blocking ``flock`` for the gate on behalf of one store's
    writes: the writer sleeps on a condition until the kernel hands the gate over, and
    still gives up at its timeout (a thread blocked in ``flock`` cannot be timed out). It
    waits through its own duplicate of the store's descriptor (the same open file, so the
    lock it takes is the store's), closed when it stops. Only it waits in ``flock`` while
    it is busy: a lock taken on the same open file by another thread meanwhile would be
    released by its ``LOCK_UN`` of an abandoned wait."""

    def __init__(self, fd: int) -> None:
        self._fd = os.dup(fd)
        self._cond = threading.Condition(threading.Lock())
        self._want = False  # a writer waits for the gate (guarded by _cond)
        self._granted = False  # this thread took it for that writer
        self._busy = False  # this thread is in flock, or about to be
        self._stopped = False
        self._failed = False  # flock failed here: no gate
        self._thread = threading.Thread(target=self._run, name="ctxsdk-sqlite-gate", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        fd, cond = self._fd, self._cond
        try:
            while True:
                with cond:
                    while not (self._want or self._stopped):
                        cond.wait()
                    if self._stopped:
                        return
                    self._busy = True
                try:
                    _fcntl.flock(fd, _fcntl.LOCK_EX)
                except OSError:
                    with cond:
                        self._failed, self._busy = True, False
                        cond.notify_all()
                    return
                with cond:
                    if self._want and not self._stopped:
                        self._want, self._granted = False, True
                    else:  # the writer gave up (or the store closed) meanwhile
                        with suppress(OSError):
                            _fcntl.flock(fd, _fcntl.LOCK_UN)
                    self._busy = False
                    cond.notify_all()
        finally:
            with suppress(OSError):
                os.close(fd)

    def take(self, fd: int, deadline: float) -> bool | None:
        """The gate for a write: tried at once through ``fd`` (the store's descriptor) when
        this thread is not waiting already, else waited for until ``deadline``. True when
        taken, False at the deadline, None when ``flock`` fails here (no gate)."""
        with self._cond:
            if self._failed or not self._thread.is_alive():
                return None
            if not self._busy:
                try:
                    _fcntl.flock(fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB)
                    return True
                except BlockingIOError:
                    pass
                except OSError:
                    return None
            self._want = True
            self._cond.notify_all()
            while not self._granted:
                left = deadline - time.monotonic()
                if left <= 0 or self._failed or not self._thread.is_alive():
                    self._want = False
                    return None if self._failed else False
                self._cond.wait(left)
            self._granted = False
            return True

    def stop(self) -> None:
        """Stop the thread (at once when idle; after its wait in ``flock``, which it then
        releases, when not)."""
        with self._cond:
            self._stopped, self._want = True, False
            self._cond.notify_all()


# Stores whose gate is open in this process. A forked child closes its copies of their
# descriptors at once (``_forget_gates``): a ``flock`` lock lives as long as any descriptor of
# its open file, so a child that lived on with a copy would keep the gate locked after its
# parent died holding it, and every writer would wait out its timeout until the child ended.
_GATED: weakref.WeakSet[SQLiteStore] = weakref.WeakSet()


def _forget_gates() -> None:
    """In a forked child: every inherited gate descriptor closed (never unlocked: the lock
    is the parent's), so the child's first write opens a gate of its own."""
    for store in list(_GATED):
        store._forget_gate()
    _GATED.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_gates)


def _json_or_none(raw: object) -> Any:
    """The JSON value in ``raw`` when it is one this store writes, else None."""
    if not isinstance(raw, str):
        return None
    try:
        return load_json(raw, lambda why: CorruptStore(why))
    except CorruptStore:
        return None


def _matched(row: Sequence[Any]) -> Node | None:
    """A node of ``match_changes`` from its compared columns, checked as ``node_of`` checks
    them; None when one is not what this store writes (the caller reads the row whole)."""
    nid, type_, name, text, aliases, status, extra = row
    if not (
        type(nid) is str
        and type(name) is str
        and type(text) is str
        and type_ in NODE_TYPES
        and status in STATUSES
    ):
        return None
    names = [] if aliases == "[]" else _json_or_none(aliases)
    more = {} if extra == "{}" else _json_or_none(extra)
    if not (isinstance(names, list) and all(type(a) is str for a in names)):
        return None
    if not isinstance(more, dict):
        return None
    return Node(
        id=nid, type=type_, name=name, text=text, aliases=tuple(names), status=status, extra=more
    )


def _busy(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` is another connection holding the lock (try again)."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in str(exc)


def _counts(values: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


_INSERT_NODE = f"INSERT INTO nodes ({NODE_COLUMNS}) VALUES ({', '.join('?' * len(NODE_ORDER))})"


class _Refused(Exception):
    """A batch insert's row refused by a unique index (``put_many`` checks and writes again)."""


class PreparedNode(NamedTuple):
    """A new node checked and its row encoded ahead of its write (``SQLiteStore.prepared``):
    the node, and its columns (``node_columns``) without the id, uri and times the insert
    sets."""

    node: Node
    columns: Mapping[str, Any]


class SQLiteStore:
    """A ``MemoryStore`` in one SQLite file (see the module docs). One connection per
    object, guarded by a lock, so threads may share an object; processes each open their
    own object on the same file."""

    def __init__(
        self, path: str | os.PathLike[str], *, create: bool = True, timeout: float = 30.0
    ) -> None:
        if timeout < 0:
            raise InvalidArgument(f"timeout must be >= 0, not {timeout!r}")
        self._timeout = float(timeout)
        self._lock = threading.RLock()
        self._depth = 0  # nesting of write transactions (guarded by _lock)
        self._reading = False  # inside snapshot() (guarded by _lock)
        self._changes_at_begin = 0
        self._committed: int | None = None  # the revision this object's last commit made
        self._db: sqlite3.Connection | None = None
        memory = os.fspath(path) == ":memory:"
        self._path = ":memory:" if memory else str(Path(os.fspath(path)).absolute())
        self._wal = None if memory else self._path + "-wal"
        self._frame_bytes = 4096 + _FRAME_HEADER  # with the file's page size (_configure)
        self._wal_mark = 0  # the log's frames at this connection's last checkpoint
        self._gate: int | None = None  # the gate's descriptor (opened by the first write)
        self._gate_pid = 0  # the process that opened it (a fork's child opens its own)
        self._gate_held = False
        self._gate_off = memory or _fcntl is None  # no gate: SQLite's lock alone
        self._gate_waiter: _GateWaiter | None = None  # made at the first wait
        if not memory:
            self._check_name()
            self._check_file(create)
        try:
            self._db = sqlite3.connect(
                self._path,
                timeout=self._timeout,
                isolation_level=None,  # we issue BEGIN / COMMIT ourselves
                check_same_thread=False,  # the RLock serialises threads
            )
        except sqlite3.Error as exc:
            self._raise(exc)
        self._db.row_factory = sqlite3.Row
        try:
            # Read-only checks first: a file that is not ours is refused before the WAL
            # switch (which persists in the file) touches it.
            self._inspect()
            self._configure(memory)
            self._migrate()
        except BaseException:
            self._db.close()
            self._db = None
            raise

    @classmethod
    def memory(cls) -> SQLiteStore:
        """A store in an in-memory SQLite database (real SQLite, gone on close): for quick
        experiments and tests that need no file."""
        return cls(":memory:")

    # -- opening ----------------------------------------------------------------------------
    def _check_name(self) -> None:
        """Refuse a name the file system cannot encode (a lone surrogate), which SQLite
        would meet as a bare ``UnicodeEncodeError``."""
        try:
            os.fsencode(self._path)
        except UnicodeEncodeError:
            raise InvalidArgument(
                f"{self._path!r}: the file system cannot encode this name (a lone "
                "surrogate), so no memory database can have it"
            ) from None

    def _check_file(self, create: bool) -> None:
        """Refuse a missing file (when not creating), one that is not a regular file (a
        FIFO would block the open for ever, a device never ends) or one that is not SQLite,
        before SQLite turns it into a half-initialised database or a raw ``DatabaseError``."""
        p = Path(self._path)

        def refuse(problem: str, kind: str) -> InvalidArgument:
            return InvalidArgument(
                f"{self._path}: {kind}, not a regular file; a memory database is a regular "
                "file, so it is not opened"
            )

        try:
            # stat (follows symlinks: /dev/zero behind one), a non-blocking open, fstat.
            with open_regular_file(p, refuse) as fd:
                head = os.read(fd, 100)
        except FileNotFoundError:
            if not create:
                raise NotFound(f"{self._path}: no memory database here (create=False)") from None
            if not p.parent.is_dir():
                raise NotFound(f"{self._path}: its directory does not exist") from None
            return
        except PermissionError as exc:
            raise Unreadable(f"{self._path}: cannot read it ({exc})", path=self._path) from None
        except OSError as exc:  # a symlink loop, a file where a directory should be
            raise InvalidArgument(f"{self._path}: cannot open it ({exc.strerror})") from None
        if head and (len(head) < 100 or not head.startswith(_SQLITE_MAGIC)):
            raise CorruptStore(
                f"{self._path}: not a SQLite database (bad or truncated header); "
                "a memory database is refused rather than overwritten",
                path=str(self._path),
            )

    def _configure(self, memory: bool) -> None:
        db = self._conn()
        with self._translate():
            if not memory:
                mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
                if str(mode).lower() != "wal":
                    raise WriteError(f"{self._path}: cannot switch to WAL (journal mode {mode})")
            # WAL + synchronous=NORMAL: a commit is in the WAL (the OS has it) when COMMIT
            # returns, so a process killed at any point loses no committed transaction and
            # the file recovers to the last commit. Only a power loss or OS crash may drop
            # the last few commits (never corrupting the file); FULL would fsync every commit
            # for that case, which memory writes (many small transactions) do not need.
            db.execute("PRAGMA synchronous=NORMAL")
            if not memory:  # checkpointed by the store (_checkpoint_if_due)
                db.execute("PRAGMA wal_autocheckpoint=0")
                db.execute(f"PRAGMA journal_size_limit={_WAL_KEEP}")
                page = int(db.execute("PRAGMA page_size").fetchone()[0])
                self._frame_bytes = page + _FRAME_HEADER
            db.execute("PRAGMA foreign_keys=ON")
            db.execute(f"PRAGMA busy_timeout={int(self._timeout * 1000)}")
            # Statement and savepoint journals in memory: a batch's writes run inside a
            # savepoint (``put_many``, a nested batch), whose journal SQLite spills to a
            # temporary file past 64 KiB, which doubled the time a 10k-node insert took.
            # They hold the old images of pages a savepoint changed, for a ROLLBACK TO;
            # crash safety is the WAL's. (``compact`` sets files back for its VACUUM,
            # whose temporary copy is the whole database.)
            db.execute(f"PRAGMA temp_store={_TEMP_STORE}")

    def _migrate(self) -> None:
        """Bring the file to ``SCHEMA_VERSION``, one step at a time, in one write
        transaction (two processes opening a new file at once: one migrates, the other
        waits and then finds it done). An up-to-date file takes no write lock, so a store
        opens (and reads) while another process is in the middle of a long batch."""
        with self._translate():
            current = int(self._conn().execute("PRAGMA user_version").fetchone()[0])
        if current == SCHEMA_VERSION:
            return
        with self._write():
            db = self._conn()
            version = self._version_we_can_open()
            for step in range(version, SCHEMA_VERSION):
                try:
                    _MIGRATIONS[step](db)
                except sqlite3.Error as exc:  # the tables are not the ones that version made
                    raise self._not_ours(f"schema version {version}, but {exc}") from exc
                db.execute(f"PRAGMA user_version={step + 1}")

    def _version_we_can_open(self) -> int:
        """The file's schema version, unless it is newer than ours or the file holds
        another program's tables (user_version 0 with tables in it)."""
        # One statement, so one snapshot: read apart, another process's creation could
        # commit between them and a new memory would look like another program's file.
        version, tables = (
            self._conn()
            .execute(
                "SELECT user_version, (SELECT count(*) FROM sqlite_master) FROM pragma_user_version"
            )
            .fetchone()
        )
        version = int(version)
        if version < 0:  # a flipped sign bit: no ctxsdk writes one
            raise self._not_ours(f"schema version {version}, below 0")
        if version > SCHEMA_VERSION:
            raise StoreVersionError(
                f"{self._path}: memory schema version {version} is newer than this "
                f"ctxsdk knows (version {SCHEMA_VERSION}); upgrade ctxsdk to open it",
                path=str(self._path),
            )
        if version == 0 and tables:
            raise self._not_ours("user_version 0 with tables in it")
        return version

    def _inspect(self) -> None:
        """Refuse, reading only, a file this ctxsdk must not open: too new, another
        program's, or one whose user_version says memory but whose tables are not ours
        (every table of an older version, every column of the current one)."""
        with self._translate():
            db = self._conn()
            version = self._version_we_can_open()
            tables = {**COLUMNS, "vectors": VECTOR_COLUMNS}
            for table, want in tables.items() if version else ():
                if version < _SINCE.get(table, 1):
                    continue  # a table this file's version does not have yet
                have = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
                missing = sorted(want - have)
                if not have:
                    raise self._not_ours(f"schema version {version}, but no table {table}")
                if missing and version == SCHEMA_VERSION:
                    raise self._not_ours(f"no column {', '.join(missing)} in {table}")

    def _not_ours(self, why: str) -> CorruptStore:
        return CorruptStore(
            f"{self._path}: not a ctxsdk memory ({why}); it is refused, not changed",
            path=str(self._path),
        )

    # -- plumbing ---------------------------------------------------------------------------
    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            raise InvalidArgument(f"{self._path}: the memory store is closed")
        return self._db

    def _raise(self, exc: sqlite3.Error) -> NoReturn:
        """Turn a sqlite3 error into the ctxsdk error a caller can act on."""
        name = getattr(exc, "sqlite_errorname", "") or ""
        where = self._path
        if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in str(exc):
            raise LockHeld(
                f"{where}: another connection held the database for longer than "
                f"timeout={self._timeout}s ({exc})"
            ) from exc
        text = str(exc)
        if text.startswith("Could not decode to UTF-8"):  # a text value that is not UTF-8
            raise CorruptStore(
                f"{where}: {self._undecodable() or 'a value'} is not UTF-8 text; {DAMAGED}",
                path=where,
            ) from exc
        if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or any(
            s in text for s in ("malformed", "not a database")
        ):
            raise CorruptStore(
                f"{where}: not a readable SQLite database, damaged or not a database ({exc})",
                path=where,
            ) from exc
        if name.startswith(("SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")):
            raise Unreadable(f"{where}: cannot open the database ({exc})", path=where) from exc
        if name.startswith(("SQLITE_FULL", "SQLITE_IOERR", "SQLITE_READONLY")):
            raise WriteError(f"{where}: write failed, last commit kept ({exc})") from exc
        raise WriteError(f"{where}: database error ({exc})") from exc

    def _undecodable(self) -> str | None:
        """Where the first text value that is not UTF-8 is ("node 'n…', column name"), read
        as bytes; None when it cannot be found (or the scan fails too)."""
        keys = {"nodes": ("id", "node"), "edges": ("src", "edge from"), "meta": ("key", "meta key")}
        try:
            for table, columns in COLUMNS.items():
                key, what = keys[table]
                cols = sorted(columns)
                sql = f"SELECT {', '.join(f'CAST({c} AS BLOB)' for c in cols)} FROM {table}"
                for row in self._conn().execute(sql):
                    for column, value in zip(cols, row, strict=True):
                        if isinstance(value, bytes) and not is_utf8(value):
                            ident = row[cols.index(key)]
                            ident = ident.decode("utf-8", "replace") if ident else ident
                            return f"{what} {ident!r}, column {column}"
        except sqlite3.Error:
            return None
        return None

    @contextmanager
    def _translate(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            self._raise(exc)
        except UnicodeEncodeError as exc:
            raise self._not_text(exc) from None
        except UnicodeDecodeError as exc:  # damaged schema text (a PRAGMA's output)
            raise self._not_utf8(exc) from exc

    def _not_utf8(self, exc: UnicodeDecodeError) -> CorruptStore:
        return CorruptStore(
            f"{self._path}: the database holds text that is not UTF-8 ({exc}); {DAMAGED}",
            path=self._path,
        )

    def _not_text(self, exc: UnicodeEncodeError) -> InvalidArgument:
        """A lone surrogate in a parameter (an id or key ``json`` decoded from ``"\\ud800"``):
        SQLite stores UTF-8 only, so the statement never ran."""
        bad = exc.object[exc.start : exc.end]
        code = f"U+{ord(bad[0]):04X}" if isinstance(bad, str) and bad else "a surrogate"
        return InvalidArgument(
            f"{self._path}: a text holds a lone surrogate ({code}), which is not text"
        )

    def _begin(self, db: sqlite3.Connection) -> None:
        """The writers' gate (``_take_gate``), then ``BEGIN IMMEDIATE``, waiting up to
        ``timeout`` in all for both. With the gate held, ``BEGIN IMMEDIATE`` waits only for
        another program (or a store without the gate). SQLite's own busy handler sleeps 1,
        2, 5, 10 ... 100 ms between tries, so with a few writers the lock was often free
        while every waiter slept (four processes wrote less than one); here a waiter tries
        again within a millisecond (with jitter): a try costs a few microseconds, a lock
        left idle a whole write. The connection's ``busy_timeout`` is off from before the
        first try to the end of the transaction (``_end``: holding the write lock of a WAL
        file, no statement waits for another connection), and stays for everything else (a
        checkpoint, a migration, WAL recovery)."""
        db.execute("PRAGMA busy_timeout=0")
        try:
            deadline = time.monotonic() + self._timeout
            self._take_gate(deadline)
            delay = 0.0001
            while True:
                try:
                    db.execute("BEGIN IMMEDIATE")
                    return
                except sqlite3.OperationalError as exc:
                    if not _busy(exc) or time.monotonic() >= deadline:
                        raise
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 1.5, 0.001)
        except BaseException:
            self._end(db)
            raise

    def _end(self, db: sqlite3.Connection) -> None:
        """After a write transaction (or a ``_begin`` that failed): the gate released, and
        the connection's ``busy_timeout`` back."""
        self._drop_gate()
        with suppress(sqlite3.Error):
            db.execute(f"PRAGMA busy_timeout={int(self._timeout * 1000)}")

    def _gate_fd(self) -> int | None:
        """The gate's descriptor, opened on the first write (a store that only reads makes
        no file); None when there is no gate: an in-memory database, no ``flock`` here, or a
        sidecar that cannot be opened as a regular file (a read-only directory, something
        else at its path), where SQLite's lock alone orders the writers."""
        if self._gate_off:
            return None
        pid = os.getpid()
        if self._gate is not None and self._gate_pid == pid:
            return self._gate
        if self._gate is not None:  # inherited through a fork: the parent's, not ours
            self._close_gate()
        path = os.path.realpath(self._path) + _GATE  # beside the file SQLite opened
        flags = os.O_RDONLY | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
        flags |= getattr(os, "O_NOFOLLOW", 0)
        try:
            mode = os.stat(self._path).st_mode & 0o666  # as SQLite makes its -wal and -shm
            fd = os.open(path, flags, mode)
        except OSError:
            self._gate_off = True
            return None
        try:
            regular = stat.S_ISREG(os.fstat(fd).st_mode)
        except OSError:
            regular = False
        if not regular:
            os.close(fd)
            self._gate_off = True
            return None
        self._gate, self._gate_pid = fd, pid
        _GATED.add(self)
        return fd

    def _take_gate(self, deadline: float) -> None:
        """The writers' gate (see ``_GATE``): taken at once when free, else waited for
        asleep (``_GateWaiter``: the kernel wakes the waiter when the holder lets go)
        until ``deadline``, then ``LockHeld``, as a ``BEGIN IMMEDIATE`` that waited as
        long. A gate whose ``flock`` fails otherwise (a file system without it) is given
        up, and SQLite's lock alone orders this store's writes."""
        fd = self._gate_fd()
        if fd is None or _fcntl is None:
            return
        waiter = self._gate_waiter
        if waiter is None:
            try:
                _fcntl.flock(fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB)
                self._gate_held = True
                return
            except BlockingIOError:
                pass
            except OSError:
                self._gate_failed()
                return
            try:
                waiter = self._gate_waiter = _GateWaiter(fd)
            except (OSError, RuntimeError):  # no descriptor or thread to spare: no gate
                self._gate_failed()
                return
        taken = waiter.take(fd, deadline)
        if taken is None:
            self._gate_failed()
        elif taken:
            self._gate_held = True
        else:
            raise LockHeld(
                f"{self._path}: another connection held the database for longer than "
                f"timeout={self._timeout}s (another writer of this memory holds its "
                f"lock, {self._path}{_GATE})"
            )

    def _gate_failed(self) -> None:
        self._close_gate()
        self._gate_off = True

    def _drop_gate(self) -> None:
        """Release the gate this process took (never through a descriptor inherited by a
        fork: unlocking it would release the parent's lock)."""
        held, self._gate_held = self._gate_held, False
        fd = self._gate
        if held and fd is not None and _fcntl is not None and self._gate_pid == os.getpid():
            with suppress(OSError):
                _fcntl.flock(fd, _fcntl.LOCK_UN)

    def _forget_gate(self) -> None:
        """The parent's gate descriptors closed in a forked child (``_forget_gates``): its
        waiter's thread did not survive the fork, and its lock is the parent's to release."""
        fds = [self._gate, getattr(self._gate_waiter, "_fd", None)]
        self._gate, self._gate_waiter, self._gate_held = None, None, False
        for fd in fds:
            if fd is not None:
                with suppress(OSError):
                    os.close(fd)

    def _close_gate(self) -> None:
        """Close the gate's descriptor. A forked child's copy is closed too: ``flock`` locks
        belong to the open file, which the parent's descriptor keeps (``flock(2)``)."""
        fd, self._gate = self._gate, None
        self._gate_held = False
        waiter, self._gate_waiter = self._gate_waiter, None
        if waiter is not None and self._gate_pid == os.getpid():  # a fork's copy has no thread
            waiter.stop()
        if fd is not None:
            with suppress(OSError):
                os.close(fd)

    @contextmanager
    def _write(self, *, savepoint: bool = True) -> Iterator[None]:
        """One write transaction (outermost) or a savepoint inside one (nested).
        ``savepoint=False``: a call whose one write is a single statement (atomic by
        itself) takes no savepoint when nested, two statements fewer inside the lock."""
        with self._lock:
            db = self._conn()
            if self._reading:
                raise InvalidArgument(f"{self._path}: a write inside snapshot(); use batch()")
            depth = self._depth
            marked = depth == 0 or savepoint
            with self._translate():
                if depth == 0:
                    self._begin(db)
                    self._changes_at_begin = db.total_changes
                elif marked:
                    db.execute(f"SAVEPOINT sp{depth}")
            self._depth = depth + 1
            try:
                yield
            except BaseException as exc:
                self._depth = depth
                try:
                    if depth == 0:
                        db.execute("ROLLBACK")
                    elif marked:
                        db.execute(f"ROLLBACK TO sp{depth}")
                        db.execute(f"RELEASE sp{depth}")
                except sqlite3.Error:
                    pass  # the original error says more; SQLite already rolled back
                if depth == 0:
                    self._end(db)
                if isinstance(exc, sqlite3.Error):
                    self._raise(exc)
                if isinstance(exc, UnicodeEncodeError):
                    raise self._not_text(exc) from None
                if isinstance(exc, UnicodeDecodeError):
                    raise self._not_utf8(exc) from exc
                raise
            self._depth = depth
            if depth:
                if marked:
                    with self._translate():
                        db.execute(f"RELEASE sp{depth}")
                return
            try:
                with self._translate():
                    try:
                        committed = None
                        if db.total_changes != self._changes_at_begin:
                            committed = int(
                                db.execute(
                                    "INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT(key)"
                                    " DO UPDATE SET value = CAST(value AS INTEGER) + 1"
                                    " RETURNING value",
                                    (REVISION_KEY,),
                                ).fetchall()[0][0]
                            )
                        db.execute("COMMIT")
                        self._committed = committed
                    except BaseException:
                        if db.in_transaction:
                            db.execute("ROLLBACK")
                        raise
            finally:
                self._end(db)
            if committed is not None:
                self._checkpoint_if_due(db)

    def _checkpoint_if_due(self, db: sqlite3.Connection) -> None:
        """After a commit: a passive checkpoint (it waits for no reader or writer) when the
        WAL has grown by ``_CHECKPOINT_FRAMES`` frames since this connection's last one, or
        to that many since the log restarted (a restart, or ``compact``, shrinks the file).
        One that fails is left to the next (the commit stands)."""
        if self._wal is None:
            return
        try:
            size = os.stat(self._wal).st_size
        except OSError:
            return
        frames = max(size - _WAL_HEADER, 0) // self._frame_bytes
        if frames < self._wal_mark:  # the log restarted since
            self._wal_mark = 0
        if frames < self._wal_mark + _CHECKPOINT_FRAMES:
            return
        self._wal_mark = frames
        with suppress(sqlite3.Error):
            db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock, self._translate():
            return list(self._conn().execute(sql, params).fetchall())

    # -- the protocol -----------------------------------------------------------------------
    @property
    def location(self) -> str:
        """The database file's absolute path (``:memory:`` for ``SQLiteStore.memory()``)."""
        return self._path

    def batch(self) -> AbstractContextManager[None]:
        """One transaction around the writes inside it: all or nothing. Nested batches are
        savepoints: an exception caught inside the outer batch undoes only the inner one.
        The calling thread holds the store until the batch ends."""
        return self._write()

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """A consistent read of several calls (one read transaction), without the write
        lock a ``batch()`` takes: other processes keep writing, this store sees none of it
        until the snapshot ends. Writes inside it are refused; inside a batch it is a no-op
        (the batch is consistent already)."""
        with self._lock:
            db = self._conn()
            if self._depth or self._reading:
                yield
                return
            with self._translate():
                db.execute("BEGIN DEFERRED")
            self._reading = True
            try:
                yield
            finally:
                self._reading = False
                with suppress(sqlite3.Error):
                    db.execute("ROLLBACK")  # read only: nothing to commit

    @property
    def committed_revision(self) -> int | None:
        """The revision this store object's last write transaction committed as; None when
        it changed nothing (or none has committed). A cache that read revision ``r`` inside
        the transaction and sees ``r + 1`` here knows no other write came in between."""
        with self._lock:
            return self._committed

    def revision(self) -> int:
        """The file's write counter: every committed transaction that changed a row bumps
        it, whichever process or store object made it (it lives in the file, unlike
        ``PRAGMA data_version``, which is per connection and blind to its own writes)."""
        rows = self._read("SELECT value FROM meta WHERE key = ?", (REVISION_KEY,))
        try:
            return int(rows[0][0]) if rows else 0
        except (TypeError, ValueError):
            raise damaged(
                self._path,
                f"meta key {REVISION_KEY!r}",
                "value",
                f"holds {rows[0][0]!r}, not a write count",
            ) from None

    def changes(self, since: int) -> Changes | None:
        """The nodes written and deleted after revision ``since`` (``MemoryStore.changes``),
        read in one snapshot from the ``changed`` stamps and the ``gone`` tombstones the
        triggers keep (schema version 4); None when ``since`` is below 0 (nothing read yet)."""
        if since < 0:
            return None
        with self.snapshot():
            # ``+id``: sorted after the search by ``changed`` (an ORDER BY the primary key
            # could use made SQLite walk every row in id order: a scan of the file per call)
            rows = self._read(
                f"SELECT {NODE_COLUMNS} FROM nodes WHERE changed > ? ORDER BY +id", (since,)
            )
            gone = self._read("SELECT id FROM gone WHERE changed > ? ORDER BY +id", (since,))
        return Changes([node_of(r, self._path) for r in rows], [str(r[0]) for r in gone])

    def match_changes(self, since: int) -> tuple[int, Changes | None]:
        """The file's revision (``revision()``) and, when ``since`` is not below 0, what
        ``changes(since)`` gives, with only what the merge rule compares of each node (its
        id, type, status, name, aliases, text and extra; ``MergeIndex``): its uri, sources,
        times and the rest are left empty, and not decoded. One statement reads all three,
        in one snapshot of its own: a writer reads the other writers' nodes this way inside
        its write lock, where every statement counts (and before it, where a snapshot's
        BEGIN and ROLLBACK would be two more). A value this store does not write is read
        as ``get`` reads it (``CorruptStore`` naming the node and the column)."""
        if since < 0:
            return self.revision(), None
        params = (REVISION_KEY, since, since)
        got = self._match(self._read(_MATCH_SQL, params), whole=False)
        if got is None:  # a value to read whole, or no revision stored: in one snapshot
            with self.snapshot():
                got = self._match(self._read(_MATCH_SQL, params), whole=True)
        assert got is not None
        return got

    def _match(self, rows: Sequence[Sequence[Any]], *, whole: bool) -> tuple[int, Changes] | None:
        """``match_changes`` from the rows of ``_MATCH_SQL``; None (unless ``whole``) where
        a row must be read again whole, or the revision by ``revision()``, which a caller
        does inside a snapshot with the same rows."""
        revision: int | None = None
        nodes: list[Node] = []
        gone: list[str] = []
        for row in rows:
            if row[0] == 0:
                revision = int(row[1])
            elif row[0] == 1:
                node = _matched(row[1:])
                if node is None:
                    if not whole:
                        return None
                    ident = row[1]
                    got = self._read(f"SELECT {NODE_COLUMNS} FROM nodes WHERE id = ?", (ident,))
                    node = node_of(got[0], self._path)  # what is damaged, named
                nodes.append(node)
            else:
                gone.append(str(row[1]))
        if revision is None:  # no write yet, or not the number a write stores
            if not whole:
                return None
            revision = self.revision()  # (which names the damage)
        nodes.sort(key=lambda n: n.id)
        gone.sort()
        return revision, Changes(nodes, gone)

    def put(self, node: Node) -> Node:
        """Insert or replace ``node`` (see ``MemoryStore.put``). A replace keeps the node's
        ``created_at`` and its edges; a ``uri`` held by another node is refused with
        ``InvalidArgument`` (uris are the import dedupe key: two nodes never share one)."""
        check_node(node)
        # no savepoint for a new node: its one write is one statement; a replace may
        # write twice (the row, its vectors) and takes one
        with self._write(savepoint=False):
            db = self._conn()
            node_id = node.id
            if not node_id:
                return self._insert_new(db, node)
            old = db.execute(
                f"SELECT created_at, {', '.join(INDEXED)} FROM nodes WHERE id = ?",
                (node_id,),
            ).fetchone()
            uri = node.uri or _node_uri(node.type, node_id)
            holder = db.execute("SELECT id FROM nodes WHERE uri = ?", (uri,)).fetchone()
            if holder is not None and holder[0] != node_id:
                raise InvalidArgument(f"uri {uri!r} is already node {holder[0]!r}")
            now = now_stamp()
            created = old[0] if old is not None else (node.created_at or now)
            stored = stamped(node, node_id, uri, created, now)
            columns = node_columns(stored)
            # a replace inside a caller's batch: its two writes in a savepoint of their own
            with self._write() if old is not None and self._depth > 1 else nullcontext():
                self._upsert(db, old, node_id, columns)
        return stored

    def prepared(self, node: Node) -> PreparedNode:
        """A new node (no id) checked as ``put`` checks it and its row built, ahead of the
        write that inserts it (``put_prepared``): a caller builds it before it takes the
        write lock, which is then held for the id, the times and the statement alone. A
        node ``put`` would refuse is refused here, with the same error."""
        if node.id:
            raise InvalidArgument("prepared() takes a new node (no id); put() replaces one")
        check_node(node)
        return PreparedNode(node, node_columns(node))

    def put_prepared(self, prepared: PreparedNode) -> Node:
        """``put(node)`` of the node ``prepared`` checked and encoded (the same row, id,
        uri and times, the same refusals). Returns the node as stored, as ``put`` does."""
        with self._write(savepoint=False):  # one statement, as a new node's put
            return self._insert_new(self._conn(), prepared.node, prepared.columns)

    def _insert_new(
        self,
        db: sqlite3.Connection,
        node: Node,
        encoded: Mapping[str, Any] | None = None,
    ) -> Node:
        """A node without an id, inserted with a new one: one statement, whose unique
        indexes check the id and the uri (a drawn id some node holds, 2**-32, is drawn
        again; a uri another node holds is ``InvalidArgument``). A refused statement
        leaves nothing written (SQLite rolls the statement back, triggers and all).
        ``encoded``: the node's row as ``node_columns`` built it (``prepared``); its id,
        uri and times are set here."""
        while True:
            node_id = new_node_id()
            uri = node.uri or _node_uri(node.type, node_id)
            now = now_stamp()
            stored = stamped(node, node_id, uri, node.created_at or now, now)
            if encoded is None:
                columns = node_columns(stored)
            else:
                columns = {
                    **encoded,
                    "id": node_id,
                    "uri": uri,
                    "created_at": stored.created_at,
                    "updated_at": now,
                }
            try:
                db.execute(
                    f"INSERT INTO nodes ({NODE_COLUMNS}) VALUES ({', '.join('?' * 15)})",
                    tuple(columns[c] for c in NODE_ORDER),
                )
                return stored
            except sqlite3.IntegrityError:
                if db.execute("SELECT 1 FROM nodes WHERE id = ?", (node_id,)).fetchone():
                    continue  # the id is taken: another one
                holder = db.execute("SELECT id FROM nodes WHERE uri = ?", (uri,)).fetchone()
                if holder is not None:
                    raise InvalidArgument(f"uri {uri!r} is already node {holder[0]!r}") from None
                raise

    def _upsert(
        self, db: sqlite3.Connection, old: Any, node_id: str, columns: Mapping[str, Any]
    ) -> None:
        """The row of a put, and (a replace that changed what is embedded) its vectors.
        An upsert, not INSERT OR REPLACE: REPLACE deletes the row first, and the ON DELETE
        CASCADE would take the node's edges with it."""
        db.execute(
            f"INSERT INTO nodes ({NODE_COLUMNS}) VALUES ({', '.join('?' * 15)}) "
            "ON CONFLICT(id) DO UPDATE SET type=excluded.type, name=excluded.name, "
            "text=excluded.text, aliases=excluded.aliases, uri=excluded.uri, "
            "sources=excluded.sources, until=excluded.until, until_at=excluded.until_at, "
            "fail=excluded.fail, fix=excluded.fix, status=excluded.status, "
            "updated_at=excluded.updated_at, extra=excluded.extra",
            tuple(columns[c] for c in NODE_ORDER),
        )
        if old is not None and tuple(old[1:]) != tuple(columns[c] for c in INDEXED):
            db.execute("DELETE FROM vectors WHERE node = ?", (node_id,))

    def put_many(self, nodes: Sequence[Node]) -> list[Node]:
        """``[put(n) for n in nodes]`` in one transaction (``BatchStore``). New nodes (no
        id) are inserted with one prepared statement for all of them, their ids drawn
        together; a node with an id goes through ``put``. Every node is checked before
        anything is written; a taken uri is ``InvalidArgument`` and nothing of the call is
        kept."""
        nodes = list(nodes)
        for node in nodes:
            check_node(node)
        if not nodes:
            return []
        if not any(n.id for n in nodes):
            # The unique indexes check the drawn ids and the uris as the rows go in; a row
            # they refuse (another process's id, 2**-32; a taken uri) undoes the insert, and
            # the write runs again with the checks made first, which says what was wrong.
            try:
                with self._write():
                    return self._insert_many(self._conn(), nodes)
            except _Refused:
                pass
        with self._write():
            if any(n.id for n in nodes):
                return [self.put(n) for n in nodes]
            return self._insert_many(self._conn(), nodes, checked=True)

    def _insert_many(
        self, db: sqlite3.Connection, nodes: Sequence[Node], *, checked: bool = False
    ) -> list[Node]:
        """New ``nodes`` (checked, no ids) inserted with new ids in one ``executemany``.
        ``checked``: the ids and uris are looked up first (an id some node holds is drawn
        again, a uri given twice or taken is ``InvalidArgument``); otherwise a row the
        unique indexes refuse is ``_Refused`` (the caller's ``_write`` undoes the rows
        before it)."""
        ids = new_node_ids(len(nodes))
        if checked:
            while taken := self._present(db, "id", ids):  # another process's id (2**-32)
                ids = [new_node_id() if i in taken else i for i in ids]
        uris = [n.uri or _node_uri(n.type, i) for n, i in zip(nodes, ids, strict=True)]
        if checked:
            twice = next((u for u, k in _counts(uris).items() if k > 1), None)
            if twice is not None:
                raise InvalidArgument(f"uri {twice!r} is given to two new nodes")
            held = self._present(db, "uri", uris)
            if held:
                uri = next(u for u in uris if u in held)
                holder = db.execute("SELECT id FROM nodes WHERE uri = ?", (uri,)).fetchone()
                raise InvalidArgument(f"uri {uri!r} is already node {holder[0]!r}")
        now = now_stamp()
        stored: list[Node] = []
        rows: list[tuple[Any, ...]] = []
        for node, node_id, uri in zip(nodes, ids, uris, strict=True):
            kept, row = new_row(node, node_id, uri, now)
            stored.append(kept)
            rows.append(row)
        try:
            db.executemany(_INSERT_NODE, rows)
        except sqlite3.IntegrityError:
            if checked:
                raise
            raise _Refused from None
        return stored

    def _present(self, db: sqlite3.Connection, column: str, values: Sequence[str]) -> set[str]:
        """The ``values`` some node holds in ``column`` (``id`` or ``uri``, both indexed)."""
        found: set[str] = set()
        wanted = sorted(set(values))
        for at in range(0, len(wanted), 500):  # under SQLite's bound-parameter limit
            chunk = wanted[at : at + 500]
            sql = f"SELECT {column} FROM nodes WHERE {column} IN ({', '.join('?' * len(chunk))})"
            found.update(str(r[0]) for r in db.execute(sql, chunk))
        return found

    def by_ids(self, ids: Iterable[str]) -> dict[str, Node]:
        """The nodes of ``ids`` that exist, by id: ``get`` of each, in one statement (one
        per 500 ids)."""
        wanted = sorted(set(ids))
        out: dict[str, Node] = {}
        for at in range(0, len(wanted), 500):  # under SQLite's bound-parameter limit
            chunk = wanted[at : at + 500]
            marks = ", ".join("?" * len(chunk))
            for row in self._read(f"SELECT {NODE_COLUMNS} FROM nodes WHERE id IN ({marks})", chunk):
                node = node_of(row, self._path)
                out[node.id] = node
        return out

    def by_uris(self, uris: Iterable[str]) -> dict[str, Node]:
        """The nodes holding ``uris``, by uri, read in a few queries (``BatchStore``)."""
        wanted = sorted(set(uris))
        out: dict[str, Node] = {}
        for at in range(0, len(wanted), 500):
            chunk = wanted[at : at + 500]
            sql = f"SELECT {NODE_COLUMNS} FROM nodes WHERE uri IN ({', '.join('?' * len(chunk))})"
            for row in self._read(sql, chunk):
                node = node_of(row, self._path)
                out[node.uri] = node
        return out

    def link_many(self, edges: Sequence[Edge]) -> int:
        """``link`` each edge in one transaction with one prepared statement (``BatchStore``);
        how many were new. Every edge is checked first (its label, weight and both ends:
        ``NotFound`` for a missing one, nothing written)."""
        edges = list(edges)
        for edge in edges:
            if edge.label not in EDGE_LABELS:
                raise InvalidArgument(
                    f"unknown edge label {edge.label!r}; known: {', '.join(EDGE_LABELS)}"
                )
            if not math.isfinite(edge.weight):
                raise InvalidArgument(f"an edge weight is a finite number, not {edge.weight!r}")
        if not edges:
            return 0
        with self._write(savepoint=False):  # one statement
            db = self._conn()
            ends = {x for e in edges for x in (e.src, e.dst)}
            missing = ends - self._present(db, "id", sorted(ends))
            if missing:
                first = next(x for e in edges for x in (e.src, e.dst) if x in missing)
                raise NotFound(f"{self._path}: no node {first!r} to link")
            now = now_stamp()
            cur = db.executemany(
                "INSERT INTO edges (src, dst, label, weight, created_at) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT(src, dst, label) DO NOTHING",
                [(e.src, e.dst, e.label, float(e.weight), e.created_at or now) for e in edges],
            )
            return max(cur.rowcount, 0)

    def get(self, node_id: str) -> Node | None:
        rows = self._read(f"SELECT {NODE_COLUMNS} FROM nodes WHERE id = ?", (node_id,))
        return node_of(rows[0], self._path) if rows else None

    def by_uri(self, uri: str) -> Node | None:
        rows = self._read(f"SELECT {NODE_COLUMNS} FROM nodes WHERE uri = ?", (uri,))
        return node_of(rows[0], self._path) if rows else None

    def nodes(
        self, *, types: Iterable[str] | None = None, include_archived: bool = False
    ) -> list[Node]:
        """Nodes in id order (creation order for generated ids)."""
        where = _Where()
        if not where.any_of("type", types):
            return []
        if not include_archived:
            where.clauses.append("status = 'active'")
        sql = where.select(f"SELECT {NODE_COLUMNS} FROM nodes") + " ORDER BY id"
        return [node_of(r, self._path) for r in self._read(sql, where.params)]

    def count(self, *, include_archived: bool = False) -> dict[str, int]:
        """Nodes per type, every type listed (0 when there is none), in ``NODE_TYPES`` order."""
        sql = "SELECT type, count(*) FROM nodes"
        if not include_archived:
            sql += " WHERE status = 'active'"
        got = {r[0]: int(r[1]) for r in self._read(sql + " GROUP BY type")}
        odd = [t for t in got if not isinstance(t, str)]
        if odd:
            rows = self._read("SELECT id FROM nodes WHERE typeof(type) != 'text' LIMIT 1")
            who = f"node {rows[0][0]!r}" if rows else "a node"
            raise damaged(self._path, who, "type", f"holds {kind_of(odd[0])}, not text")
        return {t: got.get(t, 0) for t in (*NODE_TYPES, *sorted(set(got) - set(NODE_TYPES)))}

    def delete(self, node_id: str) -> bool:
        """Remove a node for good, and (ON DELETE CASCADE) every edge into or out of it;
        False when there is no such node. ``status="archived"`` is the soft delete."""
        with self._write():
            return self._conn().execute("DELETE FROM nodes WHERE id = ?", (node_id,)).rowcount > 0

    def link(self, edge: Edge) -> bool:
        """Add ``edge`` (its ``created_at`` stamped when empty); False when the same
        src/dst/label exists (the stored edge is kept as it was). Both ends must exist."""
        if edge.label not in EDGE_LABELS:
            raise InvalidArgument(
                f"unknown edge label {edge.label!r}; known: {', '.join(EDGE_LABELS)}"
            )
        if not math.isfinite(edge.weight):
            raise InvalidArgument(f"an edge weight is a finite number, not {edge.weight!r}")
        with self._write(savepoint=False):  # one write, one statement
            db = self._conn()
            try:  # both ends are checked by the foreign keys (on for every connection)
                cur = db.execute(
                    "INSERT INTO edges (src, dst, label, weight, created_at)"
                    " VALUES (?, ?, ?, ?, ?) ON CONFLICT(src, dst, label) DO NOTHING",
                    (
                        edge.src,
                        edge.dst,
                        edge.label,
                        float(edge.weight),
                        edge.created_at or now_stamp(),
                    ),
                )
            except sqlite3.IntegrityError:
                for end in dict.fromkeys((edge.src, edge.dst)):
                    if db.execute("SELECT 1 FROM nodes WHERE id = ?", (end,)).fetchone() is None:
                        raise NotFound(f"{self._path}: no node {end!r} to link") from None
                raise
            return cur.rowcount > 0

    def unlink(self, src: str, dst: str, label: str) -> bool:
        """Remove one edge; False when there was none."""
        with self._write():
            cur = self._conn().execute(
                "DELETE FROM edges WHERE src = ? AND dst = ? AND label = ?", (src, dst, label)
            )
            return cur.rowcount > 0

    def edges(
        self,
        *,
        src: str | None = None,
        dst: str | None = None,
        labels: Sequence[str] | None = None,
    ) -> list[Edge]:
        """Edges in (src, dst, label) order."""
        where = _Where()
        where.equals("src", src)
        where.equals("dst", dst)
        if not where.any_of("label", labels):
            return []
        sql = where.select("SELECT src, dst, label, weight, created_at FROM edges")
        rows = self._read(sql + " ORDER BY src, dst, label", where.params)
        return [edge_of(r, self._path) for r in rows]

    def edges_touching(self, ids: Iterable[str]) -> list[Edge]:
        """Every edge into or out of any node in ``ids``, in (src, dst, label) order."""
        wanted = sorted(set(ids))
        found: dict[tuple[str, str, str], Edge] = {}
        for i in range(0, len(wanted), 400):  # under SQLite's bound-parameter limit
            chunk = wanted[i : i + 400]
            marks = ", ".join("?" * len(chunk))
            rows = self._read(
                "SELECT src, dst, label, weight, created_at FROM edges "
                f"WHERE src IN ({marks}) OR dst IN ({marks})",
                (*chunk, *chunk),
            )
            for r in rows:
                e = edge_of(r, self._path)
                found[(e.src, e.dst, e.label)] = e
        return [found[k] for k in sorted(found)]

    def get_meta(self, key: str) -> Any:
        """The JSON value under ``key``; None when there is none."""
        rows = self._read("SELECT value FROM meta WHERE key = ?", (key,))
        if not rows:
            return None
        return load_json(
            rows[0][0], lambda why: damaged(self._path, f"meta key {key!r}", "value", why)
        )

    def set_meta(self, key: str, value: Any) -> None:
        """Store ``value`` (JSON) under ``key``; None deletes it."""
        check_meta_key(key)
        with self._write(savepoint=False):  # one statement
            db = self._conn()
            if value is None:
                db.execute("DELETE FROM meta WHERE key = ?", (key,))
            else:
                db.execute(
                    "INSERT INTO meta (key, value) VALUES (?, ?)"
                    " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    (key, dumps_value(value, f"meta value for {key!r}")),
                )

    # -- embeddings: one vector per node and embedder, keyed by the text's hash ----------
    def vectors(self, model: str, ids: Iterable[str] | None = None) -> dict[str, tuple[str, bytes]]:
        """The stored embeddings of ``model``: node id -> (text hash, float32 bytes), for
        ``ids`` (every node with one when None). A caller checks the hash against the text
        it would embed: a vector of another text is not one to use."""
        out: dict[str, tuple[str, bytes]] = {}
        sql = "SELECT node, hash, vector FROM vectors WHERE model = ?"
        chunks: list[list[str]] = [[]] if ids is None else []
        if ids is not None:
            wanted = sorted(set(ids))
            chunks = [wanted[i : i + 500] for i in range(0, len(wanted), 500)]
        for chunk in chunks:
            where = f" AND node IN ({', '.join('?' * len(chunk))})" if chunk else ""
            for row in self._read(sql + where, (model, *chunk)):
                node, digest, blob = row[0], row[1], row[2]
                if isinstance(node, str) and isinstance(digest, str) and isinstance(blob, bytes):
                    out[node] = (digest, blob)  # anything else is ignored and re-embedded
        return out

    def put_vectors(self, model: str, rows: Iterable[tuple[str, str, bytes]]) -> int:
        """Store ``(node id, text hash, float32 bytes)`` rows for ``model`` in one
        transaction (each replaces the node's earlier vector of that model); a row for a
        node that no longer exists is skipped. Returns how many were written."""
        check_model(model)
        written = 0
        with self._write():
            db = self._conn()
            for node_id, digest, blob in rows:
                cur = db.execute(
                    "INSERT INTO vectors (node, model, hash, vector) "
                    "SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM nodes WHERE id = ?) "
                    "ON CONFLICT(node, model) DO UPDATE SET hash = excluded.hash, "
                    "vector = excluded.vector",
                    (node_id, model, digest, bytes(blob), node_id),
                )
                written += cur.rowcount
        return written

    # -- maintenance: raw rows, exact updates, compaction (``Memory.scrub``) ----------------
    @property
    def in_batch(self) -> bool:
        """Whether this store object is inside a ``batch()`` or ``snapshot()`` (where
        ``compact`` is refused: VACUUM cannot run in a transaction)."""
        with self._lock:
            return bool(self._depth or self._reading)

    def rows(self, table: str) -> list[dict[str, Any]]:
        """Every row of ``table`` (``nodes``, ``edges`` or ``meta``) as stored, column by
        column, for maintenance that must see every value (``Memory.scrub``); the engine
        reads through ``nodes()`` and ``edges()``. JSON columns (``aliases``, ``sources``,
        ``extra``, a meta ``value``) are decoded, nothing else is interpreted: an unknown key
        in a source is kept. The store's own revision counter is left out of ``meta``. A
        value that is not text where text belongs is ``CorruptStore`` naming it."""
        if table not in MAINTAINED:
            raise InvalidArgument(f"rows() reads nodes, edges or meta, not {table!r}")
        key = MAINTAINED[table][0]
        columns = sorted(COLUMNS[table])
        sql = f"SELECT {', '.join(columns)} FROM {table}"
        if table == "meta":
            sql += " WHERE key != ?"
        params = (REVISION_KEY,) if table == "meta" else ()
        rows = self._read(sql + f" ORDER BY {', '.join(key)}", params)
        return [stored_row(table, row, columns, self._path) for row in rows]

    def update(self, table: str, key: Sequence[str], values: Mapping[str, Any]) -> None:
        """Set ``values`` (column -> value) in the row of ``table`` whose key is ``key`` (a
        node's ``(id,)``, an edge's ``(src, dst, label)``, a meta ``(key,)``), exactly: no
        time is stamped, JSON columns are encoded, a meta key may be renamed. Only text
        columns (and a node's ``status``) are written. The old value's bytes are overwritten
        in the page (``secure_delete`` for the statement), not left in its free space.
        ``NotFound`` when there is no such row; a taken ``uri`` or meta key is ``WriteError``
        (the batch rolls back)."""
        params = update_params(table, key, values)
        names = MAINTAINED[table][0]
        if not values:
            return
        sets = ", ".join(f"{c} = ?" for c in values)
        where = " AND ".join(f"{k} = ?" for k in names)
        with self._write():
            db = self._conn()
            before = db.execute("PRAGMA secure_delete").fetchone()[0]
            db.execute("PRAGMA secure_delete = ON")
            try:
                cur = db.execute(f"UPDATE {table} SET {sets} WHERE {where}", (*params, *key))
            finally:
                db.execute(f"PRAGMA secure_delete = {int(before)}")
            if cur.rowcount == 0:
                raise NotFound(f"{self._path}: no {table} row {tuple(key)!r} to update")
            if table == "nodes" and set(values) & set(INDEXED):
                db.execute("DELETE FROM vectors WHERE node = ?", (key[0],))

    def load(self, table: str, rows: Iterable[Mapping[str, Any]]) -> int:
        """Write ``rows`` of ``table`` (``nodes``, ``edges`` or ``meta``) as ``rows(table)``
        returns them, exactly: ids, uris, sources, status and times as given, nothing
        stamped (a copy or a restore; ``copy_memory``). Every row is checked before the
        write starts (``loadable``). New rows only: one that would replace a row here (a
        node's id or uri, an edge's src/dst/label, a meta key) is ``InvalidArgument``, an
        edge whose end is not here ``NotFound``; all in one transaction (or the caller's
        batch), so a refused row leaves none written. Returns how many were written."""
        checked = [loadable(table, row, self._path) for row in rows]
        if not checked:
            return 0
        columns = sorted(COLUMNS[table])
        sql = (
            f"INSERT INTO {table} ({', '.join(columns)}) "
            f"VALUES ({', '.join('?' * len(columns))}) ON CONFLICT DO NOTHING"
        )
        with self._write():
            db = self._conn()
            for row in checked:
                if table == "edges":
                    for end in dict.fromkeys((row["src"], row["dst"])):
                        if not db.execute("SELECT 1 FROM nodes WHERE id = ?", (end,)).fetchone():
                            raise NotFound(f"{self._path}: no node {end!r} to load an edge to")
                if db.execute(sql, [row[c] for c in columns]).rowcount == 0:
                    raise InvalidArgument(f"{self._path}: load() {self._taken(table, row)}")
        return len(checked)

    def _taken(self, table: str, row: Mapping[str, Any]) -> str:
        """What a loaded row would have replaced, in words."""

        def node_with(column: str, value: str) -> str | None:
            got = self._read(f"SELECT id FROM nodes WHERE {column} = ?", (value,))
            return str(got[0][0]) if got else None

        return taken(table, row, node_with)

    def compact(self) -> bool:
        """Rewrite the database file without its free space and empty its WAL, so bytes no
        row holds any more (an overwritten value, a deleted row) are gone from both: a
        checkpoint, ``VACUUM`` (with ``secure_delete`` on) and a checkpoint that truncates
        the WAL to zero bytes. It waits up to ``timeout`` for other connections; False when
        one still reads from the WAL (its old frames may stay until it closes and the file
        is compacted again). Refused inside a batch or snapshot (``in_batch``)."""
        with self._lock:
            db = self._conn()
            if self._depth or self._reading:
                raise InvalidArgument(
                    f"{self._path}: compact() inside a batch or snapshot; VACUUM needs none open"
                )
            with self._translate():
                before = db.execute("PRAGMA secure_delete").fetchone()[0]
                db.execute("PRAGMA secure_delete = ON")
                db.execute("PRAGMA temp_store = DEFAULT")  # VACUUM's copy in a file
                try:
                    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                    db.execute("VACUUM")
                    busy = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
                finally:
                    db.execute(f"PRAGMA secure_delete = {int(before)}")
                    db.execute(f"PRAGMA temp_store = {_TEMP_STORE}")
            return not busy

    def integrity_check(self) -> list[str]:
        """SQLite's ``PRAGMA integrity_check``: ``["ok"]`` for a sound file, else the
        problems it found (a whole-file scan: for repair tools and tests, not every open)."""
        return [str(r[0]) for r in self._read("PRAGMA integrity_check")]

    def close(self) -> None:
        """Close the connection (idempotent). Refused inside a batch: it would drop it."""
        with self._lock:
            if self._db is None:
                return
            if self._depth or self._reading:
                raise InvalidArgument(f"{self._path}: close() inside a batch or snapshot")
            self._db.close()
            self._db = None
            self._close_gate()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SQLiteStore({self._path!r})"


class _Where:
    """A WHERE clause built from optional filters, with its parameters in order."""

    def __init__(self) -> None:
        self.clauses: list[str] = []
        self.params: list[Any] = []

    def equals(self, column: str, value: object | None) -> None:
        """``column = value``, unless ``value`` is None (no filter)."""
        if value is not None:
            self.clauses.append(f"{column} = ?")
            self.params.append(value)

    def any_of(self, column: str, values: Iterable[str] | None) -> bool:
        """``column IN (values)``, unless ``values`` is None; False when it is empty (a
        filter nothing passes, so the query need not run)."""
        if values is None:
            return True
        wanted = sorted(set(values))
        self.clauses.append(f"{column} IN ({', '.join('?' * len(wanted))})")
        self.params.extend(wanted)
        return bool(wanted)

    def select(self, sql: str) -> str:
        return f"{sql} WHERE {' AND '.join(self.clauses)}" if self.clauses else sql
