"""Shared names: files, commands, versions and code names two or more merged sessions use
become cross-session slots backed by every one of them (``ctxsdk.merge._shared``).

Synthetic sessions pin the rules; real corpus files (skipped when ``../shared/data`` is
absent) check that what sessions share reaches the block."""

from __future__ import annotations

import pytest

import ctxsdk as cx
from ctxsdk.merge._anchors import names_in
from ctxsdk.merge._branches import read_branch
from ctxsdk.merge._shared import shared_names
from ctxsdk.testing import LogBuilder

from .conftest import SHARED

AGENTS = SHARED / "data" / "agent-sessions"


def _run(sid: str, prompt: str, command: str, said: str, output: str = "ok") -> cx.Session:
    b = LogBuilder(session_id=sid, runtime_context=None)
    b.turn(prompt).assistant(tool_calls=[("bash", {"command": command})])
    b.tool_results([output]).next_step().assistant(text=said).end_turn()
    return cx.Session.from_events(b.header, b.events)


def _a() -> cx.Session:
    return _run(
        "sess-a",
        "Fix the empty list bug.",
        "python3 reproduce_issue.py",
        "I reproduced it with `reproduce_issue.py`; the config is in conf/app-settings.toml.",
    )


def _b() -> cx.Session:
    return _run(
        "sess-b",
        "Fix the parser crash.",
        "python reproduce_issue.py && cat src/conf/app-settings.toml",
        "Reproduced with reproduce_issue.py.",
    )


def test_a_file_both_sessions_use_is_one_slot_backed_by_both() -> None:
    r = cx.Merge([_a(), _b()]).run()
    slot = r.slot("file reproduce_issue.py")
    assert set(slot.sources) == {"sess-a", "sess-b"}
    assert slot.status == "resolved"
    assert "reproduce_issue.py" in r.block.text
    # each session's claim quotes where it named the file
    assert {c.seq for c in slot.claims} and all(c.text for c in slot.claims)


def test_a_file_is_shown_by_the_longest_path_both_give() -> None:
    r = cx.Merge([_a(), _b()]).run()
    assert "file conf/app-settings.toml" in {s.key for s in r.slots}


def test_a_name_only_one_session_uses_gives_no_shared_slot() -> None:
    a = _a()
    c = _run("sess-c", "Add a flag.", "ls", "Done; see build_helper.py.")
    r = cx.Merge([a, c]).run()
    assert not [s for s in r.slots if len(s.sources) >= 2]
    # a tool result only shows a name: it is no use of it
    d = _run("sess-d", "List the files.", "ls", "Listed.", output="reproduce_issue.py\n")
    assert shared_names([read_branch(a), read_branch(d)]) == []


def test_a_version_one_session_states_and_another_tool_shows_is_shared() -> None:
    a = _run("a4", "What does it need?", "ls", "It needs Node.js >= 24.0.0.")
    b = _run("b4", "Read it.", "cat README.md", "Read.", output="Requires node 24.0.0 or newer")
    c = _run("c4", "Read it.", "cat README.md", "Read.", output="Requires node 24.0.0 or newer")
    r = cx.Merge([a, b]).run()
    assert set(r.slot("version 24.0.0").sources) == {"a4", "b4"}
    # two tool outputs alone are two reads, not a belief either session holds
    assert shared_names([read_branch(b), read_branch(c)]) == []


def test_a_one_word_file_name_needs_a_shared_directory() -> None:
    a = _run("a1", "Look.", "cat README.md", "Read README.md.")
    b = _run("b1", "Look.", "cat docs/README.md", "Read README.md.")
    assert shared_names([read_branch(a), read_branch(b)]) == []


def test_a_name_a_slot_already_holds_adds_nothing() -> None:
    a = _run("a2", "Test it.", "pytest -q", "Ran pytest.")
    b = _run("b2", "Test it.", "pytest tests", "Ran pytest.")
    r = cx.Merge([a, b]).run()
    keys = {s.key for s in r.slots}
    assert "command pytest" not in keys  # the kernel's test framework slot says it
    assert any("pytest" in " ".join(s.presented) for s in r.slots)


def test_a_command_both_sessions_show_in_code_is_shared() -> None:
    a = _run("a3", "Set up.", "ls", "Install it first:\n```bash\npip install requests\n```")
    b = _run("b3", "Set up.", "ls", "Run `pip install flask` before starting the app.")
    r = cx.Merge([a, b]).run()
    assert set(r.slot("command pip install").sources) == {"a3", "b3"}


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Node.js >=24.0.0 is required", ("version", "24.0.0")),
        ("see `SessionOrchestrator` for the lifecycle", ("name", "sessionorchestrator")),
        ("echo COMPLETE_TASK_AND_SUBMIT", ("name", "complete_task_and_submit")),
        ("config at ~/.codemie/codemie-cli.config.json", ("file", "codemie-cli.config.json")),
        ("badge node-%3E%3D24.0.0-green", ("version", "24.0.0")),
    ],
)
def test_names_in_text(text: str, found: tuple[str, str]) -> None:
    assert found in {(k, i) for k, i, _, _ in names_in(text)}


@pytest.mark.parametrize(
    "text",
    [
        "CI/CD and request/response and and/or",  # prose with slashes
        "sed -n '/def __init__/p' a",  # one rooted word (a sed address) is no place
        "see https://example.com/a/b/c.py",  # a URL's path is the URL's
        "from django.conf import settings",  # a module, not a file
    ],
)
def test_prose_and_urls_name_no_path(text: str) -> None:
    assert [k for k, *_ in names_in(text) if k in ("file", "directory")] == []


