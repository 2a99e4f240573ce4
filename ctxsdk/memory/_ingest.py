"""Getting memories in: a session's facts as memories, observations, and the merge rule.

Pure functions (no store, no model): a session goes in, ``Candidate``s and the reasons for
what was left out come out. The store decides where each candidate lands (``merge_target`` /
``merged``).

What is read
------------
The base's fact kernel (``Session.facts()``) reads the whole log, not only its surface: the
user's instructions and preferences, decisions (reason, rejected alternatives), project
facts and settings, errors and their fixes, the outcome and the open work, each with its
source (session, seq, quote). ``_facts_in`` turns them into typed candidates (preferences,
decisions, entities named by what they are about, experiences) with ``about`` / ``decided``
/ ``fixed`` links, under caps that grow with the session. No sentence splitter, cue table or
name rule lives in the memory: the kernel owns them, and entity names come from facts (a key,
a file path), never from capitalized words. A fact whose text held a secret (a redaction
hit) is dropped; ``Memory`` then passes every candidate through its door (``_door``) before
writing it.

**until**: the label as written and an ISO instant, relative to ``now`` (default: when the
sentence was said, so a log read a month later keeps its dates). 下周 / next week = the
next Monday; 下周五 = Friday of next week; 周五 / Friday / "until|by Friday" = the next such
day (a week ahead when it is today); 周末 = the next Saturday; 明天 / tomorrow; N月N日 = the
next such date; an ISO date as given (a 2020 date is stale). All instants are 00:00 UTC of
that day: the moment the decision stops holding.

**Observations** (``verbatim``): one per user utterance, assistant reply and tool output,
word for word (redacted). A long tool output is clipped around what matters: the lines the
kernel's facts came from (an error line, a test summary) with a little context, the head
and the tail, not to head and tail alone.

A MEMORY.md import (``_io``) uses ``IMPORT_CAPS``: 24/24/12/8, and at most 24 items and
3,000 characters of text in the whole batch. Texts and quotes are clipped to 240 chars;
candidates are deduplicated on type|name|text (case and spacing ignored), and a memory other
than an entity whose words are 80% those of one kept before it (8+ words) is a near
duplicate ("429: Quota exceeded for …input_tokens…" and the same for output tokens). What a
session holds as a list (the user's one-off asks, the agent's todo steps, files nothing else
names) is one line each (``_gather``).
"""

from __future__ import annotations

import json
import re
import threading
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..session import Session, read_facts, redact
from ..session.kernel import is_filler, message_of, message_text, redact_json
from ._door import refusal, screen, session_key
from ._facts_in import Caps, FactLike, caps_for, dedupe_and_cap, fact_candidates
from ._model import Candidate, Node, Source

if TYPE_CHECKING:
    from ._store import MemoryStore

__all__ = [
    "DEFAULT_CAPS",
    "IMPORT_CAPS",
    "MERGED_TYPES",
    "Caps",
    "Extraction",
    "MergeIndex",
    "caps_for",
    "extract",
    "held_secret",
    "merge_target",
    "merged",
    "observations",
    "parse_until",
    "refuse_secret",
    "still_matches",
    "told_by",
]

DEFAULT_CAPS = Caps()
# A MEMORY.md import: the seed's 24/24/12/8, and its batch guard of 3,000 characters of
# text and 24 items in all.
IMPORT_CAPS = Caps(entity=24, preference=24, decision=12, experience=8, items=24, chars=3000)


@dataclass(frozen=True, slots=True)
class Extraction:
    """What a batch proposes (``candidates``: entities first, then preferences, decisions,
    experiences) and what it left out, as (text, why) with why one of "secret", "no cue",
    "over the cap", "over the batch cap", "duplicate". A secret's text is redacted."""

    candidates: tuple[Candidate, ...] = ()
    dropped: tuple[tuple[str, str], ...] = field(default=())


# -- secrets ---------------------------------------------------------------------------------
def refuse_secret(text: str) -> str | None:
    """Why a memory refuses ``text`` (naming the kinds of secret found), or None when it
    keeps it, its secrets redacted: the memory's door (``_door``). Only a text that is
    nothing but credentials is refused; ordinary words ("token budget", "password reset")
    are kept."""
    return refusal(text)


def held_secret(text: str) -> bool:
    """Whether ``text`` held a secret (a redaction hit, or a ``[REDACTED:…]`` marker): such
    a fact is dropped."""
    return screen(text).held_secret


