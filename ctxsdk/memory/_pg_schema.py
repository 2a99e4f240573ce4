"""The PostgreSQL memory's schema: its tables, their row-level security, the versions and the
migrations between them, and the namespaces with the roles that may use them.

Everything lives in the schema ``ctxsdk``. ``ctxsdk.namespaces`` maps a namespace to the
database role whose members may use it; a policy on every data table lets a role see the
rows of those namespaces only. Members hold SELECT on the tables and write through functions
that run as the owner and check the namespace first (version 2, ``_pg_functions``; version 3
added ``write_node`` and ``write_vectors``, a ``put`` and a ``put_vectors`` in one call
each); a namespace without a role is open to every role granted them. Version 4 added the
change feed: each node's ``changed`` revision and the tombstones of deleted nodes
(``ctxsdk.gone``), kept by triggers. Version 5 added the lexical search index
(``lex_state``, ``lex_docs``, ``lex_terms``), a cache of the nodes a client writes through
``write_index`` without bumping the revision. Version 6 replaced ``write_index``: a catch-up
relinks the documents beside what it writes, not their groups whole. Version 7 added
``lex_lengths`` (each document's length, kept past its node's delete until a catch-up drops
it) and replaced ``write_index`` again: the document count and total length are kept as a
catch-up goes, not counted again, and a node deleted and put again is known whatever its
terms. The schema version is one row of ``ctxsdk.schema_version``; ``migrate`` brings a
database forward one step at a time in one transaction, under an advisory lock, and refuses
one newer than this code (``StoreVersionError``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import (
    CorruptStore,
    InvalidArgument,
    NamespaceDenied,
    NotFound,
    StoreError,
    StoreVersionError,
)

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "SCHEMA",
    "SCHEMA_VERSION",
    "create_namespace",
    "ensure_namespace",
    "migrate",
    "public_location",
]

SCHEMA = "ctxsdk"
_LOCK = 0x637478_6D656D  # pg_advisory_xact_lock key of a migration ("ctx" "mem")
_DATA_TABLES = ("nodes", "edges", "meta", "vectors", "revisions")


def _v1(conn: psycopg.Connection[Any]) -> None:
    """The first schema: the SQLite store's tables, each row with its namespace, and the
    policies that keep namespaces apart."""
    conn.execute(
        f"""
        CREATE TABLE {SCHEMA}.namespaces (namespace text PRIMARY KEY, role text);
        CREATE TABLE {SCHEMA}.revisions (
            namespace text PRIMARY KEY REFERENCES {SCHEMA}.namespaces ON DELETE CASCADE,
            revision bigint NOT NULL DEFAULT 0
        );
        CREATE TABLE {SCHEMA}.nodes (
            namespace text NOT NULL REFERENCES {SCHEMA}.namespaces ON DELETE CASCADE,
            id text NOT NULL,
            type text NOT NULL,
            name text NOT NULL,
            text text NOT NULL DEFAULT '',
            aliases text NOT NULL DEFAULT '[]',
            uri text NOT NULL,
            sources text NOT NULL DEFAULT '[]',
            until text,
            until_at text,
            fail text,
            fix text,
            status text NOT NULL DEFAULT 'active',
            created_at text NOT NULL,
            updated_at text NOT NULL,
            extra text NOT NULL DEFAULT '{{}}',
            PRIMARY KEY (namespace, id),
            UNIQUE (namespace, uri)
        );
        CREATE INDEX nodes_type_status ON {SCHEMA}.nodes (namespace, type, status);
        CREATE TABLE {SCHEMA}.edges (
            namespace text NOT NULL,
            src text NOT NULL,
            dst text NOT NULL,
            label text NOT NULL,
            weight double precision NOT NULL,
            created_at text NOT NULL,
            PRIMARY KEY (namespace, src, dst, label),
            FOREIGN KEY (namespace, src) REFERENCES {SCHEMA}.nodes ON DELETE CASCADE,
            FOREIGN KEY (namespace, dst) REFERENCES {SCHEMA}.nodes ON DELETE CASCADE
        );
        CREATE INDEX edges_dst ON {SCHEMA}.edges (namespace, dst, label);
        CREATE TABLE {SCHEMA}.meta (
            namespace text NOT NULL REFERENCES {SCHEMA}.namespaces ON DELETE CASCADE,
            key text NOT NULL,
            value text NOT NULL,
            PRIMARY KEY (namespace, key)
        );
        CREATE TABLE {SCHEMA}.vectors (
            namespace text NOT NULL,
            node text NOT NULL,
            model text NOT NULL,
            hash text NOT NULL,
            vector bytea NOT NULL,
            PRIMARY KEY (namespace, node, model),
            FOREIGN KEY (namespace, node) REFERENCES {SCHEMA}.nodes ON DELETE CASCADE
        );
        -- The namespaces the current role may use, computed once per statement (an
        -- InitPlan), not once per row: the policies compare each row's namespace to it.
        CREATE FUNCTION {SCHEMA}.my_namespaces() RETURNS text[] LANGUAGE sql STABLE AS $$
            SELECT coalesce(array_agg(n.namespace), '{{}}')
            FROM {SCHEMA}.namespaces n LEFT JOIN pg_catalog.pg_roles r ON r.rolname = n.role
            WHERE n.role IS NULL OR (r.oid IS NOT NULL AND pg_has_role(r.oid, 'MEMBER'))
        $$;
        """
    )
    for table in _DATA_TABLES:
        conn.execute(f"ALTER TABLE {SCHEMA}.{table} ENABLE ROW LEVEL SECURITY")
        conn.execute(
            f"CREATE POLICY members ON {SCHEMA}.{table} "
            f"USING (namespace = ANY ((SELECT {SCHEMA}.my_namespaces())::text[])) "
            f"WITH CHECK (namespace = ANY ((SELECT {SCHEMA}.my_namespaces())::text[]))"
        )


# A member's table privileges in version 1 beyond SELECT, revoked by version 2 (and by
# create_namespace, so a role holds SELECT only however often it is granted a namespace).
_WRITE_PRIVILEGES = "INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER"
# version 5's search index (ctxsdk.write_index writes it)
_LEX_TABLES = ("lex_state", "lex_docs", "lex_terms")
_LEX_TABLES_V7 = ("lex_lengths",)  # version 7's
# (gone: version 4's, the lex_ tables version 5's; _member_grants skips a table an older
# version has not made yet)
_MEMBER_TABLES = (
    "schema_version",
    "namespaces",
    *_DATA_TABLES,
    "gone",
    *_LEX_TABLES,
    *_LEX_TABLES_V7,
)


def _v2(conn: psycopg.Connection[Any]) -> None:
    """Members write through functions that run as the owner (``_pg_functions``) and keep
    no table privilege but SELECT, which allows no lock that stalls a writer: the roles
    named in ``ctxsdk.namespaces``, and any other that was granted writes on the tables,
    lose their writes and are granted EXECUTE instead."""
    from ._pg_functions import V2_FUNCTIONS, create_functions

    create_functions(conn)
    rows = conn.execute(
        f"""
        SELECT r.rolname FROM {SCHEMA}.namespaces n JOIN pg_catalog.pg_roles r
            ON r.rolname = n.role
        UNION
        SELECT r.rolname FROM pg_catalog.pg_class c
            JOIN pg_catalog.pg_namespace s ON s.oid = c.relnamespace
            CROSS JOIN LATERAL pg_catalog.aclexplode(c.relacl) a
            JOIN pg_catalog.pg_roles r ON r.oid = a.grantee
        WHERE s.nspname = %s AND c.relkind = 'r'
            AND a.privilege_type <> 'SELECT' AND a.grantee <> c.relowner
        """,
        (SCHEMA,),
    ).fetchall()
    for (role,) in sorted(rows):
        _member_grants(conn, role, V2_FUNCTIONS)


def _v3(conn: psycopg.Connection[Any]) -> None:
    """``put`` and ``put_vectors`` each in one call (``write_node``, ``write_vectors``): the
    functions are made, and every role that may run version 2's ``put_node`` may run them."""
    from ._pg_functions import V3_FUNCTIONS, create_functions_v3

    create_functions_v3(conn)
    _grant_like_put_node(conn, V3_FUNCTIONS)


