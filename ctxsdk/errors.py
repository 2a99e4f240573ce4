"""The one error tree of ctxsdk.

Every error names what was wrong, where (path, frame or line, seq) and what to do.
Each subclass also inherits the builtin it resembles, so callers that already catch
``ValueError`` or ``KeyError`` keep working:

    CtxError
    ├── SessionFormatError (ValueError)      a log that does not follow the DSH format
    │   ├── UnsupportedVersion               a header version this reader does not know
    │   ├── CorruptLog                       a damaged frame, torn line before the end, seq gap
    │   └── UnknownEventType                 an unknown event type without ``ignorable: true``
    ├── SurfaceError (ValueError)            a surface op the harness would refuse
    │   ├── NotReadFromFile                  appending to a session that has no file
    │   └── LogTooOld                        writing v3 events to a log below v3
    ├── ImportFormatError (ValueError)       a record of a foreign log format that cannot be read
    ├── NotFound (KeyError)                  no session, node, event, or named thing (tokenizer,
    │   │                                    sample, benchmark, tool) with that name
    │   ├── AmbiguousId                      an id prefix that matches several sessions
    │   ├── BundleMissing                    no fold bundle with that id in the reader's lineage
    │   └── UnknownName (ValueError)         a name none of the known ones has (listed)
    ├── InvalidArgument (ValueError)         an argument a public call cannot take
    ├── Unreadable (PermissionError)         a log this process may not read (file mode, ACL)
    ├── DataMissing (FileNotFoundError)      data a call needs is not on this machine
    │   └── TokenizerDataMissing             an installed tokenizer's data is missing
    ├── LockHeld (BlockingIOError)           another process holds the single-writer lease
    ├── ServerError (RuntimeError)           a local test server (PostgreSQL) that would not
    │                                        start, restart or stop; quotes the end of its log
    ├── LLMError (RuntimeError)              a model call that failed; .reason is the ladder text
    │   ├── LLMNotConfigured, LLMProviderError, LLMCancelled
    │   └── LLMAuthError (PermissionError), LLMTimeout (TimeoutError), LLMOutputError (ValueError)
    │       (each with a ``kind``: one rung of ``LLM_FAILURES``, the degradation ladder)
    ├── ToolError (ValueError)               a tool that cannot be registered
    ├── StoreError (ValueError)              a memory database that cannot be used as it is
    │   ├── CorruptStore                     damaged bytes, or not a ctxsdk memory
    │   ├── StoreVersionError                a schema newer than this ctxsdk
    │   ├── StoreUnavailable (ConnectionError)  a database server that cannot be reached, or
    │   │                                    a connection lost mid-call (nothing half written)
    │   └── NamespaceDenied (PermissionError)   a namespace this database role may not use
    ├── BundleError (ValueError)             a fold bundle not stored or read as written
    │   ├── CorruptBundle                    bytes that fail verification, or a file that
    │   │                                    cannot be read (.problem)
    │   └── BundleConflict                   another bundle under a stored checkpoint id
    ├── FoldError (RuntimeError)             a fold not made; nothing left the surface
    │   ├── FoldRefused                      not legal or not worth it here (says why)
    │   └── FoldConflict                     another writer changed the session meanwhile
    └── WriteError (OSError)                 a failed write; the old bytes are left as they were

    LogRecoveryWarning (UserWarning)         a torn tail was dropped on read (reported)
    LogInvariantWarning (UserWarning)        a log breaks an optional invariant (enclosure,
                                             tool pairing) the harness's loader does not enforce
    StaleRedactionWarning (UserWarning)      a memory file's texts went through older redaction
                                             rules (or none recorded): ``Memory.scrub()``
    DegradedSearchWarning (UserWarning)      a search's embedder failed: it answered lexically
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, NamedTuple, TypeAlias

__all__ = [
    "AmbiguousId",
    "BundleConflict",
    "BundleError",
    "BundleMissing",
    "CorruptBundle",
    "CorruptLog",
    "CorruptStore",
    "CtxError",
    "DataMissing",
    "DegradedSearchWarning",
    "FoldConflict",
    "FoldError",
    "FoldRefused",
    "ImportFormatError",
    "InvalidArgument",
    "LLMAuthError",
    "LLMCancelled",
    "LLMError",
    "LLMFailure",
    "LLMNotConfigured",
    "LLMOutputError",
    "LLMProviderError",
    "LLMTimeout",
    "LockHeld",
    "LogInvariantWarning",
    "LogRecoveryWarning",
    "LogTooOld",
    "MemoryRefused",
    "NamespaceDenied",
    "NotFound",
    "NotReadFromFile",
    "ServerError",
    "SessionFormatError",
    "StaleRedactionWarning",
    "StoreError",
    "StoreUnavailable",
    "StoreVersionError",
    "SurfaceError",
    "TokenizerDataMissing",
    "ToolError",
    "UnknownEventType",
    "UnknownName",
    "Unreadable",
    "UnsupportedVersion",
    "WriteError",
]


class CtxError(Exception):
    """Root of every error ctxsdk raises on purpose."""

    def __str__(self) -> str:
        return _printable(super().__str__())


def _printable(text: str) -> str:
    """``text`` with lone surrogates written as ``\\udXXX``: a message naming a path no file
    can have (``'\\ud800'``) must still print to a UTF-8 stream."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _where(
    path: str | Path | None,
    *,
    line: int | None = None,
    frame: int | None = None,
    seq: int | None = None,
) -> str:
    parts: list[str] = []
    if path is not None:
        parts.append(str(path))
    if frame is not None:
        parts.append(f"zstd frame {frame}")
    if line is not None:
        parts.append(f"line {line}")
    if seq is not None:
        parts.append(f"seq {seq}")
    return ", ".join(parts)


