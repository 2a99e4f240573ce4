"""The database's part of the lexical ranking (schema version 5: ``lex_state``,
``lex_docs``, ``lex_terms``): the matches of a query and their scores, step 1 of the
engine's ranking (``ctxsdk.session.Retriever`` with the memory's settings):

Okapi BM25 over the index terms (idf from the namespace's document count, the length
normalised by its mean length), each score scaled by (the share of the query's idf weight
the document matches) ** coordination, and raised by the answer boost when the document
holds the kind of text the question asks for (``answer_kind``).

Each match comes with its neighbours (``prev`` / ``next`` in its group, kept by
``write_index``) and its section, for the steps ``_db_search`` takes beside (neighbours,
sections, the top k). Those steps join every match with others; the planner cannot know how
many documents a query's terms match (they come in an array), and a join planned for a few
rows that meets thousands took seconds. Index lookups by key, as here, do not depend on it.

The parameters are named (``%(ns)s`` ...); ``{S}`` is the schema.
"""

from __future__ import annotations

__all__ = ["DOCS_SQL", "MARKED_SQL", "MATCHES_SQL", "MEMBERS_SQL"]

MATCHES_SQL = """
WITH st AS (
    SELECT s.docs::float8 AS n,
           CASE WHEN s.docs > 0 AND s.total > 0 THEN s.total::float8 / s.docs ELSE 1 END AS avgdl
    FROM {S}.lex_state s WHERE s.namespace = %(ns)s AND s.docs > 0
),
q AS (
    SELECT t.term, t.qw FROM unnest(%(terms)s::text[], %(weights)s::float8[]) AS t (term, qw)
),
w AS (
    SELECT q.term, q.qw, ln(1 + (st.n - f.df + 0.5) / (f.df + 0.5)) AS idf
    FROM q CROSS JOIN st
    CROSS JOIN LATERAL (
        SELECT count(*)::float8 AS df FROM {S}.lex_terms p
        WHERE p.namespace = %(ns)s AND p.term = q.term
    ) f
    WHERE f.df > 0
),
total AS (SELECT sum(w.qw * w.idf) AS t FROM w),
raw AS (
    SELECT p.id,
           sum(w.qw * w.idf * (%(k1)s + 1) * p.tf
               / (p.tf + %(k1)s * (1 - %(b)s) + %(k1)s * %(b)s / st.avgdl * d.length)) AS s,
           sum(w.qw * w.idf) AS hit,
           -- one value per document (the join repeats it for each of its terms)
           min(d.kinds) AS kinds, min(d.prev) AS prev, min(d.next) AS next, min(d.sec) AS sec
    FROM w
    JOIN {S}.lex_terms p ON p.namespace = %(ns)s AND p.term = w.term
    JOIN {S}.lex_docs d ON d.namespace = %(ns)s AND d.id = p.id
    CROSS JOIN st
    GROUP BY p.id
)
SELECT r.id,
       r.s * power(r.hit / total.t, %(coordination)s)
         * CASE WHEN (r.kinds & %(want)s) <> 0 THEN 1 + %(boost)s ELSE 1 END AS v,
       r.prev, r.next, r.sec
FROM raw r CROSS JOIN total
"""

# The neighbours and section of documents by id (a match's neighbours that match nothing).
DOCS_SQL = """
SELECT d.id, d.prev, d.next, d.sec FROM {S}.lex_docs d
WHERE d.namespace = %(ns)s AND d.id = ANY(%(ids)s::text[])
"""

# The documents of sections.
MEMBERS_SQL = """
SELECT d.sec, d.id FROM {S}.lex_docs d
WHERE d.namespace = %(ns)s AND d.sec = ANY(%(secs)s::text[])
"""

# Nodes by id, each with whether it is boilerplate: an observation whose template shape at
# least three indexed observations share (``_find.boilerplate``).
MARKED_SQL = """
SELECT {columns},
       coalesce(d.shape <> '' AND (
           SELECT count(*) FROM {S}.lex_docs e
           WHERE e.namespace = %(ns)s AND e.shape = d.shape
       ) >= 3, false) AS boilerplate
FROM {S}.nodes n
LEFT JOIN {S}.lex_docs d ON d.namespace = n.namespace AND d.id = n.id
WHERE n.namespace = %(ns)s AND n.id = ANY(%(ids)s::text[])
"""