def _grant_select_like_nodes(conn: psycopg.Connection[Any], tables: tuple[str, ...]) -> None:
    """SELECT on the new ``tables`` for every role (and PUBLIC) that may read the nodes now:
    a later version's tables are read by the same members."""
    from psycopg import sql

    rows = conn.execute(
        """
        SELECT DISTINCT a.grantee = 0, coalesce(r.rolname, '') FROM pg_catalog.pg_class c
            CROSS JOIN LATERAL pg_catalog.aclexplode(c.relacl) a
            LEFT JOIN pg_catalog.pg_roles r ON r.oid = a.grantee
        WHERE c.oid = pg_catalog.to_regclass(%s) AND a.privilege_type = 'SELECT'
            AND a.grantee <> c.relowner AND (a.grantee = 0 OR r.oid IS NOT NULL)
        """,
        (f"{SCHEMA}.nodes",),
    ).fetchall()
    for public, role in sorted(rows):
        grantee = sql.SQL("PUBLIC") if public else sql.Identifier(role)
        for table in tables:  # fixed names of ours, not input
            name = sql.SQL("{}.{}").format(sql.Identifier(SCHEMA), sql.Identifier(table))
            conn.execute(sql.SQL("GRANT SELECT ON {} TO {}").format(name, grantee))


