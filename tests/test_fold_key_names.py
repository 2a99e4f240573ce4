"""The state's key names: the code names the conversation (the user's words, the assistant's
text, its calls' arguments) keeps naming, never a tool's output or a file's text, never a
secret, bounded by ``StateLimits.names``, and read from Chinese text too."""

from __future__ import annotations

from typing import Any

import ctxsdk as cx
from ctxsdk.fold._key_names import KeyNames, call_words
from ctxsdk.fold._state import FoldState, StateLimits, reduce_events
from ctxsdk.testing import LogBuilder

PLAIN_SYSTEM = "You are a coding agent."
TITLE = "Key names (what the work keeps naming)"


def reduce(b: LogBuilder, **kw: Any) -> FoldState:
    s = cx.Session.from_events(b.header, b.events)
    return reduce_events(s.raw_events, **kw)


def shown(state: FoldState) -> str:
    return ", ".join(str(a.value) for a in state.names)


def names(state: FoldState) -> list[str]:
    return [n for a in state.names for n in str(a.value).split(", ")]


def session() -> LogBuilder:
    b = LogBuilder(session_id="names", system=PLAIN_SYSTEM)
    b.turn("Make the retry count of the plugin configurable.")
    b.assistant(
        text="Checking the sources first.",
        tool_calls=[("Bash", {"command": "grep -rn retryAttempts src/"})],
    )
    b.tool_results(
        ["added 12 packages; run `npx lint-staged` before committing (see HUSKY_GIT_PARAMS)"]
    ).next_step()
    b.assistant(
        text="Now the options.",
        tool_calls=[
            ("Bash", {"command": "rg -n 'retryAttempts|poolOptions' packages/@codemieai/plugin"}),
            (
                "Edit",
                {
                    "file_path": "src/plugin.ts",
                    "old_string": "const a = 1;",
                    "new_string": "const b = 2;\nconst fileOnlyName = loadConfig();",
                },
            ),
        ],
    )
    b.tool_results(["no match", "The file src/plugin.ts has been updated."]).end_turn()
    return b


def test_names_the_conversation_keeps_naming_are_kept_most_named_first() -> None:
    state = reduce(session())
    got = names(state)
    assert got[0] == "retryAttempts"  # named by two messages' calls
    assert "poolOptions" in got and "packages/@codemieai/plugin" in got  # named by one
    # each line cites the messages that first named its names
    assert all(a.sources for a in state.names)
    assert TITLE in str(state)


def test_the_user_counts_more_and_a_message_counts_a_name_once() -> None:
    k = KeyNames()
    k.said(1, "Why does the session_id change?", user=True)
    k.said(2, "retryAttempts and retryAttempts again", code=["grep retryAttempts src"])
    k.said(3, "The `retryAttempts` key is read once.")
    k.said(4, "Only once: MAX_POOL_SIZE.")
    assert [(n.shown, n.score) for n in k.ranked()] == [
        ("session_id", 2),
        ("retryAttempts", 2),
        ("MAX_POOL_SIZE", 1),
    ]


def test_a_name_only_in_tool_output_or_a_files_text_is_not_kept() -> None:
    got = shown(reduce(session()))
    assert "lint-staged" not in got and "HUSKY_GIT_PARAMS" not in got  # tool output
    assert "fileOnlyName" not in got and "loadConfig" not in got  # the text an edit wrote


def test_a_name_the_state_already_shows_is_not_repeated() -> None:
    b = LogBuilder(session_id="known", system=PLAIN_SYSTEM)
    b.turn("Fix the parser, parse_args is wrong.")
    b.assistant(
        text="Reading it now.",
        tool_calls=[("Write", {"file_path": "src/parse_args.py", "content": "x = 1\n"})],
    )
    b.tool_results(["ok"]).end_turn()
    state = reduce(b)
    assert any("src/parse_args.py" in str(a.value) for a in state.artifacts)
    got = names(state)
    assert "src/parse_args.py" not in got  # an artifact
    assert "parse_args" not in got  # the objective says it


def test_prose_numbers_and_hashes_are_not_names() -> None:
    k = KeyNames()
    k.said(
        1,
        "This read-only follow-up is e.g. done and/or fixed in 1.2.3 on 2026-05-11 at 10:30; "
        "see commit 3f9a2b7c1d and https://example.com/a/b_c. Cross-Service calls work.",
        user=True,
    )
    assert [n.shown for n in k.ranked()] == []


