"""What the key files hold: the state keeps an outline of each file the session wrote or read
(its classes, functions with short signatures, routes, constants, the environment variables
it reads with their defaults), a manifest's package and scripts as project facts, the branch
a command made, and the files an action told in text (SWE-agent) created."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import ctxsdk as cx
from ctxsdk.fold._holds import (
    branch_made,
    changed_values,
    doc_outline,
    manifest_facts,
    outline,
    read_path,
    root_configs,
    runtime_versions,
    search_hits,
)
from ctxsdk.fold._state import FoldState, reduce_events
from ctxsdk.session.kernel import heredoc_writes
from ctxsdk.testing import LogBuilder, ToolOutput

GAME = """import random

class Game2048:
    def __init__(self):
        self.board = [[0] * 4 for _ in range(4)]

    def spawn_number(self):
        value = 2 if random.random() < 0.9 else 4

    def merge_line(self, line, reverse=False):
        return line
"""

PLUGIN = """   164→    // Get sync interval from env or default to 5 minutes
   165→    this.syncInterval = Number.parseInt(
   166→      process.env.APP_SYNC_INTERVAL || '300000',
   167→      10
   168→    );
   169→    const dry = process.env.APP_DRY_RUN;
   170→export class SyncPlugin implements Plugin {
"""

PACKAGE = """Chunk ID: 2d2199
Wall time: 0.2201 seconds
Process exited with code 0
Output:
{
  "name": "@acme/cli",
  "version": "0.0.51",
  "scripts": {
    "build": "tsc && tsc-alias && npm run copy-plugin",
    "copy-plugin": "node scripts/copy-plugins.js",
    "test": "vitest",
    "ci": "npm run lint && npm run build && npm run test:integration",
    "test:watch": "vitest --watch"
  },
"""


def run(
    calls: Sequence[tuple[str, Mapping[str, Any], str | ToolOutput]], said: str = "Done."
) -> FoldState:
    b = LogBuilder(session_id="holds", system="You are a coding agent.")
    for name, args, result in calls:
        b.turn("Go on.").assistant(text="Working.", tool_calls=[(name, dict(args))])
        b.tool_results([result]).next_step().assistant(text=said).end_turn()
    return reduce_events(cx.Session.from_events(b.header, b.events).raw_events)


def files(state: FoldState) -> list[str]:
    return [str(a.value) for a in state.files]


def test_an_outline_names_definitions_with_short_signatures() -> None:
    got = dict(outline(GAME, "game.py"))
    assert got["Game2048"] == "class Game2048"
    assert got["merge_line"] == "merge_line(self, line, reverse=False)"
    assert "__init__" not in got  # every class has one: it says nothing of this one
    assert "value" not in got  # a local variable is no name the file defines


def test_an_outline_reads_environment_variables_with_their_defaults() -> None:
    got = dict(outline(PLUGIN, "src/sync.plugin.ts"))  # a Read tool's numbered lines
    assert got["APP_SYNC_INTERVAL"] == "$APP_SYNC_INTERVAL (default 300000)"
    assert got["APP_DRY_RUN"] == "$APP_DRY_RUN"
    assert got["SyncPlugin"] == "class SyncPlugin"


def test_a_document_gives_only_the_variables_it_sets_not_its_code_samples() -> None:
    doc = "## Config\n\n```bash\nAPP_DISCOVERY_INTERVAL=30000\n```\n\n```ts\nclass Example {}\n```"
    assert outline(doc, "specs/design.md") == [
        ("APP_DISCOVERY_INTERVAL", "$APP_DISCOVERY_INTERVAL=30000")
    ]


def test_a_manifest_gives_its_package_and_key_scripts() -> None:
    got = manifest_facts("package.json", PACKAGE)  # a partial read, wrapped by the harness
    assert ("package", "@acme/cli 0.0.51") in got
    assert ("script build", "tsc && tsc-alias && npm run copy-plugin") in got
    assert ("script ci", "npm run lint && npm run build && npm run test:integration") in got
    assert not any(k == "script test:watch" for k, _ in got)  # not a key script
    banner = "\n> @acme/cli@0.0.51 build\n> tsc && tsc-alias\n"
    assert manifest_facts("", banner) == [("package", "@acme/cli 0.0.51")]


def test_what_a_shell_command_reads_writes_and_branches() -> None:
    assert read_path("Read", {"file_path": "/repo/src/a.ts"}) == "/repo/src/a.ts"
    assert read_path("bash", {"command": "sed -n '1,120p' package.json"}) == "package.json"
    assert read_path("bash", {"command": "grep -n x a.py b.py"}) is None  # a search, not a read
    command = "cat <<'EOF' > test_fix.py\nclass MockAdapter(HTTPAdapter):\n    pass\nEOF\n"
    assert heredoc_writes(command + "python test_fix.py") == [
        ("test_fix.py", "class MockAdapter(HTTPAdapter):\n    pass")
    ]
    append = "cd /repo && cat >> notes.md <<'EOF'\n## Next\nEOF"
    assert heredoc_writes(append) == [("/repo/notes.md", "## Next")]  # >> and cd followed
    assert branch_made("cd repo && git checkout -b feat/lifecycle") == "feat/lifecycle"
    assert branch_made("git checkout main") is None


def test_the_state_keeps_what_a_created_file_holds() -> None:
    s = run(
        [("str_replace_editor", {"command": "create", "path": "game.py", "file_text": GAME}, "ok")]
    )
    assert files(s) == [
        "game.py: class Game2048; spawn_number(self); merge_line(self, line, reverse=False)"
    ]


def test_a_file_read_once_and_never_named_is_left_out() -> None:
    s = run([("Read", {"file_path": "src/sync.plugin.ts"}, PLUGIN)])
    assert files(s) == []
    named = run(
        [("Read", {"file_path": "src/sync.plugin.ts"}, PLUGIN)], said="SyncPlugin reads it."
    )
    assert files(named) == [
        "src/sync.plugin.ts: class SyncPlugin; $APP_SYNC_INTERVAL (default 300000); $APP_DRY_RUN"
    ]


def test_a_manifest_read_through_a_polled_process_gives_the_scripts() -> None:
    s = run(
        [
            ("exec_command", {"cmd": "cat package.json"}, "Process running with session ID 7\n"),
            ("write_stdin", {"session_id": 7, "chars": ""}, PACKAGE),
        ]
    )
    values = {a.state_key: a.value for a in s.values}
    assert values["project/package"] == "@acme/cli 0.0.51"
    assert values["project/script_build"] == "tsc && tsc-alias && npm run copy-plugin"


def test_a_branch_made_is_a_project_fact() -> None:
    s = run([("Bash", {"command": "git checkout -b feat/lifecycle"}, "Switched to a new branch")])
    assert {a.state_key: a.value for a in s.values}["project/branch"] == "feat/lifecycle"


def _event(seq: int, etype: str, message: dict[str, Any]) -> dict[str, Any]:
    # a user message's data is the message; an assistant's holds it under "message"
    data = message if etype == "user/message" else {"message": message}
    return {"type": etype, "seq": seq, "time": seq, "data": data, "surfaceOp": "append"}


def _said(seq: int, text: str) -> dict[str, Any]:
    return _event(
        seq, "assistant/message", {"role": "assistant", "content": [{"type": "text", "text": text}]}
    )


def _relay(seq: int, text: str) -> dict[str, Any]:
    source = {"kind": "plugin", "plugin": "swe-agent", "form": "relay"}
    return _event(
        seq,
        "user/message",
        {"role": "user", "source": source, "content": [{"type": "text", "text": text}]},
    )


def test_a_file_an_action_told_in_text_created_is_an_artifact() -> None:
    events = [
        _event(
            0,
            "user/message",
            {
                "role": "user",
                "source": {"kind": "user"},
                "content": [{"type": "text", "text": "Solve the challenge."}],
            },
        ),
        _said(1, "I will write a solver.\n```\ncreate get_seed.py\n```"),
        _relay(
            2, "[File: /ctf/get_seed.py (1 lines total)]\n1:\n(Open file: /ctf/get_seed.py)\nbash-$"
        ),
        _said(
            3,
            "Now its code.\n```\nedit 1:1\nfrom z3 import *\ndef solve(target):\n    return BitVec('seed', 64)\nend_of_edit\n```",
        ),
        _relay(4, "File updated.\nbash-$"),
        _said(5, "It is done."),
        _relay(6, "an unrelated note"),  # no action was told: nothing is read from it
    ]
    s = reduce_events(events)
    assert [str(a.value) for a in s.artifacts] == ["get_seed.py"]
    assert files(s) == ["get_seed.py: solve(target)"]


def test_the_python_a_command_ran_on_is_a_project_fact() -> None:
    header = "============ test session starts ============\nplatform linux -- Python 3.9.20, pytest-7.4.0\ncollected 3 items\n\n3 passed in 0.1s"
    s = run([("bash", {"command": "python -m pytest test_requests.py"}, header)])
    assert {a.state_key: a.value for a in s.values}["project/python_version"] == "3.9.20"
    listing = run([("bash", {"command": "ls"}, "Python 3.9.20 notes.txt")])
    assert "project/python_version" not in {a.state_key for a in listing.values}  # a read


def test_runtime_versions_need_a_full_version() -> None:
    assert runtime_versions("Python version: 3.9.20 (main, Oct  3 2024)") == [
        ("python_version", "3.9.20")
    ]
    assert runtime_versions("Requires-Python >=3.8") == []
    header = "platform linux -- Python 3.11.10, pytest-7.3.0, pluggy-1.0.0\nrootdir: /testbed"
    assert runtime_versions(header) == [
        ("python_version", "3.11.10"),
        ("test_runner", "pytest-7.3.0"),
    ]


def test_a_listing_of_the_root_names_the_files_that_configure_its_tools() -> None:
    long = (
        "total 24\ndrwxr-xr-x 2 a b 4096 Jan 1 .\n-rw-r--r-- 1 a b 10 Jan 1 pyproject.toml\n"
        "-rw-r--r-- 1 a b 10 Jan 1 README.md\n-rw-r--r-- 1 a b 10 Jan 1 tox.ini\n"
    )
    assert root_configs("ls -la", long) == ["pyproject.toml", "tox.ini"]
    codex = '{"output":"src\\nvitest.config.ts\\ntsconfig.json\\nREADME.md\\n","metadata":{}}'
    assert root_configs("ls", codex) == ["vitest.config.ts", "tsconfig.json"]
    assert root_configs("ls src", "tsconfig.json\n") == []  # a folder's listing, not the root
    assert root_configs("cat files.txt", "tox.ini\n") == []  # no listing
    s = run([("bash", {"command": "ls"}, "Makefile\nsetup.cfg\nsrc\n")])
    assert s.heads["project/config_files"].value == "Makefile, setup.cfg"


def test_the_commands_the_work_ran_that_act_are_a_derived_group() -> None:
    """The latest commands that act (run, test, change a file in place, talk to a server),
    in the order run; reads, searches, housekeeping and here-document writes (the Files
    group shows what they wrote) are none. A checkpoint shows them with what the other
    derived groups leave, never with a budget of nothing."""
    from ctxsdk.fold._checkpoint import state_lines
    from ctxsdk.fold._state import StateLimits

    calls: list[tuple[str, Mapping[str, Any], str]] = [
        ("bash", {"command": "ls"}, "a.py"),
        ("bash", {"command": "grep -n x a.py"}, "1:x"),
        ("bash", {"command": 'curl -X POST -F "file=5" http://h.io/f.pl'}, "ok"),
        ("bash", {"command": "sed -i 's/a/b/' a.py"}, ""),
        ("bash", {"command": "cat <<'EOF' > t.py\nprint(1)\nEOF"}, ""),
        ("bash", {"command": "python3 t.py"}, "1"),
        ("bash", {"command": "rm t.py"}, ""),
    ]
    s = run(calls)
    # the sed command acts too, but the file's line already says it: not shown twice
    assert any("sed -i" in str(a.value) for a in s.artifacts)
    assert [str(a.value) for a in s.commands] == [
        'curl -X POST -F "file=5" http://h.io/f.pl',
        "python3 t.py",
    ]
    assert "Commands run (the latest):" in "\n".join(state_lines(s))
    assert "Commands run" not in "\n".join(state_lines(s, budget=0))
    b = LogBuilder(session_id="holds", system="You are a coding agent.")
    for name, args, result in calls:
        b.turn("Go on.").assistant(text="Working.", tool_calls=[(name, dict(args))])
        b.tool_results([result]).next_step().assistant(text="Done.").end_turn()
    raw = cx.Session.from_events(b.header, b.events).raw_events
    one = reduce_events(raw, limits=StateLimits(commands=1))
    assert [str(a.value) for a in one.commands] == ["python3 t.py"]  # the latest
    assert "commands" in one.to_json()


def test_an_outline_shows_its_names_before_an_edits_less_sure_values() -> None:
    """A file's line: the edit's surest values, then the file's names, then the edit's other
    values while the line has room."""
    old = "class Scan:\n    pass\n"
    new = (
        "class Scan:\n    width = 15\n    height = 80\n    depth = 3\n"
        "    color = (255, 0, 0)\n    label = 'scan'\n"
    )
    create = {"command": "create", "path": "s.py", "file_text": old}
    edit = {"command": "str_replace", "path": "s.py", "old_str": old, "new_str": new}
    (line,) = files(run([("str_replace_editor", create, "ok"), ("str_replace_editor", edit, "ok")]))
    assert line.startswith("s.py: class Scan — edited `width = 15`; `height = 80`; `depth = 3`")
    assert "color = (255, 0, 0)" in line and "label = 'scan'" in line


def test_a_sub_agents_report_gives_findings_without_its_harness_lines() -> None:
    report = (
        "## Findings\n\nThe registry stores sessions in an ETS table named "
        "`Spotter.Services.SessionRegistry`.\n"
        "agentId: a7be2f0 (for resuming to continue this agent's work if needed)\n"
        "<usage>total_tokens: 30610\ntool_uses: 19\nduration_ms: 42973</usage>"
    )
    s = run([("Task", {"subagent_type": "Explore", "prompt": "Find the registry."}, report)])
    found = [str(a.value) for a in s.findings]
    assert any("Spotter.Services.SessionRegistry" in f for f in found)
    assert not any("total_tokens" in f or "agentId" in f for f in found)


def test_a_report_written_as_json_is_read_as_its_text() -> None:
    report = (
        "Subagent 'codebase_investigator' finished.\nTermination Reason: GOAL\nResult:\n"
        '{"SummaryOfFindings": "The plugins are hardcoded in `AgentRegistry`, so a new one '
        'needs a code change.", "RelevantLocations": [{"FilePath": "src/utils/security.ts", '
        '"KeySymbols": ["sanitizeValue", "SENSITIVE_VALUE_PATTERNS"]}]}'
    )
    s = run([("delegate_to_agent", {"agent_name": "codebase_investigator"}, report)])
    found = " | ".join(str(a.value) for a in s.findings)
    assert "hardcoded in AgentRegistry" in found  # the words after the harness's lines
    assert "KeySymbols: sanitizeValue, SENSITIVE_VALUE_PATTERNS" in found
    assert "Termination Reason" not in found


def test_a_search_hit_on_a_definition_tells_what_its_file_holds() -> None:
    out = (
        "src/plugins/code.plugin.ts:82:function buildConfig(params: {\n"
        "src/plugins/code.plugin.ts:289:      const config = buildConfig({\n"
    )
    assert search_hits("rg -n buildConfig src", out) == {
        "src/plugins/code.plugin.ts": "function buildConfig(params: {\n      const config = buildConfig({"
    }
    assert search_hits("cat notes.txt", out) == {}  # only a search's lines are hits
    polled = run(
        [
            (
                "exec_command",
                {"cmd": "rg -n buildConfig src"},
                "Process running with session ID 9\n",
            ),
            (
                "write_stdin",
                {"session_id": 9, "chars": ""},
                "Process exited with code 0\nOutput:\n" + out,
            ),
        ],
        said="buildConfig makes the config.",
    )
    assert files(polled) == ["src/plugins/code.plugin.ts: buildConfig"]


def test_an_outline_keeps_module_level_aliases_and_the_hosts_code_talks_to() -> None:
    compat = "if is_py2:\n    builtin_str = str\n\ndef f(x):\n    y = x\n    return y\n"
    got = dict(outline(compat, "requests/compat.py"))
    assert got["builtin_str"] == "builtin_str = str"
    assert "y" not in got  # a local inside a function is no name the module holds
    script = 'r = remote("crypto.chal.csaw.io", 4242)\nm = "django.db.models"\n'
    assert [shown for _, shown in outline(script, "solve.py")] == ["crypto.chal.csaw.io"]


def test_a_polled_run_fails_and_is_verified_as_the_command_it_polls() -> None:
    # Codex: exec_command hands back a process id, write_stdin polls bring its exit code
    failed = "Process exited with code 1\nOutput:\nFAIL src/a.test.ts\nAssertionError: expected 1"
    passed = "Process exited with code 0\nOutput:\nTest Files  1 passed (1)"
    s = run(
        [
            ("exec_command", {"cmd": "npm test"}, "Process running with session ID 3\n"),
            ("write_stdin", {"session_id": 3, "chars": ""}, ToolOutput(failed, is_error=True)),
        ]
    )
    assert [str(a.value) for a in s.open_failures] == ["exec_command: AssertionError: expected 1"]
    s = run(
        [
            ("exec_command", {"cmd": "npm test"}, "Process running with session ID 3\n"),
            ("write_stdin", {"session_id": 3, "chars": ""}, ToolOutput(failed, is_error=True)),
            ("exec_command", {"cmd": "npm test"}, "Process running with session ID 4\n"),
            ("write_stdin", {"session_id": 4, "chars": ""}, passed),
        ]
    )
    assert s.open_failures == ()  # the same command passed later: verified
    assert [str(a.value) for a in s.evidence] == ["exec_command:npm test: Test Files 1 passed (1)"]


def test_a_read_only_command_flagged_as_an_error_is_no_failure() -> None:
    # grep found nothing, ls of a path that is not there: what the session learned, not a failure
    s = run(
        [("Bash", {"command": "ls src/missing/"}, ToolOutput("ls: cannot access", is_error=True))]
    )
    assert s.open_failures == ()
    s = run([("Bash", {"command": "make"}, ToolOutput("make: *** No rule", is_error=True))])
    assert len(s.open_failures) == 1


# Aider's search/replace block as the importer gives it (aider-website 2048 session).
EDIT_2048 = {
    "path": "js/game_manager.js",
    "search": "  // Update the score\n  self.score += merged.value;",
    "replace": "  // Update the score with a 10% chance of 10x bonus\n"
    "  var bonus = Math.random() <= 0.1 ? 10 : 1;\n  self.score += merged.value * bonus;",
}


def test_an_edit_shows_the_values_it_set_not_its_comments() -> None:
    (line,) = files(run([("edit", EDIT_2048, "Applied edit to js/game_manager.js")]))
    # the value it changed (``self.score`` was set before) first, then the one it added
    assert line == (
        "js/game_manager.js — edited `self.score += merged.value * bonus`; "
        "`var bonus = Math.random() <= 0.1 ? 10 : 1`"
    )


def test_only_lines_that_set_or_test_a_value_count() -> None:
    added = [
        "import { SessionStore } from './store.js';",
        "// 6. Send to API",
        "    });",
        "",
        "logger.info(`[${this.name}] Synced: ${n} messages`);",  # a message's words
        "export function send(a: number = 3) {",  # a definition: the outline names it
        "      retryAttempts: 3,",
        "      timeout: 30000,",
    ]
    assert changed_values(added) == ["retryAttempts: 3", "timeout: 30000"]
    # a trailing comment is no part of the value
    assert changed_values(["s.add(ret == 1364650861)  # the seed's first output"]) == [
        "s.add(ret == 1364650861)"
    ]


def test_the_values_kept_are_few_surest_first_and_clipped() -> None:
    added = [
        "if (tile.value > best) {",  # a test on names: least sure
        "  score += tile.value * 2;",
        "  label = 'merged';",
        "  const MAX_TILE = 2048;",
        "  this.size = 4;",
    ]
    # the surest three (the two numbers set, then the first literal set) in the edit's
    # order, then the rest, in the edit's order
    assert changed_values(added) == [
        "score += tile.value * 2",
        "const MAX_TILE = 2048",
        "this.size = 4",
        "label = 'merged'",
    ]
    (long,) = changed_values(["  this.message = '" + "x" * 80 + "';"])
    assert len(long) == 64 and long.endswith("…")
    # of a document only a name set to a number: its sentences are no settings
    assert changed_values(["Retry up to 3 times: then fail.", "timeout: 30000,"], doc=True) == [
        "timeout: 30000"
    ]


def test_a_created_file_is_no_change_but_a_rewrite_of_it_is() -> None:
    first = "LIMIT = 10\nrate = 0.5\n"
    created = ("str_replace_editor", {"command": "create", "path": "c.py", "file_text": first})
    # a module-level name set to a number is a setting, whatever its case
    assert files(run([(*created, "ok")])) == ["c.py: LIMIT = 10; rate = 0.5"]
    again = (
        "str_replace_editor",
        {"command": "create", "path": "c.py", "file_text": first + "rate = 0.8\n"},
    )
    # the rewrite set it again: the value the code now reads, shown once
    assert files(run([(*created, "ok"), (*again, "ok")])) == ["c.py: LIMIT = 10; rate = 0.8"]


GUIDE = """# Contributing

Run `npm ci` first. Then build.

## Tests

Every change needs a test in `tests/`.

```sh
# Not a heading
npm test
```
"""


def test_a_written_markdown_file_gives_its_headings_with_their_first_sentence() -> None:
    assert doc_outline(GUIDE) == [
        ("Contributing", "Contributing: Run `npm ci` first."),
        ("Tests", "Tests: Every change needs a test in `tests/`."),
    ]
    long = "\n".join(f"## Part {i}\n\nText {i}." for i in range(8))
    assert [shown for _, shown in doc_outline(long)][:2] == ["Part 0", "Part 1"]  # names only
    wrote = ("Write", {"file_path": "/repo/CONTRIBUTING.md", "content": GUIDE})
    assert files(run([(*wrote, "ok")])) == [
        "/repo/CONTRIBUTING.md: Contributing: Run `npm ci` first.; "
        "Tests: Every change needs a test in `tests/`."
    ]
    read = ("Read", {"file_path": "/repo/GUIDE.md"})
    assert files(run([(*read, GUIDE), (*read, GUIDE)])) == []  # a doc read is not its outline


ESLINTRC = """{
  "root": true,
  "extends": ["eslint:recommended"],
  "rules": {
    "@typescript-eslint/consistent-type-definitions": ["error", "type"],
    "no-magic-numbers": ["warn", { "ignore": [0, 1] }],
    "quotes": ["error", "single"],
    "max-len": 120
  }
}
"""


def test_a_lint_config_gives_its_rules_with_their_values() -> None:
    got = dict(outline(ESLINTRC, "/repo/.eslintrc.json"))
    assert got["@typescript-eslint/consistent-type-definitions"] == (
        '@typescript-eslint/consistent-type-definitions: ["error", "type"]'
    )
    assert got["quotes"] == 'quotes: ["error", "single"]'
    assert got["max-len"] == "max-len: 120"
    assert "root" not in got and "ignore" not in got  # not a rule: a nested option's part
    prettier = "export default {\n  singleQuote: true,\n  trailingComma: 'all',\n};\n"
    assert dict(outline(prettier, "prettier.config.mjs")) == {
        "singleQuote": "singleQuote: true",
        "trailingComma": "trailingComma: 'all'",
    }
    pyproject = (
        '[project]\nname = "app"\nrequires-python = ">=3.11"\n\n[tool.ruff]\nline-length = 100\n'
    )
    assert dict(outline(pyproject, "pyproject.toml")) == {"line-length": "line-length: 100"}
    tsconfig = '{\n  "compilerOptions": {\n    "target": "ES2022",\n    "strict": true\n  }\n}'
    assert [s for _, s in outline(tsconfig, "tsconfig.json")] == [
        'target: "ES2022"',
        "strict: true",
    ]


# A game written in four edits (as Aider gives them): later edits change values the earlier
# ones set, and the last one touches something else.
GAME_PY = "import pygame\n\nscreen_width = 640\nscreen_height = 480\n\nclass Paddle:\n    pass\n"
GAME_EDITS = [
    {"path": "game.py", "search": "", "replace": GAME_PY},
    {
        "path": "game.py",
        "search": "class Paddle:\n    pass",
        "replace": "class Paddle:\n    def __init__(self):\n        self.width = 10\n"
        "        self.speed = 4",
    },
    {
        "path": "game.py",
        "search": "        self.width = 10\n        self.speed = 4",
        "replace": "        self.width = 15\n        self.speed = 4",
    },
    {
        "path": "game.py",
        "search": "        self.speed = 4",
        "replace": "        self.speed = 2\n        self.color = (255, 0, 0)",
    },
    {"path": "game.py", "search": "import pygame", "replace": "import pygame\nimport sys"},
]


def test_a_file_shows_the_values_its_edits_set_that_it_still_holds() -> None:
    calls = [("edit", e, "Applied edit to game.py") for e in GAME_EDITS]
    (line,) = files(run(calls))
    # a module-level name set to a number is a setting, whatever its case
    assert "game.py: " in line and "screen_width = 640; screen_height = 480" in line
    # the values the edits changed (the latest first), then the one an edit added; the last
    # edit set no value, and the values the earlier ones set still show
    assert line.endswith(
        "— edited `self.speed = 2`; `self.width = 15`; `self.color = (255, 0, 0)`"
    ), line
    # a value a later edit replaced is gone, not shown beside the new one
    assert "self.width = 10" not in line and "self.speed = 4" not in line


def test_a_rewrite_sets_a_module_value_anew() -> None:
    def create(text: str) -> tuple[str, dict[str, str], str]:
        return ("str_replace_editor", {"command": "create", "path": "m.py", "file_text": text})

    (line,) = files(run([(*create("port = 3000\n"), "ok"), (*create("port = 8080\n"), "ok")]))
    assert line == "m.py: port = 8080"  # the new value, once: not the old one beside it
