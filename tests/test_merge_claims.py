"""Claims from the fact kernel: keyed facts as claims, evidence by origin, polarity,
redaction, supersession, original case kept for display, and paraphrases of one key meeting
in one slot. The sentence rules themselves are the kernel's (tests/test_facts_*.py)."""

from __future__ import annotations

import dataclasses

import pytest

import ctxsdk as cx
from ctxsdk.merge import Claim, Evidence, SlotState
from ctxsdk.merge._claims import STATEMENT, claims_to_states, comparison_value, extract_claims
from ctxsdk.merge._slots import select
from ctxsdk.testing import LogBuilder


def _session(session_id: str, prompts: list[str], **kw: object) -> cx.Session:
    b = LogBuilder(session_id=session_id, **kw)  # type: ignore[arg-type]
    for p in prompts:
        b.turn(p).assistant(text="Noted.").end_turn()
    return cx.Session.from_events(b.header, b.events)


def _kv(text: str) -> list[tuple[str, str, bool]]:
    s = _session("one", [text], runtime_context=None)
    claims = extract_claims(s)
    return [(c.key, c.value, c.negated) for c in claims if c.origin == "user" and not c.statement]


# -- the patterns, positive ------------------------------------------------------------------
POSITIVE = [
    ("The database is PostgreSQL.", [("database", "postgresql", False)]),
    ("The db is MySQL.", [("database", "mysql", False)]),
    ("Our repo config is strict.", [("repository configuration", "strict", False)]),
    ("Records are stored as JSONL.", [("record format", "jsonl", False)]),
    ("Actually, we switched the cache to Redis.", [("cache", "redis", False)]),
    ("Retries are capped at three.", [("retry capped", "three", False)]),
    ("CI runs on Jenkins.", [("ci run", "jenkins", False)]),
    ("The CI run on jenkins", [("ci run", "jenkins", False)]),
    ("Logs go to stdout.", [("log go", "stdout", False)]),
    ("We deploy to Kubernetes.", [("deploy", "kubernetes", False)]),
    ("Authentication uses the OAuth flow.", [("authentication", "oauth flow", False)]),
    ("The parser relies on regex.", [("parser rely", "regex", False)]),
    ("Our project's database is SQLite.", [("database", "sqlite", False)]),
    ("database is postgres", [("database", "postgres", False)]),
    ("Timeout: 30s", [("timeout", "30 seconds", False)]),
    ("TIMEOUT = 30s", [("timeout", "30 seconds", False)]),
    ("We use Redis for the cache.", [("cache", "redis", False)]),
    ("Use pytest for tests.", [("test framework", "pytest", False)]),
    ("We switched the database to MySQL.", [("database", "mysql", False)]),
    (  # the alternative left behind is a negated claim of the same key
        "Move the database from SQLite to PostgreSQL.",
        [("database", "sqlite", True), ("database", "postgresql", False)],
    ),
    ("The timeout was changed to 45s.", [("timeout", "45 seconds", False)]),
    ("Set the timeout to 60 seconds.", [("timeout", "60 seconds", False)]),
    ("The timeout should be 60s.", [("timeout", "60 seconds", False)]),
    ("Use pnpm, not npm.", [("package manager", "npm", True), ("package manager", "pnpm", False)]),
    (
        "Use yarn instead of npm for the package manager.",
        [("package manager", "npm", True), ("package manager", "yarn", False)],
    ),
    ("The database is not MySQL.", [("database", "mysql", True)]),
    ("Don't use npm.", [("package manager", "npm", True)]),
    ("The Python version is 3.11.", [("python version", "3.11", False)]),
    ("The timeouts are 30s, because the API is slow.", [("timeout", "30 seconds", False)]),
    # CJK
    ("数据库是PostgreSQL。", [("database", "postgresql", False)]),
    ("我们的数据库为MySQL", [("database", "mysql", False)]),
    ("超时：30秒", [("timeout", "30 seconds", False)]),
    ("用pnpm。", [("package manager", "pnpm", False)]),
    ("改用pnpm", [("package manager", "pnpm", False)]),
    ("不用npm", [("package manager", "npm", True)]),
    ("数据库改为MySQL", [("database", "mysql", False)]),
    ("数据库不是MySQL", [("database", "mysql", True)]),
]


