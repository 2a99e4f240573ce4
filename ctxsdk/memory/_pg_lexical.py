"""The lexical ranking as SQL over the database's index (schema version 5: ``lex_state``,
``lex_docs``, ``lex_terms``), step for step the engine's (``ctxsdk.session.Retriever`` with
the memory's settings), so both stores give the same answers:

1. Okapi BM25 over the index terms (idf from the namespace's document count, the length
   normalised by its mean length), each score scaled by (the share of the query's idf
   weight the document matches) ** coordination, and raised by the answer boost when the
   document holds the kind of text the question asks for (``answer_kind``);
2. neighbours: every matched document and the ones just before and after it in its group
   (``prev`` / ``next``, kept by ``write_index``) get ``neighbour`` times the better of
   their neighbours' scores;
3. sections: every document of a section is raised by ``section_boost`` of the section's
   best; a section's unmatched members join only when that lift reaches the k-th best score
   before lifting (a smaller lift cannot reach the top k);
4. the ``k`` best with a score above 0, ties to the smaller id (the engine: the earlier
   indexed, which is id order for a memory read whole).

The parameters are named (``%(ns)s`` ...); ``{S}`` is the schema.
"""

from __future__ import annotations

__all__ = ["MARKED_SQL", "SEARCH_SQL"]

SEARCH_SQL = """
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
           min(d.kinds) AS kinds
    FROM w
    JOIN {S}.lex_terms p ON p.namespace = %(ns)s AND p.term = w.term
    JOIN {S}.lex_docs d ON d.namespace = %(ns)s AND d.id = p.id
    CROSS JOIN st
    GROUP BY p.id
),
rel AS (
    SELECT r.id,
           r.s * power(r.hit / total.t, %(coordination)s)
             * CASE WHEN (r.kinds & %(want)s) <> 0 THEN 1 + %(boost)s ELSE 1 END AS v
    FROM raw r CROSS JOIN total
),
todo AS (
    SELECT rel.id FROM rel
    UNION
    SELECT d.prev FROM rel JOIN {S}.lex_docs d ON d.namespace = %(ns)s AND d.id = rel.id
    WHERE d.prev IS NOT NULL AND %(neighbour)s > 0
    UNION
    SELECT d.next FROM rel JOIN {S}.lex_docs d ON d.namespace = %(ns)s AND d.id = rel.id
    WHERE d.next IS NOT NULL AND %(neighbour)s > 0
),
sm AS (
    SELECT t.id, d.sec,
           coalesce(r.v, 0) + %(neighbour)s * greatest(coalesce(rp.v, 0), coalesce(rn.v, 0)) AS v
    FROM todo t
    JOIN {S}.lex_docs d ON d.namespace = %(ns)s AND d.id = t.id
    LEFT JOIN rel r ON r.id = t.id
    LEFT JOIN rel rp ON rp.id = d.prev
    LEFT JOIN rel rn ON rn.id = d.next
),
best AS (
    SELECT sm.sec, max(sm.v) AS top FROM sm WHERE sm.sec IS NOT NULL AND sm.v > 0 GROUP BY sm.sec
),
cut AS (
    SELECT coalesce((SELECT sm.v FROM sm ORDER BY sm.v DESC OFFSET %(k)s - 1 LIMIT 1), 0) AS f
),
lifted AS (
    SELECT sm.id, sm.v + coalesce(%(section_boost)s * best.top, 0) AS v
    FROM sm LEFT JOIN best ON best.sec = sm.sec
    UNION ALL
    SELECT d.id, %(section_boost)s * best.top AS v
    FROM best CROSS JOIN cut
    JOIN {S}.lex_docs d ON d.namespace = %(ns)s AND d.sec = best.sec
    WHERE %(section_boost)s > 0 AND %(section_boost)s * best.top >= cut.f
      AND NOT EXISTS (SELECT 1 FROM sm WHERE sm.id = d.id)
)
SELECT lifted.id, lifted.v FROM lifted WHERE lifted.v > 0
ORDER BY lifted.v DESC, lifted.id COLLATE "C" LIMIT %(k)s
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
