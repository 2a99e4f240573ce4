"""What the block leaves out though the merge keeps the slot (``ctxsdk.merge._prune``): a
session's task (its opening request) and a slot whose content another slot shows."""

from __future__ import annotations

import ctxsdk as cx
from ctxsdk.merge._beliefs import Slot, Trust, build_slots
from ctxsdk.merge._claims import Claim
from ctxsdk.merge._measures import MEASURED
from ctxsdk.merge._prune import TASK, repeats
from ctxsdk.merge._render import render_slot
from ctxsdk.testing import LogBuilder


def _session(sid: str, turns: list[tuple[str, str]]) -> cx.Session:
    b = LogBuilder(session_id=sid, runtime_context=None)
    for user, assistant in turns:
        b.turn(user).assistant(text=assistant).end_turn()
    return cx.Session.from_events(b.header, b.events)


def _why(r: cx.MergeResult, key: str) -> str:
    return str(r.to_polars().filter(key=key)["why_not"][0])


def test_a_sessions_opening_request_is_its_task_and_stays_out_of_the_block() -> None:
    opening = "There is a need to make sure that the conversation sync is tracked incrementally."
    a = _session(
        "task-a",
        [(opening, "I'll look at the sync code."), ("Don't create separate documents.", "OK.")],
    )
    b = _session("task-b", [("Review the metrics sync.", "Reading it.")])
    r = cx.Merge([a, b]).run()
    kept = [s.key for s in r.block.slots]
    assert "instruction: don't create separate documents" in kept  # said later: a rule
    task = next(s for s in r.slots if s.key.startswith("instruction: there is a need"))
    assert task.key not in kept and _why(r, task.key) == TASK  # in the result, not the block
    assert "conversation sync" not in r.text


def test_an_opening_request_two_sessions_share_is_kept() -> None:
    rule = "Never push to the main branch."
    a = _session("share-a", [(rule, "Understood.")])
    b = _session("share-b", [(rule, "Understood.")])
    r = cx.Merge([a, b]).run()
    assert any(s.statement and len(s.sources) == 2 for s in r.block.slots)
    assert "Never push to the main branch" in r.text


def test_a_users_unkeyed_project_fact_is_a_statement_slot() -> None:
    said = "We don't control the claude code process - it's a 3rd party tool the CLI calls."
    a = _session("proj-a", [("Plan the session tracking.", "OK."), (said, "Noted.")])
    r = cx.Merge([a]).run()
    (slot,) = [s for s in r.slots if s.key.startswith("project: ")]
    assert slot.statement and "3rd party tool" in slot.key
    assert "- `project` — \"We don't control the claude code process" in r.text


def _tool_session(sid: str = "runs-a", passed: int = 12, cwd: str | None = None) -> cx.Session:
    b = LogBuilder(session_id=sid, runtime_context=None, cwd=cwd)
    b.turn("Run the suite.").assistant(
        text="Running.", tool_calls=[("bash", {"command": "pytest -q tests/test_api.py"})]
    )
    b.tool_results([f"....\n{passed} passed in 0.31s"]).next_step().assistant(text="All pass.")
    b.end_turn()
    return cx.Session.from_events(b.header, b.events)


def test_a_test_count_is_a_measurement_the_test_command_line_shows() -> None:
    r = cx.Merge([_tool_session()]).run()
    kept = [s.key for s in r.block.slots]
    assert "test command" in kept and not any(k.startswith("test count") for k in kept)
    assert "12 passed" in r.text  # still said, once: on the test command's line
    assert _why(r, "test count (runs-a)") == MEASURED


def test_two_runs_counting_differently_are_no_dispute() -> None:
    a = _tool_session("runs-a", 12, cwd="/home/dev/app")
    b = _tool_session("runs-b", 212, cwd="/home/dev/app")
    r = cx.Merge([a, b]).run()
    counts = [s for s in r.slots if s.key.startswith("test count")]
    assert sorted(s.key for s in counts) == ["test count (runs-a)", "test count (runs-b)"]
    assert all(s.status == "resolved" for s in counts) and not r.disputed
    assert r.slot("test command").sources == ("runs-a", "runs-b")  # the command is shared


