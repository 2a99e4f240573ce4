"""The state's findings: the assistant's own statements that name something specific (a path,
a version, a code name, a code span, a quoted literal, a quantity), chosen for what the session
keeps naming, bounded, each with its source seq; and files written by a shell command keep the
command that changed them."""

from __future__ import annotations

import json
from typing import Any

import pytest

import ctxsdk as cx
from ctxsdk.bench._realworld import corpus_dir, load_session
from ctxsdk.fold._state import FoldState, StateLimits, reduce_events
from ctxsdk.session.kernel import Statement, select_statements, statements
from ctxsdk.testing import LogBuilder

PLAIN_SYSTEM = "You are a coding agent."


def reduce(b: LogBuilder, **kw: Any) -> FoldState:
    s = cx.Session.from_events(b.header, b.events)
    return reduce_events(s.raw_events, **kw)


def texts(state: FoldState) -> list[str]:
    return [str(a.value) for a in state.findings]


def assistant_seqs(b: LogBuilder) -> list[int]:
    return [e["seq"] for e in b.events if e["type"] == "assistant/message"]


# --- which sentences are statements ---------------------------------------------------------


def test_a_statement_names_paths_spans_quantities_and_literals() -> None:
    text = (
        "EnvManager stores the config in plain text at `~/.app/app-cli.config.json`.\n"
        "The seed is multiplied by 0x5deece66d and cut to 48 bits.\n"
        "The game uses the arrow keys and 'q' to quit.\n"
        "The repository has about 49,000 lines of TypeScript.\n"
        "Storage: ~/.app/conversations/messages.jsonl"
    )
    got = {st.text: st.names for st in statements(text)}
    assert (
        "~/.app/app-cli.config.json"
        in got["EnvManager stores the config in plain text at ~/.app/app-cli.config.json."]
    )
    assert "0x5deece66d" in got["The seed is multiplied by 0x5deece66d and cut to 48 bits."]
    assert "'q'" in got["The game uses the arrow keys and 'q' to quit."]
    assert "49,000 lines" in got["The repository has about 49,000 lines of TypeScript."]
    # a label and its value is a statement however short
    assert "messages.jsonl" in got["Storage: ~/.app/conversations/messages.jsonl"]


def test_plans_questions_acknowledgements_and_code_are_not_statements() -> None:
    text = (
        "Let me check `src/app.py` first.\n"
        "I'll run `pytest -q` next.\n"
        "I’m looking for the default in `config.ts` now.\n"
        "Should I also update `README.md`?\n"
        "Sure!\n"
        "THOUGHT: The handler lives in `server/routes.py`.\n"
        "```python\nTIMEOUT_SECONDS = 30  # in src/settings.py\n```\n"
        "src/app.py"
    )
    got = [st.text for st in statements(text)]
    assert got == ["The handler lives in server/routes.py."]  # the harness label left out


def test_verdicts_presentations_led_plans_and_plain_steps_are_not_findings() -> None:
    """The strict reading (Fold's findings) leaves out what says nothing the work found: a
    verdict on it ("The change looks correct."), a sentence presenting the block that
    follows, a plan after a lead clause or an assent ("Since …, I'll …"), advice to the
    reader that names nothing; a verdict that goes on to say something, advice that names a
    file, and a plain step, stay. The plain reading (Memory's) keeps them all."""
    text = (
        "The change looks correct.\n"
        "It works as expected (returns None).\n"
        "I'm now confident in my solution.\n"
        "Sure, I can help you create a simple game.\n"
        "Here is the SEARCH/REPLACE block for `schemas/index.ts`.\n"
        "To add the schema, here are the changes.\n"
        "Since we are creating a new file, I'll name it `pong_game.py`.\n"
        "To implement the commands, we need to create new scripts.\n"
        "Create the game loop.\n"
        "You can adjust the values further if you want the ball to move slower.\n"
        "The fix looks correct because `max()` of an empty list raises ValueError.\n"
        "Review `src/cli/index.ts` for the command registration.\n"
        "You can set `SYNC_RETRIES` in `.env` to retry longer.\n"
    )
    got = [st.text for st in statements(text, strict=True)]
    assert got == [
        "Create the game loop.",  # a plain imperative may be how the project runs: it stays
        "The fix looks correct because max() of an empty list raises ValueError.",
        "Review src/cli/index.ts for the command registration.",
        "You can set SYNC_RETRIES in .env to retry longer.",
    ]
    loose = [st.text for st in statements(text)]
    assert (
        "The change looks correct." in loose
        and "Sure, I can help you create a simple game." in loose
    )
    assert len(loose) > len(got)


def test_a_sentence_cut_off_before_its_block_is_not_a_statement() -> None:
    # mini-swe-agent's THOUGHT: an intro whose code block the splitter leaves out
    text = (
        "The PR description says\n```\nmethod = builtin_str(method)\n```\n"
        "If I change the condition in `astropy/units/decorators.py` to\n"
        "```python\nif ann is not None:\n```\n"
        "The fix should look something like this\n"
        "Wait, `requests/auth.py` imports it\n"
        "The default timeout in `src/settings.py` is 30 seconds.\n"
    )
    got = [st.text for st in statements(text)]
    assert got == [
        "Wait, requests/auth.py imports it",  # ends on an object: a whole sentence
        "The default timeout in src/settings.py is 30 seconds.",
    ]