def _grant_like_put_node(conn: psycopg.Connection[Any], signatures: tuple[str, ...]) -> None:
    """EXECUTE on the functions of ``signatures`` for every role (but the owner) that may
    run version 2's ``put_node``: a later version's write functions go to the writers."""
    from psycopg import sql

    from ._pg_functions import V2_FUNCTIONS

    put_node = next(f for f in V2_FUNCTIONS if f.startswith(f"{SCHEMA}.put_node("))
    rows = conn.execute(
        """
        SELECT r.rolname FROM pg_catalog.pg_proc p
            CROSS JOIN LATERAL pg_catalog.aclexplode(p.proacl) a
            JOIN pg_catalog.pg_roles r ON r.oid = a.grantee
        WHERE p.oid = pg_catalog.to_regprocedure(%s) AND a.privilege_type = 'EXECUTE'
            AND a.grantee <> p.proowner
        """,
        (put_node,),
    ).fetchall()
    for (role,) in sorted(rows):
        for signature in signatures:  # fixed text of ours, not input
            conn.execute(
                sql.SQL("GRANT EXECUTE ON FUNCTION " + signature + " TO {}").format(
                    sql.Identifier(role)
                )
            )


def _v4(conn: psycopg.Connection[Any]) -> None:
    """The change feed (``PostgresStore.changes``): every node row carries ``changed``, the
    revision that last wrote it (0: written before this version), and ``ctxsdk.gone`` the
    id of each deleted node with the revision that deleted it; triggers keep both, whatever
    statement writes (``_pg_functions.create_triggers_v4``). ``gone`` has no foreign key to
    its namespace (a namespace's tombstones go with its revisions row, by trigger); members
    read it under the same policy as the other tables: every role that may SELECT the nodes
    now may SELECT it."""

    from ._pg_functions import create_triggers_v4

    conn.execute(
        f"""
        ALTER TABLE {SCHEMA}.nodes ADD COLUMN changed bigint NOT NULL DEFAULT 0;
        CREATE INDEX nodes_changed ON {SCHEMA}.nodes (namespace, changed);
        CREATE TABLE {SCHEMA}.gone (
            namespace text NOT NULL,
            id text NOT NULL,
            changed bigint NOT NULL,
            PRIMARY KEY (namespace, id)
        );
        CREATE INDEX gone_changed ON {SCHEMA}.gone (namespace, changed);
        ALTER TABLE {SCHEMA}.gone ENABLE ROW LEVEL SECURITY;
        CREATE POLICY members ON {SCHEMA}.gone
            USING (namespace = ANY ((SELECT {SCHEMA}.my_namespaces())::text[]))
            WITH CHECK (namespace = ANY ((SELECT {SCHEMA}.my_namespaces())::text[]));
        """
    )
    create_triggers_v4(conn)
    _grant_select_like_nodes(conn, ("gone",))


