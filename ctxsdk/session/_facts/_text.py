"""Facts from what the user and the assistant say: instructions, preferences, decisions,
settings, outcome and open work.

Each sentence (``_sentences.sentence_spans``) is read by the cue tables of ``_cues``:

- user text: prohibitions ("don't produce code, design solution first", "不要…"),
  normative modals ("X must not be agent specific"), corrections ("no, I meant …") and
  rule-like imperatives ("use pnpm", "keep it in the same file") are instructions; what
  the user states with an instruction's cue words (``_statements``: "there is existing
  logic for X", "keep in mind that X" are project facts, "there is a need to track X" and
  "option 1 is not acceptable" decisions) is not; likes, style and standing rules ("be
  concise", "I prefer …", "以后都用 pnpm") are preferences. Of the plain task imperatives
  of one message ("create hello.md", "add a test", "make the changes suggested in the
  readme": ``_asks`` tells them from rules) only the first is kept: it says what was asked.
  Questions, hypotheticals and filler ("thanks", "continue") give nothing. A harness
  template around the user's task is unwrapped first (``_templates.user_text``): of an
  issue text only its title and its normative sentences are kept. A sentence saying how the
  code should behave ("model_to_dict() should return {}", "the list should persist in
  localStorage") is what the task requires of the code, not a rule of work: a project
  fact or a decision (``_expected``), in an issue or in the user's own words.
- user and assistant text: decisions, with ``reason`` and ``rejected`` alternatives. The
  assistant's narration ("Let me look at the file") is not a decision; its plans are only
  when they commit to a choice (decided, went with, X instead of Y).
- every sentence: settings (``_settings.setting_facts``).

``closing_facts`` reads the last assistant text for the outcome and the open work.
"""

from __future__ import annotations

import dataclasses
import re

from .._redact import memo_read
from . import _cues as C
from ._asks import embedded_question, rule_imperative
from ._corrections import correction
from ._expected import requirement
from ._model import QUOTE_MAX, Fact, FactKind, FactSource
from ._prefilter import prefiltered
from ._replies import chooses, durable, refers_back
from ._sentences import Span, clean, sentence_spans
from ._settings import facts_of_setting, setting_facts
from ._statements import need, statement_kind
from ._templates import user_text

__all__ = ["closing_facts", "fact_line", "instruction_kind", "is_filler", "text_facts"]

TEXT_MAX = 200
_WITHHELD = "[REDACTED:"  # the redaction engine's marker (the reader redacts first)
_MAX_PER_MESSAGE = 12
_MAX_CLOSING = 3
_MAX_READ = 600  # a longer "sentence" is a paragraph that lost its stops: read its start


def fact_line(s: str, limit: int = TEXT_MAX) -> str:
    """One readable line: whitespace folded, cut at a word boundary to ``limit``."""
    s = " ".join(s.split())
    if len(s) <= limit:
        return s
    cut = s[: limit - 1]
    space = cut.rfind(" ")
    if space > limit * 0.6:
        cut = cut[:space]
    return cut.rstrip(" ,;:，、") + "…"


def _strip_lead(s: str) -> str:
    m = C.LEAD.match(s)
    return s[m.end() :] if m and m.end() < len(s) else s


def _tail(m_text: str) -> str:
    return fact_line(m_text.strip(" ,.;:，。；：)"), 120)


def _reason(s: str) -> str | None:
    m = C.REASON.search(s)
    if m is None:
        return None
    why = _tail(m.group("why"))
    return why if len(why) >= 3 else None


def _rejected(s: str) -> tuple[str, ...]:
    out: list[str] = []
    for m in C.REJECTED.finditer(s):
        alt = next((g for g in m.groups() if g), None)
        if alt:
            alt = alt.strip(" ,.;:'\"`，。")
            if alt and alt.lower() not in ("it", "that", "this", "them") and alt not in out:
                out.append(alt)
    return tuple(out[:3])


def _scope(s: str) -> str | None:
    why = C.REASON.search(s)
    s = s[: why.start()] if why else s  # "... since it runs every time" is not "always"
    m = C.SCOPE.search(s)
    if m is not None:
        return next((g for g in m.groups() if g), None)
    if C.STANDING.search(s):
        return "always"
    return None


def _quote(text: str, span: Span) -> str:
    return text[span.start : span.end][:QUOTE_MAX]


