"""Each importer as a function that returns a ``Session``: the faces of the readers in
``ctxsdk.session._foreign``, which build and check the v3 log (``Session.from_claude_code``
and its siblings read through the same readers)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._foreign._aider import read_aider
from .._foreign._chat import ChatFormat, read_messages
from .._foreign._claude_code import read_claude_code
from .._foreign._codex import read_codex
from .._foreign._common import MAX_IMPORT_BYTES
from .._foreign._dispatch import read_file
from .._foreign._emit import ImportedLog
from .._foreign._gemini_cli import read_gemini_cli
from .._foreign._locomo import read_locomo
from .._foreign._mini_swe_agent import read_mini_swe_agent
from .._foreign._openhands import read_openhands
from .._foreign._swe_agent import read_swe_agent
from .._session import Session

__all__ = [
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
]


def _session(log: ImportedLog) -> Session:
    return Session(log.header, log.events, index=log.index)  # checked as it was built


def from_aider(
    path: str | Path,
    *,
    session_id: str | None = None,
    model: str | None = None,
    max_bytes: int = MAX_IMPORT_BYTES,
) -> Session:
    """An aider chat history (or aider website transcript) as a v3 DSH session; how its
    records map is on the Importers page.

    Message ids are ``aider:<file stem>:<line>`` (the line the message starts on; an edit
    call's id is the line of its ``<<<<<<<`` marker, its result ``…:result``); the session id
    is ``aider:<file stem>``. ``model`` defaults to the last ``Model:`` line aider printed
    before the reply, else ``"unknown"``. At most ``max_bytes`` of the file are read.
    """
    return _session(read_aider(path, session_id=session_id, model=model, max_bytes=max_bytes))


def from_messages(
    messages: Sequence[Any],
    format: ChatFormat = "openai",
    *,
    session_id: str | None = None,
    system: str | Sequence[Any] | None = None,
    tools: Sequence[Any] | None = None,
    model: str | None = None,
    created_at: int | None = None,
    source: str | None = None,
) -> Session:
    """A chat history as a v3 DSH session.

    ``format="openai"``: system/developer, user, assistant (``tool_calls``,
    ``reasoning_content``) and ``tool`` messages; ``format="anthropic"``: user/assistant
    messages with content blocks, the system prompt passed as ``system``. A user message
    that is not a tool result starts a turn; each assistant message is a step; tool results
    answer the calls of the step before them. A tool call without a result is refused with
    the message named, except in the very last step: there the log ends inside its turn and
    crash repair (``s.repaired()``, ``s.wire()``) closes it ``interrupted``.

    Message ids are ``openai:<index>`` / ``anthropic:<index>``; ``system`` (text or, for
    Anthropic, text blocks) becomes the system head, ahead of any system message in the list.
    ``tools`` (either format's definitions) go into the request header; ``model`` names the
    model on assistant messages that do not name one; ``source`` is the file name recorded
    in provenance. Times are a deterministic clock from ``created_at``.
    """
    return _session(
        read_messages(
            messages,
            format,
            session_id=session_id,
            system=system,
            tools=tools,
            model=model,
            created_at=created_at,
            source=source,
        )
    )


def from_claude_code(
    path: str | Path, *, session_id: str | None = None, max_bytes: int = MAX_IMPORT_BYTES
) -> Session:
    """A Claude Code JSONL transcript as a v3 DSH session; how its records map is on the Importers
    page.

    Message ids are the records' ``uuid`` (``<uuid>#<k>`` for the extra messages of one
    record); times are the records' ``timestamp``. A sub-agent file (all records
    ``isSidechain``) becomes a session with ``origin: 'subagent'`` whose parent is the main
    session id; its own id is a UUID derived from the parent id and the ``agentId`` (the same
    file, the same id), so that it shares no prefix with the parent's. At most ``max_bytes``
    of the file are read (``MAX_IMPORT_BYTES`` by default).
    """
    return _session(read_claude_code(path, session_id=session_id, max_bytes=max_bytes))


def from_codex(
    path: str | Path, *, session_id: str | None = None, max_bytes: int = MAX_IMPORT_BYTES
) -> Session:
    """A Codex CLI rollout JSONL file as a v3 DSH session; how its records map is on the Importers
    page.

    The session id is ``session_meta``'s id; message ids are ``codex:<session id>:<line>``
    (the rollout gives messages no id of their own), tool calls keep their ``call_id``; times
    are the records' ``timestamp``. At most ``max_bytes`` of the file are read
    (``MAX_IMPORT_BYTES`` by default).
    """
    return _session(read_codex(path, session_id=session_id, max_bytes=max_bytes))


def from_gemini_cli(
    path: str | Path, *, session_id: str | None = None, max_bytes: int = MAX_IMPORT_BYTES
) -> Session:
    """A Gemini CLI chat JSON file as a v3 DSH session; how its records map is on the Importers
    page.

    Message ids are the messages' ``id``; a tool result's id is ``<call id>#result``. Times
    are the messages' ``timestamp``; the session id is ``sessionId`` (else a UUID derived from
    the file's bytes). At most ``max_bytes`` of the file are read (``MAX_IMPORT_BYTES`` by
    default).
    """
    return _session(read_gemini_cli(path, session_id=session_id, max_bytes=max_bytes))


def from_locomo(
    data: list[Any] | str | Path,
    conversation: int | str = 0,
    *,
    session_id: str | None = None,
    max_bytes: int = MAX_IMPORT_BYTES,
) -> Session:
    """One LoCoMo conversation as a v3 DSH session; how its records map is on the Importers page.

    ``data`` is the parsed ``locomo10.json`` list or its path; ``conversation`` is an index
    into it or a ``sample_id`` such as ``"conv-26"``. The session id is
    ``locomo:<sample_id>``. At most ``max_bytes`` of a file are read (``MAX_IMPORT_BYTES``
    by default).
    """
    return _session(read_locomo(data, conversation, session_id=session_id, max_bytes=max_bytes))


def from_mini_swe_agent(
    path: str | Path,
    *,
    session_id: str | None = None,
    max_bytes: int = MAX_IMPORT_BYTES,
) -> Session:
    """A mini-SWE-agent ``.traj.json`` file as a v3 DSH session; how its records map is on the
    Importers page.

    Message ids are ``mini:<instance>:<message index>`` (the instance id, else the file
    name without ``.traj.json``); the session id is ``mini:<instance>``. At most
    ``max_bytes`` of the file are read (``MAX_IMPORT_BYTES`` by default).
    """
    return _session(read_mini_swe_agent(path, session_id=session_id, max_bytes=max_bytes))


def from_openhands(
    path: str | Path,
    *,
    session_id: str | None = None,
    max_bytes: int = MAX_IMPORT_BYTES,
) -> Session:
    """An OpenHands event-list trajectory as a v3 DSH session; how its records map is on the
    Importers page.

    The session id is ``oh:<file stem>`` unless ``session_id`` is given. At most
    ``max_bytes`` of the file are read (``MAX_IMPORT_BYTES`` by default)."""

    return _session(read_openhands(path, session_id=session_id, max_bytes=max_bytes))


def from_swe_agent(
    path: str | Path,
    *,
    session_id: str | None = None,
    model: str | None = None,
    context_edits: bool = True,
    max_bytes: int = MAX_IMPORT_BYTES,
) -> Session:
    """A SWE-agent ``.traj`` file as a v3 DSH session; how its records map is on the Importers page.

    Message ids are ``swe:<file stem>:<history index>``; the session id is
    ``swe:<file stem>``. ``model`` defaults to the replay config's model name, else
    ``"unknown"``. ``context_edits=False`` keeps every observation as first shown. At most
    ``max_bytes`` of the file are read (``MAX_IMPORT_BYTES`` by default).
    """
    return _session(
        read_swe_agent(
            path,
            session_id=session_id,
            model=model,
            context_edits=context_edits,
            max_bytes=max_bytes,
        )
    )


def import_file(
    format: str,
    path: str | Path,
    *,
    conversation: int | str | None = None,
    max_bytes: int = MAX_IMPORT_BYTES,
    **options: Any,
) -> Session:
    """Import a file of a foreign format as a v3 DSH session.

    ``"openai"`` / ``"anthropic"``: a JSON file with a list of messages or an object
    ``{messages, system?, tools?, model?}`` (``.jsonl``: one message per line);
    ``"claude-code"``: a Claude Code transcript ``.jsonl``; ``"codex"``: a Codex CLI rollout
    ``.jsonl``; ``"gemini-cli"``: a Gemini CLI chat ``.json``; ``"openhands"``: an OpenHands
    event-list ``.json``; ``"aider"``: an ``.aider.chat.history.md`` (or a transcript page);
    ``"swe-agent"``: a ``.traj`` file; ``"mini-swe-agent"``: a ``.traj.json`` file;
    ``"locomo"``: ``locomo10.json`` with ``conversation`` (index or sample id, default 0).
    At most ``max_bytes`` of the file are read (``MAX_IMPORT_BYTES``, 256 MiB, by default):
    a larger file, or a path that is not a regular file (a FIFO, a device, a
    directory), is an ``ImportFormatError`` naming it. Other keyword options go to the
    format's importer (``session_id`` for all).
    """
    return _session(
        read_file(format, path, conversation=conversation, max_bytes=max_bytes, **options)
    )
