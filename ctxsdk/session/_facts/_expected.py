"""What the code should do: a requirement of the code, not a rule of how the agent works.

A bug report or a user names a piece of code, a command, a page or an output and says how
it should behave: "model_to_dict() should return an empty dict for an empty list of
fields", "'qop-options' directive should be quoted with double quotes", "the calculated
number should never be 0", "the list should persist in localStorage", "this should be
changed to return dict(attrs)", "(1,) is rendered as (1), but should keep the comma",
"… which should not happen". The sentence holds a rule's modal, but its subject is the
code, not whoever does the work: it says what the task requires of the code, not how the
agent is to work. Its kind (``requirement``) follows what it names:

- a piece of code by its name (a call, a dotted or snake_case name, a quoted token, a
  literal: "model_to_dict() should return {}", "(1,) … should keep the comma"), or what
  the code does now pointed back at ("the subplot remains visible which should not
  happen"), is a ``project`` fact: what that code should do, the bug an issue reports;
- anything else (what is being built, an API it should use, a value: "this should be a
  client-only app", "the list should persist in localStorage", "sessionOrchestrator must not
  be agent specific") is a ``decision`` of the design in hand (``_statements``).

A subject that is a person ("you should", "we should always clip …"), a kind of thing in
general ("functions should have docstrings", "tests must pass": plural, a rule for all of
them), a thing of the work rather than of the code (a file, a commit, a branch, a test) or
no subject at all ("should use tabs") leaves the sentence what it was; so does a sentence
that opens with an order ("don't …, the function should …").
"""

from __future__ import annotations

import re

from . import _cues as C
from ._model import FactKind
from ._prefilter import prefiltered

__all__ = ["MODAL", "requirement"]

# The first modal of the sentence: what comes before it is its subject.
MODAL = re.compile(r"\b(?:should|must|shall)(?:n'?t)?\b|\bought to\b", re.I)
# Where a clause starts: its subject is the words after the last of these before the modal.
_CLAUSE = re.compile(
    r"[,;:]|\s[-–—]\s|\b(?:but|and|or|so|because|since|however|then|otherwise|whereas"
    r"|although|though|in which case)\b",
    re.I,
)
# The one doing the work, or whoever it is done for: a rule of work, not of the code.
_PERSON = re.compile(
    r"\b(?:you|your|we|our|us|i|my|me|they|their|he|she|someone|anyone|everyone|everybody"
    r"|nobody|users?|agents?|assistant|claude|team|developers?|contributors?|reviewers?"
    r"|people|maintainers?)\b",
    re.I,
)
# A name of code: a call, a backticked or quoted token, a dotted or snake_case name, a
# command-line flag, a literal ("(1,)", "[]", "{}").
_NAMED = re.compile(
    r"\w\(|`[^`\s][^`]*`|'[^'\s]+'|\"[^\"\s]+\"|\b(?!e\.g|i\.e)[A-Za-z_]\w*\.[A-Za-z_]\w*\b"
    r"|\b[a-z]\w*_\w+|(?:^|\s)--?[a-z][\w-]*|[(\[{][\d'\",)\]}]"
)
# An API's name (camelCase, PascalCase with an inner capital): a subject of code too, but
# a requirement names the API it wants ("persist in localStorage") as often as the bug
_API = re.compile(r"\b[a-z]+[A-Z]\w*|\b[A-Z][a-z]+[A-Z]\w*")
# A thing of the code, a page or a program's output, as the subject's head (singular: the
# plural states a rule for every such thing). Files, tests, commits and the code as a whole
# are left out: "the code should be formatted", "the file must end with a newline" say how
# the work is done.
_THING = re.compile(
    r"(?:^|\s)(?:(?:the|this|that|its|their|each|every|a|an)\s+)?(?:[\w'-]+\s+){0,3}"
    r"(?:function|method|class|module|attribute|property|field|parameter|argument|option"
    r"|directive|decorator|constructor|endpoint|api|route|handler|command|query|call|output"
    r"|result|return value|response|page|screen|button|widget|form|list|app|application"
    r"|abstraction|interface|component|service|value|number|exception|warning|header"
    r"|signature|object|instance|variable|dict|dictionary|array|string|tuple|element"
    r"|subplot|plot|figure|axis|legend|table|column|row|window|dialog|menu|request|url"
    r"|program|cli|server|parser|serializer|template|view|model|index|cache|input|token"
    r"|timestamp|threshold|count|total|sum|default|behaviou?r|implementation|lookup|check"
    r"|validation|conversion|sort(?:ing)? order)\s*$",
    re.I,
)
# A pronoun or a relative for the subject: "it should", "this should", "… which should".
_POINTER = re.compile(r"^(?:(?:.*\s)?(?:which|that)|it|this|that|they|these|those)$", re.I)
# A definite subject ("the cart", "this widget"), code when what it should do is what code
# does ("the cart should persist in sessionStorage"), unless it is a thing of the work.
_DEFINITE = re.compile(r"^(?:the|this|that|each|every)\s+(?:[\w'-]+\s+){0,2}[\w'-]+$", re.I)
_WORK = re.compile(
    r"\b(?:files?|folders?|director(?:y|ies)|tests?|commits?|branch(?:es)?|prs?|pull requests?"
    r"|messages?|code|docs?|documentation|readme|changelog|comments?|repo(?:sitory)?|work"
    r"|task|plan|answers?|replies|reply|steps?)$",
    re.I,
)
# A relative after a clause: what the clause says the code does now is what should not be.
_RELATIVE = re.compile(r"\s(?:which|that)$", re.I)
# What code does, said of a pointed-at subject: "this should be changed to return X",
# "which should not happen", "it should not raise", "this should be a client-only app".
_DOES = re.compile(
    r"^(?:\s*(?:not|never|also|only|still|always|instead|rather|just|be changed to"
    r"|be updated to|be fixed to))*\s*(?:return|raise|throw|print|render|display|show"
    r"|produce|output|emit|yield|keep|persist|accept|reject|handle|contain|match|equal"
    r"|happen|behave|parse|convert|crash|error|work the same"
    r"|be (?:rendered|quoted|returned|raised|printed|shown|displayed|converted|parsed"
    r"|optional|absent|empty|none|null|zero|true|false|preserved|kept|ignored|escaped"
    r"|(?:an?\s+)?(?:[\w-]+\s+){0,3}(?:app|application|page|site|tool|cli|library"
    r"|service|script|program|extension|plugin|widget|api)\b))\b",
    re.I,
)


