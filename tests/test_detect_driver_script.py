"""A harness scenario's scripted input (``<scenario>.input.json``) is refused as no session, and
the refusal points at the session log it drove."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ctxsdk as cx
from ctxsdk.errors import ImportFormatError

_STEPS = {"steps": [{"op": "initialize"}, {"op": "newSession"}, {"op": "prompt", "text": "Hi."}]}


def test_scripted_input_names_the_session_it_drove(tmp_path: Path) -> None:
    script = tmp_path / "text-turn.input.json"
    script.write_text(json.dumps(_STEPS))
    (tmp_path / "text-turn.session.jsonl").write_text("{}\n")
    with pytest.raises(ImportFormatError) as info:
        cx.Session.open_any(script)
    msg = str(info.value)
    assert "scripted input" in msg
    assert "open the session it drove, text-turn.session.jsonl" in msg


def test_scripted_input_without_its_log_still_says_what_it_is(tmp_path: Path) -> None:
    script = tmp_path / "alone.input.json"
    script.write_text(json.dumps(_STEPS))
    with pytest.raises(ImportFormatError, match="scripted input") as info:
        cx.Session.open_any(script)
    assert "session it drove" not in str(info.value)


def test_other_unknown_json_gets_no_script_hint(tmp_path: Path) -> None:
    p = tmp_path / "x.json"
    p.write_text(json.dumps({"steps": [1, 2]}))
    with pytest.raises(ImportFormatError) as info:
        cx.Session.open_any(p)
    assert "scripted input" not in str(info.value)
