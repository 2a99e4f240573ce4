"""The model seam on the ground floor: what an engine may ask of a model, and how it asks.

An engine never imports HTTP code. A model is passed in as any object that satisfies
``ModelProtocol`` (one method, ``chat``; ``ctxsdk.LLM`` is one), and every engine's model
path goes through ``ask_text`` or ``ask_json``, which never raise for a model failure: they
return an ``Answer`` that holds the value, or the reason there is none, so the engine can
fall back to its deterministic path and say why. ``with_fallback`` is that pattern in one
call:

    from ctxsdk.model import ask_json, with_fallback

    out = with_fallback(
        llm,                                        # None: the deterministic path
        lambda m: ask_json(m, prompt, max_tokens=400, validate=Slots.model_validate),
        lambda: heuristic_slots(branches),
    )
    out.value, out.reason                           # reason: None, or why the model was not used

This module imports only the error tree, the base's JSON reader and pydantic.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import (
    Any,
    Generic,
    Literal,
    NamedTuple,
    Protocol,
    Self,
    TypeAlias,
    TypedDict,
    TypeVar,
    Unpack,
    overload,
    runtime_checkable,
)

from pydantic import ValidationError

from .errors import LLM_FAILURES, LLMError, LLMFailureKind, LLMOutputError
from .session.kernel import extract_json

__all__ = ["Answer", "ModelProtocol", "Outcome", "ask_json", "ask_text", "with_fallback"]

_log = logging.getLogger("ctxsdk.llm")  # one logger for the seam, wherever it is called from

T = TypeVar("T")

Messages: TypeAlias = str | Sequence[Mapping[str, Any]]
"""A prompt: one user text, or OpenAI-format chat messages (``session.wire("openai")``)."""

ReasoningEffort: TypeAlias = Literal["off", "minimal", "low", "medium", "high", "max"]
"""``"off"`` (the default for every ctxsdk call) sends nothing that enables thinking."""

NO_ROUTE = next(f.reason for f in LLM_FAILURES if f.kind == "no-route")
"""``"no route configured"``: the reason recorded when there is no model to call."""


class ModelOptions(TypedDict, total=False):
    """The options an engine passes to ``chat``; a model may accept more (``LLM`` does)."""

    max_tokens: int | None
    temperature: float
    reasoning_effort: ReasoningEffort
    json_mode: bool


@runtime_checkable
class Reply(Protocol):
    """What ``chat`` returns, as far as an engine reads it: the text, and whether it was cut
    at ``max_tokens``. ``ctxsdk.llm.ChatResult`` is one; ``usage``, ``model`` and
    ``provider`` are read when a reply has them."""

    @property
    def text(self) -> str: ...

    @property
    def truncated(self) -> bool: ...


@runtime_checkable
class ModelProtocol(Protocol):
    """The model as engines see it: ``chat(messages, **options)`` with OpenAI-format chat
    messages, returning a ``Reply`` and raising ``ctxsdk.errors.LLMError`` (with its ladder
    ``reason``) when the call fails. ``ctxsdk.LLM`` satisfies it; engines take
    ``llm: ModelProtocol | None = None``."""

    def chat(self, messages: list[dict[str, Any]], /, **options: Unpack[ModelOptions]) -> Reply: ...


# --- the outcome of one call ---------------------------------------------------------------


@dataclass(frozen=True)
class Answer(Generic[T]):
    """What a model call gave, or the reason it gave nothing usable.

    ``value`` is the usable answer (the text for ``ask_text``, the parsed and validated JSON
    for ``ask_json``), never a half-parsed one. When it is ``None``, ``degraded_reason`` says
    why in the ladder's words and ``kind`` gives the short code (``LLMFailureKind``);
    ``unwrap`` raises the matching ``LLMError``. ``text`` is the reply's raw text and
    ``result`` the reply itself (``None`` when the call failed before one came back).
    """

    value: T | None
    degraded_reason: str | None = None
    kind: LLMFailureKind | None = None
    text: str = ""
    result: Reply | None = None
    error: LLMError | None = field(default=None, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.degraded_reason is None

    @property
    def usage(self) -> object | None:
        """The reply's token usage when the model reported one (``ctxsdk.llm.Usage``)."""
        return getattr(self.result, "usage", None)

    def unwrap(self) -> T:
        """The value, or raise the error that degraded it."""
        if self.degraded_reason is None:
            return self.value  # type: ignore[return-value]  # ok implies a value
        if self.error is not None:
            raise self.error
        raise LLMOutputError(self.degraded_reason, reason=self.degraded_reason, kind=self.kind)

    @classmethod
    def failed(cls, error: LLMError, *, text: str = "", result: Reply | None = None) -> Self:
        """A degraded answer carrying ``error``'s reason and kind."""
        return cls(None, error.reason, error.kind, text, result, error)

    def __repr__(self) -> str:
        name = type(self).__name__
        if self.ok:
            return f"{name}(ok, {self.value!r})"
        return f"{name}(degraded: {self.degraded_reason})"


