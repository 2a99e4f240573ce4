"""The held-out redaction corpus is well formed (structure only: it never runs the engine).

What the engine scores on it is the bench's business; these tests only hold the corpus to its
own promises: the same cases every call, positives first, every positive's secret inside its
text, families from the fixed lists, enough cases, no text twice.
"""

from __future__ import annotations

from collections import Counter

from ctxsdk.bench._redact_holdout import holdout

POSITIVE_FAMILIES = {"provider", "private-key", "connection-string", "jwt", "labelled"}
NEGATIVE_FAMILIES = {"placeholder", "hash", "uuid", "prose", "identifier"}


def test_deterministic() -> None:
    assert holdout() == holdout()


def test_positives_come_first() -> None:
    flags = [c.positive for c in holdout()]
    first_negative = flags.index(False)
    assert all(flags[:first_negative]) and not any(flags[first_negative:])


def test_every_positive_secret_is_in_its_text() -> None:
    for case in holdout():
        if case.positive:
            assert case.secret, case
            assert case.secret in case.text, case.shape
        else:
            assert case.secret is None, case.shape


def test_families_and_shapes_are_valid() -> None:
    for case in holdout():
        allowed = POSITIVE_FAMILIES if case.positive else NEGATIVE_FAMILIES
        assert case.family in allowed, (case.family, case.shape)
        assert case.shape and case.shape == case.shape.strip(), case


def test_counts() -> None:
    cases = holdout()
    positives = [c for c in cases if c.positive]
    negatives = [c for c in cases if not c.positive]
    assert len(positives) >= 200
    assert len(negatives) >= 150
    families = Counter(c.family for c in cases)
    assert set(families) == POSITIVE_FAMILIES | NEGATIVE_FAMILIES
    providers = {c.shape for c in positives if c.family == "provider"}
    assert len(providers) >= 40


def test_no_duplicate_texts() -> None:
    texts = [c.text for c in holdout()]
    assert len(texts) == len(set(texts))
