"""What ``LLM`` returns, without HTTP: results, usage, structured answers, the ladder.

The seam engines depend on (``ModelProtocol``, ``Answer``, ``with_fallback``, ``ask_text``,
``ask_json``) lives below them in ``ctxsdk.model``; ``Structured`` is its ``Answer`` with a
pydantic value, and the names imported here from it are the same objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from .._display import Rendered, details, esc, kv, table
from ..errors import LLM_FAILURES, LLMFailureKind, LLMOutputError
from ..model import NO_ROUTE as NO_ROUTE  # re-exported: the llm modules read it here
from ..model import Answer, validation_detail
from ..model import Messages as Messages
from ..model import ReasoningEffort as ReasoningEffort
from ..session._model_text import extract_json

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

DegradedKind: TypeAlias = LLMFailureKind
"""The short code of a ladder rung (``ctxsdk.errors.LLMFailureKind``)."""

LADDER: tuple[tuple[DegradedKind, str], ...] = tuple((f.kind, f.reason) for f in LLM_FAILURES)
"""The degradation ladder: every way a model call can fail, each leading to the deterministic
path with its reason recorded. ``(kind, reason text)``; ``<...>`` is filled in per call.
Read from ``ctxsdk.errors.LLM_FAILURES``, where the vocabulary is defined once."""


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


class Structured(Answer[T]):
    """A typed model answer, or the reason there is none: a ``ctxsdk.model.Answer`` whose
    ``value`` is a validated instance of the schema, never a half-parsed dict. When it is
    ``None``, ``degraded_reason`` says why in the ladder's words (``LADDER``) and ``kind``
    gives the short code; ``unwrap`` raises the matching ``LLMError``.
    """

    @property
    def usage(self) -> Usage:
        return self.result.usage if isinstance(self.result, ChatResult) else Usage()


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
        reason = f"schema validation failed: {validation_detail(exc)}"
        err = LLMOutputError(reason, reason=reason, kind="schema")
    else:
        return Structured(value, text=text, result=result)
    if result.truncated:
        err = LLMOutputError(
            f"the reply was cut at max_tokens before it was usable ({err.reason})",
            kind="truncated",
        )
    return Structured.failed(err, text=text, result=result)
