"""A project fact holds for its project (``ctxsdk.merge._projects``): sessions of different
projects do not dispute it; sessions of one project (or of a project not known) do."""

from __future__ import annotations

import ctxsdk as cx
from ctxsdk.merge._beliefs import Branch
from ctxsdk.merge._claims import Claim
from ctxsdk.merge._projects import different_projects, scope_projects
from ctxsdk.testing import LogBuilder


def _runs(sid: str, edited: str, command: str, output: str, cwd: str | None) -> cx.Session:
    b = LogBuilder(session_id=sid, runtime_context=None, cwd=cwd)
    edit = {"file_path": edited, "old_string": "a = 1", "new_string": "a = 2"}
    b.turn("Fix it.").assistant(text="Editing.", tool_calls=[("Edit", edit)])
    b.tool_results(["ok"]).next_step()
    b.assistant(text="Running.", tool_calls=[("bash", {"command": command})])
    b.tool_results([output]).next_step().assistant(text="Done.").end_turn()
    return cx.Session.from_events(b.header, b.events)


def _pair(cwd_a: str | None, cwd_b: str | None, edited_b: str = "web/app.js") -> cx.MergeResult:
    a = _runs("proj-a", "api/app.py", "pytest -q tests/", "....\n4 passed in 0.2s", cwd_a)
    b = _runs("proj-b", edited_b, "npm test", "Tests: 9 passed, 9 total", cwd_b)
    return cx.Merge([a, b]).run()


def test_two_projects_test_commands_are_each_their_projects() -> None:
    r = _pair("/home/dev/api", "/home/dev/web")
    keys = {s.key for s in r.slots if s.key.startswith("test command")}
    assert keys == {"test command (api)", "test command (web)"}
    assert not r.disputed
    assert (
        "`test command (api)` = **pytest" in r.text
        and "`test command (web)` = **npm test" in r.text
    )


def test_one_projects_sessions_differing_is_a_dispute() -> None:
    r = _pair("/home/dev/api", "/home/dev/api")
    assert "test command" in [s.key for s in r.disputed]


def test_sessions_of_unknown_directories_still_dispute_though_they_share_no_file() -> None:
    # no directory: two sessions of one repository may edit different files
    r = _pair(None, None)
    assert "test command" in [s.key for s in r.disputed]


def _c(key: str, value: str, source: str) -> Claim:
    return Claim(key, value.lower(), 3, f"{key}: {value}", source, 1, kind="fact", project=True)


def test_only_the_differing_keys_are_keyed_per_project() -> None:
    claims = [
        _c("language", "Python", "a"),
        _c("package manager", "pip", "a"),
        _c("language", "JavaScript", "b"),
        _c("package manager", "pip", "b"),
    ]
    branches = [Branch("a", (), cwd="/x/hello-flask"), Branch("b", (), cwd="/x/2048-game")]
    keys = sorted({c.key for c in scope_projects(claims, branches)})
    assert keys == ["language (2048-game)", "language (hello-flask)", "package manager"]


def test_sessions_that_agree_share_one_slot_whatever_their_project() -> None:
    claims = [_c("language", "Python", "a"), _c("language", "Python", "b")]
    branches = [Branch("a", (), cwd="/x/django"), Branch("b", (), cwd="/x/requests")]
    assert [c.key for c in scope_projects(claims, branches)] == ["language", "language"]


def test_a_clone_at_another_path_or_a_subdirectory_is_one_project() -> None:
    assert different_projects("/x/app", "/x/web")
    assert not different_projects("/Users/a/repos/codemie-code", "/Users/b/w/codemie-code")
    assert not different_projects("/h/spotter-fum", "/h/spotter-fum/assets")
    assert not different_projects("/x/app", None)
