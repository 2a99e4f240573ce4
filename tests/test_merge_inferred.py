"""An inferred project fact (``ctxsdk.merge._inferred``): one session's language, framework
or package manager stays out of a merged block; what sessions share stays in; values read
from disjoint files are no dispute."""

from __future__ import annotations

import ctxsdk as cx
from ctxsdk.merge._beliefs import build_slots
from ctxsdk.merge._claims import Claim
from ctxsdk.merge._inferred import ONE_SESSION, one_session_inferred
from ctxsdk.merge._projects import disjoint
from ctxsdk.testing import LogBuilder


def _runs(sid: str, edited: str, command: str, output: str) -> cx.Session:
    b = LogBuilder(session_id=sid, runtime_context=None, cwd=None)
    edit = {"file_path": edited, "old_string": "a = 1", "new_string": "a = 2"}
    b.turn("Fix the failing check.").assistant(text="Editing.", tool_calls=[("Edit", edit)])
    b.tool_results(["ok"]).next_step()
    b.assistant(text="Running.", tool_calls=[("bash", {"command": command})])
    b.tool_results([output]).next_step().assistant(text="Done.").end_turn()
    return cx.Session.from_events(b.header, b.events)


def _py(sid: str, edited: str) -> cx.Session:
    return _runs(sid, edited, "pytest -q tests/", "....\n4 passed in 0.2s")


def _js(sid: str, edited: str) -> cx.Session:
    return _runs(sid, edited, "npm test", "Tests: 9 passed, 9 total")


def test_one_sessions_language_stays_out_of_the_block_with_the_reason() -> None:
    a = _py("svc-a", "api/models.py")
    b = _runs("notes-b", "notes/todo.md", "git status", "nothing to commit")
    r = cx.Merge([a, b]).run()
    assert [s.key for s in r.slots if s.key.startswith("language")] == ["language"]
    assert "`language`" not in r.text
    row = r.to_polars().filter(key="language").row(0, named=True)
    assert not row["in_block"] and row["why_not"] == ONE_SESSION
    # the file it was read from is still shown
    assert "api/models.py" in r.text


def test_a_language_two_sessions_share_stays_in_the_block() -> None:
    # read from the test runner both ran (no shown file says it: ``_implied``)
    r = cx.Merge([_py("svc-a", "notes/plan.md"), _py("svc-b", "notes/todo.md")]).run()
    assert r.slot("language").decision.winner == "python"
    assert "language" in {s.key for s in r.block.slots}


def test_languages_read_from_disjoint_files_are_no_dispute() -> None:
    # directories unknown: a Python service and a JavaScript front end touched no file in
    # common, so their languages describe different code; their test commands still differ
    r = cx.Merge([_py("svc-a", "api/models.py"), _js("web-b", "web/main.js")]).run()
    disputed = [s.key for s in r.disputed]
    assert "language" not in disputed and "test command" in disputed
    assert not any(s.key.startswith("language") for s in r.block.slots)


def _c(key: str, value: str, source: str, origin: str = "tool") -> Claim:
    return Claim(
        key,
        value.lower(),
        3,
        f"{key}: {value}",
        source,
        1,
        kind="fact",
        origin=origin,  # type: ignore[arg-type]
        project=True,
    )


def _edits(sid: str, *paths: str) -> cx.Session:
    b = LogBuilder(session_id=sid, runtime_context=None, cwd=None)
    b.turn("Wire the new setting through.")
    for path in paths:
        edit = {"file_path": path, "old_string": "a = 1", "new_string": "a = 2"}
        b.assistant(text="Editing.", tool_calls=[("Edit", edit)])
        b.tool_results(["ok"]).next_step()
    b.assistant(text="Done.").end_turn()
    return cx.Session.from_events(b.header, b.events)


def test_languages_of_sessions_that_touched_a_common_file_still_dispute() -> None:
    a = _edits("svc-a", "shared/settings.json", "web/app.js", "web/view.js")
    b = _edits("svc-b", "shared/settings.json", "api/app.py", "api/models.py")
    r = cx.Merge([a, b]).run()
    assert "language" in [s.key for s in r.disputed]


def test_which_touched_files_are_disjoint() -> None:
    assert disjoint(frozenset({"app.py"}), frozenset({"main.js"}))
    assert not disjoint(frozenset({"app.py", "x.md"}), frozenset({"app.py"}))
    # a session that touched no file may have touched any
    assert not disjoint(frozenset({"app.py"}), frozenset())


def test_a_user_stated_package_manager_is_no_inferred_fact() -> None:
    read = build_slots([_c("package manager", "npm", "a")])
    said = build_slots([_c("package manager", "pnpm", "a", origin="user")])
    assert one_session_inferred(read) == {"package manager"}
    assert not one_session_inferred(said)