def _v5(conn: psycopg.Connection[Any]) -> None:
    """The lexical search index, kept in the database (``PostgresStore.write_lexical``): a
    cache derived from the nodes by whichever client catches it up, never counted in the
    namespace's revision. ``lex_state`` holds, per namespace, the store revision the index
    reflects, the version of the index's definition, how many documents it holds and the
    sum of their lengths; ``lex_docs`` one row per indexed node (its length, answer kinds,
    group and place in it with its neighbours, section and template shape); ``lex_terms``
    each document's index terms with their counts. A node deleted takes its document with
    it (ON DELETE CASCADE); ``write_index`` drops its terms at the next catch-up (a foreign
    key from the terms, checked per row, made a first build of 30k nodes take minutes),
    and no search matches a term without its document; a namespace deleted takes its terms
    (``lex_namespace_deleted``). Members read them under the same policy as the other
    tables (every role that may SELECT the nodes now may SELECT them) and write through
    ``ctxsdk.write_index`` (``_pg_functions.create_functions_v5``), granted to every role
    that may run version 2's ``put_node``."""

    from ._pg_functions import V5_FUNCTIONS, create_functions_v5, create_triggers_v5

    conn.execute(
        f"""
        CREATE TABLE {SCHEMA}.lex_state (
            namespace text PRIMARY KEY REFERENCES {SCHEMA}.namespaces ON DELETE CASCADE,
            revision bigint NOT NULL DEFAULT -1,
            version text NOT NULL DEFAULT '',
            docs bigint NOT NULL DEFAULT 0,
            total bigint NOT NULL DEFAULT 0
        );
        CREATE TABLE {SCHEMA}.lex_docs (
            namespace text NOT NULL,
            id text NOT NULL,
            length integer NOT NULL,
            kinds integer NOT NULL,
            grp text,
            ord double precision,
            sec text,
            shape text NOT NULL,
            prev text,
            next text,
            PRIMARY KEY (namespace, id),
            FOREIGN KEY (namespace, id) REFERENCES {SCHEMA}.nodes ON DELETE CASCADE
        );
        -- a group's documents in their order (ties by id, in byte order, as the neighbours
        -- are computed: ctxsdk.write_index)
        CREATE INDEX lex_docs_group ON {SCHEMA}.lex_docs (namespace, grp, ord, id COLLATE "C");
        CREATE INDEX lex_docs_section ON {SCHEMA}.lex_docs (namespace, sec);
        CREATE INDEX lex_docs_shape ON {SCHEMA}.lex_docs (namespace, shape);
        CREATE TABLE {SCHEMA}.lex_terms (
            namespace text NOT NULL,
            term text NOT NULL,
            id text NOT NULL,
            tf integer NOT NULL,
            PRIMARY KEY (namespace, term, id)
        );
        CREATE INDEX lex_terms_doc ON {SCHEMA}.lex_terms (namespace, id);
        """
    )
    for table in _LEX_TABLES:
        conn.execute(f"ALTER TABLE {SCHEMA}.{table} ENABLE ROW LEVEL SECURITY")
        conn.execute(
            f"CREATE POLICY members ON {SCHEMA}.{table} "
            f"USING (namespace = ANY ((SELECT {SCHEMA}.my_namespaces())::text[])) "
            f"WITH CHECK (namespace = ANY ((SELECT {SCHEMA}.my_namespaces())::text[]))"
        )
    create_functions_v5(conn)
    create_triggers_v5(conn)
    _grant_select_like_nodes(conn, _LEX_TABLES)
    _grant_like_put_node(conn, V5_FUNCTIONS)
    # Every function of the schema but write_index plans each statement for its arguments
    # and the tables as they are now. PL/pgSQL keeps a generic plan after five calls, made
    # when a table was small (a sequential scan of a new namespace's nodes looks cheapest)
    # and kept while it grows inside one long transaction: a batch of puts slowed with every
    # put (8,000 puts took 24 s, 4,000 took 6 s); with plans made per call they take the same
    # time each.
    functions = conn.execute(
        """
        SELECT p.oid::regprocedure::text FROM pg_catalog.pg_proc p
            JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = %s ORDER BY 1
        """,
        (SCHEMA,),
    ).fetchall()
    # write_index is the exception: each call is one catch-up whose arrays can hold a
    # million terms, and a plan made for those values estimates each array element by
    # element (a first build of 20k nodes took 230 s, against 7 s); it runs ANALYZE itself
    # after a large write, which makes its cached plans again.
    for (signature,) in functions:  # the schema's own functions, named by the catalog
        if signature not in V5_FUNCTIONS:
            conn.execute(f"ALTER FUNCTION {signature} SET plan_cache_mode = force_custom_plan")


