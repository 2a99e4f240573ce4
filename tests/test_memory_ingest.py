"""Memory ingestion: the rule extractor on the seed's P2 session A, every rule and its
negatives, caps, dedupe, until, secrets, observations and the merge rule."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

import ctxsdk as cx
from ctxsdk.memory._ingest import (
    Caps,
    Extraction,
    extract,
    merge_target,
    merged,
    observations,
    parse_until,
    refuse_secret,
)
from ctxsdk.memory._model import Candidate, Node, Source
from ctxsdk.testing import LogBuilder, ToolOutput

MONDAY = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)  # a Monday
KEY = "sk-" + "".join(["a1B2c3D4"] * 3)  # assembled at runtime: no literal token shape

TOOL_TURN = "在 dsh-trivium 里建 x/y 目录。"
SESSION_A: list[str | None] = [
    "我们在做 dsh-trivium，它是 DeepSeek_Harness 的一个插件。",
    "底层存储用 TriviumDB，每个工作区一个文件。",
    "记住：鉴权走 header X，由 AuthGateway 校验 X-Request-Id。",
    "以后都用 pnpm 装依赖，不要用 npm。",
    "README 以后都用英文写。",
    "从现在起，回答我时请用中文。",
    "Always run the tests before you commit.",
    "今天天气不错啊，外面好晒。",  # N1 weather chit-chat
    "AuthGateway 的重构先别动，下周再说。",
    "我们采用方案 A：TriviumDB 只在一个进程里打开。",
    "就用这个单文件的方案，不要拆成多个模块。",
    "Let's postpone the DeepSeek_Harness migration until Friday.",
    None,  # the failed-then-ok bash pair
    "Just change this file: always use tabs in it.",  # N2 one-shot
    f"配置里写 api_key={KEY}，记住它。",  # N3 secret
    "嗯好的",  # N4 chit-chat
    "「鉴权」这块要小心，「鉴权」出错会很麻烦。",  # N5 quoted term, not an entity
    "TriviumDB 的文件别让两个 Node 进程同时打开。",
    "X-Request-Id 要打印到 AuthGateway 的日志里。",
    "dsh-trivium 升级后要重启 dsh web。",
    "thanks, that's all for today!",
]


def _session(prompts: list[str | None], session_id: str = "session-a") -> cx.Session:
    b = LogBuilder(session_id=session_id, runtime_context=None)
    for p in prompts:
        if p is None:
            b.turn(TOOL_TURN).assistant(tool_calls=[("bash", {"cmd": "mkdir x/y"})])
            err = "mkdir: cannot create directory 'x/y': No such file or directory"
            b.tool_results([ToolOutput.failed(err, "ExitCode", "1")]).next_step()
            b.assistant(tool_calls=[("bash", {"cmd": "mkdir -p x/y"})])
            b.tool_results([""]).next_step().assistant(text="Done.").end_turn()
        else:
            b.turn(p).assistant(text="好的。").end_turn()
    return cx.Session.from_events(b.header, b.events)


@pytest.fixture(scope="module")
def session_a() -> cx.Session:
    assert len(SESSION_A) == 21
    return _session(SESSION_A)


@pytest.fixture(scope="module")
def extraction_a(session_a: cx.Session) -> Extraction:
    return extract(session_a, now=MONDAY)


def _of(ex: Extraction, node_type: str) -> list[Candidate]:
    return [c for c in ex.candidates if c.type == node_type]


def _one(ex: Extraction, node_type: str, pattern: str) -> Candidate:
    hits = [c for c in _of(ex, node_type) if re.search(pattern, c.text)]
    assert len(hits) == 1, (node_type, pattern, [c.text for c in _of(ex, node_type)])
    return hits[0]


def _texts(prompts: list[str | None], **kw: object) -> list[tuple[str, str]]:
    ex = extract(_session(prompts), now=MONDAY, **kw)  # type: ignore[arg-type]
    return [(c.type, c.text) for c in ex.candidates]


# -- the P2 session A -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("case", "pattern", "link"),
    [
        ("P1", r"鉴权.*header X", ("about", "AuthGateway")),
        ("P2", r"pnpm", None),
        ("P3", r"README.*英文", None),
        ("P4", r"中文", None),
        ("P5", r"(?i)tests", None),
    ],
)
def test_session_a_preferences(
    extraction_a: Extraction, case: str, pattern: str, link: tuple[str, str] | None
) -> None:
    c = _one(extraction_a, "preference", pattern)
    assert c.source.session == "session-a" and c.source.via == "rule"
    assert c.source.quote == c.text
    if link:
        assert link in c.links


def test_session_a_entities(extraction_a: Extraction) -> None:
    names = {c.name for c in _of(extraction_a, "entity")}
    # E1..E5, plus the minted plan; README is a singleton, 鉴权 is a quoted CJK term
    assert names == {
        "TriviumDB",
        "AuthGateway",
        "dsh-trivium",
        "DeepSeek_Harness",
        "X-Request-Id",
        "方案 A",
    }


def test_session_a_decisions(extraction_a: Extraction, session_a: cx.Session) -> None:
    d1 = _one(extraction_a, "decision", "先别动")
    assert (d1.until, d1.until_at) == ("下周", "2026-12-07T00:00:00Z")
    assert d1.links == (("decided", "AuthGateway"),)
    d2 = _one(extraction_a, "decision", "方案 A")
    assert ("decided", "方案 A") in d2.links
    d3 = _one(extraction_a, "decision", "单文件")
    assert d3.until is None
    d4 = _one(extraction_a, "decision", "(?i)postpone.*migration")
    assert (d4.until, d4.until_at) == ("Friday", "2026-12-04T00:00:00Z")
    assert d4.links == (("decided", "DeepSeek_Harness"),)
    assert d4.until_at is not None and d4.until_at > MONDAY.isoformat()  # Friday: future
    # the source seq is the user message's event
    assert d4.source.seq is not None
    assert session_a.raw_events[d4.source.seq]["type"] == "user/message"


def test_session_a_experience(extraction_a: Extraction) -> None:
    (x1,) = _of(extraction_a, "experience")
    assert "mkdir" in x1.text and x1.fix == "mkdir -p x/y"
    assert x1.fail is not None and "No such file" in x1.fail
    assert x1.links == (("fixed", "dsh-trivium"),)


def test_session_a_negatives(extraction_a: Extraction) -> None:
    everything = " ".join(
        [c.text for c in extraction_a.candidates]
        + [c.source.quote for c in extraction_a.candidates]
        + [t for t, _ in extraction_a.dropped]
    )
    assert KEY not in everything  # N3: never stored, never echoed in a drop reason
    prefs = " ".join(c.text for c in _of(extraction_a, "preference"))
    for negative in ("天气", "tabs", "api_key", "嗯好的", "thanks"):  # N1 N2 N3 N4
        assert negative not in prefs
    assert not any("鉴权" in c.name for c in _of(extraction_a, "entity"))  # N5
    why = dict(extraction_a.dropped)
    assert why["今天天气不错啊，外面好晒。"] == "chit-chat"
    assert why["Just change this file: always use tabs in it."] == "one-shot edit"
    assert why["嗯好的"] == "chit-chat"
    assert why["配置里写 api_key=[REDACTED:openai]，记住它。"] == "secret"
    assert len(_of(extraction_a, "preference")) == 5
    assert len(_of(extraction_a, "decision")) == 4


def test_entities_come_first(extraction_a: Extraction) -> None:
    types = [c.type for c in extraction_a.candidates]
    assert types == sorted(types, key=["entity", "preference", "decision", "experience"].index)


# -- preference rule shapes ------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "记住，提交前先跑 lint。",
        "以后都用 tabs。",
        "别再给我加 emoji 了。",
        "不要再删日志了。",
        "从现在起只用 ruff。",
        "From now on, use ruff for formatting.",
        "Never again push to main directly.",
        "Remember to update the changelog.",
        "Please always write type hints.",
        "Make sure to always sign commits.",
        "Don't ever commit generated files.",
        "好，这次（记住）用 uv 装依赖。",  # a wrapped 记住 still extracts
    ],
)
def test_preference_cues(text: str) -> None:
    assert _texts([text]) == [("preference", text)]


def test_a_cue_on_its_own_line_joins_the_next() -> None:
    assert _texts(["记住：\n发布前要打 tag"]) == [("preference", "记住： 发布前要打 tag")]


@pytest.mark.parametrize(
    "text",
    [
        "Run the tests.",  # no cue
        "We use pnpm here.",
        "谢谢",
        "ok",
        "The weather is sunny, always nice.",  # chit-chat even with a cue
        "把这个文件以后都改成 tabs。",  # one-shot
        "改一下这个配置文件，以后都用 2 空格。",
        "Just edit this file, always with care.",
    ],
)
def test_not_preferences(text: str) -> None:
    assert _texts([text]) == []


def test_only_user_sourced_messages_count() -> None:
    b = LogBuilder(session_id="inj", runtime_context=None)
    b.turn("Hello there.").assistant(text="Remember to always use pnpm.").end_turn()
    s = cx.Session.from_events(b.header, b.events)
    assert extract(s, now=MONDAY).candidates == ()


def test_preference_links_only_names_inside_its_sentence() -> None:
    ex = extract(
        _session(["AuthGateway 很重要。记住要写日志。", "AuthGateway 有两个实例。"]), now=MONDAY
    )
    (pref,) = _of(ex, "preference")
    assert pref.links == ()
    assert {c.name for c in _of(ex, "entity")} == {"AuthGateway"}


def test_secret_drops_only_the_offending_sentence() -> None:
    ex = extract(_session([f"记住用 pnpm。我的 token 是 {KEY}。"]), now=MONDAY)
    assert [c.text for c in ex.candidates] == ["记住用 pnpm。"]
    assert [w for _, w in ex.dropped] == ["secret"]
    assert KEY not in repr(ex)


def test_secret_words_without_a_value_are_kept() -> None:
    # The redaction engine alone decides: a word such as "password" or "token" is no secret
    # (the seed's word list refused these, and "the token budget" with them).
    assert _texts(["Always keep the password in the vault."]) == [
        ("preference", "Always keep the password in the vault.")
    ]


# -- decisions -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "这个接口先别动。",
        "我们采用方案 B 来做缓存。",
        "就用那个老的脚本。",
        "不要改成异步的实现。",
        "Postpone the rename for now.",
        "Defer until the release is out.",
        "Let's go with the simpler parser.",
        "We decided to keep SQLite.",
        "Go with option C for the cache.",
    ],
)
def test_decision_cues(text: str) -> None:
    assert [t for t, _ in _texts([text]) if t == "decision"] == ["decision"]


def test_plan_mints_an_entity_and_links_it() -> None:
    ex = extract(_session(["我们采用方案 B 来做缓存。"]), now=MONDAY)
    assert [(c.type, c.name) for c in ex.candidates] == [
        ("entity", "方案 B"),
        ("decision", ex.candidates[1].name),
    ]
    assert ex.candidates[1].links == (("decided", "方案 B"),)


def test_decision_links_an_adjacent_sentence_name() -> None:
    s = _session(["AuthGateway 的限流有问题。先别动它。", "AuthGateway 稍后再看。"])
    (d,) = _of(extract(s, now=MONDAY), "decision")
    assert d.text == "先别动它。" and d.links == (("decided", "AuthGateway"),)


def test_decision_falls_back_to_the_turn_first_name_only_with_one_cue() -> None:
    one = "TriviumDB 很稳。\n别的不说了。\n先别动。"
    two = "TriviumDB 很稳。\n别的不说了。\n先别动。\n就用这个版本。"
    again = "TriviumDB 再提一次。"
    (d,) = _of(extract(_session([one, again]), now=MONDAY), "decision")
    assert d.links == (("decided", "TriviumDB"),)
    ds = _of(extract(_session([two, again]), now=MONDAY), "decision")
    assert [x.links for x in ds] == [(), ()]


# -- until -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "label", "at"),
    [
        ("下周再说", "下周", "2026-12-07"),
        ("下周五再发", "下周五", "2026-12-11"),
        ("周五前完成", "周五", "2026-12-04"),
        ("周一再看", "周一", "2026-12-07"),  # today is Monday: the next one
        ("周末再弄", "周末", "2026-12-05"),
        ("明天再说", "明天", "2026-12-01"),
        ("12月25日上线", "12月25日", "2026-12-25"),
        ("3月1日上线", "3月1日", "2027-03-01"),  # passed this year: the next one
        ("defer until Friday", "Friday", "2026-12-04"),
        ("by friday", "Friday", "2026-12-04"),
        ("postpone to next week", "next week", "2026-12-07"),
        ("until 2020-05-01", "2020-05-01", "2020-05-01"),
    ],
)
def test_parse_until(text: str, label: str, at: str) -> None:
    assert parse_until(text, MONDAY) == (label, f"{at}T00:00:00Z")


def test_parse_until_none_and_naive_now() -> None:
    assert parse_until("先别动", MONDAY) is None
    assert parse_until("2月30日", MONDAY) is None
    assert parse_until("下周", MONDAY.replace(tzinfo=None)) == ("下周", "2026-12-07T00:00:00Z")


def test_a_2020_date_is_stale() -> None:
    (d,) = _of(extract(_session(["先别动，等到 2020-05-01 再说。"]), now=MONDAY), "decision")
    assert d.until_at is not None and d.until_at < MONDAY.isoformat()


def test_until_defaults_to_when_it_was_said() -> None:
    s = _session(["先别动，下周再说。"])
    (d,) = _of(extract(s), "decision")
    assert d.source.seq is not None
    said = datetime.fromtimestamp(s.raw_events[d.source.seq]["time"] / 1000, UTC)
    assert d.until_at == parse_until("下周", said)[1]  # type: ignore[index]
    assert d.until_at != parse_until("下周", MONDAY)[1]  # type: ignore[index]


# -- entities --------------------------------------------------------------------------------
def test_entity_families_and_noise() -> None:
    line = (
        "`my cfg` AuthGateway DeepSeek_Harness X-Request-Id dsh-trivium README "
        "GET JSON TODO session-1a2b3c decided-12 EPERM 「鉴权」 `bash`"
    )
    ex = extract(_session([line, line]), now=MONDAY)
    assert [c.name for c in _of(ex, "entity")] == [
        "my cfg",
        "AuthGateway",
        "DeepSeek_Harness",
        "X-Request-Id",
        "dsh-trivium",
        "README",
    ]


def test_a_name_seen_once_is_not_an_entity() -> None:
    assert _texts(["AuthGateway 挂了。", "TriviumDB 也挂了。"]) == []


def test_entity_counts_are_case_insensitive_and_keep_the_first_form() -> None:
    ex = extract(_session(["FooBar 起来了", "FOOBAR 又挂了"]), now=MONDAY)
    assert [c.name for c in _of(ex, "entity")] == ["FooBar"]


# -- experience ------------------------------------------------------------------------------
def _tool_session(results: list[list[str | ToolOutput]], tools: list[str]) -> cx.Session:
    b = LogBuilder(session_id="tools", runtime_context=None)
    b.turn("Build the SolarPanel module.").assistant(text="Sure.").end_turn()
    b.turn("Now deploy SolarPanel.")
    for tool, res in zip(tools, results, strict=True):
        b.assistant(tool_calls=[(tool, {"command": f"{tool} go"})]).tool_results(res).next_step()
    b.assistant(text="Done.").end_turn()
    return cx.Session.from_events(b.header, b.events)


def test_experience_needs_fail_then_ok_in_one_tool() -> None:
    fail = ToolOutput.failed("boom", "ExitCode", "2")
    ok_after = _tool_session([[fail], ["fine"]], ["bash", "bash"])
    (x,) = _of(extract(ok_after, now=MONDAY), "experience")
    assert (x.fail, x.fix) == ("boom", "bash go")
    assert x.links == (("fixed", "SolarPanel"),)  # the turn's user text names it
    other_tool = _tool_session([[fail], ["fine"]], ["bash", "read"])
    assert _of(extract(other_tool, now=MONDAY), "experience") == []
    ok_first = _tool_session([["fine"], [fail]], ["bash", "bash"])
    assert _of(extract(ok_first, now=MONDAY), "experience") == []


# -- caps and dedupe -------------------------------------------------------------------------
def test_caps_per_batch() -> None:
    prompts: list[str | None] = [f"记住第 {i} 条规矩要遵守。" for i in range(12)]
    ex = extract(_session(prompts), now=MONDAY)
    assert len(_of(ex, "preference")) == 8
    assert [w for _, w in ex.dropped].count("over the cap") == 4
    small = extract(_session(prompts), now=MONDAY, caps=Caps(preference=2))
    assert [c.text for c in _of(small, "preference")] == [
        "记住第 0 条规矩要遵守。",
        "记住第 1 条规矩要遵守。",
    ]


def test_entity_cap_keeps_the_most_mentioned() -> None:
    names = [f"Alpha{chr(65 + i)}x" for i in range(10)]
    prompts: list[str | None] = [" ".join(names), " ".join(names), "AlphaJx again AlphaJx"]
    ex = extract(_session(prompts), now=MONDAY)
    kept = [c.name for c in _of(ex, "entity")]
    assert len(kept) == 8 and kept[0] == "AlphaJx"


def test_dedupe_on_type_name_text() -> None:
    ex = extract(
        _session(["以后都用 pnpm。", "以后都用  PNPM。".replace("PNPM", "pnpm")]), now=MONDAY
    )
    assert len(_of(ex, "preference")) == 1
    assert ("以后都用 pnpm。", "duplicate") in ex.dropped


def test_lines_are_clipped_to_240() -> None:
    long = "记住：" + "很长的规则" * 100
    (c,) = extract(_session([long]), now=MONDAY).candidates
    assert len(c.text) == 240 and c.text.endswith("…") and len(c.source.quote) <= 240
    assert len(c.name) <= 40


# -- secrets ---------------------------------------------------------------------------------
def test_refuse_secret_names_the_kind() -> None:
    # Refused: nothing but credentials. Kept (redacted): a secret with words around it, and
    # words alone, which the old word list refused ("password", "API_KEY", "token").
    assert refuse_secret("use pnpm") is None
    why = refuse_secret(f" {KEY}. ")
    assert why is not None and "openai" in why
    why = refuse_secret("[REDACTED:github]")
    assert why is not None and "github" in why
    assert refuse_secret(f"key {KEY}") is None
    assert refuse_secret("the password is in the vault") is None
    assert refuse_secret("export API_KEY now") is None
    assert refuse_secret("was [REDACTED:github] here") is None


# -- observations ----------------------------------------------------------------------------
def test_observations_are_verbatim_redacted_and_clipped(session_a: cx.Session) -> None:
    obs = observations(session_a)
    assert all(o.type == "observation" for o in obs)
    user = [o for o in obs if o.name.startswith("user@")]
    tool = [o for o in obs if o.name.startswith("bash@")]
    assert len(user) == 21 and len(tool) == 1  # the ok result is empty: nothing to keep
    assert "No such file" in tool[0].text
    assert not any(KEY in o.text for o in obs)
    assert any("[REDACTED:openai]" in o.text for o in obs)
    long = observations(_session(["x" * 5000 + "END"]))[0].text
    assert long.startswith("x" * 3000) and long.endswith("END") and len(long) == 4003


# -- merge rules -----------------------------------------------------------------------------
def _node(node_type: str, name: str, text: str = "", **kw: object) -> Node:
    return Node(id=name, type=node_type, name=name, text=text or name, **kw)  # type: ignore[arg-type]


def _cand(node_type: str, name: str, text: str = "", **kw: object) -> Candidate:
    return Candidate(node_type, name, text or name, Source("s", 3, text, "rule"), **kw)  # type: ignore[arg-type]


def test_merge_target_entity_by_name_or_alias() -> None:
    gw = _node("entity", "AuthGateway", aliases=("auth-gw",))
    other = _node("entity", "TriviumDB")
    assert merge_target(_cand("entity", "authgateway"), [other, gw]) is gw
    assert merge_target(_cand("entity", "AUTH-GW"), [other, gw]) is gw
    assert merge_target(_cand("entity", "Auth"), [other, gw]) is None
    archived = _node("entity", "AuthGateway", status="archived")
    assert merge_target(_cand("entity", "AuthGateway"), [archived]) is None


def test_merge_target_text_rule() -> None:
    p = _node("preference", "p", "以后都用 pnpm 装依赖")
    d = _node("decision", "d", "以后都用 pnpm 装依赖")
    assert merge_target(_cand("preference", "x", "以后都用 pnpm 装依赖"), [d, p]) is p
    assert merge_target(_cand("preference", "x", "以后都用 pnpm"), [p]) is p  # substring
    assert merge_target(_cand("preference", "x", "记住：以后都用 pnpm 装依赖，谢谢"), [p]) is p
    assert merge_target(_cand("preference", "x", "pnpm"), [p]) is None  # < 8 chars
    assert merge_target(_cand("preference", "x", "以后都用 yarn 装依赖"), [p]) is None
    exact = _node("preference", "e", "以后都用 pnpm")
    assert merge_target(_cand("preference", "x", "以后都用 pnpm"), [p, exact]) is exact


def test_merged_keeps_text_aliases_sources_until() -> None:
    node = _node("entity", "AuthGateway", sources=(Source("a", 1, "q", "rule"),))
    m = merged(node, _cand("entity", "authgateway"))
    assert m.aliases == () and len(m.sources) == 2  # same name, other case: no alias
    m = merged(node, _cand("entity", "Auth-GW"))
    assert m.aliases == ("Auth-GW",)
    assert merged(m, _cand("entity", "Auth-GW")).sources == m.sources  # same source once

    short = _node("preference", "p", "use pnpm always")
    assert merged(short, _cand("preference", "x", "use pnpm always, please")).text == (
        "use pnpm always, please"
    )
    wrapper = "context " * 15 + "use pnpm always" + " more" * 5
    assert merged(short, _cand("preference", "x", wrapper)).text == "use pnpm always"
    assert merged(short, _cand("preference", "x", "totally different and longer")).text == (
        "totally different and longer"
    )
    dec = _node("decision", "d", "先别动", until="下周", until_at="2026-12-07T00:00:00Z")
    kept = merged(dec, _cand("decision", "x", "先别动"))
    assert (kept.until, kept.until_at) == ("下周", "2026-12-07T00:00:00Z")
    newer = merged(
        dec, _cand("decision", "x", "先别动", until="周五", until_at="2026-12-04T00:00:00Z")
    )
    assert (newer.until, newer.until_at) == ("周五", "2026-12-04T00:00:00Z")
