"""Memory ingestion on the base's fact kernel: the seed's P2 session A and tool work read
through ``Session.facts()``, typed nodes with their sources and links, supersession, caps
that grow with the session, observations clipped around the lines facts came from, the
merge rule, until and secrets; and real corpus sessions (skipped without the corpus)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

import ctxsdk as cx
from ctxsdk.memory._facts_in import caps_for
from ctxsdk.memory._ingest import (
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

TOOL_TURN = "在 dsh-trivium 里跑测试。"
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
    None,  # a failing test run, the install that fixed it, the passing run
    "Just change this file: always use tabs in it.",
    f"配置里写 api_key={KEY}，记住它。",  # N3 secret
    "嗯好的",  # N4 chit-chat
    "「鉴权」这块要小心，「鉴权」出错会很麻烦。",  # N5 quoted term, not an entity
    "TriviumDB 的文件别让两个 Node 进程同时打开。",
    "X-Request-Id 要打印到 AuthGateway 的日志里。",
    "dsh-trivium 升级后要重启 dsh web。",
    "thanks, that's all for today!",
]
FAILING = "E   ModuleNotFoundError: No module named trivium_db\n1 error in 0.12s"


def _session(prompts: list[str | None], session_id: str = "session-a") -> cx.Session:
    b = LogBuilder(session_id=session_id, runtime_context=None)
    for p in prompts:
        if p is None:
            b.turn(TOOL_TURN).assistant(
                tool_calls=[("bash", {"cmd": "pytest -q tests/test_store.py"})]
            )
            b.tool_results([ToolOutput.failed(FAILING, "ExitCode", "1")]).next_step()
            b.assistant(tool_calls=[("bash", {"cmd": "pip install trivium-db"})])
            b.tool_results(["Successfully installed trivium-db-1.0"]).next_step()
            b.assistant(tool_calls=[("bash", {"cmd": "pytest -q tests/test_store.py"})])
            b.tool_results(["3 passed in 0.10s"]).next_step().assistant(text="Done.").end_turn()
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


# -- the P2 session A, through the kernel ----------------------------------------------------
@pytest.mark.parametrize(
    ("case", "pattern"),
    [
        ("P1", r"鉴权.*header X"),
        ("P2", r"pnpm"),
        ("P3", r"README.*英文"),
        ("P4", r"中文"),
        ("P5", r"(?i)tests before you commit"),
    ],
)
def test_session_a_preferences(extraction_a: Extraction, case: str, pattern: str) -> None:
    c = _one(extraction_a, "preference", pattern)
    assert c.source.session == "session-a" and c.source.seq is not None and c.source.quote
    assert c.source.via == "rule" and len(c.name) <= 40


def test_session_a_decisions_keep_their_deadline(extraction_a: Extraction) -> None:
    d1 = _one(extraction_a, "decision", r"下周")
    assert d1.until == "下周" and d1.until_at == "2026-12-07T00:00:00Z"
    _one(extraction_a, "decision", r"方案 A")
    _one(extraction_a, "decision", r"单文件")
    d4 = _one(extraction_a, "decision", r"postpone")
    assert d4.until == "Friday" and d4.until_at == "2026-12-04T00:00:00Z"


def test_entity_names_come_from_facts_not_from_capitalized_words(
    extraction_a: Extraction,
) -> None:
    names = {c.name for c in _of(extraction_a, "entity")}
    # what the tool work established, named by what it is about
    assert {"test command", "install command", "stack"} <= names
    for word in ("AuthGateway", "TriviumDB", "README", "DeepSeek_Harness", "X-Request-Id"):
        assert word not in names
    assert not any("鉴权" in n for n in names)
    test = next(c for c in _of(extraction_a, "entity") if c.name == "test command")
    assert test.text.startswith("how the tests are run: pytest") and "3 passed" in test.text
    assert test.extra["value"] == "pytest"


def test_session_a_experience_is_the_error_and_its_fix(extraction_a: Extraction) -> None:
    (x,) = _of(extraction_a, "experience")
    assert x.fail is not None and "ModuleNotFoundError" in x.fail
    assert x.fix == "pip install trivium-db" and "pip install trivium-db" in x.text
    assert x.source.seq is not None


def test_session_a_negatives(extraction_a: Extraction) -> None:
    texts = " ".join(c.text for c in extraction_a.candidates)
    for said in ("天气", "嗯好的", "thanks", KEY, "api_key"):
        assert said not in texts
    # the kernel reads no fact from a sentence holding a withheld credential
    assert KEY not in repr(extraction_a)


def test_entities_come_first(extraction_a: Extraction) -> None:
    kinds = [c.type for c in extraction_a.candidates]
    assert kinds == sorted(
        kinds, key=lambda t: ["entity", "preference", "decision", "experience"].index(t)
    )


def test_only_what_the_kernel_reads_as_the_users_counts() -> None:
    b = LogBuilder(session_id="inj", runtime_context=None)
    b.turn("Hello there.").assistant(text="Sure, I can help with that.").end_turn()
    s = cx.Session.from_events(b.header, b.events)
    assert extract(s, now=MONDAY).candidates == ()


def test_secret_drops_only_the_fact_that_held_it() -> None:
    ex = extract(_session([f"记住用 pnpm。我的 token 是 {KEY}，记住它。"]), now=MONDAY)
    assert [c.text for c in ex.candidates] == ["记住用 pnpm。"]
    assert KEY not in repr(ex)  # the sentence that held it gives no fact at all


def test_secret_words_without_a_value_are_kept() -> None:
    # The redaction engine alone decides: "password" or "token" is no secret.
    ex = extract(_session(["Always keep the password in the vault."]), now=MONDAY)
    assert [(c.type, c.text) for c in ex.candidates] == [
        ("preference", "Always keep the password in the vault.")
    ]


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


# -- tool work: entities, typed edges, supersession -----------------------------------------
def _work(
    timeout: str = "30", second: str = "60", session_id: str = "work", cwd: str | None = None
) -> cx.Session:
    b = LogBuilder(session_id=session_id, runtime_context=None, cwd=cwd)
    b.turn(f"The request timeout is {timeout} seconds.").assistant(text="ok").end_turn()
    b.turn("Fix the failing test in src/app.py.").assistant(
        tool_calls=[("bash", {"cmd": "pytest -q"})]
    )
    out = "FAILED tests/test_app.py::test_home - AssertionError: 404 != 200\n1 failed, 2 passed"
    b.tool_results([ToolOutput.failed(out, "ExitCode", "1")]).next_step()
    edit = {
        "file_path": "src/app.py",
        "old_string": 'route("/hom")',
        "new_string": 'route("/home")',
    }
    b.assistant(tool_calls=[("Edit", edit)])
    b.tool_results(["ok"]).next_step()
    b.assistant(tool_calls=[("bash", {"cmd": "pytest -q"})])
    b.tool_results(["3 passed in 0.10s"]).next_step()
    b.assistant(
        text="We decided to keep src/app.py as the single entry point instead of a second module."
    ).end_turn()
    b.turn(f"Set the request timeout to {second} seconds.").assistant(text="Done.").end_turn()
    return cx.Session.from_events(b.header, b.events)


def test_tool_work_gives_keyed_entities_an_experience_and_typed_links() -> None:
    ex = extract(_work(), now=MONDAY)
    names = {c.name for c in _of(ex, "entity")}
    assert {"src/app.py", "test command", "request timeout"} <= names
    (x,) = [c for c in _of(ex, "experience") if c.extra.get("kind") == "error"]
    assert x.fail is not None and "404 != 200" in x.fail
    assert x.fix is not None and 'route("/home")' in x.fix
    assert ("fixed", "src/app.py") in x.links
    d = _one(ex, "decision", r"single entry point")
    assert ("decided", "src/app.py") in d.links
    # a one-off ask that names its file is what the user asked, not a standing preference
    assert not any("Fix the failing test" in c.text for c in _of(ex, "preference"))
    fix_it = _one(ex, "experience", r"Fix the failing test")
    assert ("about", "src/app.py") in fix_it.links


def test_a_later_value_supersedes_within_a_session() -> None:
    ex = extract(_work("30", "60"), now=MONDAY)
    (t,) = [c for c in _of(ex, "entity") if c.name == "request timeout"]
    assert "60" in t.text and t.extra["value"] == "60 seconds"
    assert t.extra["earlier"] == ["30 seconds"]


def test_a_later_session_updates_the_node_and_the_same_value_merges(tmp_path: Path) -> None:
    app = "/home/dev/app"  # one project: its sessions ran in the same directory
    with cx.Memory(tmp_path / "m.db", embedder=None) as mem:
        mem.ingest(_work("30", "60", "one", app), now=MONDAY)
        (t,) = [n for n in mem.nodes("entity") if n.name == "request timeout"]
        assert t.extra["value"] == "60 seconds"
        mem.ingest(_work("45", "90", "two", app), now=MONDAY)
        (t2,) = [n for n in mem.nodes("entity") if n.name == "request timeout"]
        assert t2.id == t.id and t2.extra["value"] == "90 seconds" and "90" in t2.text
        assert "60 seconds" in t2.extra["earlier"]
        assert {s.session for s in t2.sources} == {"one", "two"}
        mem.ingest(_work("45", "90", "three", app), now=MONDAY)
        (t3,) = [n for n in mem.nodes("entity") if n.name == "request timeout"]
        assert t3.text == t2.text and {s.session for s in t3.sources} == {"one", "two", "three"}
        # the file entity of three sessions is one node, its sources appended
        (app,) = [n for n in mem.nodes("entity") if n.name == "src/app.py"]
        assert len({s.session for s in app.sources}) == 3
        hits = mem.find("which file fixed the failing home test?")
        assert any(h.node.type == "experience" for h in hits[:5])


def test_the_same_key_in_another_project_is_another_entity(tmp_path: Path) -> None:
    # "request timeout" of two projects (or of a session that names no directory) are two
    # facts: a later value in one project supersedes nothing in the other.
    with cx.Memory(tmp_path / "m.db", embedder=None) as mem:
        mem.ingest(_work("30", "60", "one", "/home/dev/app"), now=MONDAY)
        mem.ingest(_work("45", "90", "two", "/home/dev/other"), now=MONDAY)
        mem.ingest(_work("10", "20", "three"), now=MONDAY)
        got = [n for n in mem.nodes("entity") if n.name == "request timeout"]
        assert sorted(str(n.extra["value"]) for n in got) == [
            "20 seconds",
            "60 seconds",
            "90 seconds",
        ]
        assert all(len(n.sources) == 1 and "earlier" in n.extra for n in got)
        assert all(n.extra["earlier"] != ["60 seconds"] for n in got if "90" in n.text)
        # the file is one entity per project, and each project's fix links to its own
        apps = [n for n in mem.nodes("entity") if n.name == "src/app.py"]
        assert len(apps) == 3
        for app in apps:
            assert sorted(e.label for e, _ in mem.read(app.id).incoming) == [
                "about",
                "decided",
                "fixed",
            ]


def test_caps_grow_with_the_session_and_stay_bounded() -> None:
    small, large, huge = caps_for(20), caps_for(1000), caps_for(100_000)
    assert (small.entity, small.preference, small.decision, small.experience) == (8, 8, 6, 4)
    assert large.entity > small.entity and large.preference > small.preference
    assert large.decision > small.decision and large.experience > small.experience
    assert (huge.entity, huge.preference, huge.decision, huge.experience) == (60, 40, 30, 20)
    many = _session([f"Always run check number {i} before you commit." for i in range(30)])
    cap = caps_for(len(many.raw_events)).preference
    assert 8 < cap < 30
    ex = extract(many, now=MONDAY)
    assert len(_of(ex, "preference")) == cap
    assert sum(w == "over the cap" for _, w in ex.dropped) == 30 - cap


def test_lines_are_clipped_to_240() -> None:
    long = "记住：" + "很长的规则" * 100
    for c in extract(_session([long]), now=MONDAY).candidates:
        assert len(c.text) <= 240 and len(c.source.quote) <= 240 and len(c.name) <= 40


# -- observations ----------------------------------------------------------------------------
def test_observations_are_verbatim_redacted_and_clipped(session_a: cx.Session) -> None:
    obs = observations(session_a)
    assert all(o.type == "observation" for o in obs)
    user = [o for o in obs if o.name.startswith("user@")]
    tool = [o for o in obs if o.name.startswith("bash@")]
    # every user message but the acknowledgement ("嗯好的": it says nothing to find)
    assert len(user) == 20 and len(tool) == 3
    assert not any(o.text == "嗯好的" for o in user)
    assert any("ModuleNotFoundError" in o.text for o in tool)
    assert not any(KEY in o.text for o in obs)
    assert any("[REDACTED:openai]" in o.text for o in obs)
    # the calls an assistant made are observed with it (a command is searchable)
    assert any(o.name.startswith("assistant@") and "pip install" in o.text for o in obs)
    # a short reply ("好的。", "Done.") is no observation
    assert not any(o.name.startswith("assistant@") and o.text in ("好的。", "Done.") for o in obs)
    # what the person said is kept whole; only a pasted log past 64,000 characters is cut
    said = observations(_session(["y" * 20000 + "END"]))[0].text
    assert said == "y" * 20000 + "END"
    long = observations(_session(["x" * 70000 + "END"]))[0].text
    assert long.startswith("x" * 48000) and long.endswith("END") and len(long) == 64003


def test_a_long_tool_output_is_clipped_around_the_line_its_fact_came_from() -> None:
    noise = "\n".join(f"collecting module_{i} ... ok" for i in range(400))
    out = f"{noise}\nE   ModuleNotFoundError: No module named trivium_db\n{noise}\n1 error in 0.5s"
    b = LogBuilder(session_id="long", runtime_context=None)
    b.turn("Run the tests.").assistant(tool_calls=[("bash", {"cmd": "pytest -q"})])
    b.tool_results([ToolOutput.failed(out, "ExitCode", "1")]).next_step()
    b.assistant(tool_calls=[("bash", {"cmd": "pip install trivium-db"})])
    b.tool_results(["Successfully installed trivium-db-1.0"]).next_step()
    b.assistant(tool_calls=[("bash", {"cmd": "pytest -q"})])
    b.tool_results(["3 passed in 0.10s"]).next_step().assistant(text="Done.").end_turn()
    s = cx.Session.from_events(b.header, b.events)
    assert any("ModuleNotFoundError" in f.text for f in s.facts())
    (first, *_) = [o for o in observations(s) if o.name.startswith("bash@")]
    assert len(out) > 16000  # longer than a tool output is kept whole
    assert (
        len(first.text) <= 16100 and "ModuleNotFoundError: No module named trivium_db" in first.text
    )
    assert first.text.startswith("collecting module_0") and first.text.endswith("1 error in 0.5s")


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


def test_a_keyed_entity_takes_the_newer_value() -> None:
    node = _node("entity", "request timeout", "request timeout = 30 seconds")
    node = Node(**{**_asdict(node), "extra": {"key": "request timeout", "value": "30 seconds"}})
    cand = Candidate(
        "entity",
        "request timeout",
        "request timeout = 60 seconds",
        Source("s2", 4, "q", "rule"),
        extra={"key": "request timeout", "value": "60 seconds"},
    )
    m = merged(node, cand)
    assert m.text == "request timeout = 60 seconds" and m.extra["value"] == "60 seconds"
    assert m.extra["earlier"] == ["30 seconds"] and len(m.sources) == 1
    same = merged(m, replace_source(cand, Source("s3", 2, "q", "rule")))
    assert same.text == m.text and len(same.sources) == 2


def _asdict(node: Node) -> dict[str, object]:
    return {f: getattr(node, f) for f in Node.__dataclass_fields__}


def replace_source(c: Candidate, s: Source) -> Candidate:
    from dataclasses import replace

    return replace(c, source=s)


# -- real sessions (skipped without the corpus) ---------------------------------------------
def _corpus() -> Path | None:
    from ctxsdk.bench._realworld import corpus_dir

    return corpus_dir()


def _real(rel: str) -> cx.Session:
    root = _corpus()
    if root is None or not (root / rel).exists():
        pytest.skip("the agent-sessions corpus is not here")
    from ctxsdk.bench._realworld import load_session

    return load_session(root, rel)


def test_real_mini_swe_agent_keeps_no_harness_words_or_prompt_rules_as_the_users() -> None:
    s = _real("mini-swe-agent/django__django-11163.traj.json")
    ex = extract(s)
    names = {c.name for c in _of(ex, "entity")}
    for word in ("THOUGHT", "MUST", "ONE", "MODIFY"):
        assert word not in names
    # the task template's rules are one line, said by the harness: none is the user's
    harness = [c for c in _of(ex, "preference") if c.text.startswith("the harness's rules")]
    assert len(harness) == 1 and "EXACTLY ONE" in harness[0].text
    prefs = " ".join(c.text for c in _of(ex, "preference") if c not in harness)
    assert "THOUGHT" not in prefs and "EXACTLY ONE" not in prefs
    # what the session established: the file it fixed and the project's stack
    assert "django/forms/models.py" in names and "stack" in names
    file = next(c for c in _of(ex, "entity") if c.name == "django/forms/models.py")
    assert "fields is not None" in file.text


def test_real_aider_token_boilerplate_is_no_experience() -> None:
    s = _real("aider/aider-website__hello-world-flask.md")
    ex = extract(s)
    assert not any("Tokens:" in c.text or "Cost:" in c.text for c in ex.candidates)
    assert "app.py" in {c.name for c in _of(ex, "entity")}
    # the user's four asks are one line of what was asked, in the order they were said
    (asks,) = [c for c in _of(ex, "experience") if c.extra.get("kind") == "asks"]
    assert asks.text.index("/hello endpoint") < asks.text.index("/fibonacci/X")
    assert asks.text.endswith("remove the hello endpoint")
    assert not any("/hello" in c.text for c in _of(ex, "preference"))


def test_real_sessions_in_one_memory_answer_plain_questions(tmp_path: Path) -> None:
    flask = _real("aider/aider-website__hello-world-flask.md")
    codex = _real("codex/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl")
    with cx.Memory(tmp_path / "m.db", embedder=None) as mem:
        mem.ingest(flask)
        mem.ingest(codex)
        assert not any(n.name.isupper() and len(n.name) > 2 for n in mem.nodes("entity"))
        build = [n for n in mem.nodes("entity") if n.name == "build command"]
        assert build and "npm run build" in build[0].text
        assert "build command: npm run build" in mem.map(400).text
        hits = mem.find("Which file holds the flask app?")
        assert any("app.py" in f"{h.node.name} {h.node.text}" for h in hits[:5])


def test_what_the_assistant_found_is_an_experience() -> None:
    """The assistant's own statements that name something specific (a path, a version, a
    quantity) are kept as what the session found; a plain sentence, a plan and a statement a
    fact already holds are not."""
    b = LogBuilder(session_id="found", runtime_context=None)
    b.turn("Where does the CLI keep its config?").assistant(
        text=(
            "EnvManager stores the config at ~/.codemie/codemie-cli.config.json. "
            "Let me check the loader next. The code looks clean overall."
        )
    ).end_turn()
    b.turn("Which Node version does it need?").assistant(
        text="We decided to require Node.js 24.0.0 or newer for the CLI."
    ).end_turn()
    ex = extract(cx.Session.from_events(b.header, b.events), now=MONDAY)
    found = [c for c in _of(ex, "experience") if c.extra.get("kind") == "finding"]
    assert [c.text for c in found] == [
        "EnvManager stores the config at ~/.codemie/codemie-cli.config.json."
    ]
    assert found[0].name.startswith("found: ") and found[0].source.seq > 0
    assert _one(ex, "decision", r"Node\.js 24\.0\.0")  # a decision, not found twice


def test_a_memory_links_to_the_record_it_was_read_from(tmp_path: Path) -> None:
    # each memory ingest read from a message is observed_in that message's observation
    # (the MemoryGraph draws where a memory came from); without the record, no such edge
    with cx.Memory(tmp_path / "m.db", embedder=None) as mem:
        mem.ingest(_work())
        typed = [n for n in mem.nodes() if n.type in ("preference", "decision", "experience")]
        assert typed
        for n in typed:
            out = [(e, o) for e, o in mem.read(n.id).outgoing if e.label == "observed_in"]
            assert len(out) == 1, n.text
            obs = out[0][1]
            assert obs.type == "observation"
            assert obs.sources[0].seq == n.sources[0].seq
    with cx.Memory(tmp_path / "bare.db", embedder=None) as mem:
        mem.ingest(_work(), verbatim=False)
        assert not any(
            e.label == "observed_in" for n in mem.nodes() for e in mem.store.edges(src=n.id)
        )


def test_a_finding_quotes_the_message_it_was_said_in() -> None:
    """A turn's findings are one memory; its source is the message its first statement was
    said in (a turn opens with a call, the finding comes later), so the quote is that
    message's words, at that seq."""
    b = LogBuilder(session_id="found", runtime_context=None)
    b.turn("Fix the failing writer test in ledger-sync.")
    b.assistant(tool_calls=[("bash", {"command": "pytest -q"})])
    b.tool_results([ToolOutput.failed("FAILED tests/test_writer.py::test_lock", "ExitCode", "1")])
    b.next_step().assistant(tool_calls=[("bash", {"command": "pytest -q"})])
    b.tool_results(["12 passed in 0.38s"]).next_step()
    b.assistant(text="The writer in ledger_sync/writer.py now waits up to 30 s for the lock.")
    b.end_turn()
    s = cx.Session.from_events(b.header, b.events)
    m = cx.Memory(None, embedder=None)
    m.ingest(s)
    found = [n for n in m.nodes() if n.type == "experience" and n.extra.get("kind") == "finding"]
    assert found, [n.text for n in m.nodes()]
    src = found[0].sources[0]
    assert src.seq is not None and src.quote in s.message_at(src.seq).text