@pytest.mark.parametrize(("text", "expected"), POSITIVE, ids=[t for t, _ in POSITIVE])
def test_pattern_gives_the_keyed_claim(text: str, expected: list[tuple[str, str, bool]]) -> None:
    assert _kv(text) == expected


NEGATIVE = [
    "Okay, moving on to the next item on the list we agreed earlier today.",
    "I will check the configuration next and report anything that looks off.",
    "That matches what I remembered from the earlier discussion on this topic.",
    "The tests run on every push to the main branch.",
    "It comes from conftest.",
    "The api key is [REDACTED:openai].",
    "Should we use MySQL?",
    "Should we use MySQL for the database",
    "Is the database PostgreSQL?",
    "What is the timeout?",
    "If the database were MySQL, the tests would fail.",
    "Maybe the timeout is 30s.",
    "We might switch the database to MySQL.",
    "It is done.",
    "This is great!",
    "Note: run the tests first.",
    "See https://example.com/docs for details.",
    "Thanks",
    "数据库是MySQL吗？",
    "如果数据库是MySQL，测试会失败",
    "数据库可能是MySQL",
    "我们用户很多",
]


@pytest.mark.parametrize("text", NEGATIVE)
def test_questions_hypotheticals_and_chatter_give_no_claim(text: str) -> None:
    assert _kv(text) == []


def test_code_blocks_are_skipped() -> None:
    text = "Here it is:\n```python\ntimeout = 30\nthe database is mysql\n```\nThe port is 5432."
    assert _kv(text) == [("port", "5432", False)]


def test_code_lines_and_tool_output_give_no_claim_but_tool_facts_do() -> None:
    b = LogBuilder(session_id="code", runtime_context=None)
    b.turn("Read the config.").assistant(tool_calls=[("read", {"path": "cfg.py"})])
    listing = '1\tTIMEOUT = 30\n2\tout = base / "x.csv"\n3\tsession = connect(db_path)'
    b.tool_results([listing]).next_step()
    b.assistant(tool_calls=[("edit", {"path": "cfg.py"})])
    b.tool_results(["Edited src/cfg.py: replaced 1 occurrence."]).next_step()
    b.assistant(text="Do not edit files.").end_turn()
    s = cx.Session.from_events(b.header, b.events)
    keyed = [(c.key, c.value, c.origin) for c in extract_claims(s) if not c.statement]
    # a file's contents give nothing; the kernel's tool facts (what was read, the language)
    # are tool-verified claims
    assert ("timeout", "30", "tool") not in keyed
    assert ("file cfg.py", "cfg.py", "tool") in keyed
    assert all(origin == "tool" for _, _, origin in keyed)


def test_sentences_split_on_every_terminator_but_keep_dotted_tokens() -> None:
    text = "The runtime is node.js; the port is 8080! 超时：30秒；数据库是MySQL。The file is package.json"
    assert _kv(text)[:4] == [
        ("runtime", "node.js", False),
        ("port", "8080", False),
        ("timeout", "30 seconds", False),
        ("database", "mysql", False),
    ]


def test_values_keep_their_original_case_for_display() -> None:
    [c] = [c for c in extract_claims(_session("s", ["The ID format is UUIDs."])) if not c.statement]
    assert (c.value, c.shown, c.display) == ("uuids", "UUIDs", "UUIDs")
    [t] = extract_claims(_session("t", ["The timeout is 30s."]))
    assert (t.value, t.shown) == ("30 seconds", "30 seconds")


