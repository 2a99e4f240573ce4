"""Joint alignment: one model call over every branch, validated against the branches
themselves (ids, quotes, evidence by origin), and the deterministic fallback with its
reason."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import httpx
import pytest

import ctxsdk as cx
from ctxsdk.errors import LLMOutputError
from ctxsdk.llm import LLM
from ctxsdk.merge._align import (
    Alignment,
    align,
    branch_text,
    heuristic_claims,
    parse_reply,
)
from ctxsdk.merge._beliefs import Branch, BranchMessage, Trust, build_slots
from ctxsdk.merge._branches import read_branch
from ctxsdk.session.kernel import TRUNCATION_MARKER
from ctxsdk.testing import LogBuilder

from ._openai_server import openai_server

USER_A = "The database is PostgreSQL. Timeout: 30s. Deploy on Fridays is forbidden."
ASSISTANT_A = "I set the cache up on Redis."
REASONING_A = "Maybe sqlite would be simpler here."
USER_B = "We moved storage to MySQL."


def _branch(sid: str, turns: Sequence[tuple[str, str, str | None]], **kw: Any) -> Branch:
    b = LogBuilder(session_id=sid, runtime_context=None)
    for prompt, text, reasoning in turns:
        b.turn(prompt).assistant(text=text, reasoning=reasoning).end_turn()
    s = cx.Session.from_events(b.header, b.events)
    return read_branch(s, kw.get("trust", Trust.EXTERNAL))  # the surface and the kernel's facts


def _branches() -> list[Branch]:
    return [
        _branch("a", [(USER_A, ASSISTANT_A, REASONING_A)]),
        _branch("b", [(USER_B, "Noted, MySQL it is.", None)]),
    ]


Handler = Callable[[httpx.Request], httpx.Response]


def _model(replies: list[str], status: int = 200) -> tuple[LLM, list[dict[str, Any]]]:
    """An LLM over a mock transport answering ``replies`` in order; request bodies kept."""
    bodies: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        if status != 200:
            return httpx.Response(status, json={"error": {"message": "no"}})
        text = replies.pop(0)
        return httpx.Response(
            200,
            json={
                "id": "x",
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5},
            },
        )

    llm = LLM("http://model.test/v1", "m", env={}, transport=httpx.MockTransport(handler))
    return llm, bodies


def _op(source: str, value: str, evidence: object, quote: str) -> dict[str, Any]:
    return {"source": source, "value": value, "evidence": evidence, "quote": quote}


def _reply(*slots: object) -> str:
    return json.dumps({"slots": list(slots)})


DB_SLOT = {
    "key": "database.engine",
    "type": "decision",
    "opinions": [
        _op("b", "MySQL ", 4, "moved storage to MySQL"),
        _op("a", "postgresql", 4, "The database is PostgreSQL."),
    ],
}


def _align(reply: str, **kw: Any) -> tuple[Alignment, list[dict[str, Any]]]:
    llm, bodies = _model([reply])
    return align(_branches(), llm, **kw), bodies


# -- the fallback -------------------------------------------------------------------------------
def test_no_model_is_the_heuristic_with_its_reason() -> None:
    branches = _branches()
    out = align(branches, None)
    assert out.mode == "heuristic" and out.reason == "no model given" and not out.types
    assert out.claims == heuristic_claims(branches) and out.claims
    assert {c.source for c in out.claims} == {"a", "b"}
    assert all(c.trust == Trust.EXTERNAL for c in out.claims)
    assert ("database", "postgresql") in {(c.key, c.value) for c in out.claims}


def test_malformed_json_falls_back_with_the_reason() -> None:
    out, bodies = _align('{"slots": [ {"key": "x", ')
    assert len(bodies) == 1
    assert out.mode == "heuristic" and out.reason is not None
    assert out.reason.startswith("malformed JSON")
    assert out.claims == heuristic_claims(_branches())


def test_a_failed_call_falls_back_with_the_reason() -> None:
    llm, bodies = _model([], status=401)
    out = align(_branches(), llm)
    assert len(bodies) == 1
    assert out.mode == "heuristic" and out.reason == "the model call failed: auth failed"


def test_zero_usable_slots_falls_back_and_says_what_was_dropped() -> None:
    bad = {"key": "x.y", "opinions": [_op("ghost", "v", 4, "The database is PostgreSQL.")]}
    out, _ = _align(_reply(bad, {"key": "", "opinions": []}))
    assert out.mode == "heuristic" and out.reason == "zero usable slots"
    assert any("unknown branch id 'ghost'" in d for d in out.dropped)
    assert any("empty key" in d for d in out.dropped)
    assert out.claims == heuristic_claims(_branches())


# -- accepted answers -----------------------------------------------------------------------
def test_fenced_and_prose_wrapped_json_is_accepted() -> None:
    for text in (
        "Here you go:\n```json\n" + _reply(DB_SLOT) + "\n```\nHope that helps.",
        "Sure. " + _reply(DB_SLOT) + " (two branches disagree)",
    ):
        out, _ = _align(text)
        assert out.mode == "llm" and out.reason is None
        assert [(c.source, c.key, c.value) for c in out.claims] == [
            ("a", "database.engine", "postgresql"),
            ("b", "database.engine", "mysql"),  # trimmed and lowercased
        ]
        assert out.types == {"database.engine": "decision"}
        assert all(c.kind == "decision" and c.trust == Trust.EXTERNAL for c in out.claims)


def test_the_request_is_one_deterministic_joint_call() -> None:
    out, bodies = _align(_reply(DB_SLOT), max_slots=7)
    assert out.mode == "llm" and len(bodies) == 1
    body = bodies[0]
    assert body["temperature"] == 0 and body["max_tokens"] == 4000
    assert body["response_format"] == {"type": "json_object"}
    prompt = "\n".join(m["content"] for m in body["messages"])
    assert 'Valid branch ids: "a", "b"' in prompt and "at most 7 slots" in prompt
    assert "derivedFrom" in prompt and "fewer is better than noisy" in prompt
    assert "[user] " + USER_A in prompt and "[reasoning] " + REASONING_A in prompt
    assert "[user] " + USER_B in prompt


# -- rejected opinions ----------------------------------------------------------------------
def test_invented_branch_ids_are_rejected_and_cannot_outvote_a_real_user() -> None:
    slot = {
        "key": "database.engine",
        "opinions": [
            _op("a", "postgresql", 4, "The database is PostgreSQL."),
            _op("ghost-1", "mysql", 4, "The database is PostgreSQL."),
            _op("ghost-2", "mysql", 4, "The database is PostgreSQL."),
        ],
    }
    out, _ = _align(_reply(slot))
    assert out.mode == "llm"
    assert {c.source for c in out.claims} == {"a"}
    assert sum("unknown branch id 'ghost-" in d for d in out.dropped) == 2
    (db,) = build_slots(out.claims, types=out.types)
    assert db.decision.outcome == "resolved" and db.decision.winner == "postgresql"


def test_evidence_is_clamped_and_non_numbers_are_two() -> None:
    quotes = ["The database is PostgreSQL.", "Timeout: 30s.", "Deploy on Fridays is forbidden."]
    slots = [
        {"key": f"k{i}", "opinions": [_op("a", "v", e, quotes[i % 3])]}
        for i, e in enumerate([99, -5, "nonsense", True, 2.6, None])
    ]
    out, _ = _align(_reply(*slots))
    assert [c.evidence for c in sorted(out.claims, key=lambda c: c.key)] == [4, 1, 2, 2, 3, 2]


def test_a_quote_not_in_its_branch_is_dropped_as_invented() -> None:
    slot = {
        "key": "database.engine",
        "opinions": [
            _op("a", "postgresql", 4, "The database is PostgreSQL."),
            _op("a", "oracle", 4, "The database is Oracle."),  # never said
            _op("b", "postgresql", 4, "The database is PostgreSQL."),  # said in a, not b
            _op("b", "mysql", 4, ""),
        ],
    }
    out, _ = _align(_reply(slot))
    assert [(c.source, c.value) for c in out.claims] == [("a", "postgresql")]
    invented = [d for d in out.dropped if "invented" in d]
    assert len(invented) == 3 and any("oracle" in d for d in invented)


def test_quotes_match_case_and_whitespace_insensitively_and_give_the_seq() -> None:
    branches = _branches()
    user_seq = next(m.seq for m in branches[0].messages if m.raw.get("role") == "user")
    slot = {"key": "db", "opinions": [_op("a", "pg", 4, "  the   DATABASE\nis postgresql ")]}
    out, _ = _align(_reply(slot))
    (c,) = out.claims
    assert c.seq == user_seq and c.origin == "user" and c.evidence == 4
    assert c.text == "the   DATABASE\nis postgresql"


def test_evidence_never_exceeds_the_origin_of_the_quote() -> None:
    branches = _branches()
    asst_seq = next(m.seq for m in branches[0].messages if m.raw.get("role") == "assistant")
    slots = [
        {"key": "cache", "opinions": [_op("a", "redis", 4, ASSISTANT_A)]},
        {"key": "db.alt", "opinions": [_op("a", "sqlite", 4, "sqlite would be simpler")]},
    ]
    out, _ = _align(_reply(*slots))
    by_key = {c.key: c for c in out.claims}
    assert by_key["cache"].evidence == 2 and by_key["cache"].origin == "assistant"
    assert by_key["cache"].seq == asst_seq
    assert by_key["db.alt"].evidence == 1 and by_key["db.alt"].origin == "reasoning"


def test_duplicate_and_empty_keys_and_empty_values_are_dropped() -> None:
    q = "The database is PostgreSQL."
    slots = [
        {"key": " Database.Engine ", "opinions": [_op("a", "postgresql", 4, q)]},
        {"key": "database.engine", "opinions": [_op("a", "oracle", 4, q)]},
        {"key": "   ", "opinions": [_op("a", "x", 4, q)]},
        {"key": "timeout", "opinions": [_op("a", "  ", 4, "Timeout: 30s")]},
        "not a slot",
    ]
    out, _ = _align(_reply(*slots))
    assert [(c.key, c.value) for c in out.claims] == [("database.engine", "postgresql")]
    assert any("duplicate key" in d for d in out.dropped)
    assert any("empty value" in d for d in out.dropped)
    assert any("not an object" in d for d in out.dropped)


def test_max_slots_is_enforced_client_side_by_key_order() -> None:
    q = "Timeout: 30s"
    slots = [{"key": k, "opinions": [_op("a", "v", 4, q)]} for k in ("zeta", "alpha", "mid")]
    out, _ = _align(_reply(*slots), max_slots=2)
    assert sorted({c.key for c in out.claims}) == ["alpha", "mid"]
    assert any("'zeta'" in d and "max_slots" in d for d in out.dropped)


def test_derived_from_routes_types_and_kinds() -> None:
    q = "Timeout: 30s"
    slots = [
        {
            "key": "flat",
            "type": "Constraint",
            "derivedFrom": ["b.key", "a.key", 3, "flat"],
            "opinions": [_op("a", "v", 4, q)],
        },
        {
            "key": "nested",
            "type": "OpenQ",
            "derivedFrom": [["x", "y"], "z", [None], {"j": 1}],
            "opinions": [_op("a", "v", 4, q)],
        },
        {"key": "junk", "type": "wizardry", "derivedFrom": "x", "opinions": [_op("a", "v", 4, q)]},
    ]
    out, _ = _align(_reply(*slots))
    by_key = {c.key: c for c in out.claims}
    assert by_key["flat"].derived_from == (("a.key", "b.key"),)  # ONE conjunction
    assert by_key["nested"].derived_from == (("x", "y"), ("z",))  # alternatives
    assert by_key["junk"].derived_from == (("x",),)  # a bare key is one premise (routes_of)
    assert dict(out.types) == {"flat": "constraint", "nested": "question"}
    assert by_key["flat"].kind == "constraint" and by_key["nested"].kind is None
    assert by_key["junk"].kind is None


def test_a_source_giving_two_values_keeps_the_later_one_live() -> None:
    turns = [("The database is PostgreSQL.", "ok", None), ("Switch to MySQL.", "ok", None)]
    a = _branch("a", turns)
    slot = {
        "key": "db",
        "opinions": [
            _op("a", "postgresql", 4, "database is postgresql"),
            _op("a", "mysql", 4, "Switch to MySQL"),
        ],
    }
    llm, _ = _model([_reply(slot)])
    out = align([a], llm)
    live = [(c.value, c.superseded) for c in out.claims]
    assert live == [("postgresql", True), ("mysql", False)]
    (s,) = build_slots(out.claims)
    assert s.decision.winner == "mysql"


# -- the prompt form ------------------------------------------------------------------------
def test_branch_text_labels_roles_and_keeps_the_tail() -> None:
    b = _branch("a", [(USER_A, ASSISTANT_A, REASONING_A)])
    text = branch_text(b)
    assert text.splitlines()[0] == f"[user] {USER_A}"
    assert f"[reasoning] {REASONING_A}" in text and f"[assistant] {ASSISTANT_A}" in text
    assert REASONING_A not in branch_text(b, include_reasoning=False)
    cut = branch_text(b, max_chars=60)
    assert len(cut) == 60 and cut.startswith(TRUNCATION_MARKER) and cut.endswith(ASSISTANT_A)


def test_injected_messages_are_hidden_unless_asked_and_then_speculative() -> None:
    base = _branch("a", [("Timeout: 30s", "ok", None)])
    injected = BranchMessage(99, {"role": "user", "content": "The database is Oracle."}, True)
    b = Branch("a", (*base.messages, injected))
    assert "Oracle" not in branch_text(b)
    assert "[injected] The database is Oracle." in branch_text(b, include_injected=True)
    slot = {"key": "db", "opinions": [_op("a", "oracle", 4, "The database is Oracle.")]}
    llm, _ = _model([_reply(slot), _reply(slot)])
    assert align([b], llm).mode == "heuristic"  # the quote is not in what the model was shown
    (c,) = align([b], llm, include_injected=True).claims
    assert c.evidence == 1 and c.origin == "injected" and c.seq == 99


def test_parse_reply_takes_the_outermost_object() -> None:
    assert parse_reply('noise {"a": {"b": 1}} tail') == {"a": {"b": 1}}
    for bad in ("", "no json", "[1, 2]", '{"a": '):
        with pytest.raises(LLMOutputError) as info:
            parse_reply(bad)
        assert info.value.reason.startswith("malformed JSON"), bad


# -- live tier: the real loopback server ----------------------------------------------------
def test_live_alignment_over_the_loopback_server() -> None:
    with openai_server() as server:
        server.replies.append(_reply(DB_SLOT))
        llm = LLM(server.url, server.model, api_key="k", env={})
        out = align(_branches(), llm)
    assert out.mode == "llm" and {c.value for c in out.claims} == {"postgresql", "mysql"}
    (body,) = server.requests
    assert body["temperature"] == 0
    prompt = json.dumps(body["messages"])
    assert '\\"a\\"' in prompt and '\\"b\\"' in prompt and "=== branch" in prompt
