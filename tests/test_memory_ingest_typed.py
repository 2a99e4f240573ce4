"""Ingest types a session's messages in one validation before looking each up: the same
candidates as looking each up alone, also when that one validation fails."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

import ctxsdk as cx
from ctxsdk.bench._memory_engine import long_session
from ctxsdk.errors import SessionFormatError
from ctxsdk.memory._ingest import extract, observations

NOW = datetime(2026, 12, 6, tzinfo=UTC)


def _read(session: cx.Session) -> tuple[object, ...]:
    ex = extract(session, now=NOW)
    return (ex.candidates, ex.dropped, observations(session))


def test_typed_at_once_reads_what_one_by_one_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    batched = _read(long_session(120))

    def fails(self: cx.Session, *, repair: bool = False) -> list[object]:
        raise SessionFormatError("a message that does not validate", seq=3)

    monkeypatch.setattr(cx.Session, "messages", fails)
    alone = _read(long_session(120))
    assert batched == alone
    assert len(batched[0]) > 0 and len(batched[2]) > 0


def test_messages_are_typed_once_and_kept() -> None:
    session = long_session(40)
    extract(session, now=NOW)
    typed = session.messages()
    seqs = session.message_seqs()
    assert [session.message_at(s) for s in seqs] == typed
    assert all(session.message_at(s) is m for s, m in zip(seqs, typed, strict=True))
