"""Texts and rules the harness itself uses, so that logs written in code read as its own.

The system-prompt plugin's name, the checkpoint a compaction leaves on the surface, the
marker the tool-result pruner puts in place of a result's middle, and the fallback title of a
session. The importers, the test-log builder (``ctxsdk.testing``) and the engines that write
checkpoints take them from here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = [
    "CHECKPOINT_PREAMBLE",
    "PRUNE_MARKER",
    "SYSTEM_PROMPT_PLUGIN",
    "checkpoint_content",
    "fallback_title",
    "system_prompt_message",
]

JsonDict = dict[str, Any]

SYSTEM_PROMPT_PLUGIN = "@deepseek-ai/dsh-system-prompt"
"""The plugin named as the source of the harness's system prompt (v3 node 0)."""

CHECKPOINT_PREAMBLE = (
    "This is an automatically generated checkpoint condensing an earlier span of the "
    "conversation to free up context. Treat the captured context as established background "
    "and build on it without restating it. Continue the task directly from the messages that "
    "follow, without acknowledging this checkpoint."
)
"""The text a compaction checkpoint opens with, before ``<compacted-summary>`` (§10)."""

PRUNE_MARKER = "\n\n[... tool result middle pruned ...]\n\n"
"""What the tool-result pruner puts between the head and the tail it keeps (§11)."""

_TITLE_BYTES = 40
_TITLE_WORDS = 5


def checkpoint_content(summary_text: str) -> list[JsonDict]:
    """The content blocks of a compaction checkpoint message: the preamble, the summary
    inside ``<compacted-summary>`` tags (§10)."""
    return [
        {"type": "text", "text": f"{CHECKPOINT_PREAMBLE}\n\n<compacted-summary>"},
        {"type": "text", "text": summary_text},
        {"type": "text", "text": "</compacted-summary>"},
    ]


def system_prompt_message(message_id: str, content: Sequence[JsonDict]) -> JsonDict:
    """The harness's system prompt message (keys in its order); empty ``content`` is a
    session without a system prompt."""
    return {
        "id": message_id,
        "role": "system",
        "content": list(content),
        "source": {"kind": "plugin", "plugin": SYSTEM_PROMPT_PLUGIN},
    }


def fallback_title(prompt: str) -> str:
    """The harness's fallback title: at most five words and 40 UTF-8 bytes of the prompt
    ("" for a prompt without words)."""
    words: list[str] = []
    for word in prompt.split()[:_TITLE_WORDS]:
        if len(" ".join([*words, word]).encode()) > _TITLE_BYTES:
            break
        words.append(word)
    if words:
        return " ".join(words)
    first = prompt.split()[0] if prompt.split() else ""
    out = ""
    for ch in first:  # one long word (CJK has no spaces): cut at a character boundary
        if len((out + ch).encode()) > _TITLE_BYTES:
            break
        out += ch
    return out
