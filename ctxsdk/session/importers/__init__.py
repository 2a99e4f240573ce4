"""Importers: foreign agent logs as valid v3 DSH sessions, so every ctxsdk view works on them.

Each importer returns a ``Session`` whose log was checked as the harness checks a log on
load (the readers that build it live in ``ctxsdk.session._foreign``):

    from ctxsdk.session.importers import from_claude_code, import_provenance

    s = from_claude_code("~/.claude/projects/-w-app/c45af7b1.jsonl")
    s.surface(); s.wire(); s.save("imported.v3.jsonl")
    import_provenance(s)[s.message_seqs()[1]]  # {"format": "claude-code", "record": uuid, ...}

Formats: OpenAI and Anthropic chat messages, Claude Code transcripts, Codex CLI rollouts,
Gemini CLI chats, OpenHands trajectories, Aider chat histories, SWE-agent and mini-swe-agent
trajectories, LoCoMo conversations (``import_file(format, path)`` by name;
``detect_format(path)`` tells the format from the file's content, and ``Session.open_any``
detects and opens in one call).

Message ids come from the source (a Claude Code ``uuid``, ``openai:<index>``,
``swe:<file stem>:<index>``, ``locomo:<sample_id>:<dia_id>``), times from its timestamps or
a deterministic clock, and each imported record leaves an ignorable ``ctxsdk/import`` event
that the harness skips. Unreadable input raises ``ImportFormatError``
naming the file, the record and what is wrong; a path that is not a regular file (a FIFO, a
device, a directory), or a file larger than ``max_bytes`` (``MAX_IMPORT_BYTES``, 256 MiB, by
default; every importer takes ``max_bytes=``), is refused before it is read.
"""

from __future__ import annotations

from ..._public import moved_names, publish
from .._foreign._detect import detect_format
from .._foreign._dispatch import FORMATS
from .._foreign._provenance import import_provenance
from ._sessions import (
    from_aider,
    from_claude_code,
    from_codex,
    from_gemini_cli,
    from_locomo,
    from_messages,
    from_mini_swe_agent,
    from_openhands,
    from_swe_agent,
    import_file,
)

__all__ = [
    "FORMATS",
    "detect_format",
    "from_aider",
    "from_claude_code",
    "from_codex",
    "from_gemini_cli",
    "from_locomo",
    "from_messages",
    "from_mini_swe_agent",
    "from_openhands",
    "from_swe_agent",
    "import_file",
    "import_provenance",
]

publish(__name__, globals(), __all__)

# Names this namespace exported before its user face was cut: still importable, with a
# DeprecationWarning that says where they live now (for one release).
__getattr__ = moved_names(
    __name__,
    {
        "DETECTABLE": "ctxsdk.session._foreign._detect",
        "DETECT_BYTES": "ctxsdk.session._foreign._detect",
        "IMPORT_EVENT": "ctxsdk.session._foreign._emit",
        "MAX_IMPORT_BYTES": "ctxsdk.session._foreign._common",
    },
)
