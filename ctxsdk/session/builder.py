"""Build valid DSH session logs in code, deterministically (spec §3-§12).

``LogBuilder`` appends raw events (plain dicts in the harness's key order
``type, seq, time, data, sourceEventSeqs, surfaceOp``) through a small fluent API::

    b = LogBuilder(session_id="s-1", cwd="/home/dev/app")
    b.turn("Run the tests").assistant(reasoning="...", tool_calls=[("bash", {"command": "pytest"})])
    b.tool_results(["3 passed in 0.12s"]).next_step().assistant(text="All green.").end_turn()
    b.write(b.canonical_path(root))

Ids come from ``uuid5(session id, counter)`` and times from a seeded ``Clock``, so the
same calls always give the same bytes. Version 3 is the primary shape; versions 0-2 are
supported too (v0/v1: top-level ``assistant/chunk`` events cited by the assistant message,
``seedLength``; v2: embedded streams, ``isSeeded``; v0-v2: ``request/header.header.system``).
Every log is checked with ``replay_log`` before it is written.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import string
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self, cast

import orjson

from ._replay import LogIndex, replace_keys, replay_log
from .codec import Compression, encode_source_seqs, validate_header
from .layout import encode_segment, project_key
from .writer import write_new

__all__ = [
    "CHECKPOINT_PREAMBLE",
    "DEFAULT_SYSTEM_PROMPT",
    "DEFAULT_TOOLS",
    "PRUNE_MARKER",
    "Clock",
    "LogBuilder",
    "ToolOutput",
]

JsonDict = dict[str, Any]

PROVIDER = "deepseek-official"
MODEL = "deepseek-v4-flash"
DEFAULT_CREATED_AT = 1_790_000_000_000  # 2026-09-21T14:13:20Z
DEFAULT_CONTEXT_WINDOW = 1_000_000  # deepseek-official default for deepseek-v4-flash (§14)
SYSTEM_PROMPT_PLUGIN = "@deepseek-ai/dsh-system-prompt"

CHECKPOINT_PREAMBLE = (
    "This is an automatically generated checkpoint condensing an earlier span of the "
    "conversation to free up context. Treat the captured context as established background "
    "and build on it without restating it. Continue the task directly from the messages that "
    "follow, without acknowledging this checkpoint."
)
PRUNE_MARKER = "\n\n[... tool result middle pruned ...]\n\n"
_SUMMARY_MAX_TOKENS = 8192  # compaction-basic default (§10)

DEFAULT_SYSTEM_PROMPT = (
    "You are an AI agent powered by DeepSeek Harness.\n\n"
    "You are dsh, a coding assistant powered by the deepseek-v4-flash model.\n\n"
    "Verify your work by running the code or tests. Keep answers brief and factual.\n\n"
    "Use the read tool — not shell commands like cat — to inspect text files. Results include "
    "line numbers. Use offset and limit to continue reading large files.\n\n"
    "Use the write tool to create files or completely replace file contents. Read an existing "
    "file first and prefer edit for targeted changes.\n\n"
    "Use the edit tool for targeted changes to existing UTF-8 text files. It replaces literal "
    "old_string with new_string; by default old_string must appear exactly once.\n\n"
    "Use the grep tool to search file contents with a regular expression."
)

DEFAULT_TOOLS: list[JsonDict] = [
    {
        "name": "bash",
        "description": "Run a shell command in the workspace and return its combined output.",
        "parameters": {
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command to run."},
                "description": {"type": "string", "description": "Five words on what it does."},
                "timeout_ms": {"type": "integer", "minimum": 1000, "maximum": 600000},
            },
            "required": ["command"],
        },
    },
    {
        "name": "read",
        "description": "Read a UTF-8 text file; lines are numbered. Use offset/limit to page.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "offset": {"type": "integer", "minimum": 1},
                "limit": {"type": "integer", "minimum": 1},
            },
            "required": ["path"],
        },
    },
    {
        "name": "write",
        "description": "Create a file or replace its whole content.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
        },
    },
    {
        "name": "edit",
        "description": "Replace old_string with new_string in a file (exactly once by default).",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "old_string": {"type": "string"},
                "new_string": {"type": "string"},
                "replace_all": {"type": "boolean"},
            },
            "required": ["path", "old_string", "new_string"],
        },
    },
    {
        "name": "grep",
        "description": "Search file contents with a regular expression; prints path:line:text.",
        "parameters": {
            "type": "object",
            "properties": {
                "pattern": {"type": "string"},
                "path": {"type": "string"},
                "glob": {"type": "string"},
            },
            "required": ["pattern"],
        },
    },
]

_RUNTIME_CONTEXT_HEAD = (
    "Current runtime context. This snapshot supersedes earlier runtime-context snapshots."
)
DEFAULT_RUNTIME_SECTIONS: tuple[tuple[str, str], ...] = (
    (
        "sandbox:policy",
        "Current DSH file policy: danger-full-access. The DSH file sandbox does not restrict "
        "file modifications by available operations.",
    ),
    (
        "approval:policy",
        "Approval prompts are disabled in this session: actions that require approval are "
        "rejected automatically — do not request sandbox escalation (do not set "
        "`sandbox_permissions`).",
    ),
)

# Ids are uuid5 under this namespace, so two builders with the same session id agree.
_ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://ctxsdk.dev/session-builder")
_BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
_TEXT_PIECE = re.compile(r"\s*\S{1,6}|\s+$")
_ARGS_PIECE = re.compile(r'\s*(?:[{}\[\]:,"]|[^{}\[\]:,"\s]{1,8})|\s+$')
_MAX_DELTAS = 48
_TOOL_MS: dict[str, tuple[int, int]] = {
    "bash": (350, 4200),
    "read": (8, 90),
    "grep": (20, 160),
    "edit": (6, 40),
    "write": (6, 40),
}


# --- small pure helpers --------------------------------------------------------------------


def _units(s: str) -> int:
    """Length in UTF-16 code units, as JavaScript counts it."""
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def _est_blocks(blocks: Iterable[Any]) -> int:
    return sum(_est_block(b) for b in blocks)


def _est_block(block: Any) -> int:
    """The harness's chars/4 estimate of one content block (§14)."""
    kind = block.get("type") if isinstance(block, dict) else None
    if kind in ("text", "reasoning"):
        return math.ceil(_units(block["text"]) / 4) + 4
    if kind == "tool-call":
        return math.ceil(_units(block["name"]) / 4) + math.ceil(_units(block["arguments"]) / 4) + 4
    if kind == "tool-result":
        return _est_blocks(block["content"]) + 4
    return 4 + math.ceil(_units(orjson.dumps(block).decode()) / 4)