class SessionFormatError(CtxError, ValueError):
    """A session log that does not follow the DSH session format."""

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        frame: int | None = None,
        seq: int | None = None,
    ) -> None:
        self.reason = message
        self.path = None if path is None else str(path)
        self.line = line
        self.frame = frame
        self.seq = seq
        where = _where(path, line=line, frame=frame, seq=seq)
        super().__init__(f"{where}: {message}" if where else message)

    def at(
        self,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        frame: int | None = None,
    ) -> SessionFormatError:
        """A copy of this error with the location filled in where it was missing."""
        return type(self)(
            self.reason,
            path=self.path if self.path is not None else path,
            line=self.line if self.line is not None else line,
            frame=self.frame if self.frame is not None else frame,
            seq=self.seq,
        )


class UnsupportedVersion(SessionFormatError):
    """The header names a format version this reader does not know (or the file name disagrees)."""


class CorruptLog(SessionFormatError):
    """Damaged bytes: a bad checksum, a torn line or frame before the end, a seq gap."""


class UnknownEventType(SessionFormatError):
    """An event type this reader does not know and that is not marked ``ignorable: true``."""


class SurfaceError(CtxError, ValueError):
    """A surface edit (append or replace) that the harness would refuse."""

    def __init__(self, message: str, *, seq: int | None = None) -> None:
        self.reason = message
        self.seq = seq
        super().__init__(f"seq {seq}: {message}" if seq is not None else message)


class NotReadFromFile(SurfaceError):
    """An append to the live log of a session that was not read from a file; ``save`` it."""


class LogTooOld(SurfaceError):
    """An operation that writes v3 events, on a log below v3; upgrade it with
    ``session.save(path, version=3)`` first."""


class InvalidArgument(CtxError, ValueError):
    """An argument value a public call cannot take (a mode, a count, a format name)."""


class Unreadable(CtxError, PermissionError):
    """A log (or session directory) this process may not read: its file mode, an ACL, or a
    directory without search permission. The message names the path; fix the permissions
    or read it as its owner."""

    def __init__(self, message: str, *, path: str | Path | None = None) -> None:
        self.path = None if path is None else str(path)
        super().__init__(message)

    def __str__(self) -> str:  # OSError formats its args as (errno, strerror); keep the sentence
        return _printable(str(self.args[0])) if self.args else ""


class DataMissing(CtxError, FileNotFoundError):
    """Data a call needs is not on this machine (a benchmark's data set, a model file); the
    message says where it was looked for and how to provide it."""


class TokenizerDataMissing(DataMissing):
    """An installed tokenizer whose bundled data files cannot be found or read."""


class ImportFormatError(CtxError, ValueError):
    """A record of a foreign log format (OpenAI, Anthropic, Claude Code, ...) that is unreadable,
    or a file an importer will not read: not a regular file (a FIFO, a device, a directory),
    or larger than its ``max_bytes``."""


class NotFound(CtxError, KeyError):
    """No session, node or event with that id or seq."""

    def __str__(self) -> str:  # KeyError quotes its argument; a sentence reads better
        return _printable(str(self.args[0])) if self.args else ""


class AmbiguousId(NotFound):
    """An id prefix that matches more than one session; give more of the id."""


class BundleMissing(NotFound):
    """No fold bundle with that checkpoint id in the sessions a reader may see (its own and its
    ancestors'); a sibling's or a child's bundle reads as missing too."""

    def __init__(self, message: str, *, path: str | Path | None = None) -> None:
        self.path = None if path is None else str(path)
        super().__init__(message)


