"""The names the work keeps naming: the identifiers a person continuing it needs by heart.

A compaction summary by a good agent keeps a "key technical concepts" list: the package, the
plugin id, the config key, the branch, the hook, the environment variable the conversation
turned on. The state's other groups keep outlines of files and statements, not these names,
and a resumed agent that lost ``@scope/pkg`` or ``retryAttempts`` cannot grep for it.

A name is a code-like word of the conversation: the user's own words, the assistant's text
and the arguments of its tool calls (a command line without its here-documents, a path, a
pattern; never the text an edit writes into a file or a listing pasted in a long fenced
block, never a command's inline script or option, never a tool's output). Code-like: it
has ``-``, ``_``, ``.``, ``/``, ``@`` or ``:`` inside (``lint-staged``, ``MAX_RETRIES``,
``.gitleaks.toml``, ``feat/session-sync``, ``@codemieai/code``), it is camelCase or
PascalCase (``retryAttempts``, ``PreCompact``), or it is a whole backticked word
(`` `bitvec` ``). Prose that only looks like one is none: numbers, versions, dates and
times, ``e.g.``, ``and/or``, URLs, e-mail addresses, hashes and ids, random-looking tokens,
and what redaction left of a secret; a hyphenated word (``read-only``, ``Cross-Service``)
is a name only where the session also writes it as code (backticks, a call's arguments), a
dotted expression (``signal.symbol``) only when named twice. A file by its absolute path is
shown by its name. Identifiers are ASCII runs, so Chinese text (no spaces) gives its names
too.

Each message counts a name once; the user's message counts twice (the user names what the
work is about). A name the harness's own text names (the system prompt, a task template
around the user's words: ``COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT``) is the harness's, not
the work's. ``lines()`` ranks names by that count (the first named first on a tie), leaves
out what the rest of the state already shows (a file's path by its name too) and a folder a
longer name shows, keeps at most ``keep`` and packs them comma-separated into lines: a
name costs about four tokens, far less than a sentence around it (which was tried and kept
no more of what the work needed).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from ..session.kernel import call_command, command_parts, path_name

__all__ = ["KeyNames", "call_words"]

_SCAN = 20_000  # characters of one message read for names
_VALUE = 2_000  # a call argument longer than this is content (a script, a file), not read
_KEPT = 5_000  # distinct names gathered per session (later new ones are ignored)
_USER_WEIGHT = 2  # a user's message counts this many times an assistant's
_MIN_SCORE = 1  # named once is enough: the cap keeps the most named
_MIN_LEN, _MAX_LEN = 3, 64

# Call arguments that carry a file's text or an edit's, not the conversation's words.
_CONTENT_KEYS = frozenset(
    """content contents file_text old_string new_string old_str new_str search replace text
    edits input patch diff""".split()
)
_BACKTICKED = re.compile(r"`([^`\n]{1,80})`")
_RUN = re.compile(r"[A-Za-z0-9_@./:$~\-]+")
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+|\bwww\.\S+", re.I)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")
_NUMERIC = re.compile(r"v?[\d.:/_,-]+[a-z]{0,2}", re.I)  # 1.2.3, 2026-05-11, 10:30, 4px
_HEX = re.compile(r"(?:0x)?[0-9a-f]{7,}", re.I)  # a hash, an id
_REDACTED = re.compile(r"REDACTED", re.I)
_CAMEL = re.compile(r"[a-z0-9][A-Z]")
_MEMBER = re.compile(r"(?:[A-Za-z]{1,2}|this|self|cls)\.[A-Za-z_]")
# A fenced block longer than this many lines is a listing (a file's text), not the talk.
_LISTING = 6
_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.S | re.M)
# A long quoted argument of a command line: an inline script (``python -c "…"``), code.
_SCRIPT = re.compile(r"'[^']{80,}'|\"(?:[^\"\\]|\\.){80,}\"", re.S)
_LINES = re.compile(r":\d+(?:[-:]\d+)*$")  # a file's line numbers (``app.ts:12-40``)
_OPEN_FENCE = re.compile(r"^[ \t]*(?:```|~~~)", re.M)
# Call arguments that are a label or a state, not words (a todo's status, an id).
_LABEL_KEYS = frozenset({"status", "priority", "id", "type"})
# Names every program of a language has (``__init__``, ``__main__``): they say nothing of
# this work.
_PROTOCOL = re.compile(r"__[a-z]+__")
# Two sentences written without the space between them (``dump.In``), not a name.
_JOINED = re.compile(r"[a-z]+\.[A-Z][a-z]+")
_LITERALS = frozenset({"true", "false", "null", "none", "nil", "undefined", "self", "this"})


def _random(part: str) -> bool:
    """A part that reads as a generated token (a key, an id): long with letters and digits
    (a key redaction did not know), letters and digits interleaved, or one long run."""
    if len(part) > 40 or (len(part) >= 20 and any(c.isdigit() for c in part)):
        return True
    if len(part) < 12:
        return False
    flips = sum(1 for a, b in pairwise(part) if a.isdigit() != b.isdigit())
    return flips >= 4


def _clean(raw: str) -> str:
    """A run without the punctuation of the sentence around it; a command's option
    (``--save-dev``) is none, and a file by its absolute path is shown by its name (the
    working root is one machine's)."""
    if raw.startswith("-"):
        return ""
    word = _LINES.sub("", raw.lstrip(":~$").rstrip(".,:;/-"))
    if word.startswith("/") and word.count("/") >= 3:
        got = path_name(word)
        if got is not None and got[0] == "file":
            return word.rsplit("/", 1)[-1]
    return word


def _kind(word: str) -> str | None:
    """``"name"`` for a code name; ``"kebab"`` for a hyphenated word (a name only where the
    session also writes it as code: ``lint-staged``, not ``read-only`` or ``Cross-Service``);
    ``"member"`` for a dotted lowercase expression that is no file (``django.conf``,
    ``signal.symbol``: a name only when named twice, as one listing holds dozens);
    ``"marked"`` for one word after a dot or a slash (``.env``, ``/compact``: a name only in
    backticks, since a method (``.join``) or a sed address (``/def``) looks the same); None
    for prose, numbers and tokens."""
    if not (_MIN_LEN <= len(word) <= _MAX_LEN) or not any(c.isalpha() for c in word):
        return None
    if _NUMERIC.fullmatch(word) or _EMAIL.fullmatch(word) or _REDACTED.search(word):
        return None
    parts = [p for p in re.split(r"[-_./@:]", word) if p]
    if any(_HEX.fullmatch(p) and any(c.isdigit() for c in p) for p in parts):
        return None
    if any(_random(p) for p in parts) or max(sum(c.isalpha() for c in p) for p in parts) < 2:
        return None  # a token, or letters only as a unit or a label (``b-18``)
    if _PROTOCOL.fullmatch(word.lstrip(".")) or _JOINED.fullmatch(word) or ":/" in word:
        return None  # ``__init__``; two sentences with no space between; a sed address
    inner = word.lstrip("./@")
    if re.search(r"[-_./@:]", inner.rstrip("-_./@:")):
        if re.search(r"\.\.|//", word) or all(len(p) <= 1 for p in parts):
            return None  # an ellipsis, e.g., i.e.
        if "/" in word:
            plain = [p for p in word.split("/") if p]
            if any(len(p) == 1 or re.fullmatch(r"\d+[a-z]", p) for p in plain):
                return None  # a sed or regex address (``/return/p``, ``428s/a/b``), a/b
            if word.startswith("/") and len(plain) == 1:
                return "marked"  # ``/to_native_string`` of a sed address, or a command
            if len(plain) == 2 and all(p.isalpha() for p in plain) and word[0] not in "/.~@":
                return None  # and/or, CI/CD, read/write
        if _MEMBER.match(word):
            return None  # a local's member (``s.add``, ``this.sessionId``): code, not a name
        if re.match(r"\d+-[A-Za-z]+$", word) or re.search(r"a-z|A-Z|0-9", word):
            return None  # 26-character, 3-way; a regex's range
        if word.startswith("/") and word.count("/") >= 2:
            got = path_name(word)
            if got is None or got[0] != "file":
                return None  # a place on one machine (the working root, /dev/null)
        if re.fullmatch(r"[A-Za-z]+(?:-[A-Za-z]+)+", word):
            return "kebab"
        if re.fullmatch(r"[a-z]\w*(?:\.[a-z_]\w*)+", word) and path_name(word) is None:
            return "member"
        return "name"
    if word[0] in "./" and inner.isalnum() and len(inner) >= 3:
        return "marked"
    if _CAMEL.search(word) and word[0].isalpha():
        return "name"
    return None


def _backticked_name(word: str) -> bool:
    """A whole backticked word is a name: a code name, or a plain word the text marks as
    code (`` `bitvec` ``), a literal (``true``, ``None``) aside."""
    if len(word) < _MIN_LEN or not _RUN.fullmatch(word) or word.lower() in _LITERALS:
        return False
    if _PROTOCOL.fullmatch(word.lstrip(".")):
        return False
    return _kind(word) is not None or (word.replace("_", "").isalnum() and not word.isdigit())


def _unlisted(m: re.Match[str], listed: list[str]) -> str:
    """A fenced block, out of the prose: a short one (a command) is read as code, a long one
    is a file's text and gives no names."""
    body = m.group(2)
    if body.count("\n") < _LISTING:
        listed.append(body)
    return "\n"


@dataclass(slots=True)
class _Name:
    shown: str
    score: int
    first: int  # the seq that first named it
    code: bool  # written as code somewhere (backticks, a call's arguments)


def _argument_words(args: object, out: list[str]) -> None:
    """The words of a call's arguments that are not a file's text: strings (a long one is
    content), lists and nested mappings, the content keys passed over."""
    if isinstance(args, str):
        if len(args) <= _VALUE:
            out.append(args)
    elif isinstance(args, dict):
        for key, value in args.items():
            if str(key).lower() not in _CONTENT_KEYS | _LABEL_KEYS:
                _argument_words(value, out)
    elif isinstance(args, list):
        for value in args[:64]:
            _argument_words(value, out)


def call_words(args: Mapping[str, Any]) -> list[str]:
    """What a tool call's arguments say in words: its command line as the shell runs it
    (without here-document bodies: file contents), its paths and patterns; never the text
    an edit or a created file holds."""
    out: list[str] = []
    command = call_command(args)
    if command is not None:
        line = " ; ".join(p.text for p in command_parts(command))
        out.append(_SCRIPT.sub(" ", line))
        args = {k: v for k, v in args.items() if k not in ("command", "cmd", "script")}
    _argument_words(dict(args), out)
    return out


class KeyNames:
    """The code names of the conversation, counted once per message, gathered call by call."""

    def __init__(self) -> None:
        self.names: dict[str, _Name] = {}  # casefolded name -> its tally
        self.theirs: set[str] = set()  # names of the harness's own text (never shown)

    def harness(self, text: str) -> None:
        """The harness's text (the system prompt, a task template around the user's words):
        its names (``COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT``) are the harness's, not the
        work's, however often the work then uses them."""
        found: dict[str, tuple[str, bool]] = {}
        self._words(text[: _SCAN * 5], False, found)
        self.theirs.update(found)

    def said(
        self, seq: int, text: str = "", *, code: Iterable[str] = (), user: bool = False
    ) -> None:
        """One message: its prose (``text``) and the words of its calls (``code``: a command
        line without here-documents, a path, a pattern), each name counted once."""
        found: dict[str, tuple[str, bool]] = {}
        listed: list[str] = []  # the short fenced blocks: commands, code
        text = _FENCE.sub(lambda m: _unlisted(m, listed), text[:_SCAN])
        cut = _OPEN_FENCE.search(text)
        if cut is not None:  # a listing cut short (its closing fence past what is read)
            text = text[: cut.start()]
        for piece, is_code in [(text, False), *((c, True) for c in [*listed, *code])]:
            self._words(piece[:_SCAN], is_code, found)
        weight = _USER_WEIGHT if user else 1
        for key, (shown, is_code) in found.items():
            got = self.names.get(key)
            if got is None:
                if len(self.names) >= _KEPT:
                    continue
                self.names[key] = _Name(shown, weight, seq, is_code)
            else:
                got.score += weight
                got.code = got.code or is_code

    def _words(self, text: str, code: bool, found: dict[str, tuple[str, bool]]) -> None:
        text = _URL.sub(" ", text)
        spans: list[str] = []
        for m in _BACKTICKED.finditer(text):
            span = m.group(1).strip()
            if span and not any(c.isspace() for c in span):
                word = _clean(span)
                if _backticked_name(word):
                    found.setdefault(word.casefold(), (word, True))
                    continue
            spans.append(span)
        for span in spans:  # a backticked command: its words are code
            self._runs(span, True, found, marked=True)
        self._runs(_BACKTICKED.sub(" ", text), code, found)

    @staticmethod
    def _runs(
        text: str, code: bool, found: dict[str, tuple[str, bool]], *, marked: bool = False
    ) -> None:
        for m in _RUN.finditer(text):
            word = _clean(m.group(0))
            kind = _kind(word)
            if kind is None or (kind == "marked" and not marked):
                continue
            key = word.casefold()
            old = found.get(key)
            found[key] = (old[0] if old else word, (old[1] if old else False) or code)

    def ranked(self) -> list[_Name]:
        """The names worth showing, most named first (the first named first on a tie)."""
        keep = [
            n
            for key, n in self.names.items()
            if n.score >= _MIN_SCORE and _shows(n) and key not in self.theirs
        ]
        return sorted(keep, key=lambda n: (-n.score, n.first))

    def lines(self, keep: int, width: int, known: str = "") -> list[tuple[str, tuple[int, ...]]]:
        """At most ``keep`` names as ``(line, seqs)``: comma-separated lines of at most
        ``width`` characters, each with the seqs that first named its names. A name the
        state already shows (in ``known``, its other lines) is left out."""
        seen = known.casefold()
        pool: list[_Name] = []
        for n in self.ranked():
            if len(pool) >= 2 * keep:
                break
            if not _shown(n.shown.casefold(), seen):
                pool.append(n)
        # a folder a longer name in the pool already shows (``node_modules`` of
        # ``node_modules/@scope/pkg``) says nothing more
        folded = [n.shown.casefold() for n in pool]
        chosen = [
            n
            for n, own in zip(pool, folded, strict=True)
            if not any(x.startswith(own + "/") for x in folded)
        ][:keep]
        out: list[tuple[str, tuple[int, ...]]] = []
        line: list[_Name] = []
        for n in chosen:
            if line and len(", ".join(x.shown for x in [*line, n])) > width:
                out.append(
                    (", ".join(x.shown for x in line), tuple(sorted({x.first for x in line})))
                )
                line = []
            line.append(n)
        if line:
            out.append((", ".join(x.shown for x in line), tuple(sorted({x.first for x in line}))))
        return out


def _shows(n: _Name) -> bool:
    """Whether a gathered name is shown: a hyphenated word only if written as code
    somewhere, a dotted expression only if named twice."""
    kind = _kind(n.shown)
    return (kind != "kebab" or n.code) and (kind != "member" or n.score >= 2)


def _shown(name: str, text: str) -> bool:
    """Whether ``text`` (casefolded) already names ``name`` as a whole word (a file's path by
    its file name too)."""
    if not text:
        return False
    forms = {name}
    got = path_name(name)
    if got is not None and got[0] == "file":
        forms.add(got[1])  # a file by its name: ``app.py`` shows ``src/app.py``
    for form in forms:
        if len(form) >= _MIN_LEN and re.search(
            rf"(?<![A-Za-z0-9_]){re.escape(form)}(?![A-Za-z0-9_])", text
        ):
            return True
    return False