# -- until -----------------------------------------------------------------------------------
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ZH_DAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_UNTIL = re.compile(
    r"(?P<iso>(?<!\d)\d{4}-\d{2}-\d{2}(?!\d))"
    r"|(?P<md>(?<!\d)(?P<m>\d{1,2})月(?P<d>\d{1,2})[日号])"
    r"|(?P<nextzh>下(?:周|个?星期|个?礼拜)(?P<nzd>[一二三四五六日天])?)"
    r"|(?P<zh>(?:周|星期|礼拜)(?P<zd>[一二三四五六日天]))"
    r"|(?P<weekend>周末)"
    r"|(?P<tomorrow>明天|(?<![A-Za-z])tomorrow(?![A-Za-z]))"
    r"|(?P<nextweek>(?<![A-Za-z])next week(?![A-Za-z]))"
    r"|(?P<en>(?<![A-Za-z])(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)(?![A-Za-z]))",
    re.IGNORECASE,
)


def _instant(day: date) -> str:
    return f"{day.isoformat()}T00:00:00Z"


def _ahead(today: date, weekday: int) -> date:
    """The next ``weekday`` after ``today`` (a week ahead when today is that day)."""
    return today + timedelta(days=(weekday - today.weekday()) % 7 or 7)


def parse_until(text: str, now: datetime) -> tuple[str, str] | None:
    """The first deadline ``text`` names, as (label as written, ISO instant) relative to
    ``now`` (naive means UTC), or None (see the module docs for the forms)."""
    today = (now if now.tzinfo else now.replace(tzinfo=UTC)).astimezone(UTC).date()
    for m in _UNTIL.finditer(text):
        label = m.group(0)
        try:
            if m.group("iso"):
                return label, _instant(date.fromisoformat(label))
            if m.group("md"):
                day = date(today.year, int(m.group("m")), int(m.group("d")))
                if day < today:
                    day = date(today.year + 1, day.month, day.day)
                return label, _instant(day)
        except ValueError:
            continue  # 2月30日, 2026-13-01: not a date
        if m.group("nextzh"):
            monday = _ahead(today, 0)
            zd = m.group("nzd")
            return label, _instant(monday + timedelta(days=_ZH_DAYS[zd] if zd else 0))
        if m.group("zh"):
            return label, _instant(_ahead(today, _ZH_DAYS[m.group("zd")]))
        if m.group("weekend"):
            return label, _instant(_ahead(today, 5))
        if m.group("tomorrow"):
            return label, _instant(today + timedelta(days=1))
        if m.group("nextweek"):
            return label, _instant(_ahead(today, 0))
        name = label.lower()
        return name.capitalize(), _instant(_ahead(today, _WEEKDAYS.index(name)))
    return None


# -- reading the session ---------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Said:
    """One user message: its seq and its (redacted) text."""

    seq: int
    text: str


@dataclass(frozen=True, slots=True)
class _Result:
    seq: int
    tool: str
    ok: bool
    text: str  # redacted result text
    command: str  # the call's command (redacted)


_COMMAND_KEYS = ("cmd", "command", "script", "path", "file_path")


def _command(arguments: str) -> str:
    """A call's command, redacted: the one string argument of a shell-like call, else the
    JSON with each string in it redacted (a secret JSON escaped, its quotes and newlines
    written ``\\"`` and ``\\n``, is redacted as it was said)."""
    return _call_parts(arguments)[0]


def _call_parts(arguments: str) -> tuple[str, list[str]]:
    """The call's command (``_command``) and its other string arguments (what an edit
    wrote, a search's pattern), all redacted; the arguments are parsed once."""
    try:
        args = json.loads(arguments)
    except (ValueError, RecursionError):  # not JSON, or nested past what Python walks
        return redact(arguments).text, []
    if not isinstance(args, dict):
        return json.dumps(redact_json(args), ensure_ascii=False), []
    clean = redact_json(args)
    key = next((k for k in _COMMAND_KEYS if isinstance(args.get(k), str)), None)
    head = redact(args[key]).text if key is not None else json.dumps(clean, ensure_ascii=False)
    rest = [v for k, v in clean.items() if k != key and isinstance(v, str) and v]
    return head, rest


def _time_of(session: Session, seq: int) -> datetime:
    raw = session.raw_events[seq] if 0 <= seq < len(session.raw_events) else {}
    ms = raw.get("time")
    if isinstance(ms, int) and not isinstance(ms, bool):
        return datetime.fromtimestamp(ms / 1000, UTC)
    return datetime.now(UTC)


def _read(session: Session) -> tuple[list[_Said], list[_Result]]:
    """The user messages (redacted, whole) and the tool results of the session's surface,
    in order: what a model's proposal must quote (``_propose``)."""
    said: list[_Said] = []
    results: list[_Result] = []
    calls: dict[str, tuple[str, str]] = {}
    for node in session.surface():
        msg = node.message
        for call in msg.tool_calls:
            calls[call.id] = (redact(call.name).text, _command(call.arguments))
        if msg.role == "user" and msg.source.kind == "user":
            text = redact(msg.text).text
            if text.strip():
                said.append(_Said(node.seq, text))
        for res in msg.tool_results:
            name, command = calls.get(res.tool_call_id, ("tool", ""))
            results.append(
                _Result(node.seq, name, not res.is_error, redact(res.text).text, command)
            )
    return said, results


