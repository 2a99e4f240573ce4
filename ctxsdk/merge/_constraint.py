"""In a session's opening request, what is a constraint (kept) and what is the task (left out).

An opening request says what to do ("there is a need to make sure that sync works", an
issue title, "the ctf challenge is named katy"): the work that session was given, not a
belief another session builds on. It often also says how the result must be ("this should
be a client-only app with no backend", "the list should persist in localstorage", "don't
commit until the final step"): requirements that hold for every later session on the work.

The line, read on the opening requests of the corpus (aider, Claude Code, mini-swe-agent,
SWE-agent, OpenHands):

- a user's preference or decision (the kernel's kinds for how and which) is a constraint;
- an instruction is one when it prohibits ("don't", "do not", "never", "must not",
  "avoid") or requires ("should", "must", "shall", "only", "no <thing>", "without") —
  unless it reports a problem: an issue's expected behaviour ("model_to_dict() should
  return an empty dict", "(1,) is rendered as (1), but should keep the comma") names the
  code that misbehaves or says what happens now, and is the bug to fix, not a rule;
- anything else ("there is a need to ...", "check if there's a conn_case.ex", an issue
  title) is the task.
"""

from __future__ import annotations

import re

__all__ = ["is_constraint"]

_PROHIBITS = re.compile(r"\b(?:don'?t|do not|never|must not|avoid)\b", re.I)
_REQUIRES = re.compile(r"\b(?:should|must|shall|only|without|no\s+[a-z][\w-]*)\b", re.I)
# a name of code: a call, a dotted or snake_case name, or a quoted token (not camelCase:
# a requirement names the API it wants: "the list should persist in localStorage")
_CODE = re.compile(r"\w\(|\b[A-Za-z]\w*[._]\w+|`[^`]+`|'[^' ]+'|\"[^\" ]+\"|\(\d")
# what an issue says happens now (the problem, not the rule)
_PROBLEM = re.compile(
    r"\b(?:bug|fails?|crash(?:es)?|errors?|raises?|wrong|incorrect(?:ly)?|broken|happens?"
    r"|rendered|remains|instead)\b",
    re.I,
)


def is_constraint(kind: str, text: str) -> bool:
    """Whether a statement of ``kind`` (``instruction``, ``preference``, ``decision``,
    ``project``) the user said in an opening request is a constraint (module docs)."""
    if kind in ("preference", "decision"):
        return True
    if kind != "instruction":
        return False
    if _PROHIBITS.search(text) is None and _REQUIRES.search(text) is None:
        return False
    return _CODE.search(text) is None and _PROBLEM.search(text) is None
