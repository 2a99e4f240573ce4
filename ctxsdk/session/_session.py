"""``Session``: one agent session log, its surface, and what the model receives."""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from .._display import Rendered
from .._gc import gc_paused
from ..errors import (
    InvalidArgument,
    LogInvariantWarning,
    LogRecoveryWarning,
    LogTooOld,
    NotFound,
    NotReadFromFile,
    SessionFormatError,
    SurfaceError,
)
from ._checked import check_log
from ._codec import (
    MAX_DECODED_BYTES,
    Compression,
    DecodedLog,
    Recovery,
    check_max_bytes,
    dumps_line,
    read_log,
    refuse_deep_events,
    resolve_log_path,
    validate_header,
)
from ._event_writer import EventWriter, now_ms
from ._foreign_hint import foreign_log_hint
from ._log_view import LogView
from ._models import (
    EndSeedData,
    Event,
    Message,
    RequestContextData,
    RequestHeaderData,
    SessionHeader,
    SubagentDescriptorData,
    TokenUsage,
    parse_event,
    strict_violation,
)
from ._redact import redact
from ._repair import repair_events, resume_marker
from ._replay import LogIndex, check_replace, replay_into, replay_log
from ._surface import NodeTokens, Surface, SurfaceNode, TokenTable
from ._text import message_of, message_text
from ._turns import Step, Turn, Turns
from ._wire import WireFormat, to_wire

if TYPE_CHECKING:
    import polars as pl

    from ._composition import Composition, TurnTokens
    from ._facts import Facts
    from ._foreign._emit import ImportedLog

__all__ = ["Session"]

_MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])
_USAGE: TypeAdapter[TokenUsage] = TypeAdapter(TokenUsage)
_CTXSDK_SOURCE = {"kind": "plugin", "plugin": "ctxsdk"}


_M = TypeVar("_M", bound=BaseModel)


def _blank_prompt(message: dict[str, Any]) -> bool:
    """A system message whose blocks are all empty text (the harness writes ``[]`` then)."""
    return all(
        isinstance(b, dict) and b.get("type") == "text" and not b.get("text")
        for b in message["content"]
    )


