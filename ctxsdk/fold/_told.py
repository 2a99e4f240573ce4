"""Commands an agent told in its text instead of calling a tool (SWE-agent's thought and
action format): the message's last fenced block is the action, and the harness relays its
output as the next message. ``ToldActions`` turns each into the tool call it stands for, so
the state reads it as it reads any call (a file created or edited, a command that failed).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["ToldActions"]

_FENCED_LAST = re.compile(r"```(?:bash|sh|shell|console|zsh)?[ \t]*\n(.*?)\n?```\s*$", re.S)
# ``edit N:M`` then the new lines (``end_of_edit`` closes them; an empty body deletes lines)
_EDIT = re.compile(r"^edit\s+\d+(?::\d+)?[ \t]*\n(.*?)(?:^end_of_edit\s*)?\Z", re.S | re.M)


class ToldActions:
    """The action an assistant message told, held until the harness relays its output."""

    def __init__(self) -> None:
        self.held: str | None = None
        self.opened: str | None = None  # the file SWE-agent's editor has open

    def told(self, text: str) -> None:
        """An assistant message without tool calls: its last fenced block, if any."""
        m = _FENCED_LAST.search(text[-4000:])
        self.held = m.group(1).strip() if m and m.group(1).strip() else None

    def relayed(self) -> tuple[str, dict[str, Any]] | None:
        """The call the held action stands for, now that its output came back (once)."""
        action, self.held = self.held, None
        if not action:
            return None
        first, _, rest = action.partition(" ")
        target = rest.split("\n", 1)[0].strip().strip("\"'")
        if first in ("open", "create") and target:
            self.opened = target.split()[0]
            if first == "open":
                return "open", {"path": self.opened}
            return "create", {"path": self.opened, "content": ""}
        m = _EDIT.match(action)
        if m is not None:
            if self.opened is None:
                return None
            return "edit", {"path": self.opened, "text": m.group(1)}
        return "bash", {"command": action}
