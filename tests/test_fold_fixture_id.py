"""A log whose session id cannot name a bundle file (the harness's snapshot fixtures tokenise it
to ``{{sessionId}}``) still has a readable fold: status, search and repr work, and a fold that
would store a bundle is refused with the reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ctxsdk as cx
from ctxsdk._cli import main
from ctxsdk.errors import InvalidArgument
from ctxsdk.testing import LogBuilder


def _fixture_session(tmp_path: Path) -> cx.Session:
    b = LogBuilder(session_id="{{sessionId}}", runtime_context=None)
    for i in range(12):
        b.turn(f"Step {i}: look at module_{i}.py and report. " + "detail " * 200)
        b.assistant(text=f"Module {i} looks fine. " + "ok " * 200).end_turn()
    s = cx.Session.from_events(b.header, b.events)
    return cx.Session.open(s.save(tmp_path / "copy"))


def test_fold_views_of_a_fixture_id_session_do_not_raise(tmp_path: Path) -> None:
    f = cx.Fold(_fixture_session(tmp_path), store=tmp_path / "store", window=8192)
    assert "checkpoints now       none" in str(f.status())
    assert f.search("module_3") is not None
    assert repr(f).startswith("Fold(")


def test_a_fold_that_would_store_a_bundle_is_refused_with_the_reason(tmp_path: Path) -> None:
    f = cx.Fold(_fixture_session(tmp_path), store=tmp_path / "store", window=8192)
    with pytest.raises(InvalidArgument, match="cannot name a bundle file"):
        f.run(force=True)


def test_a_stripped_log_says_why_it_has_no_default_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a log whose seq/time were stripped, as the harness's snapshot fixtures are
    b = LogBuilder(session_id="stripped-1", runtime_context=None)
    b.turn("Say hi.").assistant(text="hi").end_turn()
    lines = [json.dumps(b.header)] + [
        json.dumps({k: v for k, v in e.items() if k not in ("seq", "time")}) for e in b.events
    ]
    log = tmp_path / "fixture.session.jsonl"
    log.write_text("\n".join(lines) + "\n")
    s = cx.Session.open(log)
    assert s.normalized and s.path is None
    with pytest.raises(InvalidArgument, match="read from a stripped log") as info:
        cx.Fold(s)
    assert "not read from a file" not in str(info.value)
    assert cx.Fold(s, store=tmp_path / "store").status() is not None
    assert main(["fold-status", str(log)]) == 2
    err = capsys.readouterr().err
    assert "read from a stripped log" in err and "--store DIR" in err
