"""Time between sessions (``ctxsdk.merge._order``): a value the score outweighed that only
later sessions state keeps the slot disputed; unordered sessions leave the score alone."""

from __future__ import annotations

import ctxsdk as cx
from ctxsdk.merge._beliefs import build_slots
from ctxsdk.merge._claims import Claim
from ctxsdk.merge._order import later_values
from ctxsdk.testing import LogBuilder

DAY = 86_400_000
T0 = 1_790_000_000_000


def _session(sid: str, turns: list[tuple[str, str]], created_at: int = T0) -> cx.Session:
    b = LogBuilder(session_id=sid, runtime_context=None, created_at=created_at)
    for user, assistant in turns:
        b.turn(user).assistant(text=assistant).end_turn()
    return cx.Session.from_events(b.header, b.events)


def _user() -> list[tuple[str, str]]:
    return [("Set up the service.", "OK."), ("The database is PostgreSQL.", "Noted.")]


def _assistant() -> list[tuple[str, str]]:
    return [("Check the service config.", "The database is MySQL.")]


def test_a_later_sessions_assistant_disputes_an_earlier_users_value() -> None:
    a = _session("mon-user", _user(), T0)
    b = _session("tue-assistant", _assistant(), T0 + DAY)
    r = cx.Merge([a, b]).run()
    slot = r.slot("database")
    assert slot.status == "disputed" and slot.later == ("mysql",)
    assert set(slot.presented) == {"postgresql", "mysql"}
    assert "a later session says otherwise" in r.text
    assert "**MySQL** — " in r.text and "later)" in r.text  # each side with its evidence
    assert "(evidence 4; from mon-user)" in r.text


def test_a_later_users_value_supersedes_an_earlier_assistants() -> None:
    a = _session("tue-user", _user(), T0 + DAY)
    b = _session("mon-assistant", _assistant(), T0)
    slot = cx.Merge([a, b]).run().slot("database")
    assert slot.status == "resolved" and slot.presented == ("postgresql",) and not slot.later


def test_sessions_whose_times_overlap_are_decided_by_the_score() -> None:
    a = _session("same-user", _user(), T0)
    b = _session("same-assistant", _assistant(), T0)  # one clock: no order
    slot = cx.Merge([a, b]).run().slot("database")
    assert slot.status == "resolved" and slot.presented == ("postgresql",)


def _claim(value: str, source: str, evidence: int) -> Claim:
    return Claim("db", value, evidence, f"db is {value}", source, 1, kind="fact")


def test_later_values_needs_every_backer_earlier_and_no_shared_source() -> None:
    votes = [_claim("pg", "a", 4), _claim("pg", "c", 2), _claim("my", "b", 2)]
    spans = {"a": (0, 10), "b": (20, 30), "c": (25, 40)}
    assert later_values("pg", votes, spans) == ()  # c backs pg and ran as late as b
    spans["c"] = (0, 5)
    assert later_values("pg", votes, spans) == ("my",)
    assert later_values("pg", votes, {"a": (0, 10), "b": (20, 30)}) == ()  # c's time unknown


def test_build_slots_without_spans_is_the_score_alone() -> None:
    claims = [_claim("pg", "a", 4), _claim("my", "b", 2)]
    (slot,) = build_slots(claims)
    assert slot.decision.outcome == "resolved" and slot.later == ()
    (slot,) = build_slots(claims, spans={"a": (0, 10), "b": (20, 30)})
    assert slot.decision.tied == ("my", "pg") and slot.later == ("my",)


def test_a_later_users_explicit_correction_settles_a_tie_of_users() -> None:
    said = [("Set up the client.", "OK."), ("Set the request timeout to 30 seconds.", "OK.")]
    fix = [
        ("Check the client.", "OK."),
        ("The request timeout is not 30 seconds, it is 60 seconds.", "Noted."),
    ]
    slot = (
        cx.Merge([_session("mon", said, T0), _session("tue", fix, T0 + DAY)])
        .run()
        .slot("request timeout")
    )
    assert slot.status == "resolved" and slot.presented == ("60 seconds",)
    # the correction is the earlier one: the later plain value is not answered by it
    slot = (
        cx.Merge([_session("mon", fix, T0), _session("tue", said, T0 + DAY)])
        .run()
        .slot("request timeout")
    )
    assert slot.status == "disputed"


def test_a_later_value_without_a_correction_stays_a_tie() -> None:
    said = [("Set up the client.", "OK."), ("Set the request timeout to 30 seconds.", "OK.")]
    other = [("Check the client.", "OK."), ("Set the request timeout to 60 seconds.", "OK.")]
    slot = (
        cx.Merge([_session("mon", said, T0), _session("tue", other, T0 + DAY)])
        .run()
        .slot("request timeout")
    )
    assert slot.status == "disputed" and set(slot.presented) == {"30 seconds", "60 seconds"}
