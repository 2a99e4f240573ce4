"""What a harness states about the run: the model and the run's settings, as setting facts.

These are not the user's words. Their source role is ``"tool"``, as for facts read from a
tool call, so Merge weighs them as verified by the harness rather than stated by the user;
their scope is ``RUN_SCOPE``: another session's run may use another model without
contradicting this one.

- the model: each ``request/header`` event's ``config.model`` (key ``model``; a change
  supersedes, an unchanged value repeats nothing, ``unknown`` says nothing);
- Aider's startup banner ("Model: X with diff edit format", "Main model: X with … edit
  format", "Weak model: Y", "Editor model: Z"), wherever its text is reachable: kept in an
  import's provenance (``banner``) or relayed in a harness message; the edit format is
  said in the model's fact, not a fact of its own (it changes with the model);
- Codex's ``<environment_context>`` (approval policy, sandbox mode, network access, shell;
  its cwd is the session header's already).

``RunSettings`` also knows the model in force at any point, which relayed errors use to
tell whether switching the model is what made a failing call work.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ._model import QUOTE_MAX, RUN_SCOPE, Fact, FactSource

__all__ = ["RunSettings", "banner_lines", "run_value"]

_BANNER = re.compile(
    r"^(?P<who>Main |Weak |Editor )?[Mm]odel: (?P<model>\S+)"
    r"(?: with (?P<format>[\w-]+) edit format)?",
    re.M,
)
_ENV_BLOCK = re.compile(r"<environment_context>(.*?)(?:</environment_context>|\Z)", re.S)
_ENV_FIELD = re.compile(
    r"<(approval_policy|sandbox_mode|network_access|shell)>\s*([^<\n]{1,80}?)\s*</\1>"
)
_UNKNOWN = frozenset({"", "unknown", "none", "null"})


def banner_lines(text: str) -> list[str]:
    """The lines of ``text`` that state the run's models (Aider's banner)."""
    return [m.group(0) for m in _BANNER.finditer(text or "")]


class RunSettings:
    """The run's settings as the harness states them, fed in log order."""

    def __init__(self, session: str) -> None:
        self.session = session
        self._said: dict[str, str] = {}  # key -> the value last stated
        self.model: str | None = None  # the model in force

    def header(self, config: object, seq: int) -> list[Fact]:
        """A ``request/header`` event's ``config``: the model the next call goes to."""
        model = config.get("model") if isinstance(config, dict) else None
        if not isinstance(model, str) or model.strip().lower() in _UNKNOWN:
            return []
        return self._state("model", model.strip(), seq, f"model: {model.strip()}")

    def banner(self, text: str, seq: int) -> list[Fact]:
        """Aider's banner lines in ``text`` (a provenance record's kept lines, a relay)."""
        out: list[Fact] = []
        for m in _BANNER.finditer(text or ""):
            who = (m.group("who") or "").strip().lower()
            key = f"{who} model" if who in ("weak", "editor") else "model"
            how = f" ({m.group('format')} edit format)" if m.group("format") else ""
            out += self._state(key, m.group("model"), seq, m.group(0), how)
        return out

    def environment(self, text: str, seq: int) -> list[Fact]:
        """Codex's ``<environment_context>`` block in an injected message."""
        out: list[Fact] = []
        for block in _ENV_BLOCK.finditer(text or ""):
            for m in _ENV_FIELD.finditer(block.group(1)):
                key = m.group(1).replace("_", " ")
                out += self._state(key, m.group(2), seq, m.group(0))
        return out

    def many(self, texts: Iterable[str], seq: int) -> list[Fact]:
        return [f for t in texts for f in self.banner(t, seq)]

    def _state(self, key: str, value: str, seq: int, quote: str, how: str = "") -> list[Fact]:
        if key == "model":
            self.model = value
        if value.lower() in _UNKNOWN or self._said.get(key) == value:
            return []  # the banner of every restart repeats it: only a change is news
        self._said[key] = value
        src = FactSource(self.session, seq, "tool", quote[:QUOTE_MAX])
        text = f"{key} = {value}{how}"
        return [Fact(kind="setting", text=text, source=src, key=key, value=value, scope=RUN_SCOPE)]


def run_value(fact: Fact) -> str | None:
    """A run setting's value as the harness said it, with what qualifies it (Aider's edit
    format with its model: ``X (diff edit format)``, written into the fact's text by
    ``RunSettings``); None for any other fact."""
    if fact.kind != "setting" or fact.scope != RUN_SCOPE or not fact.value:
        return None
    said = fact.text.partition(" = ")[2]
    return said if said.startswith(fact.value) else None
