"""The redaction corpus: secrets in the formats public secret scanners document, and negatives.

Every case is built at run time from pieces by a seeded generator, so no literal credential
is committed (push protection trips on them) and every run sees the same corpus. A positive
names its family and the exact secret substring that must not survive; a negative names its
family and must come out unchanged.

Families of positives: ``provider`` (vendor key shapes), ``private-key`` (PEM and OpenSSH
blocks), ``connection-string`` (URLs with a password), ``jwt``, ``labelled`` (assignments in
code, config, shell, JSON and YAML, English and Chinese labels). Families of negatives:
``placeholder``, ``hash``, ``uuid``, ``prose``, ``identifier``.
"""

from __future__ import annotations

from dataclasses import dataclass
__all__ = ["Case", "corpus", "negatives", "positives"]


@dataclass(frozen=True)
class Case:
    """One corpus text. ``secret`` is the substring that must be withheld (positives only)."""

    text: str
    family: str
    shape: str  # the documented format it follows, e.g. "github-pat", "yaml"
    positive: bool
    secret: str | None = None


def positives() -> list[Case]:
    """Every positive case (deterministic)."""
    return [c for c in corpus() if c.positive]


def negatives() -> list[Case]:
    """Every negative case (deterministic)."""
    return [c for c in corpus() if not c.positive]


def corpus() -> list[Case]:
    """The whole corpus, positives first (deterministic)."""
    return _build()


# -- generation ----------------------------------------------------------------------------
_ALNUM = "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0zC"


def _run(n: int, alphabet: str = _ALNUM, shift: int = 0) -> str:
    return "".join(alphabet[(i * 7 + shift) % len(alphabet)] for i in range(n))


def _j(*parts: str) -> str:
    return "".join(parts)


def _build() -> list[Case]:
    # A first, small corpus; the full generator replaces it.
    gh = _j("gh", "p_", _run(36))
    pw = "hunter2 with spaces!"
    return [
        Case(f"push with {gh} please", "provider", "github", True, gh),
        Case(f'password = "{pw}"', "labelled", "python", True, pw),
        Case("the token budget is 4000", "prose", "prose", False),
        Case("api_key = <your-key>", "placeholder", "angle", False),
    ]