class UnknownName(NotFound, ValueError):
    """A tokenizer, sample, benchmark, tool or format name that none of the known ones has;
    the message lists the known names."""


class LockHeld(CtxError, BlockingIOError):
    """Another process holds the session's ``session.lock`` single-writer lease."""


class ServerError(CtxError, RuntimeError):
    """A local server process ctxsdk runs (the throwaway PostgreSQL of ``ctxsdk.testing``)
    that would not start, restart or stop; the message names its data directory and quotes
    the end of its log. A missing server program is ``DataMissing`` instead."""


class WriteError(CtxError, OSError):
    """A write that failed; the file was left byte-identical."""


LLMFailureKind: TypeAlias = Literal[
    "no-route", "provider", "auth", "timeout", "cancelled", "truncated", "malformed-json", "schema"
]
"""The short code of each way a model call can fail: ``LLMError.kind``, ``Structured.kind``."""


class LLMFailure(NamedTuple):
    """One rung of the model seam's degradation ladder (``LLM_FAILURES``)."""

    kind: LLMFailureKind
    reason: str
    """The text an engine records when it falls back; ``<...>`` is filled in per call."""
    code: str | None
    """The error code an agent turn records for it (``turn/end`` ``error.code``); ``None``
    for the rungs only a structured call reaches."""


LLM_FAILURES: tuple[LLMFailure, ...] = (
    LLMFailure("no-route", "no route configured", "NOT_CONFIGURED"),
    # also "provider unreachable: <error>", "provider returned an invalid response"
    LLMFailure("provider", "provider returned <status>", "PROVIDER_ERROR"),
    LLMFailure("auth", "auth failed", "AUTH_FAILED"),
    LLMFailure("timeout", "timeout", "TIMEOUT"),
    LLMFailure("cancelled", "cancelled", "CANCELLED"),
    LLMFailure("truncated", "max-tokens truncation", None),
    LLMFailure("malformed-json", "malformed JSON: <detail>", None),
    LLMFailure("schema", "schema validation failed: <detail>", None),
)
"""The model seam's failure vocabulary, defined once: ``ctxsdk.llm.LADDER``, the ``kind`` of
each ``LLMError`` class and the agent's error codes are read from it."""

_FIXED_REASONS = {f.kind: f.reason for f in LLM_FAILURES if "<" not in f.reason}


class LLMError(CtxError, RuntimeError):
    """A model call that failed. ``reason`` is the degradation-ladder text an engine records
    when it falls back ("provider returned 500", "timeout", ...); ``kind`` is its short code
    (one of ``LLM_FAILURES``). Without ``reason=``, a kind with one fixed ladder text
    ("auth failed", "timeout", ...) records that text, any other the message."""

    kind: LLMFailureKind = "provider"
    reason: str
    status: int | None
    retry_after: float | None
    request_id: str | None

    def __init__(
        self,
        message: str,
        *,
        reason: str | None = None,
        kind: LLMFailureKind | None = None,
        status: int | None = None,
        retry_after: float | None = None,
        request_id: str | None = None,
    ) -> None:
        if kind is not None:
            self.kind = kind
        self.reason = reason if reason is not None else _FIXED_REASONS.get(self.kind, message)
        self.status = status
        self.retry_after = retry_after
        self.request_id = request_id
        super().__init__(message)


class LLMNotConfigured(LLMError):
    """No model route: no base URL / model / key in the arguments or the environment."""

    kind = "no-route"


class LLMAuthError(LLMError, PermissionError):
    """The provider refused the key (HTTP 401 or 403)."""

    kind = "auth"


class LLMProviderError(LLMError):
    """The provider answered with an error status (after retries) or could not be reached."""

    kind = "provider"


class LLMTimeout(LLMError, TimeoutError):
    """A model call took longer than its timeout (after retries)."""

    kind = "timeout"


class LLMCancelled(LLMError):
    """A model call stopped because its ``cancel`` event was set."""

    kind = "cancelled"


class LLMOutputError(LLMError, ValueError):
    """The model answered, but not usably: cut at max_tokens, malformed JSON, or JSON that
    fails the schema (``kind`` is ``truncated``, ``malformed-json`` or ``schema``, the
    default, also for an engine that rejects a validated answer on its own grounds)."""

    kind = "schema"


class ToolError(CtxError, ValueError):
    """An agent tool that cannot be registered (bad name, duplicate, bad schema)."""


