"""Adjudication: true ties settled by a constrained model answer that must survive a
symmetry check; invented values, flips and failures leave the ties standing."""

from __future__ import annotations

import json
from typing import Any

from ctxsdk.llm import LLM
from ctxsdk.merge._adjudicate import Conflict, adjudicate, find_conflicts
from ctxsdk.merge._align import align
from ctxsdk.merge._beliefs import Slot, Trust, build_slots
from ctxsdk.merge._claims import Claim

from ._openai_server import openai_server
from .test_merge_align import DB_SLOT, _branches, _model


def _claim(
    key: str, value: str, source: str, evidence: int = 4, seq: int = 1, text: str = ""
) -> Claim:
    return Claim(
        key=key,
        value=value,
        evidence=evidence,
        text=text or f"{key} is {value}",
        source=source,
        seq=seq,
        trust=Trust.EXTERNAL,
    )


def _slots() -> list[Slot]:
    """``database`` tied postgresql/mysql, ``timeout`` resolved."""
    return build_slots(
        [
            _claim("database", "postgresql", "a"),
            _claim("database", "mysql", "b"),
            _claim("timeout", "30s", "a"),
        ]
    )


def _res(key: str, outcome: str, **kw: Any) -> dict[str, Any]:
    return {"key": key, "outcome": outcome, **kw}


def _reply(*rs: dict[str, Any]) -> str:
    return json.dumps({"resolutions": list(rs)})


