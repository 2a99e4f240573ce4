"""Merge strategies: the score, resolve and extract hooks, the gates every hook passes
through (redaction, trust, the tied values), the block's label for who decided, and the
comparison and benchmark tables with the built-ins beside a user's strategy."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import polars as pl
import pytest

import ctxsdk as cx
from ctxsdk.errors import InvalidArgument, UnknownName
from ctxsdk.merge import EGALITARIAN, ELITIST, Branch, Candidate, Claim, Resolution, Strategy, Trust
from ctxsdk.merge._ruling import rule
from ctxsdk.merge._strategy import by_supports
from ctxsdk.merge.kernel import STRATEGIES, build_slots, egalitarian
from ctxsdk.testing import LogBuilder


def _session(sid: str, turns: list[tuple[str, str]]) -> cx.Session:
    b = LogBuilder(session_id=sid, runtime_context=None)
    for user, assistant in turns:
        b.turn(user).assistant(text=assistant).end_turn()
    return cx.Session.from_events(b.header, b.events)


def _tied() -> list[cx.Session]:
    """Two users disagree on the broker (a true tie, 8 against 8); one agrees on the
    database with the other's assistant."""
    a = _session(
        "api-team",
        [("The queue broker is Kafka.", "OK."), ("The database is PostgreSQL.", "Noted.")],
    )
    b = _session(
        "web-team",
        [("The queue broker is RabbitMQ.", "OK."), ("Set it up.", "The database is PostgreSQL.")],
    )
    return [a, b]


def _prefer(value: str) -> Any:
    def resolve(options: tuple[Candidate, ...]) -> Candidate | None:
        return next((o for o in options if o.value == value), None)

    return resolve


def test_builtins_are_strategies_written_with_the_hooks() -> None:
    assert STRATEGIES == {"egalitarian": EGALITARIAN, "elitist": ELITIST}
    assert EGALITARIAN.hooks == ("score",) and EGALITARIAN.builtin
    m = cx.Merge(_tied())
    # the name, the Strategy and a Candidate score computing the same sum decide alike
    same = Strategy("sum", score=lambda c: egalitarian(c.supports))
    by_name = {s.key: str(s.decision) for s in m.score("egalitarian").slots()}
    assert {s.key: str(s.decision) for s in m.strategy(EGALITARIAN).slots()} == by_name
    assert {s.key: str(s.decision) for s in m.strategy(same).slots()} == by_name
    with pytest.raises(UnknownName):
        m.strategy("nope")
    with pytest.raises(InvalidArgument):
        Strategy("")
    with pytest.raises(InvalidArgument):
        Strategy("x", resolve="first")  # type: ignore[arg-type]


def test_the_builtins_decide_real_sessions_as_the_pair_scores_do() -> None:
    # a Candidate-level score equal to the pair score decides every real slot the same way,
    # the time rules included (the sample sessions have real times)
    from ctxsdk.samples import real_sample

    names = ("claude-code", "claude-code-spotter", "codex", "gemini-cli", "openhands")
    sessions = [cx.Session.open_any(real_sample(n)) for n in names]
    m = cx.Merge(sessions)
    lifted = Strategy("lifted", score=lambda c: egalitarian(c.supports))
    want = [(s.key, str(s.decision), s.later) for s in m.slots()]
    assert want and [(s.key, str(s.decision), s.later) for s in m.strategy(lifted).slots()] == want


def test_a_score_hook_sees_the_claims_not_only_pairs() -> None:
    seen: list[Candidate] = []

    def assistants_first(c: Candidate) -> int:
        seen.append(c)
        return sum(1 for claim in c.claims if claim.origin == "assistant")

    r = cx.Merge(_tied()).strategy(Strategy("assistants_first", score=assistants_first)).run()
    assert r.slot("database").presented == ("postgresql",)
    assert r.decider("database") == "assistants_first"
    db = next(c for c in seen if c.key == "database")
    assert {c.origin for c in db.claims} == {"user", "assistant"} and db.evidence == 4
    assert db.slot.key == "database" and db.sources == ("api-team", "web-team")
    assert r.score == "assistants_first"