def _member_grants(
    conn: psycopg.Connection[Any], role: str, functions: tuple[str, ...] | None = None
) -> None:
    """What a namespace's role holds: USAGE on the schema, SELECT on the tables (reads, under
    row-level security), EXECUTE on the write functions (``functions``: all of this
    version's when None); no other table privilege."""
    from psycopg import sql

    from ._pg_functions import WRITE_FUNCTIONS

    owns = conn.execute(
        "SELECT pg_catalog.pg_has_role(%s, nspowner, 'USAGE') FROM pg_catalog.pg_namespace "
        "WHERE nspname = %s",
        (role, SCHEMA),
    ).fetchone()
    if owns is not None and owns[0]:
        return  # the owner (or a role acting as it) keeps its own tables whole
    ident = sql.Identifier(role)
    conn.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(sql.Identifier(SCHEMA), ident))
    for table in _MEMBER_TABLES:
        if conn.execute("SELECT to_regclass(%s)", (f"{SCHEMA}.{table}",)).fetchone() == (None,):
            continue  # a migration from before the version that made it (_v2's grants)
        name = sql.SQL("{}.{}").format(sql.Identifier(SCHEMA), sql.Identifier(table))
        conn.execute(sql.SQL("REVOKE " + _WRITE_PRIVILEGES + " ON {} FROM {}").format(name, ident))
        conn.execute(sql.SQL("GRANT SELECT ON {} TO {}").format(name, ident))
    for signature in WRITE_FUNCTIONS if functions is None else functions:  # fixed text of ours
        if conn.execute("SELECT to_regprocedure(%s)", (signature,)).fetchone() == (None,):
            continue  # a migration from before the version that made it, as for the tables
        conn.execute(sql.SQL("GRANT EXECUTE ON FUNCTION " + signature + " TO {}").format(ident))


def _v6(conn: psycopg.Connection[Any]) -> None:
    """``write_index`` relinks only the documents beside what it writes, not each touched
    group whole (``_pg_functions.create_functions_v6``; the same signature, owner and
    grants, the same index rows). No table changes."""
    from ._pg_functions import create_functions_v6

    create_functions_v6(conn)


def _v7(conn: psycopg.Connection[Any]) -> None:
    """``lex_lengths``: each indexed document's length and place (group, order), a row
    without a foreign key to its node, so it outlives a doc its node's delete took;
    ``write_index`` drops it at the catch-up that drops the doc's terms. With it version 7's
    ``write_index`` (``_pg_functions.create_functions_v7``, replaced in place: owner, grants
    and settings kept) keeps ``lex_state``'s count of documents and sum of lengths as it
    goes instead of counting them again at every catch-up, knows a node deleted and put
    again by its row (version 6 knew it by its terms only: a doc without terms kept links
    naming it at its old place), and finds the docs beside a doc gone with its node by
    probes at its old place, not by a scan of every doc's links. The rows are made from
    each namespace's docs, and from the terms of the docs a delete took since the last
    catch-up (their length is the sum of their counts; their place is unknown, so the docs
    whose links name them are relinked here), and the counts made from them; members read
    them under the same policy as the other tables, as they read the nodes."""
    from ._pg_functions import create_functions_v7, relink_orphans_sql

    conn.execute(
        f"""
        CREATE TABLE {SCHEMA}.lex_lengths (
            namespace text NOT NULL,
            id text NOT NULL,
            length integer NOT NULL,
            grp text,
            ord double precision,
            PRIMARY KEY (namespace, id)
        );
        ALTER TABLE {SCHEMA}.lex_lengths ENABLE ROW LEVEL SECURITY;
        CREATE POLICY members ON {SCHEMA}.lex_lengths
            USING (namespace = ANY ((SELECT {SCHEMA}.my_namespaces())::text[]))
            WITH CHECK (namespace = ANY ((SELECT {SCHEMA}.my_namespaces())::text[]));
        INSERT INTO {SCHEMA}.lex_lengths (namespace, id, length, grp, ord)
        SELECT d.namespace, d.id, d.length, d.grp, d.ord FROM {SCHEMA}.lex_docs d
        UNION ALL
        SELECT t.namespace, t.id, sum(t.tf), NULL, NULL FROM {SCHEMA}.lex_terms t
        WHERE NOT EXISTS (
            SELECT 1 FROM {SCHEMA}.lex_docs d WHERE d.namespace = t.namespace AND d.id = t.id)
        GROUP BY t.namespace, t.id;
        UPDATE {SCHEMA}.lex_state s SET docs = c.docs, total = c.total
        FROM (
            SELECT n.namespace, count(l.id) AS docs, coalesce(sum(l.length), 0) AS total
            FROM {SCHEMA}.lex_state n
            LEFT JOIN {SCHEMA}.lex_lengths l ON l.namespace = n.namespace
            GROUP BY n.namespace
        ) c
        WHERE c.namespace = s.namespace;
        ANALYZE {SCHEMA}.lex_lengths;
        """
    )
    # the place of a doc a delete took since the last catch-up is unknown (version 6 found
    # its neighbours by their links): the docs whose links name a doc that is gone are
    # relinked now, as the catch-up would have
    conn.execute(relink_orphans_sql())
    create_functions_v7(conn)
    _grant_select_like_nodes(conn, _LEX_TABLES_V7)