# -- extraction ------------------------------------------------------------------------------
_LAST_FACTS: list[tuple[Session, int, tuple[FactLike, ...]]] = []


def facts_of(session: Session) -> tuple[FactLike, ...]:
    """``session.facts()``, read once for ``extract`` and ``observations`` of one ingest (the
    last session read is remembered while its log is unchanged)."""
    n = len(session.raw_events)
    if _LAST_FACTS and _LAST_FACTS[0][0] is session and _LAST_FACTS[0][1] == n:
        return _LAST_FACTS[0][2]
    # with what the harness states for the run (its model, a task template's rules) and the
    # rules of the project's agent files (AGENTS.md, CONVENTIONS.md ...): a teammate notes
    # which model ran and the rules the agent worked under
    got: tuple[FactLike, ...] = tuple(
        read_facts(session.raw_events, session=session.id, harness=True, rule_files=True)
    )
    _LAST_FACTS[:] = [(session, n, got)]
    return got


def _finish(cands: Iterable[Candidate], dropped: list[tuple[str, str]], caps: Caps) -> Extraction:
    """Dedupe on type|name|text, cap per type, order entities first, then the batch caps."""
    kept, dropped = dedupe_and_cap(list(cands), dropped, caps)
    if caps.items is not None or caps.chars is not None:
        batch: list[Candidate] = []
        chars = 0
        for c in kept:
            full = caps.items is not None and len(batch) >= caps.items
            if full or (caps.chars is not None and chars + len(c.text) > caps.chars):
                dropped.append((c.text, "over the batch cap"))
                continue
            batch.append(c)
            chars += len(c.text)
        kept = batch
    return Extraction(tuple(kept), tuple(dropped))


def extract(
    session: Session,
    *,
    now: datetime | None = None,
    facts: Iterable[FactLike] | None = None,
) -> Extraction:
    """The candidates of ``session``'s facts (``Session.facts()`` unless ``facts`` are
    given; see ``_facts_in``) and what was dropped. A decision's deadline is read relative
    to ``now``, else to when it was said."""

    def until_of(text: str, seq: int) -> tuple[str, str] | None:
        return parse_until(text, now or _time_of(session, seq))

    _typed_at_once(session)
    got = facts_of(session) if facts is None else facts
    cands, dropped = fact_candidates(session, got, until_of=until_of)
    return Extraction(tuple(cands), tuple(dropped))


def _typed_at_once(session: Session) -> None:
    """The session's messages typed in one validation (``Session.messages``), before the
    ingest looks each up by its seq (``message_at``, which validates one at a time what is
    not typed yet): the same messages, kept by the session. A message that does not
    validate leaves the rest untyped, each lookup raising as it did."""
    try:
        session.messages()
    except Exception:  # looked up one by one, as before
        return


# -- observations ----------------------------------------------------------------------------
# A tool output longer than this is clipped (a file read whole, a full test log). What the
# user and the assistant said is the record a question is asked about: it is clipped only
# past four times as much (a pasted log). Clipping every message at 4,000 characters lost
# a tenth of the answers (bench realworld lexical: find top-5 0.701 / 0.685 tune / check,
# against 0.765 / 0.749 now).
_OBS_MAX = 16000
_SAID_MAX = 4 * _OBS_MAX
_OBS_HEAD, _OBS_TAIL = 0.3, 0.2  # the share of the limit kept of its ends around what matters
_OBS_AROUND = 2  # lines of context kept on each side of a line a fact came from
_OBS_FALLBACK_HEAD = 0.75  # with nothing that matters: this share from the head, the rest tail
_OBS_MIN_REPLY = 40  # a shorter assistant reply ("Done.", an acknowledgement) says nothing


def _fact_lines(text: str, facts: Sequence[FactLike]) -> list[int]:
    """The indexes of the lines of ``text`` a fact came from: a line the fact's text, fix
    or quote holds (8+ characters), or one holding its value with its unit ("16 passed")."""
    lines = text.splitlines()
    wants: list[str] = []
    pairs: list[tuple[str, str]] = []
    for f in facts:
        wants += [f.text, f.fix or "", f.source.quote]
        if f.value and f.unit:
            pairs.append((f.value, f.unit))
    hay = "\n".join(w for w in wants if w).casefold()
    out: list[int] = []
    for i, line in enumerate(lines):
        s = " ".join(line.split()).casefold()
        quoted = len(s) >= 8 and s in hay
        if quoted or any(v.casefold() in s and u.casefold() in s for v, u in pairs):
            out.append(i)
    return out


