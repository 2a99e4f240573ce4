"""``bench fit``'s own machinery: the quick run's question sample, and the rankers the fits of
one question share (the plans must be the ones ranking per fit gives)."""

from __future__ import annotations

from typing import Any

import pytest

import ctxsdk as cx
from ctxsdk.assemble import DigestConfig
from ctxsdk.assemble._rank import Ranker
from ctxsdk.assemble.kernel import FitIndex, fit_plan
from ctxsdk.bench import _fit as bf
from ctxsdk.session._tokens import TokenCounter

_COUNTER = TokenCounter("cl100k_base")
ZERO = DigestConfig(absorb_off=True)


def _qa(category: int, i: int, evidence: bool = True) -> dict[str, Any]:
    return {
        "question": f"q{category}-{i}",
        "category": category,
        "evidence": ["D1:1"] if evidence else [],
    }


def test_quick_questions_spread_over_every_category() -> None:
    # LoCoMo lists its questions by category: the first n would hold one or two of them.
    qas = [_qa(c, i) for c in (1, 2, 3, 4, 5) for i in range(30)]
    qas.insert(10, _qa(2, 99, evidence=False))
    got = bf._quick_qas(qas, 20)
    assert len(got) == 20
    cats = [q["category"] for q in got]
    assert set(cats) == {1, 2, 3, 4}  # category 5 has no evidence to keep: none sampled
    assert all(cats.count(c) == 5 for c in (1, 2, 3, 4))
    assert all(q["evidence"] for q in got)
    assert len({q["question"] for q in got}) == 20  # no question twice
    few = [_qa(1, 0), _qa(5, 1), _qa(4, 2)]
    assert bf._quick_qas(few, 20) == [few[0], few[2]]


def test_once_per_query_scores_as_the_ranker_does() -> None:
    texts = ["we went sailing on the lake", "pottery class on monday", "sailing again, windy"]
    inner = Ranker(texts, sections=[0, 0, 1])
    shared = bf._OncePerQuery(inner)
    first = shared.scores("sailing")
    assert first == inner.scores("sailing") and max(first) > 0
    first[0] = -1.0  # a caller changing its list does not change the next caller's
    assert shared.scores("sailing") == inner.scores("sailing")
    assert shared.scored == 1
    assert shared.scores("pottery") == inner.scores("pottery")
    assert shared.scored == 2
    assert shared.scores(None) == [0.0, 0.0, 0.0]


def _chat(n: int = 60) -> cx.Session:
    msgs: list[dict[str, str]] = [{"role": "system", "content": "You are a careful listener."}]
    for i in range(n):
        topic = ["sailing", "pottery", "chess", "baking"][(i * 7) % 4]
        msgs.append({"role": "user", "content": f"note {i}: I talked about {topic} " * (1 + i % 3)})
        if i % 5 == 4:
            msgs.append({"role": "assistant", "content": f"(read {i})"})
    return cx.Session.from_messages(msgs, format="openai")


def _plans(session: cx.Session, share: bool) -> list[tuple[list[int], int]]:
    ix = FitIndex.build(session, _COUNTER, DigestConfig())
    iz = FitIndex.build(session, _COUNTER, ZERO)
    if share:
        shared = bf._share_rankers(ix, iz, None)
        assert iz.ranker is ix.ranker is shared[0]
    out = []
    for question in ("what about chess?", "when was pottery?", "sailing"):
        for budget in (200, 400, 800):
            for config, index in ((DigestConfig(), ix), (ZERO, iz)):
                r = fit_plan(
                    session, budget, query=question, counter=_COUNTER, config=config, index=index
                )
                out.append((sorted(r.kept), r.tokens_after))
    if share:
        assert shared[0].scored == 3  # once per question, for six fits each
    return out


def test_shared_rankers_give_the_same_plans() -> None:
    session = _chat()
    assert _plans(session, share=True) == _plans(session, share=False)


def test_shared_rankers_refuse_indexes_of_other_texts() -> None:
    ix = FitIndex.build(_chat(60), _COUNTER, DigestConfig())
    other = FitIndex.build(_chat(50), _COUNTER, ZERO)
    with pytest.raises(AssertionError, match="different texts"):
        bf._share_rankers(ix, other, None)
