"""Replies: a user sentence that answers the agent's last turn, not a rule for later turns.

A user who reads a proposal answers it: "it's bad idea, since …", "no, it's not phase 1",
"put into existing with …", "let's set same value for conversation", "option 2". Such a
sentence leans on what the agent just said (a pronoun subject, a bare "no", an object left
out or named only as "it", "the same value", "option 1"), so it is a one-off ask or
correction about the current work. A durable rule says when it holds or where ("always",
"from now on", "never", "in tests"), or states its whole content ("don't produce code,
design solution first", "be concise"): those are read elsewhere and stay rules.

``refers_back(s)`` is the reply test on one cleaned sentence; ``durable(s)`` the cues that
keep a sentence a rule whatever it leans on.
"""

from __future__ import annotations

import re

from . import _cues as C
from ._prefilter import prefiltered

__all__ = ["chooses", "durable", "refers_back"]

_I = re.I

# Opens by pointing at the agent's last turn: a bare "no", an evaluation of "it" / "that".
_OPENS = re.compile(
    r"^(?:no|nope|nah|wrong|incorrect|not really|not quite|not exactly)\s*[,.!;:–—-]"
    r"|^(?:it|that|this|these|those|they)(?:'?s|'re| is| are| was| were)\s+(?:not\s+|just\s+"
    r"|also\s+|still\s+|really\s+|too\s+|a\s+|an\s+|the\s+)*(?:bad|good|fine|ok|okay|wrong"
    r"|right|correct|incorrect|invalid|valid|useless|pointless|overkill|too\b|not\b|no\b"
    r"|unnecessary|redundant|risky|dangerous|better|worse|great|nice|better|awful|terrible"
    r"|confusing|misleading|ugly|messy|broken|acceptable|unacceptable|enough|idea|approach"
    r"|option|solution|plan|phase|step|what)\b"
    r"|^(?:不是|不对|不行|错了|这(?:个|样)?(?:不|是个?(?:坏|好)主意)|那(?:个|样)?不)",
    _I,
)
# Names a choice among what the agent offered: "option 1", "approach B", "方案二".
_PICKS = re.compile(
    r"\b(?:option|approach|variant|proposal|alternative|choice)\s*#?(?:\d{1,2}|[a-e]\b|one\b"
    r"|two\b|three\b|four\b)"
    r"|(?:方案|选项)\s*[一二三四五1-9A-Ea-e]",
    _I,
)
# An imperative whose object is left out or only pointed at: "put into existing",
# "track it in the same file", "move them to the end", "把它放到…".
_ELLIPTIC = re.compile(
    r"^(?:please\s+|let'?s\s+|just\s+|then\s+)*(?:put|place|move|add|insert|append|store|save"
    r"|write|track|include|integrate|merge|copy|paste|log|record|attach|keep|set|make|change"
    r"|fix|update|do|use|apply|revert|remove|delete|drop|rename)\s+"
    r"(?:(?:it|them|this|that|these|those|everything|all of (?:it|them))\b(?!\s+(?:is|are)\b)"
    r"|(?:in|into|inside|to|onto|under|at)\s)"
    r"|^(?:请)?把(?:它|它们|这个|那个|这些|那些)",
    _I,
)
# "the same value" with nothing it is the same as: the value the agent just named.
_SAME = re.compile(
    r"\b(?:the\s+)?same\s+(?:value|thing|one|name|way|logic|approach|format|id|number)\b"
    r"(?!\s+(?:as|like|for (?:all|every|each|both)|everywhere|across|in (?:all|every|each)))"
    r"|同样的值|一样的值",
    _I,
)
# What keeps a sentence a rule: when or where it holds.
_WHEN = re.compile(
    r"\b(?:again|anymore|any more|from now on|going forward|in (?:the )?future|next time"
    r"|each time|every time|whenever|always|never|by default|for all|everywhere)\b"
    r"|以后|今后|从现在起|每次|总是|始终|永远|一律",
    _I,
)


def refers_back(s: str, *, picks: bool = True) -> bool:
    """Whether the sentence leans on the agent's last turn (see the module docstring).
    ``picks=False``: naming one of the agent's options ("go with option C for the cache")
    does not count; a choice among options is still a decision."""
    if picks and _PICKS.search(s):
        return True
    return bool(_OPENS.search(s) or _ELLIPTIC.search(s) or _SAME.search(s))


def chooses(s: str) -> bool:
    """Whether the sentence names one of the options the agent offered ("option 1 is not
    acceptable", "approach B, but keep the cache") and says no more of when it holds: a
    choice among them, a decision."""
    return bool(_PICKS.search(s)) and not durable(s)


def durable(s: str) -> bool:
    """Whether the sentence says when or where it holds: a standing time word ("always",
    "from now on", "again") or a scope ("in tests", "for this repo")."""
    why = C.REASON.search(s)
    head = s[: why.start()] if why else s  # "… since it runs every time" is no standing rule
    return bool(_WHEN.search(head) or C.SCOPE.search(head) or C.STANDING_RULE.search(head))


# the tables most sentences hold no word of: a test of their literal words first
# (``_prefilter``: the same answers)
_PICKS = prefiltered(_PICKS)
_WHEN = prefiltered(_WHEN)
_SAME = prefiltered(_SAME)
