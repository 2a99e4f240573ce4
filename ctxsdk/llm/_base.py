"""What engines need from a model, without HTTP: results, usage, the degradation ladder.

Nothing here imports httpx: an engine depends on ``ModelProtocol`` and
``with_fallback`` and stays importable (and deterministic) with no model at all.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
    Any,
    Generic,
    Literal,
    NamedTuple,
    Protocol,
    TypeAlias,
    TypeVar,
    Unpack,
    runtime_checkable,
)

from pydantic import BaseModel, ConfigDict, ValidationError

from .._display import Rendered, details, esc, kv, table
from ..errors import LLM_FAILURES, LLMError, LLMFailureKind, LLMOutputError
from ..session._model_text import extract_json
from ._options import ReasoningEffort as ReasoningEffort  # re-exported

if TYPE_CHECKING:
    from ._options import ChatKwargs, StructuredKwargs

_log = logging.getLogger("ctxsdk.llm")

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

Messages: TypeAlias = str | Sequence[Mapping[str, Any]]
"""A prompt: one user text, or OpenAI-format chat messages (``session.wire("openai")``)."""

DegradedKind: TypeAlias = LLMFailureKind
"""The short code of a ladder rung (``ctxsdk.errors.LLMFailureKind``)."""

LADDER: tuple[tuple[DegradedKind, str], ...] = tuple((f.kind, f.reason) for f in LLM_FAILURES)
"""The degradation ladder: every way a model call can fail, each leading to the deterministic
path with its reason recorded. ``(kind, reason text)``; ``<...>`` is filled in per call.
Read from ``ctxsdk.errors.LLM_FAILURES``, where the vocabulary is defined once."""

NO_ROUTE = dict(LADDER)["no-route"]
"""``"no route configured"``: the reason recorded when there is no model to call."""

# --- usage and results ---------------------------------------------------------------------


class Usage(BaseModel):
    """Token usage of one call, or summed over many (``+``).

    Buckets are disjoint, as in the DSH log: ``input_tokens`` excludes ``cache_hit_tokens``;
    ``reasoning_tokens`` is the part of ``output_tokens`` spent thinking.
    """

    model_config = ConfigDict(frozen=True)

    input_tokens: int = 0
    cache_hit_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    calls: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            cache_hit_tokens=self.cache_hit_tokens + other.cache_hit_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            calls=self.calls + other.calls,
        )

    @property
    def prompt_tokens(self) -> int:
        """Everything the model read: uncached input plus cache hits."""
        return self.input_tokens + self.cache_hit_tokens

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.output_tokens

    @classmethod
    def from_openai(cls, usage: Mapping[str, Any] | None) -> Usage:
        """Read an OpenAI-compatible ``usage`` object (DeepSeek's cache fields included)."""
        if not isinstance(usage, Mapping):
            return cls(calls=1)
        prompt = _int(usage.get("prompt_tokens"))
        hit = _int(usage.get("prompt_cache_hit_tokens"))
        details = usage.get("prompt_tokens_details")
        if not hit and isinstance(details, Mapping):
            hit = _int(details.get("cached_tokens"))
        out_details = usage.get("completion_tokens_details")
        reasoning = (
            _int(out_details.get("reasoning_tokens")) if isinstance(out_details, Mapping) else 0
        )
        return cls(
            input_tokens=max(prompt - hit, 0),
            cache_hit_tokens=min(hit, prompt) if prompt else hit,
            output_tokens=_int(usage.get("completion_tokens")),
            reasoning_tokens=reasoning,
            calls=1,
        )

    def to_token_usage(self) -> dict[str, int]:
        """The DSH ``TokenUsage`` JSON (``inputTokens``, ``outputTokens``, ...) for a log event."""
        out = {"inputTokens": self.input_tokens, "outputTokens": self.output_tokens}
        if self.cache_hit_tokens:
            out["cacheReadTokens"] = self.cache_hit_tokens
        if self.reasoning_tokens:
            out["reasoningTokens"] = self.reasoning_tokens
        return out

    def __repr__(self) -> str:
        cache = f", cache hit {self.cache_hit_tokens}" if self.cache_hit_tokens else ""
        think = f" ({self.reasoning_tokens} reasoning)" if self.reasoning_tokens else ""
        calls = "call" if self.calls == 1 else "calls"
        return (
            f"Usage({self.calls} {calls}: in {self.input_tokens}{cache}, "
            f"out {self.output_tokens}{think})"
        )


def _int(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else 0


class ToolCall(BaseModel):
    """One function call the model asked for; ``arguments`` is the raw JSON text."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: str = "{}"


_FINISH_KIND = {"stop": "stop", "length": "max-tokens", "tool_calls": "tool-calls"}


class ChatResult(Rendered, BaseModel):
    """One chat completion: text, reasoning, tool calls, why it stopped, and its usage.

    Printed: the whole reply (reasoning as a character count); in a notebook the reasoning
    is folded and the calls are a table."""

    model_config = ConfigDict(frozen=True)

    text: str = ""
    reasoning: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str = "stop"
    usage: Usage = Usage()
    model: str = ""
    provider: str = ""
    request_id: str | None = None
    attempts: int = 1

    @property
    def truncated(self) -> bool:
        """True when the reply was cut at ``max_tokens`` (``finish_reason == "length"``)."""
        return self.finish_reason == "length"

    @property
    def finish_kind(self) -> str:
        """The DSH ``FinishReason.kind``: ``stop``, ``tool-calls``, ``max-tokens``, ..."""
        if self.tool_calls and self.finish_reason in ("stop", "tool_calls", "function_call"):
            return "tool-calls"
        return _FINISH_KIND.get(self.finish_reason, "stop")

    def __repr__(self) -> str:
        text = self.text if len(self.text) <= 60 else self.text[:57] + "..."
        calls = f", {len(self.tool_calls)} tool call(s)" if self.tool_calls else ""
        return f"ChatResult({text!r}{calls}, finish={self.finish_reason}, {self.usage!r})"

    def _facts(self) -> list[tuple[str, str]]:
        route = "/".join(p for p in (self.provider, self.model) if p) or "unknown model"
        attempts = f"{self.attempts} attempt" + ("" if self.attempts == 1 else "s")
        facts = [("from", route), ("finish", f"{self.finish_reason} ({self.finish_kind})")]
        facts += [("usage", repr(self.usage)), ("attempts", attempts)]
        return facts + ([("request id", self.request_id)] if self.request_id else [])

    def _text_(self) -> str:
        lines = ["ChatResult"] + [f"  {k}: {v}" for k, v in self._facts()]
        if self.reasoning:
            lines.append(f"  reasoning: {len(self.reasoning):,} characters")
        for c in self.tool_calls:
            lines.append(f"  call {c.name}({c.arguments})  [{c.id}]")
        if self.text:
            lines += ["  text:", *("    " + line for line in self.text.split("\n"))]
        return "\n".join(lines)

    def _html_(self) -> str:
        parts = ["<div class='cx-title'>ChatResult</div>", kv(self._facts())]
        if self.reasoning:
            body = f"<pre class='cx-pre'>{esc(self.reasoning)}</pre>"
            parts.append(details(f"reasoning ({len(self.reasoning):,} characters)", body))
        if self.tool_calls:
            rows = [(c.name, c.arguments, c.id) for c in self.tool_calls]
            parts.append(table(("tool call", "arguments", "id"), rows))
        if self.text:
            parts.append(f"<pre class='cx-pre'>{esc(self.text)}</pre>")
        return "".join(parts)


@dataclass(frozen=True)
class Delta:
    """One streamed piece: ``text`` / ``reasoning`` text, or a ``tool-call`` arguments delta."""

    kind: Literal["text", "reasoning", "tool-call"]
    text: str
    index: int = 0
    call_id: str | None = None
    name: str | None = None


# --- structured output ---------------------------------------------------------------------


@dataclass(frozen=True)
class Structured(Generic[T]):
    """A typed model answer, or the reason there is none.

    ``value`` is a validated instance of the schema, never a half-parsed dict. When it is
    ``None``, ``degraded_reason`` says why in the ladder's words (``LADDER``) and ``kind``
    gives the short code; ``unwrap`` raises the matching ``LLMError``.
    """

    value: T | None
    degraded_reason: str | None = None
    kind: DegradedKind | None = None
    text: str = ""
    result: ChatResult | None = None
    error: LLMError | None = field(default=None, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.degraded_reason is None

    @property
    def usage(self) -> Usage:
        return self.result.usage if self.result is not None else Usage()

    def unwrap(self) -> T:
        """The value, or raise the error that degraded it."""
        if self.degraded_reason is None:
            return self.value  # type: ignore[return-value]  # ok implies a value
        if self.error is not None:
            raise self.error
        raise LLMOutputError(self.degraded_reason, reason=self.degraded_reason, kind=self.kind)

    @classmethod
    def failed(
        cls, error: LLMError, *, text: str = "", result: ChatResult | None = None
    ) -> Structured[T]:
        """A degraded result carrying ``error``'s reason and kind."""
        return cls(None, error.reason, error.kind, text, result, error)

    def __repr__(self) -> str:
        if self.ok:
            return f"Structured(ok, {self.value!r})"
        return f"Structured(degraded: {self.degraded_reason})"


def _validation_detail(exc: ValidationError) -> str:
    errors = exc.errors()
    first = errors[0]
    loc = ".".join(str(p) for p in first["loc"]) or "(root)"
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{loc}: {first['msg']}{more}"


def parse_structured(result: ChatResult, schema: type[M]) -> Structured[M]:
    """Validate a chat result's text against ``schema``: the ladder's last three rungs.

    A reply that validates is accepted even if it was cut at ``max_tokens`` afterwards; one
    that does not is ``max-tokens truncation`` when it was cut, else ``malformed JSON: ...``
    or ``schema validation failed: ...``.
    """
    text = result.text
    err: LLMOutputError
    try:
        value = schema.model_validate(extract_json(text))
    except LLMOutputError as exc:
        err = exc
    except ValidationError as exc:
        reason = f"schema validation failed: {_validation_detail(exc)}"
        err = LLMOutputError(reason, reason=reason, kind="schema")
    else:
        return Structured(value, text=text, result=result)
    if result.truncated:
        err = LLMOutputError(
            f"the reply was cut at max_tokens before it was usable ({err.reason})",
            kind="truncated",
        )
    return Structured.failed(err, text=text, result=result)


# --- the protocol engines depend on --------------------------------------------------------


@runtime_checkable
class ModelProtocol(Protocol):
    """The model seam as engines see it. ``ctxsdk.llm.LLM`` satisfies it; engines take
    ``llm: ModelProtocol | None = None`` and never import HTTP code.

    ``chat`` raises ``LLMError`` subclasses; ``structured`` never raises
    for a model failure and records the reason instead.
    """

    def chat(self, messages: Messages, **options: Unpack[ChatKwargs]) -> ChatResult: ...

    def structured(
        self, messages: Messages, schema: type[M], **options: Unpack[StructuredKwargs]
    ) -> Structured[M]: ...


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


def with_fallback(
    llm: ModelProtocol | None,
    call: Callable[[ModelProtocol], Structured[T] | T],
    fallback: Callable[[], T],
) -> Outcome[T]:
    """Run ``call(llm)``; on any rung of the ladder run ``fallback()`` and record why.

    - ``llm is None`` -> ``"no route configured"``;
    - ``call`` returns a degraded ``Structured`` -> its ``degraded_reason``;
    - ``call`` raises ``LLMError`` -> its ``reason`` (an engine that
      rejects a validated answer, e.g. "zero usable slots", raises ``LLMOutputError`` itself);
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
        reason = f"schema validation failed: {_validation_detail(exc)}"
    else:
        if not isinstance(got, Structured):
            return Outcome(got, None)
        if got.ok:
            return Outcome(got.value, None)  # type: ignore[arg-type]  # ok implies a value
        reason = got.degraded_reason or "unknown"
    _log.warning("model call degraded to the heuristic: %s", reason)
    return Outcome(fallback(), reason)