def requirement(s: str) -> FactKind | None:
    """The kind of fact sentence ``s`` is when it says how the code should behave:
    ``project`` when it names the code or points back at what the code does now ("…
    remains visible, which should not happen"), ``decision`` else (module docstring); None
    when it says no such thing."""
    subject = _code_subject(s)
    if subject is None:
        return None
    return "project" if _NAMED.search(s) or _RELATIVE.search(subject) else "decision"


def _code_subject(s: str) -> str | None:
    """The subject of the first modal of ``s`` when it is the code, else None."""
    m = MODAL.search(s)
    if m is None or C.PROHIBITION.match(s) or C.IMPERATIVE.match(s):
        return None
    head, said = s[: m.start()], s[m.end() :]
    # "(1,) is rendered as (1), but should keep …": no subject of its own, the first clause's
    subject = _clause(head) or _first_clause(head)
    if not subject or _PERSON.search(subject):
        return None
    if _NAMED.search(subject) or _API.search(subject) or _THING.search(subject):
        return subject
    if _DEFINITE.match(subject) and not _WORK.search(subject) and _DOES.match(said):
        return subject
    pointed = _POINTER.match(subject) and (_DOES.match(said) or _NAMED.search(said))
    return subject if pointed else None


def _clause(head: str) -> str:
    """The words of ``head`` after its last clause break: the modal's own subject."""
    cut = 0
    for m in _CLAUSE.finditer(head):
        cut = m.end()
    return head[cut:].strip()


def _first_clause(head: str) -> str:
    """The subject of the sentence's first clause, for a modal whose subject is left out."""
    m = _CLAUSE.search(head)
    first = head[: m.start()] if m else head
    return first.strip()


# the tables most sentences hold no word of: a test of their literal words first
# (``_prefilter``: the same answers)
MODAL = prefiltered(MODAL)
