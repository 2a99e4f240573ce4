"""Facts from the tool calls: project facts, commands with exit codes and test counts,
files read, created and edited, errors and the change that fixed them.

STUB: the kernel's owner replaces this.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._model import Fact

__all__ = ["ToolFacts"]


class ToolFacts:
    """The tool side of one log, fed calls and results in order."""

    def __init__(self, session: str) -> None:
        self.session = session

    def call(self, call_id: str, name: str, arguments: Mapping[str, Any], seq: int) -> list[Fact]:
        return []

    def result(self, call_id: str, text: str, is_error: bool, seq: int) -> list[Fact]:
        return []

    def finish(self) -> list[Fact]:
        return []
