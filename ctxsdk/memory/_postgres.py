"""``PostgresStore``: a team's memory in one PostgreSQL database, namespaces kept apart by
the database itself.

Every row of every data table (``nodes``, ``edges``, ``meta``, ``vectors``, ``revisions``,
in the schema ``ctxsdk``) carries its namespace, and row-level security lets a database
role see only the rows of the namespaces it may use: those whose role (in
``ctxsdk.namespaces``) it is a member of. That holds for any SQL the role runs, not only
for this code's ``WHERE namespace = ...``. A member holds no table privilege but SELECT:
reads are plain queries, and every write calls a function that runs as the schema's owner
and first checks that the login role may use the namespace (``_pg_functions``). The tables'
owner (whoever created the schema, the administrator) and superusers are exempt from every
policy, as PostgreSQL exempts them: team members connect as their own login roles
(``_pg_schema.create_namespace``).

Writes: each call is a transaction, ``batch()`` makes one of many calls (nested batches are
savepoints), and the outermost one first locks its namespace's ``revisions`` row
(``ctxsdk.write_lock``), so writers to one namespace queue as SQLite's writers do (up to
``timeout``, then ``LockHeld``) and a writer to another namespace does not wait for them.
Nor can a member's own SQL make it wait: SELECT allows no ``LOCK TABLE`` but ACCESS SHARE,
which blocks no writer, and no row lock. ``revision()`` is that row's counter, bumped in the
same transaction as the write it counts; triggers stamp each node written with the revision
its transaction commits as and keep a tombstone of each one deleted, which ``changes(since)``
reads. The lexical search index (schema version 5: ``lexical_state``, ``write_lexical``) is a
cache of the nodes any client catches up from that feed; it has its own lock, and writing it
changes no revision. A server that goes away mid-batch rolls the batch
back whole (``StoreUnavailable``); a read outside a batch is tried again once on a fresh
connection, and a write outside one commits once or not at all. Every
connection handed out is checked first: after a restart the dead ones are dropped at once,
and the same object goes on. Text and JSON are stored exactly as ``SQLiteStore`` stores them
(``_rows``), so the two give the same nodes, in the same order (``COLLATE "C"``: byte order,
as SQLite).

The one difference: PostgreSQL text cannot hold a NUL character (U+0000), which SQLite
stores. A write of one in a text column (a node's name, text, id..., a meta key) is
``InvalidArgument`` naming the field, refused before anything is written; inside JSON
(aliases, sources, extra, meta values) it is escaped and kept, and a read by a key holding
one finds nothing, as on SQLite.
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from ..errors import (
    InvalidArgument,
    LockHeld,
    NamespaceDenied,
    NotFound,
    StoreError,
    StoreUnavailable,
    WriteError,
)
from ._index_doc import LexicalMatch, LexicalRanking
from ._model import EDGE_LABELS, NODE_TYPES, Edge, Node
from ._model import node_uri as _node_uri
from ._pg_lexical import MARKED_SQL, MATCHES_SQL, MEMBERS_SQL, PRUNED_SQL
from ._pg_schema import SCHEMA, create_namespace, ensure_namespace, migrate, public_location
from ._rows import (
    COLUMNS,
    INDEXED,
    MAINTAINED,
    NODE_COLUMNS,
    NODE_ORDER,
    check_meta_key,
    check_model,
    check_node,
    dumps_value,
    edge_of,
    failing,
    load_json,
    loadable,
    new_node_id,
    node_columns,
    node_of,
    now_stamp,
    stamped,
    stored_row,
    taken,
    update_params,
)
from ._store import Changes

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

    from ._index_doc import LexicalRow

__all__ = ["PostgresStore", "is_postgres_url"]

_T = TypeVar("_T")
_C = 'COLLATE "C"'  # byte order, as SQLite compares text
_LEXICAL_SETTINGS = ("k1", "b", "coordination", "boost", "share", "section_boost")
_MARKED = MARKED_SQL.replace("{columns}", ", ".join(f"n.{c}" for c in NODE_ORDER))
# A node's plain text columns, checked for NUL before a write (JSON ones escape it).
_TEXT_FIELDS = ("id", "name", "text", "uri", "until", "until_at", "fail", "fix", "created_at")
# ctxsdk.write_node's columns, in its order (after ns and p_fresh).
_NODE_MARKS = ", ".join("%s" for _ in NODE_ORDER)


def is_postgres_url(path: object) -> bool:
    """Whether ``path`` names a PostgreSQL database (a ``postgresql://`` URL) rather than
    a memory file."""
    return isinstance(path, str) and path.startswith(("postgresql://", "postgres://"))


@dataclass
class _Held:
    """The connection a thread's open batch or snapshot runs on."""

    conn: psycopg.Connection[Any]
    reading: bool = False
    depth: int = 0
    changed: bool = False


def _no_nul(value: str, what: str) -> str:
    """PostgreSQL text cannot hold U+0000 (SQLite can): refused before the write starts."""
    if "\x00" in value:
        raise InvalidArgument(f"{what} holds a NUL character (U+0000), which is not text here")
    return value


class PostgresStore:
    """A ``MemoryStore`` in a PostgreSQL database, one namespace of it (see the module docs).

    ``dsn`` is a ``postgresql://`` URL (or a libpq ``key=value`` string), or a
    ``psycopg_pool.ConnectionPool`` the caller owns (it is not closed here). Threads may
    share one object: each thread's batch holds its own connection. ``create=True`` makes
    the schema (when the role may) and the namespace (private to the connecting role) when
    they are missing; ``timeout`` bounds the wait for a connection and for a lock.
    """

    def __init__(
        self,
        dsn: str | ConnectionPool,
        *,
        namespace: str = "default",
        create: bool = True,
        timeout: float = 30.0,
        pool_size: int = 4,
    ) -> None:
        try:
            import psycopg_pool
        except ImportError:  # an optional dependency
            raise InvalidArgument(
                "a PostgreSQL memory needs psycopg: pip install 'ctxsdk[postgres]'"
            ) from None
        if not isinstance(namespace, str) or not namespace.strip() or len(namespace) > 200:
            raise InvalidArgument(f"a namespace is a non-empty name, not {namespace!r}")
        _no_nul(namespace, "the namespace")
        if timeout < 0:
            raise InvalidArgument(f"timeout must be >= 0, not {timeout!r}")
        if pool_size < 1:
            raise InvalidArgument(f"pool_size must be >= 1, not {pool_size!r}")
        self.namespace = namespace
        self._timeout = float(timeout)
        # A pool refuses any wait <= 0, even with a connection ready; a connect takes time.
        self._connect_wait = max(self._timeout, 1.0)
        self._local = threading.local()
        self._closed = False
        if isinstance(dsn, str):
            self._where = public_location(dsn)
            self._owns_pool = True
            self._pool: ConnectionPool = psycopg_pool.ConnectionPool(
                dsn,
                kwargs=_connect_options(dsn, self._connect_wait),
                min_size=1,
                max_size=pool_size,
                open=False,
                timeout=self._connect_wait,
                configure=self._configure,
                name="ctxsdk-memory",
            )  # no check=: _live_connection checks each connection it hands out
            try:
                self._pool.open(wait=True, timeout=self._connect_wait)
                opened = True
            except psycopg_pool.PoolTimeout:
                opened = False
            if not opened:  # raised here, so no error chained to it quotes the DSN
                self._pool.close(timeout=1.0)
                raise StoreUnavailable(
                    f"{self._where}: no connection to the server within {self._connect_wait}s"
                    f" ({_why_not(dsn)})",
                    path=self._where,
                )
        elif isinstance(dsn, psycopg_pool.ConnectionPool):
            conninfo = dsn.conninfo
            self._where = public_location(conninfo if isinstance(conninfo, str) else conninfo())
            self._owns_pool = False
            self._pool = dsn
        else:
            raise InvalidArgument(
                f"PostgresStore takes a DSN or a psycopg ConnectionPool, not {type(dsn).__name__}"
            )
        self._where = f"{self._where}#{namespace}"
        try:
            with self._connection() as conn:
                migrate(conn, where=self._where, create=create)
                ensure_namespace(conn, namespace, where=self._where, create=create)
        except BaseException:
            self.close()
            raise

    # -- administration (as the schema's owner) ---------------------------------------------
    @staticmethod
    def init_schema(dsn: str) -> int:
        """Create the ``ctxsdk`` schema in ``dsn``'s database, or migrate it forward (as the
        role that will own it: the administrator); returns the schema version it found (0:
        none). ``ctxsdk memory DSN init`` runs this."""
        with _admin(dsn) as (conn, where):
            return migrate(conn, where=where, create=True)

    @staticmethod
    def create_namespace(dsn: str, namespace: str, *, role: str | None = None) -> None:
        """As the schema's owner: make ``namespace`` usable by the members of database role
        ``role`` (created ``NOLOGIN`` when missing, given the table grants it needs); with no
        role, by every role granted the tables. ``ctxsdk memory DSN namespace NAME --role
        ROLE`` runs this; login roles join with ``GRANT role TO alice``."""
        if not isinstance(namespace, str) or not namespace.strip() or len(namespace) > 200:
            raise InvalidArgument(f"a namespace is a non-empty name, not {namespace!r}")
        with _admin(dsn) as (conn, where):
            create_namespace(conn, namespace, role=role, where=where)

    # -- plumbing ---------------------------------------------------------------------------
    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        """Every pooled connection: autocommit (we open transactions ourselves) and a lock
        wait bounded by ``timeout``."""
        conn.autocommit = True
        conn.execute(f"SET lock_timeout = {self._lock_ms}")

    @property
    def _lock_ms(self) -> int:
        """``lock_timeout`` in ms: 0 there means wait for ever, so timeout=0 is 1 ms."""
        return max(1, int(self._timeout * 1000))

    def _held(self) -> _Held | None:
        held: _Held | None = getattr(self._local, "held", None)
        return held

    @contextmanager
    def _connection(self, *, checked: bool = True) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection for one call: checked first (a round trip) unless the
        caller retries on a lost one itself (a read)."""
        if self._closed:
            raise InvalidArgument(f"{self._where}: the memory store is closed")
        with self._translate():
            conn = (
                self._live_connection()
                if checked
                else self._pool.getconn(timeout=self._connect_wait)
            )
            try:
                with conn:  # the pool's own exit: a transaction left open is rolled back
                    yield conn
            finally:
                self._pool.putconn(conn)

    def _live_connection(self) -> psycopg.Connection[Any]:
        """A pooled connection that answers. After a restart every idle one is dead: each
        is tried (an empty query) and dropped (the pool replaces it) at once, where the
        pool's own check would sleep 1, 2, 4... seconds between them."""
        import time

        import psycopg
        from psycopg_pool import ConnectionPool

        deadline = time.monotonic() + self._connect_wait
        while True:
            conn = self._pool.getconn(timeout=max(deadline - time.monotonic(), 0.001))
            try:
                ConnectionPool.check_connection(conn)
            except psycopg.Error:
                self._pool.putconn(conn)  # broken: discarded, and a new one is made
                if time.monotonic() >= deadline:
                    raise
                continue
            return conn

    def _raise(self, exc: Exception) -> NoReturn:
        """Turn a psycopg error into the ctxsdk error a caller can act on."""
        import psycopg
        from psycopg import errors as pe

        where = self._where
        if isinstance(exc, pe.LockNotAvailable):
            raise LockHeld(
                f"{where}: another writer held the namespace for longer than "
                f"timeout={self._timeout}s"
            ) from None
        if isinstance(exc, pe.InsufficientPrivilege):
            raise NamespaceDenied(
                f"{where}: this role may not use namespace {self.namespace!r} "
                f"({exc.diag.message_primary}); an administrator grants it "
                "(ctxsdk memory namespace)",
                path=where,
            ) from None
        if isinstance(exc, pe.QueryCanceled):
            raise LockHeld(f"{where}: a statement ran past its time limit ({exc})") from None
        if isinstance(exc, pe.ProgramLimitExceeded):  # an OperationalError, yet no lost server
            raise WriteError(
                f"{where}: the server refused a value too large for its index (an id, uri or "
                f"meta key over ~2.7 kB; {exc.diag.message_primary}); nothing was written"
            ) from None
        if isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError):
            raise StoreUnavailable(
                f"{where}: the connection to the server failed or was lost; a transaction it "
                f"cut off was rolled back whole ({exc.__class__.__name__})",
                path=where,
            ) from None
        if isinstance(exc, psycopg.DataError) and "NUL" in str(exc):
            raise InvalidArgument(
                f"{where}: a value holds a NUL character (U+0000), which PostgreSQL text "
                "cannot hold; nothing was written"
            ) from None
        if isinstance(exc, psycopg.DataError | psycopg.IntegrityError):
            raise WriteError(f"{where}: the server refused a value ({exc})") from None
        raise StoreError(f"{where}: database error ({exc})", path=where) from None

    @contextmanager
    def _translate(self) -> Iterator[None]:
        import psycopg
        from psycopg_pool import PoolTimeout

        try:
            yield
        except PoolTimeout:  # a psycopg.OperationalError too: caught first
            raise StoreUnavailable(
                f"{self._where}: no connection to the server within {self._connect_wait}s "
                "(is it running? are all pool_size connections busy?)",
                path=self._where,
            ) from None
        except psycopg.Error as exc:
            self._raise(exc)

    @contextmanager
    def _write(self) -> Iterator[_Held]:
        """One write transaction (outermost: it locks the namespace first) or a savepoint
        inside one (nested); the revision is bumped when a statement changed a row."""
        held = self._held()
        if held is not None:
            if held.reading:
                raise InvalidArgument(f"{self._where}: a write inside snapshot(); use batch()")
            with self._translate(), held.conn.transaction():
                held.depth += 1
                try:
                    yield held
                finally:
                    held.depth -= 1
            return
        with self._connection() as conn:
            held = _Held(conn, depth=1)
            self._local.held = held
            try:
                with self._translate(), conn.transaction():
                    if not self._owns_pool:  # a pool passed in was not set up by _configure
                        conn.execute(f"SET LOCAL lock_timeout = {self._lock_ms}")
                    conn.execute(f"SELECT {SCHEMA}.write_lock(%s)", (self.namespace,))
                    yield held
                    if held.changed:
                        conn.execute(f"SELECT {SCHEMA}.bump_revision(%s)", (self.namespace,))
            finally:
                self._local.held = None

    def _call(self, held: _Held, function: str, *args: Any) -> int:
        """Run one write function (``_pg_functions``) on this namespace in the open
        transaction; returns how many rows it changed (a boolean one: 0 or 1). A list
        argument is a text array (typed here: one of only NULLs has no type of its own)."""
        marks = ", ".join(["%s", *("%s::text[]" if isinstance(a, list) else "%s" for a in args)])
        row = held.conn.execute(
            f"SELECT {SCHEMA}.{function}({marks})", (self.namespace, *args)
        ).fetchone()
        changed = int(row[0]) if row is not None and row[0] is not None else 0
        if changed > 0:
            held.changed = True
        return changed

    def _read(
        self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()
    ) -> list[dict[str, Any]]:
        """Rows of one query: in the thread's batch or snapshot, else on a pooled
        connection, tried once more on a fresh one when the first was lost. Its parameters
        are keys compared for equality (``= %s``, ``= ANY(%s)``)."""
        from psycopg.rows import dict_row

        sql = sql.replace("{S}", SCHEMA)
        matchable = _matchable(params)
        if matchable is None:
            return []  # a key with a NUL character: no stored text holds one
        params = matchable
        held = self._held()
        if held is not None:
            with self._translate():
                return held.conn.cursor(row_factory=dict_row).execute(sql, params).fetchall()
        for attempt in (1, 2):
            try:
                # unchecked first (find reads ~100 times: a check each would double the
                # round trips); a connection found lost is retried on a checked one
                with (
                    self._connection(checked=attempt == 2) as conn,
                    _retry_if_lost(conn, attempt == 1),
                ):
                    return conn.cursor(row_factory=dict_row).execute(sql, params).fetchall()
            except _Retry:
                continue
        raise AssertionError("unreachable")  # pragma: no cover

    # -- the protocol -----------------------------------------------------------------------
    @property
    def location(self) -> str:
        """``postgresql://user@host:port/db#namespace``: never the password."""
        return self._where

    def batch(self) -> AbstractContextManager[None]:
        """One transaction around the writes inside it: all or nothing. Nested batches are
        savepoints: an exception caught inside the outer batch undoes only the inner one."""
        return _drop_value(self._write())

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """A consistent read of several calls (one REPEATABLE READ, read-only transaction):
        writers go on, this thread sees none of their commits until it ends. Writes inside
        it are refused; inside a batch it is a no-op (the batch is consistent already)."""
        if self._held() is not None:
            yield
            return
        with self._connection() as conn:
            self._local.held = _Held(conn, reading=True)
            try:
                with self._translate(), conn.transaction():
                    conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                    yield
            finally:
                self._local.held = None

    def revision(self) -> int:
        """The namespace's write counter: every committed transaction that changed a row of
        it bumps it, whichever process or machine made it."""
        rows = self._read(
            "SELECT revision FROM {S}.revisions WHERE namespace = %s", (self.namespace,)
        )
        return int(rows[0]["revision"]) if rows else 0

    def changes(self, since: int) -> Changes | None:
        """The nodes written and deleted after revision ``since`` (``MemoryStore.changes``),
        read in one snapshot (or the caller's batch) from the ``changed`` stamps and the
        ``ctxsdk.gone`` tombstones the triggers keep (schema version 4); None when ``since``
        is below 0 (nothing read yet)."""
        if since < 0:
            return None
        ns = self.namespace
        with self.snapshot():
            rows = self._read(
                f"SELECT {NODE_COLUMNS} FROM {{S}}.nodes WHERE namespace = %s AND changed > %s "
                f"ORDER BY id {_C}",
                (ns, since),
            )
            gone = self._read(
                f"SELECT id FROM {{S}}.gone WHERE namespace = %s AND changed > %s ORDER BY id {_C}",
                (ns, since),
            )
        return Changes([node_of(r, self._where) for r in rows], [str(r["id"]) for r in gone])

    def put(self, node: Node) -> Node:
        """Insert or replace ``node`` (see ``MemoryStore.put``): a replace keeps its
        ``created_at`` and edges; a ``uri`` another node holds is ``InvalidArgument``."""
        check_node(node)
        for field in _TEXT_FIELDS:
            value = getattr(node, field)
            if isinstance(value, str):
                _no_nul(value, f"node {node.id or node.type!r}: {field}")
        with self._write() as held:
            fresh = not node.id  # an id drawn here: one taken already is drawn again
            node_id = node.id or new_node_id()
            while True:
                uri = node.uri or _node_uri(node.type, node_id)
                now = now_stamp()
                # a replace keeps the stored created_at (the server's answer below)
                values = node_columns(stamped(node, node_id, uri, node.created_at or now, now))
                # one round trip: the stored row's created_at and indexed columns, the uri's
                # holder, the upsert and the drop of stale vectors (ctxsdk.write_node)
                row = held.conn.execute(
                    f"SELECT {SCHEMA}.write_node(%s, %s, {_NODE_MARKS})",
                    (self.namespace, fresh, *(values[c] for c in NODE_ORDER)),
                ).fetchone()
                outcome: list[str | None] = row[0] if row is not None and row[0] else []
                if outcome[:1] != ["taken"]:
                    break
                node_id = new_node_id()
            if outcome[:1] == ["uri"]:
                raise InvalidArgument(f"uri {uri!r} is already node {outcome[1]!r}")
            if outcome[:1] != ["ok"] or not isinstance(outcome[1], str):
                raise StoreError(
                    f"{self._where}: write_node answered {outcome!r}", path=self._where
                )
            held.changed = True
            return stamped(node, node_id, uri, outcome[1], now)

    def get(self, node_id: str) -> Node | None:
        rows = self._read(
            f"SELECT {NODE_COLUMNS} FROM {{S}}.nodes WHERE namespace = %s AND id = %s",
            (self.namespace, node_id),
        )
        return node_of(rows[0], self._where) if rows else None

    def by_uri(self, uri: str) -> Node | None:
        rows = self._read(
            f"SELECT {NODE_COLUMNS} FROM {{S}}.nodes WHERE namespace = %s AND uri = %s",
            (self.namespace, uri),
        )
        return node_of(rows[0], self._where) if rows else None

    def by_uris(self, uris: Iterable[str]) -> dict[str, Node]:
        """The nodes holding ``uris``, by uri, in one query per thousand (what ingest
        reads of a session's observations before it writes them)."""
        wanted = sorted(set(uris))
        out: dict[str, Node] = {}
        for at in range(0, len(wanted), 1000):
            rows = self._read(
                f"SELECT {NODE_COLUMNS} FROM {{S}}.nodes WHERE namespace = %s AND uri = ANY(%s)",
                (self.namespace, wanted[at : at + 1000]),
            )
            for row in rows:
                node = node_of(row, self._where)
                out[node.uri] = node
        return out

    def nodes(
        self, *, types: Iterable[str] | None = None, include_archived: bool = False
    ) -> list[Node]:
        """Nodes in id order (creation order for generated ids)."""
        sql = f"SELECT {NODE_COLUMNS} FROM {{S}}.nodes WHERE namespace = %s"
        params: list[Any] = [self.namespace]
        if types is not None:
            wanted = sorted(set(types))
            if not wanted:
                return []
            sql += " AND type = ANY(%s)"
            params.append(wanted)
        if not include_archived:
            sql += " AND status = 'active'"
        rows = self._read(sql + f" ORDER BY id {_C}", params)
        return [node_of(r, self._where) for r in rows]

    def count(self, *, include_archived: bool = False) -> dict[str, int]:
        """Nodes per type, every type listed (0 when there is none), in ``NODE_TYPES`` order."""
        sql = "SELECT type, count(*) AS n FROM {S}.nodes WHERE namespace = %s"
        if not include_archived:
            sql += " AND status = 'active'"
        got = {
            r["type"]: int(r["n"]) for r in self._read(sql + " GROUP BY type", (self.namespace,))
        }
        return {t: got.get(t, 0) for t in (*NODE_TYPES, *sorted(set(got) - set(NODE_TYPES)))}

    def delete(self, node_id: str) -> bool:
        """Remove a node for good with every edge into or out of it (ON DELETE CASCADE);
        False when there is no such node. ``status="archived"`` is the soft delete."""
        with self._write() as held:
            return self._call(held, "delete_node", node_id) > 0

    def link(self, edge: Edge) -> bool:
        """Add ``edge`` (``created_at`` stamped when empty); False when the same
        src/dst/label exists (the stored one is kept). Both ends must exist."""
        if edge.label not in EDGE_LABELS:
            raise InvalidArgument(
                f"unknown edge label {edge.label!r}; known: {', '.join(EDGE_LABELS)}"
            )
        if (
            not isinstance(edge.weight, int | float)
            or edge.weight != edge.weight
            or abs(edge.weight) == float("inf")
        ):
            raise InvalidArgument(f"an edge weight is a finite number, not {edge.weight!r}")
        ns = self.namespace
        with self._write() as held:
            for end in dict.fromkeys((edge.src, edge.dst)):
                if not self._read(
                    "SELECT 1 FROM {S}.nodes WHERE namespace = %s AND id = %s", (ns, end)
                ):
                    raise NotFound(f"{self._where}: no node {end!r} to link")
            stamp = edge.created_at or now_stamp()
            return (
                self._call(
                    held, "insert_edge", edge.src, edge.dst, edge.label, float(edge.weight), stamp
                )
                > 0
            )

    def unlink(self, src: str, dst: str, label: str) -> bool:
        """Remove one edge; False when there was none."""
        with self._write() as held:
            return self._call(held, "delete_edge", src, dst, label) > 0

    def edges(
        self,
        *,
        src: str | None = None,
        dst: str | None = None,
        labels: Sequence[str] | None = None,
    ) -> list[Edge]:
        """Edges in (src, dst, label) order."""
        sql = "SELECT src, dst, label, weight, created_at FROM {S}.edges WHERE namespace = %s"
        params: list[Any] = [self.namespace]
        for column, value in (("src", src), ("dst", dst)):
            if value is not None:
                sql += f" AND {column} = %s"
                params.append(value)
        if labels is not None:
            wanted = sorted(set(labels))
            if not wanted:
                return []
            sql += " AND label = ANY(%s)"
            params.append(wanted)
        rows = self._read(sql + f" ORDER BY src {_C}, dst {_C}, label {_C}", params)
        return [edge_of(r, self._where) for r in rows]

    def edges_touching(self, ids: Iterable[str]) -> list[Edge]:
        """Every edge into or out of any node in ``ids``, in (src, dst, label) order: one
        query, however many nodes."""
        wanted = sorted(set(ids))
        if not wanted:
            return []
        rows = self._read(
            "SELECT src, dst, label, weight, created_at FROM {S}.edges WHERE namespace = %s "
            f"AND (src = ANY(%s) OR dst = ANY(%s)) ORDER BY src {_C}, dst {_C}, label {_C}",
            (self.namespace, wanted, wanted),
        )
        return [edge_of(r, self._where) for r in rows]

    def get_meta(self, key: str) -> Any:
        """The JSON value under ``key``; None when there is none."""
        rows = self._read(
            "SELECT value FROM {S}.meta WHERE namespace = %s AND key = %s", (self.namespace, key)
        )
        if not rows:
            return None
        return load_json(rows[0]["value"], failing(self._where, f"meta key {key!r}", "value"))

    def set_meta(self, key: str, value: Any) -> None:
        """Store ``value`` (JSON) under ``key``; None deletes it."""
        check_meta_key(key)
        _no_nul(key, "a meta key")
        with self._write() as held:
            if value is None:
                self._call(held, "delete_meta", key)
            else:
                self._call(held, "set_meta", key, dumps_value(value, f"meta value for {key!r}"))

    # -- embeddings: one vector per node and embedder, keyed by the text's hash ----------
    def vectors(self, model: str, ids: Iterable[str] | None = None) -> dict[str, tuple[str, bytes]]:
        """The stored embeddings of ``model``: node id -> (text hash, float32 bytes), for
        ``ids`` (every node with one when None)."""
        sql = "SELECT node, hash, vector FROM {S}.vectors WHERE namespace = %s AND model = %s"
        params: list[Any] = [self.namespace, model]
        if ids is not None:
            sql += " AND node = ANY(%s)"
            params.append(sorted(set(ids)))
        out: dict[str, tuple[str, bytes]] = {}
        for row in self._read(sql, params):
            out[row["node"]] = (row["hash"], bytes(row["vector"]))
        return out

    def put_vectors(self, model: str, rows: Iterable[tuple[str, str, bytes]]) -> int:
        """Store ``(node id, text hash, float32 bytes)`` rows for ``model`` in one
        transaction; a row for a node that no longer exists is skipped. Returns how many
        were written."""
        check_model(model)
        with self._write() as held:
            given = [(node_id, digest, bytes(blob)) for node_id, digest, blob in rows]
            if not given:
                return 0
            nodes, digests, blobs = (list(column) for column in zip(*given, strict=True))
            # one round trip for every row (ctxsdk.write_vectors)
            row = held.conn.execute(
                f"SELECT {SCHEMA}.write_vectors(%s, %s, %s::text[], %s::text[], %s::bytea[])",
                (self.namespace, model, nodes, digests, blobs),
            ).fetchone()
            written = int(row[0]) if row is not None and row[0] is not None else 0
            if written > 0:
                held.changed = True
        return written

    # -- the lexical search index (schema version 5): a cache of the nodes ---------------
    def lexical_state(self) -> tuple[int, str, int, int]:
        """The namespace's lexical index: (the store revision it reflects, its definition's
        version, how many docs it holds, the sum of their lengths); ``(-1, "", 0, 0)`` when
        none was written."""
        rows = self._read(
            "SELECT revision, version, docs, total FROM {S}.lex_state WHERE namespace = %s",
            (self.namespace,),
        )
        if not rows:
            return (-1, "", 0, 0)
        row = rows[0]
        return (int(row["revision"]), str(row["version"]), int(row["docs"]), int(row["total"]))

    def write_lexical(
        self,
        upto: int,
        version: str,
        rows: Sequence[LexicalRow],
        drop: Sequence[str],
        *,
        rebuild: bool = False,
    ) -> int:
        """Bring the lexical index to revision ``upto`` (``ctxsdk.write_index``, one
        transaction): the docs of ``rows`` and ``drop`` removed, ``rows`` written (one whose
        node is gone meanwhile is skipped), the neighbours of every group touched relinked
        and the counts kept (schema version 7: what was written less what was dropped). With
        ``rebuild`` the namespace's index is replaced whole and takes ``version``. Returns
        how many docs were written; -1 (nothing written) when the index reflects ``upto``
        already, -2 when it was built under another ``version`` (the caller rebuilds; an
        index never written has version ""). The index has its own lock (``LockHeld`` when
        another client holds it past ``timeout``) and never waits for a node writer: a node
        one holds is left to the next catch-up, the index's revision (``lexical_state``)
        kept below it, so it may end below ``upto``. This is no write of the namespace:
        ``revision()`` does not change. Refused inside a batch or snapshot."""
        if self._held() is not None:
            raise InvalidArgument(f"{self._where}: write_lexical() inside a batch or snapshot")
        if isinstance(upto, bool) or not isinstance(upto, int):
            raise InvalidArgument(f"upto is a revision (an int), not {upto!r}")
        if not isinstance(version, str):
            raise InvalidArgument(f"version is a string, not {version!r}")
        ids = [r.id for r in rows]
        if len(set(ids)) != len(ids):
            twice = next(i for i, n in Counter(ids).items() if n > 1)
            raise InvalidArgument(f"write_lexical() takes one row per doc; {twice!r} came twice")
        t_ids: list[str] = []
        t_terms: list[str] = []
        t_tfs: list[int] = []
        for r in rows:
            t_ids.extend([r.id] * len(r.terms))
            t_terms.extend(r.terms)
            t_tfs.extend(r.terms.values())
        params = (
            self.namespace,
            upto,
            version,
            bool(rebuild),
            ids,
            [r.length for r in rows],
            [r.kinds for r in rows],
            [r.group for r in rows],
            [r.order for r in rows],
            [r.section for r in rows],
            [r.shape for r in rows],
            t_ids,
            t_terms,
            t_tfs,
            list(drop),
        )
        from psycopg import errors as pe

        with self._connection() as conn, self._translate():
            try:
                with conn.transaction():
                    if not self._owns_pool:  # a pool passed in was not set up by _configure
                        conn.execute(f"SET LOCAL lock_timeout = {self._lock_ms}")
                    got = conn.execute(
                        f"SELECT {SCHEMA}.write_index(%s, %s, %s, %s, %s::text[], "
                        "%s::integer[], %s::integer[], %s::text[], %s::double precision[], "
                        "%s::text[], %s::text[], %s::text[], %s::text[], %s::integer[], "
                        "%s::text[])",
                        params,
                    ).fetchone()
            except pe.LockNotAvailable:
                raise LockHeld(
                    f"{self._where}: another client held the search index's lock for longer "
                    f"than timeout={self._timeout}s"
                ) from None
        if got is None or got[0] is None:
            raise StoreError(f"{self._where}: write_index answered {got!r}", path=self._where)
        return int(got[0])

    def lexical_matches(
        self,
        terms: Mapping[str, float],
        *,
        want: int,
        settings: Mapping[str, float],
        k: int,
        limit: int | None = None,
        keep: int | None = None,
    ) -> LexicalRanking:
        """The indexed nodes a query's index ``terms`` (term -> how often the query says it)
        find, at most ``limit`` (None: all), best first by what the section step can give
        each: the engine's lexical ranking up to that step, run by the database
        (``_pg_lexical``); ``want`` the bits of the answer kind the question asks for,
        ``settings`` the ranking's (k1, b, coordination, boost, share, section_boost), ``k``
        the hits wanted. With ``keep`` (and a limit) only the ``keep`` matches of the best
        bound are scored exactly, with their neighbours (``PRUNED_SQL``); ``cut`` bounds
        the rest. Reads the index as it is: ``_db_search`` catches it up first."""
        params: dict[str, Any] = {
            "ns": self.namespace,
            "terms": list(terms),
            "weights": [float(v) for v in terms.values()],
            "want": int(want),
            "k": max(1, int(k)),
            "limit": limit,
        }
        params.update({key: float(settings[key]) for key in _LEXICAL_SETTINGS})
        pruned = keep is not None and limit is not None
        if pruned:
            params["keep"] = max(1, int(keep or 0))
        rows = self._read(PRUNED_SQL if pruned else MATCHES_SQL, params)
        if not rows:
            return LexicalRanking([], 0, 0.0, 0.0)
        first = rows[0]
        return LexicalRanking(
            [
                LexicalMatch(
                    str(r["id"]),
                    float(r["s"]),
                    r["sec"],
                    None if r["best"] is None else float(r["best"]),
                )
                for r in rows
            ],
            int(first["n"]),
            float(first["floor"]),
            float(first["cut"]),
        )

    def section_members(self, sections: Iterable[str]) -> dict[str, list[str]]:
        """The indexed nodes of each of ``sections``."""
        want = sorted(set(sections))
        if not want:
            return {}
        out: dict[str, list[str]] = {}
        for r in self._read(MEMBERS_SQL, {"ns": self.namespace, "secs": want}):
            out.setdefault(str(r["sec"]), []).append(str(r["id"]))
        return out

    def marked_nodes(self, ids: Iterable[str]) -> dict[str, tuple[Node, bool]]:
        """The nodes of ``ids`` that exist (any status), each with whether its index doc is
        boilerplate (``_find.boilerplate``: its template shape shared by three or more)."""
        want = sorted({i for i in ids if isinstance(i, str)})
        if not want:
            return {}
        rows = self._read(_MARKED, {"ns": self.namespace, "ids": want})
        return {str(r["id"]): (node_of(r, self._where), bool(r["boilerplate"])) for r in rows}

    def anchor_nodes(self) -> list[Node]:
        """What ``find`` looks at whatever the query's words, in id order: the active
        entities and the active indexed nodes with a deadline (``until``)."""
        rows = self._read(
            f"SELECT {NODE_COLUMNS} FROM {{S}}.nodes WHERE namespace = %s AND status = 'active'"
            " AND type NOT IN ('workspace', 'episode')"
            " AND (type = 'entity' OR coalesce(until, '') <> '')"
            f" ORDER BY id {_C}",
            (self.namespace,),
        )
        return [node_of(r, self._where) for r in rows]

    # -- maintenance: raw rows, exact updates, compaction (``Memory.scrub``) ----------------
    @property
    def in_batch(self) -> bool:
        """Whether this thread is inside a ``batch()`` or ``snapshot()`` of this store."""
        return self._held() is not None

    def rows(self, table: str) -> list[dict[str, Any]]:
        """Every row of ``table`` (``nodes``, ``edges`` or ``meta``) of this namespace as
        stored, JSON columns decoded (see ``SQLiteStore.rows``)."""
        if table not in MAINTAINED:
            raise InvalidArgument(f"rows() reads nodes, edges or meta, not {table!r}")
        key = MAINTAINED[table][0]
        columns = sorted(COLUMNS[table])
        sql = f"SELECT {', '.join(columns)} FROM {{S}}.{table} WHERE namespace = %s"
        order = ", ".join(f"{k} {_C}" for k in key)
        rows = self._read(sql + f" ORDER BY {order}", (self.namespace,))
        return [stored_row(table, row, columns, self._where) for row in rows]

    def update(self, table: str, key: Sequence[str], values: Mapping[str, Any]) -> None:
        """Set ``values`` in one row exactly (see ``SQLiteStore.update``); the old row
        version stays in the table's files until ``compact()``."""
        params = update_params(table, key, values)
        for value, column in zip(params, values, strict=True):
            if isinstance(value, str):
                _no_nul(value, f"{table} {key!r}: {column}")
        if not values:
            return
        with self._write() as held:
            n = self._call(held, "update_row", table, list(key), list(values), params)
            if n == 0:
                raise NotFound(f"{self._where}: no {table} row {tuple(key)!r} to update")
            if table == "nodes" and set(values) & set(INDEXED):
                self._call(held, "delete_vectors", key[0])

    def load(self, table: str, rows: Iterable[Mapping[str, Any]]) -> int:
        """Write ``rows`` of ``table`` into this namespace as ``rows(table)`` returns them,
        exactly (see ``SQLiteStore.load``): new rows only, all checked before the write,
        one transaction (or the caller's batch). The rows go to the server in one call
        (``ctxsdk.load_rows``), not a round trip each. Returns how many were written."""
        checked = [loadable(table, row, self._where) for row in rows]
        if not checked:
            return 0
        columns = sorted(COLUMNS[table])
        key = MAINTAINED[table][0]
        for row in checked:
            for column in columns:
                if isinstance(row[column], str):
                    ident = ", ".join(repr(row[k]) for k in key)
                    _no_nul(row[column], f"{self._where}: {table} row {ident}: {column}")
        ns = self.namespace
        with self._write() as held:
            if table == "edges":
                ends = sorted({e for row in checked for e in (row["src"], row["dst"])})
                here = {
                    r["id"]
                    for r in self._read(
                        "SELECT id FROM {S}.nodes WHERE namespace = %s AND id = ANY(%s)",
                        (ns, ends),
                    )
                }
                lost = next((e for e in ends if e not in here), None)
                if lost is not None:
                    raise NotFound(f"{self._where}: no node {lost!r} to load an edge to")
            from psycopg.types.json import Jsonb

            got = held.conn.execute(
                f"SELECT {SCHEMA}.load_rows(%s, %s, %s)", (ns, table, Jsonb(checked))
            ).fetchone()
            taken = int(got[0]) if got is not None and got[0] is not None else 0
            if taken:  # the position of the first row already here: all is rolled back
                raise InvalidArgument(
                    f"{self._where}: load() {self._taken(table, checked[taken - 1])}"
                )
            held.changed = True
        return len(checked)

    def _taken(self, table: str, row: Mapping[str, Any]) -> str:
        """What a loaded row would have replaced, in words."""

        def node_with(column: str, value: str) -> str | None:
            sql = f"SELECT id FROM {{S}}.nodes WHERE namespace = %s AND {column} = %s"
            got = self._read(sql, (self.namespace, value))
            return str(got[0]["id"]) if got else None

        return taken(table, row, node_with)

    def compact(self) -> bool:
        """Rewrite the tables without the row versions no row holds any more (``VACUUM
        FULL``), so an overwritten value is gone from their files. Only the tables' owner
        may: False for any other role (the old versions stay until an administrator
        compacts). Refused inside a batch or snapshot."""
        if self._held() is not None:
            raise InvalidArgument(f"{self._where}: compact() inside a batch or snapshot")
        with self._connection() as conn:
            owner = conn.execute(
                "SELECT bool_and(pg_has_role(tableowner, 'USAGE')) FROM pg_tables "
                "WHERE schemaname = %s",
                (SCHEMA,),
            ).fetchone()
            if not owner or not owner[0]:
                return False  # VACUUM would skip the tables with a warning
            # and the search index's rows (version 5), which hold overwritten text's terms
            for table in ("nodes", "edges", "meta", "vectors", "lex_docs", "lex_terms"):
                conn.execute(f"VACUUM FULL {SCHEMA}.{table}")
        return True

    def close(self) -> None:
        """Close the pool this store made (idempotent; a pool passed in is left open).
        Refused inside a batch."""
        if self._held() is not None:
            raise InvalidArgument(f"{self._where}: close() inside a batch or snapshot")
        if self._closed:
            return
        self._closed = True
        if self._owns_pool:
            self._pool.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PostgresStore({self._where!r})"


