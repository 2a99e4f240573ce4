"""Formats: what data format a thing is kept in, one key per thing (``<thing> format``).

"Sessions are stored as JSONL", "the config is a YAML file", "Aggregated metrics from JSONL
session files" each say the format of one thing: ``session format`` = JSONL,
``configuration format`` = YAML, ``metric format`` = JSONL. A correction of a format
("it's not jsonl file; it's json file", ``_corrections``) gives the same key, so two
sessions that disagree on a format meet in one slot. Only a known data format word counts,
right before a file word or after a storage preposition: a format named in passing ("a JSON
parser", "JSONL logger") is no statement of what a thing is kept in.
"""

from __future__ import annotations

import re

from ._keys import KeyPhrase, key_phrase

__all__ = ["FORMATS", "READINGS", "format_key", "format_of", "format_statement"]

FORMATS = frozenset(
    "json jsonl ndjson json5 yaml yml toml csv tsv xml ini parquet avro protobuf msgpack "
    "markdown html sqlite".split()
)
_FMT = "|".join(sorted(FORMATS, key=len, reverse=True))
_FILE = r"(?:files?|documents?|format|logs?|records?|lines?|objects?|文件|格式)"
_PARTICIPLE = (
    r"(?:stored|saved|kept|written|persisted|serialized|serialised|encoded|exported|logged"
    r"|aggregated|collected|read|loaded|parsed|computed|derived|tracked|recorded|cached)"
)
_LABEL = re.compile(r"^[^\W\d_][\w -]{0,30}:\s+")
# "[Aggregated] metrics [are] [stored] from|in|as|into JSONL [session] files"
_STORED = re.compile(
    rf"^(?:{_PARTICIPLE}\s+)?(?P<thing>[a-z][\w-]*(?:\s[a-z][\w-]*){{0,2}}?)\s+"
    rf"(?:(?:is|are)\s+(?:now\s+|always\s+)?)?(?:{_PARTICIPLE}\s+)?"
    rf"(?:from|in|as|into|to)\s+(?:an?\s+|the\s+)?(?P<fmt>{_FMT})\b"
    rf"(?:\s+[a-z][\w-]*)?(?:\s+{_FILE}\b|(?=\s*$))",
    re.I,
)
# "the config is a YAML file"
_IS_A = re.compile(
    rf"^(?P<thing>[a-z][\w-]*(?:\s[a-z][\w-]*){{0,2}}?)\s+(?:is|are)\s+(?:an?\s+)?"
    rf"(?P<fmt>{_FMT})\s+{_FILE}\b",
    re.I,
)
# the tables ``format_statement`` reads a sentence with (a reading needs a match of one)
READINGS = (_STORED, _IS_A)


def format_of(value: str) -> str | None:
    """The format word of a short value ("json file", "JSONL", "a yaml document"), as
    written; None when it names no known format."""
    words = re.sub(r"^(?:an?|the)\s+", "", value.strip(), flags=re.I).split()
    if not words or len(words) > 3 or words[0].lower().strip("`'\".") not in FORMATS:
        return None
    rest = " ".join(words[1:])
    if rest and not re.fullmatch(rf"(?:[a-z][\w-]*\s+)?{_FILE}", rest, re.I):
        return None
    return words[0].strip("`'\".")


def format_key(thing: str) -> KeyPhrase | None:
    """``<thing> format`` as a key, the thing read as a loose noun phrase ("metrics" ->
    ``metric format``, "the config file" -> ``configuration format``); None when the thing
    is no noun phrase or only a file word."""
    key = key_phrase(thing, loose=True)
    if key is None:
        return None
    words = key.key.split()
    while words and words[-1] in ("format", "file", "document"):
        words.pop()
    if not words:
        return None
    return KeyPhrase(" ".join([*words, "format"]), f"{key.shown} format", key.code)


def format_statement(sentence: str) -> tuple[KeyPhrase, str] | None:
    """(key, format) of a sentence that says what format a thing is kept in (see the module
    docstring), else None."""
    s = _LABEL.sub("", sentence.strip().rstrip(".!;"))
    m = _STORED.match(s) or _IS_A.match(s)
    if m is None:
        return None
    key = format_key(m["thing"])
    return (key, m["fmt"]) if key is not None else None
