"""Redaction answered from a memo (one ingest reads a text at several doors) and the
door's candidate screening: the same texts and counts as a redaction made afresh.

Credential-shaped fixtures are assembled at runtime from pieces (no literal token shape is
committed).
"""

from __future__ import annotations

from collections import Counter

import pytest

from ctxsdk.errors import MemoryRefused
from ctxsdk.memory._door import admit_candidate, screen
from ctxsdk.memory._model import Candidate, Source
from ctxsdk.session import redact
from ctxsdk.session._redact import _MEMO, redaction_memo
from ctxsdk.session.kernel import REDACTION_KINDS, redact_message


def _run(n: int, shift: int = 0) -> str:
    alphabet = "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0z"
    return "".join(alphabet[(i * 7 + shift) % len(alphabet)] for i in range(n))


OPENAI = "s" + "k-" + _run(40)
GITHUB = "gh" + "p_" + _run(36, 3)
AWS = "AK" + "IA" + "".join("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[i * 5 % 36] for i in range(16))

TEXTS = [
    "nothing secret here, just the token budget of 4096",
    f"export OPENAI_API_KEY={OPENAI}",
    f"aws {AWS} then github {GITHUB} and {OPENAI} again",
    f"password = 'hunter2 with spaces!' and {GITHUB}",
    "",
    "[REDACTED:openai] was already withheld",
]


def test_memo_gives_the_same_redactions_and_counts() -> None:
    fresh = [redact(t) for t in TEXTS]
    with redaction_memo():
        first = [redact(t) for t in TEXTS]
        again = [redact(t) for t in TEXTS]  # answered from the memo
    assert first == fresh and again == fresh
    for got, want in zip(again, fresh, strict=True):
        assert list(got.counts.items()) == list(want.counts.items())  # REDACTION_KINDS order
    assert any(r.withheld for r in fresh) and not fresh[0].withheld


def test_memo_counts_a_repeated_text_each_time_in_a_message() -> None:
    text = TEXTS[2]
    message = {"role": "user", "content": [{"type": "text", "text": text}] * 3}
    want = redact_message(message)
    with redaction_memo():
        got = redact_message(message)
    assert got == want
    assert got[1] == Counter({k: 3 * n for k, n in redact(text).counts.items()})
    assert list(got[1]) == [k for k in REDACTION_KINDS if k in got[1]]


def test_memo_ends_with_its_outermost_block() -> None:
    assert _MEMO.get() is None
    with redaction_memo():
        outer = _MEMO.get()
        redact(TEXTS[1])
        with redaction_memo():
            assert _MEMO.get() is outer  # nested blocks share it
        assert outer is not None and TEXTS[1] in outer
    assert _MEMO.get() is None


def test_counts_follow_the_kinds_order_whatever_was_found_first() -> None:
    red = redact(f"{GITHUB} {OPENAI} {AWS}")
    assert list(red.counts) == [k for k in REDACTION_KINDS if k in red.counts]
    assert set(red.counts) >= {"github", "openai", "aws-access-key"}
    assert not redact("plain words").counts


def test_candidate_text_and_quote_alike_are_redacted_both() -> None:
    text = f"deploy with key {OPENAI} to staging"
    cand = Candidate("observation", text, text, Source("s1", 3, text, "rule"))
    got = admit_candidate(cand)
    assert OPENAI not in got.text and OPENAI not in got.source.quote
    assert got.text == got.source.quote == got.name == screen(text).text
    assert "[REDACTED:openai]" in got.text


def test_candidate_whose_quote_is_only_a_secret_is_refused_naming_the_quote() -> None:
    cand = Candidate("observation", "deploy notes", "deploy notes", Source("s1", 3, OPENAI, "rule"))
    with pytest.raises(MemoryRefused, match="quote"):
        admit_candidate(cand)


def test_sentences_in_a_memo_are_the_same_and_a_fresh_list_each_time() -> None:
    from ctxsdk.session._facts._sentences import sentence_spans

    text = "Use pnpm, not npm. The `a.b` file is read first! Then run `make test`.\n\n- one item"
    want = sentence_spans(text)
    with redaction_memo():
        first = sentence_spans(text)
        first.insert(0, first[-1])  # a caller may change its list (text_facts inserts a title)
        again = sentence_spans(text)
    assert again == want and len(want) >= 3
    assert again is not first