def _instruction(s: str) -> tuple[FactKind, bool] | None:
    """(kind, is_rule) of a user sentence, or None. A rule holds beyond the next step; a
    reply to the agent's last turn (``_replies``) is a one-off ask or correction unless it
    says when or where it holds. Within ``redaction_memo()`` a sentence read before is
    answered from its first reading (the same pure function of the text)."""
    return memo_read("instruction", s, _read_instruction)


def _read_instruction(s: str) -> tuple[FactKind, bool] | None:
    if statement_kind(s) is not None:
        return None  # "there is existing logic for X", "keep in mind that X": what holds
    if need(s) == "ask":
        return "instruction", False  # "there is a need to come up with a plan for X"
    why = C.REASON.search(s)
    head = s[: why.start()] if why else s  # "... since it runs every time" is no rule
    if C.PREFERENCE.search(s) or C.STANDING_RULE.search(head):
        return "preference", True
    if C.PROHIBITION.search(s) or C.NORMATIVE.search(embedded_question(s)):
        # "no need to run it", "don't do that": a prohibition of the thing just proposed
        return "instruction", durable(s) or not _PRONOUN_OBJECT.search(s)
    if C.CORRECTION.search(s):
        return "instruction", durable(s)  # "it's bad idea", "no, it's not phase 1": this turn
    scoped = C.SCOPE_LEAD.match(s)  # "For numbered lists, pad the marker …": a scoped rule
    body = s[scoped.end() :] if scoped else s
    if C.PROHIBITION.match(body):
        return "instruction", True
    if C.IMPERATIVE.search(body):
        rule = rule_imperative(s, body, scoped.group(0) if scoped else "")
        return "instruction", rule and (durable(s) or not refers_back(s))
    return None


# The object of a prohibition is only pointed at: "no need to run it", "don't do that".
_PRONOUN_OBJECT = re.compile(
    r"\b(?:to|do|run|use|change|touch|add|do it|make)\s+(?:it|that|this|them|those)\s*[.!]?$"
    r"|(?:别|不要|不用)(?:(?:这样|那样)(?:做|改)?|(?:做|改|跑|运行)?(?:它|这个|那个))[。.!！]?$",
    re.I,
)


def _conditional(s: str) -> str | None:
    """The rule of "if X, do Y" / "when X - do Y" (its consequent an imperative), or None."""
    m = C.CONDITION.match(s)
    if m is None or s.rstrip(" \"')").endswith(("?", "？")):
        return None
    rule = m.group("rule").strip()
    if C.PROHIBITION.match(rule) or C.IMPERATIVE.match(rule) or C.NORMATIVE.match(rule):
        return rule
    return None


def is_filler(text: str) -> bool:
    """Whether ``text`` is only politeness or acknowledgement ("ok, thanks!", "嗯好的",
    "continue"): a message that says nothing to remember."""
    return C.FILLER.match(_strip_lead(" ".join(text.split()))) is not None


def _gate(s: str) -> str | None:
    """The sentence to read for cues, or None (filler, question, hypothetical); memoized
    as ``_instruction`` is."""
    return memo_read("gate", s, _read_gate)


def _read_gate(s: str) -> str | None:
    s = _strip_lead(s)
    if len(s) < 3 or C.FILLER.match(s):
        return None
    req = C.REQUEST.match(s)
    if req is not None:  # "can you add a test?" asks for "add a test"
        head = s[: req.start(0)] if req.start(0) else ""
        ask = req.group(0)
        lead = ask[: ask.lower().rfind(",") + 1] if "," in ask else ""
        return (head + lead + " " + s[req.end() :]).strip().rstrip(" ?？") or None
    if C.QUESTION.search(s) or C.HYPOTHETICAL.match(s) or C.ASK.match(s):
        return None
    return s


def text_facts(text: str, *, role: str, seq: int, session: str, previous: str = "") -> list[Fact]:
    """The facts of one message's text (``role`` "user" or "assistant"). ``previous`` is
    the agent's last turn before a user message: a correction's pronoun is looked up there."""
    try:
        return _text_facts(text, role=role, seq=seq, session=session, previous=previous)
    except Exception:  # never raise on odd input: it gives nothing
        return []


