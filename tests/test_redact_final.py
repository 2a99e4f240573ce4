"""ctxsdk.bench._redact_final: structural checks of the final blind redaction corpus.

Only the corpus's shape is checked here (deterministic, valid families, each positive's secret in
its text, enough cases, no duplicate texts); how the engine scores on it is the bench's business.
"""

from __future__ import annotations

from collections import Counter

from ctxsdk.bench._redact_corpus import Case
from ctxsdk.bench._redact_final import final

POSITIVE_FAMILIES = {"provider", "private-key", "connection-string", "jwt", "labelled"}
NEGATIVE_FAMILIES = {"placeholder", "hash", "uuid", "prose", "identifier"}


def test_deterministic() -> None:
    assert final() == final()


def test_cases_are_cases() -> None:
    assert all(isinstance(c, Case) for c in final())


def test_positives_first() -> None:
    flags = [c.positive for c in final()]
    first_negative = flags.index(False)
    assert all(flags[:first_negative])
    assert not any(flags[first_negative:])


def test_families_valid() -> None:
    for c in final():
        families = POSITIVE_FAMILIES if c.positive else NEGATIVE_FAMILIES
        assert c.family in families, (c.family, c.shape)
        assert c.shape


def test_every_positive_secret_is_in_its_text() -> None:
    for c in final():
        if c.positive:
            assert c.secret, c.shape
            assert c.secret in c.text, c.shape
        else:
            assert c.secret is None, c.shape


def test_no_secret_appears_in_another_case() -> None:
    cases = final()
    secrets = [(c.shape, c.secret) for c in cases if c.positive and c.secret]
    for shape, secret in secrets:
        holders = [c.shape for c in cases if secret in c.text]
        assert holders == [shape], (shape, holders)


def test_sizes() -> None:
    cases = final()
    positives = [c for c in cases if c.positive]
    negatives = [c for c in cases if not c.positive]
    assert len(positives) >= 150
    assert len(negatives) >= 150
    per_family = Counter(c.family for c in cases)
    for family in POSITIVE_FAMILIES | NEGATIVE_FAMILIES:
        assert per_family[family] >= 20, family


def test_no_duplicate_texts() -> None:
    texts = [c.text for c in final()]
    assert len(texts) == len(set(texts))
