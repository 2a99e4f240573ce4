"""The base's lexical retrieval: one BM25 that fit (and later Memory) rank with."""

from __future__ import annotations

from ctxsdk.session import BM25
from ctxsdk.session._lexical import words


def test_a_words_common_forms_meet_and_stop_words_go() -> None:
    assert words("classes") == words("class")
    assert words("games gaming game") == [words("game")[0]] * 3
    assert words("stopped") == words("stop")
    assert words("the and of") == []
    assert words("会议记录") == ["会议", "议记", "记录"]


def test_scores_rank_the_matching_document_first() -> None:
    bm = BM25(["the cat sat on the mat", "dogs chase cats", "a report on quarterly revenue"])
    s = bm.scores("revenue report")
    assert s.index(max(s)) == 2 and s[0] == 0.0
    assert bm.scores("revenue report") == bm.weighted(bm.query_terms("revenue report"))


def test_coordination_prefers_a_document_matching_more_of_the_query() -> None:
    docs = ["zebra zebra zebra zebra", "zebra giraffe", "nothing here"]
    bm = BM25(docs)
    q = bm.query_terms("zebra giraffe")
    plain = bm.weighted(q)
    coord = bm.weighted(q, coordination=1.0)
    assert coord[1] > coord[0]  # matches both words
    assert coord[1] / coord[0] > plain[1] / plain[0]
    assert coord[2] == plain[2] == 0.0