def test_a_resolve_hook_decides_a_tie_and_the_block_says_so() -> None:
    mine = Strategy("kafka_shop", resolve=_prefer("kafka"))
    r = cx.Merge(_tied()).strategy(mine).run()
    broker = r.slot("queue broker")
    assert broker.decision.outcome == "disputed"  # the merge's own decision is kept
    assert broker.resolution is not None and broker.resolution.value == "kafka"
    assert broker.presented == ("kafka",)
    assert r.decider("queue broker") == "kafka_shop (resolve)"
    assert r.decider("database") == "kafka_shop"  # its score is the built-in's, by its name
    line = next(x for x in r.text.splitlines() if "queue broker" in x)
    assert "tie broken by strategy kafka_shop" in line and "adjudicat" not in line
    assert "1 decided by strategy kafka_shop" in r.text and "adjudicated" not in r.text
    assert r.block.tokens <= r.budget
    df = r.to_polars()
    assert df.filter(pl.col("key") == "queue broker")["decided_by"][0] == "kafka_shop (resolve)"
    # without the hook the same tie stays disputed, labelled by no one
    plain = cx.Merge(_tied()).run()
    assert plain.slot("queue broker").status == "disputed" and not plain.decider("queue broker")


def test_a_relabelled_block_stays_within_a_tight_budget() -> None:
    mine = Strategy("a_rather_long_strategy_name_for_kafka", resolve=_prefer("kafka"))
    m = cx.Merge(_tied()).strategy(mine)
    for budget in (90, 110, 130, 160, 400):
        r = m.budget(budget).run()
        assert r.block.tokens <= budget and r.block.budget == budget
        tk = cx.session.get_tokenizer("cl100k_base")
        assert tk.count(r.text) <= budget


def test_a_resolve_hook_cannot_pick_an_untrusted_value() -> None:
    a, b = _tied()
    # the web-team session is untrusted: a rule may not promote its RabbitMQ to a belief
    m = cx.Merge([a, b], trust={"api-team": "external", "web-team": "untrusted"})
    r = m.strategy(Strategy("rabbit", resolve=_prefer("rabbitmq"))).run()
    broker = r.slot("queue broker")
    assert broker.status == "disputed" and broker.resolution is None
    assert [k for k, _ in r.refused] == ["queue broker"]
    assert "untrusted" in r.refused[0][1] and not r.decider("queue broker")
    assert "tie broken" not in r.text
    # the trusted side may be chosen
    ok = m.strategy(Strategy("kafka", resolve=_prefer("kafka"))).run()
    assert ok.slot("queue broker").presented == ("kafka",) and not ok.refused


def test_a_resolve_hook_cannot_invent_or_pick_a_redacted_value() -> None:
    claims = [
        Claim(
            "api key",
            "[REDACTED:openai]",
            4,
            "the api key is [REDACTED:openai]",
            "a",
            1,
            trust=int(Trust.EXTERNAL),
        ),
        Claim("api key", "abc", 4, "the api key is abc", "b", 1, trust=int(Trust.EXTERNAL)),
    ]
    slots = build_slots(claims)
    assert slots[0].decision.outcome == "disputed"
    pick_redacted = Strategy("r", resolve=lambda opts: opts[0])
    out = rule(slots, pick_redacted)
    assert out.slots[0].resolution is None and "redacted" in out.refused[0][1]
    invent = Strategy("i", resolve=lambda opts: "something-else")
    out = rule(slots, invent)
    assert out.slots[0].resolution is None and "not one of the tied values" in out.refused[0][1]
    both = Strategy("b", resolve=lambda opts: Resolution("both"))
    assert rule(slots, both).slots[0].resolution is None  # asserts the redacted one too
    by_string = Strategy("s", resolve=lambda opts: "ABC")  # a value, as said, any case
    got = rule(slots, by_string).slots[0].resolution
    assert got is not None and got.value == "abc" and got.rationale == "decided by strategy s"


