"""The text of a message, in the few named variants the project uses.

Every function takes a typed ``Message`` or the raw JSON message of a log event (a mapping
with ``content``); raw input may be malformed (the views read events the typed models have
not checked), and anything malformed contributes nothing.

================  ===========================================================================
variant           what it includes
================  ===========================================================================
``message_text``  text blocks joined with nothing between them: what a chat transcript shows
                  (``Message.text``, the system prompt, a turn's prompt)
``display_text``  ``message_text``, then the text inside each tool-result block: what a
                  reader of the surface sees of a node (the ``text`` column of the views)
``search_text``   every block a search should find, one per line: text, reasoning, each tool
                  call as ``name(arguments)``, and the text of tool results
``digest_text``   what a ``key`` digest keeps of a message, one part per line: its text,
                  each call as ``name arguments``, and its results' text (no reasoning)
``gist``          one line for lists and reprs: the text, then ``-> name(arguments)`` for
                  each call, or ``result: …`` / ``error: …`` for a tool result; whitespace
                  folded, cut to ``width`` with ``…``
``first_line``    the first line of a text that is not empty and not a bare tool-call
                  marker, cut to ``width``: the label of a tree row
``query_window``  the span of about ``width`` characters of a text that holds the most
                  distinct words of a query: the part of a long hit that shows why it matched
================  ===========================================================================
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

__all__ = [
    "digest_text",
    "display_text",
    "first_line",
    "gist",
    "match_spans",
    "message_of",
    "message_text",
    "one_line",
    "query_terms_in",
    "query_window",
    "search_text",
    "short_id",
]

_UUID_HEAD = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-", re.I)


def short_id(session_id: str, *, width: int = 24) -> str:
    """How a session id is shown in a line: a harness id (a UUID) by its first 8 characters,
    enough to tell sessions apart; any other id whole, cut to ``width`` (its head may be
    shared by many: ``mergebench-1-branch-a``)."""
    if _UUID_HEAD.match(session_id):
        return session_id[:8]
    return session_id if len(session_id) <= width else session_id[: width - 1] + "…"


_TOOL_MARKER = re.compile(r"^\s*<?[\w.-]+\s*[({]")  # `bash {"command": ...}` / `<read {...}>`


def _get(block: Any, key: str) -> Any:
    if type(block) is dict:  # raw JSON, the common case: skip the ABC check
        return block.get(key)
    if isinstance(block, Mapping):
        return block.get(key)
    return getattr(block, key, None)


def _blocks(message: Any) -> Iterator[Any]:
    """The content blocks of a message or a tool-result block (raw or typed)."""
    content = _get(message, "content") if message is not None else None
    if isinstance(content, list):
        for b in content:
            if type(b) is dict or isinstance(b, Mapping) or hasattr(b, "type"):
                yield b


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def message_text(message: Any) -> str:
    """The text blocks joined (no separator), as a chat transcript shows the message."""
    return "".join(_str(_get(b, "text")) for b in _blocks(message) if _get(b, "type") == "text")


def _results(message: Any) -> Iterator[Any]:
    return (b for b in _blocks(message) if _get(b, "type") == "tool-result")


def _calls(message: Any) -> Iterator[Any]:
    return (b for b in _blocks(message) if _get(b, "type") == "tool-call")


def display_text(message: Any) -> str:
    """``message_text``, followed by the text inside each tool-result block."""
    return message_text(message) + "".join(message_text(r) for r in _results(message))


def _search_part(block: Any) -> str:
    kind = _get(block, "type")
    if kind in ("text", "reasoning"):
        return _str(_get(block, "text"))
    if kind == "tool-call":
        return f"{_str(_get(block, 'name'))}({_str(_get(block, 'arguments'))})"
    if kind == "tool-result":
        return "\n".join(_search_part(b) for b in _blocks(block))
    return ""


def search_text(message: Any) -> str:
    """Text, reasoning, calls as ``name(arguments)`` and result text, one part per line."""
    return "\n".join(p for p in (_search_part(b) for b in _blocks(message)) if p)


def digest_text(message: Any) -> str:
    """What a digest keeps: the text, calls as ``name arguments``, the results' text."""
    own = message_text(message)
    parts = [own] if own else []
    parts += [f"{_str(_get(c, 'name'))} {_str(_get(c, 'arguments'))}" for c in _calls(message)]
    parts += [message_text(r) for r in _results(message)]
    return "\n".join(p for p in parts if p)