def _text_facts(text: str, *, role: str, seq: int, session: str, previous: str) -> list[Fact]:
    if not isinstance(text, str) or not text.strip():
        return []
    wrapped = False
    if role == "user":
        inner = user_text(text)
        if inner is None:
            return []
        wrapped = inner != text.strip()
        text = inner
    spans = sentence_spans(text)
    out: list[Fact] = []
    seen: set[tuple[str, str]] = set()
    task_taken = False

    def add(
        kind: FactKind,
        line: str,
        span: Span,
        *,
        scope: str | None = None,
        reason: str | None = None,
        rejected: tuple[str, ...] = (),
    ) -> None:
        line = fact_line(line)
        k = (kind, line.casefold())
        if len(line) < 3 or k in seen or len(out) >= _MAX_PER_MESSAGE:
            return
        seen.add(k)
        src = FactSource(session, seq, role, _quote(text, span))
        out.append(
            Fact(kind=kind, text=line, source=src, scope=scope, reason=reason, rejected=rejected)
        )

    if wrapped:
        # The task's first line is its title, even when it reads like code or an error
        # ("SyntaxError: invalid syntax"); the splitter would drop it.
        first = text.lstrip().split("\n", 1)[0]
        title = clean(first)
        at = text.find(first)
        fits = bool(title) and len(title) <= 2 * TEXT_MAX and bool(C.LETTER.search(title))
        if fits and (not spans or spans[0].start > at):
            spans.insert(0, Span(at, at + len(first), title))
    denied: Span | None = None  # the user's "it's not a jsonl file." just before
    designing = False  # the sentence before said what the design in hand needs
    correcting = role == "user" and not wrapped

    def corrected(said: str, span: Span) -> list[Fact]:
        """The keyed facts of a user's correction ("it's not X, it's Y"), if it is one."""
        got = correction(said, previous=previous) if correcting else None
        if got is None:
            return []
        return facts_of_setting(got, FactSource(session, seq, role, _quote(text, span)))

    for i, span in enumerate(spans):
        raw = span.text[:_MAX_READ]
        if _WITHHELD in raw:
            continue  # a withheld credential is no belief: "deploy with [REDACTED:…]" says nothing
        quote = _quote(text, span)
        keyed = corrected(raw, span) or setting_facts(
            raw, role=role, seq=seq, session=session, quote=quote
        )
        if keyed:
            keyed = [_with_reason(f, raw) for f in keyed]
            out.extend(keyed)
        if "`" in quote:  # every match of _INSTALL is in backticks
            for cmd in _INSTALL.findall(quote):
                # "install Flask using `pip install flask`": what the project needs installed
                add("project", f"install: {' '.join(cmd.split())}", span)
        was_denied, denied = denied, None
        was_designing, designing = designing, False
        if role == "user" and not wrapped:
            lead = _strip_lead(raw)
            if _conditional(lead) is not None and not C.DANGLING.search(lead):
                # "if X, do Y": a rule; after "there is a need to track X" it says how the
                # design does it ("if /clear is found - finalize the session"): a decision
                designing = was_designing
                add("decision" if designing else "instruction", lead, span, scope=_scope(lead))
                continue
            if C.NOT_IT.match(lead):
                denied = Span(span.start, span.end, lead)
                continue
            if was_denied is not None and C.IT_IS.match(lead) and not C.QUESTION.search(lead):
                # "it's not jsonl file. it's json file with …": the user corrects the agent;
                # the two sentences are one correction, quoted whole
                said = f"{was_denied.text.rstrip(' .')}; {lead}"
                both = Span(was_denied.start, span.end, said)
                out.extend(corrected(said, both))
                add("instruction", said, both)
                continue
        s = _gate(raw)
        if s is None:
            continue
        if role == "user" and wrapped:
            # An issue or task text: its title says what was asked; of its body only
            # what must or must not be done. What it says the code should do is what the
            # task requires of the code, not a rule of work (``_expected``).
            dangling = bool(C.DANGLING.search(s))
            required = None if dangling else requirement(s)
            ruled = bool(C.NORMATIVE.search(s) or C.PROHIBITION.search(s)) and not dangling
            if required is not None:
                add(required, s, span, reason=_reason(s))
            elif i == 0 or ruled:
                add("instruction", s, span)
            task_taken = task_taken or i == 0
            continue
        # the user's "let's set same value for conversation" answers the agent's proposal:
        # an ask about this turn (read below), not a choice that holds on its own
        reply = role == "user" and refers_back(s, picks=False) and not durable(s)
        if _decision(s, role) and not (role == "user" and C.PREFERENCE.search(s)) and not reply:
            if C.DANGLING.search(s) or (role == "assistant" and _heading(text, span)):
                continue  # a heading names a plan's section ("## Recommended Design: …")
            if any(f.kind == "decision" for f in keyed) or (
                len(s.split()) < 4 and not C.CJK.search(s)
            ):
                continue  # the keyed decision says it already; or too short to say anything
            add(
                "decision",
                s,
                span,
                reason=_reason(s),
                rejected=_rejected(s),
                scope=_scope(s) if role == "user" else None,
            )
            continue
        if role != "user":
            continue
        stated = statement_kind(s)
        if stated is not None and not C.DANGLING.search(s):
            # "there is existing logic for X", "keep in mind that X": what holds;
            # "there is a need to track X": what the design in hand needs
            if not keyed:
                add(stated, s, span, reason=_reason(s))
            designing = stated == "decision"
            continue
        got = _instruction(s)
        if got is None and out and out[-1].kind == "instruction" and _CONVENTION.match(s):
            got = ("instruction", True)  # a rule list's plain statement of how things are done
        if got is None:
            if C.PROJECT_STATEMENT.search(s) and not C.DANGLING.search(s) and not keyed:
                add("project", s, span, reason=_reason(s))  # what the user says holds
            continue
        kind, rule = got
        if C.DANGLING.search(s):
            continue  # "I want an app that allows me to": its object was a list or code
        if any(f.kind == kind for f in keyed):
            continue  # the keyed fact says it already
        if not rule:
            if task_taken:
                continue
            task_taken = True
        # a one-off ask's place ("rename a.py to b.py") is where it acts, not where a rule holds
        scope = _scope(s) if rule else None
        add(kind, s, span, scope=scope, reason=_reason(s), rejected=_rejected(s))
    return out


