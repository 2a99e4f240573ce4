"""Embeddings over the seam: an OpenAI-compatible ``/embeddings`` endpoint as an ``Embedder``
for the base's ``Retriever`` (``ctxsdk.session.Embedder``), so Memory and fit can rank with a
remote model as they do with a local one."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..errors import LLMOutputError
from ..session._model_text import loads

if TYPE_CHECKING:
    from ._client import LLM

__all__ = ["RemoteEmbedder", "parse_embeddings"]


def _bad(detail: str) -> LLMOutputError:
    return LLMOutputError(detail, reason=f"bad embeddings answer: {detail}", kind="malformed-json")


def parse_embeddings(body: bytes, n: int, *, where: str = "") -> list[list[float]]:
    """The ``n`` vectors of an ``/embeddings`` answer (``{"data": [{"index", "embedding"}]}``),
    ordered by ``index``; every vector of one length, every number finite."""
    try:
        data = loads(body)
    except ValueError as exc:
        raise _bad(f"{where}: not JSON ({exc})") from None
    rows = data.get("data") if isinstance(data, dict) else None
    if not isinstance(rows, list) or len(rows) != n:
        got = len(rows) if isinstance(rows, list) else "no"
        raise _bad(f"{where}: {got} vectors for {n} texts")
    out: list[list[float] | None] = [None] * n
    for pos, row in enumerate(rows):
        vec = row.get("embedding") if isinstance(row, dict) else None
        idx = row.get("index", pos) if isinstance(row, dict) else pos
        if not isinstance(idx, int) or isinstance(idx, bool) or not 0 <= idx < n or out[idx]:
            raise _bad(f"{where}: vector {pos} has a bad or repeated index {idx!r}")
        if not isinstance(vec, list) or not vec:
            raise _bad(f"{where}: vector {pos} is not a list of numbers")
        try:
            floats = [float(x) for x in vec]
        except (TypeError, ValueError):
            raise _bad(f"{where}: vector {pos} is not a list of numbers") from None
        if any(isinstance(x, bool) for x in vec) or not all(math.isfinite(x) for x in floats):
            raise _bad(f"{where}: vector {pos} holds a value that is not a finite number")
        out[idx] = floats
    dims = {len(v) for v in out if v is not None}
    if len(dims) != 1:
        raise _bad(f"{where}: vectors of different lengths {sorted(dims)}")
    return [v for v in out if v is not None]


class RemoteEmbedder:
    """An ``Embedder`` backed by ``llm.embed`` (``model`` defaults to the LLM's). ``dim`` is
    learnt from the first answer when not given; ``batch`` texts go in one request."""

    def __init__(
        self, llm: LLM, model: str | None = None, *, dim: int | None = None, batch: int = 64
    ) -> None:
        self._llm = llm
        self._model = model
        self._dim = dim
        self._batch = max(1, batch)

    @property
    def name(self) -> str:
        return f"remote:{self._model or self._llm.model or 'model'}"

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = len(self.embed(["dimension probe"])[0])
        return self._dim

    def embed(self, texts: list[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for i in range(0, len(texts), self._batch):
            out += self._llm.embed(texts[i : i + self._batch], model=self._model)
        if out and self._dim is None:
            self._dim = len(out[0])
        elif out and len(out[0]) != self._dim:
            raise _bad(f"vectors of {len(out[0])} numbers, {self._dim} expected")
        return out

    def __repr__(self) -> str:
        return f"RemoteEmbedder({self.name})"
