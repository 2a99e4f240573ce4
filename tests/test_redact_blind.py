"""Structural checks of the blind redaction corpus (not a score: the corpus stays blind)."""

from ctxsdk.bench._redact_blind import blind

_POSITIVE = {"provider", "private-key", "connection-string", "jwt", "labelled"}
_NEGATIVE = {"placeholder", "hash", "uuid", "prose", "identifier"}


def test_deterministic() -> None:
    assert blind() == blind()


def test_positives_first_and_families_valid() -> None:
    cases = blind()
    flags = [c.positive for c in cases]
    assert flags == sorted(flags, reverse=True)
    for c in cases:
        assert c.shape and c.text
        if c.positive:
            assert c.family in _POSITIVE, c
        else:
            assert c.family in _NEGATIVE, c
            assert c.secret is None, c


def test_secret_is_substring() -> None:
    for c in blind():
        if c.positive:
            assert c.secret, c
            assert c.secret in c.text, c


def test_sizes() -> None:
    cases = blind()
    assert sum(c.positive for c in cases) >= 150
    assert sum(not c.positive for c in cases) >= 150
    for fam in _POSITIVE | _NEGATIVE:
        assert any(c.family == fam for c in cases), fam


def test_no_duplicate_texts() -> None:
    texts = [c.text for c in blind()]
    assert len(texts) == len(set(texts))
