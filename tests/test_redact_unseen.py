"""Structural checks for the blind held-out redaction corpus (no engine calls)."""

from __future__ import annotations

from collections import Counter

from ctxsdk.bench._redact_unseen import unseen

POS_FAMILIES = {"provider", "private-key", "connection-string", "jwt", "labelled"}
NEG_FAMILIES = {"placeholder", "hash", "uuid", "prose", "identifier"}


def test_deterministic() -> None:
    assert unseen() == unseen()


def test_positives_first_and_sizes() -> None:
    cases = unseen()
    flags = [c.positive for c in cases]
    n_pos = sum(flags)
    assert flags == [True] * n_pos + [False] * (len(cases) - n_pos)
    assert n_pos >= 130
    assert len(cases) - n_pos >= 130


def test_families_valid_and_covered() -> None:
    cases = unseen()
    pos = Counter(c.family for c in cases if c.positive)
    neg = Counter(c.family for c in cases if not c.positive)
    assert set(pos) == POS_FAMILIES
    assert set(neg) == NEG_FAMILIES
    assert pos["labelled"] >= 70
    assert pos["provider"] >= 20 and pos["connection-string"] >= 20
    assert pos["private-key"] >= 10 and pos["jwt"] >= 10
    assert all(v >= 20 for v in neg.values())
    assert all(c.shape for c in cases)


def test_secrets_are_unique_substrings() -> None:
    cases = unseen()
    for i, c in enumerate(cases):
        if not c.positive:
            assert c.secret is None
            continue
        assert c.secret, c.shape
        assert c.secret in c.text, c.shape
        for j, other in enumerate(cases):
            if j != i:
                assert c.secret not in other.text, (c.shape, other.shape)


def test_no_duplicate_texts() -> None:
    texts = [c.text for c in unseen()]
    assert len(texts) == len(set(texts))
