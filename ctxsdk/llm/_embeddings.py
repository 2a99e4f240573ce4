"""Embeddings over the seam: an OpenAI-compatible ``/embeddings`` endpoint as an ``Embedder``
for the base's ``Retriever`` (``ctxsdk.session.Embedder``), so Memory and fit can rank with a
remote model as they do with a local one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._embedding_answer import bad_embeddings

if TYPE_CHECKING:
    from ._client import LLM

__all__ = ["RemoteEmbedder"]


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
            raise bad_embeddings(f"vectors of {len(out[0])} numbers, {self._dim} expected")
        return out

    def __repr__(self) -> str:
        return f"RemoteEmbedder({self.name})"
