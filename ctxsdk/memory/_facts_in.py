"""The kernel's facts as memory candidates: what ``ingest`` stores of a session.

``Session.facts()`` (the base's fact kernel) reads the whole log once: the user's
instructions and preferences, decisions with their reason and rejected alternatives,
project facts (how to build, test and run; language, framework, package manager; the files
created, edited or read), errors and the change that fixed them, settings with values and
units, the session's outcome and its open work. Each fact becomes one typed candidate with
its source (session, seq, the exact quote):

=====================  =======================================================================
fact                   memory
=====================  =======================================================================
instruction,           ``preference`` (how the user wants things done: a rule, a scoped
preference             instruction); a one-off ask ("revise proposal.", "create hello.md
                       file") is one line of the session's asks, and the rules one message
                       sets at once (five or more: a pasted prompt) are one line (``_gather``)
decision               ``decision`` (its reason and rejected alternatives in the text; a
                       deadline it names as ``until``); the agent's todo steps are one
                       ``plan: …`` decision per session (``_gather``)
project, setting       ``entity`` named by what it is about: the key ("test command",
                       "language", "request timeout"), for a file its path, for a project
                       fact with no key its own words; its text states the fact in the words
                       a question uses ("how the tests are run: ``npm test`` (last run: 16
                       passed)"). A file nothing else of the session names (not the user, no
                       other memory) is one line of the session's files (``_gather``)
error                  ``experience`` (``fail`` the error line, ``fix`` the change that made
                       the failing command pass; "not fixed" when it never passed)
outcome                ``experience`` named "outcome: …": what a session did is what it learned
(the assistant's       ``experience`` named "found: …": its statements that name something
findings)              specific (``ctxsdk.session.kernel.statements``), after errors and outcome;
                       one per turn (its statements joined), none that proposes a step
(the assistant's       ``decision`` named "proposed: …": the steps it proposed that name
proposals)             something (a report's recommendations, a plan told in prose), one
                       line per session
open_work              ``decision`` named "open work: …": what was left to do is a commitment
                       about later work, shown with the decisions
=====================  =======================================================================

Within one log a later value of a keyed fact supersedes the earlier one (only the latest is
proposed; the earlier values are kept in ``extra["earlier"]``); across sessions the store's
merge rule does the same (``_ingest.merged``: a keyed entity takes the newer text, its sources
appended). Edges: a preference ``about``, a decision ``decided``, an experience ``fixed`` (the
files its fix changed) or ``about`` (the entities its error names), to the entities the
fact's words name (a file by its path or its file name, a key by its words).

Caps grow with the session (``caps_for``): a short session proposes what it says, a long
one does not flood the memory. The gathered lines (asks, plan, files) are outside the caps:
each stands for items that were never capped one by one. No sentence splitter and no cue
table live here: the kernel owns them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from ..errors import NotFound
from ..session import Fact, Session, redact, withheld
from ..session.kernel import (
    RUN_SCOPE,
    Statement,
    instruction_kind,
    message_of,
    rule_file,
    select_statements,
    statements,
)
from ._door import screen, session_key
from ._gather import (
    GATHERED_MAX,
    RULES_AT_ONCE,
    asks_line,
    files_line,
    is_ask,
    is_plan_step,
    named_in,
    own_messages,
    plan_line,
    rules_line,
    user_questions,
    user_words,
)
from ._model import Candidate, NodeType, Source, clip
from ._wrote import file_lines, wrote_lines

__all__ = [
    "Caps",
    "FactLike",
    "caps_for",
    "dedupe_and_cap",
    "fact_candidates",
    "project_scope",
    "said_kinds",
    "session_words",
]

_NAME_MAX = 40
_ENTITY_NAME_MAX = 120


# A kernel fact (``Session.facts()`` items): the engine reads the base's ``Fact``.
FactLike = Fact


# How a project key reads in a sentence a question would match ("how are the tests run?").
_LEADS = {
    "test command": "how the tests are run",
    "build command": "how the project is built",
    "run command": "how the project is run",
    "install command": "how dependencies are installed",
    "lint command": "how the code is linted",
    "format command": "how the code is formatted",
    "typecheck command": "how types are checked",
    "test count": "test results",
    "test framework": "the test framework",
    "language": "the project's programming language",
    "framework": "the framework the project uses",
    "package manager": "the package manager",
}
_FILE_KEY = "file "
_HOLDS_MAX = 1200  # a key file with what the session wrote into it: a gathered line's length
# A run setting naming a model ("model", "weak model"): kept when the session switched it
_MODEL = re.compile(r"\bmodel\b")
# The project facts that say what the project is made with: one ``stack`` entity
_STACK_KEY = "stack"
_STACK = {
    "language": "programming language",
    "framework": "framework",
    "package manager": "package manager",
}


@dataclass(frozen=True, slots=True)
class Caps:
    """How many candidates of each type one batch may propose (the rest are dropped as
    "over the cap"). ``items`` and ``chars``, when set, bound the whole batch (its count
    and the characters of its texts), applied after the per-type caps in the batch's order,
    entities first; the rest are dropped as "over the batch cap". A session's ingest scales
    its caps with the log (``caps_for``); these are for a model's proposals and imports."""

    entity: int = 8
    preference: int = 8
    decision: int = 6
    experience: int = 4
    items: int | None = None
    chars: int | None = None

    def of(self, node_type: str) -> int | None:
        """The cap of ``node_type``; None (no cap) for the other types."""
        return {
            "entity": self.entity,
            "preference": self.preference,
            "decision": self.decision,
            "experience": self.experience,
        }.get(node_type)