def test_a_hook_cannot_launder_trust_and_the_trust_check_still_runs() -> None:
    # an extract hook that labels its claim TRUSTED on an external source gets the source's
    # trust: the block keeps the EXTERNAL banner, and the trust check finds nothing to refuse
    def trusted(branch: Branch) -> Iterable[Claim]:
        return [
            Claim(
                "region",
                "eu-west",
                4,
                "The region is eu-west.",
                branch.id,
                1,
                trust=int(Trust.TRUSTED),
            )
        ]

    r = cx.Merge(_tied()).strategy(Strategy("x", extract=trusted)).run()
    assert {c.trust for c in r.slot("region").claims} == {int(Trust.EXTERNAL)}
    assert not r.violations and "EXTERNAL BACKGROUND" in r.text
    # the trust check runs on a strategy's slots as on the built-ins': an unlabelled claim
    # (which no gate lets through, so it is made here) fails it and nothing is injected
    from ctxsdk.merge._trust import presented_trust
    from ctxsdk.merge.kernel import check_trust

    slot = r.slot("region")
    bare = [Claim("region", "eu-west", 4, "The region is eu-west.", "x", 1)]
    bad = type(slot)(slot.key, slot.state, slot.decision, tuple(bare))
    assert check_trust([bad], {bad.key: presented_trust(bad)})


def test_an_extract_hook_replaces_the_claims_under_the_same_gates() -> None:
    token = "sk-" + "proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4"

    def extract(branch: Branch) -> Iterable[Claim] | None:
        if branch.id == "web-team":
            return None  # the built-in claims of this branch
        return [
            Claim(
                "deploy target",
                "kubernetes",
                4,
                "We deploy to kubernetes.",
                "spoofed",
                3,
                trust=int(Trust.TRUSTED),
            ),
            Claim("api token", token, 4, f"the token is {token}", branch.id, 4),
        ]

    r = cx.Merge(_tied()).strategy(Strategy("mine", extract=extract)).run()
    keys = {s.key for s in r.slots}
    assert "deploy target" in keys and "api token" not in keys
    target = r.slot("deploy target").claims[0]
    assert target.source == "api-team"  # a hook's claim is its branch's
    assert target.trust == int(Trust.EXTERNAL)  # never above its branch's trust
    assert token not in r.text and r.block.withheld >= 1
    # api-team's built-in claims are replaced, web-team's kept
    broker = r.slot("queue broker")
    assert broker.sources == ("web-team",) and broker.presented == ("rabbitmq",)


def test_compare_holds_the_builtins_and_a_users_strategy() -> None:
    mine = Strategy("kafka_shop", resolve=_prefer("kafka"))
    df = cx.Merge.compare([EGALITARIAN, "elitist", mine], _tied())
    assert df.columns == [
        "key",
        "type",
        "egalitarian",
        "elitist",
        "kafka_shop",
        "differs",
        "opinions",
    ]
    row = df.filter(pl.col("key") == "queue broker").row(0, named=True)
    assert row["egalitarian"] == "disputed{kafka,rabbitmq}" and row["kafka_shop"] == "kafka"
    assert row["differs"] is True
    # a plain score function still works, named by itself or by a mapping
    df2 = cx.Merge.compare({"eg": "egalitarian", "most": lambda s: len(s)}, _tied())
    assert df2.columns[2:4] == ["eg", "most"]
    with pytest.raises(InvalidArgument):  # two strategies by one name
        cx.Merge.compare([EGALITARIAN, Strategy("egalitarian", score=by_supports(len))], _tied())


def test_mergebench_scores_strategies_and_the_users_sessions_in_one_table() -> None:
    from ctxsdk.bench import mergebench

    mine = Strategy("kafka_shop", resolve=_prefer("kafka"))
    df = mergebench([mine], sessions=_tied(), seeds=2)
    assert isinstance(df, pl.DataFrame)
    assert df["strategy"].to_list() == ["egalitarian", "elitist", "kafka_shop"]
    assert {"bridge", "local", "unambig", "invent", "tokens"} <= set(df.columns)
    assert {"slots", "disputed", "hook_decided", "kept", "block_tokens"} <= set(df.columns)
    by = {r["strategy"]: r for r in df.iter_rows(named=True)}
    assert by["kafka_shop"]["hook_decided"] == 1 and by["egalitarian"]["hook_decided"] == 0
    assert by["egalitarian"]["disputed"] == by["kafka_shop"]["disputed"] + 1
    assert by["egalitarian"]["invent"] == 0.0 and 0.0 <= by["egalitarian"]["bridge"] <= 1.0