def test_select_prefers_what_the_session_keeps_naming_and_skips_restatements() -> None:
    found = [
        (1, Statement("The cache is in src/cache.py.", ("cache.py", "src/cache.py"))),
        (2, Statement("The port is 8080 for now.", ("8080",))),
        (3, Statement("src/cache.py keeps 512 MB.", ("cache.py", "src/cache.py", "512 mb"))),
        (4, Statement("Again: the cache is in src/cache.py.", ("cache.py", "src/cache.py"))),
        (5, Statement("The build works on this machine.", ())),
    ]
    # the most-named file first (its newest full statement), then the rest by what it adds
    assert [seq for seq, _ in select_statements(found, 1)] == [3]
    assert [seq for seq, _ in select_statements(found, 2)] == [2, 3]
    # a restatement adds nothing named; room left goes to the newest plain statement
    assert [seq for seq, _ in select_statements(found, 4)] == [2, 3, 5]
    assert select_statements(found, 0) == []
    # a grown cap is for named statements: plain ones fill only up to the room
    assert [seq for seq, _ in select_statements(found, 4, room=2)] == [2, 3]
    assert [seq for seq, _ in select_statements(found, 4, room=3)] == [2, 3, 5]


# --- the state ------------------------------------------------------------------------------


def test_the_state_keeps_the_assistants_findings_with_their_source() -> None:
    b = LogBuilder(session_id="findings", system=PLAIN_SYSTEM)
    b.turn("Where does the CLI keep its config?")
    b.assistant(
        text="Let me look at `src/env/manager.ts`.",
        tool_calls=[("read_file", {"path": "src/env/manager.ts"})],
    )
    b.tool_results(["export class EnvManager { CONFIG = 'tool-output-only.json' }"]).next_step()
    b.assistant(
        text=(
            "EnvManager (`src/env/manager.ts`) stores the CLI configuration in plain text "
            "JSON at `~/.app/app-cli.config.json`. Sure!"
        ),
        reasoning="Maybe the secret store is in src/env/secret-store.ts as well.",
    ).end_turn()
    state = reduce(b)
    assert texts(state) == [
        "EnvManager (src/env/manager.ts) stores the CLI configuration in plain text JSON at "
        "~/.app/app-cli.config.json."
    ]
    (finding,) = state.findings
    assert finding.kind == "finding" and finding.authority == "hypothesis"
    assert finding.sources == (assistant_seqs(b)[-1],)
    assert state.anchor(finding.id) == finding  # an active item, with provenance
    shown = str(state) + json.dumps(state.to_json())
    assert "Findings (the assistant's, unverified):" in str(state)
    assert "app-cli.config.json" in shown and state.to_json()["findings"][0]["id"] == finding.id
    # never the plan, the reasoning or the tool output
    assert "secret-store" not in shown and "tool-output-only" not in shown


def test_findings_are_bounded_and_a_restatement_adds_a_source() -> None:
    b = LogBuilder(session_id="bounded", system=PLAIN_SYSTEM)
    b.turn("Explain the layout.")
    lines = [f"Module number {i} lives in `pkg/mod_{i}.py` and is small." for i in range(10)]
    b.assistant(text="\n".join(lines)).end_turn()
    b.turn("And the first one again?")
    b.assistant(text=lines[0]).end_turn()
    state = reduce(b, limits=StateLimits(findings=3, growth=1))
    assert len(state.findings) == 3
    first = next(a for a in state.findings if "mod_0.py" in str(a.value))
    assert first.sources == tuple(assistant_seqs(b))  # said twice: both seqs
    assert len(reduce(b, limits=StateLimits(findings=1, growth=1)).findings) == 1


def test_a_long_session_keeps_more_findings_but_never_unbounded() -> None:
    def said(n: int) -> LogBuilder:
        b = LogBuilder(session_id=f"long-{n}", system=PLAIN_SYSTEM)
        b.turn("Explain the layout.")
        lines = [f"Module number {i} lives in `pkg/mod_{i}.py` and is small." for i in range(n)]
        b.assistant(text="\n".join(lines)).end_turn()
        return b

    limits = StateLimits(findings=4, growth=3)
    assert len(reduce(said(4), limits=limits).findings) == 4  # short: the cap
    assert len(reduce(said(16), limits=limits).findings) == 8  # sqrt(4 x 16)
    assert len(reduce(said(400), limits=limits).findings) == 12  # at most 3 x 4
    assert limits.findings_cap(10**6) == 12 and limits.findings_cap(0) == 4
    # a long session's plain sentences fill no more than the base cap's room
    b = said(4)
    b.turn("Is it done?")
    plain = "\n".join(f"The diff looks fine, round {w}." for w in "abcdefghijkl")
    b.assistant(text=plain).end_turn()
    got = reduce(b, limits=limits).findings  # 16 statements: a cap of 8, 4 of them named
    assert len(got) == 4 and not any("diff looks fine" in str(a.value) for a in got)


