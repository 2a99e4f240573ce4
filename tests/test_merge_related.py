"""A bare code name sessions of unrelated code both use is one word, not one belief
(``ctxsdk.merge._related``, ``_shared``): shared only within one codebase or through one
call line both ran."""

from __future__ import annotations

import ctxsdk as cx
from ctxsdk.merge._beliefs import Branch
from ctxsdk.merge._related import unrelated_pairs
from ctxsdk.testing import LogBuilder

_SUBMIT = "echo SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached"


def _fix(sid: str, edited: str, cwd: str | None, submit: str = "git status") -> cx.Session:
    """A session that edits ``edited`` with a sed that raises ValueError, then runs ``submit``."""
    b = LogBuilder(session_id=sid, runtime_context=None, cwd=cwd)
    b.turn("Fix the crash on empty input.")
    sed = f"sed -i 's/return None/raise ValueError(\"empty\")/' {edited}"
    b.assistant(text="Patching.", tool_calls=[("bash", {"command": sed})])
    b.tool_results([""]).next_step()
    b.assistant(text="Submitting.", tool_calls=[("bash", {"command": submit})])
    b.tool_results(["ok"]).next_step().assistant(text="Done.").end_turn()
    return cx.Session.from_events(b.header, b.events)


def _names(r: cx.MergeResult) -> set[str]:
    return {s.key for s in r.slots if s.key.startswith("name ")}


def test_a_code_name_two_unrelated_repositories_use_is_no_shared_slot() -> None:
    a = _fix("django-a", "django/forms/models.py", None)
    b = _fix("flask-b", "src/flask/blueprints.py", None)
    assert "name valueerror" not in _names(cx.Merge([a, b]).run())


def test_one_codebase_shares_the_code_name() -> None:
    a = _fix("api-a", "api/models.py", "/home/dev/api")
    b = _fix("api-b", "api/views.py", "/home/dev/api")
    assert "name valueerror" in _names(cx.Merge([a, b]).run())


def test_unrelated_sessions_share_a_name_through_one_call_line_both_ran() -> None:
    a = _fix("django-a", "django/forms/models.py", None, submit=_SUBMIT)
    b = _fix("flask-b", "src/flask/blueprints.py", None, submit=_SUBMIT)
    names = _names(cx.Merge([a, b]).run())
    assert "name submit_final_output" in names and "name valueerror" not in names


def test_which_pairs_are_unrelated() -> None:
    a = Branch("a", (), cwd="/x/api")
    b = Branch("b", (), cwd="/x/web")
    c = Branch("c", (), cwd="/y/api")  # one repository at another path
    d = Branch("d", ())  # unknown directory, no file: may be anyone's
    assert unrelated_pairs([a, b, c, d]) == {frozenset(("a", "b")), frozenset(("b", "c"))}