CONVENTIONS = """# Conventions
- Prefer named functions over anonymous ones.
- Always terminate statements with semicolons.
- Never edit files under dist/.

```ts
const x = 1;
```
"""


def test_an_agent_files_rules_are_one_memory_of_that_file() -> None:
    b = LogBuilder(session_id="conv", runtime_context=None)
    b.turn("Read the conventions, then fix the lint errors.")
    b.assistant(tool_calls=[("read_file", {"path": "CONVENTIONS.md"})])
    b.tool_results([CONVENTIONS]).next_step()
    b.assistant(text="Done: the lint errors are fixed.").end_turn()
    with cx.Memory() as mem:
        mem.ingest(cx.Session.from_events(b.header, b.events))
        held = [n for n in mem.nodes() if "CONVENTIONS.md" in n.text and n.type != "observation"]
        assert len(held) == 1 and held[0].type == "preference"
        text = held[0].text
        assert "Prefer named functions" in text and "Never edit files under dist/" in text
        assert "const x" not in text  # a code block is an example, not a rule


def test_ingest_gives_the_collector_back_as_it_found_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ingest pauses the cyclic collector while it reads and writes (millions of small
    objects, no cycles); it is running again afterwards, after a failure too, and stays
    off for a caller who had turned it off."""
    import gc

    import ctxsdk.memory._memory as memory_module

    b = LogBuilder(version=3, session_id="gc-session")
    b.turn("Always run the tests with pytest before a commit.")
    b.assistant(text="Noted: pytest before each commit.")
    b.end_turn()
    session = cx.Session.from_events(b.header, b.events)
    assert gc.isenabled()
    with cx.Memory(None, embedder=None) as mem:
        mem.ingest(session)
        assert gc.isenabled()

        def broken(*_: object, **__: object) -> object:
            assert not gc.isenabled()  # paused while the session is read
            raise RuntimeError("the reader failed")

        monkeypatch.setattr(memory_module, "extract", broken)
        with pytest.raises(RuntimeError, match="the reader failed"):
            mem.ingest(cx.Session.from_events({**b.header, "id": "gc-2"}, b.events))
        assert gc.isenabled()
        gc.disable()
        try:
            with pytest.raises(RuntimeError):
                mem.ingest(cx.Session.from_events({**b.header, "id": "gc-3"}, b.events))
            assert not gc.isenabled()
        finally:
            gc.enable()
