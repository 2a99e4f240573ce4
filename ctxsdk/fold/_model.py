"""The fold's optional model calls, boxed: a ``basic`` summary as compaction-basic asks its
model for one, and ``quality``'s short rationale. Neither ever feeds state (the reducer reads
only raw events); either falls back, with its reason, when there is no model or the call
fails. ``llm`` is any ``ctxsdk.model.ModelProtocol`` (``ctxsdk.LLM`` is one), asked through
``ask_text``; this module imports no HTTP code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..model import ModelProtocol, ask_text
from ..session.kernel import to_wire

__all__ = ["BASIC_INSTRUCTION", "RATIONALE_INSTRUCTION", "ModelText", "ask"]

# What compaction-basic asks its model (dsh-session-format §10), in our words.
BASIC_INSTRUCTION = (
    "You are acting as a compaction engine for the conversation above. Write a summary that "
    "lets the work continue without it, as exactly eight Markdown sections, in this order: "
    "## Primary Request and Intent, ## Key Technical Concepts, ## Files and Code, "
    "## Errors and Fixes, ## Pending Jobs, ## Current Work, ## Next Step, ## Critical Context. "
    "Use terse bullets; write (none) for an empty section. Keep exact file paths, commands, "
    "error messages and identifiers. If the conversation holds an earlier "
    "<compacted-summary>, merge it in rather than copying it. Do not mention that this is a "
    "summary, and do not call tools."
)

RATIONALE_INSTRUCTION = (
    "In at most five short bullets, say why the work in the conversation above was done the "
    "way it was and what was learned that the next steps depend on. State nothing that the "
    "messages do not show. Do not call tools."
)


@dataclass(frozen=True)
class ModelText:
    """A model's text, or why there is none (``text`` is None and ``reason`` says why)."""

    text: str | None
    reason: str | None = None
    provider: str = ""
    model: str = ""
    usage: Mapping[str, int] | None = None


def ask(
    llm: ModelProtocol | None,
    system: str | None,
    messages: Sequence[Mapping[str, Any]],
    instruction: str,
    *,
    max_tokens: int,
) -> ModelText:
    """One call: the conversation's own system prompt, the folded messages verbatim (OpenAI
    wire form), then ``instruction`` as the last user message."""
    if llm is None:
        return ModelText(None, "no model given")
    wire = to_wire([dict(m) for m in messages], "openai", system=system)
    wire.append({"role": "user", "content": instruction})
    answer = ask_text(llm, wire, max_tokens=max_tokens)
    if answer.value is None:
        return ModelText(None, answer.degraded_reason)
    usage = answer.usage
    counts = None
    if hasattr(usage, "input_tokens") and hasattr(usage, "output_tokens"):
        counts = {"inputTokens": int(usage.input_tokens), "outputTokens": int(usage.output_tokens)}
    result = answer.result
    return ModelText(
        answer.value,
        provider=str(getattr(result, "provider", "") or getattr(llm, "provider", "") or "llm"),
        model=str(getattr(result, "model", "") or getattr(llm, "model", "") or "unknown"),
        usage=counts,
    )