# -- real sessions --------------------------------------------------------------------------
def _real(rel: str) -> cx.Session:
    from ctxsdk.bench._realworld import load_session

    return load_session(AGENTS, rel)


@pytest.mark.skipif(not AGENTS.is_dir(), reason="the agent-sessions corpus is absent")
def test_real_runs_share_their_reproduction_script_and_submit_command() -> None:
    rels = [
        "mini-swe-agent/django__django-16255.traj.json",
        "mini-swe-agent/sympy__sympy-23534.traj.json",
        "mini-swe-agent/pallets__flask-5014.traj.json",
    ]
    r = cx.Merge([_real(x) for x in rels]).run()
    text = r.block.text.lower()
    assert "reproduce_issue.py" in text
    assert "complete_task_and_submit_final_output" in text
    slot = r.slot("file reproduce_issue.py")
    assert len(slot.sources) == 3


@pytest.mark.skipif(not AGENTS.is_dir(), reason="the agent-sessions corpus is absent")
def test_real_sessions_of_one_repo_share_its_config_file() -> None:
    r = cx.Merge(
        [
            _real("claude-code/codemie__session-9eda1058.jsonl"),
            _real("gemini-cli/session-2026-01-16T11-01-file-ops-37b7abef.json"),
        ]
    ).run()
    assert "codemie-cli.config.json" in r.block.text
    shared = [s for s in r.block.slots if len(s.sources) >= 2]
    assert shared and all(s.status == "resolved" for s in shared)


# -- moved files ----------------------------------------------------------------------------
def _creator() -> cx.Session:
    b = LogBuilder(session_id="maker", runtime_context=None)
    b.turn("Write the game.").assistant(
        tool_calls=[("str_replace_editor", {"command": "create", "path": "/work/game_main.py"})]
    )
    b.tool_results(["File created."]).next_step().assistant(text="Done.").end_turn()
    return cx.Session.from_events(b.header, b.events)


def test_a_file_another_session_moved_is_a_disputed_location() -> None:
    mover = _run("mover", "Rename it.", "mv /work/game_main.py /work/main.py", "Renamed.")
    r = cx.Merge([_creator(), mover]).run()
    slot = r.slot("location of game_main.py")
    assert slot.status == "disputed"
    assert set(slot.presented) == {"/work/game_main.py", "/work/main.py"}
    assert {c.source for c in slot.claims} == {"maker", "mover"}
    # the location slot says it: no shared-name slot of both sessions for the same file
    both = [s for s in r.slots if len(s.sources) >= 2 and s.key.startswith("file ")]
    assert not [s for s in both if "game_main.py" in s.key]
    assert "**DISPUTED** `location of game_main.py`" in r.block.text


def test_a_move_nobody_else_relies_on_is_no_dispute() -> None:
    mover = _run("mover", "Rename it.", "mv /work/old_name.py /work/new_name.py", "Renamed.")
    r = cx.Merge([_creator(), mover]).run()
    assert not [s for s in r.slots if s.key.startswith("location of")]
    assert not r.disputed


@pytest.mark.skipif(not AGENTS.is_dir(), reason="the agent-sessions corpus is absent")
def test_real_rename_disputes_where_the_game_is() -> None:
    r = cx.Merge([_real("openhands/basic.json"), _real("openhands/wrong_initial_state.json")]).run()
    slot = r.slot("location of game_2048.py")
    assert slot.status == "disputed"
    assert "/workspace/2048.py" in slot.presented


def test_an_address_is_no_version_but_a_sentence_end_is_fine() -> None:
    assert not [k for k, *_ in names_in("the host is 10.0.0.1 today") if k == "version"]
    assert ("version", "24.0.0") in {(k, i) for k, i, _, _ in names_in("Needs 24.0.0.")}


def test_another_file_of_the_same_name_is_no_use_of_the_shown_one() -> None:
    # one session works on metrics/types.ts; the other names session/types.ts (and a bare
    # types.ts) and only a listing of it shows metrics/types.ts: two files of one name
    a = _run("name-a", "Check the types.", "cat src/core/metrics/types.ts", "Read it.")
    b = _run(
        "name-b",
        "Design the lifecycle.",
        "ls -R src/core",
        "Add it to `src/core/session/types.ts`; `types.ts` holds the interfaces.",
        output="metrics/types.ts\nsession/types.ts\n",
    )
    assert shared_names([read_branch(a), read_branch(b)]) == []
    # a bare name in a session that names no other file of that name is a use of it
    c = _run("name-c", "Fix sync.", "ls", "Updated `conversation-processor.ts`.")
    d = _run("name-d", "Review.", "cat src/sso/conversation-processor.ts", "Read.")
    (name,) = shared_names([read_branch(c), read_branch(d)])
    assert (name.shown(), name.users) == ("conversation-processor.ts", 2)


@pytest.mark.skipif(not AGENTS.is_dir(), reason="the agent-sessions corpus is absent")
def test_real_sessions_sharing_a_file_name_but_not_the_file_share_no_slot() -> None:
    r = cx.Merge(
        [
            _real("claude-code/codemie__session-196820da.jsonl"),
            _real("claude-code/codemie__session-624a4a58.jsonl"),
        ]
    ).run()
    # 196820da designs in src/agents/core/session/types.ts, 624a4a58 reads the metrics one
    assert not [s for s in r.slots if s.key.endswith("types.ts") and len(s.sources) > 1]
    slot = r.slot("file session/processors/conversations/conversation-processor.ts")
    assert len(slot.sources) == 2
    assert all("conversation-processor.ts" in c.text for c in slot.claims)