# _MIGRATIONS[i] takes a database from schema version i to i + 1 (0: no ctxsdk schema).
_MIGRATIONS: tuple[Callable[[psycopg.Connection[Any]], None], ...] = (
    _v1,
    _v2,
    _v3,
    _v4,
    _v5,
    _v6,
    _v7,
)
SCHEMA_VERSION = len(_MIGRATIONS)
"""The PostgreSQL schema version this code writes (``ctxsdk.schema_version``)."""


def public_location(dsn: str) -> str:
    """``postgresql://user@host:port/dbname`` for ``dsn``, without its password (what
    errors, reprs and ``location`` show)."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts: dict[str, Any] | None = conninfo_to_dict(dsn)
    except Exception:  # its message may quote the DSN, password and all
        parts = None
    if parts is None:  # raised out here, so no error chained to it holds the DSN
        raise InvalidArgument(
            "the PostgreSQL DSN could not be parsed (a postgresql:// URL or key=value pairs)"
        )
    user = parts.get("user") or ""
    host = parts.get("host") or parts.get("hostaddr") or "localhost"
    port = parts.get("port")
    if port is not None and not all(
        p.isdigit() and 0 < int(p) < 65536 for p in str(port).split(",") if p
    ):  # else every connect fails, and the pool tries until its timeout
        raise InvalidArgument(f"the PostgreSQL DSN's port is a number, not {str(port)!r}")
    db = parts.get("dbname") or user or ""
    return f"postgresql://{f'{user}@' if user else ''}{host}{f':{port}' if port else ''}/{db}"


def _version(conn: psycopg.Connection[Any], where: str) -> int:
    """The database's schema version: 0 without a ``ctxsdk`` schema."""
    has_schema = conn.execute(
        "SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = %s", (SCHEMA,)
    ).fetchone()
    if has_schema is None:
        return 0
    has_table = conn.execute(
        "SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = %s AND tablename = 'schema_version'",
        (SCHEMA,),
    ).fetchone()
    if has_table is None:
        raise CorruptStore(
            f"{where}: a schema {SCHEMA!r} without ctxsdk's schema_version table: not a ctxsdk "
            "memory; it is refused, not changed",
            path=where,
        )
    row = conn.execute(f"SELECT version FROM {SCHEMA}.schema_version").fetchone()
    if row is None or not isinstance(row[0], int) or row[0] < 1:
        raise CorruptStore(
            f"{where}: {SCHEMA}.schema_version holds {row!r}, not a schema version",
            path=where,
        )
    return row[0]


def _refuse_newer(version: int, where: str) -> None:
    if version > SCHEMA_VERSION:
        raise StoreVersionError(
            f"{where}: memory schema version {version} is newer than this ctxsdk knows "
            f"(version {SCHEMA_VERSION}); upgrade ctxsdk to open it",
            path=where,
        )


