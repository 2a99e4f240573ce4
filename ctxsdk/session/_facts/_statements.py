"""What a user states rather than instructs: facts, context, needs of the design in hand.

A user tells the agent things as well as asking for work, and such a sentence often carries
a cue word of an instruction ("need to", "keep in mind") without saying how work is done
beyond the task in hand:

- a fact about the code or the world: "there is existing logic for scanning history",
  "we already have a helper for that" (``_cues.EXISTING``) is a ``project`` fact;
- context offered for the task: "keep in mind that the new file will be in the same folder
  as the old one", "remember this fact for later: the codeword is X" (``_cues.NOTE``) is a
  ``project`` fact, unless what follows the lead is itself an instruction ("keep in mind
  that you must not push");
- what the design being discussed needs: "there is a need to track the latest synced
  message id", "there is no need to track the existing session" (``_cues.NEED``) is a
  ``decision``. The need is a rule when it says how work is done (``_asks.rule_imperative``:
  "there is a need to keep Python 3.9 support"), and an ask for one piece of work when it
  asks for the agent's own work ("there is a need to come up with a plan for …", ``need``);
- how the code should behave is a requirement of the code, not a rule of how the agent
  works (``_expected.requirement``): a project fact when it names the code
  ("model_to_dict() should return an empty dict"), else a decision of the design in hand
  ("the list should persist in localStorage");
- a choice among the options the agent offered ("option 1 is not acceptable") is a
  decision too; ``_text`` reads it with the other decisions (``_replies.chooses``).
"""

from __future__ import annotations

import re
from typing import Literal

from . import _cues as C
from ._asks import rule_imperative
from ._expected import MODAL, requirement
from ._model import FactKind
from ._prefilter import TableGate, prefiltered

__all__ = ["Need", "need", "statement_kind"]

Need = Literal["rule", "ask", "design"]

# The agent's own work asked for, not what the design does: "come up with a plan", "review".
_WORK = re.compile(
    r"^(?:(?:carefully|first|then|also)\s+)?(?:come\s*up\s+with|prepare|plan|propose|suggest"
    r"|review|analy[sz]e|investigate|explore|research|think\s+(?:about|of|through)|figure\s+out"
    r"|find\s+out|look\s+(?:at|into)|design|describe|explain|document|write\s+(?:up|down|a|an"
    r"|the)\s+(?:plan|proposal|summary|document|doc|spec|report))\b",
    re.I,
)
# "no need to run it": what is not needed is only pointed at, a reply to the last proposal
_POINTED = re.compile(r"^\S+\s+(?:it|that|this|them|those)\s*[.!]?$", re.I)
# An instruction inside the context a note offers: "keep in mind that you must not push".
_ORDERS = (C.PROHIBITION, C.NORMATIVE, C.STANDING_RULE, C.PREFERENCE)


def need(s: str) -> Need | None:
    """What an impersonal need (``_cues.NEED``) in sentence ``s`` is: a rule of how work is
    done, an ask for the agent's own work, or a need of the design in hand; None when ``s``
    states no need or what is not needed is only pointed at ("there is no need to run it")."""
    m = C.NEED.match(s)
    if m is None:
        return None
    what = m.group("what")
    if m.group("no") and (_POINTED.match(what) or len(what.split()) < 2):
        return None  # "there is no need to hurry", "… to run it": no design said
    if rule_imperative(s, what, ""):
        return "rule"
    return "ask" if _WORK.match(what) else "design"


def _noted(s: str) -> bool:
    """Whether ``s`` offers context ("keep in mind that X") whose X is no instruction."""
    m = C.NOTE.match(s)
    if m is None:
        return False
    said = s[m.end() :]
    return bool(said) and not C.IMPERATIVE.match(said) and not _orders(said)


def _orders(s: str) -> bool:
    return any(cue.search(s) for cue in _ORDERS)


def statement_kind(s: str) -> FactKind | None:
    """The kind of fact a user's sentence ``s`` states (``project`` or ``decision``) when it
    states one with the cue words of an instruction (see the module docstring); None else."""
    if not _GATE.read(s):
        return None  # none of the four tables' words: the common case, in one scan
    if (C.EXISTING.search(s) and not _orders(s)) or _noted(s):
        return "project"
    required = requirement(s)
    if required is not None:
        return required
    return "decision" if need(s) == "design" else None


_WORK = prefiltered(_WORK)
# every sentence of the user's is asked: one scan for the words a statement needs
_GATE = TableGate((C.EXISTING, C.NOTE, C.NEED, MODAL))