def caps_for(events: int) -> Caps:
    """Caps proportional to the log: 8/8/6/4 for up to 50 events, then one more entity and
    preference per 10 events, decision per 15, experience per 20; at most 60/40/30/20."""
    extra = max(0, events - 50)
    return Caps(
        entity=min(60, 8 + extra // 10),
        preference=min(40, 8 + extra // 10),
        decision=min(30, 6 + extra // 15),
        experience=min(20, 4 + extra // 20),
    )


def _current(facts: Iterable[FactLike]) -> tuple[list[FactLike], dict[int, list[str]]]:
    """The facts in force (a later value of the same kind and key supersedes the earlier),
    and per kept fact (by index) the earlier values of its slot."""
    listed = list(facts)
    last: dict[str, int] = {}
    history: dict[str, list[str]] = {}
    for i, f in enumerate(listed):
        if f.key and f.kind in ("project", "setting"):
            slot = f"{f.kind}/{f.key}"
            if slot in last:
                prev = listed[last[slot]]
                history.setdefault(slot, []).append(_value_text(prev))
            last[slot] = i
    kept: list[FactLike] = []
    earlier: dict[int, list[str]] = {}
    for i, f in enumerate(listed):
        own: str | None = None
        if f.key and f.kind in ("project", "setting"):
            own = f"{f.kind}/{f.key}"
        if own is not None and last[own] != i:
            continue
        if own is not None and own in history:
            earlier[len(kept)] = [v for v in history[own] if v != _value_text(f)]
        kept.append(f)
    return kept, earlier


def _value_text(f: FactLike) -> str:
    v = f.value or ""
    if f.unit and f.unit not in v:
        v = f"{v} {f.unit}"
    return f"not {v}" if f.negated else v


def _entity_of(f: FactLike) -> tuple[str, str] | None:
    """(name, text) of the entity a project or setting fact is about: its key, its file,
    or for a project fact with no key ("we don't control the claude code process - it's a
    3rd party tool", "install: pip install flask") its own words."""
    key = (f.key or "").strip()
    if not key:
        # named by its whole sentence (up to an entity name's 120 characters): entities
        # merge by name, and two facts that open alike are two facts
        said = " ".join(f.text.split())
        return (clip(said, _ENTITY_NAME_MAX), said) if f.kind == "project" and said else None
    if key.startswith(_FILE_KEY) or key == "file":
        path = (f.value or key[len(_FILE_KEY) :]).strip()
        if not path:
            return None
        text = f.text if path in f.text else f"{path}: {f.text}"
        return path, text
    lead = _LEADS.get(key)
    if (
        lead is not None
    ):  # "test command: npm test (...)" reads "how the tests are run: npm test (...)"
        said = f.text[len(key) + 1 :].strip() if f.text.casefold().startswith(key + ":") else f.text
        return key, f"{lead}: {said}"
    text = f.text
    if key.casefold() not in text.casefold():
        text = f"{key}: {_value_text(f)} ({text})"
    return key, text


def _stack_entity(facts: Sequence[FactLike], scope: str, src: Source) -> Candidate:
    """The project's language, framework and package manager as one entity (key
    ``stack``): a teammate notes "Python, Flask, pip" as one line of the project, not three
    memories, each of which says little alone."""
    by_key = {f.key: f.value for f in facts if f.key and f.value}
    parts = [f"{_STACK[k]} {v}" for k, v in by_key.items()]
    value = ", ".join(v for v in by_key.values() if v)
    text = f"the project's stack: {'; '.join(parts)}"
    extra: dict[str, object] = {"kind": "project", "scope": scope, "key": _STACK_KEY}
    extra["value"] = value
    return Candidate("entity", _STACK_KEY, clip(text), src, extra=extra)


def _holding(c: Candidate, lines: Sequence[str]) -> Candidate:
    """A key file's entity with the lines the session wrote into it (``_wrote``), newest
    edit first, after what it says of the file: what the file holds, in its own words
    (bench realworld lexical: stored all 0.551 to 0.596, check 0.406 to 0.480, noise 0.255
    to 0.238, find unchanged)."""
    if not lines:
        return c
    text = clip(f"{c.text}; it holds: {' | '.join(lines)}", _HOLDS_MAX)
    return replace(c, text=text)


def _names_in(text: str, names: Sequence[tuple[str, re.Pattern[str]]]) -> list[str]:
    return [name for name, pat in names if pat.search(text)]


def _name_pattern(name: str) -> re.Pattern[str] | None:
    """How a fact's words name an entity: a path by itself or its file name (4+ chars with a
    dot), a key by its words; None for names too short to be told from ordinary words."""
    forms = [name]
    base = name.rsplit("/", 1)[-1].rsplit("\\", 1)[-1]
    if base != name and len(base) >= 4 and "." in base:
        forms.append(base)
    forms = [f for f in forms if len(f) >= 3]
    if not forms:
        return None
    alts = "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
    return re.compile(rf"(?<![\w/\\.-])(?:{alts})(?![\w-])", re.IGNORECASE)


def _unique(links: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """One link per entity (the first label wins: ``fixed`` before ``about``)."""
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    for label, name in links:
        if name not in seen:
            seen.add(name)
            out.append((label, name))
    return tuple(out)


def _said_at(session: Session, seq: int) -> str:
    """Everything the event at ``seq`` says: its text, its calls' arguments, its results."""
    try:
        msg = session.message_at(seq)
    except NotFound:  # not a message (a compaction, a header): nothing said there
        return ""
    parts = [msg.text, *(c.arguments for c in msg.tool_calls)]
    parts += [r.text for r in msg.tool_results]
    return "\n".join(p for p in parts if p)


def _leaks(blob: str, secrets: Sequence[str]) -> bool:
    """Whether ``blob`` holds a withheld value, whole or cut (its first or last 10 chars),
    its whitespace joined: a fact's words are the kernel's cleaned copy of what was said."""
    flat = " ".join(blob.split())
    for v in secrets:
        w = " ".join(v.split()).strip("`'\" ")
        if not w:
            continue
        probes = {w} if len(w) <= 10 else {w, w[:10], w[-10:]}
        probes |= {ln.strip() for ln in v.splitlines() if len(ln.strip()) >= 16}
        if any(p in flat or p in blob for p in probes):
            return True
    return False


def project_scope(session: Session) -> str:
    """Which project a session's entities belong to: the directory it ran in, else the
    session itself. "test command" or "language" in two projects are two facts; without a
    directory nothing says two sessions share a project."""
    cwd = session.working_dir
    return f"cwd:{cwd}" if cwd is not None else "session:" + session_key(session)


_WORD = re.compile(r"[^\W_]+")


def session_words(session: Session) -> str:
    """Words that say where a session's memories came from, as questions name it: the
    agent that wrote it (an imported log's format: "codex", "claude code"), the project
    (the last part of its directory) and the words of its id (an agent's id often names
    the task: ``pallets__flask-5014``)."""
    got: list[str] = []
    for ev in session.raw_events[:64]:
        data = ev.get("data")
        if ev.get("type") == "ctxsdk/import" and isinstance(data, dict):
            fmt = data.get("format")
            if isinstance(fmt, str):
                got.append(fmt)
                break
    cwd = session.working_dir
    if cwd is not None:
        got.append(cwd.rsplit("/", 1)[-1])
    got.append(session_key(session))
    words = [w.casefold() for part in got for w in _WORD.findall(redact(part).text)]
    return " ".join(dict.fromkeys(w for w in words if not w.isdigit() or len(w) < 6))


def _label(prefix: str, text: str) -> str:
    return clip(f"{prefix}{text}", _NAME_MAX)


def fact_candidates(
    session: Session,
    facts: Iterable[FactLike],
    *,
    until_of: Callable[[str, int], tuple[str, str] | None] | None = None,
) -> tuple[list[Candidate], list[tuple[str, str]]]:
    """The candidates of ``facts`` (see the module docs), entities first, capped by
    ``caps_for``; and what was dropped (text, why): "secret", "over the cap", "duplicate".
    ``until_of(text, seq)`` gives a decision's (label, instant) deadline or None."""
    sid = session_key(session)
    scope = project_scope(session)
    listed = list(facts)
    dropped: list[tuple[str, str]] = []
    # A fact whose words carry a value the redaction engine withholds where it was said is
    # dropped: the kernel's copy of a sentence (backticks and brackets cleaned) may no
    # longer look like a credential to the engine, so it is checked against the source.
    secrets: dict[int, list[str]] = {}
    clean: list[FactLike] = []
    for f in listed:
        seqs = (f.source.seq, *f.evidence)
        for q in seqs:
            if q not in secrets:
                secrets[q] = withheld(_said_at(session, q))
        found = [v for q in seqs for v in secrets[q]]
        blob = " ".join(
            x or "" for x in (f.text, f.source.quote, f.fix, f.value, f.reason, *f.rejected)
        )
        if (found and _leaks(blob, found)) or screen(blob).held_secret:
            # its words are not repeated: the kernel's copy may hide the secret from the engine
            dropped.append((f"a {f.kind} said at #{f.source.seq}", "secret"))
            continue
        clean.append(f)
    kept, earlier = _current(clean)

    def src(f: FactLike) -> Source:
        return Source(sid, f.source.seq, clip(f.source.quote or f.text), "rule")

    # 1. the entities: project facts and settings
    entities: list[tuple[Candidate, int]] = []
    files: set[int] = set()  # ids of the file entities: a key file stays, the rest are gathered
    stack: list[FactLike] = []
    for i, f in enumerate(kept):
        if f.kind not in ("project", "setting"):
            continue
        if f.kind == "project" and f.key in _STACK and f.value:
            stack.append(f)
            continue
        if f.scope == RUN_SCOPE and _MODEL.search(f.key or "") and not earlier.get(i):
            continue  # the harness states it at every start: the run's, not what it learned
        got = _entity_of(f)
        if got is None:
            continue
        name, text = got
        extra: dict[str, object] = {"kind": f.kind, "scope": scope}
        if f.key:
            extra["key"] = f.key
        if f.value is not None:
            extra["value"] = _value_text(f)
        if earlier.get(i):
            extra["earlier"] = earlier[i]
            text = f"{text} (earlier: {', '.join(earlier[i][-3:])})"
        # a file read only is worth less than one the session changed, a key more than both
        rank = (
            0
            if not (f.key or "").startswith(_FILE_KEY)
            else (2 if f.text.startswith("read ") else 1)
        )
        cand = Candidate("entity", clip(name, _ENTITY_NAME_MAX), clip(text), src(f), extra=extra)
        if rank:
            files.add(id(cand))
        entities.append((cand, rank))
    if stack:
        entities.append((_stack_entity(stack, scope, src(stack[0])), 0))
    entities.sort(key=lambda cr: cr[1])
    # a key or a file is named by other facts' words; a project fact's own sentence is not
    names = [
        (c.name, p)
        for c, _ in entities
        if "key" in c.extra and c.name != _STACK_KEY and (p := _name_pattern(c.name)) is not None
    ]

    def links(label: str, text: str, limit: int = 3) -> tuple[tuple[str, str], ...]:
        return tuple((label, n) for n in _names_in(text, names)[:limit])

    # 2. the rest; the user's asks and the agent's todo steps are gathered (``_gather``)
    rest: list[Candidate] = []
    asks: list[FactLike] = []
    steps: list[FactLike] = []
    at_once = _rules_at_once(kept)
    rules: list[FactLike] = []
    told: list[FactLike] = []
    by_file: dict[str, list[FactLike]] = {}  # an agent file's rules (AGENTS.md ...), by file
    for f in kept:
        if f.kind in ("project", "setting"):
            continue
        if (where := rule_file(f)) is not None:
            by_file.setdefault(where, []).append(f)
            continue
        if f.source.seq in at_once and f.kind in ("instruction", "preference") and not is_ask(f):
            rules.append(f)
            continue
        if f.kind in ("instruction", "preference") and f.scope == RUN_SCOPE:
            told.append(f)  # a task template's rules: the harness's, one line
            continue
        if is_ask(f):
            asks.append(f)
            continue
        if is_plan_step(f):
            steps.append(f)
            continue
        text = clip(f.text)
        if f.kind in ("instruction", "preference"):
            how: dict[str, object] = {"kind": f.kind}
            if f.scope:
                how["scope"] = f.scope
            rest.append(
                Candidate(
                    "preference",
                    _label("", f.text),
                    text,
                    src(f),
                    links=links("about", f.text),
                    extra=how,
                )
            )
        elif f.kind in ("decision", "open_work"):
            body = f.text
            if f.reason and f.reason.casefold() not in body.casefold():
                body += f" — because {f.reason}"
            if f.rejected and not all(r.casefold() in body.casefold() for r in f.rejected):
                body += f" (rejected: {'; '.join(f.rejected)})"
            prefix = "open work: " if f.kind == "open_work" else ""
            until = until_of(f.text, f.source.seq) if until_of is not None else None
            rest.append(
                Candidate(
                    "decision",
                    _label(prefix, f.text),
                    clip(prefix + body),
                    src(f),
                    until=until[0] if until else None,
                    until_at=until[1] if until else None,
                    links=links("decided", f.text),
                    extra={"kind": f.kind},
                )
            )
        elif f.kind == "error":
            fail = clip(f.text, 300)
            fix = clip(f.fix, 400) if f.fix else None
            body = f.text if fix else f"{f.text} (not fixed in the session)"
            if fix and fix.casefold() not in body.casefold():
                body += f"; the fix: {fix}"
            rest.append(
                Candidate(
                    "experience",
                    _label("error: ", f.value or f.text),
                    clip(body, 400),
                    src(f),
                    fail=fail,
                    fix=fix,
                    links=_unique(links("fixed", f.fix or "") + links("about", f.text, 2)),
                    extra={"kind": "error"},
                )
            )
        elif f.kind == "outcome":
            rest.append(
                Candidate(
                    "experience",
                    _label("outcome: ", f.text),
                    clip(f"outcome: {f.text}"),
                    src(f),
                    links=links("about", f.text),
                    extra={"kind": "outcome"},
                )
            )
    caps = caps_for(len(session.raw_events))
    held = [_norm(c.text) for c, _ in entities] + [_norm(c.text) for c in rest]
    held += [_norm(f.source.quote) for f in kept if f.source.quote]
    rest += _findings(session, sid, caps.experience, links, held)
    # a question the kernel read as an ask ("can you add a test?": "add a test") is said once
    own = own_messages(session)  # the person's messages: their questions and their words
    read: dict[int, set[str]] = {}
    for f in asks:
        read.setdefault(f.source.seq, set()).add(_norm(f.text))
    questions = [
        (seq, q)
        for seq, q in user_questions(session, own)
        if not any(t in _norm(q) for t in read.get(seq, ()))
    ]
    said_asks = sorted([(f.source.seq, f.text) for f in asks] + questions)
    gathered = [
        asks_line(
            [t for _, t in said_asks],
            src(asks[0])
            if asks and asks[0].source.seq == said_asks[0][0]
            else Source(sid, said_asks[0][0], clip(said_asks[0][1]), "rule"),
            links("about", " ".join(t for _, t in said_asks)),
        )
        if said_asks
        else None,
        plan_line(steps, src(steps[0]), links("decided", " ".join(f.text for f in steps)))
        if steps
        else None,
        rules_line(rules, src(rules[0]), links("about", " ".join(f.text for f in rules)))
        if rules
        else None,
        rules_line(told, src(told[0]), (), by="the harness") if told else None,
        # one line per agent file: its rules are the project's, read or written by the agent
        *(
            rules_line(fs, src(fs[0]), (), by=f"the project's {path}")
            for path, fs in by_file.items()
        ),
    ]
    # a file the user named, or another memory of the session names, is one the session
    # turns on: it stays an entity; the others are one line
    said = [user_words(session, own), *(f.text for f in asks), *(f.text for f in steps)]
    said += [c.text for c in rest] + [c.fix or "" for c in rest]
    said += [c.text for c, _ in entities if id(c) not in files]  # a setting's value
    key_files: list[Candidate] = []
    folded: list[Candidate] = []
    wrote = wrote_lines(session)
    for c, _ in entities:
        if id(c) not in files:
            key_files.append(c)
        elif named_in(_name_pattern(c.name), said):
            key_files.append(_holding(c, file_lines(c.name, wrote)))
        else:
            folded.append(c)
    gathered.append(files_line(folded))
    # one line each, outside the caps: it stands for items that were never capped one by one
    lines = [c for c in gathered if c is not None]
    out, dropped = dedupe_and_cap(key_files + rest, dropped, caps)
    return sorted(lines + out, key=lambda c: _ORDER.get(c.type, 4)), dropped


# Statements picked per finding the session may keep (``Caps.experience``): a turn's
# statements are one memory, so more of them fit in as many memories (bench realworld
# lexical, tune stored: 1 gives 0.496, 3 gives 0.602, 4 gives 0.606, more adds nothing).
_PICK = 4
# A turn's findings: a long autonomous turn says more than one reply's list, and what is
# cut of the statements picked for it is lost (tune stored 0.606 at 1,200, 0.617 at 2,400).
_FOUND_MAX = 2 * GATHERED_MAX
_PROPOSED = "the assistant proposed: "


# "If I look at requests/models.py, …", "If we change line 1713 …": the agent thinking aloud
_MUSING = re.compile(r"(?:if|when|suppose)\s+(?:i|we)\b", re.IGNORECASE)
# "Wait, if return_annotation is None …", "No, it uses UnitBase.__eq__": an aside, its first
# word no order even where the kernel reads a verb in it
_ASIDE = re.compile(
    r"(?:wait|no|hmm+|oh|ah|actually|well|but)\b\s*[,.!]|(?:note|notice)\s+that\b", re.IGNORECASE
)
# An order opens on a plain word, after "then", "so": "print('a', end='')" and
# "_binary_clf_curve raises …" open on code, "So replacing ' ' with …" on a gerund
_CONNECTIVE = re.compile(r"(?:(?:then|so|now|next|first|also|and)\b,?\s*)*", re.IGNORECASE)
_ORDER_WORD = re.compile(r"[A-Za-z][a-z]+(?<!ing)\b(?![(.\w])")
# "Refactor Registries: Convert AgentRegistry …": a short label, then what it says
_LABELLED = re.compile(r"^[^:]{1,40}:\s+")


def _proposed_step(sentence: str) -> bool:
    """Whether an assistant's sentence is a step it proposes (the kernel reads it as a
    one-off ask: "Add RecordType, BaseRecord"), or a supposition about what it might do
    ("If I look at …"), not something it found."""
    if _MUSING.match(sentence):
        return True
    got = instruction_kind(sentence)
    return got is not None and got[0] == "instruction" and not got[1]


def _proposal(sentence: str) -> bool:
    """Whether a sentence read as a step (``_proposed_step``) is one the assistant proposes:
    an order, after its label if it has one ("Refactor Registries: Convert X to …"), not a
    label and its value ("Test counts: 141 …"), thinking aloud ("Wait, …", "Note that …")
    nor a line of code ("print('a', end='')")."""
    if _MUSING.match(sentence) or _ASIDE.match(sentence):
        return False
    label = _LABELLED.match(sentence)
    body = sentence[label.end() :] if label else sentence
    lead = _CONNECTIVE.match(body)
    body = body[lead.end() :] if lead else body
    if not _ORDER_WORD.match(body):
        return False
    got = instruction_kind(body)
    return got is not None and got[0] == "instruction"


def _rules_at_once(facts: Sequence[FactLike]) -> set[int]:
    """The seqs of the user messages that set ``RULES_AT_ONCE`` or more rules (a pasted
    prompt): their rules are one line (``_gather.rules_line``)."""
    count: dict[int, int] = {}
    for f in facts:
        if f.kind in ("instruction", "preference") and f.source.role == "user" and not is_ask(f):
            count[f.source.seq] = count.get(f.source.seq, 0) + 1
    return {seq for seq, n in count.items() if n >= RULES_AT_ONCE}


def _findings(
    session: Session,
    sid: str,
    cap: int,
    links: Callable[[str, str], tuple[tuple[str, str], ...]],
    held: Sequence[str] = (),
) -> list[Candidate]:
    """What the assistant reported it found, in its own words (``ctxsdk.session.kernel.statements``:
    a statement naming a path, a version, a code name, a quantity; never its reasoning, a
    plan or tool output), the ones that together name the most of what the session keeps
    naming: an ``experience`` the session reported, after its errors and outcome. A
    statement whose words another memory of the session already holds (``held``) is left.

    A step the assistant proposes ("Add a private field: …", "Install the keyboard
    package") reads as an ask (``instruction_kind``): it is a plan, not a finding. The
    statements of one turn (the assistant's messages between two things the user said) are
    one memory, in the order said: a reply's list ("compose: …", "Object/Record utilities:
    …") or what a run of tool steps found is one answer, as a teammate notes it, not a
    dozen things the session found."""
    holds = _holder(held)
    found: dict[str, tuple[int, Statement]] = {}
    proposed: dict[str, tuple[int, Statement]] = {}
    turn: dict[int, int] = {}  # seq -> the seq of the first assistant message of its turn
    start = -1
    for seq, ev in enumerate(session.raw_events):
        etype = ev.get("type")
        if etype not in ("user/message", "assistant/message") or message_of(ev) is None:
            continue
        msg = session.message_at(seq)  # the typed message, looked up once
        if etype == "user/message":
            if not msg.tool_results:
                start = -1  # the user spoke: a new turn
            continue
        start = seq if start < 0 else start
        turn[seq] = start
        text = redact(msg.text).text
        for st in statements(text):
            norm = _norm(st.text)
            found.pop(norm, None)  # said again: the newer word
            proposed.pop(norm, None)
            # a statement naming nothing is never kept (it only fills select_statements'
            # room for plain ones): whether it proposes a step is not read
            if not st.names or not _proposed_step(st.text):
                found[norm] = (seq, st)
            elif _proposal(st.text):
                proposed[norm] = (seq, st)
    said = {id(st): i for i, (_, st) in enumerate(found.values())}
    groups: dict[int, list[tuple[int, Statement]]] = {}
    for seq, st in select_statements(list(found.values()), cap * _PICK):
        if not st.names or screen(st.text).held_secret:
            continue  # a plain statement names nothing a teammate would look for
        if holds(_norm(st.text)):
            continue  # a fact already holds its words
        groups.setdefault(turn[seq], []).append((seq, st))
    out: list[Candidate] = []
    for pairs in groups.values():
        pairs.sort(key=lambda p: said[id(p[1])])  # as said
        texts = [st.text for _, st in pairs]
        text = texts[0] if len(texts) == 1 else "; ".join(t.rstrip(" .;") for t in texts)
        text = clip(text, _FOUND_MAX)
        out.append(
            Candidate(
                "experience",
                _label("found: ", texts[0]),
                text,
                # the message the first statement was said in: its quote's own seq
                Source(sid, pairs[0][0], clip(texts[0]), "rule"),
                links=links("about", text),
                extra={"kind": "finding"},
            )
        )
    line = _proposed_line(sid, list(proposed.values()), cap * _PICK, links, holds)
    return [*out, line] if line is not None else out


def _proposed_line(
    sid: str,
    proposed: Sequence[tuple[int, Statement]],
    cap: int,
    links: Callable[[str, str], tuple[tuple[str, str], ...]],
    holds: Callable[[str], bool],
) -> Candidate | None:
    """The steps the assistant proposed that name something ("Refactor Registries: Convert
    AgentRegistry … for dynamic plugin loading", "Install the keyboard package (pip install
    keyboard)") as one ``decision`` (kind ``proposed``), the ones naming the most of what
    the session keeps naming, in the order said; None when there are none. A report's
    recommendations and a plan told in prose are what was decided to do next: one line, as
    the agent's todo steps are (``_gather.plan_line``)."""
    picked = [
        (seq, st.text)
        for seq, st in select_statements(proposed, cap)
        if not screen(st.text).held_secret and not holds(_norm(st.text))
    ]
    if not picked:
        return None
    text = clip(_PROPOSED + "; ".join(t.rstrip(" .;") for _, t in picked), _FOUND_MAX)
    return Candidate(
        "decision",
        _label("proposed: ", picked[0][1]),
        text,
        Source(sid, picked[0][0], clip(picked[0][1]), "rule"),
        links=links("decided", text),
        extra={"kind": "proposed"},
    )


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def _holder(held: Sequence[str]) -> Callable[[str], bool]:
    """``lambda t: any(t in h for h in held)``, one search of the texts joined by NUL
    instead of one per text (a text holding NUL itself is looked up text by text)."""
    if not held:
        return lambda t: False
    blob = "\x00".join(held)
    nul = any("\x00" in h for h in held)

    def holds(t: str) -> bool:
        if nul or "\x00" in t:
            return any(t in h for h in held)
        return t in blob

    return holds


_ORDER: dict[NodeType, int] = {"entity": 0, "preference": 1, "decision": 2, "experience": 3}


_NEAR = 0.8  # shared words over all words of two texts: the same thing said twice
_NEAR_MIN = 8  # words a text needs before a near match is trusted (short texts differ a lot)


def _words(text: str) -> frozenset[str]:
    return frozenset(w.casefold() for w in _WORD.findall(text))


def _near(mine: frozenset[str], others: Sequence[frozenset[str]]) -> bool:
    """Whether a text's words are near those of one of ``others`` (``_NEAR`` or more of
    their union shared): "429: Quota exceeded for …input_tokens_per_minute…" and the same
    error for output tokens, one lesson said twice. An entity never is: its key and value
    are the fact, however alike two texts read."""
    if len(mine) < _NEAR_MIN:
        return False
    return any(len(o) >= _NEAR_MIN and len(mine & o) >= _NEAR * len(mine | o) for o in others)


class _Kept:
    """The word sets of the memories of one type kept so far, by size: a near one
    (``_near``) shares ``_NEAR`` of the union, so its size is within ``_NEAR`` of the
    text's own, and only the sets of those sizes are compared (a long session's
    thousands of memories are not each compared with every earlier one)."""

    __slots__ = ("by_size",)

    def __init__(self) -> None:
        self.by_size: dict[int, list[frozenset[str]]] = {}

    def add(self, words: frozenset[str]) -> None:
        self.by_size.setdefault(len(words), []).append(words)

    def near(self, mine: frozenset[str]) -> bool:
        """``_near(mine, <every set added>)``."""
        n = len(mine)
        if n < _NEAR_MIN:
            return False
        # |a & b| <= min and |a | b| >= max: a near pair has min >= _NEAR * max; the
        # bounds are widened by one so rounding never leaves a size out
        low, high = max(_NEAR_MIN, int(n * _NEAR) - 1), int(n / _NEAR) + 1
        return any(
            _near(mine, self.by_size[size]) for size in range(low, high + 1) if size in self.by_size
        )


def dedupe_and_cap(
    cands: Sequence[Candidate], dropped: list[tuple[str, str]], caps: Caps
) -> tuple[list[Candidate], list[tuple[str, str]]]:
    """Dedupe on type|name|text (case and spacing ignored), and a near duplicate of a kept
    memory of its type (``_near``), cap per type, entities first."""
    seen: set[str] = set()
    counts: dict[str, int] = {}
    kept: list[Candidate] = []
    words: dict[str, _Kept] = {}
    for c in cands:
        k = f"{c.type}|{_norm(c.name)}|{_norm(c.text)}"
        mine = _words(c.text)
        if k in seen or (
            c.type != "entity" and (pool := words.get(c.type)) is not None and pool.near(mine)
        ):
            dropped.append((c.text, "duplicate"))
            continue
        seen.add(k)
        words.setdefault(c.type, _Kept()).add(mine)
        cap = caps.of(c.type)
        if cap is not None and counts.get(c.type, 0) >= cap:
            dropped.append((c.text, "over the cap"))
            continue
        counts[c.type] = counts.get(c.type, 0) + 1
        kept.append(c)
    kept.sort(key=lambda c: _ORDER.get(c.type, 4))
    return kept, dropped


def said_kinds(text: str) -> set[str]:
    """The kinds of fact the kernel reads in ``text`` said by the user (one message): how a
    model's proposal is checked against the same rules as the log ("a preference needs what
    the kernel reads as an instruction or a preference")."""
    s = Session.from_messages([{"role": "user", "content": text}])
    return {f.kind for f in s.facts()}