def _obs_clip(text: str, facts: Sequence[FactLike] = (), limit: int = _OBS_MAX) -> str:
    """An observation's text, whitespace kept. One longer than ``limit`` characters keeps
    its head, the lines the facts of its step came from (with two lines on each side) and
    its tail; with no such line, its first three quarters of ``limit`` and the last quarter.
    Whatever is cut is not searchable."""
    text = text.strip()
    if len(text) <= limit:
        return text
    hits = _fact_lines(text, facts) if facts else []
    if not hits:
        head = int(limit * _OBS_FALLBACK_HEAD)
        return f"{text[:head]} … {text[-(limit - head) :]}"
    lines = text.splitlines()
    keep: set[int] = set()
    for i in hits:
        keep.update(range(max(0, i - _OBS_AROUND), min(len(lines), i + _OBS_AROUND + 1)))
    head, tail = int(limit * _OBS_HEAD), int(limit * _OBS_TAIL)
    parts: list[str] = [text[:head]]
    room = limit - head - tail
    last = -2
    for i in sorted(keep):
        line = lines[i]
        if room - len(line) < 0:
            break
        parts.append(line if i == last + 1 else f"… {line}")
        room -= len(line) + 1
        last = i
    parts.append(f"… {text[-tail:]}")
    return "\n".join(parts)


_OBS_TYPES = ("user/message", "assistant/message", "tool/result")
_SAID = frozenset({"user", "assistant"})  # whose words an observation keeps whole


def _call_text(name: str, arguments: str) -> str:
    """A call as the record holds it: its name, its command or path first, then every other
    string argument (what an edit wrote, a search's pattern), redacted."""
    head, rest = _call_parts(arguments)
    return "\n".join([f"{redact(name).text} {head}", *rest])


def observations(
    session: Session, facts: Iterable[FactLike] | None = None
) -> tuple[Candidate, ...]:
    """One verbatim (redacted, clipped: see ``_obs_clip``) observation per message of the
    whole log, not only of its surface: what a compaction took off the surface was still
    said. A user message (the person's, or what the harness relayed in their turn: an
    agent's error, an environment note), an assistant reply (its text and reasoning of 40+
    characters, and each call with its arguments: the command, the path, what an edit
    wrote) and each tool output, so a later question can be answered from what was said,
    not only from what the facts distilled. The same text twice in one session (a replaced
    message copied forward) is kept once. ``facts`` (default ``Session.facts()``) say where
    a long tool output is clipped."""
    out: list[Candidate] = []
    sid = session_key(session)
    got = list(facts_of(session) if facts is None else facts)
    by_seq: dict[int, list[FactLike]] = {}
    for f in got:
        for seq in (f.source.seq, *f.evidence):
            by_seq.setdefault(seq, []).append(f)
    calls: dict[str, tuple[str, int]] = {}
    seen: set[tuple[str, str]] = set()
    _typed_at_once(session)
    for seq, event in enumerate(session.raw_events):
        if event.get("type") not in _OBS_TYPES or message_of(event) is None:
            continue
        msg = session.message_at(seq)
        turn = session.index.turn_of(seq)
        extra = {"turn": turn.turn} if turn is not None else {}
        items: list[tuple[str, str, list[FactLike]]] = []
        if msg.role == "user" and not msg.tool_results:
            who = "user" if msg.source.kind == "user" else msg.source.kind or "user"
            said_text = msg.text  # rendered once (``text`` joins the blocks at each call)
            if not is_filler(said_text):  # "ok, thanks" says nothing to find later
                items.append((who, said_text, []))
        elif msg.role == "assistant":
            # its text (a short "Done." says nothing), its reasoning, and its calls
            reasoning = [
                getattr(b, "text", "").strip() for b in msg.content if b.type == "reasoning"
            ]
            reply = msg.text.strip()
            said = [reply] if len(reply) >= _OBS_MIN_REPLY else []
            said += [t for t in reasoning if len(t) >= _OBS_MIN_REPLY]
            for c in msg.tool_calls:
                calls[c.id] = (redact(c.name).text, seq)
                said.append(_call_text(c.name, c.arguments))
            if said:
                items.append(("assistant", "\n".join(said), by_seq.get(seq, [])))
        for r in msg.tool_results:
            name, call_seq = calls.get(r.tool_call_id, ("tool", -1))
            near = by_seq.get(seq, []) + by_seq.get(call_seq, [])
            items.append((name, message_text(r), near))
        for who, raw, near in items:
            text = _obs_clip(redact(raw).text, near, _SAID_MAX if who in _SAID else _OBS_MAX)
            if not text or (who, text) in seen:
                continue
            seen.add((who, text))
            src = Source(sid, seq, text, "rule")
            out.append(Candidate("observation", f"{who}@{seq}", text, src, extra=extra))
    return tuple(out)