def test_comparison_value() -> None:
    assert comparison_value("PostgreSQL") == "postgresql"
    assert comparison_value("  60 ", "Seconds") == "60 seconds"


# -- two sessions meet in one key ----------------------------------------------------------
def test_different_wording_meets_in_one_key() -> None:
    a = _session("sess-a", ["The database is PostgreSQL."])
    b = _session("sess-b", ["We switched the database to MySQL."])
    ca, cb = extract_claims(a), extract_claims(b)
    assert [(c.key, c.value) for c in ca] == [("database", "postgresql")]
    assert [(c.key, c.value) for c in cb] == [("database", "mysql")]
    states = claims_to_states(ca + cb)
    assert list(states) == ["database"]
    assert states["database"] == SlotState.of(("postgresql", "sess-a", 4), ("mysql", "sess-b", 4))
    assert select(states["database"]).outcome == "disputed"


def test_a_source_asserting_a_value_does_not_also_vote_against_others() -> None:
    pos = Claim("package manager", "pnpm", 4, "Use pnpm, not npm.", "s", 1)
    neg = dataclasses.replace(pos, value="npm", negated=True)
    assert claims_to_states([pos, neg]) == {"package manager": SlotState.of(("pnpm", "s", 4))}
    alone = claims_to_states([neg])
    assert alone["package manager"].values() == ("not npm",)
    assert claims_to_states([neg], include_negated=False) == {}


def test_opposite_polarity_across_sessions_is_a_dispute() -> None:
    a = extract_claims(_session("a", ["The API is not public."]))
    b = extract_claims(_session("b", ["The API is public."]))
    assert [(c.key, c.value, c.negated) for c in a] == [("api", "public", True)]
    states = claims_to_states(a + b)
    assert states["api"].values() == ("not public", "public")
    assert select(states["api"]).outcome == "disputed"


# -- evidence by origin ---------------------------------------------------------------------
def _mixed() -> cx.Session:
    b = LogBuilder(session_id="mixed")
    b.turn("The database is PostgreSQL.")
    b.assistant(
        text="The port is 5432.",
        reasoning="I think the cache is Redis.",
        tool_calls=[("bash", {"command": "cat config.toml"})],
    )
    b.tool_results(["timeout = 30s"])
    b.next_step().assistant(text="Done.").end_turn()
    return cx.Session.from_events(b.header, b.events)


def test_evidence_by_origin() -> None:
    got = {
        (c.key, c.value): (c.evidence, c.origin, c.kind)
        for c in extract_claims(_mixed())
        if not c.statement
    }
    # the kernel reads no reasoning block and no command output's text: the cache guess
    # and the ``timeout = 30s`` line of the tool result give nothing
    assert got == {
        ("database", "postgresql"): (Evidence.USER_STATED, "user", "fact"),
        ("port", "5432"): (Evidence.INFERRED, "assistant", "fact"),
    }
    for c in extract_claims(_mixed()):
        assert c.source == "mixed"


def test_tool_facts_are_tool_verified() -> None:
    b = LogBuilder(session_id="tools", runtime_context=None)
    b.turn("Run the tests.").assistant(tool_calls=[("bash", {"command": "pytest -q"})])
    b.tool_results(["3 passed in 0.1s"]).next_step().assistant(text="Done.").end_turn()
    s = cx.Session.from_events(b.header, b.events)
    keyed = {c.key: c for c in extract_claims(s) if not c.statement}
    assert keyed, "the kernel reads a test command from the tool call"
    assert {c.origin for c in keyed.values()} == {"tool"}
    assert {c.evidence for c in keyed.values()} == {Evidence.TOOL_VERIFIED}


def test_injected_plugin_messages_give_no_claims() -> None:
    sections = [("policy", "The file policy is danger-full-access.")]
    s = _session("inj", ["The database is PostgreSQL."], runtime_context=sections)
    assert any(n.message.source.kind == "plugin" and n.message.role == "user" for n in s.surface())
    assert [c.key for c in extract_claims(s)] == ["database"]


