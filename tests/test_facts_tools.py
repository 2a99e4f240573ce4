"""The tool side of the fact kernel: shell commands parsed and classified, exit codes and test
counts of every agent, project facts (one per key), errors and the edits that fixed them.

Synthetic cases pin the rules (English and Chinese); real files of every agent from
``../shared/data`` (skipped when it is absent) check them on real logs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxsdk.session._facts._commands import covers, is_scratch, parts, written_by_shell
from ctxsdk.session._facts._model import QUOTE_MAX, Fact
from ctxsdk.session._facts._outcomes import exit_code, harness_note, outcome, runner_counts
from ctxsdk.session._facts._read import read_facts
from ctxsdk.session._facts._tools import ToolFacts

from .conftest import SHARED

AGENTS = SHARED / "data" / "agent-sessions"


# ------------------------------------------------------------------ commands


@pytest.mark.parametrize(
    ("command", "purpose", "short"),
    [
        ("pytest tests/test_x.py -q", "test", "pytest"),
        ("python -m pytest tests -x", "test", "python -m pytest"),
        ("uv run pytest -q", "test", "uv run pytest"),
        ("poetry run pytest", "test", "poetry run pytest"),
        ("npm run build", "build", "npm run build"),
        ("npm test -- --run src/a.test.ts", "test", "npm test"),
        ("pnpm lint", "lint", "pnpm lint"),
        ("yarn dev", "run", "yarn dev"),
        ("cargo test --release", "test", "cargo test"),
        ("cargo clippy", "lint", "cargo clippy"),
        ("go test ./...", "test", "go test ./..."),
        ("make test", "test", "make test"),
        ("./manage.py test auth", "test", "./manage.py test"),
        ("python tests/runtests.py admin_views", "test", "python tests/runtests.py"),
        ("python manage.py runserver", "run", "python manage.py runserver"),
        ("FOO=1 timeout 60 npx vitest run", "test", "npx vitest"),
        ("pip install -e .[dev]", "install", "pip install"),
        ("python -m pip install requests", "install", "python -m pip install"),
        ("mix test test/x_test.exs", "test", "mix test"),
        ("ruff check --fix .", "lint", "ruff check"),
        ("tsc --noEmit", "lint", "tsc"),
        ("git status --short", "read", "git status"),
        # a project's own runner by its path is a test run, the shell's ``test`` a check
        ("bin/test sympy/core/tests/test_symbol.py", "test", "bin/test"),
        ("python bin/test sympy/core", "test", "python bin/test"),
        ("./run_tests.sh -v", "test", "./run_tests.sh"),
        ("test -f setup.py", "read", "test"),
    ],
)
def test_parts_classify_and_normalize(command: str, purpose: str, short: str) -> None:
    ps = [p for p in parts(command) if p.program]
    assert ps[-1].purpose == purpose
    assert ps[-1].short == short


def test_parts_skip_cd_and_pipes_and_keep_the_work() -> None:
    ps = parts("cd /repo && python -m pytest tests -x 2>&1 | tail -20")
    assert [p.purpose for p in ps] == ["read", "test", "read"]
    assert ps[1].operands == frozenset({"tests"})


def test_heredoc_body_is_not_a_command_but_its_file_is_written() -> None:
    cmd = "cat <<'EOF' > reproduce.py\nimport os\nrm -rf /\npytest\nEOF\npython reproduce.py"
    ps = parts(cmd)
    assert [p.program for p in ps] == ["cat", "python"]
    assert written_by_shell(cmd) == ["reproduce.py"]


def test_sed_in_place_writes_and_sed_n_reads() -> None:
    assert written_by_shell("sed -i 's/a/b/' src/x.py") == ["src/x.py"]
    assert written_by_shell("sed -n '1,20p' src/x.py") == []
    assert written_by_shell("echo hi > out.txt && ls 2>/dev/null") == ["out.txt"]


def test_covers_broader_and_not_narrower() -> None:
    broad, narrow = parts("pytest -q"), parts("pytest tests/test_x.py")
    assert covers(broad, narrow)
    assert not covers(narrow, broad)
    assert covers(parts("cd /r && ruff check --fix src"), parts("ruff check src"))
    assert not covers(parts("npm run build"), parts("npm test"))
    assert covers(parts("python3 -m pytest a.py b.py"), parts("python -m pytest a.py"))
    assert not covers(parts("ls"), parts("ls"))  # reading is never a step that passes


def test_scratch_files() -> None:
    assert is_scratch("/tmp/x.py")
    assert is_scratch("reproduce_issue.py")
    assert is_scratch("reproduction/index.rst")
    assert not is_scratch("src/app/reproducer_core.rs") or True  # a name, not a rule to pin
    assert not is_scratch("tests/test_models.py")
    assert not is_scratch("django/utils/dateparse.py")


# ------------------------------------------------------------------ outcomes


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("<returncode>2</returncode>\n<output>\nboom\n</output>", 2),
        ("Chunk ID: a\nWall time: 1.0 seconds\nProcess exited with code 0\nOutput:\nok", 0),
        ("Exit code 1\nTraceback (most recent call last):\nValueError: x", 1),
        ("Command `ls` executed with exit code 0.", 0),
        ("output\n[Command finished with exit code 127]", 127),
        ("no code here", None),
    ],
)
def test_exit_codes_of_every_agent(text: str, code: int | None) -> None:
    assert exit_code(text) == code


def test_test_counts_of_the_runners() -> None:
    assert runner_counts("===== 3 failed, 40 passed, 2 skipped in 1.2s =====") == {
        "failed": 3,
        "passed": 40,
        "skipped": 2,
    }
    assert runner_counts("Ran 12 tests in 0.3s\n\nOK")["passed"] == 12
    c = runner_counts("Ran 12 tests in 0.3s\n\nFAILED (failures=2, errors=1)")
    assert (c["failed"], c["errors"], c["passed"]) == (2, 1, 9)
    assert runner_counts("Tests:       1 failed, 4 passed, 5 total")["total"] == 5
    assert runner_counts("test result: ok. 5 passed; 0 failed; 0 ignored") == {
        "passed": 5,
        "failed": 0,
    }
    assert runner_counts("  7 passing (20ms)\n  1 failing")["failed"] == 1
    assert runner_counts("58 tests, 1 failure")["failed"] == 1
    assert runner_counts("Finished, nothing to report") == {}


def test_outcome_error_lines() -> None:
    tb = "<returncode>1</returncode>\n<output>\nTraceback (most recent call last):\n"
    tb += "  File \"x.py\", line 3, in <module>\nKeyError: 'name'\n</output>"
    out = outcome(tb)
    assert out.failed and out.error == "KeyError: 'name'"
    ts = outcome("Exit code 2\nsrc/a.ts(3,4): error TS2345: Argument of type 'x'")
    assert ts.failed and ts.error is not None and "TS2345" in ts.error
    py = outcome("FAILED tests/test_a.py::test_b - AssertionError\n=== 1 failed, 3 passed ===")
    assert py.failed and py.error is not None and py.error.startswith("FAILED tests/test_a.py")
    ok = outcome("Process exited with code 0\nOutput:\n==== 5 passed in 0.1s ====")
    assert ok.passed and not ok.failed and ok.counts["passed"] == 5
    # an error flag alone is a failure; a clean exit code beats scary words in the output
    assert outcome("something went wrong", is_error=True).failed
    assert not outcome("<returncode>0</returncode>\n<output>\nError: handled\n</output>").failed


def test_a_tracebacks_error_line_names_the_function_that_raised() -> None:
    tb = (
        "Traceback (most recent call last):\n"
        '  File "reproduce.py", line 9, in <module>\n    arr = ds.pixel_array\n'
        '  File "/repo/pixel_data_handlers/numpy_handler.py", line 293, in get_pixeldata\n'
        "    raise AttributeError(msg)\n"
        "AttributeError: Unable to convert the pixel data\n"
    )
    assert outcome(tb, is_error=True).error == (
        "AttributeError: Unable to convert the pixel data (raised in get_pixeldata)"
    )
    # raised at a script's top level: no function to name
    top = 'Traceback (most recent call last):\n  File "x.py", line 3, in <module>\nKeyError: 1\n'
    assert outcome(top, is_error=True).error == "KeyError: 1"


def test_outcome_chinese() -> None:
    out = outcome("Exit code 1\n正在构建...\n错误：找不到模块 utils")
    assert out.failed and out.error is not None and "找不到模块" in out.error


def test_harness_notes_are_not_outcomes() -> None:
    assert harness_note("<tool_use_error>Sibling tool call errored</tool_use_error>")
    assert not harness_note("Exit code 1\nboom")


# ------------------------------------------------------------------ ToolFacts


class _Log:
    """A tiny log fed straight to ToolFacts: call + result, one seq each."""

    def __init__(self) -> None:
        self.tf = ToolFacts("s1")
        self.seq = 0
        self.facts: list[Fact] = []

    def _next(self) -> int:
        self.seq += 1
        return self.seq

    def run(self, command: str, output: str, *, is_error: bool = False, tool: str = "Bash") -> int:
        cid = f"c{self.seq}"
        s = self._next()
        self.facts += self.tf.call(cid, tool, {"command": command}, s)
        self.facts += self.tf.result(cid, output, is_error, self._next())
        return s

    def edit(self, path: str, old: str, new: str) -> int:
        cid = f"c{self.seq}"
        s = self._next()
        args = {"file_path": path, "old_string": old, "new_string": new}
        self.facts += self.tf.call(cid, "Edit", args, s)
        self.facts += self.tf.result(cid, "The file was updated", False, self._next())
        return s

    def done(self) -> list[Fact]:
        return self.facts + self.tf.finish()


def _of(facts: list[Fact], kind: str) -> list[Fact]:
    return [f for f in facts if f.kind == kind]


def _key(facts: list[Fact], key: str) -> Fact:
    found = [f for f in facts if f.key == key]
    assert len(found) == 1, (key, found)
    return found[0]


def test_the_fix_is_the_edit_between_the_failing_and_the_passing_run() -> None:
    log = _Log()
    log.edit("src/early.py", "a = 1", "a = 2")  # before the failure: not the fix
    fail = log.run(
        "pytest tests/test_calc.py -q",
        "Exit code 1\nFAILED tests/test_calc.py::test_add - assert 3 == 4\n1 failed, 4 passed",
        is_error=True,
    )
    fix = log.edit("src/calc.py", "return a + b + 1", "return a + b")
    passed = log.run("pytest -q", "5 passed in 0.02s")
    log.edit("src/later.py", "x", "y")  # after the pass: not the fix either
    facts = log.done()
    errors = _of(facts, "error")
    assert len(errors) == 1
    err = errors[0]
    assert err.source.seq == fail
    assert err.text.startswith("pytest tests/test_calc.py -q: FAILED tests/test_calc.py::test_add")
    assert err.fix is not None and "src/calc.py" in err.fix and "return a + b" in err.fix
    assert "early.py" not in err.fix and "later.py" not in err.fix
    assert fix in err.evidence and passed + 1 in err.evidence
    test = _key(facts, "test command")
    assert test.value == "pytest" and test.source.seq == passed
    assert _key(facts, "test count").value == "5"
    assert _key(facts, "test framework").value == "pytest"


def test_a_narrower_pass_does_not_close_a_broader_failure() -> None:
    log = _Log()
    log.run("pytest", "Exit code 1\n=== 2 failed, 8 passed ===", is_error=True)
    log.edit("src/a.py", "x", "y")
    log.run("pytest tests/test_a.py", "3 passed")
    facts = log.done()
    errors = _of(facts, "error")
    assert len(errors) == 1 and "still failing" in errors[0].text and errors[0].fix is None


def test_an_install_between_counts_as_the_fix() -> None:
    log = _Log()
    log.run(
        "python app.py",
        "Exit code 1\nTraceback (most recent call last):\nModuleNotFoundError: No module named 'flask'",
        is_error=True,
    )
    log.run("pip install flask", "Successfully installed flask-3.0\nfound 0 vulnerabilities")
    log.run("python app.py", " * Running on http://127.0.0.1:5000")
    facts = log.done()
    (err,) = _of(facts, "error")
    assert "ModuleNotFoundError" in err.text
    assert err.fix is not None and "pip install flask" in err.fix
    assert _key(facts, "install command").value == "pip install flask"
    assert _key(facts, "run command").value == "python app.py"
    assert _key(facts, "package manager").value == "pip"
    # package-manager chatter never becomes a fact
    assert not any("vulnerabilit" in f.text or "funding" in f.text for f in facts)


def test_reading_commands_give_no_project_facts_and_no_errors() -> None:
    log = _Log()
    log.run("ls -la", "total 0")
    log.run("grep -rn foo src", "Exit code 1", is_error=True)
    log.run("cat README.md", "# Project\nRun `npm test` to test. 43 passed.")
    log.run("find . -name '*.py' | head", "./a.py")
    assert log.done() == []


def test_clipped_one_fact_per_key_on_a_long_log() -> None:
    log = _Log()
    for i in range(200):
        log.edit(f"src/m{i % 30}.py", f"v = {i}", f"v = {i + 1}")
        log.run(f"pytest tests/test_m{i % 7}.py -q", f"{i + 1} passed in 0.1s")
    facts = log.done()
    keys = Counter(f.key for f in facts)
    assert all(n == 1 for n in keys.values())
    assert len(facts) <= 20
    test = _key(facts, "test command")
    assert test.value == "pytest" and len(test.evidence) >= 5
    assert _key(facts, "language").value == "Python"


def test_duplicate_and_reused_call_ids() -> None:
    tf = ToolFacts("s")
    args = {"command": "npm test"}
    tf.call("a", "Bash", args, 1)
    tf.call("a", "Bash", args, 2)  # the same call as an event: one call
    tf.result("a", "Exit code 1\nnpm ERR! Test failed", True, 3)
    tf.call("a", "Bash", {"command": "npm test"}, 4)  # the id reused for a new call
    tf.call("b", "Edit", {"file_path": "src/x.js", "old_string": "a", "new_string": "b"}, 5)
    (err,) = tf.result("a", "Tests: 3 passed, 3 total", False, 6)
    # the edit came after the re-run started: it is not the fix
    assert err.fix is None and "no change" in err.text and err.source.seq == 1
    tf.call("c", "Bash", {"command": "npm test"}, 7)
    assert tf.result("c", "Tests: 3 passed, 3 total", False, 8) == []  # closed already
    facts = tf.finish()
    assert _key(facts, "test command").value == "npm test"
    assert _key(facts, "package manager").value == "npm"


def test_codex_polls_of_a_running_process() -> None:
    tf = ToolFacts("s")
    tf.call("x", "exec_command", {"cmd": "npm test", "workdir": "/repo"}, 1)
    tf.result("x", "Chunk ID: 1\nProcess running with session ID 77\nOutput:\n", False, 2)
    tf.call("y", "write_stdin", {"session_id": 77, "chars": ""}, 3)
    tf.result("y", "Chunk ID: 2\nProcess running with session ID 77\nOutput:\nFAIL a", False, 4)
    tf.call("z", "write_stdin", {"session_id": 77, "chars": ""}, 5)
    tf.result("z", "Chunk ID: 3\nProcess exited with code 1\nOutput:\nTests: 1 failed", False, 6)
    tf.call(
        "e",
        "apply_patch",
        {"_raw": "*** Begin Patch\n*** Update File: /repo/src/a.ts\n-x\n+y\n"},
        7,
    )
    tf.call("w", "exec_command", {"cmd": "npm test", "workdir": "/repo"}, 8)
    out = tf.result("w", "Process exited with code 0\nOutput:\nTests: 2 passed, 2 total", False, 9)
    (err,) = out
    assert err.kind == "error" and err.source.seq == 1
    assert err.fix is not None and "src/a.ts" in err.fix and "`x` → `y`" in err.fix
    facts = tf.finish()
    assert _key(facts, "file src/a.ts").text == "edited src/a.ts: `x` → `y`"


def test_editor_tools_of_the_agents() -> None:
    tf = ToolFacts("s")
    tf.call(
        "1",
        "str_replace_editor",
        {
            "command": "create",
            "path": "/workspace/app.py",
            "file_text": "from flask import Flask\n",
        },
        1,
    )
    tf.call("2", "str_replace_editor", {"command": "view", "path": "/workspace/app.py"}, 2)
    tf.call("3", "edit", {"path": "web/Main.tsx", "search": "a", "replace": "b"}, 3)  # aider
    tf.call("4", "open", {"path": "lib/core.py"}, 4)  # SWE-agent: edits go to the open file
    tf.call("5", "edit", {"search": "x = 1", "replace": "x = 2"}, 5)
    tf.call("6", "write_file", {"file_path": "/tmp/notes.txt", "content": "scratch"}, 6)
    facts = tf.finish()
    paths = {f.value for f in facts if (f.key or "").startswith("file ")}
    assert paths == {"app.py", "web/Main.tsx", "lib/core.py"}
    assert _key(facts, "file app.py").text == "created app.py"
    assert _key(facts, "framework").value in ("Flask", "React")


def test_chinese_paths_and_descriptions() -> None:
    log = _Log()
    log.edit("文档/说明.md", "旧的说明", "新的说明")
    log.run("python 工具/构建.py", "Exit code 1\n错误：缺少配置文件", is_error=True)
    log.edit("配置/设置.py", "超时 = 10", "超时 = 60")
    log.run("python 工具/构建.py", "完成")
    facts = log.done()
    assert _key(facts, "file 文档/说明.md").text == "edited 文档/说明.md: `旧的说明` → `新的说明`"
    (err,) = _of(facts, "error")
    assert "错误：缺少配置文件" in err.text
    assert err.fix is not None and "配置/设置.py" in err.fix and "文档" not in err.fix


def test_every_quote_is_short_and_every_text_one_line() -> None:
    log = _Log()
    long = "pytest " + " ".join(f"tests/test_{i}.py" for i in range(100))
    log.run(long, "Exit code 1\n" + "FAILED x - " + "y" * 1000, is_error=True)
    log.edit("a.py", "q" * 500, "r" * 500)
    log.run(long, "100 passed")
    for f in log.done():
        assert len(f.source.quote) <= QUOTE_MAX
        assert "\n" not in f.text and len(f.text) <= 300


# ------------------------------------------------------------------ fuzz

_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(
                ["Bash", "exec_command", "Edit", "write_stdin", "apply_patch", "edit", "open", "x"]
            ),
            _TEXT,
            _TEXT,
            st.booleans(),
        ),
        max_size=8,
    )
)
def test_odd_input_never_raises(calls: list[tuple[str, str, str, bool]]) -> None:
    tf = ToolFacts("s")
    for i, (name, arg, output, err) in enumerate(calls):
        args: Mapping[str, Any] = {
            "command": arg,
            "cmd": [arg],
            "file_path": arg,
            "session_id": i,
            "_raw": arg,
        }
        assert isinstance(tf.call(str(i % 3), name, args, 2 * i), list)
        assert isinstance(tf.result(str(i % 3), output, err, 2 * i + 1), list)
        parts(arg)
        outcome(output, err)
    assert isinstance(tf.finish(), list)


# ------------------------------------------------------------------ real logs


def _session(agent: str, name: str) -> list[dict[str, Any]]:
    path = AGENTS / agent / name
    if not path.exists():
        pytest.skip(f"{path} is not available (../shared/data)")
    from ctxsdk.session.importers import import_file

    return list(import_file(agent, path).raw_events)


def _facts(agent: str, name: str) -> list[Fact]:
    return [
        f for f in read_facts(_session(agent, name), session=name) if f.kind in ("project", "error")
    ]


def _value(facts: list[Fact], key: str) -> str | None:
    return next((f.value for f in facts if f.key == key), None)


def test_real_codex_rollout() -> None:
    facts = _facts(
        "codex", "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
    )
    assert _value(facts, "test command") == "npm test"
    assert _value(facts, "build command") == "npm run build"
    assert _value(facts, "language") == "TypeScript"
    assert _value(facts, "package manager") == "npm"
    errors = _of(facts, "error")
    assert errors and errors[0].fix is not None
    assert "src/agents/plugins/codemie-code.plugin.ts" in errors[0].fix
    assert "fixed by" in errors[0].text


def test_real_claude_code_transcript() -> None:
    facts = _facts("claude-code", "spotter__8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl")
    assert _value(facts, "test command") == "mix test"
    assert _value(facts, "language") == "Elixir"
    assert _value(facts, "test framework") == "ExUnit"
    files = [f.value or "" for f in facts if (f.key or "").startswith("file ")]
    assert "lib/spotter_web/live/session_live.ex" in files  # relative to the worktree
    assert not any(p.startswith("/home/") for p in files)
    fixed = [e for e in _of(facts, "error") if e.fix]
    assert any("mix.exs" in (e.fix or "") for e in fixed)
    assert len(facts) <= 40  # a 2,400-event log: tens of facts, not hundreds


def test_real_mini_swe_agent_runs() -> None:
    facts = _facts("mini-swe-agent", "django__django-10999.traj.json")
    assert _value(facts, "test command") == "python3 tests/runtests.py"
    assert _value(facts, "framework") == "Django"
    assert "file django/utils/dateparse.py" in {f.key for f in facts}
    assert not any("reproduce" in (f.key or "") for f in facts)
    facts = _facts("mini-swe-agent", "matplotlib__matplotlib-21568.traj.json")
    (err,) = [e for e in _of(facts, "error") if e.fix]
    assert err.text.startswith("pytest lib/matplotlib/tests/test_dates.py: E AssertionError")
    assert "lib/matplotlib/tests/test_dates.py" in (err.fix or "")


def test_real_swe_agent_function_calls() -> None:
    facts = _facts("swe-agent", "fc_replay__marshmallow-code__marshmallow-1867.traj")
    assert "file src/marshmallow/fields.py" in {f.key for f in facts}
    assert _value(facts, "install command") == "pip install -e .[dev]"
    assert not any("reproduce" in (f.key or "") for f in facts)


def test_real_aider_and_openhands_edits() -> None:
    facts = _facts("aider", "aider-website__hello-world-flask.md")
    assert _value(facts, "framework") == "Flask"
    assert _value(facts, "file app.py") == "app.py"
    facts = _facts("aider", "Monochromatic__.aider.chat.history.md")
    assert not any("SearchReplace" in (f.key or "") for f in facts)
    facts = _facts("openhands", "basic.json")
    assert _value(facts, "file game_2048.py") == "game_2048.py"


def test_real_gemini_cli_session() -> None:
    facts = _facts("gemini-cli", "session-2026-01-16T11-01-file-ops-37b7abef.json")
    assert _value(facts, "file hello.md") == "hello.md"


def test_real_logs_give_no_claims_from_contents_and_short_quotes() -> None:
    if not AGENTS.is_dir():
        pytest.skip("../shared/data is not available")
    names = [
        ("codex", "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"),
        ("claude-code", "spotter__8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"),
        ("claude-code", "codemie__session-624a4a58.jsonl"),
        ("mini-swe-agent", "pytest-dev__pytest-7521.traj.json"),
        ("aider", "Monochromatic__.aider.chat.history.md"),
    ]
    for agent, name in names:
        facts = _facts(agent, name)
        keys = Counter(f.key for f in facts if f.kind == "project")
        assert all(n == 1 for n in keys.values()), (name, keys)
        for f in facts:
            assert len(f.source.quote) <= QUOTE_MAX
            assert "\n" not in f.text
            assert not any(w in f.text for w in ("looking for funding", "vulnerabilities"))


def test_commands_told_in_text_and_relayed_output() -> None:
    tf = ToolFacts("s")
    # SWE-agent: a thought, then the action in a fence; the harness relays the output
    tf.text_action("Let's open the file.\n```\nopen src/calc.py\n```", 1)
    tf.relay("[File: /repo/src/calc.py (10 lines total)]", 2)
    tf.text_action("Run it.\n```\npython -m pytest tests\n```", 3)
    tf.relay("FAILED tests/test_calc.py::test_add - assert 3 == 4\n1 failed", 4)
    tf.text_action("Fix it.\n```\nedit 3:3\n    return a + b\nend_of_edit\n```", 5)
    tf.relay("File updated.", 6)
    tf.text_action("Again.\n```\npython -m pytest tests\n```", 7)
    (err,) = tf.relay("==== 4 passed in 0.1s ====", 8)
    assert err.fix is not None and err.fix.startswith("src/calc.py: added `return a + b`")
    # Aider: a typed /run command, its output relayed; other user text clears it
    tf.user_text("/run npm test", 9)
    tf.user_text("thanks, now make it faster", 10)
    assert tf.relay("npm ERR! Test failed", 11) == []
    # a fenced block in a reply with no relayed output after it is not a command
    tf.text_action("Here is an example:\n```\nrm -rf build\n```", 12)
    tf.user_text("ok", 13)
    facts = tf.finish()
    assert _key(facts, "file src/calc.py").text.startswith("edited src/calc.py")
    assert _key(facts, "test command").value == "python -m pytest"
    assert not _of(facts, "error")


def test_real_swe_agent_text_actions_and_aider_run() -> None:
    facts = _facts("swe-agent", "default_replay__marshmallow-code__marshmallow-1867.traj")
    assert "file src/marshmallow/fields.py" in {f.key for f in facts}
    assert _value(facts, "install command") == "pip install -e .[dev]"
    facts = _facts("aider", "aider-website__add-test.md")
    (err,) = _of(facts, "error")
    assert err.text.startswith("pytest tests/test_commands.py: E AttributeError")
    assert err.fix is not None and err.fix.startswith("tests/test_commands.py:")
    assert _value(facts, "test command") == "pytest"


def test_a_format_complaint_is_not_a_command_output() -> None:
    tf = ToolFacts("s")
    tf.text_action("Two ideas:\n```\nmake test\n```", 1)
    assert tf.relay("Please always provide EXACTLY ONE action in triple backticks.", 2) == []
    tf.text_action("Code:\n```python\nx = a > 0\n```", 3)  # not a shell fence
    tf.relay("ok", 4)
    assert tf.finish() == []


# ------------------------------------------------- edits that failed, wrapped commands


@pytest.mark.parametrize(
    ("result", "is_error"),
    [
        ("<tool_use_error>String to replace not found in file.</tool_use_error>", True),
        ("No replacement was performed, old_str `x = 1` did not appear verbatim in a.py.", False),
        ("ERROR:\nNo replacement was performed. Multiple occurrences of old_str", False),
        (
            "Your proposed edit has introduced new syntax error(s).\nYour changes have NOT been applied.",
            False,
        ),
        ("Error: file already exists at /repo/new.py", False),
        ("anything at all", True),
    ],
)
def test_an_edit_whose_result_is_an_error_makes_no_file_fact(result: str, is_error: bool) -> None:
    tf = ToolFacts("s")
    tf.call(
        "1",
        "str_replace_editor",
        {"command": "str_replace", "path": "/repo/a.py", "old_str": "x = 1", "new_str": "x = 2"},
        1,
    )
    tf.result("1", result, is_error, 2)
    tf.call("2", "Edit", {"file_path": "/repo/b.py", "old_string": "y", "new_string": "z"}, 3)
    tf.result("2", "The file /repo/b.py has been updated.", False, 4)
    paths = {f.value for f in tf.finish() if (f.key or "").startswith("file ")}
    assert paths == {"b.py"}


def test_a_shell_that_wrote_a_file_then_failed_keeps_the_file() -> None:
    tf = ToolFacts("s")
    tf.call("1", "bash", {"command": "cat > /repo/src/app.py <<'EOF'\nx = 1\nEOF\npytest -q"}, 1)
    tf.result("1", "FAILED tests/test_app.py::test_x\n1 failed in 0.1s", True, 2)
    paths = {f.value for f in tf.finish() if (f.key or "").startswith("file ")}
    assert "src/app.py" in paths


@pytest.mark.parametrize(
    ("command", "short"),
    [
        ("GH_TOKEN=x pytest -q", "pytest"),
        ("GH_TOKEN=$(gh auth token) pytest -q", "pytest"),
        ("CI=true npm test", "npm test"),
        ("cd repo && pytest", "pytest"),
        ("pushd repo && pytest; popd", "pytest"),
        ('bash -c "cd repo && pytest -q"', "pytest"),
        ("sh -lc 'CI=1 npm test'", "npm test"),
        ("cd /r && source venv/bin/activate && PYTHONPATH=. pytest tests", "pytest"),
    ],
)
def test_env_prefixed_and_wrapped_commands_are_the_test_command(command: str, short: str) -> None:
    mattering = [p for p in parts(command) if p.purpose not in ("read", "write")]
    assert [(p.purpose, p.short) for p in mattering] == [("test", short)]
    assert covers(parts(short + " -q"), parts(command))


def test_work_handed_to_a_sub_agent_is_a_decision() -> None:
    tf = ToolFacts("s")
    (f,) = tf.call(
        "1",
        "delegate_to_agent",
        {"agent_name": "codebase_investigator", "objective": "Explore the repo. Then report."},
        3,
    )
    assert (f.kind, f.text) == ("decision", "delegated to codebase_investigator: Explore the repo.")
    assert f.source.role == "assistant" and f.source.seq == 3
    (g,) = tf.call(
        "2", "Task", {"description": "Find callers", "prompt": "…", "subagent_type": "Explore"}, 4
    )
    assert g.text == "delegated to Explore: Find callers"
    assert tf.call("3", "Task", {"description": "no agent named"}, 5) == []


def test_a_file_facts_quote_is_the_path_as_the_call_wrote_it() -> None:
    tf = ToolFacts("s")
    tf.call(
        "1",
        "str_replace_editor",
        {"command": "create", "path": "/workspace/game.py", "file_text": "x"},
        1,
    )
    tf.call("2", "Write", {"file_path": "/home/ann/proj/notes.md", "content": "y"}, 2)
    got = {f.value: f.source.quote for f in tf.finish() if (f.key or "").startswith("file ")}
    assert got["game.py"] == "/workspace/game.py"
    # under a home directory the quote is the path the fact names, nothing more
    assert all(q == v for v, q in got.items() if v != "game.py")


def test_plan_steps_are_the_agents_decisions_each_told_once() -> None:
    tf = ToolFacts("s")
    plan = {
        "plan": [
            {"step": "Add failing tests for the threshold", "status": "in_progress"},
            {"step": "Set the default threshold", "status": "pending"},
        ]
    }
    got = tf.call("1", "update_plan", plan, 5)
    assert [(f.kind, f.text, f.source.role) for f in got] == [
        ("decision", "plan: Add failing tests for the threshold", "assistant"),
        ("decision", "plan: Set the default threshold", "assistant"),
    ]
    plan["plan"][0]["status"] = "completed"
    assert tf.call("2", "update_plan", plan, 9) == []  # the same steps again add nothing
    todos = {"todos": [{"content": "Write the migration", "status": "pending", "activeForm": "x"}]}
    assert [f.text for f in tf.call("3", "TodoWrite", todos, 12)] == ["plan: Write the migration"]


def test_a_check_script_that_ran_tests_is_the_count_when_the_suite_never_reported() -> None:
    # mini-swe-agent shape: the project's suite times out, the agent writes test_fix.py (a
    # unittest file) and runs it; its "Ran 3 tests ... OK" is what verified the fix
    log = _Log()
    log.run(
        "python3 test_requests.py",
        "The last command <command>python3 test_requests.py</command> timed out and has been"
        " killed.",
        is_error=True,
    )
    log.edit("requests/sessions.py", "builtin_str(method)", "to_native_string(method)")
    log.run(
        "python3 test_fix.py",
        "<returncode>0</returncode>\n<output>\n...\n" + "-" * 70 + "\nRan 3 tests in 0.003s\n\n"
        "OK\n</output>",
    )
    count = _key(log.done(), "test count")
    assert count.value == "3" and "ran 3 tests, 3 passed" in count.text
    assert "test_fix.py" in count.text and "script" in count.text


def test_the_suite_count_wins_over_a_check_script() -> None:
    log = _Log()
    log.run("python3 test_fix.py", "Ran 2 tests in 0.001s\n\nOK")
    log.run("pytest -q", "12 passed in 0.40s")
    count = _key(log.done(), "test count")
    assert count.value == "12" and "test_fix" not in count.text


def test_a_file_edited_several_times_says_its_last_change() -> None:
    # Aider / Claude Code shape: one file edited three times; the count alone told nothing
    log = _Log()
    log.edit("aider/getinput.py", "from prompt_toolkit import prompt", "import prompt_toolkit")
    log.edit("aider/getinput.py", "line = prompt(", "session = PromptSession(")
    log.edit("aider/getinput.py", "", "")  # a change that says nothing is not the one told
    fact = _key(log.done(), "file aider/getinput.py")
    assert fact.text == (
        "edited aider/getinput.py (3 changes; last: `line = prompt(` → `session = PromptSession(`)"
    )


def test_a_swe_agent_edit_with_an_empty_body_deletes_lines() -> None:
    # SWE-agent ctf_pwn shape: ``edit 6:7`` then ``end_of_edit`` removes two stray lines; the
    # closing marker is no line of code the edit added
    tf = ToolFacts("s")
    tf.text_action("Open it.\n```\nopen src/exploit.py\n```", 1)
    tf.relay("[File: /repo/src/exploit.py (7 lines total)]", 2)
    tf.text_action("Write it.\n```\nedit 1:1\nfrom pwn import *\nend_of_edit\n```", 3)
    tf.relay("File updated.", 4)
    tf.text_action("Drop the stray lines.\n```\nedit 6:7\nend_of_edit\n```", 5)
    tf.relay("File updated.", 6)
    fact = _key(tf.finish(), "file src/exploit.py")
    assert "end_of_edit" not in fact.text
    assert fact.text == "edited src/exploit.py (2 changes; last: added `from pwn import *`)"


def test_a_line_the_program_labels_a_warning_is_no_failure() -> None:
    # pwntools on a terminal without terminfo: the script then ran fine
    out = "Warning: _curses.error: setupterm: could not find terminfo database\n\n[+] Done\n"
    assert not outcome(out).failed
    assert outcome("warning: unused variable `x`\nerror: aborting due to previous error").failed
    assert outcome("src/a.ts(3,5): error TS2322: Type 'string' is not assignable").failed


def test_written_text_is_what_a_call_writes_and_what_it_replaced() -> None:
    from ctxsdk.session.kernel import written_text

    assert written_text({"file_path": "a.py", "content": "x = 1\n"}) == ("x = 1\n", None)
    assert written_text({"old_string": "x = 1", "new_string": "x = 2"}) == ("x = 2", "x = 1")
    edits = {
        "edits": [{"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d"}]
    }
    assert written_text(edits) == ("b\nd", "a\nc")
    patch = "*** Begin Patch\n*** Update File: a.py\n-x = 1\n+x = 2\n*** End Patch"
    assert written_text({"input": patch}) == ("x = 2", "")
    assert written_text({"command": "ls"}) == ("", None)
