"""Getting memories in: rule extraction from a session, observations, and the merge rule.

The dsh-trivium seed's deterministic extractor, as pure functions (no store, no model): a
session's surface goes in, ``Candidate``s and the reasons for what was left out come out.
The store decides where each candidate lands (``merge_target`` / ``merged``).

What is read
------------
Only user messages whose ``source.kind`` is ``user`` feed the preference, decision and
entity rules (a plugin-injected "user" message is not testimony), and tool results feed
experiences. Every text is redacted (``ctxsdk.session.redact``) before anything else (before
any clipping too), so a credential never reaches a candidate, a quote or a drop reason; tool
names are redacted as well. ``Memory`` then passes every candidate through its door
(``_door``) before writing it. Sentences are split after
``。`` ``！`` ``？`` ``!`` ``?``, at a newline, and after a ``.`` followed by a space.

The rules, in the order a sentence meets them
---------------------------------------------
1. **secret**: a sentence that held a secret (a redaction hit) is dropped (only that one):
   a memory distilled from "the key is …" would only point at a withheld value. Words alone
   ("the token budget", "a password reset flow", "tokenizer") are no secret: the decision is
   the redaction engine's alone.
2. **one-shot edit** (把这[个份]?文件, 改一下…文件, "just change/edit this file", "only this
   once") drops the sentence: it is about one edit, not how to work.
3. **chit-chat** (嗯好的, thanks, ok, weather small talk) drops the sentence.
4. **decision** cue (先别动, 下周再, 采用方案, 就用这/那个, 不要改成, 我们决定, postpone,
   defer until, go with option/plan/方案, we decided, let's go with): a decision, ``decided``
   linked to an entity named in the sentence, else in an adjacent sentence, else (when the
   turn has one decision cue) the turn's first entity; ``until`` parsed (below). "方案 X"
   (and "option X" / "plan X") also mints that entity. A decision cue wins over a preference
   cue in the same sentence (one sentence, one memory).
5. **preference** cue (记住, 以后都, 别再, 不要再, 从现在起, always, from now on, never again,
   remember this/that/to, please always, make sure to always, don't ever): a preference,
   ``about`` linked only to entities named inside the sentence. A cue sentence with almost
   nothing after the cue ("记住：" then a newline) is joined with the next one.
6. anything else: dropped as "no cue".

**Entities** are proper names seen at least twice across the user sentences (secret ones
excluded): backticked (2-64 chars), CamelCase (``AuthGateway``, ``TriviumDB``), Capitalized
words joined by ``_`` / ``-`` (``DeepSeek_Harness``, ``X-Request-Id``), kebab-case lowercase
(``dsh-trivium``), ALLCAPS of 3 or more. Not names: the stop list (GET, JSON, HTTP, TODO,
THE, the session's and the ctx tool names, common hyphenated English words), edge-label
numbers (``decided-12``), ``session-<hex>``, errno codes (``E[A-Z]{3,}``). A CJK term, even
quoted (「鉴权」), is never a name.

**Experiences**: within one (turn, tool name), the first failed result (``is_error``)
followed by an ok one gives ``{fail, fix}`` (fail = the error text, fix = the command of the
call that worked), ``fixed`` linked to an entity named in the tool text, else in the turn's
user text, else in the preceding user message.

**until**: the label as written and an ISO instant, relative to ``now`` (default: when the
sentence was said, so a log read a month later keeps its dates). 下周 / next week = the
next Monday; 下周五 = Friday of next week; 周五 / Friday / "until|by Friday" = the next such
day (a week ahead when it is today); 周末 = the next Saturday; 明天 / tomorrow; N月N日 = the
next such date; an ISO date as given (a 2020 date is stale). All instants are 00:00 UTC of
that day: the moment the decision stops holding.

Caps per batch (``Caps``): entity 8, preference 8, decision 6, experience 4 (a MEMORY.md
import uses ``IMPORT_CAPS``: 24/24/12/8, and at most 24 items and 3,000 characters of text in
the whole batch). Texts and quotes are clipped to 240 chars;
candidates are deduplicated on type|name|text (case and spacing ignored).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta

from ..session import Session, redact, redact_json
from ._door import refusal, screen, session_key
from ._model import Candidate, Node, Source

__all__ = [
    "DEFAULT_CAPS",
    "IMPORT_CAPS",
    "Caps",
    "Extraction",
    "clip",
    "extract",
    "held_secret",
    "merge_target",
    "merged",
    "observations",
    "parse_until",
    "refuse_secret",
]

LINE_MAX = 240
_NAME_MAX = 40


@dataclass(frozen=True, slots=True)
class Caps:
    """How many candidates of each type one batch may propose (the rest are dropped as
    "over the cap"): a long session must not flood the memory. ``items`` and ``chars``,
    when set, bound the whole batch (its count and the characters of its texts), applied
    after the per-type caps in the batch's order, entities first; the rest are dropped as
    "over the batch cap"."""

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


DEFAULT_CAPS = Caps()
# A MEMORY.md import: the seed's 24/24/12/8, and its batch guard of 3,000 characters of
# text and 24 items in all.
IMPORT_CAPS = Caps(entity=24, preference=24, decision=12, experience=8, items=24, chars=3000)


@dataclass(frozen=True, slots=True)
class Extraction:
    """What a batch proposes (``candidates``: entities first, then preferences, decisions,
    experiences) and what it left out, as (text, why) with why one of "secret", "one-shot
    edit", "chit-chat", "no cue", "over the cap", "over the batch cap", "duplicate". A
    secret's text is redacted."""

    candidates: tuple[Candidate, ...] = ()
    dropped: tuple[tuple[str, str], ...] = field(default=())


