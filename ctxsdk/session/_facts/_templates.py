"""Harness prompt templates and injected context: text that is not the user's own voice.

STUB: the kernel's owner fills this in from real logs.
"""

from __future__ import annotations

__all__ = ["is_template"]


def is_template(text: str) -> bool:
    """Whether a user-role text is a harness template or injected context, not the user."""
    return False