def test_a_hyphenated_word_is_a_name_only_where_it_is_written_as_code() -> None:
    k = KeyNames()
    k.said(1, "The follow-up uses lint-staged.", user=True)
    k.said(2, "ok", code=["npx lint-staged --allow-empty"])
    assert [n.shown for n in k.ranked()] == ["lint-staged"]


def test_a_secret_is_never_shown() -> None:
    b = LogBuilder(session_id="secret", system=PLAIN_SYSTEM)
    b.turn("Start the proxy.")
    key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"
    b.assistant(
        text="Starting it.",
        tool_calls=[
            ("Bash", {"command": f"npx codemie_proxy --port 8080 --key {key}"}),
            ("Bash", {"command": f"export OPENAI_API_KEY={key}"}),
            (
                "Bash",
                {"command": "gh auth login --with-token ghp_abcdefghijklmnopqrstuvwxyz0123456789"},
            ),
        ],
    )
    b.tool_results(["", "", ""]).end_turn()
    state = reduce(b)
    got = shown(state)
    assert "codemie_proxy" in got and "OPENAI_API_KEY" in got
    assert "sk-proj" not in got and "ghp_" not in got and "abcdefghijklmnop" not in got
    assert "REDACTED" not in got


def test_the_cap_holds() -> None:
    many = ", ".join(f"setting_{i}_name" for i in range(60))
    b = LogBuilder(session_id="many", system=PLAIN_SYSTEM)
    b.turn(f"Rename these settings: {many}.")  # the request is shown cut: most are not
    b.assistant(
        text="Starting with two.",
        tool_calls=[("Bash", {"command": "grep -rln 'setting_50_name|setting_51_name' src"})],
    )
    b.tool_results(["src/a.py"]).end_turn()
    state = reduce(b, limits=StateLimits(names=10))
    got = names(state)
    assert len(got) == 10
    assert got[:2] == ["setting_50_name", "setting_51_name"]  # named twice: first
    assert all(len(str(a.value)) <= StateLimits().text for a in state.names)
    assert len(names(reduce(b))) == StateLimits().names  # the default cap


def test_chinese_text_gives_its_ascii_names() -> None:
    k = KeyNames()
    k.said(1, "请把retryAttempts改成5，然后更新config.yaml里的poolOptions。", user=True)
    k.said(2, "好的，我已经修改了retryAttempts，并在`feat/session-sync`分支提交。")
    assert [n.shown for n in k.ranked()] == [
        "retryAttempts",
        "config.yaml",
        "poolOptions",
        "feat/session-sync",
    ]


def test_a_call_is_read_without_its_here_document_or_inline_script() -> None:
    words = " ".join(
        call_words(
            {
                "command": "cat > notes.md <<'EOF'\nHeredocOnlyName\nEOF\n"
                'python -c \'import json; print(json.dumps({"scriptOnlyName": 1}), '
                '"padding padding padding padding padding")\' && git push origin feat/x-y',
                "description": "Push the featureBranch",
            }
        )
    )
    assert "feat/x-y" in words and "featureBranch" in words
    assert "HeredocOnlyName" not in words and "scriptOnlyName" not in words


def test_a_long_listing_in_the_text_gives_no_names() -> None:
    k = KeyNames()
    listing = "\n".join(f"const listedName{i} = {i};" for i in range(10))
    k.said(1, f"Here is the file:\n```ts\n{listing}\n```\nRun `npm run build:prod` next.")
    assert [n.shown for n in k.ranked()] == ["build:prod"]


def test_the_harness_names_are_not_the_works() -> None:
    k = KeyNames()
    k.harness("When done, run `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT` and stop.")
    k.said(1, "Fix fetch_rows.", user=True)
    k.said(2, "done", code=["echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"])
    assert [n.shown for n in k.ranked()] == ["fetch_rows"]


def test_a_folder_of_a_longer_name_and_line_numbers_are_left_out() -> None:
    k = KeyNames()
    k.said(1, "ok", code=["ls node_modules/@codemieai/codemie-opencode", "ls node_modules"])
    k.said(2, "See sso.sync-plugin.ts:210-364 and sso.sync-plugin.ts:12.")
    got = [line for line, _ in k.lines(30, 240)]
    assert got == ["node_modules/@codemieai/codemie-opencode, sso.sync-plugin.ts"]
