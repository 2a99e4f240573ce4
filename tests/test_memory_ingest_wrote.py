"""A key file's entity holds what the session wrote into it: the lines its edits added
(an edit's new text less its old text's lines, a written file's content), newest edit
first, in the file's own words; a file only read holds nothing more."""

from __future__ import annotations

import ctxsdk as cx
from ctxsdk.memory._ingest import extract
from ctxsdk.memory._wrote import file_lines, wrote_lines
from ctxsdk.testing import LogBuilder

APP = "/home/dev/app"


def _session() -> cx.Session:
    b = LogBuilder(session_id="w", runtime_context=None, cwd=APP)
    b.turn("Add an /add/X/Y endpoint to app.py.").assistant(
        tool_calls=[
            (
                "Write",
                {
                    "file_path": f"{APP}/app.py",
                    "content": "from flask import Flask\napp = Flask(__name__)\n\n",
                },
            )
        ]
    )
    b.tool_results(["ok"]).next_step()
    edit = {
        "file_path": f"{APP}/app.py",
        "old_string": "app = Flask(__name__)",
        "new_string": (
            "app = Flask(__name__)\n\n@app.route('/add/<int:a>/<int:b>')\n"
            "def add(a, b):\n    return str(a + b)"
        ),
    }
    b.assistant(tool_calls=[("Edit", edit)])
    b.tool_results(["ok"]).next_step()
    b.assistant(tool_calls=[("Read", {"file_path": f"{APP}/README.md"})])
    b.tool_results(["# App"]).next_step()
    b.assistant(text="Done: app.py serves /add.").end_turn()
    return cx.Session.from_events(b.header, b.events)


def test_the_lines_an_edit_added_newest_first() -> None:
    wrote = wrote_lines(_session())
    lines = file_lines("app.py", wrote)
    assert lines[:3] == [
        "@app.route('/add/<int:a>/<int:b>')",
        "def add(a, b):",
        "return str(a + b)",
    ]
    assert "from flask import Flask" in lines  # the first write, after the newer edit
    assert lines.count("app = Flask(__name__)") == 1  # the edit's old line is not new
    assert file_lines("README.md", wrote) == []  # read, never written
    assert file_lines("other/app.py", wrote) == []  # another file of the same name


def test_a_key_files_entity_holds_what_the_session_wrote() -> None:
    ex = extract(_session())
    (app,) = [c for c in ex.candidates if c.type == "entity" and c.name.endswith("app.py")]
    assert "; it holds: @app.route('/add/<int:a>/<int:b>') | def add(a, b)" in app.text


def test_a_file_a_shell_wrote_from_a_here_document_holds_its_body() -> None:
    b = LogBuilder(session_id="h", runtime_context=None, cwd=APP)
    b.turn("Reproduce the bug.").assistant(
        tool_calls=[
            (
                "bash",
                {
                    "command": "cat <<'EOF' > reproduce_issue.py\nfrom app import add\n"
                    "print(add(2, 3))\nEOF\npython reproduce_issue.py"
                },
            )
        ]
    )
    b.tool_results(["5"]).next_step()
    b.assistant(tool_calls=[("bash", {"command": "python - <<'EOF'\nprint('scratch')\nEOF"})])
    b.tool_results(["scratch"]).next_step()
    b.assistant(text="The bug does not reproduce.").end_turn()
    wrote = wrote_lines(cx.Session.from_events(b.header, b.events))
    assert file_lines("reproduce_issue.py", wrote) == ["from app import add", "print(add(2, 3))"]
    assert not any("scratch" in ln for lines in wrote.values() for ln in lines)  # fed, not written
