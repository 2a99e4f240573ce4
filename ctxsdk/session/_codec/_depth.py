"""The JSON nesting limit (``MAX_JSON_DEPTH``): where a value nests too deep, why it is
refused, and the cheap byte test that finds the few lines of a log worth walking.

One limit for logs, imported records, model replies and memories, so whatever a log holds
can be passed on and read back.
"""

from __future__ import annotations

from typing import Any

import orjson

from ...errors import SessionFormatError
from ._js_json import _mask_surrogates, loads_line
from ._rows import _row_seq

MAX_JSON_DEPTH = 128
"""The deepest nesting of arrays and objects any JSON ctxsdk takes in may have: one event
(or header line), one imported record, a model's reply, a memory's values. The value itself
is level 1; one level more is refused where it enters: ``read_log`` / ``Session.open`` raise
``SessionFormatError`` naming the path, line (and zstd frame) and seq;
``Session.from_events``, ``append`` and the other in-memory edits raise on the event's seq;
the importers raise ``ImportFormatError`` naming the file and record; a model's reply is
malformed (``LLMOutputError``, or a provider error for the response body); a memory refuses
the value (``InvalidArgument``) and reads a stored one as damage. One limit, so whatever a
log holds can be passed to a model, remembered and read back. Real logs stay far
below it (the deepest event in the harness's fixtures, the samples and the shared data nests
13 levels), while the tools that handle an event after it is read do not go much above it:
``orjson.dumps`` (``save``, ``fork``, the views) refuses 255 levels and more, and Python's
``json`` and recursive walkers hit the interpreter's recursion limit near 1000."""

_CONTAINERS = (dict, list, tuple)
# Every byte but the two openers and the newline: what is left of a text after deleting these
# is, line by line, its openers, and a line cannot nest deeper than it has openers.
_NOT_OPENER = bytes(b for b in range(256) if b not in b"[{\n")
_OPENERS_AS_ONE = bytes.maketrans(b"{", b"[")  # kept openers all "[": a line is a run of them
_PATH_SHOWN = 6  # path members named in an error before the rest is counted


def deep_path(value: Any, limit: int = MAX_JSON_DEPTH) -> list[str | int] | None:
    """The path (keys and indexes) to the first array or object nested deeper than ``limit``
    levels in ``value`` (``value`` itself is level 1), or None when it nests no deeper.

    Iterative, so it never recurses however deep the value is (a cycle reads as too deep).
    """
    # (node, depth, key, parent entry): the parent links rebuild the path, only on the way out.
    Entry = tuple[Any, int, str | int, Any]
    stack: list[Entry] = [(value, 1, "", None)]
    while stack:
        entry = stack.pop()
        node, depth = entry[0], entry[1]
        if not isinstance(node, _CONTAINERS):
            continue
        if depth > limit:
            path: list[str | int] = []
            at: Entry | None = entry
            while at is not None and at[3] is not None:
                path.append(at[2])
                at = at[3]
            return path[::-1]
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in items:
            if isinstance(child, _CONTAINERS):
                stack.append((child, depth + 1, key if isinstance(key, int) else str(key), entry))
    return None


def json_path_text(path: list[str | int]) -> str:
    """A ``deep_path`` as text (``data.content[0].meta[0]``), its first members only."""
    shown = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path[:_PATH_SHOWN])
    shown = shown.lstrip(".") or "the top level"
    more = len(path) - _PATH_SHOWN
    return f"{shown} and {more} level(s) below it" if more > 0 else shown


def depth_reason(path: list[str | int] | None, limit: int = MAX_JSON_DEPTH) -> str:
    """Why a value nested too deep is refused, naming where (None: past the JSON parser's
    own limit of 1024 levels) and the limit."""
    where = f"at {json_path_text(path)}" if path is not None else "past the parser's 1024 levels"
    return (
        f"nested more than {limit} levels of arrays/objects deep, {where}; the limit is "
        f"MAX_JSON_DEPTH = {limit} (real logs nest about a dozen levels, and saving, forking "
        "and the views cannot handle such a value), so it is refused: remove or flatten it"
    )


def _deep_lines(text: bytes, n_lines: int, limit: int = MAX_JSON_DEPTH) -> list[int]:
    """0-based indexes of the lines that may nest deeper than ``limit``: those with more than
    ``limit`` openers (``[``/``{``, strings included). One C pass over the text (a table
    delete, the openers kept as ``[``) and a substring search of what is left; the split into
    lines, and the exact walk, run only when some line may be that deep."""
    opens = text.translate(_OPENERS_AS_ONE, _NOT_OPENER)
    if len(opens) - n_lines <= limit:  # fewer openers in all than one deep line needs
        return []
    if opens.find(b"[" * (limit + 1)) == -1:  # no line holds more than limit openers
        return []
    parts = opens.split(b"\n")[:n_lines]
    return [i for i, part in enumerate(parts) if len(part) > limit]


def _seq_of_line(lines: list[bytes], k: int, version: int | None) -> int | None:
    """The seq of the event on 0-based line ``k`` (error path only: packed v0/v1 rows hold
    several events, so their lines before it are parsed and counted)."""
    if k < 1 or version is None:
        return None
    if version >= 2:
        return k - 1
    seq = 0
    for line in lines[1:k]:
        try:
            _, count = _row_seq(loads_line(line))
        except orjson.JSONDecodeError:
            return None
        if count is None:
            return None
        seq += count
    return seq


def _refuse_deep_line(lines: list[bytes], k: int, version: int | None) -> None:
    """Raise the located error if 0-based line ``k`` nests past ``MAX_JSON_DEPTH``."""
    path: list[str | int] | None
    try:
        path = deep_path(orjson.loads(_mask_surrogates(lines[k])))
    except orjson.JSONDecodeError as exc:
        if "depth limit" not in str(exc):
            return  # not valid JSON for another reason: the parse names it
        path = None
    else:
        if path is None:
            return
    what = "the header line is " if k == 0 else "the event is "
    raise SessionFormatError(
        what + depth_reason(path), line=k + 1, seq=_seq_of_line(lines, k, version)
    )


def refuse_deep_events(
    events: list[dict[str, Any]],
    start: int = 0,
    *,
    header: dict[str, Any] | None = None,
    limit: int = MAX_JSON_DEPTH,
) -> None:
    """Refuse in-memory events ``events[start:]`` (and ``header``) nested deeper than
    ``limit`` with a ``SessionFormatError`` naming the seq (its index) and where in the event.

    Each event is serialized once (orjson, in C) and its openers counted; only an event with
    more than ``limit`` of them, or one orjson cannot write, is walked.
    """
    if header is not None and (path := deep_path(header, limit)) is not None:
        raise SessionFormatError("the header is " + depth_reason(path, limit))
    dumps = orjson.dumps
    small = 2 * limit  # a text this short cannot hold limit + 1 open-close pairs
    for i in range(start, len(events)):
        ev = events[i]
        try:
            text = dumps(ev)
        except TypeError:  # orjson.JSONEncodeError: 255+ levels, a cycle, or not JSON at all
            pass
        else:
            if len(text) <= small or text.count(b"[") + text.count(b"{") <= limit:
                continue
        path = deep_path(ev, limit)
        if path is not None:
            raise SessionFormatError("the event is " + depth_reason(path, limit), seq=i)
