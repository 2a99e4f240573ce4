"""One sentence splitter for every engine (English and Chinese; code and markup removed).

``sentence_spans`` reads a message line by line and keeps only prose: fenced and indented
code, diffs, stack traces, tables, JSON, numbered file views, HTML comments and injected
XML-ish blocks (``<system-reminder>…</system-reminder>``) are dropped; bullets, headings,
quote marks and checkboxes are stripped. Prose lines are joined when a line was hard-wrapped
(a long line that ends mid-sentence followed by a lowercase continuation), otherwise a line
break ends a sentence (chat users write one instruction per line, without full stops).
Within a paragraph a sentence ends after 。！？；… and after ``.!?;`` followed by a space (or
glued to a word that opens sentences: "0xffffffff.We will", from text blocks joined bare),
except after an abbreviation ("e.g.", "vs.", "etc."): decimals, versions, paths, file names
and URLs carry no space after their dots and are never split. Each sentence comes with its
exact span in the text (``Span.start``/``Span.end``), so a caller can quote the source.

Bounded: at most ``MAX_CHARS`` of a text are read and at most ``MAX_SENTENCES`` returned.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import NamedTuple

from .._redact import memo_of, memo_read

__all__ = ["MAX_CHARS", "MAX_SENTENCES", "Span", "clean", "sentence_spans", "sentences"]

MAX_CHARS = 120_000
MAX_SENTENCES = 400
_MAX_BLOCK_LINES = 400  # an unclosed fence or XML block drops at most this many lines

_LINE = re.compile(r"[^\n]*\n?")
_FENCE = re.compile(r"\s{0,3}(`{3,}|~{3,})")
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_OPEN_TAG = re.compile(r"\s*<([A-Za-z][\w:-]*)(?:\s[^<>]*)?>\s*$")
_CLOSE_TAG = re.compile(r"\s*</([A-Za-z][\w:-]*)>\s*$")
_WHOLE_ELEMENT = re.compile(r"\s*<([A-Za-z][\w:-]*)(?:\s[^<>]*)?>.*</\1>\s*$")
_INLINE_ELEMENT = re.compile(r"<([A-Za-z][\w:-]*)(?:\s[^<>]*)?>.*?</\1>|</?[A-Za-z][\w:-]*/?>")
# Lines that are code, logs or data, not prose.
_CODEISH = re.compile(
    r"\s*(?:"
    r"import\s+[\w.]+\s*(?:$|,|;|\bas\b)|import\s*[{*]|from\s+[\w.]+\s+import\b"
    r"|export\s+(?:default|const|function|class|interface|type|async|\{|\*)"
    r"|(?:async\s+)?def\s+\w+\s*\(|class\s+\w+\s*[(:{<]|function\*?\s*\w*\s*\("
    r"|(?:const|let|var|val|fn|func)\s+[\w$]+\s*[=:;(<]"
    r"|return(?:\s*;|\s*$|\s+[\w.]+\s*[(\[;.]|\s+[^\w\s])"
    r"|(?:public|private|protected)\s+(?:static\s+|final\s+|abstract\s+)*[\w<>\[\]]+\s+\w+\s*[(;=]"
    r"|package\s+[\w.]+;?\s*$|#include\s*[<\"]|#!|yield\b|raise\s+\w+(?:Error|Exception)"
    r"|assert\s+\w+\s*(?:==|!=|\(|,|is\b)|elif\b|else\s*:|try\s*:|except\b[^:]*:|finally\s*:"
    r"|with\s+\S+.*\bas\s+\w+\s*:|for\s+\w+(?:,\s*\w+)*\s+in\s+.*:\s*$|while\s.*:\s*$"
    r"|if\s.*[^.!?]:\s*$|print\(|console\.\w+\("
    r"|>>>|\.\.\.\s|\$\s|@@|\+\+\+\s|---\s+a/|diff\s--git|index\s[0-9a-f]{7}"
    r"|[{}\[\]()];?,?\s*$|[}\])]|//|/\*|\*/|<\?|\d+\s*[:|\t]|[│█⋮]"
    r"|File\s\".*\",\sline\s\d+|at\s[\w.$<>]+\(|Traceback\s\(most|[\w.]*(?:Error|Exception):\s"
    r"|(?:FAILED|PASSED|ERROR)\s|={5,}|-{5,}|\*{5,}|_{5,}"
    r")"
)
_CODE_END = re.compile(r"(?:[{(\[;]|\)\s*[{;]|\)\s*->.*:|=>|:=)\s*$")
_JSONISH = re.compile(r"\s*\"[^\"]{1,80}\"\s*:\s*")
_TABLE = re.compile(r"\s*\|.*\|")
_DIFF_LINE = re.compile(r"[+-](?![\s+-])|[+-]$")
_HEADING = re.compile(r"\s*#{1,6}\s+")
_PREFIX = re.compile(
    r"\s*(?:(?:[-*+•●◦▪>]|\d{1,3}[.)]|[a-zA-Z][.)](?=\s)|\(\d{1,3}\)|[①-⑳])\s+|\[[ xX]\]\s+)+"
)
_LETTER = re.compile(r"[^\W\d_]")
# A sentence end: CJK terminators anywhere; English ones before whitespace or the end.
_END = re.compile(
    r"[。！？；…]+[\"'”’」』）)\]]*\s*"
    r"|(?:[.!?]+|;)[\"'”’)\]*_`]*(?=\s|$)\s*"
    r"|\s+[-–—]{1,2}\s+(?=[A-Z])"
    # a stop with no space after it, before a word that opens sentences: text blocks joined
    # without a separator ("with the input 0xffffffff.We will continue", "executed.Now let
    # me"); a dotted name ("os.path", "React.Component") goes on with no such word and a space
    r"|(?<=[a-z0-9)`])[.!?](?=(?:We|I|The|This|That|So|Now|Let's|Let|It|Then|Next|Finally"
    r"|However|But|Also|Since|Here|There|Our|My)[\s,])"
)
_ABBREV = frozenset(
    "e.g i.e etc vs cf al approx fig no nos mr mrs ms dr st jr sr inc ltd co esp incl "
    "eg ie resp viz ca min max sec vol ver".split()
)
_EMPHASIS = re.compile(r"\*\*|__|(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*])|`+|~~")
_LINK = re.compile(r"!?\[([^\]\n]{0,200})\]\([^)\s]{0,500}\)")
_SPACE = re.compile(r"\s+")


class Span(NamedTuple):
    """A sentence (cleaned, whitespace folded) and where it is in the text."""

    start: int
    end: int
    text: str


def clean(piece: str) -> str:
    """A sentence as one readable line: links to their words, emphasis and backticks
    removed, whitespace folded, leading list marks and trailing colons dropped."""
    piece = _LINK.sub(r"\1", piece) if "](" in piece else piece
    if "*" in piece or "_" in piece or "`" in piece or "~" in piece:
        piece = _EMPHASIS.sub("", piece)
    piece = _INLINE_ELEMENT.sub(" ", piece) if "<" in piece else piece
    piece = " ".join(piece.split())  # as _SPACE's " " and a strip: the same whitespace
    piece = _PREFIX.sub("", piece) if piece[:1] in "-*+•●◦▪>([0123456789①" else piece
    while (
        piece
        and not piece[0].isalnum()  # a letter or digit is no symbol: most sentences
        and unicodedata.category(piece[0])[0] == "S"
        and piece[0] not in "$<>`~^+=|"
    ):
        piece = piece[1:].lstrip()  # a leading emoji or symbol mark ("✅ Done", "🔍 Problem")
    return piece.strip(" \t:：-–—")


def _prose_start(line: str) -> tuple[int, bool] | None:
    """Where the prose of a line starts and whether the line opens an item (a heading, a
    bullet), or None when the line is not prose. (A pattern's character that the line
    lacks is tested first: ``_TABLE`` needs a "|", ``_JSONISH`` a '"', ``_HEADING`` a "#".)"""
    stripped = line.strip()
    if not stripped or not _LETTER.search(stripped):
        return None
    if ("|" in line and _TABLE.match(line)) or _CODEISH.match(line):
        return None
    if '"' in line and _JSONISH.match(line):
        return None
    m = ("#" in line and _HEADING.match(line)) or _PREFIX.match(line)
    start = m.end() if m else len(line) - len(line.lstrip())
    body = line[start:].rstrip()
    if not m and _CODE_END.search(body):
        return None
    if body.endswith(("{", "[")) or (body.endswith(",") and ("=" in body or '":' in body)):
        return None
    return start, bool(m)


def _blocks(text: str) -> list[tuple[int, int, bool]]:
    """The prose lines of a text as (start, end, starts_item) spans, in order; dropped lines
    become (-1, -1, False) separators."""
    out: list[tuple[int, int, bool]] = []
    lines = [(m.start(), m.group()) for m in _LINE.finditer(text) if m.group()]
    i, n = 0, len(lines)
    prev_blank = True
    prev_code = False
    while i < n:
        off, raw = lines[i]
        line = raw.rstrip("\n").rstrip("\r")
        fence = _FENCE.match(line) if "```" in line or "~~~" in line else None
        if fence and line.strip().count(fence.group(1)[0] * 3) >= 2:
            out.append((-1, -1, False))  # "```python```": a fence opened and closed at once
            i, prev_blank, prev_code = i + 1, False, True
            continue
        if fence:  # fenced code: skip to the closing fence
            mark = fence.group(1)[0] * 3
            j = i + 1
            while j < n and j - i < _MAX_BLOCK_LINES and not lines[j][1].lstrip().startswith(mark):
                j += 1
            out.append((-1, -1, False))
            i, prev_blank, prev_code = j + 1, False, True
            continue
        if not line.strip():
            out.append((-1, -1, False))
            i, prev_blank = i + 1, True
            continue
        tagged = "<" in line  # every tag pattern needs one
        tag = None if not tagged or _WHOLE_ELEMENT.match(line) else _OPEN_TAG.match(line)
        if tag:  # an XML-ish block on lines of its own: injected context, skip it whole
            close = f"</{tag.group(1)}>"
            j = i
            while j < n and j - i < _MAX_BLOCK_LINES and close not in lines[j][1]:
                j += 1
            out.append((-1, -1, False))
            i, prev_blank, prev_code = (
                (j + 1 if j < n and j - i < _MAX_BLOCK_LINES else i + 1),
                False,
                True,
            )
            continue
        if tagged and (_WHOLE_ELEMENT.match(line) or _CLOSE_TAG.match(line)):
            out.append((-1, -1, False))
            i, prev_blank, prev_code = i + 1, False, False
            continue
        indent = len(line) - len(line.lstrip(" \t"))
        tabbed = line.startswith("\t") or indent >= 4
        if tabbed and (prev_blank or prev_code) and not _PREFIX.match(line):
            out.append((-1, -1, False))  # indented code
            i, prev_blank, prev_code = i + 1, False, True
            continue
        if line.startswith("Traceback (most recent call last)"):
            j = i + 1
            while (
                j < n
                and j - i < _MAX_BLOCK_LINES
                and (lines[j][1][:1] in " \t" or not lines[j][1].strip())
            ):
                j += 1
            out.append((-1, -1, False))
            i, prev_blank, prev_code = j + 1, False, True
            continue
        if prev_code and _DIFF_LINE.match(line):
            out.append((-1, -1, False))
            i, prev_blank = i + 1, False
            continue
        prose = _prose_start(line)
        if prose is None:
            out.append((-1, -1, False))
            i, prev_blank, prev_code = i + 1, False, True
            continue
        start, item = prose
        out.append((off + start, off + len(line), item))
        i, prev_blank, prev_code = i + 1, False, False
    return out


def _joins(text: str, prev: tuple[int, int, bool], nxt: tuple[int, int, bool]) -> bool:
    """Whether the next prose line continues the previous one (a hard-wrapped paragraph)."""
    if nxt[2] or prev[0] < 0:
        return False
    last = text[prev[1] - 1] if prev[1] > prev[0] else ""
    first = text[nxt[0]] if nxt[0] < len(text) else ""
    if last in ".!?:;。！？；…" or not first.islower():
        return False
    if prev[1] - prev[0] >= 65:
        return True
    # a shorter line that stops on a function word ("… a wrong rounding in the") goes on
    return bool(_OPEN_END.search(text, prev[0], prev[1]))


_OPEN_END = re.compile(
    r"\b(?:the|a|an|of|to|in|on|for|with|and|or|from|by|at|into|that|this|its|their|our|your"
    r"|is|are|was|were|be|as)$"
)


# The characters a match of ``_END`` starts with, or (after spaces) the dash it starts
# before: a class the engine scans for fast, where ``_END`` (an alternation, one branch a
# look-behind) is tried at every character.
_END_START = re.compile(r"[。！？；….!?;\-–—]")


def _ends(text: str, start: int, end: int) -> Iterator[re.Match[str]]:
    """``_END.finditer(text, start, end)``: each search starts at the next character a match
    can start at (a stop; a dash, back over the spaces before it), which no match before it
    can (no match is empty, so the next one is a search from where the last one ended)."""
    pos = start
    while True:
        c = _END_START.search(text, pos, end)
        if c is None:
            return
        at = c.start()
        if text[at] in "-–—":  # "\s+[-–—]": from the first of the spaces before the dash
            while at > pos and text[at - 1].isspace():
                at -= 1
        m = _END.search(text, at, end)
        if m is None:
            return
        yield m
        pos = m.end()


def _split(text: str, start: int, end: int, out: list[Span]) -> None:
    pos = start
    ticks, counted = 0, start  # backticks before ``counted``: each stop counts on from the last
    for m in _ends(text, start, end):
        ticks += text.count("`", counted, m.start())
        counted = m.start()
        if ticks % 2:
            continue  # a stop inside inline code (`1.`, `a.b`) ends no sentence
        dot = text[m.start()] == "."
        if dot and m.group().rstrip().endswith("."):
            word = text[max(start, m.start() - 8) : m.start()].rsplit(None, 1)
            w = word[-1].lower().lstrip("(\"'") if word else ""
            if w in _ABBREV or (len(w) == 1 and w.isalpha() and m.end() < end):
                continue
        _emit(text, pos, m.end(), out)
        pos = m.end()
    _emit(text, pos, end, out)


def _emit(text: str, start: int, end: int, out: list[Span]) -> None:
    got = memo_read("sentence pieces", text[start:end], _read_piece)
    if got is not None:
        out.append(Span(start + got[0], start + got[1], got[2]))


def _read_piece(piece: str) -> tuple[int, int, str] | None:
    """A piece's sentence: (its lead, its end without trailing space, its cleaned text),
    or None when it holds no sentence. A pure function of the piece: within
    ``redaction_memo()`` a piece split before (a sentence said again) is read once."""
    s = clean(piece)
    if len(s) >= 2 and _LETTER.search(s):
        return len(piece) - len(piece.lstrip()), len(piece.rstrip()), s
    return None


def sentence_spans(text: str) -> list[Span]:
    """The prose sentences of a text with their spans (see the module docstring); within
    ``redaction_memo()`` a text split before is answered from its first split (a new list)."""
    if not isinstance(text, str) or not text:
        return []
    memo = memo_of("sentences")
    if memo is None:
        return _sentence_spans(text)
    got: tuple[Span, ...] | None = memo.get(text)
    if got is None:
        got = memo[text] = tuple(_sentence_spans(text))
    return list(got)


def _sentence_spans(text: str) -> list[Span]:
    body = text[:MAX_CHARS]
    if "<!--" in body:  # keep offsets: blank the comment out rather than cut it
        body = _HTML_COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), body)
    out: list[Span] = []
    para: tuple[int, int] | None = None
    prev: tuple[int, int, bool] = (-1, -1, False)
    for blk in _blocks(body):
        if para is not None and blk[0] >= 0 and _joins(body, prev, blk):
            para = (para[0], blk[1])
        else:
            if para is not None:
                _split(body, para[0], para[1], out)
                if len(out) >= MAX_SENTENCES:
                    return out[:MAX_SENTENCES]
            para = (blk[0], blk[1]) if blk[0] >= 0 else None
        prev = blk
    if para is not None:
        _split(body, para[0], para[1], out)
    return out[:MAX_SENTENCES]


def sentences(text: str) -> list[str]:
    """The sentences of a text, in order, whitespace folded (see the module docstring)."""
    return [s.text for s in sentence_spans(text)]