# "Bullet lists use the - marker", "Tests go in tests/", "Commit messages start with a verb":
# things of a kind and how they are, said plainly among the user's rules
_CONVENTION = re.compile(
    r"^(?:(?:the|all|each|every|our|my)\s+)?(?:[\w-]+\s+){0,2}[a-z][\w-]*s\s+"
    r"(?:use|go|live|start|end|follow|stay|need|get)\s+\S",
    re.I,
)
_INSTALL = re.compile(
    r"`((?:sudo\s+)?(?:pip3?|python3? -m pip|uv pip|uv|poetry|pipx|conda|npm|pnpm|yarn|bun|cargo"
    r"|go|gem|bundle|brew|apt|apt-get|composer|dotnet)\s+(?:install|add|get)\s+[^`\n]{1,80})`"
)


def _with_reason(f: Fact, s: str) -> Fact:
    """A keyed decision or preference with the reason the sentence gives, when it has none."""
    if f.kind in ("decision", "preference") and f.reason is None:
        why = _reason(s)
        if why is not None:
            return dataclasses.replace(f, reason=why)
    return f


def _heading(text: str, span: Span) -> bool:
    """Whether the sentence is a markdown heading (``## Proposed Solution: …``)."""
    start = text.rfind("\n", 0, span.start) + 1
    return text[start : span.start].lstrip().startswith("#")


def _decision(s: str, role: str) -> bool:
    """Whether sentence ``s`` said by ``role`` makes a decision; memoized as
    ``_instruction`` is."""
    return memo_read("decision:" + role, s, lambda text: _read_decision(text, role))


def _read_decision(s: str, role: str) -> bool:
    if role == "assistant" and C.ASSISTANT_CHOICE.search(s) and not C.DANGLING.search(s):
        return True  # "I'll use WAL mode", "I'll store sessions as JSONL because …"
    if role == "user" and chooses(s):
        return True  # "option 1 is not acceptable": a choice among the agent's options
    if not C.DECISION_HINT.search(s.lower()):
        return False
    if role == "assistant":
        if C.ASSISTANT_NARRATION.search(s) and "decid" not in s.lower():
            return False
        if C.DECISION.search(s):
            if C.ALTERNATIVE.search(s) and not C.DECISION_STRONG.search(s):
                return bool(C.CHOICE_VERB.search(s))  # "X accepts a instead of b" describes
            return True
        return bool(C.DECISION_WEAK.search(s) and C.REJECTED.search(s))
    if C.DECISION.search(s):
        return not C.PROHIBITION.match(s) or bool(C.REJECTED.search(s))
    return bool(C.DECISION_WEAK.search(s))


