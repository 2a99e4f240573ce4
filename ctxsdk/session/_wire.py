"""Provider wire formats: the chat messages an OpenAI-compatible API receives (spec §8)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from ..errors import UnknownName

__all__ = ["WireFormat", "to_wire"]

WireFormat = Literal["openai", "deepseek"]
_NO_OUTPUT = "(no output)"


def _join(blocks: Iterable[Any], kind: str) -> str:
    return "".join(
        b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == kind
    )


def to_wire(
    messages: Iterable[dict[str, Any]],
    provider: WireFormat = "openai",
    *,
    system: str | None = None,
) -> list[dict[str, Any]]:
    """Serialize derived messages (raw JSON shape) as the DeepSeek adapter does.

    ``system`` is the v0-v2 request's system prompt (v3 carries it as the first message).
    ``"deepseek"`` keeps reasoning as ``reasoning_content``; ``"openai"`` drops it.
    """
    if provider not in ("openai", "deepseek"):
        raise UnknownName(f"unknown wire format {provider!r}; use 'openai' or 'deepseek'")
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    for msg in messages:
        role, content = msg["role"], msg["content"]
        if role == "system":
            out.append({"role": "system", "content": _join(content, "text")})
        elif role == "assistant":
            wire: dict[str, Any] = {"role": "assistant", "content": _join(content, "text")}
            reasoning = _join(content, "reasoning")
            if reasoning and provider == "deepseek":
                wire["reasoning_content"] = reasoning
            calls = [
                {
                    "id": b["id"],
                    "type": "function",
                    "function": {"name": b["name"], "arguments": b["arguments"]},
                }
                for b in content
                if isinstance(b, dict) and b.get("type") == "tool-call"
            ]
            if calls:
                wire["tool_calls"] = calls
            out.append(wire)
        else:
            results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool-result"]
            text = _join(content, "text")
            if text or not results:
                out.append({"role": "user", "content": text})
            for r in results:
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": r["toolCallId"],
                        "content": _join(r.get("content") or [], "text") or _NO_OUTPUT,
                    }
                )
    return out