def _reply_text(reply: Reply) -> tuple[str, bool]:
    # tolerant: a model passed in by a user may return a reply with less than the protocol
    text = getattr(reply, "text", "")
    return (text if isinstance(text, str) else ""), bool(getattr(reply, "truncated", False))


def _call(model: ModelProtocol, messages: Messages, options: ModelOptions) -> Reply | LLMError:
    # a prompt is one user message, as LLM reads it; the messages themselves are not copied
    wire = (
        [{"role": "user", "content": messages}]
        if isinstance(messages, str)
        else [m if isinstance(m, dict) else dict(m) for m in messages]
    )
    try:
        return model.chat(wire, **options)
    except LLMError as exc:
        failed = LLMError(str(exc), reason=f"the model call failed: {exc.reason}", kind=exc.kind)
        failed.__cause__ = exc
        return failed


def ask_text(
    model: ModelProtocol, messages: Messages, **options: Unpack[ModelOptions]
) -> Answer[str]:
    """One call for prose; the value is the reply's text, stripped. Degraded, never raised:
    ``the model call failed: <reason>`` (the call raised ``LLMError``), ``the model's reply
    was cut at max_tokens`` (a cut text is not used) or ``the model returned no text``."""
    reply = _call(model, messages, options)
    if isinstance(reply, LLMError):
        return Answer.failed(reply)
    raw, truncated = _reply_text(reply)
    if truncated:
        cut = "the model's reply was cut at max_tokens"
        err = LLMOutputError(cut, reason=cut, kind="truncated")
        return Answer.failed(err, text=raw, result=reply)
    text = raw.strip()
    if not text:
        empty = "the model returned no text"
        return Answer.failed(LLMOutputError(empty, reason=empty), text=raw, result=reply)
    return Answer(text, text=raw, result=reply)


@overload
def ask_json(
    model: ModelProtocol,
    messages: Messages,
    *,
    validate: None = None,
    **options: Unpack[ModelOptions],
) -> Answer[dict[str, Any]]: ...


@overload
def ask_json(
    model: ModelProtocol,
    messages: Messages,
    *,
    validate: Callable[[dict[str, Any]], T],
    **options: Unpack[ModelOptions],
) -> Answer[T]: ...


