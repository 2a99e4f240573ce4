"""JSON text as the harness's JavaScript reads and writes it: ``loads_line``, ``dumps_json``,
``dumps_line`` and ``copy_json``, orjson everywhere but for a lone UTF-16 surrogate, which
JavaScript strings may hold and UTF-8 cannot.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson


def dumps_line(obj: Any) -> bytes:
    """``JSON.stringify(obj) + "\\n"`` (compact, key order kept); see ``dumps_json``."""
    try:
        return orjson.dumps(obj) + b"\n"
    except TypeError:
        return dumps_json(obj) + b"\n"


# --- lone UTF-16 surrogates ------------------------------------------------------------------
#
# The harness is JavaScript: its strings are UTF-16, a cut surrogate pair leaves a lone
# surrogate in one, ``JSON.stringify`` writes it as a ``\udXXX`` escape and ``JSON.parse``
# reads it back. orjson refuses it both ways (UTF-8 cannot hold one), so a line or a value
# holding one takes the slow path below; every other line and value stays on orjson.

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_ORJSON_INTS = (-(2**63), 2**64 - 1)  # orjson reads an integer outside these as a float


def _mask_surrogates(line: bytes) -> bytes:
    """``line`` with every surrogate escape (paired or lone) made ``\\ufffd``: the same JSON
    structure and validity, but for orjson's rule against lone surrogates."""
    if b"\\u" not in line:
        return line
    return _SURROGATE_ESCAPE.sub(rb"\\ufffd", line)


def _orjson_int(text: str) -> int | float:
    value = int(text)
    return value if _ORJSON_INTS[0] <= value <= _ORJSON_INTS[1] else float(value)


def loads_line(line: bytes) -> Any:
    """One JSON line's value as the harness's ``JSON.parse`` reads it.

    ``orjson.loads``; a line orjson refuses only for a lone surrogate escape (``"\\ud800"``)
    is parsed with Python's ``json``, whose str then holds the lone surrogate. Any other
    defect raises orjson's own ``JSONDecodeError`` for the line, unchanged. Nesting is not
    limited here: the readers refuse lines past ``MAX_JSON_DEPTH`` before they parse them.
    """
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        masked = _mask_surrogates(line)
        if masked == line:
            raise
        try:
            orjson.loads(masked)  # the fast path's rules, lone surrogates aside
            return json.loads(line.decode(), parse_int=_orjson_int)
        except (ValueError, RecursionError):
            raise exc from None


def _has_surrogate(text: str) -> bool:
    if text.isascii():
        return False
    try:
        text.encode()
    except UnicodeEncodeError:
        return True
    return False


def _js_string(text: str) -> bytes:
    """A str as ``JSON.stringify`` writes it: orjson's escapes (Python's ``json`` with
    ``ensure_ascii=False`` makes the same ones), a lone surrogate as ``\\udXXX``."""
    return json.dumps(text, ensure_ascii=False).encode("utf-8", "backslashreplace")


def _escape_surrogates(value: Any, found: list[bool]) -> Any:
    """``value`` with each str holding a lone surrogate (and each object with such a key)
    replaced by an ``orjson.Fragment`` of its JSON text."""
    if isinstance(value, str):
        if _has_surrogate(value):
            found.append(True)
            return orjson.Fragment(_js_string(value))
        return value
    if isinstance(value, dict):
        items = [(k, _escape_surrogates(v, found)) for k, v in value.items()]
        if any(isinstance(k, str) and _has_surrogate(k) for k, _ in items):
            if not all(isinstance(k, str) for k, _ in items):
                raise TypeError("Dict key must be str")
            found.append(True)
            body = b",".join(_js_string(k) + b":" + orjson.dumps(v) for k, v in items)
            return orjson.Fragment(b"{" + body + b"}")
        return dict(items)
    if isinstance(value, list | tuple):
        return [_escape_surrogates(v, found) for v in value]
    return value


def dumps_json(obj: Any) -> bytes:
    """``JSON.stringify(obj)`` as UTF-8 bytes: ``orjson.dumps``; a value holding a str with a
    lone surrogate (read from a harness log, see ``loads_line``) is written with the
    surrogate as JavaScript writes it, a lowercase ``\\udXXX`` escape, and everything else in
    it byte for byte as orjson writes it. Whatever else orjson cannot write raises its
    ``TypeError`` unchanged."""
    try:
        return orjson.dumps(obj)
    except TypeError as exc:
        found: list[bool] = []
        try:
            escaped = _escape_surrogates(obj, found)
        except RecursionError:
            raise exc from None
        if not found:
            raise
        return orjson.dumps(escaped)


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON value (an orjson round trip, ~10x faster than ``deepcopy``),
    strs with lone surrogates included."""
    try:
        return orjson.loads(orjson.dumps(value))
    except TypeError:
        return loads_line(dumps_json(value))