def _cut(line: str, width: int) -> str:
    return line if len(line) <= width else line[: max(width - 1, 0)] + "…"


def one_line(text: str, width: int) -> str:
    """``text`` on one line (whitespace folded), at most ``width`` characters; an ellipsis
    marks a cut."""
    return _cut(" ".join(text.split()), width)


def gist(message: Any, width: int = 96) -> str:
    """One line: the text and ``-> name(arguments)`` per call, or the first result."""
    results = list(_results(message))
    if results:
        r = results[0]
        body = (
            "error: " if _get(r, "is_error") or _get(r, "isError") else "result: "
        ) + message_text(r)
    else:
        parts = [message_text(message)]
        parts += [
            f"-> {_str(_get(c, 'name'))}({_str(_get(c, 'arguments'))})" for c in _calls(message)
        ]
        body = " ".join(p for p in parts if p)
    return _cut(" ".join(body.split()), width)


def first_line(value: str, width: int = 72) -> str:
    """The first line that is not empty and not a tool-call marker, cut to ``width``."""
    for line in value.splitlines():
        line = line.strip()
        if not line or (_TOOL_MARKER.match(line) and "{" in line):
            continue
        return _cut(line, width)
    return ""


# A query word for marking and windows: letters and digits, joined by - . / : _ (a path, a
# dotted name, a version stays one word).
_QUERY_WORD = re.compile(r"[^\W_]+(?:[-./:_][^\W_]+)*")
_WINDOW_LEAD = 50  # characters kept before the first word a window holds


def query_terms_in(query: str) -> list[str]:
    """The words of ``query`` that a window or a mark looks for: two characters or more,
    casefolded, longest first (so a longer word is marked before a word inside it)."""
    found = {w.casefold() for w in _QUERY_WORD.findall(query) if len(w) >= 2}
    return sorted(found, key=lambda w: (-len(w), w))


def _longest_first(terms: Iterable[str]) -> list[str]:
    return sorted({t.casefold() for t in terms if len(t) >= 2}, key=lambda w: (-len(w), w))


def match_spans(text: str, terms: list[str]) -> list[tuple[int, int, str]]:
    """Where ``terms`` occur in ``text`` (case-insensitive), as ``(start, end, term)``,
    without overlaps (an earlier, longer term wins)."""
    spans: list[tuple[int, int, str]] = []
    taken = bytearray(len(text))
    for term in terms:
        for m in re.finditer(re.escape(term), text, re.IGNORECASE):
            a, b = m.span()
            if not any(taken[a:b]):
                spans.append((a, b, term))
                taken[a:b] = b"\x01" * (b - a)
    return sorted(spans)


def query_window(
    text: str, query: str, width: int, *, terms: Iterable[str] | None = None
) -> tuple[int, int] | None:
    """The span ``(start, end)`` of at most ``width`` characters of ``text`` that holds the
    most distinct words of ``query`` (the earliest such span), widened to whole words; None
    when no query word occurs. ``terms``, when given, are the words to look for instead
    (a search's own index terms: stems, without stop words). A listing that can show only
    part of a long record shows this part, not the head: the head rarely holds what
    matched."""
    words = query_terms_in(query) if terms is None else _longest_first(terms)
    spans = match_spans(text, words)
    if not spans:
        return None
    best, best_n = 0, -1
    for a, _, _ in spans:
        start = max(0, a - _WINDOW_LEAD)
        n = len({t for x, y, t in spans if x >= start and y <= start + width})
        if n > best_n:
            best, best_n = start, n
    start = best
    if start > 0:  # begin at a word
        space = text.find(" ", start, start + 20)
        start = space + 1 if space >= 0 else start
    end = min(len(text), start + width)
    if end < len(text):  # end at a word
        space = text.rfind(" ", end - 20, end)
        end = space if space > start else end
    return start, end


def message_of(event: Mapping[str, Any]) -> dict[str, Any] | None:
    """The raw message a surface event carries (spec §8: ``user/message`` data IS the
    message; the others hold it in ``data.message``), or None."""
    data = event.get("data")
    if not isinstance(data, dict):
        return None
    msg = data if event.get("type") == "user/message" else data.get("message")
    return msg if isinstance(msg, dict) else None