def is_agent_log(session: Session) -> bool:
    """Whether ``session`` is an agent at work rather than a conversation: its log holds
    tool output (a result event, a result an importer carried in a user message, or the
    environment's output a harness relayed in the user's turn, as SWE-agent's text actions
    get it). Its memories are found by their words, with no neighbours (``Memory.ingest``
    marks them)."""
    for ev in session.raw_events:
        if ev.get("type") == "tool/result":
            return True
        msg = message_of(ev) if ev.get("type") == "user/message" else None
        content = msg.get("content") if msg is not None else None
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool-result" for b in content
        ):
            return True
        source = msg.get("source") if msg is not None else None
        if isinstance(source, dict) and source.get("form") == "relay":
            return True  # the environment's output relayed in the user's turn (SWE-agent)
    return False


# -- the merge rule --------------------------------------------------------------------------
def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def merge_target(candidate: Candidate, nodes: Sequence[Node]) -> Node | None:
    """The active node ``candidate`` merges into, or None (insert it): an entity with the
    same name or alias (case-insensitive) in the same project (``extra["scope"]``, see
    ``project_scope``; a node or candidate without one matches any); another node of the
    candidate's type whose text (at least 8 chars) equals the candidate's or contains it, or
    is contained in it (equal text wins over a substring). Workspace and episode candidates
    never merge."""
    if candidate.type in ("workspace", "episode"):
        return None
    same = [n for n in nodes if n.type == candidate.type and n.active]
    if candidate.type == "entity":
        want = candidate.name.casefold()
        scope = candidate.extra.get("scope")
        for n in same:
            other = n.extra.get("scope")
            if scope is not None and other is not None and other != scope:
                continue  # the same key in another project is another fact
            if want in {n.name.casefold(), *(a.casefold() for a in n.aliases)}:
                return n
        return None
    text = _norm(candidate.text)
    if len(text) < 8:
        return None
    partial: Node | None = None
    for n in same:
        other = _norm(n.text)
        if len(other) < 8:
            continue
        if other == text:
            return n
        if partial is None and (text in other or other in text):
            partial = n
    return partial


def told_by(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, str]:
    """``extra["from"]`` of a node said in two sessions: the words of both (a question may
    name either's project or agent), the first 48 (a node said in every session of a
    year does not index every session's id)."""
    a, b = old.get("from"), new.get("from")
    words = [w for x in (a, b) if isinstance(x, str) for w in x.split()]
    return {"from": " ".join(list(dict.fromkeys(words))[:48])} if words else {}


def _kept_text(old: str, new: str) -> str:
    """The longer text, unless one contains the other and is more than max(80, 2×) the
    shorter's length: then the shorter (a long text wrapping a short fact adds noise)."""
    short, long = sorted((old, new), key=len)
    if _norm(short) in _norm(long) and len(long) > max(80, 2 * len(short)):
        return short
    return long


def merged(node: Node, candidate: Candidate) -> Node:
    """``node`` with ``candidate`` merged in: the kept text (``_kept_text``), aliases
    unioned (the candidate's name when it differs), the source appended, ``until`` taken
    from the newer statement when it names one, ``fail``/``fix`` filled when missing.
    A keyed entity (a setting, a project fact: ``extra["key"]``) takes the candidate's
    text and value when its value differs (a later value supersedes; the old one is kept in
    ``extra["earlier"]``). Times are the store's to set."""
    aliases = list(node.aliases)
    seen = {node.name.casefold(), *(a.casefold() for a in aliases)}
    if candidate.name and candidate.name.casefold() not in seen and node.type == "entity":
        aliases.append(candidate.name)
    sources = (
        node.sources if candidate.source in node.sources else (*node.sources, candidate.source)
    )
    until, until_at = node.until, node.until_at
    if candidate.until_at is not None:
        until, until_at = candidate.until, candidate.until_at
    text = _kept_text(node.text, candidate.text)
    extra = dict(node.extra)
    new_value = candidate.extra.get("value")
    if node.type == "entity" and candidate.extra.get("key") and new_value is not None:
        old_value = node.extra.get("value")
        if old_value != new_value:
            text = candidate.text
            earlier = [e for e in extra.get("earlier", []) if isinstance(e, str)]
            if isinstance(old_value, str) and old_value not in earlier:
                earlier.append(old_value)
            extra.update(candidate.extra)
            extra["earlier"] = earlier[-5:]
        else:
            extra.update({k: v for k, v in candidate.extra.items() if k not in extra})
    extra.update(told_by(node.extra, candidate.extra))
    return replace(
        node,
        text=text,
        aliases=tuple(aliases),
        sources=sources,
        until=until,
        until_at=until_at,
        fail=node.fail or candidate.fail,
        fix=node.fix or candidate.fix,
        extra=extra,
    )


