"""How a long list prints: its first ``ROWS`` rows, then a line saying how many more there
are and which view holds them all."""

from __future__ import annotations

from .._display import esc

__all__ = ["GIST", "ROWS", "more", "more_html"]

ROWS = 200  # rows a list prints before it says how many more there are
GIST = 70  # characters of a message's gist in one row


def more(shown: int, total: int, where: str) -> str:
    return f"… {total - shown:,} more ({where} has them all)" if total > shown else ""


def more_html(shown: int, total: int, where: str) -> str:
    text = more(shown, total, where)
    return f"<div class='cx-muted'>{esc(text)}</div>" if text else ""