@contextmanager
def _admin(dsn: str) -> Iterator[tuple[psycopg.Connection[Any], str]]:
    """One autocommit connection for an administrative call, errors in ctxsdk's terms."""
    import psycopg

    where = public_location(dsn)
    try:
        conn = psycopg.connect(dsn, autocommit=True)
    except psycopg.Error as exc:
        raise StoreUnavailable(
            f"{where}: cannot connect ({exc.__class__.__name__})", path=where
        ) from None
    try:
        with conn:
            yield conn, where
    except psycopg.Error as exc:
        raise StoreError(f"{where}: database error ({exc})", path=where) from None


def _connect_options(dsn: str, wait: float) -> dict[str, Any]:
    """A connect attempt gives up within ``wait`` (libpq's floor is 2 s), unless the DSN
    says otherwise: else a host that drops packets holds a pool worker for 130 s."""
    from psycopg.conninfo import conninfo_to_dict

    if "connect_timeout" in conninfo_to_dict(dsn):
        return {}
    return {"connect_timeout": max(2, math.ceil(wait))}


def _why_not(dsn: str) -> str:
    """Why a connection to ``dsn`` fails: one direct attempt, libpq's words (which name the
    host, port, user and database, never a password; it is taken out all the same)."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    try:
        psycopg.connect(dsn, connect_timeout=2).close()
    except psycopg.Error as exc:
        said = " ".join(str(exc).split())
        password = conninfo_to_dict(dsn).get("password")
        if password:
            said = said.replace(str(password), "***")
        return said or exc.__class__.__name__
    except Exception as exc:  # a DNS failure and the like
        return exc.__class__.__name__
    return "it answers now: try again"


class _Retry(Exception):
    """A read whose connection was lost before it answered: run it once more."""


@contextmanager
def _retry_if_lost(conn: psycopg.Connection[Any], retry: bool) -> Iterator[None]:
    """Errors pass, except that one which left ``conn`` broken asks for one retry (a lock
    or statement timeout leaves it working: no retry)."""
    import psycopg

    try:
        yield
    except psycopg.OperationalError:
        if retry and conn.broken:
            raise _Retry from None
        raise


def _matchable(
    params: Sequence[Any] | Mapping[str, Any],
) -> Sequence[Any] | Mapping[str, Any] | None:
    """``params`` without the keys no stored text can equal (PostgreSQL text holds no
    NUL; psycopg refuses to send one): such a scalar matches nothing (None), such a list
    item is dropped. Named parameters are checked the same way, value by value."""
    values = list(params.values()) if isinstance(params, Mapping) else list(params)
    if not any(_has_nul(p) for p in values):
        return params
    if any(isinstance(p, str) and "\x00" in p for p in values):
        return None
    if isinstance(params, Mapping):
        return {
            k: [v for v in p if not _has_nul(v)] if isinstance(p, list) else p
            for k, p in params.items()
        }
    return [[v for v in p if not _has_nul(v)] if isinstance(p, list) else p for p in params]


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    return isinstance(value, list) and any(isinstance(v, str) and "\x00" in v for v in value)


@contextmanager
def _drop_value(cm: AbstractContextManager[_T]) -> Iterator[None]:
    with cm:
        yield
