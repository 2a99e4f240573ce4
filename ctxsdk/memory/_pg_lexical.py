"""The database's part of the lexical ranking (schema version 5: ``lex_state``,
``lex_docs``, ``lex_terms``): the matches of a query and their scores, step 1 of the
engine's ranking (``ctxsdk.session.Retriever`` with the memory's settings):

Okapi BM25 over the index terms (idf from the namespace's document count, the length
normalised by its mean length), each score scaled by (the share of the query's idf weight
the document matches) ** coordination, and raised by the answer boost when the document
holds the kind of text the question asks for (``answer_kind``).

The engine's neighbour step runs here too (each document raised by ``share`` of its better
neighbour's score), and so does the bound of its section step: a document's score plus
``section_boost`` of its section's best is what that step can give it at most (and all it
gives, unless the section is taken whole). The documents come back in that order, at most
``limit`` of them, each with its section's best, with the count of all, the k-th best
score before the section step (the floor that decides which sections are taken whole)
and the bound of the last one returned (``cut``): ``_db_search`` takes the section step
and the top k over them, and asks again without a limit when a tie at the cut leaves the
k best in doubt. A join of the matches with their neighbours would be planned for a few
rows (the query's terms come in an array) and take seconds on thousands; the neighbours'
lift is an aggregate of what each match offers instead.

The parameters are named (``%(ns)s`` ...); ``{S}`` is the schema.
"""

from __future__ import annotations

__all__ = ["MARKED_SQL", "MATCHES_SQL", "MEMBERS_SQL", "PRUNED_SQL"]

# The query's terms with their weights and idf, and the idf weight of the whole query: the
# head both statements share.
_TERMS = """
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
"""

# The section step and the best ``limit`` documents it gives: the tail both statements share.
_SECTION_STEP = """u AS (
    SELECT sd.id, sd.s, sd.sec, b.best,
           sd.s + coalesce(%(section_boost)s * b.best, 0) AS up
    FROM sd LEFT JOIN (
        SELECT sd.sec, max(sd.s) AS best FROM sd WHERE sd.sec IS NOT NULL GROUP BY sd.sec
    ) b ON b.sec = sd.sec
),
best AS MATERIALIZED (
    SELECT u.id, u.s, u.sec, u.best, u.up FROM u
    ORDER BY u.up DESC, u.id COLLATE "C" LIMIT %(limit)s
)"""

MATCHES_SQL = (
    _TERMS
    + """raw AS (
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
),
m AS MATERIALIZED (
    SELECT r.id,
           r.s * power(r.hit / total.t, %(coordination)s)
             * CASE WHEN (r.kinds & %(want)s) <> 0 THEN 1 + %(boost)s ELSE 1 END AS v,
           r.prev, r.next, r.sec
    FROM raw r CROSS JOIN total
),
-- each match offers its score to the documents before and after it: a document's lift is
-- the better of its neighbours' (their links are mutual: write_index keeps them so)
o AS (
    SELECT m.id, m.v, 0::float8 AS lift, m.sec, true AS own FROM m
    UNION ALL SELECT m.prev, 0::float8, m.v, NULL, false FROM m
        WHERE m.prev IS NOT NULL AND %(share)s > 0
    UNION ALL SELECT m.next, 0::float8, m.v, NULL, false FROM m
        WHERE m.next IS NOT NULL AND %(share)s > 0
),
s AS MATERIALIZED (
    SELECT o.id, max(o.v) + %(share)s * max(o.lift) AS s,
           max(o.sec) AS sec, bool_or(o.own) AS own
    FROM o GROUP BY o.id
),
-- a match's section came with it; a neighbour's is looked up, and one deleted since the
-- index was caught up is no longer a document
sd AS MATERIALIZED (
    SELECT s.id, s.s, s.sec FROM s WHERE s.own AND s.s > 0
    UNION ALL
    SELECT s.id, s.s, d.sec FROM s
    JOIN {S}.lex_docs d ON d.namespace = %(ns)s AND d.id = s.id
    WHERE NOT s.own AND s.s > 0
),
-- each document's section step from above: its score and its section's best share
"""
    + _SECTION_STEP
    + """
SELECT b.id, b.s, b.sec, b.best,
       (SELECT count(*) FROM sd) AS n,
       coalesce((SELECT sd.s FROM sd ORDER BY sd.s DESC LIMIT 1 OFFSET %(k)s - 1), 0) AS floor,
       (SELECT min(best.up) FROM best) AS cut
FROM best b
"""
)

