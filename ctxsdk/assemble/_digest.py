"""Digests: the automatic ``key`` text of a run and the ``off`` marker (the seed's rules)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..session import Message
from ..session.kernel import digest_text

__all__ = ["DigestConfig", "auto_digest", "off_marker", "off_rewrite"]


@dataclass(frozen=True)
class DigestConfig:
    head_lines: int = 12
    tail_lines: int = 4
    max_chars: int = 6000
    # The whole text of an off run's message, one per run: what left (the surface seqs, their
    # tokens) and the way back (``set(first, "full")`` expands the collapse over any seq it
    # covers). Filled in: {seqs} ("120-164" or "120"), {first}, {last}, {count} (messages
    # covered), {tokens}. The mark lives in the message's source, so no header is spent here.
    # "" collapses to a message with no content at all (an exact tokenizer still counts the
    # chat framing of one message, 3 tokens).
    off_marker: str = "[off seq {seqs} ({tokens} tokens): set {first} full]"
    # After the header line of an off tool-result rewrite (the header is that rewrite's mark and
    # already says how many items and tokens left), on the same line: the way back.
    off_rewrite: str = "set {first} full"
    # The exact zero-token option, for fit: each off run fit makes is absorbed into an adjacent
    # plain user message that fit keeps, re-emitted verbatim as the run's replacement, so the
    # run costs no token at all; the tree still shows what it covers. A run with no such
    # neighbour gets the off marker.
    absorb_off: bool = False
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


# A digest at least this share of what it replaces is no digest: a run of short members
# (each under head + tail lines) kept whole, plus headings, costs more than the run did.
_NOT_SHORTER = 0.8
_TIGHT_HEAD, _TIGHT_TAIL, _LINE = 2, 1, 160


def _blocks(members: list[tuple[int, Message]], cfg: DigestConfig, *, line: int = 0) -> str:
    blocks = []
    for seq, message in members:
        body = _head_tail(digest_text(message), cfg)
        if line:
            body = "\n".join(
                ln if len(ln) <= line else ln[: line - 1] + "…" for ln in body.split("\n")
            )
        blocks.append(f"{_heading(seq, message)}\n{body}" if body else _heading(seq, message))
    return "\n\n".join(blocks)


def auto_digest(members: list[tuple[int, Message]], cfg: DigestConfig) -> str:
    """Per member a heading, then its text whole or head/tail with an omitted-lines marker.
    When that is not shorter than the run (short members kept whole), a tighter one: each
    member's first lines and last line, long lines cut, so ``key`` saves tokens."""
    text = _blocks(members, cfg)
    whole = sum(len(digest_text(m)) for _, m in members)
    if whole and len(text) >= _NOT_SHORTER * whole:
        tight = replace(
            cfg,
            head_lines=min(cfg.head_lines, _TIGHT_HEAD),
            tail_lines=min(cfg.tail_lines, _TIGHT_TAIL),
        )
        text = min(text, _blocks(members, tight, line=_LINE), key=len)
    return truncate(cfg, text)


def truncate(cfg: DigestConfig, text: str) -> str:
    if len(text) <= cfg.max_chars:
        return text
    return text[: cfg.max_chars - len(cfg.truncated)] + cfg.truncated


def _seqs(first: int, last: int) -> str:
    return f"{first}" if first == last else f"{first}-{last}"


def off_marker(cfg: DigestConfig, count: int, tokens: int, first: int = 0, last: int = 0) -> str:
    """The text of an off run's user-message replacement."""
    if not cfg.off_marker:
        return ""
    fields = {"seqs": _seqs(first, last), "first": first, "last": last}
    return cfg.off_marker.format(count=count, tokens=tokens, **fields)


def off_rewrite(cfg: DigestConfig, header: str, first: int) -> str:
    """The content text of an off tool-result rewrite: its header (the mark), then the way back
    (nothing more when the off marker is turned off)."""
    if not cfg.off_marker or not cfg.off_rewrite:
        return header
    return f"{header} {cfg.off_rewrite.format(first=first, seqs=first, last=first)}"
