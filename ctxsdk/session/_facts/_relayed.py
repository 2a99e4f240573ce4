"""Errors a harness relayed into the conversation: a failed model call is an error met.

An importer marks such a relay ``source.error`` (Aider's "litellm.BadRequestError: … is not
a valid model ID", "AuthenticationError … Incorrect API key provided", "RateLimitError …
429 … Quota exceeded"). ``RelayedErrors`` makes each an error fact whose text is its first
meaningful error line (a traceback's final exception line; a provider's JSON error body read
down to its code and message), redacted as every kernel text is. The error is closed by the
next successful model call (the next assistant message): its ``fix`` is the model switch
made in between, if the model changed, else none ("worked again with no change"); an error
never followed by a successful call is "still failing at the end". The same error line met
again before it closed is one error, the later seqs its evidence.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from ._model import QUOTE_MAX, Fact, FactSource

__all__ = ["RelayedErrors", "error_line"]

_LINE_MAX = 240
# An exception line: "litellm.RateLimitError: …", "TypeError: …", "Error: …".
_EXC = re.compile(r"^\s*(?:[A-Za-z_][\w.]*(?:Error|Exception)\b|Error\b)[^\n]*", re.M)
# A provider's error body inside the line (JSON, often a bytes repr with escaped newlines).
_BODY = re.compile(r"""\s*-\s*(?:b['"])?\[?\{.*""", re.S)
_CODE = re.compile(r'"code"\s*:\s*"?(\d{3})')
_MESSAGE = re.compile(r'"message"\s*:\s*"((?:[^"\\]|\\.)*)"')


def error_line(text: str) -> str | None:
    """The first meaningful error line of a relayed text, or None when it holds none."""
    lines = [m.group(0).strip() for m in _EXC.finditer(text or "")]
    if not lines:
        return None
    first = lines[0]
    if re.match(r"\s*Traceback ", text or "") and len(lines) > 1:
        first = lines[-1]  # a traceback names its error last
    return _readable(first)


def _readable(line: str) -> str:
    """``line`` with a provider's JSON error body read down to "<code>: <message>"."""
    body = _BODY.search(line)
    if body is not None:
        msg = _MESSAGE.search(body.group(0))
        if msg is not None:
            said = _unescape(msg.group(1))
            code = _CODE.search(body.group(0))
            head = line[: body.start()].rstrip(" -")
            line = f"{head} - {code.group(1) + ': ' if code else ''}{said}"
    line = " ".join(line.split())
    return line if len(line) <= _LINE_MAX else line[: _LINE_MAX - 1] + "…"


def _unescape(s: str) -> str:
    try:
        out = json.loads(f'"{s}"')
    except ValueError:
        return s
    return out if isinstance(out, str) else s


@dataclass(slots=True)
class _Met:
    seq: int
    line: str
    quote: str
    model: str | None
    fails: list[int] = field(default_factory=list)


class RelayedErrors:
    """The relayed errors of one log, fed in order (see the module docstring)."""

    def __init__(self, session: str) -> None:
        self.session = session
        self._open: list[_Met] = []

    def error(self, text: str, seq: int, model: str | None) -> None:
        """A relayed error report at ``seq``, met while ``model`` was in force."""
        line = error_line(text)
        if line is None:
            return
        for met in self._open:
            if met.line == line:
                met.fails.append(seq)
                return
        at = (text or "").find(line.split(":", 1)[0])
        quote = (text[at:] if at >= 0 else text).strip()[:QUOTE_MAX]
        self._open.append(_Met(seq, line, quote, model))

    def model_call(self, seq: int, model: str | None) -> list[Fact]:
        """A successful model call at ``seq`` (an assistant message) with ``model``: the
        errors met before it are closed."""
        got = [self._fact(met, seq, model) for met in self._open]
        self._open = []
        return got

    def finish(self) -> list[Fact]:
        got = [self._fact(met, None, None) for met in self._open]
        self._open = []
        return got

    def _fact(self, met: _Met, ok: int | None, model: str | None) -> Fact:
        src = FactSource(self.session, met.seq, "tool", met.quote)
        evidence = (*met.fails, *(() if ok is None else (ok,)))
        if ok is None:
            text = f"{met.line} (still failing at the end)"
            return Fact(kind="error", text=text, source=src, evidence=tuple(evidence))
        switched = model is not None and model != met.model
        fix = f"switched the model to {model}" if switched else None
        text = f"{met.line} — " + (
            f"fixed by switching the model to {model}"
            if switched
            else "the next model call worked with no change in between"
        )
        return Fact(
            kind="error",
            text=text,
            source=src,
            fix=fix,
            reason=f"then a model call succeeded at #{ok}",
            evidence=tuple(evidence),
        )
