"""What the block leaves out though the merge keeps the slot: a session's task, a run's
measurement (``_measures``) and repeats.

The block is what the sessions decided and established, one line per thing. These merged
slots say nothing of that:

- **a session's task.** What a user asked in the message that opened a session (an issue
  title, "there is a need to make sure that sync works", "the ctf challenge is named katy")
  is the work that session was given, not a belief another session can build on. A
  statement slot (a user's unkeyed instruction, preference, decision or project fact) whose
  every live claim is from its session's opening request stays out, unless two or more
  sessions said it (then it is what they share) or it is a constraint (``_constraint``:
  "this should be a client-only app with no backend", a preference or decision of how).
  The same words said later in the session are kept.
- **one session's inferred project fact** (``language``, ``framework``, ``package
  manager`` read from its files and commands; ``_inferred``): the block shows its files.
- **a passing plan item** (``_unverified``): a slot only one session holds, read from a
  labelled line of a plan its assistant wrote (``**Storage**: ...``, evidence INFERRED or
  below), whose value no other message of the merged sessions names (no tool output, no
  later message, no other session).
- **a run's measurement** (``test count``, keyed per session by ``_measures``): the test
  command's line already says what the last run counted.
- **a repeat.** A slot whose content the block already shows under another key: its value
  (one that names something: two words or more, a path, a command) is in another slot's
  line (the shared name ``command pip install`` beside ``install command`` = pip install -e
  .[dev]), or it names the same file as another file slot (``file
  src/agents/core/metrics/types.ts`` beside the shared ``file metrics/types.ts``). A slot
  is only a repeat of one that reaches as many sessions (what two sessions agree on is never
  dropped for what one said); of two that repeat each other the one kept is the one more
  sessions back, then the shorter line (the same said in fewer tokens), then the smaller
  key; a slot whose value the line of another of equal reach shows is a repeat though its
  own line is the shorter (``file tests/runtests.py`` beside ``command python3
  tests/runtests.py``). A statement slot (keyed by its words) is never a repeat. A
  language is a repeat of the file lines it was read from when each session backing it has
  one shown (``_implied``).

All stay in ``result.slots`` (and the widget) with the reason in ``to_polars``'s ``why_not``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from ._beliefs import Branch, Slot
from ._constraint import is_constraint
from ._implied import IMPLIED, file_of, same_file, shown_languages
from ._inferred import ONE_SESSION, one_session_inferred
from ._measures import MEASURED, measure_key
from ._pack import agreement
from ._unverified import PASSING, passing_conclusions

__all__ = ["TASK", "left_out", "repeats", "task_slots"]

TASK = "the opening request of its session: the task it was given, not a belief to carry"


def task_slots(slots: Sequence[Slot], branches: Sequence[Branch]) -> set[str]:
    """The keys of statement slots one session stated only in its opening request, but for
    the constraints it states there (``_constraint``: "this should be a client-only app")."""
    opening = {b.id: b.opening for b in branches}
    out: set[str] = set()
    for s in slots:
        live = s.live
        if not s.statement or not live or agreement(s) > 0 or len(s.sources) > 1:
            continue
        kind = s.key.partition(":")[0]
        if all(opening.get(c.source) == c.seq for c in live) and not any(
            is_constraint(kind, c.text) for c in live
        ):
            out.add(s.key)
    return out


def _specific(value: str) -> bool:
    """A value that names something (two words or more, a path, a command, a version)
    rather than one plain word, which any line may hold by chance."""
    return len(value.split()) >= 2 or any(not (ch.isalnum() or ch in "_-") for ch in value)


def _inside(value: str, line: str) -> bool:
    """``value`` in ``line`` as a whole word or more (both already lowercased)."""
    if value not in line:  # the common answer, without a pattern
        return False
    pattern = r"(?<![A-Za-z0-9_])" + re.escape(value) + r"(?![A-Za-z0-9_])"
    return re.search(pattern, line) is not None


def repeats(slots: Sequence[Slot], line: Callable[[Slot], str]) -> dict[str, str]:
    """``{key: the key it repeats}`` for each slot whose content another kept slot's
    ``line`` already shows, that slot reaching as many sessions (see the module docs)."""
    # each slot rendered, lowered and read for its file once: the checks below are pairwise
    lines = {s.key: line(s) for s in slots}
    facts = {s.key: _Shown(s, lines[s.key]) for s in slots}
    order = sorted(slots, key=lambda s: (-agreement(s), -len(s.sources), len(lines[s.key]), s.key))
    kept: list[Slot] = []
    out: dict[str, str] = {}
    for s in order:
        peers = [k for k in kept if _reach(k) >= _reach(s)]
        other = None if s.statement else _repeated(facts[s.key], [facts[k.key] for k in peers])
        if other is None:
            kept.append(s)
        else:
            out[s.key] = other
    # a kept slot a later one of equal reach shows (``tests/runtests.py`` in the line of the
    # command ``python3 tests/runtests.py``) though its own shorter line shows not that one
    for i, s in enumerate(kept):
        later = [k for k in kept[i + 1 :] if k.key not in out and _reach(k) == _reach(s)]
        other = None if s.statement else _repeated(facts[s.key], [facts[k.key] for k in later])
        if other is not None:
            out[s.key] = other
    return out


def _reach(slot: Slot) -> tuple[int, int]:
    return agreement(slot), len(slot.sources)


class _Shown:
    """What ``_repeated`` reads of a slot: its key, its file, its line lowered, and its
    values lowered when every one names something (else none: a plain word is no repeat)."""

    __slots__ = ("key", "line", "path", "values")

    def __init__(self, slot: Slot, line: str) -> None:
        values = [slot.display(v) for v in slot.presented]
        self.key = slot.key
        self.path = file_of(slot)
        self.line = line.lower()
        specific = bool(values) and all(_specific(v) for v in values)
        self.values = [v.lower() for v in values] if specific else []


def _repeated(slot: _Shown, kept: Sequence[_Shown]) -> str | None:
    for k in kept:
        if slot.path is not None and k.path is not None and same_file(slot.path, k.path):
            return k.key
        if slot.values and all(_inside(v, k.line) for v in slot.values):
            return k.key
    return None


def left_out(
    slots: Sequence[Slot], branches: Sequence[Branch], line: Callable[[Slot], str]
) -> Mapping[str, str]:
    """``{key: why}`` for every slot the block leaves out as a task or a repeat; ``slots``
    are the block's candidates, ``line`` renders one as the block would."""
    tasks = task_slots(slots, branches)
    out = {k: TASK for k in tasks}
    # a run's count is the run's, shown on its command's line (``_measures``)
    out.update({s.key: MEASURED for s in slots if not s.statement and measure_key(s.key)})
    # one session's language, framework or package manager: its trivia (``_inferred``)
    out.update({k: ONE_SESSION for k in one_session_inferred(slots) if k not in out})
    # an item of one session's plan that nothing else names (``_unverified``)
    out.update({k: PASSING for k in passing_conclusions(slots, branches) if k not in out})
    rest = [s for s in slots if s.key not in out]
    for key, other in repeats(rest, line).items():
        out[key] = f"repeats `{other}`, which the block shows"
    # a language its backers' shown files say (``_implied``)
    rest = [s for s in slots if s.key not in out]
    out.update({k: IMPLIED for k in shown_languages(rest, branches)})
    return out
