"""The fact kernel's per-text readings inside ``redaction_memo()``: a sentence read again
is answered from its first reading, the same as a fresh reading, and what a caller does
with the answer never changes a later one."""

from __future__ import annotations

from ctxsdk.session import Session, read_facts
from ctxsdk.session._facts._settings import parse_setting
from ctxsdk.session._facts._text import instruction_kind
from ctxsdk.session.kernel import redaction_memo

SENTENCES = [
    "Use pnpm, not npm.",
    "The request timeout is 30 seconds.",
    "Always run the tests before you commit.",
    "I prefer tabs for indentation in this repo.",
    "thanks!",
    "We decided to store sessions as JSONL because it appends cheaply.",
]


def test_memoized_readings_equal_fresh_ones() -> None:
    fresh = [
        (parse_setting(s), parse_setting(s, "assistant"), instruction_kind(s)) for s in SENTENCES
    ]
    with redaction_memo():
        for _ in range(2):  # the second pass is answered from the memo
            got = [
                (parse_setting(s), parse_setting(s, "assistant"), instruction_kind(s))
                for s in SENTENCES
            ]
            assert got == fresh
    assert any(f[0] for f in fresh)  # the sentences give settings, so the check bites
    assert any(f[2] for f in fresh)


def test_a_caller_changing_the_answer_changes_no_later_one() -> None:
    with redaction_memo():
        first = parse_setting("The request timeout is 30 seconds.")
        assert first
        first.clear()
        assert parse_setting("The request timeout is 30 seconds.") != []


def test_a_log_read_after_others_in_one_memo_reads_as_alone() -> None:
    said = "Use pnpm, not npm. Always run the tests first. The request timeout is 30 seconds."
    told = "I'll use pnpm. The `timeout` is 30 seconds. We decided to keep JSONL."
    log = [
        {"role": "user", "content": said},
        {"role": "assistant", "content": told},
        {"role": "user", "content": said + " Thanks."},
    ]
    # the same texts said by the other role first, then the log itself, in one memo block
    swapped = [
        {"role": "assistant" if m["role"] == "user" else "user", "content": m["content"]}
        for m in log
    ]
    s, other = Session.from_messages(log), Session.from_messages(swapped)
    with redaction_memo():
        read_facts(other.raw_events, session=other.id)
        shared = read_facts(s.raw_events, session=s.id)
    alone = read_facts(s.raw_events, session=s.id)
    assert shared == alone
    assert {f.source.role for f in alone} == {"user", "assistant"}