class BundleError(CtxError, ValueError):
    """A fold bundle (the archive of messages a fold removes from the surface) that cannot be
    stored or read back exactly as written; ``.path`` names its file."""

    def __init__(self, message: str, *, path: str | Path | None = None) -> None:
        self.reason = message
        self.path = None if path is None else str(path)
        super().__init__(f"{path}: {message}" if path is not None else message)


class CorruptBundle(BundleError):
    """A bundle file whose bytes fail verification, or that cannot be read at all;
    ``.problem`` says which. Bytes that fail a check: ``undecodable``, ``not-canonical``,
    ``format``, ``file-hash``, ``logical-hash``, ``source-digest``, ``wrong-id``,
    ``log-mismatch`` (the archive differs from the log's own copy of the messages). A file
    that is not read: ``not-a-file`` (a FIFO, a device, a directory or a socket at the
    bundle's path), ``unreadable`` (this process may not read it), ``too-large`` (more than
    the store's ``max_bytes`` on disk or decoded: a decompression bomb, or damage; a real
    bundle that large reads with ``FileBundleStore(root, max_bytes=...)``). Its messages are
    not returned: restore the file from a backup, or treat the checkpoint as
    unrecoverable."""

    def __init__(self, message: str, *, problem: str, path: str | Path | None = None) -> None:
        self.problem = problem
        super().__init__(message, path=path)


class BundleConflict(BundleError):
    """A bundle whose content differs from the one already stored under its checkpoint id;
    the stored file is left as it was. Use a new checkpoint id."""


class StoreError(CtxError, ValueError):
    """A memory database that cannot be used as it is (``path`` names it)."""

    def __init__(self, reason: str, *, path: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path = path


class CorruptStore(StoreError):
    """Damaged bytes, or a file that is not a ctxsdk memory database: refused, never
    overwritten."""


class StoreVersionError(StoreError):
    """A memory database written by a newer ctxsdk (its schema version is above this one's)."""


class StoreUnavailable(StoreError, ConnectionError):
    """A memory server that cannot be reached, or a connection lost during a call: a
    batch it cut off was rolled back whole by the server. Never names a password."""


class NamespaceDenied(StoreError, PermissionError):
    """A memory namespace the connecting database role may not read or write (row-level
    security refused it); an administrator grants it (``ctxsdk memory namespace``)."""


class MemoryRefused(CtxError, ValueError):
    """A memory the engine will not keep (a secret, an empty text); ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class FoldError(CtxError, RuntimeError):
    """A fold that could not be made as asked; nothing left the surface."""


class FoldRefused(FoldError):
    """The fold asked for is not legal or not worth it here (no legal span, a span that
    splits a tool call from its result, an inconsistent frontier, a checkpoint that would
    not be smaller than what it replaces); the message gives the arithmetic or the rule."""


class FoldConflict(FoldError):
    """Another writer changed the session while this fold was being made (two processes
    folding one session): this fold was not written, and its bundle was removed. Open the
    session again and decide anew."""


class LogInvariantWarning(UserWarning):
    """A log breaks a rule of the harness's optional invariant companion (turn/step enclosure,
    tool-call pairing, turn numbering) that its loader does not enforce: the log is read, and
    this warning names the seq and the rule. ``Session.open(path, strict=True)`` refuses such a
    log; edits (``append``, ``replace``) always refuse an op that breaks one."""

    def __init__(self, message: str, *, seq: int | None = None, rule: str = "") -> None:
        self.seq = seq
        self.rule = rule
        super().__init__(message)


class LogRecoveryWarning(UserWarning):
    """A reader dropped a torn tail (last line or zstd frame) as the harness does; see
    ``Session.recovery`` for what was dropped. Appending repairs the file."""


class DegradedSearchWarning(UserWarning):
    """A search ranked without its embeddings: the embedder failed (an endpoint's HTTP
    error or timeout, vectors of the wrong shape, a model that will not load), so the hits
    are the lexical ranking alone. ``reason`` says what failed; the result says it too
    (``FindResult.degraded_reason``). Emitted once per ``Memory``; each search tries the
    embedder again."""

    def __init__(self, message: str, *, reason: str = "") -> None:
        self.reason = reason
        super().__init__(message)


class StaleRedactionWarning(UserWarning):
    """A memory file whose texts went through older redaction rules than this ctxsdk's
    (``ctxsdk.session.kernel.REDACTION_RULES_VERSION``), or that records none (written before
    they were recorded): it may still hold a credential the current rules withhold.
    ``Memory.scrub()`` (``ctxsdk memory DB scrub``) applies them to every stored text.
    ``rules`` is the version the file records (None: none)."""

    def __init__(self, message: str, *, rules: int | None = None) -> None:
        self.rules = rules
        super().__init__(message)