# -- the merge rule, indexed -----------------------------------------------------------------
MERGED_TYPES = ("entity", "preference", "decision", "experience")  # what merge_target merges
_HEAD = 8  # the shortest text the merge rule compares (``merge_target``)
_BLOCK = 512  # texts per searched block: a change rejoins one block, not the whole pool


class _Block:
    """Up to ``_BLOCK`` normalised texts joined by NUL: ``str.find`` scans them in C."""

    __slots__ = ("blob", "dirty", "ids", "starts")

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.blob = ""
        self.starts: list[int] = []
        self.dirty = False


class _Pool:
    """The active nodes of one type, indexed for the merge rule."""

    def __init__(self) -> None:
        self.nodes: dict[str, Node] = {}
        self.norm: dict[str, str] = {}  # id -> normalised text (8 chars or more)
        self.equal: dict[str, set[str]] = {}  # normalised text -> ids
        self.heads: dict[str, dict[int, int]] = {}  # its first 8 chars -> {length: texts}
        self.names: dict[str, set[str]] = {}  # casefolded name or alias -> ids (entities)
        self.blocks: list[_Block] = []
        self.block_of: dict[str, _Block] = {}

    def add(self, node: Node) -> None:
        self.discard(node.id)
        self.nodes[node.id] = node
        if node.type == "entity":
            for key in {node.name.casefold(), *(a.casefold() for a in node.aliases)}:
                self.names.setdefault(key, set()).add(node.id)
        text = _norm(node.text)
        if len(text) < _HEAD:
            return
        self.norm[node.id] = text
        self.equal.setdefault(text, set()).add(node.id)
        lengths = self.heads.setdefault(text[:_HEAD], {})
        lengths[len(text)] = lengths.get(len(text), 0) + 1
        if not self.blocks or len(self.blocks[-1].ids) >= _BLOCK:
            self.blocks.append(_Block())
        block = self.blocks[-1]
        block.ids.append(node.id)
        if not block.dirty:  # appended in place: no rejoin of the block
            block.starts.append(len(block.blob))
            block.blob += text + "\x00"
        self.block_of[node.id] = block

    def discard(self, node_id: str) -> None:
        node = self.nodes.pop(node_id, None)
        if node is None:
            return
        for key in {node.name.casefold(), *(a.casefold() for a in node.aliases)}:
            _drop(self.names, key, node_id)
        text = self.norm.pop(node_id, None)
        if text is None:
            return
        _drop(self.equal, text, node_id)
        lengths = self.heads[text[:_HEAD]]
        lengths[len(text)] -= 1
        if not lengths[len(text)]:
            del lengths[len(text)]
            if not lengths:
                del self.heads[text[:_HEAD]]
        block = self.block_of.pop(node_id)
        block.ids.remove(node_id)
        block.dirty = True

    def containing(self, text: str) -> set[str]:
        """The ids whose text contains ``text``."""
        out: set[str] = set()
        for block in self.blocks:
            if block.dirty:
                texts = [self.norm[i] for i in block.ids]
                block.blob = "".join(t + "\x00" for t in texts)
                block.starts, at = [], 0
                for t in texts:
                    block.starts.append(at)
                    at += len(t) + 1
                block.dirty = False
            at = block.blob.find(text)
            while at >= 0:
                nid = block.ids[bisect_right(block.starts, at) - 1]
                if text in self.norm[nid]:
                    out.add(nid)
                at = block.blob.find(text, at + 1)
        return out

    def contained(self, text: str) -> set[str]:
        """The ids whose text (8 chars or more) ``text`` contains: such a text starts at
        one of ``text``'s positions with its first 8 chars and has one of the lengths
        texts starting so have, so it is ``text[at : at + length]``, looked up whole."""
        out: set[str] = set()
        size = len(text)
        for at in range(size - _HEAD + 1):
            lengths = self.heads.get(text[at : at + _HEAD])
            if lengths:
                for length in lengths:
                    if at + length <= size:
                        out.update(self.equal.get(text[at : at + length], ()))
        return out


def _drop(index: dict[str, set[str]], key: str, node_id: str) -> None:
    ids = index.get(key)
    if ids is not None:
        ids.discard(node_id)
        if not ids:
            del index[key]


