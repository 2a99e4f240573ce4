"""Model text as every engine reads it: a reply's JSON taken apart safely, and an input cut to
a character budget keeping its tail. No HTTP here; ``ctxsdk.llm`` builds on it, and engines
that parse a model's answer (Merge's alignment and adjudication) use it without importing
the model seam.

Text going out is untrusted too: ``neutralize`` makes control characters visible (escapes
such as ``\\x1b`` and ``\\u202e``) before a text reaches a model or a terminal, and
``model_safe`` also redacts every string of a tool's JSON answer.

A reply is untrusted input: JSON nested deeper than ``MAX_JSON_DEPTH`` is refused (``json``
would otherwise end in a ``RecursionError``), and a lone surrogate (``"\\ud800"`` in the JSON
text, which ``json`` decodes into a ``str`` that cannot be encoded) becomes U+FFFD, so a
result can be written to a log or appended to the next request.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import InvalidArgument, LLMOutputError
from ._codec import MAX_JSON_DEPTH  # one limit for logs, replies and memories
from ._redact import redact

__all__ = [
    "CONTROL_CHARS",
    "MAX_JSON_DEPTH",
    "TRUNCATION_MARKER",
    "TooDeep",
    "clean_text",
    "extract_json",
    "loads",
    "model_safe",
    "neutralize",
    "tidy",
    "truncate_keep_tail",
]


REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")


class TooDeep(ValueError):
    """JSON nested deeper than ``MAX_JSON_DEPTH``."""

    def __init__(self) -> None:
        super().__init__(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (a ``str`` from ``json`` holds
    a surrogate only when it is unpaired), so it encodes as UTF-8."""
    return text if text.isascii() else _SURROGATE.sub(REPLACEMENT, text)


def tidy(obj: Any, depth: int = 0) -> Any:
    """A copy of decoded JSON with every string (keys too) cleaned; raises ``TooDeep`` when
    objects and arrays nest deeper than ``MAX_JSON_DEPTH``."""
    if isinstance(obj, str):
        return clean_text(obj)
    if isinstance(obj, dict | list):
        if depth >= MAX_JSON_DEPTH:
            raise TooDeep()
        if isinstance(obj, list):
            return [tidy(item, depth + 1) for item in obj]
        return {clean_text(k): tidy(v, depth + 1) for k, v in obj.items()}
    return obj


def loads(data: str | bytes) -> Any:
    """``json.loads`` then ``tidy``: ``json.JSONDecodeError`` / ``UnicodeDecodeError`` for a
    text that is not JSON, ``TooDeep`` for one nested too deep (also past the interpreter's
    recursion limit, which ``json`` reports as ``RecursionError``)."""
    try:
        obj = json.loads(data)
    except RecursionError:
        raise TooDeep() from None
    return tidy(obj)


