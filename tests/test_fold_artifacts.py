"""A file an edit tool changed shows the line its latest edit added (the code the session
settled on: a new route, a renamed call), not the edit's whole text; comments, imports and
shebangs say nothing of the change and are passed over; an edit that only removed lines keeps
the line an earlier edit added."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import ctxsdk as cx
from ctxsdk.fold._state import FoldState, reduce_events
from ctxsdk.testing import LogBuilder

PLAIN_SYSTEM = "You are a coding agent."

HELLO = '@app.route("/hello")\ndef hello():\n    return "Hello, World!"'
ADD = '@app.route("/add/<int:a>/<int:b>")\ndef add(a, b):\n    return str(a + b)\n\n' + HELLO


def edits(calls: Sequence[tuple[str, Mapping[str, Any]]]) -> FoldState:
    b = LogBuilder(session_id="edits", system=PLAIN_SYSTEM)
    for name, args in calls:
        b.turn("Go on.").assistant(text="Editing.", tool_calls=[(name, dict(args))])
        b.tool_results(["ok"]).next_step().assistant(text="Done.").end_turn()
    return reduce_events(cx.Session.from_events(b.header, b.events).raw_events)


def shown(state: FoldState) -> list[str]:
    return [str(a.value) for a in state.artifacts]


def test_an_edit_shows_the_first_line_it_added() -> None:
    # Claude Code's Edit: file_path, old_string, new_string
    s = edits([("Edit", {"file_path": "app.py", "old_string": HELLO, "new_string": ADD})])
    assert shown(s) == ['app.py (added `@app.route("/add/<int:a>/<int:b>")`)']


def test_comments_imports_and_shebangs_are_passed_over() -> None:
    new = "#!/usr/bin/env python\n# the CLI\nimport sys\nfrom os import path\n\nMAX_ITEMS = 50\n"
    s = edits([("edit", {"path": "cli.py", "search": "", "replace": new})])  # Aider's shape
    assert shown(s) == ["cli.py (added `MAX_ITEMS = 50`)"]


def test_the_latest_edit_wins_and_a_removal_keeps_the_earlier_line() -> None:
    s = edits(
        [
            ("str_replace_editor", {"path": "app.py", "old_str": HELLO, "new_str": ADD}),
            (
                "str_replace_editor",
                {
                    "path": "app.py",
                    "old_str": "return str(a + b)",
                    "new_str": "return str(int(a) + int(b))",
                },
            ),
            ("str_replace_editor", {"path": "app.py", "old_str": HELLO, "new_str": ""}),
        ]
    )
    assert shown(s) == ["app.py (added `return str(int(a) + int(b))`)"]
    assert len(s.artifacts[0].sources) == 3


def test_an_edit_that_adds_no_line_of_its_own_shows_the_path() -> None:
    s = edits(
        [("Edit", {"file_path": "a.py", "old_string": "x = 1\ny = 2", "new_string": "y = 2"})]
    )
    assert shown(s) == ["a.py"]
