"""A passing plan item: what one session's model laid out once and nothing else names.

A claim at ``INFERRED`` evidence or below is the model's own word. Read from a labelled
line of a plan or summary it wrote (``**Concurrency**: File-based locking``, ``**Storage**:
`~/.codemie/conversations/claude-messages.jsonl` ``), it is an item of a proposal: its user
did not say it, no tool showed it, and the design may have gone another way. When no other
message of the merged sessions names its value either (no tool output, no later message of
its own session, nothing another session wrote), the work never came back to it: a reader
of the merged block would act on a line nothing established. The block leaves such a slot
out; it stays in ``result.slots`` (and the widget) with the reason. What the model found
and said in prose (``The port is 8080.``) is not a plan's item and stays, as the block's
default keeps one session's inference (``single="all"``).

A conclusion the work returns to is kept: the path an assistant's design keeps naming
(``~/.claude/history.jsonl`` in five of its messages), a class a tool's output shows
(``HistoryParser``), a value another session writes (the extractor keys a sentence in one
session and not in another, so one slot may hold what two sessions share). So are the
slots a second session backs (``agreement``), disputes across sessions, and what a user
said or a tool showed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ..session.kernel import digest_text
from ._beliefs import Branch, Slot
from ._slots import Evidence

__all__ = ["PASSING", "passing_conclusions"]

PASSING = "an item of one session's plan that no other message of the sessions names"


# a labelled line of a plan or summary: ``**Storage**: ...``, ``- **Concurrency**: ...``
_PLAN_ITEM = re.compile(r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?\*\*[^*\n]{1,60}\*\*\s*:")


def _conclusion(slot: Slot) -> bool:
    live = slot.live
    return (
        not slot.statement
        and bool(live)
        and len(slot.sources) == 1
        and all(c.evidence <= int(Evidence.INFERRED) and _PLAN_ITEM.match(c.text) for c in live)
    )


def _names(value: str) -> re.Pattern[str]:
    # the value as a whole word or path: ``history.jsonl`` is not named by ``history.jsonl.bak``
    return re.compile(r"(?<![\w/.~-])" + re.escape(value.lower()) + r"(?![\w/-])")


def passing_conclusions(slots: Iterable[Slot], branches: Sequence[Branch]) -> set[str]:
    """The keys of the slots one session holds, all of whose live claims are at evidence
    ``INFERRED`` or below and read from a labelled line of a plan, whose values no message
    of ``branches`` but the claims' own names (see the module docs)."""
    found = [s for s in slots if _conclusion(s)]
    if not found:
        return set()
    texts = [(b.id, m.seq, digest_text(m.raw).lower()) for b in branches for m in b.messages]
    out: set[str] = set()
    for s in found:
        own = {(c.source, c.seq) for c in s.live}
        patterns = [_names(s.display(v)) for v in s.presented]
        named = any(
            (sid, seq) not in own and any(p.search(text) for p in patterns)
            for sid, seq, text in texts
        )
        if not named:
            out.add(s.key)
    return out