class Session(Rendered):
    """An agent session log and the views derived from it.

    Sessions are values: edits (``replace``, ``append``) return a new ``Session`` whose new
    events are pending until ``append_to_log()`` or ``save()`` writes them.
    """

    def __init__(
        self,
        header: dict[str, Any],
        events: list[dict[str, Any]],
        *,
        path: Path | None = None,
        compression: Compression = "zstd",
        persisted: int | None = None,
        log: DecodedLog | None = None,
        index: LogIndex | None = None,
    ) -> None:
        if index is None:  # events from memory; a file's were checked as it was decoded
            version, index = check_log(header, events)
        else:
            version = validate_header(header)
        self._init(
            header,
            version,
            events,
            index,
            path=path,
            compression=compression,
            persisted=len(events) if persisted is None else persisted,
            log=log,
        )

    def _init(
        self,
        header: dict[str, Any],
        version: int,
        events: list[dict[str, Any]],
        index: LogIndex,
        *,
        path: Path | None,
        compression: Compression,
        persisted: int,
        log: DecodedLog | None,
        typed: dict[int, Event] | None = None,
        msgs: dict[int, Message] | None = None,
    ) -> None:
        """The one place a Session's fields are set (``__init__`` and ``_extended``)."""
        self._header_raw = header
        self._version = version
        self._raw = events
        self._path = path
        self._compression: Compression = compression
        self._persisted = persisted
        self._log = log
        self._index = index
        self._typed: dict[int, Event] = {} if typed is None else typed
        self._msgs: dict[int, Message] = {} if msgs is None else msgs  # frozen, safe to share
        self._token_tables: dict[str, TokenTable] = {}  # a session's events never change

    # --- constructors ----------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        normalized: bool | None = None,
        strict: bool = False,
        max_bytes: int = MAX_DECODED_BYTES,
    ) -> Session:
        """Read a DSH session file (``.jsonl`` / ``.jsonl.zstd``, v0-v3) or session directory.

        The log is validated as the harness validates it on load. Breaks of the harness's
        optional invariants (turn/step enclosure, tool-call pairing, turn numbering), which
        its loader reads, are reported as ``LogInvariantWarning`` naming the seq and rule.
        ``strict=True`` refuses those too, and checks every event's data against its typed
        model up front, strictly (no ``true`` for an integer, no ``null`` for an omitted
        field), with duplicate appended message ids and a ``compaction/summary`` without its
        start refused as the harness refuses them. A torn last line or frame is dropped as
        the harness does and reported (``s.recovery`` and a ``LogRecoveryWarning``); the file
        itself is never modified.

        A log where no event has a ``seq`` or ``time`` (the harness's snapshot fixtures strip
        them; a harness log has them on every event) is read as normalized: seqs by position,
        missing times 0. Such a session is read-only (``s.path`` is None, ``append_to_log``
        refuses: there is no live log to append to); ``s.save(path)`` writes a copy with
        real seqs. ``normalized=True`` reads any log that way, ``normalized=False`` refuses a
        stripped one; a log with some events stripped and others not is refused (with its
        line and seq) unless ``normalized=True``.

        ``max_bytes`` caps the text one read decodes (``MAX_DECODED_BYTES``, 1 GiB): a zstd
        decompression bomb (131 KB that inflate to 4 GiB), or a plain file larger than it, is
        refused with a ``SessionFormatError`` naming the path and the cap as soon as the
        streamed text passes it; pass a larger ``max_bytes`` for a real log that large.
        """
        check_max_bytes(max_bytes)
        with gc_paused():
            try:
                log = read_log(path, normalized=normalized, max_bytes=max_bytes)
            except SessionFormatError as exc:
                # another agent's log: say which importer reads it
                raise foreign_log_hint(exc, path) from None
            try:
                index = replay_log(log.events, log.version, strict=strict)
            except SessionFormatError as exc:
                raise _locate(exc, log, resolve_log_path(path)) from None
            index.strict = True  # edits on this session refuse what the companion refuses
        p = Path(path).expanduser()
        session = cls(
            log.header,
            log.events,
            path=None if log.normalized else resolve_log_path(p),
            compression=log.compression,
            log=log,
            index=index,
        )
        if log.recovery is not None:
            warnings.warn(f"{p}: {log.recovery}", LogRecoveryWarning, stacklevel=2)
        _warn_invariants(p, log, index.invariant_issues)
        if strict:
            session.validate()
            found = strict_violation(log.events, log.version)
            if found is not None:
                err = SessionFormatError(found[1], seq=found[0])
                raise _locate(err, log, resolve_log_path(path)) from None
        return session

    @classmethod
    def from_events(cls, header: dict[str, Any], events: Iterable[dict[str, Any]]) -> Session:
        """An in-memory session from a header and raw DSH events (validated like a file)."""
        return cls(dict(header), [dict(e) for e in events])

    # --- importers (ctxsdk.session.importers): foreign logs as valid v3 sessions -------------

    @classmethod
    def _imported(cls, log: ImportedLog) -> Session:
        """A session of a log an importer built and checked (not replayed again)."""
        return cls(log.header, log.events, index=log.index)

    @classmethod
    def open_any(
        cls, path: str | Path, *, format: str | None = None, **importer_kwargs: Any
    ) -> Session:
        """Open any agent's log: a DSH session (``Session.open``) or a foreign file, imported.

        The format is detected from the content (``detect_format``: a bounded prefix, never
        the name) unless ``format`` names one (``"dsh"`` or one of the importers' ``FORMATS``).
        Keyword arguments go to ``Session.open`` or the format's importer (``max_bytes``,
        ``session_id``, ``conversation`` for LoCoMo, ...). A file no format fits raises
        ``ImportFormatError`` naming the path, what was seen and the formats known.
        """
        from ._foreign._detect import detect_format
        from ._foreign._dispatch import read_file

        fmt = detect_format(path) if format is None else format
        if fmt == "dsh":
            return cls.open(path, **importer_kwargs)
        return cls._imported(read_file(fmt, path, **importer_kwargs))

    @classmethod
    def from_messages(
        cls,
        messages: Sequence[dict[str, Any]],
        format: Literal["openai", "anthropic"] = "openai",
        **options: Any,
    ) -> Session:
        """OpenAI chat messages (tool calls included) or Anthropic messages as a session."""
        from ._foreign._chat import read_messages

        return cls._imported(read_messages(messages, format, **options))

    @classmethod
    def from_claude_code(cls, path: str | Path, **options: Any) -> Session:
        """A Claude Code JSONL transcript (its /compact becomes a compaction on the surface)."""
        from ._foreign._claude_code import read_claude_code

        return cls._imported(read_claude_code(path, **options))

    @classmethod
    def from_swe_agent(cls, path: str | Path, **options: Any) -> Session:
        """A SWE-agent ``.traj`` file (text-action or function-calling)."""
        from ._foreign._swe_agent import read_swe_agent

        return cls._imported(read_swe_agent(path, **options))

    @classmethod
    def from_codex(cls, path: str | Path, **options: Any) -> Session:
        """A Codex CLI rollout (``rollout-*.jsonl``)."""
        from ._foreign._codex import read_codex

        return cls._imported(read_codex(path, **options))

    @classmethod
    def from_gemini_cli(cls, path: str | Path, **options: Any) -> Session:
        """A Gemini CLI saved session (``session-*.json``)."""
        from ._foreign._gemini_cli import read_gemini_cli

        return cls._imported(read_gemini_cli(path, **options))

    @classmethod
    def from_openhands(cls, path: str | Path, **options: Any) -> Session:
        """An OpenHands trajectory (a JSON list of events)."""
        from ._foreign._openhands import read_openhands

        return cls._imported(read_openhands(path, **options))

    @classmethod
    def from_aider(cls, path: str | Path, **options: Any) -> Session:
        """An Aider chat history (``.aider.chat.history.md``)."""
        from ._foreign._aider import read_aider

        return cls._imported(read_aider(path, **options))

    @classmethod
    def from_mini_swe_agent(cls, path: str | Path, **options: Any) -> Session:
        """A mini-swe-agent trajectory (``*.traj.json``)."""
        from ._foreign._mini_swe_agent import read_mini_swe_agent

        return cls._imported(read_mini_swe_agent(path, **options))

    @classmethod
    def from_locomo(cls, data: Any, conversation: int | str = 0, **options: Any) -> Session:
        """One LoCoMo conversation (parsed ``locomo10.json`` or its path); ``dia_id`` kept."""
        from ._foreign._locomo import read_locomo

        return cls._imported(read_locomo(data, conversation, **options))

    # --- identity and header ---------------------------------------------------------------

    @cached_property
    def header(self) -> SessionHeader:
        return SessionHeader.model_validate(self._header_raw)

    @property
    def id(self) -> str:
        return str(self._header_raw["id"])

    @property
    def version(self) -> int:
        return self._version

    @property
    def path(self) -> Path | None:
        """The file this session was read from (None for in-memory sessions, and for a log
        read normalized, which is read-only)."""
        return self._path

    @property
    def normalized(self) -> bool:
        """True when read from a stripped log (no seq/time, like the harness's snapshot
        fixtures): seqs by position, no live file to write to (``path`` is None)."""
        return self._log is not None and self._log.normalized

    @property
    def compression(self) -> Compression:
        return self._compression

    @property
    def recovery(self) -> Recovery | None:
        """What the reader dropped from a torn tail, or None."""
        return self._log.recovery if self._log is not None else None

    @property
    def title(self) -> str | None:
        """The latest ``session/title`` (None if the log has none)."""
        seq = self._index.title_seq
        return None if seq is None else str(self._raw[seq]["data"]["title"])

    @property
    def working_dir(self) -> str | None:
        """The directory the session ran in (its header's ``cwd``, without a trailing slash),
        redacted; None when the log does not say. Memory scopes a project's entities by it and
        Merge tells two projects apart by it."""
        cwd = getattr(self.header, "cwd", None)
        if isinstance(cwd, str) and cwd.strip():
            return redact(cwd.strip().rstrip("/")).text
        return None

    @property
    def parent_id(self) -> str | None:
        return self._header_raw.get("parentSession")

    @property
    def origin(self) -> str | None:
        return self._header_raw.get("origin")

    @property
    def delegation_depth(self) -> int:
        return int(self._header_raw["delegationDepth"])

    @property
    def is_seeded(self) -> bool:
        return self.header.seeded

    @property
    def is_fork(self) -> bool:
        """A seeded child: its log starts with the parent's inherited prefix."""
        return self.parent_id is not None and self.is_seeded

    @property
    def inherited_event_count(self) -> int:
        """How many leading events were copied from the parent (0 when unseeded).

        v2+: the seq of the last ``session/end-seed {inherited:true}``; v0/v1: ``seedLength``.
        """
        if self._version <= 1:
            return int(self._header_raw.get("seedLength") or 0)
        tagged = [
            s for s in self._index.end_seed_seqs if self._typed_data(s, EndSeedData).inherited
        ]
        return tagged[-1] if tagged else 0

    @property
    def descriptor(self) -> SubagentDescriptorData | None:
        """The ``subagent/descriptor`` of a subagent child session."""
        seq = self._index.descriptor_seq
        return None if seq is None else self._typed_data(seq, SubagentDescriptorData)

    @cached_property
    def index(self) -> LogView:
        """What the validating replay learned about the log, read-only: turn and step spans,
        which node replaced which (``replaced`` / ``shadowed_by`` / ``covered``), decoded
        sources, header, title and compaction seqs."""
        return LogView(self._index)

    # --- events ----------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._raw)

    @property
    def raw_events(self) -> Sequence[dict[str, Any]]:
        """The events as JSON objects, exactly as in the log (do not mutate them)."""
        return self._raw

    def event(self, seq: int) -> Event:
        """The typed event at ``seq``."""
        if isinstance(seq, bool) or not isinstance(seq, int):
            raise InvalidArgument(f"a seq is an event's position in the log (an int), not {seq!r}")
        if not 0 <= seq < len(self._raw):
            raise NotFound(
                f"session {self.id} has no event with seq {seq} (0..{len(self._raw) - 1})"
            )
        typed = self._typed.get(seq)
        if typed is None:
            try:
                typed = parse_event(self._raw[seq])
            except ValidationError as exc:
                raise self._data_error(seq, exc) from None
            self._typed[seq] = typed
        return typed

    @property
    def events(self) -> list[Event]:
        """Every event, typed (parsed on first access)."""
        return [self.event(i) for i in range(len(self._raw))]

    def iter_events(self, *types: str) -> Iterator[Event]:
        """Typed events of the given types (all when none given), in seq order."""
        wanted = set(types)
        for i, raw in enumerate(self._raw):
            if not wanted or raw["type"] in wanted:
                yield self.event(i)

    def _typed_data(self, seq: int, model: type[_M]) -> _M:
        """One event's data as ``model``; a mismatch is a located SessionFormatError."""
        try:
            return model.model_validate(self._raw[seq]["data"])
        except ValidationError as exc:
            raise self._data_error(seq, exc) from None

    def validate(self) -> Session:
        """Check every event's data against its typed model; returns self."""
        _ = self.events
        return self

    def _data_error(self, seq: int, exc: ValidationError) -> SessionFormatError:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        raw = self._raw[seq]
        err_out = SessionFormatError(
            f"{raw.get('type')} data does not match its schema at {loc or 'data'}: {err['msg']}",
            seq=seq,
        )
        if seq >= self._persisted:
            return err_out
        return _locate(err_out, self._log, self._log.path if self._log is not None else None)

    # --- surface and messages --------------------------------------------------------------

    def surface(self) -> Surface:
        """The current surface: each node with its message, in model order."""
        seqs = self._index.surface.nodes()
        messages = self._typed_messages(seqs)
        nodes = [
            SurfaceNode(
                seq=s,
                type=self._raw[s]["type"],
                message=m,
                op="replace" if s in self._index.replaced else "append",
                shadowed=tuple(self._index.replaced.get(s, ())),
            )
            for s, m in zip(seqs, messages, strict=True)
        ]
        return Surface(nodes, self._index.surface.generation)

    def _derived_seqs(self) -> list[int]:
        return self._derived()[0]

    def _derived(self) -> tuple[list[int], list[dict[str, Any] | None]]:
        """The surface seq of each message the model receives and its raw message (what
        ``message_of`` finds there), in one pass over the surface."""
        seqs: list[int] = []
        msgs: list[dict[str, Any] | None] = []
        events = self._raw
        for s in self._index.surface.nodes():
            raw = events[s]
            etype = raw["type"]
            if etype == "assistant/message" or etype == "system/message":
                msg = raw["data"]["message"]
                if not msg["content"]:
                    continue  # empty assistant (max-tokens host) or "no system prompt"
                if etype == "system/message" and _blank_prompt(msg):
                    continue  # an empty system prompt is no system prompt
                if type(msg) is not dict:
                    msg = message_of(raw)
            else:
                msg = message_of(raw)
            seqs.append(s)
            msgs.append(msg)
        return seqs, msgs

    def _typed_messages(
        self, seqs: list[int], raws: list[dict[str, Any] | None] | None = None
    ) -> list[Message]:
        """The typed message of each of ``seqs`` (``raws``: their raw messages, when the
        caller has them already), typed once per session."""
        cache = self._msgs
        if raws is not None and not cache:  # the first call: every one of them to type
            todo, dicts = seqs, raws
        else:
            todo = [s for s in seqs if s not in cache]
            dicts = [message_of(self._raw[s]) for s in todo]
        if todo:
            try:
                with gc_paused():
                    typed = _MESSAGES.validate_python(dicts)
            except ValidationError as exc:
                pos = exc.errors()[0]["loc"][0]
                bad = todo[int(pos)] if isinstance(pos, int) else todo[0]
                raise self._data_error(bad, exc) from None
            cache.update(zip(todo, typed, strict=True))
            if todo is seqs:  # all of them just typed (surface seqs are distinct)
                return typed
        return [cache[s] for s in seqs]

    def message_at(self, seq: int) -> Message:
        """The typed message event ``seq`` carries (on the surface or shadowed)."""
        if not 0 <= seq < len(self._raw) or message_of(self._raw[seq]) is None:
            raise NotFound(f"session {self.id} has no message event at seq {seq}")
        return self._typed_messages([seq])[0]

    def messages(self, *, repair: bool = False) -> list[Message]:
        """``deriveMessages()``: exactly the messages the model receives, in order (spec §8).

        ``repair=True`` derives them from the crash-repaired log (see ``repaired``).
        """
        if repair and self.is_interrupted:
            return self.repaired().messages()
        return self._typed_messages(*self._derived())

    def message_seqs(self) -> list[int]:
        """The surface seq of each message ``messages`` returns."""
        return self._derived_seqs()

    @property
    def system_prompt(self) -> str | None:
        """The system prompt of the next request (v3: node 0; v0-v2: latest request header)."""
        if self._version >= 3:
            first = self._index.surface.first()
            if first is not None and self._raw[first]["type"] == "system/message":
                return message_text(self._raw[first]["data"]["message"]) or None
            return None
        header = self._latest_header()
        system = header.get("system") if header else None
        return system if isinstance(system, str) and system else None  # "" is no prompt

    @property
    def tools(self) -> list[dict[str, Any]]:
        """Tool definitions of the latest request header (an entry that is not an object
        is left out: a log is untrusted input)."""
        header = self._latest_header()
        tools = header.get("tools") if header else None
        return [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []

    def _latest_header(self) -> dict[str, Any] | None:
        seqs = self._index.header_seqs
        return self._raw[seqs[-1]]["data"]["header"] if seqs else None

    def wire(self, format: WireFormat = "openai", *, repair: bool = True) -> list[dict[str, Any]]:
        """The messages as a provider receives them (OpenAI / DeepSeek chat format).

        A log that ends inside a turn is crash-repaired first (``repair=False`` to skip), since
        a provider refuses tool calls without results.
        """
        target = self.repaired() if repair and self.is_interrupted else self
        seqs = target._derived_seqs()
        target._typed_messages(seqs)  # a malformed message is a located error, not a KeyError
        raws = [message_of(target._raw[s]) for s in seqs]
        system = None if target._version >= 3 else target.system_prompt
        return to_wire([r for r in raws if r is not None], format, system=system)

    def tokens(self, tokenizer: str = "cl100k_base") -> TokenTable:
        """Tokens of each message the model receives, counted exactly with ``"cl100k_base"``
        (default), ``"o200k_base"`` or ``"deepseek"``, or by the harness's own chars/4 rule
        with ``"estimate"``. All work offline. Counted once per session and tokenizer."""
        cached = self._token_tables.get(tokenizer)
        if cached is not None:
            return cached
        from ._tokens import TokenCounter, estimate_system, get_tokenizer

        tk = get_tokenizer(tokenizer)
        seqs = self._derived_seqs()
        raws = [message_of(self._raw[s]) or {} for s in seqs]
        counts = TokenCounter(tk).count_messages(raws)
        rows = tuple(
            NodeTokens(s, self._raw[s]["type"], str(r.get("role")), c)
            for s, r, c in zip(seqs, raws, counts, strict=True)
        )
        system = self.system_prompt if self._version < 3 else None
        if system:
            extra = estimate_system(system) if tokenizer == "estimate" else tk.count(system)
        else:
            extra = 0
        table = self._token_tables[tokenizer] = TokenTable(tk.name, rows, extra)
        return table

    # --- polars views (column tables in ctxsdk.session._views) -----------------------------

    def events_df(self) -> pl.DataFrame:
        """Every event: seq, type, time, turn, step, surface op, sources, surface state, size."""
        from ._views import events_df

        return events_df(self)

    def surface_df(self) -> pl.DataFrame:
        """The surface nodes in model order, with what each replacement shadows."""
        from ._views import surface_df

        return surface_df(self)

    def messages_df(self) -> pl.DataFrame:
        """The derived messages, one row each."""
        from ._views import messages_df

        return messages_df(self)

    def tools_df(self) -> pl.DataFrame:
        """Each tool call with its result: error flag, sizes, whether pruned or still visible."""
        from ._views import tools_df

        return tools_df(self)

    def turns_df(self) -> pl.DataFrame:
        """One row per turn: outcome, steps, prompt, usage, tool calls, duration."""
        from ._views import turns_df

        return turns_df(self)

    def tokens_df(self, tokenizer: str = "cl100k_base") -> pl.DataFrame:
        """Tokens per message the model receives, with the tool each belongs to."""
        from ._views import tokens_df

        return tokens_df(self, tokenizer)

    # --- facts ------------------------------------------------------------------------------

    def facts(self) -> Facts:
        """What this log says worth remembering, read from every event (not only the surface):
        instructions, preferences, decisions, project facts, errors and their fixes, settings,
        outcome. Each fact carries its source (session, seq, quote). The same kernel feeds
        Fold's state, Memory's ingest and Merge's claims."""
        from ._facts import read_facts

        return read_facts(self._raw, session=self.id)

    # --- turns, requests, usage ------------------------------------------------------------

    def turns(self) -> Turns:
        """The turns in log order (a list; printed or shown in a notebook, a table)."""
        out = Turns()
        for span in self._index.turns:
            end = span.end_seq if span.end_seq is not None else len(self._raw) - 1
            usage = self._usage_between(span.start_seq, end)
            out.append(
                Turn(
                    turn=span.turn,
                    start_seq=span.start_seq,
                    end_seq=span.end_seq,
                    reason=None if span.reason is None else str(span.reason.get("kind")),
                    steps=tuple(Step(span.turn, s, a, b) for s, a, b in span.steps),
                    usage=usage,
                    prompt=self._prompt_between(span.start_seq, end),
                )
            )
        return out

    def _prompt_between(self, start: int, end: int) -> str | None:
        for raw in self._raw[start : end + 1]:
            if (
                raw["type"] == "user/message"
                and raw["data"].get("source", {}).get("kind") == "user"
            ):
                return message_text(raw["data"])
        return None

    def usage(self) -> list[tuple[int, TokenUsage]]:
        """Provider-reported usage per assistant message, as (seq, usage)."""
        out = []
        for i, raw in enumerate(self._raw):
            if raw["type"] == "assistant/message":
                u = self._usage_of(i)
                if u is not None:
                    out.append((i, u))
        return out

    def _usage_of(self, seq: int) -> TokenUsage | None:
        raw = self._raw[seq]
        u = raw["data"].get("usage")
        if u is None and self._version <= 1:
            # v0 may carry usage only on the attempt's usage chunk.
            for s in self._index.source_seqs.get(seq, []):
                chunk = (
                    self._raw[s]["data"].get("chunk")
                    if self._raw[s]["type"] == "assistant/chunk"
                    else None
                )
                if isinstance(chunk, dict) and chunk.get("type") == "usage":
                    u = chunk.get("usage")
        if u is None:
            return None
        try:
            return _USAGE.validate_python(u)
        except ValidationError as exc:
            raise self._data_error(seq, exc) from None

    def _usage_between(self, start: int, end: int) -> TokenUsage | None:
        total: dict[str, int] = {}
        found = False
        for i in range(start, end + 1):
            if self._raw[i]["type"] != "assistant/message":
                continue
            u = self._usage_of(i)
            if u is None:
                continue
            found = True
            for k, v in u.model_dump(by_alias=True, exclude_none=True).items():
                if isinstance(v, int):
                    total[k] = total.get(k, 0) + v
        return _USAGE.validate_python(total) if found else None

    def request_headers(self) -> list[tuple[int, RequestHeaderData]]:
        return [(s, self._typed_data(s, RequestHeaderData)) for s in self._index.header_seqs]

    @property
    def route(self) -> tuple[str, str] | None:
        """(provider, model) of the latest request."""
        h = self._latest_header()
        cfg = h.get("config") if h else None
        if isinstance(cfg, dict) and cfg.get("provider") and cfg.get("model"):
            return str(cfg["provider"]), str(cfg["model"])
        return None

    @property
    def context_window(self) -> int | None:
        """The latest ``request/context.contextWindow`` the harness logged."""
        for s in reversed(self._index.context_seqs):
            ctx = self._typed_data(s, RequestContextData)
            if ctx.context_window is not None:
                return ctx.context_window
        return None

    # The engines sit above the base: the top of the package lends these conveniences
    # (ctxsdk._hooks). Any: the base cannot name an engine's class, even for typing.
    def assemble(self, **options: Any) -> Any:
        """The per-node context editor (full / key / off) over this session: the same as
        ``cx.Assembly(session, **options)``; see ``cx.Assembly`` for the options."""
        from .._hooks import assembly

        return assembly(self, **options)

    def fold(self, **options: Any) -> Any:
        """Lossless compaction of this session: the same as ``cx.Fold(session, **options)``;
        see ``cx.Fold`` for the options (``store``, ``policy``, ``window``, ...)."""
        from .._hooks import fold

        return fold(self, **options)

    def fork(
        self,
        at_seq: int | None = None,
        *,
        child_id: str | None = None,
        dest_root: str | Path | None = None,
    ) -> Session:
        """Write a seeded child log exactly as the harness forks (spec §12): events
        ``0..at_seq`` inherited (default: all; the cut must end outside an open turn),
        ``parentSession``, the seed boundary marker. Written next to this session in its DSH
        home, or under ``dest_root``; returns the child, opened."""
        from ._fork import fork_session

        path = fork_session(self, at_seq=at_seq, child_id=child_id, dest_root=dest_root)
        return Session.open(path)

    # --- crash repair ----------------------------------------------------------------------

    @property
    def is_interrupted(self) -> bool:
        """True when the log ends inside an open turn (a crash or a live session)."""
        return self._index.open_turn is not None

    def repaired(self) -> Session:
        """The crash-repair view (spec §9): dangling calls answered, step and turn closed.

        The closers are the harness's (``repair.ts``), followed by the ``session/end-seed {}``
        resume marker its Session constructor appends; they are pending events, which
        ``append_to_log()`` would write.
        """
        closers = repair_events(self._raw)
        if not closers:
            return self
        return self._extended(closers + resume_marker(self._raw + closers))

    # --- edits -----------------------------------------------------------------------------

    @property
    def pending_events(self) -> Sequence[dict[str, Any]]:
        """Events added in memory that are not in the file yet."""
        return self._raw[self._persisted :]

    def _extended(self, new: list[dict[str, Any]]) -> Session:
        """This session with ``new`` events replayed on a copy of its index."""
        index = self._index.copy()
        events = self._raw + new
        try:
            refuse_deep_events(events, len(self._raw))
            replay_into(index, events, len(self._raw))
        except SessionFormatError as exc:
            raise SurfaceError(exc.reason, seq=exc.seq) from None
        out = Session.__new__(Session)
        out._init(
            self._header_raw,
            self._version,
            events,
            index,
            path=self._path,
            compression=self._compression,
            persisted=self._persisted,
            log=self._log,
            typed=dict(self._typed),
            msgs=dict(self._msgs),
        )
        return out

    def append(self, events: Iterable[dict[str, Any]]) -> Session:
        """A new Session with raw events appended (``seq`` filled in, ``time`` defaulting to
        now); each is validated as the harness would, or ``SurfaceError`` says why."""
        new: list[dict[str, Any]] = []
        seq = len(self._raw)
        for ev in events:
            if not isinstance(ev, Mapping) or "type" not in ev:
                raise SurfaceError(f"event {seq} to append has no type: {ev!r:.80}", seq=seq)
            body = {k: v for k, v in ev.items() if k not in ("type", "seq", "time")}
            new.append({"type": ev["type"], "seq": seq, "time": ev.get("time", now_ms()), **body})
            seq += 1
        return self._extended(new)

    def replace(
        self,
        start_seq: int,
        end_seq: int,
        message: Message | dict[str, Any] | str,
        *,
        sources: Sequence[int] | None = None,
        time: int | None = None,
    ) -> Session:
        """Replace the surface nodes ``start_seq..end_seq`` (by current surface position) with
        one message; returns the new Session with the replacement pending.

        ``message`` is a Message, a raw message dict, or a text (a user message sourced from
        ctxsdk). ``sources`` default to the shadowed nodes. Raises ``SurfaceError``
        with the harness's reason for any op it would refuse.
        """
        state = self._index.surface
        shadowed = state.span(start_seq, end_seq)
        if shadowed is None:
            raise SurfaceError(
                f"{start_seq}..{end_seq} is not a span of the current surface "
                "(both must be current nodes, start not after end)"
            )
        msg = _asmessage_of(message)
        etype = {"user": "user/message", "system": "system/message"}.get(msg["role"])
        if etype is None:
            raise SurfaceError("assistant messages never replace surface nodes; use a user message")
        if etype == "system/message" and self._version < 3:
            raise LogTooOld(
                f"system/message does not exist in v{self._version} logs; upgrade the log with "
                "save(path, version=3) to replace the system prompt"
            )
        src = sorted(set(sources)) if sources is not None else sorted(shadowed)
        if etype == "user/message":
            data: dict[str, Any] = msg
        else:
            head = self._raw[shadowed[0]]["data"]
            data = {"turn": head.get("turn"), "step": head.get("step"), "message": msg}
        w = EventWriter(self._version, base=self._raw)
        w.emit(etype, data, time=time, sources=src, op=w.replace_op(start_seq, end_seq))
        new = w.take()
        check_replace(new[0], src, self._raw, state, self._version)  # the harness's reason first
        return self._extended(new)

    def rewrite_tool_result(
        self, seq: int, content: str | list[dict[str, Any]], *, time: int | None = None
    ) -> Session:
        """Rewrite one tool result's content (the content-only rewrite the harness allows)."""
        if seq not in self._index.surface or self._raw[seq]["type"] != "tool/result":
            raise SurfaceError(f"seq {seq} is not a tool/result on the current surface")
        old = self._raw[seq]["data"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        msg = dict(old["message"])
        first = dict(msg["content"][0])
        first["content"] = blocks
        msg["content"] = [first]
        w = EventWriter(self._version, base=self._raw)
        w.emit(
            "tool/result",
            {**old, "message": msg},
            time=time,
            sources=[seq],
            op=w.replace_op(seq, seq),
        )
        return self._extended(w.take())

    # --- writing ---------------------------------------------------------------------------

    def save(
        self,
        path: str | Path,
        *,
        version: int | None = None,
        compression: Compression | None = None,
        overwrite: bool = False,
    ) -> Path:
        """Write the whole log (pending events included) to a new file, atomically.

        ``version`` upgrades the log (the harness's migrations; there is no downgrade);
        ``compression`` defaults to the file name's (``.zstd``) or this session's.
        A directory gets the canonical file name of the version. Returns the file written.

        If the write fails (no space, a file size limit, a read-only directory) the error is
        a ``WriteError`` naming the file, and nothing is left behind: no temp file, no new
        directory, and a file being replaced (``overwrite=True``) keeps its old bytes.
        """
        from ._file_writer import refuse_shipped_sample, write_new

        header, events = self._header_raw, self._raw
        target_version = self._version if version is None else version
        if target_version != self._version:
            from ._migrate import migrate

            header, events = migrate(header, events, target_version)
        dest = Path(path).expanduser()
        if compression is None:
            if dest.suffix == ".zstd":
                compression = "zstd"
            elif dest.suffix == ".jsonl":
                compression = "none"
            else:
                compression = self._compression
        if dest.is_dir() or not dest.suffix:
            name = "session" + (f".v{target_version}" if target_version else "") + ".jsonl"
            dest = dest / (name + (".zstd" if compression == "zstd" else ""))
        refuse_shipped_sample(dest, instead="save to a path outside the package")
        return write_new(dest, header, events, compression=compression, overwrite=overwrite)

    def append_to_log(self) -> Session:
        """Append the pending events to the file this session was read from, as one batch
        (one zstd frame); returns the re-read Session.

        Every append is serialized with other writers: a v3 log under the harness's
        ``session.lock`` lease, a v0-v2 log (whose harness had no lease file) under an
        exclusive lock on the log file itself. If another process holds it, ``LockHeld``;
        if the file changed since it was read (another writer got there first),
        ``WriteError``; either way nothing is written: open the session again and retry.
        A torn tail that was dropped on read is repaired in the same write. On any failure
        (no space, a file size limit) the file is left byte-identical and ``WriteError``
        names it. The samples shipped with the package are read-only: save a copy first.
        """
        from ._file_writer import append_batch

        if self._log is not None and self._log.normalized:
            raise NotReadFromFile(
                f"{self._log.path}: this session was read from a stripped log (no seq/time on "
                "its events, like the harness's snapshot fixtures), which is read-only: it has "
                "no live log to append to. Save a copy with s.save(path), which writes real "
                "seqs and times, and open that to append"
            )
        if self._path is None or self._log is None:
            raise NotReadFromFile("this session was not read from a file; use save(path)")
        pending = self.pending_events
        if not pending and self.recovery is None:
            return self
        append_batch(
            self._path,
            [dumps_line(ev) for ev in pending],
            compression=self._compression,
            expected=self._log.data,
            recovery=self.recovery,
            use_lock=self._version >= 3,
        )
        return Session.open(self._path)

    # --- display ---------------------------------------------------------------------------

    def __repr__(self) -> str:
        title = f", {self.title!r}" if self.title else ""
        state = ", interrupted" if self.is_interrupted else ""
        pending = f", {len(self.pending_events)} pending" if self.pending_events else ""
        return (
            f"Session({self.id!r}{title}, v{self._version}, {len(self._raw)} events, "
            f"{len(self._index.surface)} nodes{state}{pending})"
        )

    def _text_(self) -> str:
        from ._session_display import session_text

        return session_text(self)

    def _html_(self) -> str:
        from ._session_display import session_html

        return session_html(self)

    # --- what fills the context, and the widget ----------------------------------------------

    def composition(
        self, tokenizer: str = "cl100k_base", *, window: int | None = None
    ) -> Composition:
        """What the model receives by part (system prompt, tool schemas, user, assistant,
        reasoning, tool results, summaries & markers) against the context window
        (``ctxsdk.session.composition``)."""
        from ._composition import composition

        return composition(self, tokenizer, window=window)

    def turn_tokens(self, tokenizer: str = "cl100k_base") -> TurnTokens:
        """What each turn contributes to what the model receives, by part."""
        from ._composition import turn_tokens

        return turn_tokens(self, tokenizer)

    def widget(self, **options: Any) -> Any:
        """The ContextTree widget over this session (``ctxsdk.widgets.ContextTree``): turn,
        step and node rows with a full / key / off switch, the messages, preview and apply."""
        from .._hooks import widget

        return widget("context_tree", self, **options)


_MAX_INVARIANT_WARNINGS = 10


def _warn_invariants(p: Path, log: DecodedLog, issues: list[tuple[int, str, str]]) -> None:
    """One located ``LogInvariantWarning`` per broken optional invariant (the first few)."""
    for seq, rule, msg in issues[:_MAX_INVARIANT_WARNINGS]:
        line = log.line_of(seq)
        frame = log.frame_of_line(line) if line is not None else None
        where = ", ".join(
            [str(p)]
            + ([f"zstd frame {frame}"] if frame is not None else [])
            + ([f"line {line}"] if line is not None else [])
            + [f"seq {seq}"]
        )
        text = (
            f"{where}: {msg} (rule {rule!r} of the harness's optional invariant companion; its "
            "loader reads the log, Session.open(strict=True) refuses it)"
        )
        warnings.warn(LogInvariantWarning(text, seq=seq, rule=rule), stacklevel=3)
    if len(issues) > _MAX_INVARIANT_WARNINGS:
        more = len(issues) - _MAX_INVARIANT_WARNINGS
        warnings.warn(
            LogInvariantWarning(
                f"{p}: {more} more break(s) of the optional invariants after seq "
                f"{issues[_MAX_INVARIANT_WARNINGS - 1][0]}",
                seq=issues[_MAX_INVARIANT_WARNINGS][0],
                rule=issues[_MAX_INVARIANT_WARNINGS][1],
            ),
            stacklevel=3,
        )


def _asmessage_of(message: Message | dict[str, Any] | str) -> dict[str, Any]:
    if isinstance(message, str):
        return {
            "content": [{"type": "text", "text": message}],
            "source": dict(_CTXSDK_SOURCE),
            "role": "user",
            "id": str(uuid.uuid4()),
        }
    if isinstance(message, Message):
        return message.to_json_dict()
    if not isinstance(message, dict) or "role" not in message:
        raise SurfaceError("a replacement message needs a role")
    out = dict(message)
    out.setdefault("id", str(uuid.uuid4()))
    out.setdefault("source", dict(_CTXSDK_SOURCE))
    return out


def _locate(
    exc: SessionFormatError, log: DecodedLog | None, path: Path | None = None
) -> SessionFormatError:
    """Add the file, line and zstd frame of the event ``exc`` names."""
    if log is None or exc.seq is None:
        return exc.at(path=path)
    line = log.line_of(exc.seq)
    frame = log.frame_of_line(line) if line is not None else None
    return exc.at(path=path, line=line, frame=frame)
