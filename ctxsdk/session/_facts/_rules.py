"""Rules inside a harness's task template: what the run was told, in the harness's words.

SWE-agent's and mini-swe-agent's templates wrap the user's task (``user_text`` unwraps it)
in numbered tips and requirements that hold for the whole run: "Please DO NOT run commands
in python or sage through the `-c` flag", "use the "-w" flag of nc … `nc -w5 127.0.0.1 80`",
"Your response MUST include EXACTLY ONE bash code block". ``template_rules`` reads those
items as instruction facts scoped to the run (``RUN_SCOPE``). Their source role is
``"system"``: the harness said them, not the user, so they weigh less than the user's own
words (Merge gives them no statement claim; Fold keeps only the user's as normative).

Only items with a normative or prohibitive cue are rules; format examples, example
responses, fenced code and the THOUGHT/response-format scaffolding are left out, and so is
the user's own task text inside the template.
"""

from __future__ import annotations

import re

from . import _cues as C
from ._model import QUOTE_MAX, RUN_SCOPE, Fact, FactSource
from ._prefilter import prefiltered
from ._templates import user_text

__all__ = ["template_rules"]

_MAX_RULES = 8  # a template's rules are few; more would be its manual
_TEXT_MAX = 200
# Blocks that show a format, never a rule: examples, demonstrations, fenced code.
_EXAMPLES = re.compile(
    r"<(format_example|example_response|response_example|example)\b[^>]*>.*?(?:</\1>|\Z)"
    r"|```.*?(?:```|\Z)",
    re.S | re.I,
)
# One item: a numbered or bulleted line and its continuation lines.
_MARK = r"[ \t]*(?:\d{1,2}[.)]|[-*•])[ \t]+"
_ITEM = re.compile(rf"^{_MARK}(.+(?:\n(?!{_MARK}|\s*$|#).+)*)", re.M)
# The response-format scaffolding: how to lay out a reply, not how to do the work.
_SCAFFOLD = re.compile(
    r"\bTHOUGHT\b|\bDISCUSSION\b|format_example|example response|INCORRECT response"
    r"|\bsubmit\b.*\bcommand\b",
    re.I,
)
_STRONG = re.compile(r"\b(?:DO NOT|MUST|NEVER|ONLY|ALWAYS|EXACTLY|CANNOT|AVOID|IMPORTANT)\b")
_LEAD = re.compile(r"^(?:\*\*)?[A-Z][\w ]{0,30}:(?:\*\*)?\s+")  # "MODIFY: …", "**Note:** …"


def template_rules(text: str, *, seq: int, session: str) -> list[Fact]:
    """The rules a harness template states for the run (see the module docstring); ``[]``
    for a message that is not a template or holds none."""
    try:
        return _rules(text, seq, session)
    except Exception:  # never raise on odd input: it gives nothing
        return []


def _rules(text: str, seq: int, session: str) -> list[Fact]:
    if not isinstance(text, str) or not text.strip():
        return []
    inner = user_text(text)
    if inner is not None and inner == text.strip():
        return []  # the user's own message, no template around it
    body = text.replace(inner, "\n", 1) if inner else text
    body = _EXAMPLES.sub("\n", body)
    out: list[Fact] = []
    seen: set[str] = set()
    for m in _ITEM.finditer(body):
        item = " ".join(m.group(1).split())
        rule = _rule(item)
        if rule is None or rule.casefold() in seen:
            continue
        seen.add(rule.casefold())
        quote = m.group(0).strip()[:QUOTE_MAX]
        src = FactSource(session, seq, "system", quote)
        out.append(Fact(kind="instruction", text=rule, source=src, scope=RUN_SCOPE))
        if len(out) >= _MAX_RULES:
            break
    return out


def _rule(item: str) -> str | None:
    """The item as a rule line, or None when it is no rule (a step, a description, the
    response format)."""
    if len(item) < 8 or _SCAFFOLD.search(item) or C.NOTE.match(item):
        return None  # a note ("remember that the container is public") is information
    said = _LEAD.sub("", item, count=1)
    first = re.split(r"(?<=[.!])\s+(?=[A-Z])", said, maxsplit=1)[0]
    cue = (
        C.PROHIBITION.search(said)
        or C.NORMATIVE.search(first)
        or (_STRONG.search(said) and C.IMPERATIVE.search(said))
    )
    if cue is None and not _STRONG.search(item):
        return None
    if cue is None and not (C.PROHIBITION.search(item) or C.NORMATIVE.search(item)):
        return None
    return item if len(item) <= _TEXT_MAX else item[: _TEXT_MAX - 1] + "…"


# the tables most sentences hold no word of: a test of their literal words first
# (``_prefilter``: the same answers)
_SCAFFOLD = prefiltered(_SCAFFOLD)
