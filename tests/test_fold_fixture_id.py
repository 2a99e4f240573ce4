"""A log whose session id cannot name a bundle file (the harness's snapshot fixtures tokenise it
to ``{{sessionId}}``) still has a readable fold: status, search and repr work, and a fold that
would store a bundle is refused with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

import ctxsdk as cx
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