class MergeIndex:
    """``merge_target`` over a store's active nodes without reading them all at each write:
    the nodes of ``MERGED_TYPES`` kept in memory by type, with what the rule compares
    indexed (an entity's names, a text's normalised form, its first 8 chars, and the
    texts joined for a substring search), kept in step with the store by its revision
    (``store.changes``: only what was written since; everything when the store cannot
    say; ``match_changes`` where the store has it, which leaves out what the rule does not
    compare, such as the sources). ``target`` and ``entity`` give the node ``merge_target``
    and a scan of the entities would find, with at least what the rule compares; the caller
    reads it from the store and checks it before it writes on it (a batch
    rolled back leaves nodes here that are not there), and calls ``reset`` when it does
    not match. Thread-safe.

    Inside a write (``sync(defer=True)``) the few nodes other writers wrote since the last
    sync are not filed into the pools while every writer waits: they are kept aside
    (``_aside``, each with what the rule compares of it worked out once), the answers
    combine the pools (without their ids) with them, and ``flush`` files them after the
    write, outside its lock."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._pools: dict[str, _Pool] = {}
        self._rev = -1
        self._pending = False
        self._aside: dict[str, _Aside | None] = {}  # id -> node not filed yet (None: gone)
        self._asked = 0  # answers given while nodes are aside
        self._version = 0  # bumped by every change of the pools
        self._scanned: dict[tuple[str, str], tuple[int, set[str]]] = {}  # ``scan_ahead``

    def reset(self) -> None:
        """Forget everything: the next ``sync`` reads every node again."""
        with self._lock:
            self._pools = {}
            self._rev = -1
            self._pending = False
            self._aside = {}
            self._version += 1

    def unsettled(self) -> None:
        """Writes went in inside a caller's batch: this index holds them before the batch
        commits (or rolls them back)."""
        with self._lock:
            self._pending = True

    def settle(self) -> None:
        """Called outside any batch: after writes inside a caller's batch, whether it
        committed or rolled back, every node is read again at the next ``sync``."""
        with self._lock:
            if self._pending:
                self.reset()

    @property
    def revision(self) -> int:
        """The store revision this index is in step with (-1: none yet)."""
        return self._rev

    def committed(self, synced: int, revision: int | None) -> None:
        """The write that synced at revision ``synced`` (inside its transaction) and put
        every node it wrote of ``MERGED_TYPES`` here committed as ``revision``: when that is
        the next one, no other write came in between, and the index is in step with it
        without reading it back."""
        with self._lock:
            if revision is not None and self._rev == synced and revision == synced + 1:
                self._rev = revision

    def sync(self, store: MemoryStore, *, defer: bool = False) -> None:
        """Bring the index in step with ``store`` (inside a write, it sees what the
        transaction wrote too). ``defer``: a few nodes written since are kept aside
        rather than filed (inside a write's lock; ``flush`` files them)."""
        with self._lock:
            if not defer:
                self.flush()
            # the revision and what the rule compares of the nodes written since, in one
            # read where the store can (``SQLiteStore.match_changes``)
            match = getattr(store, "match_changes", None) if self._rev >= 0 else None
            if match is not None:
                rev, delta = match(self._rev)
                if rev == self._rev:
                    return
            else:
                rev = store.revision()
                if rev == self._rev:
                    return
                delta = store.changes(self._rev) if self._rev >= 0 else None
            if delta is None:
                self._pools = {}
                self._aside = {}
                for node in store.nodes(types=MERGED_TYPES):
                    self.put(node)
            elif defer and len(self._aside) + len(delta.gone) + len(delta.nodes) <= _ASIDE:
                for nid in delta.gone:
                    self._aside[nid] = None
                for node in delta.nodes:
                    self._aside[node.id] = _Aside(node)
            else:
                self.flush()
                for nid in delta.gone:
                    self.discard(nid)
                for node in delta.nodes:
                    self.put(node)
            self._rev = rev

    def flush(self) -> None:
        """File the nodes kept aside (``sync(defer=True)``) into the pools."""
        with self._lock:
            aside, self._aside, self._asked = self._aside, {}, 0
            for nid, kept in aside.items():
                if kept is None:
                    self.discard(nid)
                else:
                    self.put(kept.node)

    def _consult(self) -> dict[str, _Aside | None]:
        """The nodes aside for an answer (under the lock); filed instead after a few
        answers (a long write, such as an ingest, asks once per candidate)."""
        if self._aside:
            self._asked += 1
            if self._asked > _ASKED:
                self.flush()
        return self._aside

    def put(self, node: Node) -> None:
        """``node`` as the store now holds it (written by this process)."""
        with self._lock:
            self._aside.pop(node.id, None)  # this write's node is newer than one aside
            self._version += 1
            for t, pool in self._pools.items():
                if t != node.type:
                    pool.discard(node.id)
            if node.type in MERGED_TYPES and node.active:
                self._pools.setdefault(node.type, _Pool()).add(node)
            elif node.type in self._pools:
                self._pools[node.type].discard(node.id)

    def discard(self, node_id: str) -> None:
        with self._lock:
            self._aside.pop(node_id, None)
            self._version += 1
            for pool in self._pools.values():
                pool.discard(node_id)

    def scan_ahead(self, candidates: Sequence[Candidate]) -> None:
        """Before a write's lock: search the pools for the texts ``candidates`` contain or
        are contained in (the scan of every text ``target`` makes), kept for ``target``
        while the pools stay as they are (nodes kept aside inside the write leave them so;
        ``target`` adds what they match)."""
        with self._lock:
            self._scanned = {}
            for cand in candidates:
                pool = self._pools.get(cand.type)
                if pool is None or cand.type == "entity" or cand.type not in MERGED_TYPES:
                    continue
                text = _norm(cand.text)
                if len(text) >= _HEAD and not pool.equal.get(text):
                    found = pool.containing(text) | pool.contained(text)
                    self._scanned[(cand.type, text)] = (self._version, found)

    def target(self, candidate: Candidate) -> Node | None:
        """What ``merge_target(candidate, <the store's active nodes>)`` gives."""
        if candidate.type in ("workspace", "episode") or candidate.type not in MERGED_TYPES:
            return None
        with self._lock:
            aside = self._consult()
            kept = [k for k in aside.values() if k is not None and k.node.type == candidate.type]
            pool = self._pools.get(candidate.type)
            if pool is None and not kept:
                return None
            nodes = {k.node.id: k.node for k in kept}
            if candidate.type == "entity":
                want = candidate.name.casefold()
                scope = candidate.extra.get("scope")
                ids = [k.node.id for k in kept if want in k.names]
                if pool is not None:
                    ids += [i for i in pool.names.get(want, ()) if i not in aside]
                    nodes.update((i, pool.nodes[i]) for i in ids if i not in nodes)
                ids = [
                    nid
                    for nid in ids
                    if scope is None
                    or (other := nodes[nid].extra.get("scope")) is None
                    or other == scope
                ]
                return nodes[min(ids)] if ids else None
            text = _norm(candidate.text)
            if len(text) < _HEAD:
                return None
            same = [k.node.id for k in kept if k.norm == text]
            if pool is not None:
                same += [i for i in pool.equal.get(text, ()) if i not in aside]
            if not same:
                same = [k.node.id for k in kept if k.norm and (text in k.norm or k.norm in text)]
                if pool is not None:
                    scanned = self._scanned.get((candidate.type, text))
                    if scanned is not None and scanned[0] == self._version:
                        found = scanned[1]  # the pools have not changed since
                    else:
                        found = pool.containing(text) | pool.contained(text)
                    same += [i for i in found if i not in aside]
            if not same:
                return None
            first = min(same)
            return nodes[first] if first in nodes else pool.nodes[first]  # type: ignore[union-attr]

    def entity(self, name: str) -> Node | None:
        """The first active entity (in id order) named or aliased ``name`` (case ignored)."""
        with self._lock:
            aside = self._consult()
            want = name.casefold().strip()
            pool = self._pools.get("entity")
            found = {
                k.node.id: k.node
                for k in aside.values()
                if k is not None and k.node.type == "entity" and want in k.names
            }
            if pool is not None:
                found.update((i, pool.nodes[i]) for i in pool.names.get(want, ()) if i not in aside)
            return found[min(found)] if found else None


_ASIDE = 64  # the most nodes kept aside (``MergeIndex.sync(defer=True)``); more are filed
_ASKED = 8  # answers given with nodes aside before they are filed (``_consult``)


def _names(node: Node) -> set[str]:
    """A node's name and aliases, casefolded (what an entity is found by)."""
    return {node.name.casefold(), *(a.casefold() for a in node.aliases)}


class _Aside:
    """A node written by another writer, kept aside inside a write (``MergeIndex``): what
    the merge rule compares of it, worked out once. Only an active node of a merged type
    counts (the pools hold no other)."""

    __slots__ = ("names", "node", "norm")

    def __init__(self, node: Node) -> None:
        self.node = node
        counted = node.type in MERGED_TYPES and node.active
        self.names = _names(node) if counted and node.type == "entity" else set()
        text = _norm(node.text) if counted else ""
        self.norm = text if len(text) >= _HEAD else ""  # "": compared by no text rule


def still_matches(indexed: Node, fresh: Node | None) -> bool:
    """Whether ``fresh`` (the store's node of ``indexed``'s id) is still what the index
    matched on: active, the same type, names and normalised text."""
    return (
        fresh is not None
        and fresh.active
        and fresh.type == indexed.type
        and fresh.name == indexed.name
        and fresh.aliases == indexed.aliases
        and _norm(fresh.text) == _norm(indexed.text)
        and fresh.extra.get("scope") == indexed.extra.get("scope")
    )