def migrate(conn: psycopg.Connection[Any], *, where: str, create: bool) -> int:
    """Bring the database to ``SCHEMA_VERSION`` (creating the schema when ``create``);
    returns the version found. Up to date: nothing is written and no lock is taken."""
    from psycopg import errors as pe

    version = _version(conn, where)
    _refuse_newer(version, where)
    if version == SCHEMA_VERSION:
        return version
    if version == 0 and not create:
        raise NotFound(f"{where}: no ctxsdk memory in this database (create=False)")
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
            found = _version(conn, where)  # another process may have migrated meanwhile
            _refuse_newer(found, where)
            if found == 0:
                conn.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
                conn.execute(f"CREATE TABLE {SCHEMA}.schema_version (version integer NOT NULL)")
                conn.execute(f"INSERT INTO {SCHEMA}.schema_version VALUES (0)")
            for step in range(found, SCHEMA_VERSION):
                _MIGRATIONS[step](conn)
                conn.execute(f"UPDATE {SCHEMA}.schema_version SET version = %s", (step + 1,))
    except pe.InsufficientPrivilege:
        raise StoreError(
            f"{where}: the ctxsdk schema is missing or older than this ctxsdk (version "
            f"{version}, want {SCHEMA_VERSION}) and this role may not create or change it; an "
            "administrator (a role that may create schemas in this database) runs the init "
            "once: ctxsdk memory DSN init (or PostgresStore.init_schema(dsn))",
            path=where,
        ) from None
    return version


def ensure_namespace(
    conn: psycopg.Connection[Any], namespace: str, *, where: str, create: bool
) -> None:
    """Make sure ``namespace`` exists and this role may use it: a missing one is created
    private to the connecting role (when ``create``); one the role may not use is
    ``NamespaceDenied``, with what to ask for."""
    from psycopg import errors as pe

    def visible() -> bool:
        return (
            conn.execute(
                f"SELECT 1 FROM {SCHEMA}.revisions WHERE namespace = %s", (namespace,)
            ).fetchone()
            is not None
        )

    if visible():
        return
    known = conn.execute(
        f"SELECT role FROM {SCHEMA}.namespaces WHERE namespace = %s", (namespace,)
    ).fetchone()
    if known is not None:
        if visible():  # another process made it between the two reads (one commit for both)
            return
        raise NamespaceDenied(
            f"{where}: this role may not use namespace {namespace!r} (its members are role "
            f"{known[0]!r}); an administrator grants it: GRANT {known[0]} TO <your role>",
            path=where,
        )
    if not create:
        raise NotFound(f"{where}: no namespace {namespace!r} (create=False)")
    try:
        with conn.transaction():
            conn.execute(
                f"INSERT INTO {SCHEMA}.namespaces (namespace, role) VALUES (%s, current_user) "
                "ON CONFLICT (namespace) DO NOTHING",
                (namespace,),
            )
            conn.execute(
                f"INSERT INTO {SCHEMA}.revisions (namespace) VALUES (%s) "
                "ON CONFLICT (namespace) DO NOTHING",
                (namespace,),
            )
    except pe.InsufficientPrivilege:
        raise NamespaceDenied(
            f"{where}: no namespace {namespace!r}, and this role may not create one; an "
            f"administrator runs: ctxsdk memory namespace DSN {namespace} --role ROLE",
            path=where,
        ) from None
    ensure_namespace(conn, namespace, where=where, create=False)  # visible now, or says why


def create_namespace(
    conn: psycopg.Connection[Any], namespace: str, *, role: str | None, where: str
) -> None:
    """As the schema's owner: make ``namespace`` usable by the members of ``role`` (created
    ``NOLOGIN`` when missing, given SELECT on the tables and EXECUTE on the write
    functions), or by every role granted those when ``role`` is None. Run once per
    namespace; running it again changes nothing."""
    from psycopg import sql

    migrate(conn, where=where, create=True)
    with conn.transaction():
        if role is not None:
            exists = conn.execute(
                "SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = %s", (role,)
            ).fetchone()
            ident = sql.Identifier(role)
            if exists is None:
                conn.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(ident))
            _member_grants(conn, role)
        held = conn.execute(
            f"SELECT role FROM {SCHEMA}.namespaces WHERE namespace = %s", (namespace,)
        ).fetchone()
        if held is not None and held[0] != role:
            raise InvalidArgument(
                f"{where}: namespace {namespace!r} already belongs to role {held[0]!r}"
            )
        conn.execute(
            f"INSERT INTO {SCHEMA}.namespaces (namespace, role) VALUES (%s, %s) "
            "ON CONFLICT (namespace) DO NOTHING",
            (namespace, role),
        )
        conn.execute(
            f"INSERT INTO {SCHEMA}.revisions (namespace) VALUES (%s) "
            "ON CONFLICT (namespace) DO NOTHING",
            (namespace,),
        )