def test_system_prompt_gives_no_claims() -> None:
    s = _session(
        "sys", ["Hello"], system="The database is Oracle. Timeout: 5s.", runtime_context=None
    )
    system_seqs = {n.seq for n in s.surface() if n.message.role == "system"}
    assert system_seqs
    assert [c for c in extract_claims(s) if c.key in ("database", "timeout")] == []


def test_user_statements_without_a_key_meet_by_their_words() -> None:
    a = extract_claims(_session("a", ["Don't produce code, design the solution first."]))
    b = extract_claims(_session("b", ["don't produce code, design the solution first"]))
    assert [c.statement for c in a] == [True] and a[0].key == b[0].key
    assert a[0].shown == "Don't produce code, design the solution first."
    assert claims_to_states(a + b)[a[0].key].values() == (STATEMENT,)


# -- redaction --------------------------------------------------------------------------------
def test_secrets_never_reach_a_claim() -> None:
    secret = "sk-" + "Zq9x" * 8  # assembled at runtime: no literal token shape in the repo
    labelled = "Kp2" * 7
    s = _session(
        "sec",
        [
            f"The api key is {secret}.",
            f"password = {labelled}",
            f"Our token: {secret}",
            f"Deploy with {secret}. The database is SQLite.",
        ],
    )
    claims = extract_claims(s)
    for c in claims:
        for field in dataclasses.astuple(c):
            assert secret not in str(field) and labelled not in str(field)
    # a withheld credential is no belief: only the sentence with other content gives a claim
    assert [(c.key, c.value) for c in claims] == [("database", "sqlite")]


# -- supersession -----------------------------------------------------------------------------
def test_a_later_assertion_supersedes_within_a_source() -> None:
    s = _session(
        "sup",
        ["The timeout is 30s.", "The timeout was changed to 60s.", "The port is 80."],
    )
    claims = extract_claims(s)
    timeline = [(c.key, c.value, c.superseded) for c in claims]
    assert timeline == [
        ("timeout", "30 seconds", True),
        ("timeout", "60 seconds", False),
        ("port", "80", False),
    ]
    states = claims_to_states(claims)
    assert states["timeout"] == SlotState.of(("60 seconds", "sup", 4))


def test_supersession_does_not_cross_sources() -> None:
    a = extract_claims(_session("a", ["The timeout is 30s."]))
    b = extract_claims(_session("b", ["The timeout is 60s."]))
    assert not any(c.superseded for c in a + b)
    assert claims_to_states(a + b)["timeout"].values() == ("30 seconds", "60 seconds")


def test_a_later_negation_supersedes_only_its_value() -> None:
    s = _session("neg", ["We use npm.", "Don't use npm.", "Use pnpm."])
    got = [(c.value, c.negated, c.superseded) for c in extract_claims(s) if not c.statement]
    assert got == [("npm", False, True), ("npm", True, True), ("pnpm", False, False)]


def test_states_keep_the_highest_evidence_per_source_and_value() -> None:
    c = Claim("db", "mysql", 2, "db: mysql", "s", 1)
    d = dataclasses.replace(c, evidence=4, seq=2)
    assert claims_to_states([c, d]) == {"db": SlotState.of(("mysql", "s", 4))}


# -- determinism --------------------------------------------------------------------------------
def test_extraction_is_deterministic() -> None:
    first = extract_claims(_mixed())
    assert first == extract_claims(_mixed())
    assert claims_to_states(first) == claims_to_states(extract_claims(_mixed()))
    assert hash(first[0]) == hash(extract_claims(_mixed())[0])


def test_claim_is_frozen_and_prints() -> None:
    c = extract_claims(_session("p", ["The port is 80."]))[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.value = "81"  # type: ignore[misc]
    assert str(c) == f"port = 80 @4 [p#{c.seq}]"