def clip(text: str, limit: int = LINE_MAX) -> str:
    """``text`` on one line of at most ``limit`` chars (an ellipsis marks a cut)."""
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


# -- secrets ---------------------------------------------------------------------------------
def refuse_secret(text: str) -> str | None:
    """Why a memory refuses ``text`` (naming the kinds of secret found), or None when it
    keeps it, its secrets redacted: the memory's door (``_door``). Only a text that is
    nothing but credentials is refused; ordinary words ("token budget", "password reset")
    are kept."""
    return refusal(text)


def held_secret(text: str) -> bool:
    """Whether ``text`` held a secret (a redaction hit, or a ``[REDACTED:…]`` marker): rule
    extraction drops such a sentence."""
    return screen(text).held_secret


# -- sentences and cues ----------------------------------------------------------------------
_SPLIT = re.compile(r"(?<=[。！？!?])|\n|(?<=\.) +")
_PREFERENCE = re.compile(
    # "always" only as an instruction (a clause opening with it, "please always", "always
    # do"), not as a report ("it always passes when I run it locally")
    r"记住|以后都|以后一律|别再|不要再|从现在起|从今以后"
    r"|(?:^|[,;:!?]\s*|\bplease\s+|\bmake sure to\s+|\b(?:you|we) should\s+)always\b"
    r"|\balways do\b"
    r"|from now on|never again|remember (?:this|that|to)(?![A-Za-z])|don'?t ever|do not ever",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"先别动|下周再|采用方案|就用这|就用那|不要改成|我们决定|决定采用"
    r"|(?<![A-Za-z])postpone|defer(?:red)? until|go with (?:option|plan|方案)"
    r"|we(?:'ve| have)? decided|let'?s go with|let us go with",
    re.IGNORECASE,
)
_PLAN = re.compile(
    r"方案\s*([A-Z0-9一二三四五])(?![A-Za-z0-9])|(?<![A-Za-z])(option|plan)\s+([A-Z0-9])(?![A-Za-z0-9])",
    re.IGNORECASE,
)
_ONE_SHOT = re.compile(
    r"把这[个份]?文件|改一下.{0,20}?文件|只改这[个份]?文件"
    r"|just (?:change|edit|fix|update) (?:this|that|the) file|only this once|just this once",
    re.IGNORECASE,
)
_CHIT_WORDS = re.compile(
    r"^(?:嗯+|哦+|噢+|好的?|好吧|行|可以|收到|谢谢(?:你|啦)?|多谢|哈+|嘿+|你好|早上好|晚安"
    r"|ok(?:ay)?|k|thanks?(?: you)?(?: so much)?|thx|ty|cool|great|nice|sure|yes|yep|yeah"
    r"|no problem|got it|lol|hi|hello|hey|bye|good (?:morning|night)|that'?s all(?: for today)?"
    r"|[\s,，.。!！?？~～、…:：;；])+$",
    re.IGNORECASE,
)
_WEATHER = re.compile(
    r"天气|下雨|晴天|好晒|好热|好冷|阴天|(?<![A-Za-z])(?:weather|sunny|raining|rainy)(?![A-Za-z])",
    re.IGNORECASE,
)
_LIST_MARK = re.compile(r"^\s*(?:[-*+•>]|\d+[.)])\s+")


