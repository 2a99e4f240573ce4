"""Digests: the automatic ``key`` text of a run and the ``off`` marker (the seed's rules)."""

from __future__ import annotations

from dataclasses import dataclass

from ..session import Message, digest_text

__all__ = ["DigestConfig", "auto_digest", "off_marker"]


@dataclass(frozen=True)
class DigestConfig:
    head_lines: int = 12
    tail_lines: int = 4
    max_chars: int = 6000
    # {count} and {tokens} are filled in; "" collapses to a message with no content at all (an
    # exact tokenizer still counts the chat framing of one message, 3 tokens).
    off_marker: str = "[{count} items moved out of context, about {tokens} tokens]"
    omitted: str = "… ({count} lines omitted) …"
    truncated: str = "… (truncated)"


def _heading(seq: int, message: Message) -> str:
    role = "tool" if message.tool_results else message.role
    bits = [f"▸ {role} · seq {seq}"]
    if message.tool_calls:
        bits.append("calls " + ", ".join(c.name for c in message.tool_calls))
    if any(r.is_error for r in message.tool_results):
        bits.append("failed")
    return " · ".join(bits)


def _head_tail(text: str, cfg: DigestConfig) -> str:
    lines = text.split("\n")
    if len(lines) <= cfg.head_lines + cfg.tail_lines + 1:
        return text
    omitted = len(lines) - cfg.head_lines - cfg.tail_lines
    return "\n".join(
        [*lines[: cfg.head_lines], cfg.omitted.format(count=omitted), *lines[-cfg.tail_lines :]]
    )


def auto_digest(members: list[tuple[int, Message]], cfg: DigestConfig) -> str:
    """Per member a heading, then its text whole or head/tail with an omitted-lines marker."""
    blocks = []
    for seq, message in members:
        body = _head_tail(digest_text(message), cfg)
        blocks.append(f"{_heading(seq, message)}\n{body}" if body else _heading(seq, message))
    return truncate(cfg, "\n\n".join(blocks))


def truncate(cfg: DigestConfig, text: str) -> str:
    if len(text) <= cfg.max_chars:
        return text
    return text[: cfg.max_chars - len(cfg.truncated)] + cfg.truncated


def off_marker(cfg: DigestConfig, count: int, tokens: int) -> str:
    return cfg.off_marker.format(count=count, tokens=tokens) if cfg.off_marker else ""