def ask_json(
    model: ModelProtocol,
    messages: Messages,
    *,
    validate: Callable[[dict[str, Any]], Any] | None = None,
    **options: Unpack[ModelOptions],
) -> Answer[Any]:
    """One deterministic call for a JSON object (temperature 0, no reasoning, JSON mode,
    unless ``options`` say otherwise): the object of the reply (``extract_json``: the whole
    reply, a fenced block or an object in prose), passed through ``validate`` when given (a
    pydantic ``Model.model_validate``, or any function that raises ``LLMError`` or a
    ``ValidationError`` for an answer it refuses). Degraded, never raised:

    - the call raised ``LLMError`` -> ``the model call failed: <reason>``;
    - no JSON object -> ``malformed JSON: <detail>``, or ``the reply was cut at max_tokens
      (<detail>)`` when it was cut (a reply that parses is used even if it was cut);
    - ``validate`` refused it -> its ``LLMError`` reason, or ``schema validation failed: ...``.
    """
    asked: ModelOptions = {"temperature": 0, "reasoning_effort": "off", "json_mode": True}
    asked.update(options)
    reply = _call(model, messages, asked)
    if isinstance(reply, LLMError):
        return Answer.failed(reply)
    text, truncated = _reply_text(reply)
    try:
        obj: dict[str, Any] = extract_json(text)
    except LLMOutputError as exc:
        if not truncated:
            return Answer.failed(exc, text=text, result=reply)
        cut = LLMOutputError(
            str(exc), reason=f"the reply was cut at max_tokens ({exc.reason})", kind="truncated"
        )
        return Answer.failed(cut, text=text, result=reply)
    if validate is None:
        return Answer(obj, text=text, result=reply)
    try:
        return Answer(validate(obj), text=text, result=reply)
    except LLMError as exc:
        return Answer.failed(exc, text=text, result=reply)
    except ValidationError as exc:
        reason = f"schema validation failed: {validation_detail(exc)}"
        err = LLMOutputError(reason, reason=reason, kind="schema")
        return Answer.failed(err, text=text, result=reply)


def validation_detail(exc: ValidationError) -> str:
    """The first error of a pydantic ``ValidationError`` in one line (``loc: msg (+n more)``)."""
    errors = exc.errors()
    first = errors[0]
    loc = ".".join(str(p) for p in first["loc"]) or "(root)"
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{loc}: {first['msg']}{more}"


# --- the fallback pattern every engine uses ------------------------------------------------


class Outcome(NamedTuple, Generic[T]):
    """What ``with_fallback`` returns: the value, and why the heuristic produced it
    (``None`` when the model's answer was used). Unpacks as ``value, reason``."""

    value: T
    reason: str | None

    @property
    def degraded(self) -> bool:
        return self.reason is not None

    @property
    def source(self) -> Literal["model", "heuristic"]:
        return "heuristic" if self.reason is not None else "model"

    def __repr__(self) -> str:
        how = "model" if self.reason is None else f"heuristic: {self.reason}"
        return f"Outcome({how}, {self.value!r})"


M = TypeVar("M", bound=ModelProtocol)


def with_fallback(
    llm: M | None,
    call: Callable[[M], Answer[T] | T],
    fallback: Callable[[], T],
) -> Outcome[T]:
    """Run ``call(llm)``; on any rung of the ladder run ``fallback()`` and record why.

    - ``llm is None`` -> ``"no route configured"``;
    - ``call`` returns a degraded ``Answer`` (``ask_json``, ``LLM.structured``) -> its
      ``degraded_reason``;
    - ``call`` raises ``LLMError`` -> its ``reason`` (an engine that rejects a validated
      answer, e.g. "zero usable slots", raises ``LLMOutputError`` itself);
    - ``call`` raises a pydantic ``ValidationError`` -> ``"schema validation failed: ..."``.

    Other exceptions are bugs and propagate. A model failure is logged at WARNING on
    ``ctxsdk.llm`` with the reason (never a prompt or a key); ``llm is None`` only at DEBUG.
    """
    if llm is None:  # the caller chose no model: the normal deterministic path, not a warning
        _log.debug("no model given; using the heuristic")
        return Outcome(fallback(), NO_ROUTE)
    reason: str
    try:
        got = call(llm)
    except LLMError as exc:
        reason = exc.reason
    except ValidationError as exc:
        reason = f"schema validation failed: {validation_detail(exc)}"
    else:
        if not isinstance(got, Answer):
            return Outcome(got, None)
        if got.ok:
            return Outcome(got.value, None)  # type: ignore[arg-type]  # ok implies a value
        reason = got.degraded_reason or "unknown"
    _log.warning("model call degraded to the heuristic: %s", reason)
    return Outcome(fallback(), reason)
