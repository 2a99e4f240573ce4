"""The functions a namespace's members write through (schema version 2).

A member holds no table privilege but SELECT: a role that may UPDATE or DELETE a table may
also ``LOCK`` it in any mode, and one ``ACCESS EXCLUSIVE`` lock would stall every other
namespace's writers and readers. SELECT allows ``ACCESS SHARE`` only, which blocks no
writer. Every write ``PostgresStore`` makes is one of the functions below instead: each is
``SECURITY DEFINER`` (it runs as the schema's owner, whom row-level security does not
bind), so each checks first that the calling login role may use the namespace
(``ctxsdk.may_write``), raises ``insufficient_privilege`` (42501) when not, and names the
namespace in every statement it runs. Row counts come back as return values.

This is migration history: a later change to these functions is a new schema version,
never an edit of this text. Version 3 added ``write_node`` and ``write_vectors``
(``_WRITERS_V3``): a ``put`` in one round trip (the reads it needs, the upsert and the drop
of stale vectors in one call), and a ``put_vectors`` of any number of rows in one.
Version 4 added the triggers of the change feed (``_TRIGGERS_V4``), which members never
call. Version 5 added ``write_index`` (``_WRITERS_V5``): the rows of the lexical search
index a client computed, under the index's own lock, never bumping the revision.
Version 6 replaced ``write_index`` (``_WRITERS_V6``, same signature): a catch-up relinks
the documents beside what it writes instead of each touched group whole. Version 7 replaced
it again (``_WRITERS_V7``) with ``lex_namespace_deleted``: each document's length kept in
``lex_lengths``, the counts kept as a catch-up goes, and a node deleted and put again known
whatever its terms.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "V2_FUNCTIONS",
    "V3_FUNCTIONS",
    "V4_TRIGGERS",
    "V5_FUNCTIONS",
    "V5_TRIGGERS",
    "WRITE_FUNCTIONS",
    "create_functions",
    "create_functions_v3",
    "create_functions_v5",
    "create_functions_v6",
    "create_functions_v7",
    "create_triggers_v4",
    "create_triggers_v5",
    "relink_orphans_sql",
]

# May the login role write namespace ns? Inside a SECURITY DEFINER function current_user is
# the owner, so the caller is session_user: the role that logged in. SET ROLE does not
# change it, and rightly: SET ROLE reaches only roles session_user is a member of, and
# RESET ROLE undoes it, so it is no boundary; checking session_user neither lets a SET ROLE
# reach a namespace its login role could not, nor trusts one to take a right away. (SET
# SESSION AUTHORIZATION, which does change session_user, is for superusers only.) The
# schema's owner (a superuser is a member of every role) may write every namespace; an open
# namespace (role NULL) is every caller's who may run these functions at all.
_MAY_WRITE = """
CREATE FUNCTION ctxsdk.may_write(ns text) RETURNS boolean
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    RETURN (
        SELECT pg_has_role(session_user, s.nspowner, 'MEMBER') OR EXISTS (
            SELECT 1 FROM ctxsdk.namespaces n
            WHERE n.namespace = ns AND (n.role IS NULL OR EXISTS (
                SELECT 1 FROM pg_roles r
                WHERE r.rolname = n.role AND pg_has_role(session_user, r.oid, 'MEMBER')))
        )
        FROM pg_namespace s WHERE s.nspname = 'ctxsdk'
    );
END
$$;
"""

_CHECK = """
    IF NOT coalesce(ctxsdk.may_write(ns), false) THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = format('role %I may not write namespace %L', session_user, ns);
    END IF;
