"""Session.open on another agent's log says which importer reads it (and the CLI, which command)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ctxsdk as cx
from ctxsdk._cli import main
from ctxsdk.errors import SessionFormatError

_CLAUDE = [
    {"type": "file-history-snapshot", "messageId": "m1", "snapshot": {}, "isSnapshotUpdate": False},
    {
        "parentUuid": None,
        "isSidechain": False,
        "type": "user",
        "sessionId": "s-1",
        "uuid": "u1",
        "timestamp": "2026-02-10T21:11:56.906Z",
        "cwd": "/home/dev/app",
        "message": {"role": "user", "content": "the server does not start"},
    },
]


def _claude_log(tmp_path: Path) -> Path:
    p = tmp_path / "chat.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in _CLAUDE), encoding="utf-8")
    return p


def test_open_names_the_importer_of_a_claude_code_log(tmp_path: Path) -> None:
    p = _claude_log(tmp_path)
    with pytest.raises(SessionFormatError) as info:
        cx.Session.open(p)
    assert info.value.line == 1
    assert "claude-code log" in str(info.value)
    assert "Session.from_claude_code(path)" in str(info.value)
    assert cx.Session.open_any(p).messages()  # the named way does read it


def test_open_names_the_importer_of_an_aider_history(tmp_path: Path) -> None:
    p = tmp_path / ".aider.chat.history.md"
    p.write_text("\n# aider chat started at 2025-01-02 10:00:00\n\n#### fix it\n\nDone.\n")
    with pytest.raises(SessionFormatError, match=r"Session\.from_aider\(path\)"):
        cx.Session.open(p)


def test_a_broken_dsh_header_gets_no_import_hint(tmp_path: Path) -> None:
    p = tmp_path / "session.jsonl"
    p.write_text(json.dumps({"type": "session", "version": 9, "id": "x"}) + "\n")
    with pytest.raises(SessionFormatError) as info:
        cx.Session.open(p)
    assert "import it" not in str(info.value)


def test_cli_show_points_at_ctxsdk_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = _claude_log(tmp_path)
    assert main(["show", str(p)]) == 2
    err = capsys.readouterr().err
    assert "claude-code log" in err
    assert "`ctxsdk import PATH -o DIR`" in err
    assert "Session.from_" not in err


def _scripted_input(tmp_path: Path, with_log: bool) -> Path:
    p = tmp_path / "turn.input.json"
    steps = {"steps": [{"op": "prompt", "text": "hello"}, {"op": "wait"}]}
    p.write_text(json.dumps(steps, indent=2), encoding="utf-8")
    if with_log:
        (tmp_path / "turn.session.jsonl").write_text("{}\n", encoding="utf-8")
    return p


@pytest.mark.parametrize("with_log", [True, False])
def test_open_says_a_scripted_input_drove_a_session(tmp_path: Path, with_log: bool) -> None:
    p = _scripted_input(tmp_path, with_log)
    with pytest.raises(SessionFormatError) as info:
        cx.Session.open(p)
    text = str(info.value)
    assert info.value.line == 1
    assert "scripted input" in text
    assert ("turn.session.jsonl" in text) is with_log


def test_cli_show_of_a_scripted_input_names_the_log_it_drove(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = _scripted_input(tmp_path, True)
    assert main(["show", str(p)]) == 2
    err = capsys.readouterr().err
    assert "turn.session.jsonl" in err
    assert "Session.open" not in err