def _line(s: Slot) -> str:
    return f"{s.key} {' '.join(s.presented)} {s.claims[0].text}"


def _claim(key: str, value: str, source: str, text: str, evidence: int = 3) -> Claim:
    return Claim(key, value.lower(), evidence, text, source, 1, kind="fact", shown=value)


def test_one_file_under_two_keys_keeps_the_slot_two_sessions_back() -> None:
    claims = [
        _claim("file metrics/types.ts", "metrics/types.ts", "a", "see metrics/types.ts"),
        _claim("file metrics/types.ts", "metrics/types.ts", "b", "edit metrics/types.ts"),
        _claim(
            "file src/agents/core/metrics/types.ts",
            "src/agents/core/metrics/types.ts",
            "b",
            "read src/agents/core/metrics/types.ts (4 times)",
        ),
        _claim("file src/types.ts", "src/types.ts", "b", "read src/types.ts"),
    ]
    slots = build_slots(claims)
    out = repeats(slots, _line)
    # the same file by a longer path is a repeat; another types.ts (other directory) is not
    assert out == {"file src/agents/core/metrics/types.ts": "file metrics/types.ts"}


def test_a_plain_word_value_is_never_taken_for_a_repeat() -> None:
    claims = [
        _claim("language", "Python", "a", "language: Python"),
        _claim("test command", "python -m pytest", "a", "test command: python -m pytest"),
        _claim("package manager", "npm", "a", "package manager: npm"),
        _claim("build command", "npm run build", "a", "build command: npm run build"),
    ]
    slots = build_slots(claims)
    assert repeats(slots, _line) == {}


def test_a_shared_name_the_kernels_shared_command_holds_is_a_repeat() -> None:
    claims = [
        _claim("command pip install", "pip install", "a", "pip install -e .[dev]"),
        _claim("command pip install", "pip install", "b", "pip install -e .[dev]"),
        _claim("install command", "pip install -e .[dev]", "a", "install command"),
        _claim("install command", "pip install -e .[dev]", "b", "install command"),
        # one session's value may not drop what two sessions share
        _claim("setup", "pip install -e .[dev] --user", "a", "setup: pip install -e .[dev] --user"),
    ]
    lines = lambda s: render_slot(s, Trust.EXTERNAL)  # noqa: E731 - as the block renders them
    assert repeats(build_slots(claims), lines) == {"command pip install": "install command"}


def test_a_constraint_in_the_opening_request_is_kept_and_the_task_left_out() -> None:
    opening = (
        "Please write a simple TODO list web app. "
        "This should be a client-only app with no backend. "
        "There is a need to make sure the list renders fast."
    )
    a = _session("todo-a", [(opening, "I'll write index.html.")])
    b = _session("todo-b", [("Review the styles.", "Reading them.")])
    r = cx.Merge([a, b]).run()
    assert "client-only app with no backend" in r.text
    assert "renders fast" not in r.text


def test_an_issues_expected_behaviour_in_the_opening_request_is_the_task() -> None:
    opening = "model_to_dict() should return an empty dict for an empty list of fields."
    a = _session("issue-a", [(opening, "Looking at django/forms/models.py.")])
    r = cx.Merge([a]).run()
    assert "model_to_dict" not in r.text


def test_a_file_a_command_line_of_equal_reach_shows_is_a_repeat() -> None:
    # the file's line is the shorter, so it is kept first; the command's line names it
    claims = [
        _claim("file tests/runtests.py", "tests/runtests.py", "a", "python tests/runtests.py x"),
        _claim("file tests/runtests.py", "tests/runtests.py", "b", "python tests/runtests.py y"),
        _claim(
            "command python3 tests/runtests.py",
            "python3 tests/runtests.py",
            "a",
            "ran the django suite with it",
        ),
        _claim(
            "command python3 tests/runtests.py",
            "python3 tests/runtests.py",
            "b",
            "ran the django suite with it",
        ),
    ]
    lines = lambda s: render_slot(s, Trust.EXTERNAL)  # noqa: E731 - as the block renders them
    slots = build_slots(claims)
    assert len(lines(slots[1])) < len(lines(slots[0]))  # slots are by key: command, file
    assert repeats(slots, lines) == {"file tests/runtests.py": "command python3 tests/runtests.py"}