# -- text going out ----------------------------------------------------------------------------
CONTROL_CHARS = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]"
)
"""What ``neutralize`` escapes: C0 controls but tab and newline, DEL, C1 controls, the bidi
marks and overrides that reorder a line (Trojan Source: U+061C, U+200E, U+200F,
U+202A-U+202E, U+2066-U+2069) and the zero-width characters that hide text (U+200B-U+200D,
U+2060, U+FEFF)."""
_CONTROL_ONE_LINE = re.compile(CONTROL_CHARS.pattern[:-1] + "\t\n]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(m: re.Match[str]) -> str:
    ch = m.group()
    if ch in _NAMED:
        return _NAMED[ch]
    return f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"


def neutralize(text: str, *, one_line: bool = False) -> str:
    """``text`` with every character in ``CONTROL_CHARS`` written as a visible escape
    (``\\x1b``, ``\\r``, ``\\u202e``), so a model or a terminal reads it as text and
    never acts on it (an ANSI sequence, a line reordered by a bidi override, words hidden by
    zero-width characters). ``one_line=True`` escapes newlines and tabs too. Idempotent: the
    result holds no such character."""
    if text.isascii() and text.isprintable() and not one_line:
        return text  # the common case: nothing to escape
    return (_CONTROL_ONE_LINE if one_line else CONTROL_CHARS).sub(_escape, text)


def model_safe(value: Any) -> Any:
    """A copy of a JSON-like value (a tool's answer) with every string in it, keys too,
    redacted (``redact``) and then neutralized (``neutralize``): what an agent tool hands
    a model."""
    return _safe(value, {})


def _safe(value: Any, done: dict[str, str]) -> Any:
    # ``done``: the strings already made safe in this answer (keys repeat in every item).
    if isinstance(value, str):
        if value not in done:
            done[value] = neutralize(redact(value).text) if value else value
        return done[value]
    if isinstance(value, dict):
        return {_safe(k, done): _safe(v, done) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_safe(v, done) for v in value]
    return value


TRUNCATION_MARKER = "…(earlier content truncated)…\n"


def truncate_keep_tail(text: str, max_chars: int | None, marker: str = TRUNCATION_MARKER) -> str:
    """``text`` cut to at most ``max_chars`` characters, keeping the TAIL (the seeds'
    ``maxCharsPerInput`` / ``maxCharsPerBranch``: the latest content matters most).

    A cut text starts with ``marker`` and is at most ``max_chars`` long, marker included.
    ``None`` means no cap.
    """
    if max_chars is None or len(text) <= max_chars:
        return text
    if max_chars < 0:
        raise InvalidArgument(f"max_chars must be >= 0, not {max_chars}")
    room = max_chars - len(marker)
    if room <= 0:
        return text[len(text) - max_chars :] if max_chars else ""
    return marker + text[len(text) - room :]


_FENCE = re.compile(r"```[a-zA-Z0-9_-]*[ \t]*\n?(.*?)```", re.DOTALL)
_MAX_SCAN = 64


def extract_json(text: str) -> Any:
    """The first JSON object in a model reply: the whole reply, a fenced block, or an object
    inside prose (the seeds' "strip a fence, take the first ``{`` ... last ``}``", then a scan).

    Raises ``LLMOutputError`` (a ``ValueError``, kind ``malformed-json``) with what was
    wrong when there is none.
    """
    stripped = text.strip()
    if not stripped:
        raise _malformed("the reply is empty")
    candidates = [m.group(1).strip() for m in _FENCE.finditer(text)]
    candidates.append(stripped)
    first, last = stripped.find("{"), stripped.rfind("}")
    if 0 <= first < last:
        candidates.append(stripped[first : last + 1])
    error: str | None = None
    not_object: str | None = None
    for cand in candidates:
        try:
            obj = loads(cand)
        except TooDeep as exc:
            raise _malformed(f"the reply's {exc}") from None
        except json.JSONDecodeError as exc:
            error = error or f"{exc.msg} at line {exc.lineno} column {exc.colno}"
            continue
        if isinstance(obj, dict):
            return obj
        not_object = not_object or f"the reply is a JSON {type(obj).__name__}, not an object"
    decoder = json.JSONDecoder()
    start = stripped.find("{")
    scanned = 0
    while start >= 0 and scanned < _MAX_SCAN:
        try:
            obj, _ = decoder.raw_decode(stripped, start)
            obj = tidy(obj)
        except (json.JSONDecodeError, TooDeep, RecursionError):
            pass
        else:
            if isinstance(obj, dict):
                return obj
        start = stripped.find("{", start + 1)
        scanned += 1
    if not_object is not None:
        raise _malformed(not_object)
    if first < 0:
        raise _malformed("no JSON object in the reply")
    raise _malformed(error or "no complete JSON object in the reply")


def _malformed(detail: str) -> LLMOutputError:
    return LLMOutputError(detail, reason=f"malformed JSON: {detail}", kind="malformed-json")
