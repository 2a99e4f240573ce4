"""Read the facts of a whole log: the one walk over events that the engines share.

``FactReader`` is fed raw DSH events in seq order (``Session.raw_events``) and returns the
facts each one gives; ``finish()`` adds what only the end of a log tells (outcome, open work,
errors never fixed). ``read_facts`` does the whole walk. The reader reads the log, not the
surface: a compacted session's early instructions are still in its events. Replacement events
(fold and assembly markers) are narrative over events already read and are skipped, as are
messages a plugin injected (their ``source`` is not the user) and harness prompt templates.
What the harness itself says is read apart from the user's words: the run's settings
(``_harness``: the model of each ``request/header``, a banner kept in an import's provenance,
Codex's environment context), the rules of a task template (``_rules``) and the errors it
relayed (``_relayed``).
Every text and tool argument is redacted before any rule reads it, so no fact, quote or key
holds a credential.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from .._redact import redact, redact_json, redaction_memo
from .._text import message_of
from .._text import message_text as _raw_text
from ._harness import RunSettings
from ._instruction_files import InstructionFiles, rule_file
from ._model import Fact, Facts
from ._relayed import RelayedErrors
from ._rules import template_rules
from ._sieve import once, sound
from ._templates import is_template
from ._text import closing_facts, text_facts
from ._tools import ToolFacts

__all__ = ["FactReader", "read_facts"]


def message_text(message: Any) -> str:
    """A message's text, redacted: no fact, quote or key ever holds a credential, whichever
    door (a memory, a merge block, a checkpoint) it later goes through."""
    return redact(_raw_text(message)).text


def _arguments(raw: Any) -> dict[str, Any]:
    """Tool-call arguments as a dict, every string redacted (a JSON string parsed; anything
    else kept as ``_raw``)."""
    if isinstance(raw, Mapping):
        return dict(redact_json(dict(raw)))
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except (ValueError, RecursionError):
            return {"_raw": redact(raw).text}
        if isinstance(parsed, dict):
            return dict(redact_json(parsed))
        return {"_raw": redact(raw).text}
    return {}


_CLOSING = 3  # how many of the last assistant texts may hold the outcome
_IMPORT = "ctxsdk/import"  # an importer's provenance record (``importers.IMPORT_EVENT``)
_BANNER = re.compile(r"^Aider v\d", re.M)  # a relayed startup banner, not a command's output


def _feeds(ev: Mapping[str, Any]) -> bool:
    """Append-origin or log-only: the events facts may be read from."""
    op = ev.get("surfaceOp")
    return op is None or op == "append"


class FactReader:
    """The facts of a log, event by event (see the module docstring)."""

    def __init__(
        self, session: str = "", *, harness: bool = False, rule_files: bool = False
    ) -> None:
        self.session = session
        # the run's settings and a template's rules (scope RUN_SCOPE): read only when asked,
        # until the engines tell a run's facts from the project's
        self.harness = harness
        self.tools = ToolFacts(session)
        self.run = RunSettings(session)
        self.relayed = RelayedErrors(session)
        # the rules of the project's agent files (AGENTS.md, CLAUDE.md …): read only when
        # asked, until every engine shows a file's rules as one item, not one per rule
        self.rule_files = rule_files
        self.files = InstructionFiles(session)
        self._rules: set[str] = set()  # template rules already read (a template repeats)
        # The last few assistant texts: a log often ends on "ready to submit" after the summary.
        self._closing: list[tuple[int, str]] = []
        self._last = ""  # the assistant's last text: what a user's reply answers

    def feed(self, ev: Mapping[str, Any]) -> list[Fact]:
        """The facts one event gives (a keyed one only with a value: ``_sieve.sound``)."""
        return [f for f in self._feed(ev) if sound(f) and (self.rule_files or not rule_file(f))]

    def _feed(self, ev: Mapping[str, Any]) -> list[Fact]:
        seq = ev.get("seq")
        etype = ev.get("type")
        if type(seq) is not int or not isinstance(etype, str) or not _feeds(ev):
            return []
        if etype == "user/message":
            return self._user(ev, seq)
        if etype == "assistant/message":
            return self._assistant(ev, seq)
        if etype == "tool/call":
            data = ev.get("data")
            if isinstance(data, Mapping):
                cid, name = data.get("callId"), data.get("name")
                if isinstance(cid, str) and isinstance(name, str):
                    args = _arguments(data.get("arguments"))
                    return self.tools.call(cid, name, args, seq) + self.files.call(
                        cid, name, args, seq
                    )
            return []
        if etype == "tool/result":
            return self._result(ev, seq)
        said = self._harness(etype, ev.get("data"), seq)  # kept for relayed errors' fixes
        return said if self.harness else []

    def _harness(self, etype: str, data: Any, seq: int) -> list[Fact]:
        """The run's settings an event states (a request header, a kept banner)."""
        if etype == "request/header" and isinstance(data, Mapping):
            header = data.get("header")
            return self.run.header(
                header.get("config") if isinstance(header, Mapping) else None, seq
            )
        if etype == _IMPORT and isinstance(data, Mapping):
            banner = data.get("banner")  # the banner lines an importer kept as provenance
            if isinstance(banner, list):
                return self.run.many((redact(b).text for b in banner if isinstance(b, str)), seq)
        return []  # system prompts, compaction summaries, markers: not the user's or the work's

    def _user(self, ev: Mapping[str, Any], seq: int) -> list[Fact]:
        msg = message_of(ev)
        if msg is None:
            return []
        source = msg.get("source")
        if source is not None and not (isinstance(source, dict) and source.get("kind") == "user"):
            return self._injected(msg, source, seq)
        out: list[Fact] = []
        for block in msg.get("content") or ():
            # An importer may carry a tool result in a user message (Claude Code does).
            if isinstance(block, dict) and block.get("type") == "tool-result":
                out += self._result_block(block, None, seq)
        text = message_text(msg)
        self.tools.user_text(text, seq)  # a typed /run command waits for its relayed output
        if text.strip() and not is_template(text):
            said = text_facts(text, role="user", seq=seq, session=self.session, previous=self._last)
            for f in said:
                if f.kind in ("instruction", "preference"):
                    self.files.user_rule(f.text)  # a file's same rule is not given again
            out += said
        if not self.harness:
            return out
        out += self.run.environment(text, seq)
        for rule in template_rules(text, seq=seq, session=self.session):
            if rule.text.casefold() not in self._rules:
                self._rules.add(rule.text.casefold())
                out.append(rule)
        return out

    def _injected(self, msg: Mapping[str, Any], source: Any, seq: int) -> list[Fact]:
        """A message the harness or a plugin put in the user's turn: never the user's voice,
        but it may state the run's settings, relay a command's output or an error."""
        text = message_text(msg)
        out = self.run.environment(text, seq) if self.harness else []
        if isinstance(source, dict) and source.get("form") == "instructions":
            out += self.files.injected(text, seq)  # Codex's AGENTS.md: the project's rules
        if not isinstance(source, dict) or source.get("form") != "relay":
            return out
        if _BANNER.search(text):
            banner = self.run.banner(text, seq)  # the model in force, for relayed errors
            out += banner if self.harness else []
        if source.get("error") is True:
            self.relayed.error(text, seq, self.run.model)
            return out
        # a harness relayed a command's output (SWE-agent, Aider /run): a tool result
        return out + self.tools.relay(text, seq)

    def _assistant(self, ev: Mapping[str, Any], seq: int) -> list[Fact]:
        msg = message_of(ev)
        if msg is None:
            return []
        out = self.relayed.model_call(seq, self.run.model)  # a reply: the model call worked
        text = message_text(msg)
        if text.strip():
            out += text_facts(text, role="assistant", seq=seq, session=self.session)
            self._closing = [*self._closing[-(_CLOSING - 1) :], (seq, text)]
            self._last = text
        calls = False
        for block in msg.get("content") or ():
            if isinstance(block, dict) and block.get("type") == "tool-call":
                calls = True
                cid, name = block.get("id"), block.get("name")
                if isinstance(cid, str) and isinstance(name, str):
                    args = _arguments(block.get("arguments"))
                    out += self.tools.call(cid, name, args, seq)
                    out += self.files.call(cid, name, args, seq)
        # a command told in the text (SWE-agent's fenced action) waits for a relayed output
        self.tools.text_action("" if calls else text, seq)
        return out

    def _result(self, ev: Mapping[str, Any], seq: int) -> list[Fact]:
        msg = message_of(ev)
        content = msg.get("content") if msg is not None else None
        if not isinstance(content, list):
            return []
        source = msg.get("source") if msg is not None else None
        fallback = source.get("callId") if isinstance(source, dict) else None
        out: list[Fact] = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool-result":
                out += self._result_block(block, fallback, seq)
        return out

    def _result_block(self, block: Mapping[str, Any], fallback: Any, seq: int) -> list[Fact]:
        cid = block.get("toolCallId")
        cid = cid if isinstance(cid, str) and cid else fallback
        is_error = block.get("isError") is True or block.get("is_error") is True
        cid, text = str(cid or f"seq-{seq}"), message_text(block)
        return self.tools.result(cid, text, is_error, seq) + self.files.result(
            cid, text, is_error, seq
        )

    def finish(self) -> list[Fact]:
        out: list[Fact] = []
        for seq, text in reversed(self._closing):
            found = closing_facts(text, seq=seq, session=self.session)
            if found:
                out += found
                break
        out += self.tools.finish()
        out += self.relayed.finish()
        out += self.files.finish() if self.rule_files else []
        return [f for f in out if sound(f)]