def closing_facts(text: str, *, seq: int, session: str) -> list[Fact]:
    """Outcome and open work, from the last assistant text of a log."""
    try:
        return _closing(text, seq=seq, session=session)
    except Exception:
        return []


def _closing(text: str, *, seq: int, session: str) -> list[Fact]:
    if not isinstance(text, str) or not text.strip():
        return []
    outcome: list[Fact] = []
    open_work: list[Fact] = []
    seen: set[str] = set()
    under_label = 0  # sentences left under a "Next steps:" / "Remaining:" label
    wanted = False  # under a label of what is wanted ("Acceptance criteria:"): a goal

    def add(into: list[Fact], kind: FactKind, s: str, span: Span) -> None:
        line = fact_line(s)
        if line.casefold() in seen or len(into) >= _MAX_CLOSING:
            return
        seen.add(line.casefold())
        src = FactSource(session, seq, "assistant", _quote(text, span))
        into.append(Fact(kind=kind, text=line, source=src))

    for span in sentence_spans(text):
        s = _strip_lead(span.text)
        if len(s) < 3 or C.FILLER.match(s):
            continue
        raw = text[text.rfind("\n", 0, span.start) + 1 : span.end]  # with its line's marks
        heading = raw.lstrip().startswith("#")
        label = len(s.split()) <= 5 and (heading or raw.rstrip(" *_").endswith(":"))
        if C.OPEN_WORK.search(_ASIDE.sub(" ", s)):  # "done (although I couldn't …)": done
            if label:
                under_label = 3
                continue
            # "I'll do one final check to make sure I didn't …" is the agent's next step, not work
            # left open at the end.
            intent = C.ASSISTANT_NARRATION.match(s) or C.INTENT.match(s)
            if not C.QUESTION.search(s) and not C.DANGLING.search(s) and not intent:
                add(open_work, "open_work", s, span)
            continue
        if label or heading:
            under_label = 0
            wanted = bool(_GOALS.match(s))
            continue
        if wanted or _TODO_BOX.match(raw):
            continue  # "Acceptance criteria: all tests pass", "- [ ] add tests": not done yet
        if under_label:
            under_label -= 1
            add(open_work, "open_work", s, span)
            continue
        if C.QUESTION.search(s) or (C.ASSISTANT_NARRATION.match(s) and not C.OUTCOME.search(s)):
            continue
        done = C.OUTCOME.search(s)
        if done and not C.DANGLING.search(s) and not _NOT_YET.search(s[: done.start()]):
            add(outcome, "outcome", s, span)
    return outcome + open_work


# Labels of what a plan wants, not of what was done: what follows them is a goal.
_GOALS = re.compile(
    r"(?:(?:acceptance|success|exit|done|completion)\s+)?criteria\b|requirements?\b|goals?\b"
    r"|expected\b|definition of done|(?:test|verification|testing)\s+(?:plan|steps?|strategy)"
    r"|check ?list\b|deliverables?\b|action items?\b|actions?\s*$|tasks?\s*$|to ?do\b"
    r"|(?:implementation|rollback|migration)\s+plan",
    re.I,
)
_ASIDE = re.compile(r"\([^()]*\)")  # a parenthesised aside qualifies the sentence it is in
# A modal before the outcome's verb: "it will check that both files have been created"
# says what the code will do, not what was done.
_NOT_YET = re.compile(r"\b(?:will|would|should|shall|could|can|going to|needs? to|must)\b", re.I)
_TODO_BOX = re.compile(r"\s*(?:[-*+]|\d+[.)])?\s*\[ \]")  # an unchecked box: still to do


def instruction_kind(sentence: str) -> tuple[FactKind, bool] | None:
    """``(kind, is_rule)`` of a user sentence read as an instruction or preference, or None.
    A rule holds beyond the next step ("never push to main"); an ask is one piece of work."""
    return _instruction(sentence)


# the tables most sentences hold no word of: a test of their literal words first
# (``_prefilter``: the same answers)
_TODO_BOX = prefiltered(_TODO_BOX)
_NOT_YET = prefiltered(_NOT_YET)
_GOALS = prefiltered(_GOALS)