def _sentences(text: str) -> list[str]:
    """Split after 。！？!? , at newlines and after ". "; a sentence that is only a cue and
    punctuation ("记住：") is joined with the next one (a wrapped cue still extracts)."""
    parts = [p.strip() for p in _SPLIT.split(text)]
    parts = [_LIST_MARK.sub("", p) for p in parts if p]
    out: list[str] = []
    carry = ""
    for p in parts:
        if carry:
            p = f"{carry} {p}"
            carry = ""
        if _PREFERENCE.fullmatch(p.rstrip(" ，,：:")):
            carry = p
            continue
        out.append(p)
    if carry:
        out.append(carry)
    return out


def _is_chit_chat(sentence: str) -> bool:
    return bool(_CHIT_WORDS.match(sentence) or _WEATHER.search(sentence))


# -- names -----------------------------------------------------------------------------------
_A = r"(?<![A-Za-z0-9_\-./])"  # not inside an identifier, a path or a version
_Z = r"(?![A-Za-z0-9_\-])"
_BACKTICK = re.compile(r"`([^`\n]{2,64})`")
_FAMILIES = (
    re.compile(_A + r"[A-Z][A-Za-z0-9]*(?:[_-][A-Z][A-Za-z0-9]*)+" + _Z),  # DeepSeek_Harness
    re.compile(_A + r"[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+" + _Z),  # AuthGateway, TriviumDB
    re.compile(_A + r"[a-z][a-z0-9]+(?:-[a-z0-9]+)+" + _Z),  # dsh-trivium
    re.compile(_A + r"[A-Z][A-Z0-9]{2,}" + _Z),  # README
)
_STOP = frozenset(
    s.casefold()
    for s in (
        "GET POST PUT PATCH DELETE HEAD JSON JSONL YAML TOML HTTP HTTPS HTML CSS SQL URL URI API"
        " CLI SDK TODO FIXME NOTE XXX THE AND NOT FOR BUT YOU ALL ASCII UTF UTC ISO CPU GPU RAM"
        " OK EOF README.md ctx_find ctx_read ctx_remember ctx_link bash read write edit grep"
        " follow-up read-only built-in up-to-date so-called re-run e-mail check-in opt-in"
        " opt-out one-shot long-term short-term real-time end-to-end well-known"
    ).split()
)
_NOISE = (
    re.compile(
        r"(?:about|decided|broke|fixed|same_as|in_workspace|from_session|continues|forks_from)"
        r"[-_]?\d+",
        re.IGNORECASE,
    ),
    re.compile(r"session-[0-9a-f]+", re.IGNORECASE),
    re.compile(r"E[A-Z]{3,}"),
    re.compile(r"[\d\W_]+"),
)


def _is_name(name: str, stop: frozenset[str]) -> bool:
    if not 2 <= len(name) <= 64 or name.casefold() in stop:
        return False
    return not any(n.fullmatch(name) for n in _NOISE)


def _names_in(text: str, stop: frozenset[str] = _STOP) -> list[str]:
    """The proper names of ``text`` in order of appearance (a span is claimed once:
    backticks first, then the families in order)."""
    found: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []

    def free(a: int, b: int) -> bool:
        return all(b <= x or a >= y for x, y in taken)

    for m in _BACKTICK.finditer(text):
        taken.append(m.span())
        name = m.group(1).strip()
        if _is_name(name, stop):
            found.append((m.start(), name))
    for family in _FAMILIES:
        for m in family.finditer(text):
            if free(*m.span()):
                taken.append(m.span())
                if _is_name(m.group(0), stop):
                    found.append((m.start(), m.group(0)))
    return [n for _, n in sorted(found)]


