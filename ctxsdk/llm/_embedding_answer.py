"""The vectors of an OpenAI-compatible ``/embeddings`` answer, checked (``parse_embeddings``).

In a module of its own: the client parses the answers it receives with it, and the
``RemoteEmbedder`` built on the client checks the vectors it hands on with the same error.
"""

from __future__ import annotations

import math

from ..errors import LLMOutputError
from ..session._model_text import loads

__all__ = ["bad_embeddings", "parse_embeddings"]


def bad_embeddings(detail: str) -> LLMOutputError:
    """The error for an embeddings answer that is not what was asked for."""
    return LLMOutputError(detail, reason=f"bad embeddings answer: {detail}", kind="malformed-json")


def parse_embeddings(body: bytes, n: int, *, where: str = "") -> list[list[float]]:
    """The ``n`` vectors of an ``/embeddings`` answer (``{"data": [{"index", "embedding"}]}``),
    ordered by ``index``; every vector of one length, every number finite."""
    try:
        data = loads(body)
    except ValueError as exc:
        raise bad_embeddings(f"{where}: not JSON ({exc})") from None
    rows = data.get("data") if isinstance(data, dict) else None
    if not isinstance(rows, list) or len(rows) != n:
        got = len(rows) if isinstance(rows, list) else "no"
        raise bad_embeddings(f"{where}: {got} vectors for {n} texts")
    out: list[list[float] | None] = [None] * n
    for pos, row in enumerate(rows):
        vec = row.get("embedding") if isinstance(row, dict) else None
        idx = row.get("index", pos) if isinstance(row, dict) else pos
        if not isinstance(idx, int) or isinstance(idx, bool) or not 0 <= idx < n or out[idx]:
            raise bad_embeddings(f"{where}: vector {pos} has a bad or repeated index {idx!r}")
        if not isinstance(vec, list) or not vec:
            raise bad_embeddings(f"{where}: vector {pos} is not a list of numbers")
        try:
            floats = [float(x) for x in vec]
        except (TypeError, ValueError):
            raise bad_embeddings(f"{where}: vector {pos} is not a list of numbers") from None
        if any(isinstance(x, bool) for x in vec) or not all(math.isfinite(x) for x in floats):
            raise bad_embeddings(f"{where}: vector {pos} holds a value that is not a finite number")
        out[idx] = floats
    dims = {len(v) for v in out if v is not None}
    if len(dims) != 1:
        raise bad_embeddings(f"{where}: vectors of different lengths {sorted(dims)}")
    return [v for v in out if v is not None]
