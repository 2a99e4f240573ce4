"""One-off asks and standing rules among a user's imperatives.

An imperative asks for one piece of work ("make the blockquote font color the same as the p
color", "make the changes suggested in the readme", "rename game_2048.py to 2048.py")
unless it says how work is done beyond that piece:

- it opens with a verb of how to work: "use pnpm", "keep it in one file", "follow PEP 8",
  "only edit index.html", "stick to the stdlib", "leave the config alone", "leave docs for
  later";
- a verb that places or shapes things has a generic object (a bare plural, a kind):
  "put tests in tests/", "store sessions as JSONL", not "put the label in the box";
- it says when it holds: "always", "never", "every time", "from now on", "by default";
- it sends all the work somewhere: "make all the edits to the embedded style tag";
- one of its clauses is a rule: "suggest changes and make sure each sentence is on its own
  line", "add the route but don't touch the models", "refactor it without changing
  behaviour";
- its scope is a kind of thing or the whole work: "For numbered lists, pad …", "In tests,
  …", "… in this repo", "… everywhere".

A place, a comparison or a manner said of the edit itself ("in the tests", "to index.html",
"the same green as the border", "only using style", "instead of green") belongs to that
edit and does not make it a rule. A modal inside a question the sentence asks ("check if it
was deleted and whether we need to restore it") is no obligation (``embedded_question``).
Text in other scripts (Chinese, Russian) keeps the cue
words of ``_cues.RULE_VERB`` and ``_cues.SCOPE``.
"""

from __future__ import annotations

import re

from . import _cues as C
from ._prefilter import prefiltered

__all__ = ["embedded_question", "rule_imperative"]

_I = re.I

# Leading words an imperative may carry before its verb ("please also use …").
_OPEN = (
    r"^(?:please\s+|kindly\s+|pls\s+|let'?s\s+|now\s+)?"
    r"(?:(?:also|just|then|first|instead|so)[,\s]+)?"
)
# Verbs that say how work is done, whatever their object.
_HOW = re.compile(
    _OPEN + r"(?:use|keep|avoid|prefer|follow|ensure|stick|reuse|limit|restrict|pin|treat"
    r"|assume|only|preserve|stay|adhere|respect|default|make sure|be sure)\b"
    r"|" + _OPEN + r"leave\b.{0,60}\b(?:alone|as is|as-is|unchanged|untouched|intact|for later"
    r"|for now|out|until|to me|to the end)\b",
    _I,
)
# "use the read tool to read config.txt", "… exactly once": an instrument for this one piece
# of work, not a rule ("use pnpm to install packages" is one: its purpose is a kind of work)
_USE_TO = re.compile(_OPEN + r"use\s+[^,;:]{1,60}?\bto\s+(?P<purpose>[a-z][\w-]*\s+\S.*)$", _I)
_SPECIFIC = re.compile(
    r"^\S+\s+(?:(?:the|a|an|this|that|these|those|it|its|them|my|your|our|some|one|two"
    r"|three|\d+|exactly|only)\b|[\"'`/])|[\w-]\.[a-z]{1,5}\b|:|\bexactly\b",
    _I,
)
_ONCE = re.compile(r"\b(?:(?:exactly|just|only) once|once more|this time|right now)\b", _I)
# Verbs that place or shape things: a rule when their object is a kind ("put tests …").
_SHAPE = re.compile(
    _OPEN + r"(?:put|place|store|save|keep|track|write|name|format|wrap|return|pass|log"
    r"|raise|start|end|prefix|sort|indent)\s+"
    r"(?!(?:the|a|an|this|that|these|those|it|them|my|your|our|his|her|its|their|some|one"
    r"|two|three|\d+|all|every|each|any|another|more|out|up|down|over|back)\b)"
    r"[a-z][\w-]*(?<!ss)s\b",
    _I,
)
# All the work sent somewhere: "make all the edits to the style tag", "every change in src/".
_WORK_PLACE = re.compile(
    r"\b(?:all|every|each|any)\s+(?:(?:of\s+)?(?:the|your|my|our)\s+)?(?:edits?|changes?"
    r"|modifications?|code|commits?|work|new\s+\w+)\s+(?:go\s+|goes\s+)?"
    r"(?:to|in|into|inside|within|under|on)\b",
    _I,
)
# A clause of the sentence that is a rule of its own.
_CLAUSE = re.compile(
    r"(?:\b(?:and|but|then|while)\s+|[,;:–—]\s*|\s-\s)(?:please\s+)?(?:make sure|ensure"
    r"|be sure to|always|never|do not|don'?t|avoid|keep (?:it|them|things|everything)\b)\b"
    r"|\bwithout\s+(?:any\s+)?(?:changing|breaking|touching|modifying|removing|adding|using"
    r"|altering|affecting)\b",
    _I,
)
# A scope of a kind of thing or of the whole work: "for numbered lists", "in this repo".
_KIND = re.compile(
    r"\b[a-z][\w-]*[a-z](?<!ss)(?<!\bthis)(?<!\bits)(?<!\bhas)(?<!\bwas)(?<!\bis)s\b"
    r"|\b(?:all|every|each|any)\b|\b(?:repo|repository|project|codebase|session|conversation"
    r"|everything|anything)\b",
    _I,
)
_FILE = re.compile(r"[\w-]\.[a-z]{1,5}\b|/", _I)  # "In CONVENTIONS.md, …": one file
_WHOLE = re.compile(
    r"\b(?:in|across|for|throughout|within)\s+(?:this|the|our|all|every|each|any)\s+(?:repo"
    r"|repository|project|codebase|code base|session|conversation)s?\b"
    r"|\beverywhere\b|\bconsistently\b|\bthroughout\b|\bacross the board\b",
    _I,
)
# "check if it was deleted and whether we need to restore it": a modal in a question the
# sentence asks is no obligation
_EMBEDDED = re.compile(
    r"\b(?:whether|(?:check|see|find out|ask|know|verify|determine|tell me)\s+if)\b[^,;.]*", _I
)
_OTHER_SCRIPT = re.compile(r"[\u0400-\u04ff\u3400-\u9fff\uf900-\ufaff]")


def rule_imperative(s: str, body: str, lead: str) -> bool:
    """Whether the imperative ``body`` (sentence ``s``, after its scope lead ``lead``, ""
    when none) holds beyond the next step; see the module docstring."""
    if _OTHER_SCRIPT.search(body):
        return bool(lead or C.RULE_VERB.search(body) or C.SCOPE.search(s))
    why = C.REASON.search(s)
    head = s[: why.start()] if why else s  # "… since it runs every time" says no "when"
    if C.STANDING.search(head):
        return True
    if _HOW.match(body):
        use = _USE_TO.match(body)
        concrete = use is not None and bool(_SPECIFIC.search(use.group("purpose")))
        return not (concrete or _ONCE.search(head))
    if _SHAPE.match(body):
        return True
    if _WORK_PLACE.search(head) or _CLAUSE.search(head) or _WHOLE.search(head):
        return True
    return bool(lead) and bool(_KIND.search(lead)) and not _FILE.search(lead)


_HOW = prefiltered(_HOW)
_WORK_PLACE = prefiltered(_WORK_PLACE)
_CLAUSE = prefiltered(_CLAUSE)
_WHOLE = prefiltered(_WHOLE)


def embedded_question(s: str) -> str:
    """``s`` without its embedded questions ("… whether we need to restore it"), for the
    normative cues: a modal asked about is no obligation."""
    return _EMBEDDED.sub(" ", s) if "if" in s.lower() or "whether" in s.lower() else s