def _user_prompt(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


# -- no call --------------------------------------------------------------------------------
def test_no_model_is_off_and_changes_nothing() -> None:
    slots = _slots()
    out = adjudicate(slots, None)
    assert out.mode == "off" and out.reason == "no model given" and out.calls == 0
    assert out.slots == tuple(slots) and all(s.resolution is None for s in out.slots)


def test_no_disputed_slot_makes_no_call() -> None:
    llm, bodies = _model([])
    slots = build_slots([_claim("timeout", "30s", "a"), _claim("timeout", "30s", "b")])
    out = adjudicate(slots, llm)
    assert out.mode == "none" and out.calls == 0 and bodies == [] and out.conflicts == ()


# -- find_conflicts and the bound -----------------------------------------------------------
def test_find_conflicts_lists_each_tied_value() -> None:
    claims = [
        _claim("db", "pg", "a", 4, 1, "pg one"),
        _claim("db", "pg", "a", 2, 2, "pg two"),
        _claim("db", "pg", "c", 3, 3, "pg three"),
        _claim("db", "pg", "c", 1, 4, "pg four"),
        _claim("db", "my", "b", 4, 5, "my one"),
        _claim("db", "my", "d", 3, 6, "my two"),
    ]
    slots = build_slots(claims)  # 8 + 4 each
    assert slots[0].decision.outcome == "disputed", slots[0]
    (c,) = find_conflicts(slots)
    assert c.key == "db" and [o.value for o in c.options] == ["my", "pg"]
    my, pg = c.options
    assert my.sources == ("b", "d") and my.max_evidence == 4
    assert pg.sources == ("a", "c") and pg.max_evidence == 4
    assert pg.quotes == ("pg one", "pg three", "pg two")  # three, highest evidence first


def test_conflicts_are_bounded_by_source_count_then_key() -> None:
    claims = []
    for key, n in (("k1", 1), ("k2", 3), ("k3", 2), ("k4", 3)):
        for i in range(n):
            claims += [_claim(key, "x", f"s{i}x"), _claim(key, "y", f"s{i}y")]
    slots = build_slots(claims)
    assert len(find_conflicts(slots)) == 4
    llm, bodies = _model([_reply(), _reply()])
    out = adjudicate(slots, llm, max_conflicts=2)
    assert [c.key for c in out.conflicts] == ["k2", "k4"]
    prompt = _user_prompt(bodies[0])
    assert '"k2"' in prompt and '"k4"' in prompt and '"k1"' not in prompt and '"k3"' not in prompt


# -- validated answers ----------------------------------------------------------------------
def test_choose_is_accepted_through_lowercasing_after_two_calls() -> None:
    slots = _slots()
    choose = _res("database", "choose", value="  PostgreSQL ", rationale="user said so")
    llm, bodies = _model([_reply(choose), _reply(choose)])
    out = adjudicate(slots, llm)
    assert out.mode == "llm" and out.calls == 2 and len(bodies) == 2
    db = next(s for s in out.slots if s.key == "database")
    assert db.resolution is not None and db.resolution.outcome == "choose"
    assert db.resolution.value == "postgresql" and db.resolution.rationale == "user said so"
    assert db.state == slots[0].state and db.decision == slots[0].decision  # never mutated
    assert db.presented == ("postgresql",) and db.status == "adjudicated"
    assert next(s for s in out.slots if s.key == "timeout") is slots[1]
    # the second call lists the options reversed
    fwd, back = _user_prompt(bodies[0]), _user_prompt(bodies[1])
    assert 'c1.o1: value "mysql"' in fwd and 'c1.o1: value "postgresql"' in back
    assert all(b["temperature"] == 0 for b in bodies)


def test_an_invented_value_is_rejected_and_the_tie_stands() -> None:
    sqlite = _res("database", "choose", value="sqlite")
    llm, _ = _model([_reply(sqlite), _reply(sqlite)])
    out = adjudicate(_slots(), llm)
    assert out.mode == "llm" and out.calls == 2
    assert all(s.resolution is None for s in out.slots)
    assert out.slots[0].status == "disputed"


def test_an_option_id_maps_to_its_value_in_each_order() -> None:
    # forward c1.o1 = mysql; reversed, mysql is c1.o2
    llm, _ = _model(
        [
            _reply(_res("database", "choose", value="c1.o1")),
            _reply(_res("database", "choose", value="c1.o2")),
        ]
    )
    out = adjudicate(_slots(), llm)
    r = out.slots[0].resolution
    assert r is not None and r.outcome == "choose" and r.value == "mysql"


def test_a_flip_between_orders_is_unresolvable_and_order_sensitive() -> None:
    llm, _ = _model(
        [
            _reply(_res("database", "choose", value="postgresql")),
            _reply(_res("database", "choose", value="mysql")),
        ]
    )
    out = adjudicate(_slots(), llm)
    r = out.slots[0].resolution
    assert r is not None and r.outcome == "unresolvable" and r.order_sensitive
    assert out.slots[0].status == "disputed" and not out.slots[0].asserted
    # an outcome flip is order-sensitive too
    llm, _ = _model([_reply(_res("database", "both")), _reply(_res("database", "unresolvable"))])
    r = adjudicate(_slots(), llm).slots[0].resolution
    assert r is not None and r.outcome == "unresolvable" and r.order_sensitive


def test_a_resolution_without_a_counterpart_is_rejected() -> None:
    llm, _ = _model([_reply(_res("database", "both")), _reply()])
    out = adjudicate(_slots(), llm)
    assert out.calls == 2 and out.slots[0].resolution is None
    # without the symmetry check the single answer stands, after one call
    llm, bodies = _model([_reply(_res("database", "both"))])
    out = adjudicate(_slots(), llm, symmetry=False)
    assert out.calls == 1 and len(bodies) == 1
    r = out.slots[0].resolution
    assert r is not None and r.outcome == "both" and not r.order_sensitive


def test_unknown_duplicate_bad_and_guardless_answers_are_dropped() -> None:
    claims = [_claim(k, v, s) for k in ("a", "b", "c", "d") for v, s in (("x", "p"), ("y", "q"))]
    slots = build_slots(claims)
    answer = _reply(
        _res("nope", "both"),  # unknown key
        _res("a", "both"),
        _res("a", "unresolvable"),  # a answered twice
        _res("b", "maybe"),  # bad outcome
        _res("c", "conditional", guard="  "),  # empty guard
        _res("d", "CONDITIONAL", guard="on linux", premises=["os", 3, ""]),
    )
    llm, _ = _model([answer, answer])
    out = adjudicate(slots, llm)
    assert set(out.resolved) == {"d"}
    r = out.resolved["d"]
    assert r.outcome == "conditional" and r.guard == "on linux" and r.premises == ("os",)


# -- failures leave the slots untouched -----------------------------------------------------
def test_malformed_output_leaves_the_slots_untouched() -> None:
    slots = _slots()
    llm, _ = _model(["I think postgres wins, honestly."])
    out = adjudicate(slots, llm)
    assert out.mode == "error" and out.calls == 1 and out.reason is not None
    assert out.reason.startswith("malformed JSON")
    assert out.slots == tuple(slots) and all(s.resolution is None for s in out.slots)
    assert [c.key for c in out.conflicts] == ["database"]
    # a bad second answer throws the first away too
    llm, _ = _model([_reply(_res("database", "both")), '{"resolutions": "none"}'])
    out = adjudicate(slots, llm)
    assert out.mode == "error" and out.calls == 2 and out.slots == tuple(slots)


def test_a_failed_call_is_an_error_not_an_exception() -> None:
    llm, _ = _model([], status=401)
    out = adjudicate(_slots(), llm)
    assert out.mode == "error" and out.reason == "the model call failed: auth failed"
    assert all(s.resolution is None for s in out.slots)


# -- integration: alignment -> slots -> adjudication ----------------------------------------
def test_alignment_then_slots_then_adjudication_in_one_flow() -> None:
    choose = _reply(_res("database.engine", "choose", value="PostgreSQL"))
    llm, bodies = _model([json.dumps({"slots": [DB_SLOT]}), choose, choose])
    alignment = align(_branches(), llm)
    assert alignment.mode == "llm"
    slots = build_slots(alignment.claims, types=alignment.types)
    (db,) = slots
    assert db.decision.outcome == "disputed" and db.type == "decision"
    out = adjudicate(slots, llm)
    assert len(bodies) == 3 and out.mode == "llm"
    (settled,) = out.slots
    assert settled.presented == ("postgresql",) and settled.decision == db.decision
    (conflict,) = out.conflicts
    assert isinstance(conflict, Conflict)
    assert conflict.options[1].quotes == ("The database is PostgreSQL.",)


# -- live tier: the real loopback server ----------------------------------------------------
def test_live_adjudication_over_the_loopback_server() -> None:
    choose = _reply(_res("database", "choose", value="mysql"))
    with openai_server() as server:
        server.replies += [choose, choose]
        llm = LLM(server.url, server.model, api_key="k", env={})
        out = adjudicate(_slots(), llm)
    assert out.mode == "llm" and out.calls == 2 and len(server.requests) == 2
    assert out.slots[0].resolution is not None and out.slots[0].resolution.value == "mysql"
    assert all(b["temperature"] == 0 for b in server.requests)
    assert "c1.o2" in _user_prompt(server.requests[0])


class _Scripted:
    """A model that answers the adjudication prompt with ``answer`` and anything else (the
    alignment call) with nothing, so claims come from the extractor."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.asked: list[str] = []

    def chat(self, messages: Any, **options: Any) -> Any:
        from dataclasses import dataclass

        @dataclass
        class Reply:
            text: str
            truncated: bool = False

        if "Several agent sessions disagree" not in messages[0]["content"]:
            return Reply("{}")
        self.asked.append(messages[-1]["content"])
        return Reply(self.answer)


def test_the_model_adjudicates_only_the_ties_a_strategys_hook_left_open() -> None:
    import ctxsdk as cx
    from ctxsdk.merge import Strategy
    from ctxsdk.testing import LogBuilder

    def said(sid: str, lines: list[str]) -> cx.Session:
        b = LogBuilder(session_id=sid, runtime_context=None)
        for line in lines:
            b.turn(line).assistant(text="OK.").end_turn()
        return cx.Session.from_events(b.header, b.events)

    a = said("api-team", ["The queue broker is Kafka.", "The region is eu-west."])
    b = said("ops-team", ["The queue broker is RabbitMQ.", "The region is us-east."])
    llm = _Scripted(_reply(_res("region", "choose", value="us-east")))
    kafka = Strategy(
        "kafka_shop",
        resolve=lambda opts: next((o for o in opts if o.value == "kafka"), None),
    )
    r = cx.Merge([a, b], llm=llm).strategy(kafka).run()
    # the model saw only the tie the hook left open, asked in both orders
    assert len(llm.asked) == 2 and all("queue broker" not in p for p in llm.asked)
    assert r.decider("queue broker") == "kafka_shop (resolve)"
    assert r.decider("region") == "adjudication"
    assert r.slot("region").presented == ("us-east",)
    lines = r.text.splitlines()
    assert "tie broken by strategy kafka_shop" in next(x for x in lines if "queue broker" in x)
    assert "tie broken by adjudication" in next(x for x in lines if "`region`" in x)
    assert "_Notes: 1 adjudicated; 1 decided by strategy kafka_shop" in r.text
