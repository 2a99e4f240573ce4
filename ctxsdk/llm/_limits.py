"""What a reply may be: its size cap, how deep its JSON may nest, and text that can be logged
and sent again. No HTTP here.

A provider's reply is untrusted input. Its body is read up to ``MAX_RESPONSE_BYTES``
(``LLM(max_response_bytes=...)``) and never past it; JSON nested deeper than
``MAX_JSON_DEPTH`` is refused (``json`` would otherwise end in a ``RecursionError``); and a
lone surrogate (``"\\ud800"`` in the JSON text, which ``json`` decodes into a ``str`` that
cannot be encoded) becomes U+FFFD, so a result can be written to a log or appended to the
next request.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_RESPONSE_BYTES = 32 * 1024 * 1024
"""The default cap on one response body (32 MiB, counted after content decoding); a stream
counts every byte it carries. Over it, a call fails with ``LLMProviderError``."""

MAX_JSON_DEPTH = 100
"""How deep the JSON of a reply may nest (objects and arrays); deeper is refused."""

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