def read_facts(
    events: Iterable[Mapping[str, Any]],
    *,
    session: str = "",
    harness: bool = False,
    rule_files: bool = False,
) -> Facts:
    """The facts of a whole log (raw DSH events, e.g. ``Session.raw_events``), in seq order.
    ``harness``: also what the harness states for the run (its model and settings, a task
    template's rules; scope ``RUN_SCOPE``). ``rule_files``: also the rules of the project's
    agent files the log loads or writes (AGENTS.md, CLAUDE.md, CONVENTIONS.md …; scope
    ``PROJECT_SCOPE``, the file in ``rule_file``), at most ``MAX_RULES`` per file. A thing
    the log says twice is one fact, the repeat's seq in its ``evidence`` (``_sieve.once``).
    Pure and deterministic; never raises on odd events (they give nothing)."""
    ordered = sorted(
        (ev for ev in events if isinstance(ev, Mapping) and type(ev.get("seq")) is int),
        key=lambda ev: ev["seq"],
    )
    reader = FactReader(session, harness=harness, rule_files=rule_files)
    out: list[Fact] = []
    with redaction_memo():  # a text said again (a repeated block, a re-read file) is redacted once
        for ev in ordered:
            out += reader.feed(ev)
        out += reader.finish()
    return Facts(session, tuple(once(out)))  # a thing said twice is one fact