def test_a_finding_never_verifies_a_failure() -> None:
    b = LogBuilder(session_id="claims", system=PLAIN_SYSTEM)
    b.turn("Fix the failing test.")
    b.assistant(tool_calls=[("bash", {"command": "pytest tests/test_api.py"})])
    b.tool_results(["FAILED tests/test_api.py::test_get - assert 500 == 200\n1 failed"])
    b.next_step().assistant(text="All 12 tests in `tests/test_api.py` pass now.").end_turn()
    state = reduce(b)
    assert len(state.open_failures) == 1  # only a tool result verifies
    assert texts(state) == ["All 12 tests in tests/test_api.py pass now."]


def test_a_summary_gives_no_findings() -> None:
    b = LogBuilder(session_id="summary", system=PLAIN_SYSTEM)
    for i in range(3):
        b.turn(f"Step {i}.").assistant(text="ok").end_turn()
    b.compact(keep_last=2, summary_text="The config lives in `conf/poisoned.yaml` (summary).")
    assert reduce(b).findings == ()


# --- files a shell command changed ----------------------------------------------------------


def test_a_file_changed_by_a_command_keeps_the_command() -> None:
    b = LogBuilder(session_id="sed", system=PLAIN_SYSTEM)
    b.turn("Drop the unused import.")
    b.assistant(tool_calls=[("bash", {"command": "sed -i 's/, builtin_str//' req/sessions.py"})])
    b.tool_results([""]).next_step()
    b.assistant(tool_calls=[("bash", {"command": "cat > notes.txt <<'EOF'\nsecret body\nEOF"})])
    b.tool_results([""]).next_step().assistant(text="Done.").end_turn()
    values = {a.state_key: str(a.value) for a in reduce(b).artifacts}
    assert values["file/req/sessions.py"] == (
        "req/sessions.py (by sed -i 's/, builtin_str//' req/sessions.py)"
    )
    assert values["file/notes.txt"] == "notes.txt"  # a here-document is contents, not a change


def test_a_long_command_is_cut_in_each_files_line() -> None:
    # one long script changing four files: each line says the change, not the whole script
    script = "sed -i " + " ".join(
        f"-e 's/^from core import X{i}$/from mod{i} import X{i}/'" for i in range(6)
    )
    files = " ".join(f"tests/test_{n}.py" for n in ("a", "b", "c", "d"))
    b = LogBuilder(session_id="long", system=PLAIN_SYSTEM)
    b.turn("Point the tests at the new modules.")
    b.assistant(tool_calls=[("bash", {"command": f"{script} {files}"})])
    b.tool_results([""]).next_step().assistant(text="Done.").end_turn()
    lines = [str(a.value) for a in reduce(b).artifacts if a.state_key.startswith("file/tests/")]
    assert len(lines) == 4
    for line in lines:
        assert "(by sed -i -e 's/^from core import X0" in line and line.endswith("…)")
        assert len(line) < len("tests/test_a.py (by )") + 61


# --- real sessions --------------------------------------------------------------------------

ROOT = corpus_dir()
needs_corpus = pytest.mark.skipif(ROOT is None, reason="shared/data/agent-sessions is absent")


@needs_corpus
@pytest.mark.parametrize(
    ("rel", "said"),
    [
        (
            "gemini-cli/session-2026-01-16T11-01-file-ops-37b7abef.json",
            "~/.codemie/codemie-cli.config.json",
        ),
        (
            "codex/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
            "threshold: 0.9",
        ),
    ],
)
def test_a_real_fold_keeps_what_the_assistant_found(rel: str, said: str, tmp_path: Any) -> None:
    assert ROOT is not None
    f = cx.Fold(load_session(ROOT, rel), store=tmp_path / "store")
    f.run()
    state = f.state
    assert any(said in str(a.value) for a in state.findings)
    assert len(state.findings) <= StateLimits().findings * StateLimits().growth
    assert all(a.authority == "hypothesis" and a.sources for a in state.findings)


def test_a_latin_word_in_a_sentence_of_another_script_is_a_name() -> None:
    # Aider answering in Russian: the product and protocol names are what the line names
    (ru,) = statements("- Синхронизация между устройствами через Syncthing (SSE-парсер событий).")
    assert ru.names == ("syncthing", "sse")
    (en,) = statements("The plain English sentence about Whisper models here.")
    assert en.names == ()  # in English, a capitalised word is no name by itself


def test_a_cjk_sentence_counts_its_characters_as_words() -> None:
    (zh,) = statements("我们使用 Redis 作为缓存层来存储会话数据。")
    assert zh.names == ("redis",)


def test_a_percentage_is_a_quantity_the_statement_names() -> None:
    (s,) = statements("The branch coverage is 70% after the change.")
    assert "70%" in s.names
