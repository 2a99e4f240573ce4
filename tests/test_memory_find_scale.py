"""find at scale keeps its answers: the faster forms of what a memory's first find reads
(every observation's template shape) give the same results as the plain ones."""

from __future__ import annotations

import random
import re

from ctxsdk.memory._find import template_shape

# the shape's pattern as it was first written: three alternatives tried in turn
_PLAIN = re.compile(
    r"\b[0-9a-f]*\d[0-9a-f]*\b|\d+|\b(?:(?:january|february|march|april|may|june|july|august|"
    r"september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)|"
    r"am|pm|on|at)\b",
    re.I,
)


def _plain_shape(text: str) -> str:
    return " ".join(_PLAIN.sub(" ", text).casefold().split())


def test_template_shape_is_the_plain_patterns() -> None:
    texts = [
        "Session 9 - Date and time: 1:56 pm on 8 May, 2023",
        "deadbeef 0x1f 12ab ab12 a1b2 1st _1 1_ monday Mon SEPT sept Sep on At AM",
        "call 7f3a9c2e returned 404 at 10:02am; retry #3 of 5 on Jan 3rd",
        "٣ apples and １２ pears, janu january Decembers dec. ſept K 中文 123中 ß",
        "",
    ]
    alphabet = [*"abcdefABCDEFxyzXYZ0123456789_ -.,:/\n", "٣", "１", "é", "ſ", "K", "中", "\u00a0"]
    words = ["on", "At", "AM", "pm", "May", "sept", "SEPT", "december", "jan", "deadbeef", "12ab"]
    rng = random.Random(7)
    for _ in range(20_000):
        parts: list[str] = []
        for _ in range(rng.randint(1, 8)):
            if rng.random() < 0.5:
                parts.append(rng.choice(words))
            else:
                parts.append("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6))))
            parts.append(rng.choice([" ", "", "-", "_", ".", "1"]))
        texts.append("".join(parts))
    assert [template_shape(t) for t in texts] == [_plain_shape(t) for t in texts]
    assert template_shape("Session 9 at 1:56 pm on 8 May") == "session :"


def test_long_queries_rank_as_the_loop_over_the_postings() -> None:
    """Coordination tells the sets of query terms a match holds by a bit per term up to 16
    terms and sorts the matches' weights past that: both give the loop's floats."""
    from ctxsdk.session import Retriever

    from .test_retrieval_lexical_reference import _WORDS, _docs, _reference

    r = Retriever()
    for i, (doc_id, text) in enumerate(_docs(11, 500)):
        r.add(doc_id, text, group=i // 40, order=float(i % 40), section=(i // 40, i // 4))
    terms = sorted({t for w in _WORDS for t in r.tokenize(w)})
    assert len(terms) > 20
    rng = random.Random(3)
    compared = 0
    for size in (1, 2, 8, 15, 16, 17, 20, len(terms)):
        for _ in range(3):
            query = "When did " + " ".join(rng.sample(terms, size))
            for k in (5, 40):
                got = [(h.doc_id, h.score) for h in r.search(query, k, mode="lexical")]
                assert got == _reference(r, query, k), (size, query, k)
                compared += len(got)
    assert compared > 300
