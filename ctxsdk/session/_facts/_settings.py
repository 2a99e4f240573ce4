"""Settings: a named value with its unit and polarity, read from one sentence.

STUB: the settings owner replaces this.
"""

from __future__ import annotations

from ._model import Fact

__all__ = ["setting_facts"]


def setting_facts(sentence: str, *, role: str, seq: int, session: str, quote: str) -> list[Fact]:
    """The setting facts of one sentence (key, value, unit, polarity)."""
    return []
