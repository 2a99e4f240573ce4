"""Settings in the fact kernel: one key per setting however it is phrased, values with units,
polarity kept, choices with the alternatives they turn down; nothing from prose that only
looks like "X is Y", code, listings, questions or hedges. Checked on small English and
Chinese cases, on MergeBench's templated sentences against Merge's claim extractor, and on
real sessions of the agent-sessions corpus (skipped when ``../shared/data`` is absent)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxsdk.session import Session
from ctxsdk.session._facts import Facts, sentences
from ctxsdk.session._facts._model import QUOTE_MAX
from ctxsdk.session._facts._settings import parse_setting, setting_facts
from ctxsdk.session._facts._units import quantity
from ctxsdk.session._text import message_text
from ctxsdk.session.importers import import_file
from ctxsdk.session.kernel import message_of

from .conftest import SHARED

Triple = tuple[str, str, str | None, bool]


def _kv(sentence: str, role: str = "user") -> list[Triple]:
    return [(s.key, s.value, s.unit, s.negated) for s in parse_setting(sentence, role)]


# -- one key however it is phrased ---------------------------------------------------------
SAME_SETTING = [
    "the request timeout is now 60 seconds",
    "Set the request timeout to 60 seconds.",
    "request timeout: 60s",
    "Bump the request timeout to 60 s.",
    "We set the request timeout to 60 sec.",
    "The request timeout was changed to 60 seconds.",
    "REQUEST_TIMEOUT=60s",
    "requestTimeout = 60 secs",
    "Use 60 seconds for the request timeout.",
    "请求超时设为60秒",
    "把请求超时改为 60 秒。",
]


@pytest.mark.parametrize("sentence", SAME_SETTING)
def test_one_key_value_and_unit_however_phrased(sentence: str) -> None:
    assert _kv(sentence) == [("request timeout", "60", "seconds", False)]


def test_two_sentences_the_splitter_left_together_are_read_apart() -> None:
    assert _kv("Bump the request timeout to 60 s. The API is not public.") == [
        ("request timeout", "60", "seconds", False),
        ("api", "public", None, True),
    ]


def test_a_later_value_supersedes_through_facts_current() -> None:
    facts = [
        *setting_facts("Set the timeout to 30.", role="user", seq=1, session="s", quote="q1"),
        *setting_facts("Fix the flaky test.", role="user", seq=2, session="s", quote="q2"),
        *setting_facts("The timeout is now 60.", role="user", seq=3, session="s", quote="q3"),
    ]
    assert [(f.key, f.value) for f in facts] == [("timeout", "30"), ("timeout", "60")]
    (current,) = Facts("s", tuple(facts)).current()
    assert (current.value, current.source.seq) == ("60", 3)


def test_through_the_fact_reader_a_later_value_supersedes() -> None:
    from ctxsdk.testing import LogBuilder

    b = LogBuilder(session_id="timeouts")
    b.turn("Set the request timeout to 30 seconds.").assistant(text="Done.").end_turn()
    b.turn("Actually, bump the request timeout to 60 s.").assistant(text="OK.").end_turn()
    facts = Session.from_events(b.header, b.events).facts()
    keyed = [f for f in facts.current() if f.key == "request timeout"]
    assert [(f.kind, f.value, f.unit) for f in keyed] == [("setting", "60", "seconds")]


POSITIVE: list[tuple[str, list[Triple]]] = [
    ("timeout=60", [("timeout", "60", None, False)]),
    ("超时时间是 60 秒", [("timeout", "60", "seconds", False)]),
    ("Set the log level to debug.", [("log level", "debug", None, False)]),
    ("Please change the timeout to 60 and rerun.", [("timeout", "60", None, False)]),
    ("Set the batch-size to 0.5", [("batch size", "0.5", None, False)]),
    ('Set the greeting to "hello world".', [("greeting", "hello world", None, False)]),
    ("strict = true", [("strict", "true", None, False)]),
    ("MAX_RETRIES=5", [("max retry", "5", None, False)]),
    ("The memory limit is 512MB.", [("memory limit", "512", "MB", False)]),
    ("Cap the context at 80%.", []),  # "cap" is no setting verb here: a missed one is fine
    ("Set the context limit to 8000 tokens.", [("context limit", "8000", "tokens", False)]),
    ("the default branch is main", [("default branch", "main", None, False)]),
    ("The branch defaults to develop.", [("default branch", "develop", None, False)]),
    ("The Python version is 3.11.", [("python version", "3.11", None, False)]),
    ("The app is now running on port 8080.", [("port", "8080", None, False)]),
    ("The db is MySQL.", [("database", "MySQL", None, False)]),
    ("Our project's database is SQLite.", [("database", "SQLite", None, False)]),
    ("The timeouts are 30s, because the API is slow.", [("timeout", "30", "seconds", False)]),
    ("CI runs on Jenkins.", [("ci run", "Jenkins", None, False)]),
    ("Retries are capped at three.", [("retry capped", "three", None, False)]),
    ("We deploy to Kubernetes.", [("deploy", "Kubernetes", None, False)]),
    ("数据库是PostgreSQL。", [("database", "PostgreSQL", None, False)]),
    ("我们的数据库为MySQL", [("database", "MySQL", None, False)]),
    ("超时：30秒", [("timeout", "30", "seconds", False)]),
    ("端口号设置为 8080", [("port", "8080", None, False)]),
    ("Persistence uses JSONL.", [("persistence", "JSONL", None, False)]),
    ("TIMEOUT = 30s", [("timeout", "30", "seconds", False)]),
    ("默认分支是 main", [("default branch", "main", None, False)]),
    ("日志级别设为 debug", [("log level", "debug", None, False)]),
    ("把超时时间调整为 30 秒", [("timeout", "30", "seconds", False)]),
    ("重试次数：3", [("retry count", "3", None, False)]),
    ("内存上限是 512MB", [("memory limit", "512", "MB", False)]),
    ("会话超时是 30 分钟", [("session timeout", "30", "minutes", False)]),
    ("部署到 Kubernetes", [("deploy", "Kubernetes", None, False)]),
    ("缓存已关闭", [("cache", "enabled", None, True)]),
    ("这个功能已启用", [("feature", "enabled", None, False)]),
    (
        "Remember this fact for later: the project codeword is MARMALADE.",
        [("project codeword", "MARMALADE", None, False)],
    ),
    ("Remember that the deploy target is staging.", [("deploy target", "staging", None, False)]),
]


@pytest.mark.parametrize(("sentence", "expected"), POSITIVE, ids=[s for s, _ in POSITIVE])
def test_setting_shapes(sentence: str, expected: list[Triple]) -> None:
    assert _kv(sentence) == expected


# -- polarity ------------------------------------------------------------------------------
def test_negation_keeps_key_and_value_and_flips_polarity() -> None:
    assert _kv("The API is public.") == [("api", "public", None, False)]
    assert _kv("The API is not public.") == [("api", "public", None, True)]
    assert _kv("The API isn't public.") == [("api", "public", None, True)]
    (neg,) = setting_facts("The API is not public.", role="user", seq=1, session="a", quote="x")
    (pos,) = setting_facts("The API is public.", role="user", seq=1, session="b", quote="x")
    assert (neg.text, pos.text) == ("API is not public", "API is public")
    assert neg.slot == pos.slot  # one slot: two sessions that say both are a dispute


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Caching is disabled.", [("caching", "enabled", None, True)]),
        ("Caching is enabled.", [("caching", "enabled", None, False)]),
        ("Telemetry is off.", [("telemetry", "enabled", None, True)]),
        ("The email address is optional.", [("email address", "required", None, True)]),
        ("The database is not MySQL.", [("database", "MySQL", None, True)]),
        ("数据库不是MySQL", [("database", "MySQL", None, True)]),
        ("接口不是公开的", [("api", "public", None, True)]),
    ],
)
def test_polarity_words(sentence: str, expected: list[Triple]) -> None:
    assert _kv(sentence) == expected


# -- choices: decisions and preferences with what they turn down ----------------------------
def test_use_x_not_y_is_a_decision_with_the_rejected_alternative() -> None:
    # the denial comes first: the value the statement asserts is the slot's latest
    no, f = setting_facts("Use pnpm, not npm.", role="user", seq=4, session="s", quote="q")
    assert (f.kind, f.key, f.value, f.rejected, f.negated) == (
        "decision",
        "package manager",
        "pnpm",
        ("npm",),
        False,
    )
    assert f.text == "package manager = pnpm (not npm)"
    assert f.source.quote == "q" and f.source.seq == 4
    # the rejected side is a negated fact of the same key (a reader of polarity sees "not npm")
    assert (no.kind, no.key, no.value, no.negated) == ("decision", "package manager", "npm", True)
    assert no.text == "package manager is not npm" and no.source == f.source


def test_use_x_not_y_leaves_x_in_force() -> None:
    s = Session.from_messages([{"role": "user", "content": "Use pnpm, not npm."}], format="openai")
    now = [f for f in s.facts().current() if f.slot == "decision/package manager"]
    assert [(f.value, f.negated) for f in now] == [("pnpm", False)]


@pytest.mark.parametrize(
    ("sentence", "key", "value", "rejected"),
    [
        ("Use pnpm instead of npm.", "package manager", "pnpm", "npm"),
        ("Move storage from SQLite to Postgres.", "storage", "Postgres", "SQLite"),
        ("We switched from MySQL to Postgres.", "database", "Postgres", "MySQL"),
        ("Prefer ruff over flake8.", "linter", "ruff", "flake8"),
    ],
)
def test_every_rejected_alternative_is_also_a_negated_fact(
    sentence: str, key: str, value: str, rejected: str
) -> None:
    got = setting_facts(sentence, role="user", seq=1, session="s", quote=sentence)
    pos = [(f.key, f.value) for f in got if not f.negated]
    neg = [(f.key, f.value) for f in got if f.negated]
    assert pos == [(key, value)] and neg == [(key, rejected)]


def test_a_negated_choice_adds_no_second_negation() -> None:
    got = setting_facts("Don't use npm.", role="user", seq=1, session="s", quote="q")
    assert [(f.key, f.value, f.negated) for f in got] == [("package manager", "npm", True)]


@pytest.mark.parametrize(
    ("sentence", "kind", "key", "value", "rejected", "negated"),
    [
        ("We use Postgres.", "decision", "database", "Postgres", (), False),
        ("Switch the database to Postgres.", "decision", "database", "Postgres", (), False),
        (
            "We switched from MySQL to Postgres.",
            "decision",
            "database",
            "Postgres",
            ("MySQL",),
            False,
        ),
        (
            "Use yarn instead of npm for the package manager.",
            "decision",
            "package manager",
            "yarn",
            ("npm",),
            False,
        ),
        ("I prefer pnpm over npm.", "preference", "package manager", "pnpm", ("npm",), False),
        ("We don't use Redis.", "decision", "cache", "Redis", (), True),
        ("我们使用PostgreSQL", "decision", "database", "PostgreSQL", (), False),
        ("改用pnpm", "decision", "package manager", "pnpm", (), False),
        ("不使用npm", "decision", "package manager", "npm", (), True),
        ("用pnpm而不是npm", "decision", "package manager", "pnpm", ("npm",), False),
        ("我们决定用 pnpm 而不是 npm", "decision", "package manager", "pnpm", ("npm",), False),
        ("使用 Postgres 作为数据库", "decision", "database", "Postgres", (), False),
        ("数据库换成 MySQL", "decision", "database", "MySQL", (), False),
        ("我们用 Vue 做前端", "decision", "frontend", "Vue", (), False),
        ("Use pytest for tests.", "decision", "test framework", "pytest", (), False),
        ("For persistence we settled on SQLite.", "decision", "persistence", "SQLite", (), False),
        ("For the queue, we went with Kafka.", "decision", "queue", "Kafka", (), False),
    ],
)
def test_choices(
    sentence: str, kind: str, key: str, value: str, rejected: tuple[str, ...], negated: bool
) -> None:
    (s,) = parse_setting(sentence, "user")
    assert (s.kind, s.key, s.value, s.rejected, s.negated) == (kind, key, value, rejected, negated)


# -- what is not a setting -----------------------------------------------------------------
NOT_SETTINGS = [
    # Merge's noise on real sessions today
    "color = 6c757d",
    "14 package = looking for funding",
    "success = no issues found in 43 source",
    "摘要：把 1 改掉",
    # prose that only looks like "X is Y"
    "The issue is that the parser fails on empty input.",
    "This is correct.",
    "The file is package.json",
    "The fix is simple.",
    "It is done.",
    "`estimator` is `StandardScaler` (the class).",
    "`_coord_names` is a set.",
    "`sys.path[0]` is `cwd`.",
    "The score is updated by adding the value of the new merged tile.",
    "Let me run the tests.",
    "THOUGHT: Line 147 is indeed:",
    "Your task is specifically to make changes to non-test files in the current directory.",
    "This directive is optional, but is made so only for backward compatibility.",
    'The labels are "3", "4", "5", "6".',
    "`extra_threshold` = 1.0.",
    "extra_threshold = 1.0.",  # the splitter drops backticks: still a variable
    "So len should be 0.",
    "Threshold = 1.0.",
    "u should be 0.",
    "SplitDateTimeWidget relies on MultiWidget.value_from_datadict.",
    "The project codeword is MARMALADE.",  # a name under a key that names no setting
    "Unified Session Store Design",
    "## Integration Points Summary",
    "libhdf5: None",
    "82739 seconds = 22:58:59.",
    "my_date_day=1&my_date_month=1&my_date_year=1234567821345678",
    # edits, not values
    "Set it to 60.",
    "Change the function to return None.",
    "change hello to goodbye",
    "Update SSO sync to process all chain files",
    "Note: see the README.",
    "if a == 3 then stop",
    # questions, hypotheticals, hedges
    "Should we use MySQL?",
    "Is the database PostgreSQL?",
    "What is the timeout?",
    "If we used MySQL, the tests would be faster.",
    "Maybe the timeout is 30s.",
    "I think the database is MySQL.",
    "The timeout is probably 30 seconds.",
    "We might switch the database to MySQL.",
    "Then we can set the extra threshold to 1.",
    "数据库是MySQL吗？",
    "如果数据库是MySQL，测试会失败",
    "数据库可能是MySQL",
    "我们用户很多",
    "我觉得数据库是MySQL",
    "问题关闭了",
    "这个问题是因为缓存",
    "结果是 3",
    "文件是 config.yaml",
    # chatter
    "Okay, moving on to the next item on the list we agreed earlier today.",
    "I will check the configuration next and report anything that looks off.",
    "",
    "   ",
]


@pytest.mark.parametrize("sentence", NOT_SETTINGS)
def test_not_a_setting(sentence: str) -> None:
    assert parse_setting(sentence, "assistant") == []


# -- units ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("60s", ("60", "seconds")),
        ("60 s", ("60", "seconds")),
        ("60 sec", ("60", "seconds")),
        ("60 seconds", ("60", "seconds")),
        ("60秒", ("60", "seconds")),
        ("250ms", ("250", "milliseconds")),
        ("5m", ("5", "minutes")),
        ("5 minutes", ("5", "minutes")),
        ("2h", ("2", "hours")),
        ("7 days", ("7", "days")),
        ("512 MB", ("512", "MB")),
        ("2GB", ("2", "GB")),
        ("80%", ("80", "%")),
        ("12px", ("12", "px")),
        ("8000 tokens", ("8000", "tokens")),
        ("sixty seconds", ("sixty", "seconds")),
        ("3.11", ("3.11", None)),
        ("5 m", None),  # a detached "m" is no unit
        ("60 apples", None),
        ("abc", None),
    ],
)
def test_units(text: str, expected: tuple[str, str | None] | None) -> None:
    assert quantity(text) == expected


# -- MergeBench: the templated sentences' values, as the generator wrote them ------------------
def _mergebench_agreement(paraphrase: bool) -> tuple[int, int, dict[str, set[str]]]:
    """(sentences stating a generated fact, those whose fact the kernel reads with the
    generated value, the kernel keys per generated key)."""
    from ctxsdk.bench import _mergebench as mb

    total = agreed = 0
    keys: dict[str, set[str]] = {}
    for seed in range(1, 6):
        sc = mb.generate(seed, 10, 2, 2, paraphrase=paraphrase)
        for branch in sc.branches:
            for m in branch.messages:
                for s in sentences(m.text):
                    fact = next((f for f in sc.facts if f.value.lower() in s.lower()), None)
                    if fact is None:
                        continue
                    total += 1
                    mine = parse_setting(s, m.role)
                    got = [
                        (g.value.lower() + (f" {g.unit}" if g.unit else "")).lower()
                        for g in mine
                        if not g.negated
                    ]
                    agreed += any(fact.value.lower() in v or v in fact.value.lower() for v in got)
                    keys.setdefault(fact.key, set()).update(g.key for g in mine if not g.negated)
    return total, agreed, keys


def test_mergebench_templated_sentences_are_read() -> None:
    total, agreed, keys = _mergebench_agreement(paraphrase=False)
    assert total >= 50
    assert agreed / total >= 0.95
    assert keys and all(len(k) == 1 for k in keys.values())  # one key per topic


def test_mergebench_paraphrases_are_mostly_read() -> None:
    total, agreed, _ = _mergebench_agreement(paraphrase=True)
    assert total >= 40
    assert agreed / total >= 0.60


# -- real sessions -------------------------------------------------------------------------
CORPUS = SHARED / "data" / "agent-sessions"


def _need(rel: str) -> Path:
    path = CORPUS / rel
    if not path.exists():
        pytest.skip(f"{path} is not available (../shared/data)")
    return path


def _texts(s: Session) -> Iterator[tuple[str, str]]:
    for ev in s.raw_events:
        etype = ev.get("type")
        if etype not in ("user/message", "assistant/message"):
            continue
        msg = message_of(ev)
        if msg is None:
            continue
        source = msg.get("source")
        injected = not (isinstance(source, dict) and source.get("kind") == "user")
        if etype == "user/message" and source is not None and injected:
            continue  # injected context, as the fact reader skips it
        yield ("user" if etype == "user/message" else "assistant"), message_text(msg)


def _settings_of(s: Session) -> list[tuple[str, str]]:
    out = []
    for role, text in _texts(s):
        for sentence in sentences(text):
            for got in parse_setting(sentence, role):
                out.append((got.key, got.value))
    return out


def _open(fmt: str, rel: str) -> Session:
    return import_file(fmt, _need(rel))


def test_real_openhands_port() -> None:
    s = _open("openhands", "openhands/basic_gui_mode.json")
    assert ("port", "8000") in _settings_of(s)


def test_real_dsh_remembered_fact() -> None:
    s = Session.open(_need("dsh/subagent-fork-in-process.session.jsonl"))
    assert ("project codeword", "MARMALADE") in _settings_of(s)


def test_real_codex_env_default() -> None:
    s = _open(
        "codex", "codex/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
    )
    got = _settings_of(s)
    assert any(value == "90" and "context" in key for key, value in got), got


@pytest.mark.parametrize(
    ("fmt", "rel"),
    [
        ("claude-code", "claude-code/codemie__session-196820da.jsonl"),
        ("claude-code", "claude-code/codemie__session-624a4a58.jsonl"),
        ("claude-code", "claude-code/spotter__8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"),
        ("mini-swe-agent", "mini-swe-agent/scikit-learn__scikit-learn-26194.traj.json"),
        ("mini-swe-agent", "mini-swe-agent/pydata__xarray-4629.traj.json"),
        ("mini-swe-agent", "mini-swe-agent/sympy__sympy-20428.traj.json"),
        ("swe-agent", "swe-agent/ctf_crypto__katy.traj"),
        ("aider", "aider/Monochromatic__.aider.chat.history.md"),
        ("aider", "aider/mozgoslav__.aider.chat.history.md"),
        ("gemini-cli", "gemini-cli/session-2026-01-16T11-01-file-ops-37b7abef.json"),
    ],
)
def test_real_sessions_give_few_short_settings(fmt: str, rel: str) -> None:
    """Real assistant text is full of "X is Y" that is no setting: the extractor stays quiet
    (at most one setting per 200 sentences), and what it gives is a short key and value."""
    s = _open(fmt, rel)
    n = sum(len(sentences(t)) for _, t in _texts(s))
    got = _settings_of(s)
    assert len(got) <= max(3, n // 200), got
    for key, value in got:
        assert 1 <= len(key.split()) <= 5 and len(value) <= 80, (key, value)
        assert not key[0].isdigit()


# -- never raise ---------------------------------------------------------------------------
@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                *"ab xyz=:：;,.!?`'\"()[]{}<>-_/\\*#0123456789\n\t",
                *("是", "不是", "设为", "使用", "秒", " is ", " not ", " to ", "set ", "use "),
            ]
        ),
        max_size=60,
    ).map("".join),
    st.sampled_from(["user", "assistant", "tool", ""]),
)
def test_odd_text_never_raises(text: str, role: str) -> None:
    facts = setting_facts(text, role=role, seq=0, session="", quote=text)
    for f in facts:
        assert f.key and f.value is not None
        assert len(f.source.quote) <= QUOTE_MAX
        assert f.kind in ("setting", "decision", "preference")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_unicode_never_raises(text: str) -> None:
    assert isinstance(parse_setting(text, "user"), list)


# -- shapes without a setting verb: limits, attempts, lifetimes, clefts, routes ---------------
@pytest.mark.parametrize(
    ("sentence", "key", "value", "unit"),
    [
        ("At most 8 workers may run at once.", "max workers", "8", None),
        ("No more than twenty requests per second.", "max requests", "twenty", None),
        ("The queue never grows beyond 500 messages.", "max messages", "500", None),
        ("We allow 10 concurrent uploads, no more.", "max uploads", "10", None),
        ("The server supports up to 64 open sockets.", "max sockets", "64", None),
        ("A webhook delivery is retried 5 times at most.", "max attempts", "5", None),
        ("The uploader gives up after four attempts.", "max attempts", "four", None),
        ("The worker retries 3 times before failing the job.", "max attempts", "3", None),
        ("Tokens stay in the cache for 15 minutes.", "cache ttl", "15", "minutes"),
        (
            "We keep cached pages around for 2 hours before evicting them.",
            "cache ttl",
            "2",
            "hours",
        ),
        ("Sessions last for 30 minutes.", "session lifetime", "30", "minutes"),
        ("Redis is what powers the job queue.", "job queue powered", "Redis", None),
        ("Billing data comes from Stripe.", "billing data come from", "Stripe", None),
        ("We ship our logs to Loki.", "log shipped", "Loki", None),
        ("We send all alerts to PagerDuty.", "alert sent", "PagerDuty", None),
        ("In staging everything is Docker.", "staging", "Docker", None),
        ("We moved the cache over to Valkey.", "cache", "Valkey", None),
        ("We moved search over to Meilisearch last week.", "search", "Meilisearch", None),
        ("The database was switched to MySQL yesterday.", "database", "MySQL", None),
        ("Use tabs for indentation in this repo.", "indentation", "tabs", None),
        ("Use 4 spaces for indentation across the codebase.", "indentation", "4", "spaces"),
        ("Remember, timeout = 30", "timeout", "30", None),
        ("Again, the retry limit is 5.", "retry limit", "5", None),
        ("Switch plans: use SQLite.", "database", "SQLite", None),
        ("Step 2: set the batch size to 64.", "batch size", "64", None),
    ],
)
def test_settings_said_without_a_setting_verb(
    sentence: str, key: str, value: str, unit: str | None
) -> None:
    got = [(s.key, s.value, s.unit) for s in parse_setting(sentence, "user") if not s.negated]
    assert got[:1] == [(key, value, unit)]


@pytest.mark.parametrize(
    "sentence",
    [
        "I tried 3 times.",
        "We tried 5 times and it still fails.",
        "At most 3 tests failed.",
        "In general everything is fine.",
        "On reflection everything is broken.",
        "Storage: Session store with timestamp",
        "Summary: the tests pass",
        "We kept the old file for 2 days.",
    ],
)
def test_look_alikes_of_those_shapes_give_nothing(sentence: str) -> None:
    assert parse_setting(sentence, "assistant") == []


@pytest.mark.parametrize(
    ("sentence", "key", "value"),
    [
        ("conversationId is the same as sessionId.", "conversation id", "sessionId"),
        ("The replica region is the same as primary_region.", None, None),
        (
            "Also look at my eslint config packages/config/eslint/src/index.ts",
            "eslint configuration",
            "packages/config/eslint/src/index.ts",
        ),
        (
            "Our CI workflow is in .github/workflows/ci.yml.",
            "ci workflow",
            ".github/workflows/ci.yml",
        ),
        ("The result is the same as before.", None, None),
    ],
)
def test_identity_and_where_a_part_lives(sentence: str, key: str | None, value: str | None) -> None:
    got = [(s.key, s.value) for s in parse_setting(sentence, "user")]
    if key is None:
        assert all(k != "result" for k, _ in got)
    else:
        assert got == [(key, value)]