def _plans_in(text: str) -> list[str]:
    """The "方案 X" / "option X" / "plan X" names a decision mints."""
    out: list[str] = []
    for m in _PLAN.finditer(text):
        if m.group(1):
            out.append(f"方案 {m.group(1).upper()}")
        else:
            out.append(f"{m.group(2).lower()} {m.group(3).upper()}")
    return out


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
    """One user sentence: its message seq, turn key, index in the message and text."""

    seq: int
    turn: int
    index: int
    text: str  # redacted


@dataclass(frozen=True, slots=True)
class _Result:
    seq: int
    turn: int
    tool: str
    ok: bool
    text: str  # redacted result text
    command: str  # the call's command (redacted)


def _turn_of(starts: Sequence[tuple[int, int, int]], seq: int) -> int:
    for turn, start, end in starts:
        if start <= seq <= end:
            return turn
    return -1 - seq  # outside any turn (an inherited prefix): its own group


def _command(arguments: str) -> str:
    """A call's command, redacted: the one string argument of a shell-like call, else the
    JSON with each string in it redacted (a secret JSON escaped, its quotes and newlines
    written ``\\"`` and ``\\n``, is redacted as it was said)."""
    try:
        args = json.loads(arguments)
        if isinstance(args, dict):
            for key in ("cmd", "command", "script", "path", "file_path"):
                if isinstance(args.get(key), str):
                    return redact(str(args[key])).text
        return json.dumps(redact_json(args), ensure_ascii=False)
    except (ValueError, RecursionError):  # not JSON, or nested past what Python walks
        return redact(arguments).text


def _time_of(session: Session, seq: int) -> datetime:
    raw = session.raw_events[seq] if 0 <= seq < len(session.raw_events) else {}
    ms = raw.get("time")
    if isinstance(ms, int) and not isinstance(ms, bool):
        return datetime.fromtimestamp(ms / 1000, UTC)
    return datetime.now(UTC)


def _read(session: Session) -> tuple[list[_Said], list[_Result], list[tuple[int, int, str]]]:
    """The user sentences, the tool results in order, and the user messages (seq, turn,
    redacted text) of the session's surface."""
    spans = [
        (t.turn, t.start_seq, t.end_seq if t.end_seq is not None else len(session.raw_events))
        for t in session.turns()
    ]
    said: list[_Said] = []
    results: list[_Result] = []
    messages: list[tuple[int, int, str]] = []
    calls: dict[str, tuple[str, str]] = {}
    for node in session.surface():
        msg = node.message
        turn = _turn_of(spans, node.seq)
        for call in msg.tool_calls:
            calls[call.id] = (redact(call.name).text, _command(call.arguments))
        if msg.role == "user" and msg.source.kind == "user":
            text = redact(msg.text).text
            messages.append((node.seq, turn, text))
            for i, s in enumerate(_sentences(text)):
                said.append(_Said(node.seq, turn, i, s))
        for res in msg.tool_results:
            name, command = calls.get(res.tool_call_id, ("tool", ""))
            results.append(
                _Result(node.seq, turn, name, not res.is_error, redact(res.text).text, command)
            )
    return said, results, messages


# -- extraction ------------------------------------------------------------------------------
def _key(c: Candidate) -> str:
    return "|".join((c.type, " ".join(c.name.casefold().split()), " ".join(c.text.split())))


def _finish(cands: Iterable[Candidate], dropped: list[tuple[str, str]], caps: Caps) -> Extraction:
    """Dedupe on type|name|text, cap per type, order entities first."""
    seen: set[str] = set()
    counts: dict[str, int] = {}
    kept: list[Candidate] = []
    for c in cands:
        k = _key(c)
        if k in seen:
            dropped.append((c.text, "duplicate"))
            continue
        seen.add(k)
        cap = caps.of(c.type)
        if cap is not None and counts.get(c.type, 0) >= cap:
            dropped.append((c.text, "over the cap"))
            continue
        counts[c.type] = counts.get(c.type, 0) + 1
        kept.append(c)
    order = {"entity": 0, "preference": 1, "decision": 2, "experience": 3}
    kept.sort(key=lambda c: order.get(c.type, 4))
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


