"""The options of one model call: the keyword arguments of ``chat`` and its twins, and the
frozen ``CallOptions`` they become. No HTTP here."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from ..errors import InvalidArgument
from ..model import ReasoningEffort as ReasoningEffort  # defined with the engines' seam


class _Kwargs(TypedDict, total=False):
    max_tokens: int | None
    temperature: float
    reasoning_effort: ReasoningEffort
    max_chars_per_input: int | None
    cancel: threading.Event | None


class StructuredKwargs(_Kwargs, total=False):
    """The keyword arguments of ``structured`` / ``astructured`` (see ``CallOptions``)."""

    json_mode: bool


class StreamKwargs(_Kwargs, total=False):
    """The keyword arguments of ``stream`` / ``astream`` (see ``CallOptions``)."""

    stop: Sequence[str] | None
    tools: Sequence[Mapping[str, Any]] | None


class ChatKwargs(StreamKwargs, total=False):
    """The keyword arguments of ``chat`` / ``achat``: every option (see ``CallOptions``)."""

    json_mode: bool


@dataclass(frozen=True)
class CallOptions:
    """The settings of one model call, checked once and passed whole to the request core.

    ``chat(messages, max_tokens=50)`` builds ``CallOptions(max_tokens=50)``; ``None`` means
    "the ``LLM`` object's default" (``max_tokens`` 4000 unless ``LLM(max_tokens=...)``, no
    ``max_chars_per_input`` cap unless set) and ``resolved`` fills those in.

    - ``max_tokens``: the reply's token cap, > 0;
    - ``temperature``: 0 (the seeds' mechanical-extraction setting) unless given;
    - ``reasoning_effort``: ``"off"`` unless given (see ``LLM`` for what goes on the wire);
    - ``stop`` / ``tools``: stop sequences and OpenAI-format tool definitions (chat, stream);
    - ``max_chars_per_input``: each message's text cut to this many characters, keeping the
      tail (``truncate_keep_tail``), >= 0;
    - ``cancel``: a ``threading.Event`` checked before each attempt, during backoff and
      between received chunks;
    - ``json_mode``: also send ``response_format: {"type": "json_object"}`` (chat, structured).
    """

    max_tokens: int | None = None
    temperature: float = 0.0
    reasoning_effort: ReasoningEffort = "off"
    stop: tuple[str, ...] = ()
    tools: tuple[Mapping[str, Any], ...] = ()
    max_chars_per_input: int | None = None
    cancel: threading.Event | None = field(default=None, compare=False)
    json_mode: bool = False

    def __post_init__(self) -> None:
        if self.max_tokens is not None and self.max_tokens <= 0:
            raise InvalidArgument(f"max_tokens must be > 0, not {self.max_tokens}")
        if self.max_chars_per_input is not None and self.max_chars_per_input < 0:
            raise InvalidArgument(
                f"max_chars_per_input must be >= 0 (or None for no cap), "
                f"not {self.max_chars_per_input}"
            )
        object.__setattr__(self, "stop", tuple(self.stop or ()))
        object.__setattr__(self, "tools", tuple(self.tools or ()))

    @classmethod
    def of(cls, call: str, allowed: type[Any], kwargs: Mapping[str, Any]) -> CallOptions:
        """The options of ``call(**kwargs)``, whose keyword arguments are the ``allowed``
        TypedDict's; another name is a ``TypeError``, as for any Python function."""
        keys: frozenset[str] = allowed.__optional_keys__
        for name in kwargs:
            if name not in keys:
                raise TypeError(f"{call}() got an unexpected keyword argument {name!r}")
        return cls(**kwargs)

    def resolved(self, *, max_tokens: int, max_chars_per_input: int | None) -> CallOptions:
        """These options with an ``LLM`` object's defaults where they say ``None``."""
        return dataclasses.replace(
            self,
            max_tokens=max_tokens if self.max_tokens is None else self.max_tokens,
            max_chars_per_input=(
                max_chars_per_input
                if self.max_chars_per_input is None
                else self.max_chars_per_input
            ),
        )
