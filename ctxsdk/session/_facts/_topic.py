"""The topic of a pronoun: what the agent's last turn said a value of.

A user who answers "it's not jsonl file" means the thing the agent just called jsonl. The
agent named it in one of two ways, read in this order:

- a path with that extension (``~/.codemie/metrics/{sessionId}.jsonl``): the thing is the
  file's name, or its folder when the name is a placeholder (``{sessionId}``, ``<id>``,
  ``*``, ``$NAME``), so the topic is ``metrics``;
- a noun before the value and a file word ("the metrics jsonl file"), or the one noun the
  turn puts before "file" ("the same metrics file"), when there is exactly one.

Nothing else is guessed: no topic, no key.
"""

from __future__ import annotations

import re

__all__ = ["topic_of"]

_PLACEHOLDER = re.compile(r"^$|[{}<>$*%]|^\.+$")
_SEGMENT = r"[\w.{}<>$*%@~-]"
_NOT_NOUN = frozenset(
    "a an the this that these those same single one each every new old existing current "
    "separate another other its their our my your json jsonl yaml toml csv xml main whole "
    "entire given any some per of in to for from with".split()
)
_FILE_WORD = r"(?:file|files|document|log|logs)"


def _path_topic(previous: str, ext: str) -> str | None:
    pattern = rf"(?<![\w.]){_SEGMENT}*(?:/{_SEGMENT}+)*\.{re.escape(ext)}\b"
    for m in re.finditer(pattern, previous, re.I):
        parts = [p for p in m.group(0).split("/") if p and p != "~"]
        if not parts:
            continue
        stem = parts[-1][: -len(ext) - 1]
        if not _PLACEHOLDER.search(stem):
            return stem.lstrip(".")
        for folder in reversed(parts[:-1]):
            if not _PLACEHOLDER.search(folder):
                return folder.lstrip(".")
    return None


def _noun_topic(previous: str, value: str) -> str | None:
    named = re.search(rf"\b([a-z][\w-]+)\s+{re.escape(value)}\s+{_FILE_WORD}\b", previous, re.I)
    if named and named.group(1).lower() not in _NOT_NOUN:
        return named.group(1)
    nouns = {
        m.group(1).lower()
        for m in re.finditer(rf"\b([a-z][\w-]+)\s+{_FILE_WORD}\b", previous, re.I)
        if m.group(1).lower() not in _NOT_NOUN
    }
    return nouns.pop() if len(nouns) == 1 else None


def topic_of(previous: str, value: str) -> str | None:
    """The thing ``previous`` (the agent's last turn) gave the value ``value`` (a format word
    such as ``jsonl``), as a word or two; None when the turn names no one thing."""
    if not previous or not value or not re.fullmatch(r"[\w-]{1,12}", value):
        return None
    return _path_topic(previous, value) or _noun_topic(previous, value)