def test_a_ruling_that_leaves_the_tie_open_decides_nothing() -> None:
    shrug = Strategy("shrug", resolve=lambda opts: Resolution("unresolvable", rationale="no idea"))
    r = cx.Merge(_tied()).strategy(shrug).run()
    broker = r.slot("queue broker")
    assert broker.status == "disputed" and broker.resolution is not None
    assert broker.resolution.rationale == "decided by strategy shrug: no idea"
    assert r.decider("queue broker") == "" and "tie broken" not in r.text
    both = Strategy("both", resolve=lambda opts: Resolution("both"))
    b = cx.Merge(_tied()).strategy(both).run()
    assert b.decider("queue broker") == "both (resolve)"
    assert "both hold (strategy both):" in b.text and "adjudicated" not in b.text


def test_mergebench_adds_the_seeds_arms_and_its_published_rows_when_present() -> None:
    from ctxsdk.bench import mergebench
    from ctxsdk.bench._merge import _shared_data

    df = mergebench(builtins=True, baselines=True, published=True)
    names = df["strategy"].to_list()
    assert names[:5] == [
        "egalitarian",
        "elitist",
        "baseline:none",
        "baseline:single:branch-a",
        "baseline:concat",
    ]
    by = {r["strategy"]: r for r in df.iter_rows(named=True)}
    assert by["baseline:none"]["bridge"] == 0.0
    assert by["egalitarian"]["bridge"] > by["baseline:concat"]["bridge"]
    if _shared_data() is None:
        assert len(names) == 5  # the published rows need the seed's data file
    else:
        published = by["published:concat"]
        assert published["bridge"] == pytest.approx(by["baseline:concat"]["bridge"], abs=0.03)
    # a run the seed did not publish gets no published rows
    other = mergebench(seeds=2, published=True)
    assert not any(n.startswith("published:") for n in other["strategy"].to_list())


def test_a_ruled_tie_a_derivation_retracts_keeps_its_strategys_label() -> None:
    def extract(branch: Branch) -> Iterable[Claim]:
        mine = {"api-team": ("kafka", "eu-west"), "web-team": ("rabbitmq", "us-east")}
        broker, region = mine[branch.id]
        routes = (("region",),) if branch.id == "api-team" else ()
        return [
            Claim(
                "queue broker",
                broker,
                4,
                f"The queue broker is {broker}.",
                "x",
                1,
                derived_from=routes,
            ),
            Claim("region", region, 4, f"The region is {region}.", "x", 2),
        ]

    def kafka(options: tuple[Candidate, ...]) -> Candidate | None:
        return next((o for o in options if o.value == "kafka"), None)  # region stays open

    r = cx.Merge(_tied()).strategy(Strategy("k", resolve=kafka, extract=extract)).run()
    broker = r.slot("queue broker")
    assert broker.status == "retracted" and r.decider("queue broker") == "k (resolve)"
    lines = r.text.splitlines()
    at = next(i for i, x in enumerate(lines) if "`queue broker`" in x)
    assert "tie broken by strategy k" in lines[at] and "RETRACTED" in lines[at + 1]
    assert "adjudicat" not in r.text and r.block.tokens <= r.budget


def test_a_candidate_score_passed_as_a_pair_score_says_where_it_belongs() -> None:
    def by_claims(c: Candidate) -> int:
        return len(c.claims)

    with pytest.raises(InvalidArgument, match=r"by_claims.*Strategy\(name, score=fn\)"):
        cx.Merge(_tied()).score(by_claims).run()
    # given as a strategy's score hook, the same function decides
    r = cx.Merge(_tied()).strategy(Strategy("by_claims", score=by_claims)).run()
    assert r.decider("database") == "by_claims"