def _label(text: str) -> str:
    return clip(text, _NAME_MAX)


def _links(label: str, names: Iterable[str], limit: int = 3) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    for n in names:
        if (label, n) not in out:
            out.append((label, n))
    return tuple(out[:limit])


def extract(
    session: Session, *, now: datetime | None = None, caps: Caps = DEFAULT_CAPS
) -> Extraction:
    """The rule candidates of ``session`` (see the module docs) and what was dropped."""
    said, results, messages = _read(session)
    sid = session_key(session)
    tool_names = (t.get("name") for t in session.tools)
    stop = _STOP | {n.casefold() for n in tool_names if isinstance(n, str) and n}
    dropped: list[tuple[str, str]] = []

    # 1. the sentences each rule may read
    kinds: dict[int, str] = {}  # index in said -> "preference" | "decision"
    for i, s in enumerate(said):
        if held_secret(s.text):
            kinds[i] = "secret"
            dropped.append((clip(s.text), "secret"))
        elif _ONE_SHOT.search(s.text):
            kinds[i] = "one-shot"
            dropped.append((clip(s.text), "one-shot edit"))
        elif _is_chit_chat(s.text):
            kinds[i] = "chit-chat"
            dropped.append((clip(s.text), "chit-chat"))
        elif _DECISION.search(s.text):
            kinds[i] = "decision"
        elif _PREFERENCE.search(s.text):
            kinds[i] = "preference"
        else:
            kinds[i] = "none"

    # 2. entities: names seen twice across the (non-secret) user sentences, plus minted plans
    counts: dict[str, int] = {}
    first: dict[str, tuple[str, _Said]] = {}
    for i, s in enumerate(said):
        if kinds[i] == "secret":
            continue
        for n in _names_in(s.text, stop):
            k = n.casefold()
            counts[k] = counts.get(k, 0) + 1
            first.setdefault(k, (n, s))
    minted: dict[str, tuple[str, _Said]] = {}
    for i, s in enumerate(said):
        if kinds[i] == "decision":
            for p in _plans_in(s.text):
                minted.setdefault(p.casefold(), (p, s))
    ranked = sorted(
        (k for k, c in counts.items() if c >= 2 and k not in minted),
        key=lambda k: (-counts[k], first[k][1].seq, first[k][1].index),
    )
    entity_list = [minted[k] for k in minted] + [first[k] for k in ranked]
    entities: list[Candidate] = []
    for name, s in entity_list:
        entities.append(Candidate("entity", name, name, Source(sid, s.seq, clip(s.text), "rule")))
    known = {c.name.casefold(): c.name for c in entities[: caps.entity]}

    def linked(text: str) -> list[str]:
        names = _plans_in(text) + _names_in(text, stop)
        return [known[n.casefold()] for n in names if n.casefold() in known]

    # 3. preferences and decisions
    prefs: list[Candidate] = []
    decisions: list[Candidate] = []
    cue_count: dict[int, int] = {}
    for i, s in enumerate(said):
        if kinds[i] == "decision":
            cue_count[s.turn] = cue_count.get(s.turn, 0) + 1
    for i, s in enumerate(said):
        kind = kinds[i]
        src = Source(sid, s.seq, clip(s.text), "rule")
        text = clip(s.text)
        if kind == "preference":
            prefs.append(
                Candidate(
                    "preference", _label(s.text), text, src, links=_links("about", linked(s.text))
                )
            )
        elif kind == "decision":
            names = linked(s.text)
            if not names:
                for j in (i - 1, i + 1):
                    if 0 <= j < len(said) and said[j].seq == s.seq and kinds[j] != "secret":
                        names = linked(said[j].text)
                        if names:
                            break
            if not names and cue_count.get(s.turn) == 1:
                turn_text = " ".join(
                    t.text for k, t in enumerate(said) if t.turn == s.turn and kinds[k] != "secret"
                )
                names = linked(turn_text)[:1]
            until = parse_until(s.text, now or _time_of(session, s.seq))
            decisions.append(
                Candidate(
                    "decision",
                    _label(s.text),
                    text,
                    src,
                    until=until[0] if until else None,
                    until_at=until[1] if until else None,
                    links=_links("decided", names),
                )
            )
        elif kind == "none":
            dropped.append((text, "no cue"))

    # 4. experiences: a failed result then an ok one, within one (turn, tool)
    experiences: list[Candidate] = []
    done: set[tuple[int, str]] = set()
    for a, fail in enumerate(results):
        group = (fail.turn, fail.tool)
        if fail.ok or group in done:
            continue
        fix = next((r for r in results[a + 1 :] if (r.turn, r.tool) == group and r.ok), None)
        if fix is None:
            continue
        done.add(group)
        err = clip(fail.text or "failed", 200)
        how = clip(fix.command or fix.text or "retried", 200)
        tool_text = " ".join((fail.command, fail.text, fix.command, fix.text))
        names = linked(tool_text)
        if not names:
            names = linked(" ".join(t for _, turn, t in messages if turn == fail.turn))
        if not names:
            before = [t for seq, _, t in messages if seq < fail.seq]
            names = linked(before[-1]) if before else []
        head = f"{fail.tool} `{clip(fail.command, 60)}`" if fail.command else fail.tool
        experiences.append(
            Candidate(
                "experience",
                _label(f"{fail.tool}: {err}"),
                clip(f"{head} failed: {err} — fixed by `{how}`"),
                Source(sid, fail.seq, clip(fail.text), "rule"),
                fail=err,
                fix=how,
                links=_links("fixed", names),
            )
        )
    return _finish([*entities, *prefs, *decisions, *experiences], dropped, caps)


