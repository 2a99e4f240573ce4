"""What a reply may be: its size cap here; how deep its JSON may nest and text that can be
logged and sent again live in the base (``ctxsdk.session._model_text``). No HTTP here.

A provider's reply is untrusted input. Its body is read up to ``MAX_RESPONSE_BYTES``
(``LLM(max_response_bytes=...)``) and never past it.
"""

from __future__ import annotations

from ..session._model_text import MAX_JSON_DEPTH, TooDeep, clean_text, loads, tidy

__all__ = ["MAX_JSON_DEPTH", "MAX_RESPONSE_BYTES", "TooDeep", "clean_text", "loads", "tidy"]

MAX_RESPONSE_BYTES = 32 * 1024 * 1024
"""The default cap on one response body (32 MiB, counted after content decoding); a stream
counts every byte it carries. Over it, a call fails with ``LLMProviderError``."""