# The same answer as MATCHES_SQL with a limit, scoring fewer documents exactly: the ``keep``
# matches with the best bound of their score computed from their postings alone (each
# term's weight with the document's length at its least, the term's own count; the
# coordination factor exact; the answer boost when the question asks for a kind), with
# their neighbours and the matches beside those, each read by key; the other matches are
# never joined with their document rows. Their scores after the neighbour step are at most
# ``(1 + share) * theta`` (theta: the best bound left out), and ``cut`` says so, so the
# caller's test (the k-th best beats the cut) keeps the answer exact; ``n`` is above the
# limit whenever a match was left out, so that test is always made then. When every match
# is kept (theta 0) this is MATCHES_SQL over them all.
PRUNED_SQL = (
    _TERMS
    + """-- every posting of the query's terms, from the index of terms alone (no document row)
p AS MATERIALIZED (
    SELECT p.id, p.tf, w.qw * w.idf AS wi
    FROM w JOIN {S}.lex_terms p ON p.namespace = %(ns)s AND p.term = w.term
),
-- a bound of each match's score from its postings alone: a document is at least as long
-- as any one of its terms' counts, and BM25's term weight falls as the length grows
a AS MATERIALIZED (
    SELECT p.id,
           sum(p.wi * (%(k1)s + 1) * p.tf
               / (p.tf + %(k1)s * (1 - %(b)s) + %(k1)s * %(b)s / st.avgdl * p.tf))
             * power(sum(p.wi) / total.t, %(coordination)s)
             * CASE WHEN %(want)s <> 0 THEN 1 + %(boost)s ELSE 1 END * (1 + 1e-9) AS vu
    FROM p CROSS JOIN st CROSS JOIN total
    GROUP BY p.id, total.t
),
-- the matches scored exactly (x), and the best bound of those that are not (0: none)
x AS MATERIALIZED (
    SELECT a.id, a.vu FROM a ORDER BY a.vu DESC, a.id COLLATE "C" LIMIT %(keep)s
),
theta AS (
    SELECT coalesce(
        (SELECT a.vu FROM a ORDER BY a.vu DESC, a.id COLLATE "C" OFFSET %(keep)s LIMIT 1), 0
    ) AS t
),
-- their documents (l0), their neighbours' (l1: each scored after the neighbour step), and
-- the matches beside those (l2: only their scores, which the neighbour step of l1 needs)
l0 AS MATERIALIZED (
    SELECT d.id, d.length, d.kinds, d.prev, d.next, d.sec
    FROM x JOIN {S}.lex_docs d ON d.namespace = %(ns)s AND d.id = x.id
),
l1 AS MATERIALIZED (
    SELECT d.id, d.length, d.kinds, d.prev, d.next, d.sec
    FROM (
        SELECT l0.prev AS id FROM l0 WHERE l0.prev IS NOT NULL
        UNION SELECT l0.next FROM l0 WHERE l0.next IS NOT NULL
        EXCEPT SELECT x.id FROM x
    ) i JOIN {S}.lex_docs d ON d.namespace = %(ns)s AND d.id = i.id
),
l2 AS MATERIALIZED (
    SELECT d.id, d.length, d.kinds, d.prev, d.next, d.sec
    FROM (
        (SELECT l1.prev AS id FROM l1 WHERE l1.prev IS NOT NULL
         UNION SELECT l1.next FROM l1 WHERE l1.next IS NOT NULL
         EXCEPT SELECT l0.id FROM l0 EXCEPT SELECT l1.id FROM l1)
        INTERSECT SELECT a.id FROM a
    ) i JOIN {S}.lex_docs d ON d.namespace = %(ns)s AND d.id = i.id
),
-- the exact scores of l0, l1 and l2, as MATCHES_SQL computes them
dv AS MATERIALIZED (
    SELECT * FROM l0 UNION ALL SELECT * FROM l1 UNION ALL SELECT * FROM l2
),
raw AS (
    SELECT p.id,
           sum(p.wi * (%(k1)s + 1) * p.tf
               / (p.tf + %(k1)s * (1 - %(b)s) + %(k1)s * %(b)s / st.avgdl * d.length)) AS s,
           sum(p.wi) AS hit,
           min(d.kinds) AS kinds, min(d.prev) AS prev, min(d.next) AS next
    FROM dv d JOIN p ON p.id = d.id
    CROSS JOIN st
    GROUP BY p.id
),
m AS MATERIALIZED (
    SELECT r.id,
           r.s * power(r.hit / total.t, %(coordination)s)
             * CASE WHEN (r.kinds & %(want)s) <> 0 THEN 1 + %(boost)s ELSE 1 END AS v,
           r.prev, r.next
    FROM raw r CROSS JOIN total
),
o AS (
    SELECT m.id, m.v, 0::float8 AS lift FROM m
    UNION ALL SELECT m.prev, 0::float8, m.v FROM m WHERE m.prev IS NOT NULL AND %(share)s > 0
    UNION ALL SELECT m.next, 0::float8, m.v FROM m WHERE m.next IS NOT NULL AND %(share)s > 0
),
-- l0 and l1 after the neighbour step: every neighbour of theirs that matched is scored
sd AS MATERIALIZED (
    SELECT c.id, c.sec, max(o.v) + %(share)s * max(o.lift) AS s
    FROM (SELECT l0.id, l0.sec FROM l0 UNION ALL SELECT l1.id, l1.sec FROM l1) c
    JOIN o ON o.id = c.id
    GROUP BY c.id, c.sec
    HAVING max(o.v) + %(share)s * max(o.lift) > 0
),
"""
    + _SECTION_STEP
    + """,
-- what a document left out scores at most: its own score and its neighbours' are at most
-- theta (neither is in x); with the section step, its section's best is at most that or
-- the best scored of a section (when the namespace has sections at all)
out AS (
    SELECT theta.t * (1 + %(share)s) AS bs
    FROM theta
),
bound AS (
    SELECT out.bs, CASE WHEN out.bs > 0 AND EXISTS (
               SELECT 1 FROM {S}.lex_docs e WHERE e.namespace = %(ns)s AND e.sec IS NOT NULL)
           THEN out.bs + %(section_boost)s * greatest(out.bs,
                coalesce((SELECT max(sd.s) FROM sd WHERE sd.sec IS NOT NULL), 0))
           ELSE out.bs END AS up
    FROM out
)
SELECT b.id, b.s, b.sec, b.best,
       (SELECT CASE WHEN bound.bs > 0 THEN count(*) + %(limit)s + 1 ELSE count(*) END
        FROM sd) AS n,
       coalesce((SELECT sd.s FROM sd ORDER BY sd.s DESC LIMIT 1 OFFSET %(k)s - 1), 0) AS floor,
       greatest(bound.up, CASE WHEN (SELECT count(*) FROM sd) > %(limit)s
           THEN (SELECT min(best.up) FROM best) END) AS cut
FROM best b CROSS JOIN bound
"""
)

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