_OBS_HEAD, _OBS_TAIL = 3000, 1000


def _obs_clip(text: str) -> str:
    """An observation's text: whitespace kept, cut to its first 3,000 and last 1,000
    chars (a tool's verdict, an error or a summary, is usually at its end). Whatever is cut
    is not searchable, so the cap is generous; a file listing longer than that is rare."""
    text = text.strip()
    if len(text) <= _OBS_HEAD + _OBS_TAIL + 3:
        return text
    return f"{text[:_OBS_HEAD]} … {text[-_OBS_TAIL:]}"


def observations(session: Session) -> tuple[Candidate, ...]:
    """One verbatim (redacted, clipped: see ``_obs_clip``) observation per user utterance
    and per tool output, so a later question can be answered from what was said, not only
    from what the rules distilled."""
    out: list[Candidate] = []
    sid = session_key(session)
    calls: dict[str, str] = {}
    for node in session.surface():
        msg = node.message
        for call in msg.tool_calls:
            calls[call.id] = redact(call.name).text
        turn = session.index.turn_of(node.seq)
        extra = {"turn": turn.turn} if turn is not None else {}
        said = [("user", msg.text)] if msg.role == "user" and msg.source.kind == "user" else []
        results = [(calls.get(r.tool_call_id, "tool"), r.text) for r in msg.tool_results]
        for who, raw in said + results:
            text = _obs_clip(redact(raw).text)
            if text:
                src = Source(sid, node.seq, text, "rule")
                out.append(Candidate("observation", f"{who}@{node.seq}", text, src, extra=extra))
    return tuple(out)


# -- the merge rule --------------------------------------------------------------------------
def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def merge_target(candidate: Candidate, nodes: Sequence[Node]) -> Node | None:
    """The active node ``candidate`` merges into, or None (insert it): an entity with the
    same name or alias (case-insensitive); another node of the candidate's type whose text
    (at least 8 chars) equals the candidate's or contains it, or is contained in it (equal
    text wins over a substring). Workspace and episode candidates never merge."""
    if candidate.type in ("workspace", "episode"):
        return None
    same = [n for n in nodes if n.type == candidate.type and n.active]
    if candidate.type == "entity":
        want = candidate.name.casefold()
        for n in same:
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
    Times are the store's to set."""
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
    return replace(
        node,
        text=_kept_text(node.text, candidate.text),
        aliases=tuple(aliases),
        sources=sources,
        until=until,
        until_at=until_at,
        fail=node.fail or candidate.fail,
        fix=node.fix or candidate.fix,
    )