def _est_message(message: Mapping[str, Any]) -> int:
    return _est_blocks(message["content"]) + 4


def _est_tools(tools: Sequence[JsonDict]) -> int:
    return math.ceil(_units(orjson.dumps(list(tools)).decode()) / 4) + 4 if tools else 0


def _clone(obj: Any) -> Any:
    """A deep copy of JSON data (orjson round trip keeps key order)."""
    return orjson.loads(orjson.dumps(obj))


def _reason(value: str | Mapping[str, Any]) -> JsonDict:
    return {"kind": value} if isinstance(value, str) else dict(value)


def fallback_title(prompt: str) -> str:
    """The harness's fallback title: at most five words and 40 UTF-8 bytes of the prompt."""
    words: list[str] = []
    for word in prompt.split()[:5]:
        if len(" ".join([*words, word]).encode()) > 40:
            break
        words.append(word)
    if words:
        return " ".join(words)
    first = prompt.split()[0] if prompt.split() else ""
    out = ""
    for ch in first:  # one long word (CJK has no spaces): cut at a character boundary
        if len((out + ch).encode()) > 40:
            break
        out += ch
    return out


# --- public helpers ------------------------------------------------------------------------


class Clock:
    """A deterministic epoch-ms clock: seeded jitter, never the wall clock."""

    def __init__(self, start: int, seed: str = "") -> None:
        self.now = start
        self._rng = random.Random(f"ctxsdk-clock:{seed}")

    def jitter(self, lo: int, hi: int) -> int:
        """A seeded amount in ``[lo, hi]`` without moving the clock."""
        return self._rng.randint(lo, hi)

    def tick(self, lo: int = 80, hi: int = 400) -> int:
        """Advance a few hundred ms (by default) and return the new time."""
        self.now += self._rng.randint(lo, hi)
        return self.now

    def advance(self, ms: int) -> int:
        self.now += ms
        return self.now

    def advance_to(self, t: int) -> int:
        self.now = max(self.now, t)
        return self.now


@dataclass(frozen=True)
class ToolOutput:
    """What one tool call returned; a plain ``str`` passed to ``tool_results`` means success.

    ``error`` is ``(name, code)``; v3 refuses an error without ``is_error`` (§16), so setting
    ``error`` implies ``is_error``. ``duration_ms`` overrides the seeded tool latency.
    """

    text: str
    is_error: bool = False
    error: tuple[str, str] | None = None
    reason: str | None = None
    meta: Any = None
    duration_ms: int | None = None

    @classmethod
    def failed(cls, text: str, name: str, code: str, **kw: Any) -> ToolOutput:
        return cls(text, is_error=True, error=(name, code), **kw)


@dataclass
class _Call:
    call_id: str
    name: str
    arguments: str


# --- the builder ---------------------------------------------------------------------------


