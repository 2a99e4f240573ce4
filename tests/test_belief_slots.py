"""BeliefSlots' Python side: the payload it sends for a merge (one row per slot, the block),
a slot's provenance, re-running under another strategy or budget, and selecting an event.

The requests go through ``dispatch``, exactly what a custom message from the front end runs;
the front end is tested in a real JupyterLab in ``tests/ui/test_belief_slots_lab.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

import ctxsdk as cx
from ctxsdk.merge._merge import Merge, MergeResult
from ctxsdk.testing import LogBuilder
from ctxsdk.widgets import BeliefSlots
from ctxsdk.widgets._belief_slots import DROPPED, KEPT, SUPERSEDED_CLAIMS, _static_files


def _ask(w: BeliefSlots, type: str, **args: Any) -> Any:
    reply = w.dispatch({"id": "t1", "type": type, **args})
    assert reply is not None and reply["id"] == "t1"
    assert reply["ok"], reply
    return reply["result"]


def _error(w: BeliefSlots, type: str, **args: Any) -> dict[str, str]:
    reply = w.dispatch({"id": "t2", "type": type, **args})
    assert reply is not None and reply["ok"] is False, reply
    return dict(reply["error"])


def _user(sid: str, lines: Sequence[str]) -> cx.Session:
    b = LogBuilder(session_id=sid, runtime_context=None)
    for line in lines:
        b.turn(line).assistant(text="Noted.").end_turn()
    return cx.Session.from_events(b.header, b.events)


def _assistant(sid: str, text: str) -> cx.Session:
    """A session whose assistant says ``text`` (evidence 2, INFERRED)."""
    b = LogBuilder(session_id=sid, runtime_context=None)
    b.turn("Look at the config.").assistant(text=text).end_turn()
    return cx.Session.from_events(b.header, b.events)


def _tool(sid: str, text: str) -> cx.Session:
    """A session whose tool result says ``text`` (evidence 3, TOOL_VERIFIED)."""
    b = LogBuilder(session_id=sid, runtime_context=None)
    b.turn("Check the config.")
    b.assistant(tool_calls=[("read", {"path": "config.toml"})])
    b.tool_results([text])
    b.next_step().assistant(text="Done.")
    b.end_turn()
    return cx.Session.from_events(b.header, b.events)


def _rows(w: BeliefSlots) -> dict[str, dict[str, Any]]:
    cols = w._rows
    rows = [dict(zip(cols, r, strict=True)) for r in zip(*cols.values(), strict=True)]
    return {r["key"]: r for r in rows}


@pytest.fixture(scope="module")
def two() -> MergeResult:
    """Two users: a tie on the database, one linter, one formatter; session a switched its
    test framework (the earlier claim is superseded)."""
    a = _user(
        "aaaa1111-0000",
        [
            "The database is PostgreSQL.",
            "The linter is ruff.",
            "The test framework is jest.",
            "The test framework is pytest.",
        ],
    )
    b = _user("bbbb2222-0000", ["The database is MySQL.", "The formatter is black."])
    return Merge([a, b]).budget(400).run()


@pytest.fixture(scope="module")
def crafted() -> MergeResult:
    """Four assistants at evidence 2 (weights 2+2+2+2) say MySQL; one user at evidence 4
    (weight 8) says PostgreSQL: egalitarian ties, elitist picks PostgreSQL."""
    return (
        Merge(
            [
                *(_assistant(sid, "The database is MySQL.") for sid in ("a1", "b2", "d4", "e5")),
                _user("c3", ["The database is PostgreSQL."]),
            ]
        )
        .budget(400)
        .run()
    )


def test_the_payload_has_one_row_per_slot(two: MergeResult) -> None:
    w = BeliefSlots(two)
    rows = _rows(w)
    assert list(rows) == [s.key for s in two.slots]
    assert set(rows) == {"database", "formatter", "linter", "test framework"}
    db = rows["database"]
    assert db["status"] == "disputed" and db["value"] == "MySQL | PostgreSQL"  # the original case
    assert db["detail"] == "tied under the score, not guessed"
    assert (db["evidence"], db["trust"], db["sources"], db["claims"]) == (4, 1, 2, 2)
    assert rows["linter"]["status"] == "resolved" and rows["linter"]["value"] == "ruff"
    tf = rows["test framework"]
    assert tf["value"] == "pytest" and tf["flags"] & SUPERSEDED_CLAIMS and tf["claims"] == 2
    for s in two.slots:
        r = rows[s.key]
        assert r["status"] == s.status and r["evidence"] == s.max_evidence
        assert r["trust"] == int(two.trusts[s.key])
    # Everything fits in 400 tokens: every row is kept, at its layout position in the block.
    assert all(r["flags"] & KEPT and r["pos"] >= 0 for r in rows.values())
    kept = [s.key for s in two.block.slots]
    assert w._block["kept"] == kept
    assert [rows[k]["pos"] for k in kept] == list(range(len(kept)))
    assert w._block["text"] == two.block.text and w._block["budget"] == 400
    assert w._block["tokens"] == two.block.tokens and w._block["trust"] == "external"
    assert w.summary["score"] == "egalitarian" and w.summary["budget"] == 400
    assert [s["short"] for s in w.summary["sources"]] == [
        "aaaa1111-0000",
        "bbbb2222-0000",
    ]  # not UUIDs: shown whole
    assert w.summary["counts"]["disputed"] == 1 and w.summary["counts"]["resolved"] == 3
    assert w._strategy_names == ["egalitarian", "elitist"]
    assert w.result is two


def test_the_repr_says_what_it_shows(two: MergeResult) -> None:
    w = BeliefSlots(two)
    text = (
        "BeliefSlots(4 slots (3 resolved, 1 disputed), score egalitarian, "
        f"block {two.block.tokens}/400 tokens, 4 kept)"
    )
    assert repr(w) == repr(BeliefSlots(two)) == text
    bundle = w._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert data is not None and data["text/plain"] == text
    assert repr(two.widget()) == text  # MergeResult.widget() is this widget


def test_provenance_rows_carry_source_seq_quote_evidence_and_superseded(
    two: MergeResult,
) -> None:
    w = BeliefSlots(two)
    p = _ask(w, "provenance", key="database")
    assert p["status"] == "disputed"
    by_value = {c["value"]: c for c in p["claims"]}
    pg = by_value["postgresql"]
    slot = two.slot("database")
    claim = next(c for c in slot.claims if c.value == "postgresql")
    assert (pg["source"], pg["short"], pg["seq"]) == ("aaaa1111-0000", "aaaa1111-0000", claim.seq)
    assert pg["quote"] == "The database is PostgreSQL." == claim.text
    assert (pg["evidence"], pg["evidence_label"], pg["origin"]) == (4, "user-stated", "user")
    assert pg["title"] == "The database is PostgreSQL."  # the source session's title
    assert pg["superseded"] is False and pg["presented"] is True
    tf = _ask(w, "provenance", key="test framework")
    claims = {c["value"]: c for c in tf["claims"]}
    assert claims["jest"]["superseded"] is True and claims["jest"]["presented"] is False
    assert claims["pytest"]["superseded"] is False and claims["pytest"]["presented"] is True
    assert claims["jest"]["seq"] < claims["pytest"]["seq"]
    assert _error(w, "provenance", key="nope")["type"] == "NotFound"
    assert _error(w, "provenance", key=3)["type"] == "InvalidArgument"


def test_a_strategy_switch_changes_a_disputed_decision(crafted: MergeResult) -> None:
    w = BeliefSlots(crafted)
    db = _rows(w)["database"]
    assert db["status"] == "disputed" and db["value"] == "MySQL | PostgreSQL"  # as said
    assert db["evidence"] == 4
    rev = w.revision
    out = _ask(w, "rerun", score="elitist", budget=400)
    assert out == {"revision": rev + 1, "score": "elitist", "budget": 400}
    db = _rows(w)["database"]
    assert db["status"] == "resolved" and db["value"] == "PostgreSQL"
    assert w.result is not crafted and w.result.score == "elitist"
    assert w.summary["score"] == "elitist"
    assert "**PostgreSQL**" in w._block["text"]
    _ask(w, "rerun", score="egalitarian")
    assert _rows(w)["database"]["status"] == "disputed"


def test_custom_strategies_are_offered_and_used(crafted: MergeResult) -> None:
    def loudest(supports: Sequence[tuple[str, int]]) -> int:
        return len(supports)  # the most sources wins, evidence ignored

    w = BeliefSlots(crafted, strategies={"loudest": loudest})
    assert w._strategy_names == ["egalitarian", "elitist", "loudest"]
    _ask(w, "rerun", score="loudest")
    assert w.summary["score"] == "loudest"
    db = _rows(w)["database"]
    assert db["status"] == "resolved" and db["value"] == "MySQL"
    with pytest.raises(cx.errors.InvalidArgument):
        BeliefSlots(crafted, strategies={"elitist": loudest})
    with pytest.raises(cx.errors.InvalidArgument):
        BeliefSlots(crafted, strategies={"x": 3})  # type: ignore[dict-item]


def _many(n: int) -> MergeResult:
    a = _user("many-a", [" ".join(f"The k{i:03d} timeout is {i} seconds." for i in range(n))])
    b = _user(
        "many-b", [" ".join(f"The k{i:03d} timeout is {i + 1000} seconds." for i in range(0, n, 5))]
    )
    return Merge([a, b]).budget(300).run()


@pytest.fixture(scope="module")
def many() -> MergeResult:
    return _many(60)


def test_a_budget_change_changes_which_slots_are_kept(many: MergeResult) -> None:
    w = BeliefSlots(many)
    rows = _rows(w)
    assert len(rows) == 60
    kept = {k for k, r in rows.items() if r["flags"] & KEPT}
    dropped = {k: r["why"] for k, r in rows.items() if r["flags"] & DROPPED}
    assert kept and dropped and len(kept) + len(dropped) == 60
    assert set(w._block["kept"]) == kept
    assert dict(w._block["dropped"]) == {k: w for k, w in dropped.items() if w}
    assert all(dropped.values())  # every dropped row says why
    _ask(w, "rerun", budget=900)
    rows = _rows(w)
    more = {k for k, r in rows.items() if r["flags"] & KEPT}
    assert len(more) > len(kept) and w._block["budget"] == 900 and w.result.budget == 900
    assert w._block["tokens"] <= 900
    _ask(w, "rerun", budget=0)
    assert not w._block["kept"] and w._block["reason"]
    assert all(r["flags"] & DROPPED and r["why"] for r in _rows(w).values())


def test_bad_messages_are_answered_with_an_error_never_raised(crafted: MergeResult) -> None:
    w = BeliefSlots(crafted)
    before = (w.revision, dict(w._rows), w.result)
    for args in (
        {"score": "nope"},
        {"score": 3},
        {"budget": -1},
        {"budget": "many"},
        {"budget": True},
        {"budget": 10**9},
        {"budget": 1.5},
        {"bogus": 1},
    ):
        err = _error(w, "rerun", **args)
        assert err["type"] in ("InvalidArgument", "TypeError") and err["message"], args
    assert _error(w, "no_such_request")["type"] == "LookupError"
    assert _error(w, "select_event", session="a1", seq="x")["type"] == "InvalidArgument"
    assert _error(w, "select_event", session="zz", seq=1)["type"] == "NotFound"
    assert _error(w, "select_event", session="a1")["type"] == "TypeError"
    assert w.dispatch({"type": "rerun"}) is None  # no id: no request, no reply
    assert w.dispatch("garbage") is None
    assert (w.revision, dict(w._rows), w.result) == before  # nothing changed
    assert w.error.startswith("InvalidArgument") or w.error == ""
    # a later good request works and clears the error
    _ask(w, "rerun", budget=300.0)
    assert w.result.budget == 300 and w.error == ""


def test_a_rerun_error_inside_the_merge_is_reported(crafted: MergeResult) -> None:
    def broken(supports: Sequence[tuple[str, int]]) -> int:
        raise RuntimeError("this score is broken")

    w = BeliefSlots(crafted, strategies={"broken": broken})
    err = _error(w, "rerun", score="broken")
    assert err == {"type": "RuntimeError", "message": "this score is broken"}
    assert w.error == "RuntimeError: this score is broken"
    assert w.result is crafted


def test_clicking_a_seq_selects_the_event(crafted: MergeResult) -> None:
    w = BeliefSlots(crafted)
    assert w.selected_event is None
    claim = next(c for c in crafted.slot("database").claims if c.source == "c3")
    out = _ask(w, "select_event", session="c3", seq=claim.seq)
    assert out == w.selected_event == {"session": "c3", "seq": claim.seq}
    p = _ask(w, "provenance", key="database")
    c3 = next(c for c in p["claims"] if c["source"] == "c3")
    assert (c3["origin"], c3["evidence"], c3["quote"]) == (
        "user",
        4,
        "The database is PostgreSQL.",
    )


def test_construction_is_strict(crafted: MergeResult) -> None:
    with pytest.raises(TypeError, match="MergeResult"):
        BeliefSlots("result")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="did you mean 'height'"):
        BeliefSlots(crafted, heigth=300)
    w = BeliefSlots(crafted, height=300, page_size=20)
    assert (w.height, w.page_size) == (300, 20)
    with pytest.raises(cx.errors.InvalidArgument):
        BeliefSlots(crafted, page_size=0)


def test_a_large_merge_keeps_the_payload_compact() -> None:
    import json

    r = _many(250)
    w = BeliefSlots(r)
    assert len(w._rows["key"]) == 250
    size = len(json.dumps(w._rows)) + len(json.dumps(w._block))
    assert size < 250 * 400, size  # columns, no quotes: provenance comes on request


def test_the_front_end_files_exist() -> None:
    for p in _static_files():
        assert p.is_file(), p
    assert "createChannel" in BeliefSlots._esm and "as default" in BeliefSlots._esm
    assert ".cx-slots" in BeliefSlots._css and ".cx-root" in BeliefSlots._css


def test_adjudicated_and_retracted_rows_say_their_outcome(two: MergeResult) -> None:
    import dataclasses

    from ctxsdk.merge._beliefs import Derivation, Resolution

    slots = []
    for s in two.slots:
        if s.key == "database":
            s = dataclasses.replace(
                s, resolution=Resolution("choose", value="postgresql", rationale="newer")
            )
        elif s.key == "linter":
            s = dataclasses.replace(
                s, derivation=Derivation("retracted", routes=(("ci",),), unmet=("ci",))
            )
        slots.append(s)
    r = dataclasses.replace(two, slots=tuple(slots))
    w = BeliefSlots(r)
    rows = _rows(w)
    db, linter = rows["database"], rows["linter"]
    assert (db["status"], db["value"], db["detail"]) == (
        "adjudicated",
        "PostgreSQL",
        "adjudicated: chose PostgreSQL",
    )
    assert linter["status"] == "retracted" and linter["detail"] == "unmet premises: ci"
    assert w.summary["counts"]["adjudicated"] == 1 and w.summary["counts"]["retracted"] == 1
    p = _ask(w, "provenance", key="database")
    assert p["resolution"]["outcome"] == "choose" and p["resolution"]["rationale"] == "newer"
    assert _ask(w, "provenance", key="linter")["derivation"]["unmet"] == ["ci"]


def test_a_dispute_kept_open_by_a_later_session_says_so() -> None:
    def session(sid: str, user: str, assistant: str, at: int) -> cx.Session:
        b = LogBuilder(session_id=sid, runtime_context=None, created_at=at)
        b.turn(user).assistant(text=assistant).end_turn()
        return cx.Session.from_events(b.header, b.events)

    day = 86_400_000
    monday = session("mon-user", "The database is PostgreSQL.", "Noted.", 1_790_000_000_000)
    tuesday = session(
        "tue-bot", "Check the config.", "The database is MySQL.", 1_790_000_000_000 + day
    )
    db = _rows(BeliefSlots(cx.Merge([monday, tuesday]).run()))["database"]
    assert db["status"] == "disputed"
    assert db["detail"] == "a later session says otherwise (MySQL), not guessed"


def _prefer_postgres(options: tuple[Any, ...]) -> Any:
    return next((o for o in options if o.value == "postgresql"), None)


def test_a_users_strategy_sits_beside_the_builtins(two: MergeResult) -> None:
    from ctxsdk.merge import Strategy

    mine = Strategy("postgres_shop", resolve=_prefer_postgres, description="Postgres wins a tie")
    w = BeliefSlots(two, strategies=[mine])
    assert w._strategy_names == ["egalitarian", "elitist", "postgres_shop"]
    # comparing is on with a strategy of one's own: every offered strategy's decision per row
    cmp = w._compare
    assert cmp["names"] == ["egalitarian", "elitist", "postgres_shop"]
    keys = w._rows["key"]
    db = keys.index("database")
    assert cmp["decisions"]["egalitarian"][db] == "disputed{mysql,postgresql}"
    assert cmp["decisions"]["postgres_shop"][db] == "postgresql"
    assert cmp["differs"][db] is True and cmp["differs"][keys.index("linter")] is False
    # each row says what decided it
    rows = _rows(w)
    assert rows["linter"]["by"] == "egalitarian" and rows["database"]["by"] == ""
    _ask(w, "rerun", score="postgres_shop")
    rows = _rows(w)
    assert rows["database"]["status"] == "ruled"
    assert rows["database"]["by"] == "postgres_shop (resolve)"
    assert rows["database"]["detail"] == "ruled by postgres_shop: chose PostgreSQL"
    assert w.summary["strategy"] == {
        "name": "postgres_shop",
        "hooks": ["resolve"],
        "description": "Postgres wins a tie",
    }
    assert w.summary["counts"]["ruled"] == 1 and w.summary["counts"]["adjudicated"] == 0
    p = _ask(w, "provenance", key="database")
    assert p["status"] == "ruled" and p["by"] == "postgres_shop (resolve)"
    assert "tie broken by strategy postgres_shop" in w._block["text"]


def test_a_result_made_by_a_users_strategy_offers_it_and_compare_can_be_off(
    two: MergeResult,
) -> None:
    from ctxsdk.merge import Strategy

    mine = Strategy("postgres_shop", resolve=_prefer_postgres)
    r = two.rerun(score=mine)
    w = BeliefSlots(r, compare=False)
    assert w._strategy_names == ["egalitarian", "elitist", "postgres_shop"]
    assert w._compare == {} and w.summary["score"] == "postgres_shop"
    _ask(w, "rerun", score="elitist")
    _ask(w, "rerun", score="postgres_shop")
    assert w.result.decider("database") == "postgres_shop (resolve)"
    with pytest.raises(cx.errors.InvalidArgument):
        BeliefSlots(two, strategies=[Strategy("elitist", resolve=_prefer_postgres)])
