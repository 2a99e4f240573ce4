"""The short session-start map and the pinned block: a few lines that tell the model what the
memory holds and how to search it, within a budget in exact tokens (the seed's map is about
130 tokens and never over 400).

Line 1 says how to search; line 2 counts memories by type; line 3 names as many of them as
the budget holds (at most 48), the most useful first: the four newest preferences (the
user's instructions), at most two unexpired decisions with a deadline (``decision:<first 40
chars> until <label>``), the three newest other decisions, how to build, test and run (the
test, build, run and install commands, language, framework, package manager: ``test
command: npm test``), open work, errors met (newest first), then entities and the remaining
preferences, decisions and experiences, each label clipped to 90 characters and shown once
("language: TypeScript" of four projects is one label). Labels are added while the map
fits the budget, so a long list ends at a whole label instead of losing the line. The text
is neutralized (``ctxsdk.session.kernel.neutralize``: control, bidi and zero-width characters
shown as escapes, since it goes to a model) and then cut to the budget by a binary search
on its characters, counted by the tokenizer (a guard: the head alone may not fit).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .._display import Rendered, esc
from ..session import Tokenizer
from ..session.kernel import neutralize
from ._find import is_stale
from ._model import Node, clip

__all__ = ["MAP_INSTRUCTION", "MemoryMap", "build_map", "pinned_block"]

MAP_INSTRUCTION = (
    "Memory: use ctx_find naming an entity or a topic to search it, and ctx_read with an id "
    "for the full text and its links."
)
_SHOWN = ("entity", "preference", "decision", "experience", "observation")
# how to build, test and run, in the order a newcomer needs them (keyed entities, ``_facts_in``)
_HOW = (
    "test command",
    "build command",
    "run command",
    "install command",
    "lint command",
    "stack",
    "language",
    "framework",
    "package manager",
    "test framework",
)
_MAX_NAMED = 48  # a ceiling; the budget usually ends the line first
_LABEL = 90


@dataclass(frozen=True)
class MemoryMap(Rendered):
    """The map's ``text``, its ``tokens`` and the ``budget`` it was cut to."""

    text: str
    tokens: int
    budget: int
    tokenizer: str

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"MemoryMap({self.tokens}/{self.budget} tokens)"

    def _text_(self) -> str:
        return self.text or "(an empty memory: no map)"

    def _html_(self) -> str:
        return (
            f"<div class='cx-title'>memory map: {self.tokens}/{self.budget} tokens "
            f"({esc(self.tokenizer)})</div><pre class='cx-pre'>{esc(self.text)}</pre>"
        )

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "tokens": self.tokens, "budget": self.budget}


def _fit(text: str, budget: int, tk: Tokenizer) -> str:
    """The longest prefix of ``text`` (on a line, else a character) within ``budget``."""
    if tk.count(text) <= budget:
        return text
    lo, hi = 0, len(text)
    while lo < hi:  # the largest prefix length that fits
        mid = (lo + hi + 1) // 2
        if tk.count(text[:mid]) <= budget:
            lo = mid
        else:
            hi = mid - 1
    cut = text[:lo]
    nl = cut.rfind("\n")
    return cut[:nl] if nl > 0 else cut


def build_map(
    nodes: Sequence[Node],
    budget: int,
    tk: Tokenizer,
    now: datetime,
    *,
    observations: int | None = None,
) -> MemoryMap:
    """The map of ``nodes`` (the active memories) within ``budget`` tokens (module docs).
    ``observations``: how many there are, when ``nodes`` leaves them out (they are only
    counted, never named: a memory just opened need not read its whole log for a map)."""
    live = [n for n in nodes if n.active and n.type in _SHOWN]
    counts = {t: sum(1 for n in live if n.type == t) for t in _SHOWN}
    if observations is not None:
        live = [n for n in live if n.type != "observation"]
        counts["observation"] = observations
    if not any(counts.values()) or budget <= 0:
        return MemoryMap("", 0, budget, tk.name)
    line2 = "Memories: " + ", ".join(f"{counts[t]} {t}" for t in _SHOWN if counts[t])
    order = sorted(live, key=lambda n: (n.created_at, n.id))
    prefs = [n for n in order if n.type == "preference"]
    decisions = [n for n in order if n.type == "decision" and not is_stale(n, now)]
    upcoming = [n for n in decisions if n.until]
    open_work = [n for n in decisions if n.extra.get("kind") == "open_work"]
    chosen = [n for n in decisions if n not in open_work]
    how = [n for n in order if n.type == "entity" and str(n.extra.get("key", "")) in _HOW]
    how.sort(key=lambda n: _HOW.index(str(n.extra.get("key"))))
    picked: list[str] = []
    seen: set[str] = set()
    said: set[str] = set()  # a label shown once: "language: TypeScript" of four projects
    head = f"{MAP_INSTRUCTION}\n{line2}"
    room = [True]

    def take(n: Node, label: str, cut: bool = True) -> None:
        shown = clip(label, _LABEL) if cut else label
        key = " ".join(shown.casefold().split())
        if n.id in seen or key in said or len(picked) >= _MAX_NAMED or not room[0]:
            return
        # the line grows while it fits the budget: a label that would not fit ends it
        if tk.count(neutralize(f"{head}\nnamed: {'; '.join([*picked, shown])}")) > budget:
            room[0] = False
            return
        seen.add(n.id)
        said.add(key)
        picked.append(shown)

    # newest first within a kind: what the latest sessions said is what holds
    for n in prefs[::-1][:4]:
        take(n, f"preference:{n.text or n.name}")
    for n in upcoming[:2]:
        take(n, f"decision:{clip(n.text or n.name, 40)} until {clip(n.until or '', 16)}", False)
    for n in chosen[::-1][:3]:
        take(n, f"decision:{n.text or n.name}")
    for n in how:
        take(n, f"{n.name}: {n.extra.get('value') or n.text}")
    for n in open_work[::-1][:2]:
        take(n, n.text or n.name)
    for n in order[::-1]:  # errors met: the lessons (findings and the rest come last)
        if n.type == "experience" and n.fail:
            take(n, f"experience:{n.fail}")
    for n in order:
        if n.type == "entity":
            take(n, n.name)
    for n in (*prefs[::-1], *chosen[::-1], *order[::-1]):
        if n.type in ("preference", "decision", "experience"):
            take(n, f"{n.type}:{n.text or n.name}")
    lines = [head]
    if picked:
        lines.append("named: " + "; ".join(picked))
    text = _fit(neutralize("\n".join(lines)), budget, tk)
    return MemoryMap(text, tk.count(text) if text else 0, budget, tk.name)


def pinned_block(nodes: Sequence[Node], budget: int, tk: Tokenizer) -> str:
    """The pinned memories of a session, one line each, within ``budget`` tokens (neutralized,
    as the map)."""
    lines = ["Pinned memories:"] + [f"- {n.type}: {clip(n.text or n.name, 200)}" for n in nodes]
    return _fit(neutralize("\n".join(lines)), budget, tk)
