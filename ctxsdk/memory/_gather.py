"""One line per session for what a session holds as a list: the user's asks, the agent's
plan, the files it touched.

A teammate's notes on a session read "asked: make a flask app with /hello; add /fibonacci/X;
remove the hello endpoint", "plan: write a failing test; set the threshold; verify", "files:
created app.py; edited src/a.ts (4 changes)": one line each, not one memory per ask, per
todo step or per file. So ``_facts_in`` gathers them here:

- **asks**: a user instruction the kernel reads as one piece of work, not a rule that holds
  beyond it (``instruction_kind``: "revise proposal.", "create hello.md file"; a rule such as
  "don't produce code, design solution first" stays a preference). One ``experience``
  (kind ``asks``) in the order they were said.
- **rules**: the rules one user message sets at once, when it sets ``RULES_AT_ONCE`` or more
  (a pasted agent prompt: "YOU DO NOT run builds or tests. … If the answer is found — stop.
  …"): one ``preference`` (kind ``rules``). A teammate notes "the user's analyzer prompt",
  not a dozen rules, each one of which is read only with the others.
- **plan**: the steps of the agent's todo list (the kernel's ``plan: …`` decisions of
  Codex's update_plan, Claude Code's TodoWrite, Gemini CLI's write_todos). One ``decision``
  (kind ``plan``).
- **files**: the files the session created, edited or read, unless a file is one the session
  turns on: the user named it, or another memory of the session names it (its error's fix, a
  decision, a finding). Those stay entities of their own (linked, merged across sessions);
  the rest are one ``experience`` (kind ``files``).

Each line keeps every item's words (clipped per item), so what one item said is still
found; its source is the first item's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ..session import Fact, Session, redact
from ..session.kernel import instruction_kind, message_of, sentences, user_text
from ._model import Candidate, Source, clip

__all__ = [
    "GATHERED_MAX",
    "RULES_AT_ONCE",
    "asks_line",
    "files_line",
    "is_ask",
    "is_plan_step",
    "named_in",
    "own_messages",
    "plan_line",
    "rules_line",
    "user_questions",
    "user_words",
]

# A user message setting this many rules is a pasted prompt or guide: one line (the corpus's
# users set one to four rules a message; a pasted analyzer prompt set twelve).
RULES_AT_ONCE = 5
GATHERED_MAX = 1200  # a gathered line holds several items: longer than one memory's 240
_ITEM_MAX = 240  # one item of it, as long as a memory of its own
_PLAN = "plan: "


def is_ask(f: Fact) -> bool:
    """Whether a user instruction is one piece of work (not a rule that holds beyond it)."""
    if f.kind != "instruction" or f.scope is not None or f.source.role != "user":
        return False
    got = instruction_kind(f.text)
    return got is not None and not got[1]


def is_plan_step(f: Fact) -> bool:
    """Whether a decision is one step of the agent's todo list (the kernel's ``plan: …``)."""
    return f.kind == "decision" and f.source.role == "assistant" and f.text.startswith(_PLAN)


def _joined(head: str, items: Iterable[str]) -> str:
    """``head`` and the items, each once (case and spacing ignored), within GATHERED_MAX."""
    seen: set[str] = set()
    parts: list[str] = []
    for item in items:
        one = clip(item, _ITEM_MAX).rstrip(" .;")
        key = one.casefold()
        if one and key not in seen:
            seen.add(key)
            parts.append(one)
    return clip(head + "; ".join(parts), GATHERED_MAX)


def asks_line(
    asks: Sequence[str], src: Source, links: tuple[tuple[str, str], ...]
) -> Candidate | None:
    """The user's asks of one session (their one-off instructions and questions, in the
    order said) as one experience (kind ``asks``), or None."""
    if not asks:
        return None
    text = _joined("the user asked: ", asks)
    name = clip(f"asked: {asks[0]}", 40)
    return Candidate("experience", name, text, src, links=links, extra={"kind": "asks"})


def user_questions(
    session: Session, own: Sequence[tuple[int, str]] | None = None
) -> list[tuple[int, str]]:
    """(seq, sentence) of each question the person asked in their own words ("what's
    1+1?", "which file holds the routes?"): what they asked is an ask as much as an order
    is, and the kernel reads no instruction in a question (``own``: ``own_messages(session)``
    when the caller has read them)."""
    out: list[tuple[int, str]] = []
    for seq, text in own_messages(session) if own is None else own:
        out += [(seq, q) for q in sentences(text) if q.rstrip().endswith(("?", "？"))]
    return out


def rules_line(
    rules: Sequence[Fact],
    src: Source,
    links: tuple[tuple[str, str], ...],
    *,
    by: str = "the user",
) -> Candidate | None:
    """The rules one user message set at once (a pasted agent prompt, a style guide), or
    the rules a harness's task template sets (``by="the harness"``), as one preference
    (kind ``rules``), or None."""
    if not rules:
        return None
    text = _joined(f"{by}'s rules, given at once: ", (f.text for f in rules))
    name = clip(f"rules: {rules[0].text}", 40)
    return Candidate("preference", name, text, src, links=links, extra={"kind": "rules"})


def plan_line(
    steps: Sequence[Fact], src: Source, links: tuple[tuple[str, str], ...]
) -> Candidate | None:
    """The agent's todo steps of one session as one decision (kind ``plan``), or None."""
    if not steps:
        return None
    text = _joined(_PLAN, (f.text[len(_PLAN) :] for f in steps))
    name = clip(steps[0].text, 40)
    return Candidate("decision", name, text, src, links=links, extra={"kind": "plan"})


def files_line(files: Sequence[Candidate]) -> Candidate | None:
    """File entities folded into one experience (kind ``files``): each file's own line
    ("created app.py (4 changes)"), changed files before files only read."""
    if not files:
        return None
    text = _joined("the session's files: ", (c.text for c in files))
    name = clip(f"files: {files[0].name}", 40)
    return Candidate("experience", name, text, files[0].source, extra={"kind": "files"})


def own_messages(session: Session) -> list[tuple[int, str]]:
    """(seq, text) of each message the person wrote (their own words: a harness template's
    wrapper removed), redacted: what ``user_questions`` and ``user_words`` read (a caller
    asking both reads them once and passes them)."""
    out: list[tuple[int, str]] = []
    for seq, ev in enumerate(session.raw_events):
        if ev.get("type") != "user/message" or message_of(ev) is None:
            continue
        msg = session.message_at(seq)
        if msg.tool_results or msg.source.kind not in (None, "user"):
            continue
        own = user_text(msg.text)
        if own:
            out.append((seq, redact(own).text))
    return out


def user_words(session: Session, own: Sequence[tuple[int, str]] | None = None) -> str:
    """What the person wrote in the session, one message a line: which files the user
    named (``own``: ``own_messages(session)`` when the caller has read them)."""
    return "\n".join(text for _, text in (own_messages(session) if own is None else own))


def named_in(pattern: re.Pattern[str] | None, texts: Iterable[str]) -> bool:
    """Whether ``pattern`` (a name's, ``_facts_in._name_pattern``) matches one of ``texts``."""
    return pattern is not None and any(pattern.search(t) for t in texts)