class LogBuilder:
    """Append valid raw DSH events with deterministic ids and times; methods chain.

    A turn is ``turn() -> assistant() [-> tool_results() -> next_step() -> assistant() ...]
    -> end_turn()``. ``compact``, ``prune_tool_result`` and ``title`` may be called between
    those. ``fork`` and ``subagent`` return new builders for child sessions (§12).
    """

    def __init__(
        self,
        version: int = 3,
        session_id: str | None = None,
        created_at: int = DEFAULT_CREATED_AT,
        cwd: str | None = None,
        parent: str | None = None,
        origin: str | None = None,
        delegation_depth: int = 0,
        clock: Clock | None = None,
        *,
        agent_preset: str | None = None,
        system: str = DEFAULT_SYSTEM_PROMPT,
        tools: Sequence[JsonDict] | None = None,
        provider: str = PROVIDER,
        model: str = MODEL,
        context_window: int = DEFAULT_CONTEXT_WINDOW,
        reasoning_effort: str | None = "high",
        runtime_context: Sequence[tuple[str, str]] | None = DEFAULT_RUNTIME_SECTIONS,
    ) -> None:
        if version not in (0, 1, 2, 3):
            raise ValueError(f"LogBuilder writes format versions 0-3, not {version!r}")
        if origin not in (None, "subagent"):
            raise ValueError(f"header origin can only be 'subagent', not {origin!r}")
        if created_at < 0 or delegation_depth < 0:
            raise ValueError("created_at and delegation_depth must be non-negative")
        self.version = version
        self.session_id = session_id or str(
            uuid.uuid5(_ID_NAMESPACE, f"session/{created_at}/{cwd}/{parent}")
        )
        self.created_at = created_at
        self.cwd = cwd
        self.parent = parent
        self.origin = origin
        self.delegation_depth = delegation_depth
        self.agent_preset = agent_preset
        self.clock = clock if clock is not None else Clock(created_at, self.session_id)
        self.provider = provider
        self.model = model
        self.context_window = context_window
        self.reasoning_effort = reasoning_effort
        self.tools: list[JsonDict] = _clone(list(DEFAULT_TOOLS if tools is None else tools))
        self._seed_length: int | None = None  # set on fork children
        self._events: list[JsonDict] = []
        self._rng = random.Random(f"ctxsdk-builder:{self.session_id}")
        self._ids = 0
        self._calls = 0
        self._children = 0
        # Turn/step state, mirrored from what the replay would compute.
        self._turn = 0
        self._turn_open = False
        self._step = 0
        self._step_open = False
        self._step_answered = False
        self._pending: list[_Call] = []
        self._last_calls: list[str] = []
        self._result_seqs: dict[str, int] = {}
        self._turn_ends: dict[int, int] = {}
        self._nodes: list[int] = []  # the current surface, kept in step with every op
        self._prompt_seq: int | None = None
        # Request state: what the next step must announce.
        self._system_text = system
        self._system_sent: str | None = None
        self._header_reason: str | None = "initial"
        self._context_sent = False
        self._titled = False
        self._runtime_context = tuple(runtime_context) if runtime_context else None
        self._descriptor: JsonDict | None = None
        self._cache_tokens = 0

    # --- accessors --------------------------------------------------------------------------

    @property
    def header(self) -> JsonDict:
        """The header line, keys in the harness's order (§2.3)."""
        h: JsonDict = {
            "type": "session",
            "version": self.version,
            "id": self.session_id,
            "createdAt": self.created_at,
        }
        if self.cwd is not None:
            h["cwd"] = self.cwd
        if self.parent is not None:
            h["parentSession"] = self.parent
        if self.version >= 2:
            h["isSeeded"] = self._seed_length is not None
        elif self._seed_length is not None:
            h["seedLength"] = self._seed_length
        if self.origin is not None:
            h["origin"] = self.origin
        h["delegationDepth"] = self.delegation_depth
        if self.agent_preset is not None:
            h["agentPreset"] = self.agent_preset
        return h

    @property
    def events(self) -> list[JsonDict]:
        """The raw events so far (the list is a copy; the dicts are the builder's own)."""
        return list(self._events)

    @property
    def now(self) -> int:
        return self.clock.now

    @property
    def last_seq(self) -> int:
        return len(self._events) - 1

    @property
    def surface(self) -> list[int]:
        """The current surface node seqs in model order."""
        return list(self._nodes)

    @property
    def pending_calls(self) -> list[str]:
        return [c.call_id for c in self._pending]

    @property
    def last_call_ids(self) -> list[str]:
        """The tool-call ids of the latest assistant message."""
        return list(self._last_calls)

    @property
    def prompt_seq(self) -> int | None:
        """The seq of the latest turn's prompt ``user/message``."""
        return self._prompt_seq

    @property
    def turn_number(self) -> int:
        """The latest turn number (open or closed)."""
        return self._turn

    def result_seq(self, call_id: str) -> int:
        """The seq of the ``tool/result`` that answered ``call_id``."""
        return self._result_seqs[call_id]

    def turn_end_seq(self, turn: int) -> int:
        """The seq of ``turn/end`` of a closed turn (a fork boundary)."""
        try:
            return self._turn_ends[turn]
        except KeyError:
            raise ValueError(f"turn {turn} is not closed in this log") from None

    def canonical_path(self, root: str | Path, compression: Compression = "zstd") -> Path:
        """``<root>/<projectKey(cwd)>/<encodeSegment(id)>/session[.vN].jsonl[.zstd]`` (§1)."""
        gen = "" if self.version == 0 else f".v{self.version}"
        suffix = ".zstd" if compression == "zstd" else ""
        return (
            Path(root)
            / project_key(self.cwd)
            / encode_segment(self.session_id)
            / f"session{gen}.jsonl{suffix}"
        )

    def validate(self) -> LogIndex:
        """Check the header and replay every event as the harness would (raises on any defect)."""
        validate_header(self.header, expected_version=self.version)
        return replay_log(self._events, self.version)

    def write(
        self,
        path: str | Path,
        compression: Compression = "zstd",
        *,
        batch_size: int = 16,
        overwrite: bool = False,
    ) -> Path:
        """Validate, then write a new log file: header frame, then one frame per batch."""
        self.validate()
        return write_new(
            path,
            self.header,
            self._events,
            compression=compression,
            batch_size=batch_size,
            overwrite=overwrite,
        )

    # --- low level ---------------------------------------------------------------------------

    def _new_id(self) -> str:
        self._ids += 1
        return str(uuid.uuid5(_ID_NAMESPACE, f"{self.session_id}/{self._ids}"))

    def _new_call_id(self, index: int) -> str:
        # DeepSeek's shape: call_<index in message>_<24 base62 chars>.
        self._calls += 1
        digest = int.from_bytes(
            hashlib.sha256(f"{self.session_id}/call/{self._calls}".encode()).digest(), "big"
        )
        token = ""
        for _ in range(24):
            digest, r = divmod(digest, 62)
            token += _BASE62[r]
        return f"call_{index:02d}_{token}"

    def _emit(
        self,
        etype: str,
        data: Any,
        *,
        time: int | None = None,
        sources: list[int] | None = None,
        op: str | JsonDict | None = None,
    ) -> int:
        seq = len(self._events)
        ev: JsonDict = {
            "type": etype,
            "seq": seq,
            "time": self.clock.tick() if time is None else time,
            "data": data,
        }
        if sources is not None:
            ev["sourceEventSeqs"] = encode_source_seqs(sources)
        if op is not None:
            ev["surfaceOp"] = op
        self._events.append(ev)
        if op == "append":
            self._nodes.append(seq)
        return seq

    def _replace_op(self, start: int, end: int) -> JsonDict:
        k_start, k_end = replace_keys(self.version)
        return {"op": "replace", k_start: start, k_end: end}

    def _replace_nodes(self, shadowed: list[int], seq: int) -> None:
        i = self._nodes.index(shadowed[0])
        self._nodes[i : i + len(shadowed)] = [seq]
        # The provider's prefix cache now ends where the surface changed.
        prefix = _est_tools(self.tools) + sum(self._node_tokens(n) for n in self._nodes[:i])
        self._cache_tokens = min(self._cache_tokens, prefix // 64 * 64)

    def _message_of(self, seq: int) -> JsonDict:
        ev = self._events[seq]
        return cast(JsonDict, ev["data"] if ev["type"] == "user/message" else ev["data"]["message"])

    def _node_tokens(self, seq: int) -> int:
        return _est_message(self._message_of(seq))

    def _prompt_tokens(self) -> int:
        total = _est_tools(self.tools) + sum(self._node_tokens(n) for n in self._nodes)
        if self.version < 3 and self._system_sent:
            total += math.ceil(_units(self._system_sent) / 4) + 4
        return total

    def _need_turn(self, what: str) -> None:
        if not self._turn_open:
            raise ValueError(f"{what} needs an open turn; call .turn(prompt) first")

    def _need_step(self, what: str) -> None:
        if not self._step_open:
            raise ValueError(f"{what} needs an open step")

    def _split(self, text: str, pattern: re.Pattern[str]) -> list[str]:
        """Deltas as a provider streams them: a few words or JSON tokens at a time."""
        pieces = pattern.findall(text)
        if "".join(pieces) != text:  # the patterns cover every character; keep it honest
            pieces = [text]
        groups: list[str] = []
        per = max(1, math.ceil(len(pieces) / _MAX_DELTAS))
        i = 0
        while i < len(pieces):
            n = per * self._rng.choice((1, 1, 2, 2, 3))
            groups.append("".join(pieces[i : i + n]))
            i += n
        return groups or [""]

    def _dts(self, n: int) -> list[int]:
        return [self._rng.choice((0, 0, 1, 1, 1, 2, 14, 27, 29, 33, 41)) for _ in range(n)]

    # --- turns and steps ---------------------------------------------------------------------

    def wait(self, ms: int) -> Self:
        """Let time pass (a user reading the answer, a long tool)."""
        self.clock.advance(ms)
        return self

    def turn(self, prompt: str, system: str | None = None, title: str | None = None) -> Self:
        """Open a turn and its step 1 with the user's prompt (§6 order).

        ``system`` changes the system prompt from this turn on (v3: a node-0 replacement;
        v0-v2: a ``request/header`` with reason ``change``). ``title`` records a provider
        title; without it the first turn gets the harness's fallback title.
        """
        if self._turn_open:
            raise ValueError(f"turn {self._turn} is still open; call .end_turn() first")
        if self._turn:
            self.clock.tick(6_000, 45_000)  # the user reads the answer and types
        if system is not None:
            # v3 writes the change as a node-0 replacement; v0-v2 as a header with reason change.
            self._system_text = system
        self._turn += 1
        self._turn_open = True
        self._emit("turn/start", {"turn": self._turn}, time=self.clock.tick(2, 30))
        self._open_step(1)
        self._prompt_seq = prompt_seq = self._emit(
            "user/message",
            {
                "content": [{"type": "text", "text": prompt}],
                "source": {"kind": "user"},
                "role": "user",
                "id": self._new_id(),
            },
            time=self.clock.tick(0, 3),
            op="append",
        )
        if self._runtime_context is not None:
            sections = [{"name": n, "text": t} for n, t in self._runtime_context]
            text = "\n\n".join([_RUNTIME_CONTEXT_HEAD, *(t for _, t in self._runtime_context)])
            self._emit(
                "user/message",
                {
                    "content": [{"type": "text", "text": text}],
                    "source": {
                        "kind": "plugin",
                        "plugin": SYSTEM_PROMPT_PLUGIN,
                        "form": "snapshot",
                        "sections": sections,
                    },
                    "role": "user",
                    "id": self._new_id(),
                },
                time=self.clock.tick(0, 3),
                op="append",
            )
            self._runtime_context = None  # a snapshot is only re-sent when it changes
        if title is not None:
            self._write_title(
                title,
                [prompt_seq],
                {"kind": "provider", "provider": self.provider, "model": self.model},
            )
        elif not self._titled:
            self._write_title(fallback_title(prompt), [prompt_seq], {"kind": "fallback"})
        if self._descriptor is not None:
            self._emit("subagent/descriptor", self._descriptor, time=self.clock.tick(1, 8))
            self._descriptor = None
        self._request_envelope()
        return self

    def _open_step(self, step: int) -> None:
        self._step = step
        self._step_open = True
        self._step_answered = False
        self._emit("step/start", {"turn": self._turn, "step": step}, time=self.clock.tick(1, 12))
        if self.version >= 3 and self._system_sent != self._system_text:
            self._system_message()

    def _system_message(self) -> None:
        """v3 node 0: append it on the first step, replace it 1:1 when the prompt changes."""
        text = self._system_text
        data = {
            "turn": self._turn,
            "step": self._step,
            "message": {
                "id": self._new_id(),
                "role": "system",
                "content": [{"type": "text", "text": text}] if text else [],
                "source": {"kind": "plugin", "plugin": SYSTEM_PROMPT_PLUGIN},
            },
        }
        t = self.clock.tick(0, 3)
        if self._system_sent is None:
            self._emit("system/message", data, time=t, op="append")
        else:
            head = self._nodes[0]
            seq = self._emit(
                "system/message", data, time=t, sources=[head], op=self._replace_op(head, head)
            )
            self._replace_nodes([head], seq)
        self._system_sent = text

    def _request_envelope(self) -> None:
        """``request/header`` when the envelope changed, ``request/context`` once per route."""
        if self.version < 3 and self._system_sent != self._system_text:
            self._system_sent = self._system_text
            self._header_reason = self._header_reason or "change"
        if self._header_reason is not None:
            config: JsonDict = {"provider": self.provider, "model": self.model}
            header: JsonDict = {"config": config}
            if self.reasoning_effort is not None:
                config["reasoningEffort"] = self.reasoning_effort
                header["adapterDefaults"] = {"reasoningEffort": True}
            if self.version < 3:
                header["system"] = self._system_text
            if self.tools or self.version < 3:  # v3 omits an empty tools list
                header["tools"] = _clone(self.tools)
            self._emit(
                "request/header",
                {"header": header, "reason": self._header_reason},
                time=self.clock.tick(1, 6),
            )
            self._header_reason = None
        if not self._context_sent:
            self._emit(
                "request/context",
                {
                    "provider": self.provider,
                    "model": self.model,
                    "contextWindow": self.context_window,
                },
                time=self.clock.tick(0, 2),
            )
            self._context_sent = True

    def next_step(self) -> Self:
        """Close the current step and open the next one of the same turn."""
        self._need_step("next_step()")
        self._close_step()
        self._open_step(self._step + 1)
        self._request_envelope()
        return self

    def _close_step(self) -> None:
        if self._pending:
            ids = ", ".join(c.call_id for c in self._pending)
            raise ValueError(f"step {self._step} still has unanswered tool calls: {ids}")
        self._emit("step/end", {"turn": self._turn, "step": self._step}, time=self.clock.tick(1, 9))
        self._step_open = False

    def end_turn(self, reason: str | Mapping[str, Any] = "completed") -> Self:
        """Close the open step (if any) and the turn; ``reason`` is a kind or a full reason."""
        self._need_turn("end_turn()")
        if self._step_open:
            self._close_step()
        seq = self._emit(
            "turn/end", {"turn": self._turn, "reason": _reason(reason)}, time=self.clock.tick(1, 9)
        )
        self._turn_ends[self._turn] = seq
        self._turn_open = False
        return self

    # --- the model and tools -----------------------------------------------------------------

    def assistant(
        self,
        text: str | None = None,
        reasoning: str | None = None,
        tool_calls: Sequence[tuple[str, Mapping[str, Any] | str]] | None = None,
        usage: Mapping[str, int] | None = None,
        finish: str | Mapping[str, Any] | None = None,
    ) -> Self:
        """One model reply with its stream: reasoning, then text, then tool calls.

        ``usage`` defaults to the §14 estimate of the request (with a prefix-cache share);
        ``finish`` defaults to ``tool-calls`` when there are calls, else ``stop``.
        """
        self._need_step("assistant()")
        if self._step_answered:
            raise ValueError(f"step {self._step} already has its assistant message")
        blocks: list[tuple[str, JsonDict]] = []
        if reasoning:
            blocks.append(("reasoning", {"type": "reasoning", "text": reasoning}))
        if text:
            blocks.append(("text", {"type": "text", "text": text}))
        calls: list[_Call] = []
        for i, (name, args) in enumerate(tool_calls or ()):
            # DeepSeek emits Python-style spacing: {"command": "ls", "description": "..."}
            raw = args if isinstance(args, str) else json.dumps(dict(args), ensure_ascii=False)
            call = _Call(self._new_call_id(i), name, raw)
            calls.append(call)
            blocks.append(
                (
                    "tool-call",
                    {"type": "tool-call", "id": call.call_id, "name": name, "arguments": raw},
                )
            )
        content = [b for _, b in blocks]
        if usage is None:
            usage = self._auto_usage(content, reasoning)
        fin = _reason(finish if finish is not None else ("tool-calls" if calls else "stop"))
        records, t_end = self._stream(blocks, dict(usage), fin)
        message = {
            "role": "assistant",
            "content": content,
            "source": {"kind": "model", "provider": self.provider, "model": self.model},
            "id": self._new_id(),
        }
        data: JsonDict = {"turn": self._turn, "step": self._step, "message": message}
        if self.version >= 2:
            data["stream"] = records
            data["usage"] = dict(usage)
            self._emit("assistant/message", data, time=t_end, op="append")
        else:
            chunk_seqs = [
                self._emit(
                    "assistant/chunk",
                    {"turn": self._turn, "step": self._step, "chunk": rec["chunk"]},
                    time=rec["time"],
                )
                for rec in records
            ]
            data["usage"] = dict(usage)
            self._emit("assistant/message", data, time=t_end, sources=chunk_seqs, op="append")
        self._step_answered = True
        self._pending = calls
        self._last_calls = [c.call_id for c in calls]
        return self

    def _auto_usage(self, content: list[JsonDict], reasoning: str | None) -> JsonDict:
        prompt = self._prompt_tokens()
        cached = min(self._cache_tokens, prompt)
        usage: JsonDict = {
            "inputTokens": prompt - cached,
            "outputTokens": max(1, _est_blocks(content)),
            "cacheReadTokens": cached,
        }
        if reasoning:
            usage["reasoningTokens"] = math.ceil(_units(reasoning) / 4)
        self._cache_tokens = prompt // 64 * 64
        return usage

    def _stream(
        self, blocks: list[tuple[str, JsonDict]], usage: JsonDict, finish: JsonDict
    ) -> tuple[list[JsonDict], int]:
        """The timed stream records (v2+ shape); v0/v1 expand the same into chunk events."""
        t = self.clock.tick(600, 2400)  # time to first token
        expand = self.version < 2
        records: list[JsonDict] = []

        def chunk(c: JsonDict) -> None:
            nonlocal t
            records.append({"type": "chunk", "time": t, "chunk": c})
            t += self._rng.choice((0, 0, 1, 2))

        for index, (kind, block) in enumerate(blocks):
            chunk({"type": "block-start", "index": index, "blockType": kind})
            if kind == "tool-call":
                deltas = ["", *self._split(block["arguments"], _ARGS_PIECE)]
            else:
                deltas = self._split(block["text"], _TEXT_PIECE)
            dts = self._dts(len(deltas) - 1)
            if expand:
                for k, piece in enumerate(deltas):
                    if k:
                        t += dts[k - 1]
                    if kind == "tool-call":
                        c: JsonDict = {
                            "type": "tool-call-delta",
                            "index": index,
                            "id": block["id"],
                            "name": block["name"],
                            "argumentsDelta": piece,
                        }
                    else:
                        c = {"type": f"{kind}-delta", "index": index, "text": piece}
                    records.append({"type": "chunk", "time": t, "chunk": c})
            else:
                run: JsonDict = {"type": f"{kind}-chunks", "time0": t, "index": index, "dt": dts}
                if kind == "tool-call":
                    run.update(id=block["id"], name=block["name"], args=deltas)
                else:
                    run["texts"] = deltas
                records.append(run)
                t += sum(dts)
            t += self._rng.randint(1, 30)
        for index, (_, block) in enumerate(blocks):
            chunk({"type": "block-end", "index": index, "block": _clone(block)})
        chunk({"type": "usage", "usage": dict(usage)})
        chunk({"type": "finish", "reason": finish})
        t_end = t + self._rng.randint(1, 4)
        self.clock.advance_to(t_end)
        return records, t_end

    def tool_results(self, results: Sequence[str | ToolOutput]) -> Self:
        """Answer every pending call of the step, in call order: ``tool/call`` then
        ``tool/result`` for each (a ``str`` is a successful text result)."""
        self._need_step("tool_results()")
        if len(results) != len(self._pending):
            raise ValueError(
                f"{len(self._pending)} tool call(s) are pending but {len(results)} result(s) "
                "were given"
            )
        for call, res in zip(self._pending, results, strict=True):
            out = ToolOutput(res) if isinstance(res, str) else res
            if out.reason is not None and not (out.is_error or out.error):
                raise ValueError("a tool result reason is allowed only on an error result")
            call_seq = self._emit(
                "tool/call",
                {
                    "turn": self._turn,
                    "step": self._step,
                    "callId": call.call_id,
                    "name": call.name,
                    "arguments": call.arguments,
                },
                time=self.clock.tick(1, 15),
            )
            lo, hi = _TOOL_MS.get(call.name, (200, 2000))
            took = out.duration_ms if out.duration_ms is not None else self.clock.jitter(lo, hi)
            data: JsonDict = {
                "turn": self._turn,
                "step": self._step,
                "message": {
                    "source": {"kind": "tool", "callId": call.call_id},
                    "content": [
                        {
                            "type": "tool-result",
                            "toolCallId": call.call_id,
                            "content": [{"type": "text", "text": out.text}],
                            "isError": out.is_error or out.error is not None,
                        }
                    ],
                    "role": "user",
                    "id": self._new_id(),
                },
            }
            if out.error is not None:
                err: JsonDict = {"name": out.error[0], "code": out.error[1]}
                if out.reason is not None and self.version >= 3:
                    err["reason"] = out.reason
                data["error"] = err
            if out.meta is not None:
                data["meta"] = _clone(out.meta)
            seq = self._emit(
                "tool/result",
                data,
                time=self.clock.advance(took),
                sources=[call_seq],
                op="append",
            )
            self._result_seqs[call.call_id] = seq
        self._pending = []
        return self

    # --- log-only plugins --------------------------------------------------------------------

    def _write_title(self, title: str, seqs: list[int], source: JsonDict) -> None:
        if len(title.encode()) > 80:
            raise ValueError(f"a session title is at most 80 UTF-8 bytes: {title!r}")
        self._emit(
            "session/title",
            {"title": title, "messageSeqs": seqs, "source": source},
            time=self.clock.tick(0, 4),
        )
        self._titled = True

    def title(self, text: str) -> Self:
        """A user rename (pins the title; ``messageSeqs`` empty)."""
        self._write_title(text, [], {"kind": "user"})
        return self

    def prune_tool_result(self, seq: int, head_chars: int = 4096, tail_chars: int = 1024) -> Self:
        """§11: ``compaction/prune`` then a content-only ``tool/result`` rewrite of ``seq``."""
        if seq not in self._nodes or self._events[seq]["type"] != "tool/result":
            raise ValueError(f"seq {seq} is not a tool/result on the current surface")
        data = _clone(self._events[seq]["data"])
        block = data["message"]["content"][0]
        text = "".join(b["text"] for b in block["content"] if b.get("type") == "text")
        if len(text) <= head_chars + tail_chars:
            raise ValueError(
                f"tool result {seq} has {len(text)} characters, not more than head+tail "
                f"({head_chars}+{tail_chars}); nothing to prune"
            )
        tail = text[len(text) - tail_chars :] if tail_chars else ""
        block["content"] = [{"type": "text", "text": text[:head_chars] + PRUNE_MARKER + tail}]
        self._emit(
            "compaction/prune",
            {
                "shadowedRange": {"start": seq, "end": seq},
                "shadowedSeqs": [seq],
                "shadowedTokenCount": self._node_tokens(seq),
            },
            time=self.clock.tick(1, 5),
        )
        new = self._emit(
            "tool/result",
            data,
            time=self.clock.tick(0, 2),
            sources=[seq],
            op=self._replace_op(seq, seq),
        )
        self._replace_nodes([seq], new)
        return self

    def compact(self, keep_last: int, summary_text: str) -> Self:
        """§10 bracket: shadow the head of the surface (after the v3 system node) up to a
        tool-balanced cut that keeps at least the last ``keep_last`` nodes verbatim."""
        if keep_last < 0:
            raise ValueError("keep_last must be >= 0")
        if self._pending:
            raise ValueError("compaction runs between requests, not while tool calls are pending")
        nodes = self._nodes
        head = 0
        while head < len(nodes) and self._events[nodes[head]]["type"] == "system/message":
            head += 1  # v3 anchors at the first non-system node
        cut = len(nodes) - keep_last
        while cut > head and self._balance(nodes[head:cut]) != 0:
            cut -= 1
        if cut <= head:
            raise ValueError(
                f"no tool-balanced range to compact before the last {keep_last} node(s)"
            )
        shadowed = nodes[head:cut]
        shadowed_tokens = sum(self._node_tokens(n) for n in shadowed)
        content = [
            {"type": "text", "text": f"{CHECKPOINT_PREAMBLE}\n\n<compacted-summary>"},
            {"type": "text", "text": summary_text},
            {"type": "text", "text": "</compacted-summary>"},
        ]
        if _est_blocks(content) + 4 >= shadowed_tokens:
            raise ValueError(
                "the checkpoint would not be smaller than the history it replaces "
                f"({_est_blocks(content) + 4} >= {shadowed_tokens} estimated tokens)"
            )
        cid = self._new_id()
        turn = self._turn if self._turn_open else None
        start = self._emit(
            "compaction/start", {"compactionId": cid, "turn": turn}, time=self.clock.tick(1, 6)
        )
        summary = [{"type": "text", "text": summary_text}]
        instruction = 420  # the fixed compaction instruction, estimated
        t_summary = self.clock.advance(self.clock.jitter(4_000, 14_000))
        summary_seq = self._emit(
            "compaction/summary",
            {
                "compactionId": cid,
                "summary": summary,
                "rawOutput": _clone(summary),
                "llmStreamCall": True,
                "shadowedRange": {"start": shadowed[0], "end": shadowed[-1]},
                "shadowedSeqs": list(shadowed),
                "shadowedTokenCount": shadowed_tokens,
                "provider": self.provider,
                "model": self.model,
                "maxTokens": _SUMMARY_MAX_TOKENS,
                "usage": {
                    "inputTokens": _est_tools(self.tools) + shadowed_tokens + instruction,
                    "outputTokens": _est_blocks(summary),
                },
            },
            time=t_summary,
        )
        repl = self._emit(
            "user/message",
            {
                "content": content,
                "source": {"kind": "plugin", "plugin": "compact", "compactionId": cid},
                "role": "user",
                "id": self._new_id(),
            },
            time=t_summary,
            sources=[start, summary_seq, *shadowed],
            op=self._replace_op(shadowed[0], shadowed[-1]),
        )
        self._replace_nodes(shadowed, repl)
        self._emit(
            "compaction/end", {"compactionId": cid, "turn": turn}, time=self.clock.tick(1, 6)
        )
        return self

    def _balance(self, nodes: list[int]) -> int:
        """#tool-call blocks in assistant messages minus #tool/results (§8 pairing)."""
        count = 0
        for n in nodes:
            ev = self._events[n]
            if ev["type"] == "assistant/message":
                count += sum(
                    1 for b in ev["data"]["message"]["content"] if b.get("type") == "tool-call"
                )
            elif ev["type"] == "tool/result":
                count -= 1
        return count

    # --- children ----------------------------------------------------------------------------

    def _child_id(self, kind: str) -> str:
        self._children += 1
        return str(uuid.uuid5(_ID_NAMESPACE, f"{self.session_id}/{kind}/{self._children}"))

    def _child(self, **kw: Any) -> LogBuilder:
        return LogBuilder(
            self.version,
            cwd=self.cwd,
            parent=self.session_id,
            tools=self.tools,
            provider=self.provider,
            model=self.model,
            context_window=self.context_window,
            reasoning_effort=self.reasoning_effort,
            **kw,
        )

    def fork(
        self,
        at_seq: int | None = None,
        child_id: str | None = None,
        *,
        created_at: int | None = None,
    ) -> LogBuilder:
        """A seeded child (§12): events ``0..at_seq`` copied verbatim, then the seed marker.

        ``at_seq`` (default: the last event) must end outside an open turn. v2+ children get
        ``isSeeded: true`` and ``session/end-seed {inherited: true}``; v0/v1 children get
        ``seedLength`` and ``session/end-seed {}``.
        """
        end = self.last_seq if at_seq is None else at_seq
        if not 0 <= end <= self.last_seq:
            raise ValueError(f"fork boundary {end} is outside this log (0..{self.last_seq})")
        prefix: list[JsonDict] = _clone(self._events[: end + 1])
        index = replay_log(prefix, self.version)
        if index.open_turn is not None:
            raise ValueError(f"fork boundary {end} is inside open turn {index.open_turn}")
        starts = sum(1 for e in prefix if e["type"] == "compaction/start")
        ends = sum(1 for e in prefix if e["type"] == "compaction/end")
        if starts != ends:
            raise ValueError(f"fork boundary {end} is inside a compaction bracket")
        when = (
            created_at
            if created_at is not None
            else self.clock.now + self.clock.jitter(2_000, 20_000)
        )
        child = self._child(
            session_id=child_id or self._child_id("fork"),
            created_at=when,
            origin=self.origin,
            delegation_depth=self.delegation_depth,
            agent_preset=self.agent_preset,
            system=self._system_text,
            runtime_context=None,  # the inherited prefix already carries the snapshot
        )
        child._seed_from(prefix, index)
        return child

    def _seed_from(self, prefix: list[JsonDict], index: LogIndex) -> None:
        self._events = prefix
        self._seed_length = len(prefix)
        self._turn = index.last_turn
        self._turn_ends = {t.turn: t.end_seq for t in index.turns if t.end_seq is not None}
        self._nodes = index.surface.nodes()
        self._titled = index.title_seq is not None
        self._context_sent = bool(index.context_seqs)
        if index.header_seqs:
            hdr = prefix[index.header_seqs[-1]]["data"]["header"]
            self.tools = _clone(hdr.get("tools", []))
            self._header_reason = "resume"  # a new live session announces its envelope
            if self.version < 3:
                self._system_sent = hdr.get("system")
        if self.version >= 3 and self._nodes:
            head = prefix[self._nodes[0]]
            if head["type"] == "system/message":
                self._system_sent = "".join(
                    b["text"] for b in head["data"]["message"]["content"] if b["type"] == "text"
                )
        self._system_text = self._system_sent or self._system_text
        self.clock.advance_to(max(e["time"] for e in prefix))
        self.clock.advance_to(self.created_at)
        marker: JsonDict = {"inherited": True} if self.version >= 2 else {}
        self._emit("session/end-seed", marker, time=self.created_at)

    def subagent(
        self,
        label: str,
        child_id: str | None = None,
        *,
        created_at: int | None = None,
        system: str | None = None,
        tools: Sequence[JsonDict] | None = None,
    ) -> LogBuilder:
        """A spawned subagent child (§12): unseeded, ``origin: 'subagent'``, depth + 1.

        The child starts with a delegation ``sandbox/mode`` seed and its first turn carries
        ``subagent/descriptor`` (version 2, one-shot) before the first request.
        """
        when = created_at if created_at is not None else self.clock.now + self.clock.jitter(20, 200)
        child = self._child(
            session_id=child_id or self._child_id("subagent"),
            created_at=when,
            origin="subagent",
            delegation_depth=self.delegation_depth + 1,
            system=system if system is not None else self._system_text,
        )
        if tools is not None:
            child.tools = _clone(list(tools))
        child._emit(
            "sandbox/mode",
            {"mode": "danger-full-access", "source": "delegation"},
            time=child.clock.tick(1, 5),
        )
        child._descriptor = {"version": 2, "mode": "one-shot", "provider": "fork", "label": label}
        return child