"""

# name -> (arguments, return type, body after the namespace check, declarations)
_WRITERS: dict[str, tuple[str, str, str, str]] = {
    # The namespace's write lock: its revisions row, held until the transaction ends.
    "write_lock": (
        "ns text",
        "bigint",
        """
    SELECT r.revision INTO rev FROM ctxsdk.revisions r WHERE r.namespace = ns FOR UPDATE;
    RETURN rev;""",
        "rev bigint;",
    ),
    "bump_revision": (
        "ns text",
        "bigint",
        """
    UPDATE ctxsdk.revisions r SET revision = r.revision + 1 WHERE r.namespace = ns
    RETURNING r.revision INTO rev;
    RETURN rev;""",
        "rev bigint;",
    ),
    # Insert or replace a node: a replace keeps its id and created_at (and so its edges).
    "put_node": (
        "ns text, p_id text, p_type text, p_name text, p_text text, p_aliases text, "
        "p_uri text, p_sources text, p_until text, p_until_at text, p_fail text, p_fix text, "
        "p_status text, p_created_at text, p_updated_at text, p_extra text",
        "boolean",
        """
    INSERT INTO ctxsdk.nodes AS t (namespace, id, type, name, text, aliases, uri, sources,
        until, until_at, fail, fix, status, created_at, updated_at, extra)
    VALUES (ns, p_id, p_type, p_name, p_text, p_aliases, p_uri, p_sources, p_until,
        p_until_at, p_fail, p_fix, p_status, p_created_at, p_updated_at, p_extra)
    ON CONFLICT (namespace, id) DO UPDATE SET type = excluded.type, name = excluded.name,
        text = excluded.text, aliases = excluded.aliases, uri = excluded.uri,
        sources = excluded.sources, until = excluded.until, until_at = excluded.until_at,
        fail = excluded.fail, fix = excluded.fix, status = excluded.status,
        updated_at = excluded.updated_at, extra = excluded.extra;
    RETURN true;""",
        "",
    ),
    # A node and, by ON DELETE CASCADE, its edges and vectors.
    "delete_node": (
        "ns text, p_id text",
        "boolean",
        """
    DELETE FROM ctxsdk.nodes t WHERE t.namespace = ns AND t.id = p_id;
    RETURN FOUND;""",
        "",
    ),
    "insert_edge": (
        "ns text, p_src text, p_dst text, p_label text, p_weight double precision, "
        "p_created_at text",
        "boolean",
        """
    INSERT INTO ctxsdk.edges (namespace, src, dst, label, weight, created_at)
    VALUES (ns, p_src, p_dst, p_label, p_weight, p_created_at)
    ON CONFLICT (namespace, src, dst, label) DO NOTHING;
    RETURN FOUND;""",
        "",
    ),
    "delete_edge": (
        "ns text, p_src text, p_dst text, p_label text",
        "boolean",
        """
    DELETE FROM ctxsdk.edges t
    WHERE t.namespace = ns AND t.src = p_src AND t.dst = p_dst AND t.label = p_label;
    RETURN FOUND;""",
        "",
    ),
    "set_meta": (
        "ns text, p_key text, p_value text",
        "boolean",
        """
    INSERT INTO ctxsdk.meta (namespace, key, value) VALUES (ns, p_key, p_value)
    ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value;
    RETURN true;""",
        "",
    ),
    "delete_meta": (
        "ns text, p_key text",
        "boolean",
        """
    DELETE FROM ctxsdk.meta t WHERE t.namespace = ns AND t.key = p_key;
    RETURN FOUND;""",
        "",
    ),
    # One embedding; false (nothing written) when the node is gone.
    "put_vector": (
        "ns text, p_node text, p_model text, p_hash text, p_vector bytea",
        "boolean",
        """
    INSERT INTO ctxsdk.vectors (namespace, node, model, hash, vector)
    SELECT ns, p_node, p_model, p_hash, p_vector
    WHERE EXISTS (SELECT 1 FROM ctxsdk.nodes n WHERE n.namespace = ns AND n.id = p_node)
    ON CONFLICT (namespace, node, model) DO UPDATE SET hash = excluded.hash,
        vector = excluded.vector;
    RETURN FOUND;""",
        "",
    ),
    "delete_vectors": (
        "ns text, p_node text",
        "integer",
        """
    DELETE FROM ctxsdk.vectors t WHERE t.namespace = ns AND t.node = p_node;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;""",
        "n integer;",
    ),
    # update(): set columns of one row, exactly. The statement is built from identifiers of
    # this fixed list only (the key columns and the writable ones of each table: _rows'
    # MAINTAINED and WRITABLE), quoted with %I; the values are parameters.
    "update_row": (
        "ns text, p_table text, p_key text[], p_columns text[], p_values text[]",
        "boolean",
        """
    CASE p_table
        WHEN 'nodes' THEN
            keys := ARRAY['id'];
            allowed := ARRAY['aliases', 'created_at', 'extra', 'fail', 'fix', 'name',
                'sources', 'status', 'text', 'until', 'until_at', 'updated_at', 'uri'];
        WHEN 'edges' THEN
            keys := ARRAY['src', 'dst', 'label'];
            allowed := ARRAY['created_at'];
        WHEN 'meta' THEN
            keys := ARRAY['key'];
            allowed := ARRAY['key', 'value'];
        ELSE
            RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
                MESSAGE = format('update_row writes nodes, edges or meta, not %L', p_table);
    END CASE;
    IF coalesce(cardinality(p_key), 0) <> cardinality(keys) THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('a %s row''s key is %s, not %L', p_table, keys, p_key);
    END IF;
    IF coalesce(cardinality(p_columns), 0) = 0
            OR cardinality(p_columns) <> coalesce(cardinality(p_values), 0) THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'update_row takes one value for each of one or more columns';
    END IF;
    FOR i IN 1 .. cardinality(p_columns) LOOP
        IF p_columns[i] IS NULL OR NOT p_columns[i] = ANY (allowed) THEN
            RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
                MESSAGE = format('update_row writes %s of %s, not %L',
                    array_to_string(allowed, ', '), p_table, p_columns[i]);
        END IF;
        sets := sets || CASE WHEN i > 1 THEN ', ' ELSE '' END
            || format('%I = $3[%s]', p_columns[i], i);
    END LOOP;
    FOR i IN 1 .. cardinality(keys) LOOP
        cond := cond || format(' AND %I = $2[%s]', keys[i], i);
    END LOOP;
    EXECUTE format('UPDATE ctxsdk.%I SET %s WHERE namespace = $1%s', p_table, sets, cond)
        USING ns, p_key, p_values;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n > 0;""",
        "keys text[]; allowed text[]; sets text := ''; cond text := ''; n integer;",
    ),
    # load(): rows as given (every column of the table, a JSON array of objects), new rows
    # only, in order. Returns 0 when all were written, else the position (from 1) of the
    # first row whose key was taken (the caller rolls back).
    "load_rows": (
        "ns text, p_table text, p_rows jsonb",
        "bigint",
        """
    IF p_table NOT IN ('nodes', 'edges', 'meta') THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('load_rows writes nodes, edges or meta, not %L', p_table);
    END IF;
    FOR r, i IN SELECT e.value, e.ordinality
            FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS e LOOP
        IF p_table = 'nodes' THEN
            node := jsonb_populate_record(NULL::ctxsdk.nodes, r);
            node.namespace := ns;
            INSERT INTO ctxsdk.nodes SELECT (node).* ON CONFLICT DO NOTHING;
        ELSIF p_table = 'edges' THEN
            edge := jsonb_populate_record(NULL::ctxsdk.edges, r);
            edge.namespace := ns;
            INSERT INTO ctxsdk.edges SELECT (edge).* ON CONFLICT DO NOTHING;
        ELSE
            meta := jsonb_populate_record(NULL::ctxsdk.meta, r);
            meta.namespace := ns;
            INSERT INTO ctxsdk.meta SELECT (meta).* ON CONFLICT DO NOTHING;
        END IF;
        IF NOT FOUND THEN
            RETURN i;
        END IF;
    END LOOP;
    RETURN 0;""",
        "r jsonb; i bigint; node ctxsdk.nodes; edge ctxsdk.edges; meta ctxsdk.meta;",
    ),
}

# Version 3: what put() and put_vectors() did in several round trips, each in one call.
_WRITERS_V3: dict[str, tuple[str, str, str, str]] = {
    # put(): insert or replace a node, as put_node, and return what the caller needs. With
    # p_fresh (an id the caller drew) an id already here is ARRAY['taken'] (draw again);
    # a uri another node holds is ARRAY['uri', that node's id]; neither writes anything.
    # Else the row is written, keeping the created_at of a row replaced (returned:
    # ARRAY['ok', created_at]), and a replace that changes an indexed column (_rows.INDEXED)
    # drops the node's vectors, which embed the old text.
    "write_node": (
        "ns text, p_fresh boolean, p_id text, p_type text, p_name text, p_text text, "
        "p_aliases text, p_uri text, p_sources text, p_until text, p_until_at text, "
        "p_fail text, p_fix text, p_status text, p_created_at text, p_updated_at text, "
        "p_extra text",
        "text[]",
        """
    SELECT * INTO prior FROM ctxsdk.nodes t WHERE t.namespace = ns AND t.id = p_id;
    existed := FOUND;
    IF existed AND p_fresh THEN
        RETURN ARRAY['taken'];
    END IF;
    SELECT t.id INTO holder FROM ctxsdk.nodes t WHERE t.namespace = ns AND t.uri = p_uri;
    IF FOUND AND holder <> p_id THEN
        RETURN ARRAY['uri', holder];
    END IF;
    INSERT INTO ctxsdk.nodes AS t (namespace, id, type, name, text, aliases, uri, sources,
        until, until_at, fail, fix, status, created_at, updated_at, extra)
    VALUES (ns, p_id, p_type, p_name, p_text, p_aliases, p_uri, p_sources, p_until,
        p_until_at, p_fail, p_fix, p_status, p_created_at, p_updated_at, p_extra)
    ON CONFLICT (namespace, id) DO UPDATE SET type = excluded.type, name = excluded.name,
        text = excluded.text, aliases = excluded.aliases, uri = excluded.uri,
        sources = excluded.sources, until = excluded.until, until_at = excluded.until_at,
        fail = excluded.fail, fix = excluded.fix, status = excluded.status,
        updated_at = excluded.updated_at, extra = excluded.extra
    RETURNING t.created_at INTO created;
    IF existed AND (prior.name IS DISTINCT FROM p_name OR prior.text IS DISTINCT FROM p_text
            OR prior.aliases IS DISTINCT FROM p_aliases OR prior.fail IS DISTINCT FROM p_fail
            OR prior.fix IS DISTINCT FROM p_fix OR prior.until IS DISTINCT FROM p_until) THEN
        DELETE FROM ctxsdk.vectors v WHERE v.namespace = ns AND v.node = p_id;
    END IF;
    RETURN ARRAY['ok', created];""",
        "prior ctxsdk.nodes; existed boolean; holder text; created text;",
    ),
    # put_vectors(): the rows in order, each as put_vector (a row for a node that is gone is
    # skipped; a later row for the same node replaces an earlier one). Returns how many
    # were written.
    "write_vectors": (
        "ns text, p_model text, p_nodes text[], p_hashes text[], p_vectors bytea[]",
        "integer",
        """
    IF coalesce(cardinality(p_nodes), 0) <> coalesce(cardinality(p_hashes), 0)
            OR coalesce(cardinality(p_nodes), 0) <> coalesce(cardinality(p_vectors), 0) THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'write_vectors takes one hash and one vector for each node';
    END IF;
    FOR i IN 1 .. coalesce(cardinality(p_nodes), 0) LOOP
        INSERT INTO ctxsdk.vectors (namespace, node, model, hash, vector)
        SELECT ns, p_nodes[i], p_model, p_hashes[i], p_vectors[i]
        WHERE EXISTS (
            SELECT 1 FROM ctxsdk.nodes n WHERE n.namespace = ns AND n.id = p_nodes[i])
        ON CONFLICT (namespace, node, model) DO UPDATE SET hash = excluded.hash,
            vector = excluded.vector;
        IF FOUND THEN
            written := written + 1;
        END IF;
    END LOOP;
    RETURN written;""",
        "written integer := 0;",
    ),
}


# Version 5: the lexical search index, a cache of the nodes that any client catches up (it
# reads changes() since the index's revision, computes the rows and writes them here). It
# takes the namespace's lex_state row lock, never its revisions row, and bumps no revision:
# node writers never wait for an indexer, nor an indexer for them (but for a node it is
# about to index being deleted: that node is skipped once the delete commits).
_WRITERS_V5: dict[str, tuple[str, str, str, str]] = {
    # Returns how many docs were written; -1 (nothing written) when the index reflects
    # revision upto already, -2 when it was built by another version of the index's
    # definition (the caller rebuilds). rebuild replaces the namespace's index whole, and
    # its revision becomes upto (what the rows reflect), even when that is lower. Rows are
    # parallel arrays: (ids, lengths, kinds, grps, ords, secs, shapes) one doc each, and
    # (t_ids, t_terms, t_tfs) one term of a doc each; the docs of ids and drop are removed
    # first. A doc whose node is gone is skipped with its terms.
    #
    # It never waits for a node writer (the lex_docs foreign key would otherwise make one
    # wait for the other, and a writer's batch and an index write could deadlock): the
    # nodes are held FOR KEY SHARE SKIP LOCKED, and a node a writer holds (being deleted or
    # rewritten: its commit comes after upto) is left as it is, its doc too, and the
    # index's revision is kept below that node's changed stamp, so the next catch-up reads
    # it again. Rows a deleter's cascade holds are skipped the same way (they go when it
    # commits). A deleted node's doc went with it: its group's neighbours are found by
    # their prev and next and recomputed.
    "write_index": (
        "ns text, upto bigint, version text, rebuild boolean, ids text[], lengths integer[], "
        "kinds integer[], grps text[], ords double precision[], secs text[], shapes text[], "
        "t_ids text[], t_terms text[], t_tfs integer[], drop text[]",
        "bigint",
        """
    n := coalesce(cardinality(ids), 0);
    IF n <> coalesce(cardinality(lengths), 0) OR n <> coalesce(cardinality(kinds), 0)
            OR n <> coalesce(cardinality(grps), 0) OR n <> coalesce(cardinality(ords), 0)
            OR n <> coalesce(cardinality(secs), 0) OR n <> coalesce(cardinality(shapes), 0)
            OR coalesce(cardinality(t_ids), 0) <> coalesce(cardinality(t_terms), 0)
            OR coalesce(cardinality(t_ids), 0) <> coalesce(cardinality(t_tfs), 0) THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'write_index takes parallel arrays: one value of each for each doc, '
                'and one id, term and count for each term';
    END IF;
    IF upto IS NULL OR version IS NULL OR rebuild IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'write_index takes a revision, a version and rebuild';
    END IF;
    -- the index's own lock: this row, never the namespace's revisions row
    SELECT s.revision, s.version INTO stored, had FROM ctxsdk.lex_state s
    WHERE s.namespace = ns FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO ctxsdk.lex_state AS s (namespace) VALUES (ns)
        ON CONFLICT (namespace) DO NOTHING;
        SELECT s.revision, s.version INTO stored, had FROM ctxsdk.lex_state s
        WHERE s.namespace = ns FOR UPDATE;
    END IF;
    IF NOT rebuild AND had IS DISTINCT FROM version THEN
        RETURN -2;
    ELSIF NOT rebuild AND stored >= upto THEN
        RETURN -1;
    END IF;
    -- the nodes of ids still here and held by no writer: held FOR KEY SHARE, so none is
    -- deleted before this commits; the others, a writer's, are left to the next catch-up
    SELECT coalesce(array_agg(k.id), '{}') INTO live FROM (
        SELECT x.id FROM ctxsdk.nodes x
        WHERE x.namespace = ns AND x.id IN (SELECT u.id FROM unnest(ids) AS u(id))
        FOR KEY SHARE OF x SKIP LOCKED
    ) k;
    IF cardinality(live) < n THEN
        SELECT min(x.changed) - 1, coalesce(array_agg(x.id), '{}') INTO cap, busy
        FROM ctxsdk.nodes x
        WHERE x.namespace = ns AND x.id IN (
            SELECT u.id FROM unnest(ids) AS u(id) EXCEPT SELECT k.id FROM unnest(live) AS k(id));
    END IF;
    -- the docs replaced or dropped (rebuild: every doc), but for rows a deleter holds
    IF rebuild THEN
        DELETE FROM ctxsdk.lex_docs d WHERE d.namespace = ns AND d.id IN (
            SELECT y.id FROM ctxsdk.lex_docs y WHERE y.namespace = ns
            FOR UPDATE OF y SKIP LOCKED);
        DELETE FROM ctxsdk.lex_terms t WHERE t.namespace = ns;
    ELSE
        WITH removed AS (
            DELETE FROM ctxsdk.lex_docs d WHERE d.namespace = ns AND d.id IN (
                SELECT y.id FROM ctxsdk.lex_docs y
                WHERE y.namespace = ns AND y.id IN (
                    SELECT k.id FROM unnest(live) AS k(id)
                    UNION ALL SELECT g.id FROM unnest(drop) AS g(id))
                FOR UPDATE OF y SKIP LOCKED)
            RETURNING d.id, d.grp
        )
        SELECT coalesce(array_agg(DISTINCT r.grp) FILTER (WHERE r.grp IS NOT NULL), '{}'),
            coalesce(array_agg(r.id), '{}')
        INTO touched, removed_ids FROM removed r;
        -- the ids whose doc went with its node (ON DELETE CASCADE), before this
        SELECT coalesce(array_agg(v.id), '{}') INTO vanished FROM (
            SELECT g.id FROM unnest(drop) AS g(id)
            UNION ALL SELECT u.id FROM unnest(ids) AS u(id)
            EXCEPT SELECT k.id FROM unnest(live) AS k(id)
            EXCEPT SELECT b.id FROM unnest(busy) AS b(id)
            EXCEPT SELECT r.id FROM unnest(removed_ids) AS r(id)
        ) v;
        -- the terms of the docs removed here and of those their nodes took with them (the
        -- terms are kept by this function, not by a foreign key: one checked per term row
        -- made a first build of 30k nodes take eight minutes)
        DELETE FROM ctxsdk.lex_terms t WHERE t.namespace = ns AND t.id IN (
            SELECT r.id FROM unnest(removed_ids) AS r(id)
            UNION ALL SELECT v.id FROM unnest(vanished) AS v(id));
    END IF;
    INSERT INTO ctxsdk.lex_docs (namespace, id, length, kinds, grp, ord, sec, shape)
    SELECT ns, u.id, u.length, u.kinds, u.grp, u.ord, u.sec, u.shape
    FROM unnest(ids, lengths, kinds, grps, ords, secs, shapes)
        AS u(id, length, kinds, grp, ord, sec, shape)
    JOIN unnest(live) AS k(id) ON k.id = u.id;
    GET DIAGNOSTICS written = ROW_COUNT;
    IF written = n THEN  -- every doc written (the usual case): every term goes in
        INSERT INTO ctxsdk.lex_terms (namespace, term, id, tf)
        SELECT ns, t.term, t.id, t.tf FROM unnest(t_ids, t_terms, t_tfs) AS t(id, term, tf);
    ELSE  -- the terms of the docs written only
        INSERT INTO ctxsdk.lex_terms (namespace, term, id, tf)
        SELECT ns, t.term, t.id, t.tf FROM unnest(t_ids, t_terms, t_tfs) AS t(id, term, tf)
        JOIN unnest(live) AS k(id) ON k.id = t.id;
    END IF;
    -- the planner's statistics of tables that grew a lot in one go, before the joins
    -- below and every search: planned for the tables as they were (empty, for a first
    -- build), a join of thousands of rows becomes a nested loop over both (minutes)
    IF rebuild OR written >= 1000 THEN
        ANALYZE ctxsdk.lex_docs;
        ANALYZE ctxsdk.lex_terms;
    END IF;
    SELECT touched || coalesce(array_agg(DISTINCT u.grp), '{}') INTO touched
    FROM unnest(ids, grps) AS u(id, grp) JOIN unnest(live) AS k(id) ON k.id = u.id
    WHERE u.grp IS NOT NULL;
    -- their groups are those of the docs that still name one of them as a neighbour
    IF cardinality(vanished) > 0 THEN
        SELECT touched || coalesce(array_agg(DISTINCT d.grp), '{}') INTO touched
        FROM ctxsdk.lex_docs d
        WHERE d.namespace = ns AND d.grp IS NOT NULL
            AND (d.prev IN (SELECT v.id FROM unnest(vanished) AS v(id))
                OR d.next IN (SELECT v.id FROM unnest(vanished) AS v(id)));
    END IF;
    -- each touched group's neighbours: in order of ord (NULL last), then id in byte order;
    -- only the rows whose neighbours change are written (and none a deleter holds)
    IF cardinality(touched) > 0 THEN
        UPDATE ctxsdk.lex_docs d SET prev = c.prev, next = c.next
        FROM (
            SELECT y.id, w.prev, w.next FROM ctxsdk.lex_docs y JOIN (
                SELECT x.id, lag(x.id) OVER g AS prev, lead(x.id) OVER g AS next
                FROM ctxsdk.lex_docs x
                WHERE x.namespace = ns
                    AND x.grp IN (SELECT DISTINCT t.grp FROM unnest(touched) t(grp))
                WINDOW g AS (PARTITION BY x.grp ORDER BY x.ord NULLS LAST, x.id COLLATE "C")
            ) w ON w.id = y.id
            WHERE y.namespace = ns
                AND (y.prev IS DISTINCT FROM w.prev OR y.next IS DISTINCT FROM w.next)
            FOR UPDATE OF y SKIP LOCKED
        ) c
        WHERE d.namespace = ns AND d.id = c.id;
        -- a row skipped (a deleter's, which may yet roll back): the next catch-up reads
        -- its node again, and so recomputes its group
        SELECT min(n.changed) - 1 INTO hold
        FROM ctxsdk.lex_docs y JOIN (
            SELECT x.id, lag(x.id) OVER g AS prev, lead(x.id) OVER g AS next
            FROM ctxsdk.lex_docs x
            WHERE x.namespace = ns
                AND x.grp IN (SELECT DISTINCT t.grp FROM unnest(touched) t(grp))
            WINDOW g AS (PARTITION BY x.grp ORDER BY x.ord NULLS LAST, x.id COLLATE "C")
        ) w ON w.id = y.id
        JOIN ctxsdk.nodes n ON n.namespace = ns AND n.id = y.id
        WHERE y.namespace = ns
            AND (y.prev IS DISTINCT FROM w.prev OR y.next IS DISTINCT FROM w.next);
    END IF;
    UPDATE ctxsdk.lex_state s SET
        -- a node a writer held was indexed up to its stamp by an earlier write (or never:
        -- a rebuild); a neighbour skipped is behind whatever the index had reached
        revision = least(CASE WHEN rebuild THEN least(upto, cap)
            ELSE greatest(s.revision, least(upto, cap)) END, hold),
        version = write_index.version,
        docs = c.docs, total = c.total
    FROM (
        SELECT count(*) AS docs, coalesce(sum(d.length), 0) AS total
        FROM ctxsdk.lex_docs d WHERE d.namespace = ns
    ) c
    WHERE s.namespace = ns;
    IF rebuild OR written >= 1000 THEN  -- prev and next were NULL at the first ANALYZE
        ANALYZE ctxsdk.lex_docs;
    END IF;
    RETURN written;""",
        "n integer; stored bigint; had text; cap bigint; hold bigint; busy text[] := '{}'; "
        "removed_ids text[] := '{}'; vanished text[] := '{}'; touched text[] := '{}'; "
        "live text[]; written bigint;",
    ),
}


def _signatures(writers: dict[str, tuple[str, str, str, str]]) -> tuple[str, ...]:
    return tuple(
        f"ctxsdk.{name}(" + ",".join(a.split(" ", 1)[1] for a in args.split(", ")) + ")"
        for name, (args, _, _, _) in writers.items()
    )


V2_FUNCTIONS: tuple[str, ...] = ("ctxsdk.may_write(text)", *_signatures(_WRITERS))
"""The signatures of the functions schema version 2 made."""
V3_FUNCTIONS: tuple[str, ...] = _signatures(_WRITERS_V3)
"""The signatures of the functions schema version 3 added."""
V5_FUNCTIONS: tuple[str, ...] = _signatures(_WRITERS_V5)
"""The signatures of the functions schema version 5 added."""
WRITE_FUNCTIONS: tuple[str, ...] = (*V2_FUNCTIONS, *V3_FUNCTIONS, *V5_FUNCTIONS)
"""The signatures of the functions a namespace's members are granted EXECUTE on."""


def _create(
    conn: psycopg.Connection[Any],
    writers: dict[str, tuple[str, str, str, str]],
    signatures: tuple[str, ...],
) -> None:
    for name, (args, returns, body, declare) in writers.items():
        conn.execute(
            f"CREATE FUNCTION ctxsdk.{name}({args}) RETURNS {returns}\n"
            "LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp\n"
            f"AS $$\nDECLARE {declare}\nBEGIN{_CHECK}{body}\nEND\n$$"
        )
    owner = conn.execute(
        "SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = 'ctxsdk'"
    ).fetchone()
    assert owner is not None  # migrate() made the schema first
    for signature in signatures:
        conn.execute(f"ALTER FUNCTION {signature} OWNER TO {owner[0]}")
        conn.execute(f"REVOKE EXECUTE ON FUNCTION {signature} FROM PUBLIC")


def create_functions(conn: psycopg.Connection[Any]) -> None:
    """Create version 2's write functions, owned by the schema's owner (a superuser who
    migrates must not leave them running as a superuser), EXECUTE revoked from PUBLIC."""
    conn.execute(_MAY_WRITE)
    _create(conn, _WRITERS, V2_FUNCTIONS)


def create_functions_v3(conn: psycopg.Connection[Any]) -> None:
    """Create the functions version 3 added, as ``create_functions`` does."""
    _create(conn, _WRITERS_V3, V3_FUNCTIONS)


def create_functions_v5(conn: psycopg.Connection[Any]) -> None:
    """Create the function version 5 added (``write_index``), as ``create_functions``
    does."""
    _create(conn, _WRITERS_V5, V5_FUNCTIONS)


# Version 4: the change feed. Every node row carries ``changed``, the revision that last
# wrote it, and ``ctxsdk.gone`` the ids of deleted nodes with the revision that deleted
# them. The writer holds its namespace's revisions row (write_lock) for its whole
# transaction and bumps it once, at the end (bump_revision), so revision + 1, read here, is
# the revision the write commits as. A node inserted again loses its tombstone.
#
# These are not SECURITY DEFINER: only the schema's owner (or a superuser) writes the
# tables, directly or inside the write functions above, which run as the owner already; a
# trigger runs as the role whose statement fired it, so it can do nothing that role could
# not. Every SECURITY DEFINER function of the schema stays one that checks may_write first.
#
# name -> (table, when, body, declarations)
_TRIGGERS_V4: dict[str, tuple[str, str, str, str]] = {
    "node_written": (
        "nodes",
        "BEFORE INSERT OR UPDATE",
        """
    SELECT r.revision INTO rev FROM ctxsdk.revisions r WHERE r.namespace = NEW.namespace;
    NEW.changed := coalesce(rev, 0) + 1;
    RETURN NEW;""",
        "rev bigint;",
    ),
    # After the insert, not before: one that ends in ON CONFLICT DO NOTHING keeps it.
    "node_inserted": (
        "nodes",
        "AFTER INSERT",
        """
    DELETE FROM ctxsdk.gone g WHERE g.namespace = NEW.namespace AND g.id = NEW.id;
    RETURN NULL;""",
        "",
    ),
    # A namespace deleted whole (its revisions row gone first, by the same cascade) leaves
    # no tombstones: there is no revision left to count them in.
    "node_deleted": (
        "nodes",
        "AFTER DELETE",
        """
    SELECT r.revision INTO rev FROM ctxsdk.revisions r WHERE r.namespace = OLD.namespace;
    IF FOUND THEN
        INSERT INTO ctxsdk.gone AS g (namespace, id, changed)
        VALUES (OLD.namespace, OLD.id, rev + 1)
        ON CONFLICT (namespace, id) DO UPDATE SET changed = excluded.changed;
    END IF;
    RETURN NULL;""",
        "rev bigint;",
    ),
    # ... and when the cascade deletes the nodes first, their tombstones go with the
    # revisions row: a namespace made again under the same name starts with none.
    "namespace_deleted": (
        "revisions",
        "AFTER DELETE",
        """
    DELETE FROM ctxsdk.gone g WHERE g.namespace = OLD.namespace;
    RETURN NULL;""",
        "",
    ),
}

V4_TRIGGERS: tuple[str, ...] = tuple(f"ctxsdk.{name}()" for name in _TRIGGERS_V4)
"""The signatures of the trigger functions schema version 4 added (no member runs them)."""

# Version 5: a namespace deleted takes its index terms with it (they have no foreign key:
# write_index keeps them; its docs go with its nodes, its state with the namespace).
_TRIGGERS_V5: dict[str, tuple[str, str, str, str]] = {
    "lex_namespace_deleted": (
        "revisions",
        "AFTER DELETE",
        """
    DELETE FROM ctxsdk.lex_terms t WHERE t.namespace = OLD.namespace;
    RETURN NULL;""",
        "",
    ),
}

V5_TRIGGERS: tuple[str, ...] = tuple(f"ctxsdk.{name}()" for name in _TRIGGERS_V5)
"""The signatures of the trigger functions schema version 5 added (no member runs them)."""


def create_triggers_v4(conn: psycopg.Connection[Any]) -> None:
    """Create version 4's trigger functions (owned by the schema's owner, EXECUTE revoked
    from PUBLIC) and their row triggers, after ``ctxsdk.gone`` and ``nodes.changed``."""
    _create_triggers(conn, _TRIGGERS_V4)


def create_triggers_v5(conn: psycopg.Connection[Any]) -> None:
    """Create version 5's trigger function and its trigger, as version 4's, after the
    index tables."""
    _create_triggers(conn, _TRIGGERS_V5)


def _create_triggers(
    conn: psycopg.Connection[Any], triggers: dict[str, tuple[str, str, str, str]]
) -> None:
    owner = conn.execute(
        "SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = 'ctxsdk'"
    ).fetchone()
    assert owner is not None  # migrate() made the schema first
    for name, (table, when, body, declare) in triggers.items():
        conn.execute(
            f"CREATE FUNCTION ctxsdk.{name}() RETURNS trigger\n"
            "LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp\n"
            f"AS $$\nDECLARE {declare}\nBEGIN{body}\nEND\n$$"
        )
        conn.execute(f"ALTER FUNCTION ctxsdk.{name}() OWNER TO {owner[0]}")
        conn.execute(f"REVOKE EXECUTE ON FUNCTION ctxsdk.{name}() FROM PUBLIC")
        conn.execute(
            f"CREATE TRIGGER {name} {when} ON ctxsdk.{table} "
            f"FOR EACH ROW EXECUTE FUNCTION ctxsdk.{name}()"
        )


# Version 6: write_index relinks only the documents whose neighbours can change, not each
# touched group whole (a window over every document of a group; one of 100k took 0.4 s to
# catch up one new node). A document's neighbours change only when it is written, when one
# beside it (in the order before or after the write) is written or removed, or when one its
# links name went with its node; so those are the documents relinked, each by two probes of
# ``lex_docs_group`` (the one before and the one after it in its group's order: ord NULLS
# LAST, then id in byte order), and the links end as a window over the whole group gives
# them (a rebuild still takes that window: every link is new). The old neighbours of a
# removed document are read by the same probes before it goes, not from its own links
# (which a deleter held at an earlier write may have left stale: its node is read again).


def _beside(y: str, before: bool) -> str:
    """The id of the document before (``before``) or after document ``y`` (a row alias) in
    its group's order, read from ``lex_docs_group``."""
    x = "SELECT x.id FROM ctxsdk.lex_docs x WHERE x.namespace = ns AND x.grp = " + y + ".grp"
    key = f'(x.ord, x.id COLLATE "C") {"<" if before else ">"} ({y}.ord, {y}.id COLLATE "C")'
    down = ' ORDER BY x.ord DESC, x.id COLLATE "C" DESC LIMIT 1'
    up = ' ORDER BY x.ord, x.id COLLATE "C" LIMIT 1'
    if before:  # a NULL ord comes last: before one are the NULLs below it, then every ord
        return (
            f"CASE WHEN {y}.ord IS NOT NULL THEN ({x} AND {key}{down}) ELSE coalesce("
            f'({x} AND x.ord IS NULL AND x.id COLLATE "C" < {y}.id COLLATE "C"'
            ' ORDER BY x.id COLLATE "C" DESC LIMIT 1), '
            f"({x} AND x.ord IS NOT NULL{down})) END"
        )
    return (
        f"CASE WHEN {y}.ord IS NOT NULL THEN coalesce(({x} AND {key}{up}), "
        f'({x} AND x.ord IS NULL ORDER BY x.id COLLATE "C" LIMIT 1)) '
        f'ELSE ({x} AND x.ord IS NULL AND x.id COLLATE "C" > {y}.id COLLATE "C"'
        ' ORDER BY x.id COLLATE "C" LIMIT 1) END'
    )


def _swap(body: str, old: str, new: str) -> str:
    """``body`` with its one ``old`` replaced by ``new``: a later version of a function
    derived from the one before it, each change checked to land exactly once."""
    assert body.count(old) == 1, old
    return body.replace(old, new)


def _v6_write_index() -> tuple[str, str, str, str]:
    args, returns, body, declare = _WRITERS_V5["write_index"]

    # the neighbours of the docs about to be removed, while they are still there
    body = _swap(
        body,
        """    ELSE
        WITH removed AS (""",
        f"""    ELSE
        SELECT coalesce(array_agg(b.id) FILTER (WHERE b.id IS NOT NULL), '{{}}') INTO around
        FROM (
            SELECT {_beside("y", True)} AS p, {_beside("y", False)} AS q
            FROM ctxsdk.lex_docs y
            WHERE y.namespace = ns AND y.grp IS NOT NULL AND y.id IN (
                SELECT k.id FROM unnest(live) AS k(id)
                UNION ALL SELECT g.id FROM unnest(drop) AS g(id))
        ) z CROSS JOIN LATERAL (VALUES (z.p), (z.q)) AS b(id);
        WITH removed AS (""",
    )
    # a vanished doc's neighbours: the docs whose links still name it
    body = _swap(
        body,
        """        SELECT touched || coalesce(array_agg(DISTINCT d.grp), '{}') INTO touched
        FROM ctxsdk.lex_docs d""",
        """        SELECT around || coalesce(array_agg(d.id), '{}') INTO around
        FROM ctxsdk.lex_docs d""",
    )
    # a rebuild links each group whole; a catch-up the docs around what it wrote
    body = _swap(
        body,
        """    IF cardinality(touched) > 0 THEN
        UPDATE ctxsdk.lex_docs d""",
        f"""    IF NOT rebuild THEN
        -- the docs written, and those now beside them
        SELECT around || coalesce(array_agg(b.id) FILTER (WHERE b.id IS NOT NULL), '{{}}')
        INTO around FROM (
            SELECT y.id AS o, {_beside("y", True)} AS p, {_beside("y", False)} AS q
            FROM ctxsdk.lex_docs y
            WHERE y.namespace = ns AND y.grp IS NOT NULL
                AND y.id IN (SELECT k.id FROM unnest(live) AS k(id))
        ) z CROSS JOIN LATERAL (VALUES (z.o), (z.p), (z.q)) AS b(id);
    END IF;
    IF NOT rebuild AND cardinality(around) > 0 THEN
        UPDATE ctxsdk.lex_docs d SET prev = c.prev, next = c.next
        FROM (
            SELECT y.id, w.prev, w.next FROM ctxsdk.lex_docs y JOIN (
                SELECT v.id, {_beside("v", True)} AS prev, {_beside("v", False)} AS next
                FROM ctxsdk.lex_docs v
                WHERE v.namespace = ns AND v.grp IS NOT NULL
                    AND v.id IN (SELECT DISTINCT a.id FROM unnest(around) a(id))
            ) w ON w.id = y.id
            WHERE y.namespace = ns
                AND (y.prev IS DISTINCT FROM w.prev OR y.next IS DISTINCT FROM w.next)
            FOR UPDATE OF y SKIP LOCKED
        ) c
        WHERE d.namespace = ns AND d.id = c.id;
        -- a row skipped (a deleter's, which may yet roll back): the next catch-up reads
        -- its node again, and so relinks it
        SELECT min(n.changed) - 1 INTO hold
        FROM ctxsdk.lex_docs y JOIN (
            SELECT v.id, {_beside("v", True)} AS prev, {_beside("v", False)} AS next
            FROM ctxsdk.lex_docs v
            WHERE v.namespace = ns AND v.grp IS NOT NULL
                AND v.id IN (SELECT DISTINCT a.id FROM unnest(around) a(id))
        ) w ON w.id = y.id
        JOIN ctxsdk.nodes n ON n.namespace = ns AND n.id = y.id
        WHERE y.namespace = ns
            AND (y.prev IS DISTINCT FROM w.prev OR y.next IS DISTINCT FROM w.next);
    ELSIF rebuild AND cardinality(touched) > 0 THEN
        UPDATE ctxsdk.lex_docs d""",
    )
    # a node deleted and put again since the last catch-up is written with its doc gone
    # (its node took it) but its terms and the links that name it still there: version 5
    # failed on its terms (a duplicate key, at every catch-up after); it is one vanished too
    body = _swap(
        body,
        """        -- the terms of the docs removed here and of those their nodes took with them""",
        """        SELECT vanished || coalesce(array_agg(DISTINCT t.id), '{}') INTO vanished
        FROM ctxsdk.lex_terms t WHERE t.namespace = ns AND t.id IN (
            SELECT k.id FROM unnest(live) AS k(id)
            EXCEPT SELECT r.id FROM unnest(removed_ids) AS r(id));
        -- the terms of the docs removed here and of those their nodes took with them""",
    )
    # in a rebuild the docs just written are all there is: nothing else to read
    body = _swap(
        body,
        "    IF cardinality(vanished) > 0 THEN",
        "    IF cardinality(vanished) > 0 AND NOT rebuild THEN",
    )
    return args, returns, body, declare + " around text[] := '{}';"


_WRITERS_V6: dict[str, tuple[str, str, str, str]] = {"write_index": _v6_write_index()}


def create_functions_v6(conn: psycopg.Connection[Any]) -> None:
    """Replace ``write_index`` by version 6's (same signature: its owner, its grants and
    who may run it stay)."""
    for name, (args, returns, body, declare) in _WRITERS_V6.items():
        conn.execute(
            f"CREATE OR REPLACE FUNCTION ctxsdk.{name}({args}) RETURNS {returns}\n"
            "LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp\n"
            f"AS $$\nDECLARE {declare}\nBEGIN{_CHECK}{body}\nEND\n$$"
        )


# Version 7: each document's length and place (group, order) are kept in ``lex_lengths``
# too, a row that outlives its doc when its node is deleted (no foreign key; write_index
# drops it at the catch-up that drops the doc's terms). Three things follow. A node deleted
# and put again since the last catch-up is known by that row, whatever its terms: version 6
# knew it only by its terms, so a doc with none (its text tokenizes to nothing) came back
# with the links of its old place still naming it. The namespace's count of documents and
# sum of their lengths are kept as the catch-up goes (what it wrote, less the rows it
# dropped), not counted again over every document at each catch-up (28 ms of one at 100k
# documents); a rebuild counts them. And the docs beside a doc gone with its node are found
# by the two probes of ``lex_docs_group`` at its old place, not by a scan of every doc's
# links for its id (version 6's, 100 ms of a catch-up after a delete at 100k documents).


def _v7_write_index() -> tuple[str, str, str, str]:
    args, returns, body, declare = _WRITERS_V6["write_index"]

    # a rebuild starts the lengths again with the docs and terms
    body = _swap(
        body,
        """        DELETE FROM ctxsdk.lex_terms t WHERE t.namespace = ns;
""",
        """        DELETE FROM ctxsdk.lex_terms t WHERE t.namespace = ns;
        DELETE FROM ctxsdk.lex_lengths l WHERE l.namespace = ns;
""",
    )
    # a node deleted and put again since the last catch-up: its length row is still here
    # (its doc went with its node), terms or none
    body = _swap(
        body,
        """        -- the terms of the docs removed here and of those their nodes took with them""",
        """        SELECT vanished || coalesce(array_agg(l.id), '{}') INTO vanished
        FROM ctxsdk.lex_lengths l WHERE l.namespace = ns AND l.id IN (
            SELECT k.id FROM unnest(live) AS k(id)
            EXCEPT SELECT r.id FROM unnest(removed_ids) AS r(id)
            EXCEPT SELECT v.id FROM unnest(vanished) AS v(id));
        -- the terms of the docs removed here and of those their nodes took with them""",
    )
    # the length rows of the docs gone (but a doc a deleter still holds: it is still here,
    # and still counted, until its delete commits and a catch-up reads it)
    body = _swap(
        body,
        """            UNION ALL SELECT v.id FROM unnest(vanished) AS v(id));
    END IF;
    INSERT INTO ctxsdk.lex_docs""",
        """            UNION ALL SELECT v.id FROM unnest(vanished) AS v(id));
        WITH forgotten AS (
            DELETE FROM ctxsdk.lex_lengths l WHERE l.namespace = ns AND l.id IN (
                SELECT r.id FROM unnest(removed_ids) AS r(id)
                UNION SELECT v.id FROM unnest(vanished) AS v(id))
            AND NOT EXISTS (
                SELECT 1 FROM ctxsdk.lex_docs d WHERE d.namespace = ns AND d.id = l.id)
            RETURNING l.id, l.length, l.grp, l.ord
        )
        SELECT count(*), coalesce(sum(f.length), 0),
            coalesce(array_agg(f.id) FILTER (WHERE f.grp IS NOT NULL), '{}'),
            coalesce(array_agg(f.grp) FILTER (WHERE f.grp IS NOT NULL), '{}'),
            coalesce(array_agg(f.ord) FILTER (WHERE f.grp IS NOT NULL), '{}')
        INTO lost_docs, lost_total, lost_ids, lost_grps, lost_ords
        FROM forgotten f;
    END IF;
    INSERT INTO ctxsdk.lex_docs""",
    )
    # the length rows of the docs written (a rebuild: of every doc there is)
    body = _swap(
        body,
        """    GET DIAGNOSTICS written = ROW_COUNT;
""",
        """    GET DIAGNOSTICS written = ROW_COUNT;
    IF rebuild THEN
        INSERT INTO ctxsdk.lex_lengths (namespace, id, length, grp, ord)
        SELECT ns, d.id, d.length, d.grp, d.ord FROM ctxsdk.lex_docs d WHERE d.namespace = ns;
        SELECT count(*), coalesce(sum(l.length), 0) INTO counted, added
        FROM ctxsdk.lex_lengths l WHERE l.namespace = ns;
    ELSE
        WITH kept AS (
            INSERT INTO ctxsdk.lex_lengths (namespace, id, length, grp, ord)
            SELECT ns, u.id, u.length, u.grp, u.ord
            FROM unnest(ids, lengths, grps, ords) AS u(id, length, grp, ord)
            JOIN unnest(live) AS k(id) ON k.id = u.id
            RETURNING length
        )
        SELECT count(*), coalesce(sum(k.length), 0) INTO counted, added FROM kept k;
    END IF;
""",
    )
    body = _swap(
        body,
        """        ANALYZE ctxsdk.lex_terms;
""",
        """        ANALYZE ctxsdk.lex_terms;
        ANALYZE ctxsdk.lex_lengths;
""",
    )
    # the docs beside the old place of a doc gone with its node, found by the same two
    # probes at that place (kept in its length row), not by a scan of every doc's links
    body = _swap(
        body,
        """    IF cardinality(vanished) > 0 AND NOT rebuild THEN
        SELECT around || coalesce(array_agg(d.id), '{}') INTO around
        FROM ctxsdk.lex_docs d
        WHERE d.namespace = ns AND d.grp IS NOT NULL
            AND (d.prev IN (SELECT v.id FROM unnest(vanished) AS v(id))
                OR d.next IN (SELECT v.id FROM unnest(vanished) AS v(id)));
    END IF;""",
        f"""    IF cardinality(lost_ids) > 0 AND NOT rebuild THEN
        SELECT around || coalesce(array_agg(b.id) FILTER (WHERE b.id IS NOT NULL), '{{}}')
        INTO around FROM (
            SELECT {_beside("y", True)} AS p, {_beside("y", False)} AS q
            FROM unnest(lost_ids, lost_grps, lost_ords) AS y(id, grp, ord)
        ) z CROSS JOIN LATERAL (VALUES (z.p), (z.q)) AS b(id);
    END IF;""",
    )
    # the counts: a rebuild's, or the last ones with what this wrote and dropped
    body = _swap(
        body,
        """        docs = c.docs, total = c.total
    FROM (
        SELECT count(*) AS docs, coalesce(sum(d.length), 0) AS total
        FROM ctxsdk.lex_docs d WHERE d.namespace = ns
    ) c
    WHERE s.namespace = ns;""",
        """        docs = CASE WHEN rebuild THEN counted ELSE s.docs + counted - lost_docs END,
        total = CASE WHEN rebuild THEN added ELSE s.total + added - lost_total END
    WHERE s.namespace = ns;""",
    )
    return (
        args,
        returns,
        body,
        declare + " counted bigint := 0; added bigint := 0; lost_docs bigint := 0;"
        " lost_total bigint := 0; lost_ids text[] := '{}'; lost_grps text[] := '{}';"
        " lost_ords double precision[] := '{}';",
    )


_WRITERS_V7: dict[str, tuple[str, str, str, str]] = {"write_index": _v7_write_index()}

# Version 7's trigger: a namespace deleted takes its length rows too (replaced in place).
_TRIGGERS_V7: dict[str, tuple[str, str, str, str]] = {
    "lex_namespace_deleted": (
        "revisions",
        "AFTER DELETE",
        """
    DELETE FROM ctxsdk.lex_terms t WHERE t.namespace = OLD.namespace;
    DELETE FROM ctxsdk.lex_lengths l WHERE l.namespace = OLD.namespace;
    RETURN NULL;""",
        "",
    ),
}


def create_functions_v7(conn: psycopg.Connection[Any]) -> None:
    """Replace ``write_index`` by version 7's and ``lex_namespace_deleted`` by its own (the
    same signatures: owners, grants, who may run them and their settings stay), after
    ``lex_lengths``."""
    _replace(conn, _WRITERS_V7)
    for name, (_table, _when, body, declare) in _TRIGGERS_V7.items():
        kept = _settings(conn, f"ctxsdk.{name}()")
        conn.execute(
            f"CREATE OR REPLACE FUNCTION ctxsdk.{name}() RETURNS trigger\n"
            f"LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp{kept}\n"
            f"AS $$\nDECLARE {declare}\nBEGIN{body}\nEND\n$$"
        )


def _settings(conn: psycopg.Connection[Any], signature: str) -> str:
    """The SET clauses of function ``signature`` but its search path (which every function
    of the schema sets alike): CREATE OR REPLACE sets only those it is given (version 5 set
    ``plan_cache_mode`` on every function of the schema but ``write_index``)."""
    row = conn.execute(
        "SELECT p.proconfig FROM pg_catalog.pg_proc p WHERE p.oid = to_regprocedure(%s)",
        (signature,),
    ).fetchone()
    out = ""
    for setting in row[0] if row is not None and row[0] else []:
        key, _, value = str(setting).partition("=")
        if key != "search_path":  # names and values the catalog holds, set by a migration
            out += f" SET {key} = '{value}'"
    return out


def _replace(conn: psycopg.Connection[Any], writers: dict[str, tuple[str, str, str, str]]) -> None:
    for name, (args, returns, body, declare) in writers.items():
        kept = _settings(
            conn, f"ctxsdk.{name}(" + ",".join(a.split(" ", 1)[1] for a in args.split(", ")) + ")"
        )
        conn.execute(
            f"CREATE OR REPLACE FUNCTION ctxsdk.{name}({args}) RETURNS {returns}\n"
            "LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp"
            f"{kept}\n"
            f"AS $$\nDECLARE {declare}\nBEGIN{_CHECK}{body}\nEND\n$$"
        )


def relink_orphans_sql() -> str:
    """One statement (version 7's migration) relinking every doc whose links name a doc
    that is no longer there (its node deleted since the last catch-up): each link becomes
    what the window over its group gives, by the probes of ``write_index``."""
    before = _beside("v", True).replace("x.namespace = ns", "x.namespace = v.namespace")
    after = _beside("v", False).replace("x.namespace = ns", "x.namespace = v.namespace")
    gone = (
        "{link} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ctxsdk.lex_docs e "
        "WHERE e.namespace = v.namespace AND e.id = {link})"
    )
    return f"""
UPDATE ctxsdk.lex_docs d SET prev = w.prev, next = w.next
FROM (
    SELECT v.namespace, v.id, {before} AS prev, {after} AS next
    FROM ctxsdk.lex_docs v
    WHERE v.grp IS NOT NULL
        AND ({gone.format(link="v.prev")} OR {gone.format(link="v.next")})
) w
WHERE d.namespace = w.namespace AND d.id = w.id"""
