"""Findings: what the assistant established about the project, in its own words.

A compaction summary keeps the technical concepts, the files and code the work turned on,
the errors and their fixes: mostly what the assistant said it found ("EnvManager stores
the config at ``~/.codemie/codemie-cli.config.json``", "the seed is multiplied by
0x5deece66d"). The fact kernel reads rules, decisions and settings; a finding is another
statement of the assistant's text (never its reasoning, never tool output). Plans ("Let
me…", "I'll…", "Now update X…"), questions, list intros, a sentence cut off before the
block it introduces ("The PR description says"), acknowledgements and harness labels are
none.

A statement's names are what it refers to specifically: a path, a version, a code name
(``names_in``), a marked code span, a quoted literal, a number with a unit, a hex or long
number. ``select_statements`` prefers statements whose names the session keeps naming;
when there is room (a short session), the newest statements without names fill it. Each
finding is the assistant's hypothesis: Fold's state keeps it unverified, Memory as an
experience the session reported.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from .._redact import memo_read
from ._anchors import names_in
from ._cues import IMPERATIVE
from ._prefilter import prefiltered
from ._sentences import sentences
from ._text import is_filler

__all__ = ["Statement", "select_statements", "statements"]

# Inline code the assistant marked (the sentence splitter drops the backticks, not the words).
_SPAN = re.compile(r"`([^`\n]{2,120})`")
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
# A quantity: a number with a unit, a hex constant, or a number of four digits or more.
_QUANTITY = re.compile(
    r"(?<![\w.])(?:0x[0-9a-f]{3,}|\d[\d,]*(?:\.\d+)?\s?(?:%|ms|s|sec|seconds?|minutes?|hours?"
    r"|days?|[kmgt]i?b|bytes?|px|lines?|tokens?|files?|tests?|rows?|chars?|characters?"
    r"|words?|items?|steps?|epochs?|points?)(?!\w)|\d{4,})",  # (?!\w): "70%" ends a word too
    re.I,
)
# A quoted literal: a key, a value, a message ('q', "flag{"), at most three words.
_QUOTED = re.compile(r"""(?<![\w'"])(['"])([^'"\s][^'"]{0,38}?)\1(?![\w'"])""")
_QUOTED_WORDS = 3
# What the assistant is about to do or is doing now, or asks: not what it found.
_PLAN = re.compile(
    r"^(?:(?:ok(?:ay)?|now|next|first|then|so|great|perfect|good|alright)[,!.]?\s+)*"
    r"(?:let(?:['’]s|\s+me|\s+us)|i(?:['’]ll|\s+will|['’]d|\s+would|\s+need|\s+should"
    r"|\s+can|\s+want|(?:['’]m|\s+am)\s+(?:now\s+|also\s+|still\s+)?(?:going|\w+ing)\b)"
    r"|we(?:['’]ll|\s+will|\s+need|\s+should|\s+can|['’]re\s+going)"
    r"|please\b|could\s+you|can\s+you|would\s+you|shall\s+i)",
    re.I,
)
# "Now update session_live.ex …", "Then add Approach 4": the step it takes next, told as an
# order to itself (a call right after the verb is code: "Then replace(' ', r'\\ ')")
_STEP = re.compile(r"^(?:(?:ok(?:ay)?|great|good|perfect)[,!.]?\s+)?(?:now|then)\s+(?!\S+\()", re.I)
# A sentence that stops on a word needing what follows, no end mark ("The PR description
# says", "If I change it to", "The plan is to change line 99 from"): it introduced a code
# block or a quote the splitter left out, and says nothing itself.
_INTRO = re.compile(
    r"(?<![.!?)\]}\"'`])\s(?:shows?|says?|said|was|were|is|are|be|to|from|like(?:\s+this)?"
    r"|following|follows|as|with|of|the|a|an|into|by|for|in|on|becomes?|and|or|but)[\s,]*$",
    re.I,
)
# What a strict reading (``statements(strict=True)``: Fold's findings, which share a
# checkpoint's budget) also leaves out, as saying nothing the work found:
# a plan after a lead clause or an assent ("To fix the test, I'll …", "Since we are
# creating a new file, I'll name it …", "Sure, I can help you …");
_LEAD = re.compile(
    r"^(?:(?:to|since|because|as|once|after|before|when|if)\s[^,.:;]{1,160},\s+"
    r"|(?:sure|yes|certainly|absolutely|of\s+course)[,!.]?\s+)",
    re.I,
)
# what presents the block or list that follows ("Here is the SEARCH/REPLACE block for
# app.py", "To add the schema, here are the changes"): the block says it, the sentence not.
_PRESENTS = re.compile(r"^(?:to\s[^,.:;]{1,160},\s+)?here(?:['’]s|\s+is|\s+are)\b", re.I)
# a verdict on the work that names nothing: how the assistant feels about it or how it
# looks ("The change looks correct.", "It works as expected.", "I'm confident in the
# solution.", "I'm now ready to submit."): what it found is elsewhere, or nowhere.
_VERDICT = re.compile(
    r"^(?:i(?:['’]m|\s+am)\s+(?:now\s+|also\s+|very\s+|so\s+)?(?:glad|happy|confident|ready"
    r"|satisfied|sure|done|finished)\b"
    r"|(?:the|this|that|my|our|it|everything|all)\b(?:\s+[\w-]+){0,3}?\s+(?:now\s+)?"
    r"(?:looks?|seems?|appears?)\s+(?:to\s+be\s+)?(?:good|correct|right|fine|great|ok(?:ay)?"
    r"|reasonable|solid|complete|to\s+work|working)\b"
    r"|(?:it|this|that|everything)\s+(?:now\s+)?works\b)",
    re.I,
)
_VERDICT_WORDS = 10  # a longer sentence goes on to say something
# advice to the reader that names nothing ("You can adjust the values further …", "To test
# it, you'll need to obtain the data."): what the user may do, not what the assistant found.
# (A plain imperative stays: "Run the script with sudo privileges" is how the project runs.)
_ADVICE = re.compile(
    r"^(?:(?:to|since|because|as|once|after|before|when|if)\s[^,.:;]{1,160},\s+)?"
    r"you(?:['’]ll|\s+will|\s+can|\s+could|\s+may|\s+might|\s+should|\s+need|['’]d)\b",
    re.I,
)
_LABEL = re.compile(r"^[A-Z][A-Z ]{2,20}:\s*")  # a harness label: "THOUGHT:", "DISCUSSION:"
_PAIR = re.compile(r"[^:]{1,40}:\s+\S")  # "Storage: ~/.app/data.jsonl": a label and its value
_MIN_WORDS = 4  # fewer is a heading or a fragment, unless it is a label and its value
# A word in Latin letters: in a sentence written in another script (Cyrillic, CJK, Greek …)
# it is a name, a product, library or protocol kept as written ("через Syncthing", "用 Redis").
_LATIN_WORD = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z][A-Za-z0-9_+#-]*[A-Za-z0-9+#](?![A-Za-z0-9_])")


@dataclass(frozen=True, slots=True)
class Statement:
    """One sentence of the assistant's text and the specific things it names (none for a
    plain statement)."""

    text: str
    names: tuple[str, ...]  # lowercase, each once


def _spans(text: str) -> list[str]:
    """The inline code spans of a text (fenced blocks are code, not statements)."""
    return [m.group(1).strip() for m in _SPAN.finditer(_FENCE.sub(" ", text))]


def _names(sentence: str, spans: Iterable[str]) -> tuple[str, ...]:
    found: dict[str, None] = {}
    for _, ident, _, _ in names_in(sentence):
        found.setdefault(ident, None)
    for span in spans:
        if span in sentence:
            found.setdefault(span.lower(), None)
    for m in _QUANTITY.finditer(sentence):
        found.setdefault(m.group(0).lower(), None)
    for m in _QUOTED.finditer(sentence):
        if len(m.group(2).split()) <= _QUOTED_WORDS:
            found.setdefault(m.group(0).lower(), None)
    if _other_script(sentence):
        for m in _LATIN_WORD.finditer(sentence):
            found.setdefault(m.group(0).lower(), None)
    return tuple(found)


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def _words(sentence: str) -> int:
    """How many words a sentence has; CJK writes none apart, so two characters count one."""
    return len(sentence.split()) + len(_CJK.findall(sentence)) // 2


def _other_script(sentence: str) -> bool:
    """Whether a sentence is written mostly in letters that are not Latin."""
    if sentence.isascii():
        return False  # every letter is Latin
    latin = sum(1 for ch in sentence if ch.isascii() and ch.isalpha())
    other = sum(1 for ch in sentence if ch.isalpha() and not ch.isascii())
    return other > latin


def statements(text: str, *, strict: bool = False) -> Iterator[Statement]:
    """The statements of an assistant text, each with its names (module docs). ``strict``
    also leaves out what says nothing the work found (a led plan, a sentence presenting a
    block, a verdict, a plain step or advice: see ``_LEAD``): Fold's findings share a
    checkpoint's budget, while Memory keeps such a sentence as an experience whose evidence
    is the message. Within ``redaction_memo()`` a sentence of a text with no code span, read
    before, is answered from its first reading (its names depend on the sentence alone)."""
    spans = _spans(text)

    def read(raw: str) -> Statement | None:
        return _statement(raw, spans, strict)

    kind = "statement-strict" if strict else "statement"
    for raw in sentences(text):
        got = read(raw) if spans else memo_read(kind, raw, read)
        if got is not None:
            yield got


def _statement(raw: str, spans: Sequence[str], strict: bool = False) -> Statement | None:
    sentence = _LABEL.sub("", raw).strip()
    if sentence.endswith(("?", ":")) or _PLAN.match(sentence) or is_filler(sentence):
        return None
    if _INTRO.search(sentence):
        return None
    step = _STEP.match(sentence)
    if step and IMPERATIVE.match(sentence[step.end() :]):
        return None
    names = _names(sentence, spans)
    if strict and _says_nothing_found(sentence, names):
        return None
    if _words(sentence) >= _MIN_WORDS or (names and _PAIR.match(sentence)):
        return Statement(sentence, names)
    return None


def _says_nothing_found(sentence: str, names: Sequence[str]) -> bool:
    """What the strict reading leaves out (see ``_LEAD``)."""
    lead = _LEAD.match(sentence)
    if lead is not None and _PLAN.match(sentence[lead.end() :]):
        return True  # "Since we are creating a new file, I'll name it pong_game.py."
    if _PRESENTS.match(sentence):
        return True
    if names:
        return False
    if _VERDICT.match(sentence) and _words(sentence) <= _VERDICT_WORDS:
        return True
    return bool(_ADVICE.match(sentence))


def select_statements(
    found: Sequence[tuple[int, Statement]], cap: int, *, room: int | None = None
) -> list[tuple[int, Statement]]:
    """At most ``cap`` of the ``(seq, statement)`` pairs, in seq order: first those that
    together name the most of what the session keeps naming, then, while fewer than ``room``
    (default ``cap``) are chosen, the newest without names. A caller whose cap grows with a
    long session keeps ``room`` at its base cap: a grown cap is for what the session named;
    its plain sentences ("The diff looks correct.", "I'm ready to submit.") are filler.

    A name weighs as many statements as name it (the config file the work turns on
    outweighs a number said once); each pick gains only the names no earlier pick holds,
    so a restatement gains nothing and the set stays varied; on a tie the newer statement
    wins (it is the current word)."""
    weight: dict[str, int] = {}
    for _, st in found:
        for name in st.names:
            weight[name] = weight.get(name, 0) + 1
    covered: set[str] = set()
    chosen: list[int] = []
    left = [i for i, (_, st) in enumerate(found) if st.names]
    while left and len(chosen) < cap:

        def gain(i: int) -> tuple[int, int]:
            return sum(weight[n] for n in found[i][1].names if n not in covered), found[i][0]

        best = max(left, key=gain)
        if gain(best)[0] == 0:
            break  # everything named is held: a restatement adds nothing
        chosen.append(best)
        covered.update(found[best][1].names)
        left.remove(best)
    plain = sorted(
        (i for i, (_, st) in enumerate(found) if not st.names), key=lambda i: found[i][0]
    )
    fill = cap if room is None else min(cap, room)
    chosen += plain[::-1][: max(fill - len(chosen), 0)]
    return sorted((found[i] for i in chosen), key=lambda f: f[0])


# the tables most sentences hold no word of: a test of their literal words first
# (``_prefilter``: the same answers)
_PAIR = prefiltered(_PAIR)
