"""How a slot line shows free text (a quote, a change a session made): redacted, on one
line, double quotes made single (the line's own quotes delimit it), and cut with … past a
limit. Redaction comes before the cut: a cut credential would no longer be recognised."""

from __future__ import annotations

from ..session import redact

__all__ = ["QUOTE_CHARS", "short"]

QUOTE_CHARS = 120
"""A quote longer than this is cut (with …): the value is the point, the quote only shows it."""


def short(text: str, limit: int = QUOTE_CHARS) -> str:
    """``text`` redacted, flattened to one line and cut to ``limit`` characters."""
    flat = " ".join(redact(text).text.split()).replace('"', "'")
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
