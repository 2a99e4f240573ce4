"""One user message, one statement: what a user said in one message is one line.

The kernel reads a user's unkeyed instructions, preferences, decisions and project facts
sentence by sentence, so one message gives several statements: "the main idea is fine,
however sessionOrchestrator must not be agent specific. abstraction should allow to track
user prompts by scanning files ... for claude - logic looks ok, gemini has different
storage for user prompts" is three, and "there is a need to - periodically track changes in
history. if /clear is found - finalize session and create new one" two. Each alone is a
fragment of the one thing the user asked; a reader of a merged block wants the message's
directive whole, and one line instead of several saves a line's overhead per sentence. A
pasted prompt of a dozen rules is one instruction of the user too.

So the statements one session's user made in one message merge into one statement claim
(its words in the order said, joined by `` / ``; its label the strongest of theirs, an
instruction before a decision, a preference, a project fact; its type likewise, a
constraint before a decision before a fact). A statement another session's user
also made keeps its own claim, so sessions that say the same thing still meet in one slot;
a statement in force stays apart from one a later message replaced (``superseded``). The
opening request of a session stays sentence by sentence: what it says of how the work must
be is kept and the task itself left out (``_prune``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

from ._claims import Claim, statement_key

__all__ = ["SAID_JOIN", "one_per_message"]

SAID_JOIN = " / "
"""What joins the sentences of one message in its statement (the block cuts each part)."""

_TYPE_RANK = {"constraint": 3, "decision": 2, "fact": 1}
# a message that instructs is an instruction, one that decides a decision, and so on
_LABEL_RANK = {"instruction": 4, "decision": 3, "preference": 2, "project": 1}


def _label(claim: Claim) -> str:
    return claim.key.partition(":")[0]


def one_per_message(
    claims: Sequence[Claim], openings: Collection[tuple[str, int | None]] = ()
) -> list[Claim]:
    """``claims`` with the statements one source's user made in one message merged into one
    claim (see the module docs), in place of the first of them; the rest unchanged. A
    session's opening request (``openings``: ``(source, seq)``) is not merged: the block
    keeps its constraints and leaves its task out sentence by sentence (``_prune``)."""
    said_by: dict[str, set[str]] = {}
    for c in claims:
        if c.statement:
            said_by.setdefault(c.key, set()).add(c.source)
    groups: dict[tuple[str, int, bool], list[Claim]] = {}
    for c in claims:
        if c.statement and said_by[c.key] == {c.source} and (c.source, c.seq) not in openings:
            groups.setdefault((c.source, c.seq, c.superseded), []).append(c)
    merged = {id(g[0]): _merged(g) for g in groups.values() if len(g) >= 2}
    folded = {id(c) for g in groups.values() if len(g) >= 2 for c in g[1:]}
    return [merged.get(id(c), c) for c in claims if id(c) not in folded]


def _merged(parts: Sequence[Claim]) -> Claim:
    strongest = max(parts, key=lambda c: _TYPE_RANK.get(c.kind or "fact", 0))
    label = max((_label(c) for c in parts), key=lambda k: _LABEL_RANK.get(k, 0))
    text = SAID_JOIN.join(c.text for c in parts)
    return replace(
        parts[0], key=statement_key(label, text), text=text, shown=text, kind=strongest.kind
    )
