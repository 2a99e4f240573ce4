"""Facts from what the user and the assistant say: instructions, preferences, decisions,
settings, outcome and open work.

STUB: the kernel's owner replaces this.
"""

from __future__ import annotations

from ._model import Fact

__all__ = ["closing_facts", "text_facts"]


def text_facts(text: str, *, role: str, seq: int, session: str) -> list[Fact]:
    """The facts of one message's text (``role`` "user" or "assistant")."""
    return []


def closing_facts(text: str, *, seq: int, session: str) -> list[Fact]:
    """Outcome and open work, from the last assistant text of a log."""
    return []
