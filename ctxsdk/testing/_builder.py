"""Build valid DSH session logs in code, deterministically (spec §3-§12).

``LogBuilder`` appends raw events (plain dicts in the harness's key order
``type, seq, time, data, sourceEventSeqs, surfaceOp``) through a small fluent API::

    b = LogBuilder(session_id="s-1", cwd="/home/dev/app")
    b.turn("Run the tests").assistant(reasoning="...", tool_calls=[("bash", {"command": "pytest"})])
    b.tool_results(["3 passed in 0.12s"]).next_step().assistant(text="All green.").end_turn()
    b.write(b.canonical_path(root))

The events are written by the one ``EventWriter`` of ``ctxsdk.session`` (envelope, seqs,
turns and steps, surface nodes); the builder adds what a test log needs on top of it: ids
from ``uuid5(session id, counter)``, times from a seeded ``Clock``, model streams, usage
with a prefix-cache share, compaction, pruning, forks and subagents. The same calls always
give the same bytes. Version 3 is the primary shape; versions 0-2 are supported too (v0/v1:
top-level ``assistant/chunk`` events cited by the assistant message, ``seedLength``; v2:
embedded streams, ``isSeeded``; v0-v2: ``request/header.header.system``). Every log is
checked with ``replay_log`` before it is written.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any, Self

from ctxsdk.session.kernel import (
    PRUNE_MARKER,
    SYSTEM_PROMPT_PLUGIN,
    Compression,
    EventWriter,
    LogIndex,
    checkpoint_content,
    encode_segment,
    estimate_block,
    estimate_message,
    estimate_system,
    estimate_text,
    estimate_tools,
    fallback_title,
    project_key,
    replay_log,
    system_prompt_message,
    validate_header,
    write_new,
)

from ..errors import InvalidArgument, NotFound, SurfaceError
from ._clock import Clock
from ._defaults import (
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_CREATED_AT,
    DEFAULT_RUNTIME_SECTIONS,
    DEFAULT_SYSTEM_PROMPT,
    DEFAULT_TOOLS,
    MODEL,
    PROVIDER,
    RUNTIME_CONTEXT_HEAD,
    SUMMARY_MAX_TOKENS,
    TOOL_MS,
)
from ._ids import Ids, session_id_for
from ._streams import clone, stream_records

__all__ = ["LogBuilder", "ToolOutput"]

JsonDict = dict[str, Any]

_CACHE_BLOCK = 64  # the provider's prefix cache counts whole blocks of 64 tokens


def _reason(value: str | Mapping[str, Any]) -> JsonDict:
    return {"kind": value} if isinstance(value, str) else dict(value)


def _cached(tokens: int) -> int:
    return tokens // _CACHE_BLOCK * _CACHE_BLOCK


def _check_compression(compression: str) -> None:
    if compression not in ("zstd", "none"):
        raise InvalidArgument(f"compression is 'zstd' or 'none', not {compression!r}")


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


class LogBuilder:
    """Append valid raw DSH events with deterministic ids and times; methods chain.

    A turn is ``turn() -> assistant() [-> tool_results() -> next_step() -> assistant() ...]
    -> end_turn()``. ``compact``, ``prune_tool_result`` and ``title`` may be called between
    those. ``fork`` and ``subagent`` return new builders for child sessions (§12). A call
    out of order or with a value the format cannot hold raises ``InvalidArgument``; a
    surface edit the harness would refuse raises ``SurfaceError`` (both are ``ValueError``).
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
            raise InvalidArgument(f"LogBuilder writes format versions 0-3, not {version!r}")
        if origin not in (None, "subagent"):
            raise InvalidArgument(f"header origin can only be 'subagent', not {origin!r}")
        if created_at < 0 or delegation_depth < 0:
            raise InvalidArgument("created_at and delegation_depth must be non-negative")
        self.version = version
        self.session_id = session_id or session_id_for(created_at, cwd, parent)
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
        self.tools: list[JsonDict] = clone(list(DEFAULT_TOOLS if tools is None else tools))
        self._seed_length: int | None = None  # set on fork children
        # Envelope, seqs, turn/step and the surface nodes: the one event writer.
        self._w = EventWriter(version, clock=self.clock.tick)
        self._rng = random.Random(f"ctxsdk-builder:{self.session_id}")
        self._ids = Ids(self.session_id)
        self._step_answered = False
        self._pending: list[_Call] = []
        self._last_calls: list[str] = []
        self._result_seqs: dict[str, int] = {}
        self._turn_ends: dict[int, int] = {}
        self._tokens: dict[int, int] = {}  # node seq -> its estimate (a message never changes)
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
        return self._w.log()

    @property
    def now(self) -> int:
        return self.clock.now

    @property
    def last_seq(self) -> int:
        return self._w.next_seq - 1

    @property
    def surface(self) -> list[int]:
        """The current surface node seqs in model order."""
        return list(self._w.nodes)

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
        return self._w.turn

    def result_seq(self, call_id: str) -> int:
        """The seq of the ``tool/result`` that answered ``call_id``."""
        try:
            return self._result_seqs[call_id]
        except KeyError:
            raise NotFound(
                f"tool call {call_id!r} has no result in this log; see last_call_ids"
            ) from None

    def turn_end_seq(self, turn: int) -> int:
        """The seq of ``turn/end`` of a closed turn (a fork boundary)."""
        try:
            return self._turn_ends[turn]
        except KeyError:
            raise InvalidArgument(f"turn {turn} is not closed in this log") from None

    def canonical_path(self, root: str | Path, compression: Compression = "zstd") -> Path:
        """``<root>/<projectKey(cwd)>/<encodeSegment(id)>/session[.vN].jsonl[.zstd]`` (§1)."""
        _check_compression(compression)
        try:
            project, segment = project_key(self.cwd), encode_segment(self.session_id)
        except ValueError as exc:  # an empty cwd or session id has no place in a DSH home
            raise InvalidArgument(f"no canonical path for this log: {exc}") from None
        gen = "" if self.version == 0 else f".v{self.version}"
        suffix = ".zstd" if compression == "zstd" else ""
        return Path(root) / project / segment / f"session{gen}.jsonl{suffix}"

    def validate(self) -> LogIndex:
        """Check the header and replay every event as the harness would (raises on any defect)."""
        validate_header(self.header, expected_version=self.version)
        return replay_log(self._w.log(), self.version)

    def write(
        self,
        path: str | Path,
        compression: Compression = "zstd",
        *,
        batch_size: int = 16,
        overwrite: bool = False,
    ) -> Path:
        """Validate, then write a new log file: header frame, then one frame per batch."""
        _check_compression(compression)
        if batch_size < 1:
            raise InvalidArgument(f"batch_size must be at least 1, not {batch_size!r}")
        self.validate()
        return write_new(
            path,
            self.header,
            self._w.log(),
            compression=compression,
            batch_size=batch_size,
            overwrite=overwrite,
        )

    # --- token estimates and the prefix cache ------------------------------------------------

    def _tools_tokens(self) -> int:
        return estimate_tools(self.tools) if self.tools else 0

    def _node_tokens(self, seq: int) -> int:
        tokens = self._tokens.get(seq)
        if tokens is None:
            tokens = self._tokens[seq] = estimate_message(self._w.message_of(seq))
        return tokens

    def _prompt_tokens(self) -> int:
        total = self._tools_tokens() + sum(self._node_tokens(n) for n in self._w.nodes)
        if self.version < 3 and self._system_sent:
            total += estimate_system(self._system_sent)
        return total

    def _cache_cut(self, i: int) -> None:
        """The surface changed at node ``i``: the provider's prefix cache now ends there."""
        cap = self._cache_tokens
        prefix = self._tools_tokens()
        for seq in islice(self._w.nodes, i):
            if _cached(prefix) >= cap:
                return  # the prefix before node i still covers the whole cache
            prefix += self._node_tokens(seq)
        self._cache_tokens = min(cap, _cached(prefix))

    def _need_turn(self, what: str) -> None:
        if not self._w.turn_open:
            raise InvalidArgument(f"{what} needs an open turn; call .turn(prompt) first")

    def _need_step(self, what: str) -> None:
        if not self._w.step_open:
            raise InvalidArgument(f"{what} needs an open step")

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
        w = self._w
        if w.turn_open:
            raise InvalidArgument(f"turn {w.turn} is still open; call .end_turn() first")
        if w.turn:
            self.clock.tick(6_000, 45_000)  # the user reads the answer and types
        if system is not None:
            # v3 writes the change as a node-0 replacement; v0-v2 as a header with reason change.
            self._system_text = system
        w.start_turn(time=self.clock.tick(2, 30))
        self._open_step()
        self._prompt_seq = prompt_seq = w.emit(
            "user/message",
            {
                "content": [{"type": "text", "text": prompt}],
                "source": {"kind": "user"},
                "role": "user",
                "id": self._ids.new(),
            },
            time=self.clock.tick(0, 3),
            op="append",
        )
        if self._runtime_context is not None:
            sections = [{"name": n, "text": t} for n, t in self._runtime_context]
            text = "\n\n".join([RUNTIME_CONTEXT_HEAD, *(t for _, t in self._runtime_context)])
            w.emit(
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
                    "id": self._ids.new(),
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
            w.emit("subagent/descriptor", self._descriptor, time=self.clock.tick(1, 8))
            self._descriptor = None
        self._request_envelope()
        return self

    def _open_step(self) -> None:
        self._step_answered = False
        self._w.start_step(time=self.clock.tick(1, 12))
        if self.version >= 3 and self._system_sent != self._system_text:
            self._system_message()

    def _system_message(self) -> None:
        """v3 node 0: append it on the first step, replace it 1:1 when the prompt changes."""
        text = self._system_text
        content = [{"type": "text", "text": text}] if text else []
        message = system_prompt_message(self._ids.new(), content)
        replaces = bool(self._w.nodes)
        self._w.system_message(message, time=self.clock.tick(0, 3))
        if replaces:
            self._cache_cut(0)
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
                header["tools"] = clone(self.tools)
            self._w.emit(
                "request/header",
                {"header": header, "reason": self._header_reason},
                time=self.clock.tick(1, 6),
            )
            self._header_reason = None
        if not self._context_sent:
            self._w.emit(
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
        self._open_step()
        self._request_envelope()
        return self

    def _close_step(self) -> None:
        if self._pending:
            ids = ", ".join(c.call_id for c in self._pending)
            raise InvalidArgument(
                f"step {self._w.step} still has unanswered tool calls: {ids}; "
                "call .tool_results(...) first"
            )
        self._w.end_step(time=self.clock.tick(1, 9))

    def end_turn(self, reason: str | Mapping[str, Any] = "completed") -> Self:
        """Close the open step (if any) and the turn; ``reason`` is a kind or a full reason."""
        self._need_turn("end_turn()")
        if self._w.step_open:
            self._close_step()
        seq = self._w.end_turn(_reason(reason), time=self.clock.tick(1, 9))
        self._turn_ends[self._w.turn] = seq
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
        w = self._w
        if self._step_answered:
            raise InvalidArgument(f"step {w.step} already has its assistant message")
        blocks: list[tuple[str, JsonDict]] = []
        if reasoning:
            blocks.append(("reasoning", {"type": "reasoning", "text": reasoning}))
        if text:
            blocks.append(("text", {"type": "text", "text": text}))
        calls: list[_Call] = []
        for i, tool_call in enumerate(tool_calls or ()):
            if not (isinstance(tool_call, tuple | list) and len(tool_call) == 2):
                raise InvalidArgument(
                    f"tool call {i} must be a (name, arguments) pair, not {tool_call!r}"
                )
            name, args = tool_call
            # DeepSeek emits Python-style spacing: {"command": "ls", "description": "..."}
            raw = args if isinstance(args, str) else json.dumps(dict(args), ensure_ascii=False)
            call = _Call(self._ids.call(i), name, raw)
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
        records, t_end = stream_records(
            blocks, dict(usage), fin, rng=self._rng, clock=self.clock, expand=self.version < 2
        )
        message = {
            "role": "assistant",
            "content": content,
            "source": {"kind": "model", "provider": self.provider, "model": self.model},
            "id": self._ids.new(),
        }
        data: JsonDict = {"turn": w.turn, "step": w.step, "message": message}
        if self.version >= 2:
            data["stream"] = records
            data["usage"] = dict(usage)
            w.emit("assistant/message", data, time=t_end, op="append")
        else:
            chunk_seqs = [
                w.emit(
                    "assistant/chunk",
                    {"turn": w.turn, "step": w.step, "chunk": rec["chunk"]},
                    time=rec["time"],
                )
                for rec in records
            ]
            data["usage"] = dict(usage)
            w.emit("assistant/message", data, time=t_end, sources=chunk_seqs, op="append")
        self._step_answered = True
        self._pending = calls
        self._last_calls = [c.call_id for c in calls]
        return self

    def _auto_usage(self, content: list[JsonDict], reasoning: str | None) -> JsonDict:
        prompt = self._prompt_tokens()
        cached = min(self._cache_tokens, prompt)
        usage: JsonDict = {
            "inputTokens": prompt - cached,
            "outputTokens": max(1, sum(estimate_block(b) for b in content)),
            "cacheReadTokens": cached,
        }
        if reasoning:
            usage["reasoningTokens"] = estimate_text(reasoning)
        self._cache_tokens = _cached(prompt)
        return usage

    def tool_results(self, results: Sequence[str | ToolOutput]) -> Self:
        """Answer every pending call of the step, in call order: ``tool/call`` then
        ``tool/result`` for each (a ``str`` is a successful text result)."""
        self._need_step("tool_results()")
        w = self._w
        if len(results) != len(self._pending):
            raise InvalidArgument(
                f"{len(self._pending)} tool call(s) are pending but {len(results)} result(s) "
                "were given"
            )
        for call, res in zip(self._pending, results, strict=True):
            out = ToolOutput(res) if isinstance(res, str) else res
            if out.reason is not None and not (out.is_error or out.error):
                raise InvalidArgument("a tool result reason is allowed only on an error result")
            call_seq = w.emit(
                "tool/call",
                {
                    "turn": w.turn,
                    "step": w.step,
                    "callId": call.call_id,
                    "name": call.name,
                    "arguments": call.arguments,
                },
                time=self.clock.tick(1, 15),
            )
            lo, hi = TOOL_MS.get(call.name, (200, 2000))
            took = out.duration_ms if out.duration_ms is not None else self.clock.jitter(lo, hi)
            data: JsonDict = {
                "turn": w.turn,
                "step": w.step,
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
                    "id": self._ids.new(),
                },
            }
            if out.error is not None:
                err: JsonDict = {"name": out.error[0], "code": out.error[1]}
                if out.reason is not None and self.version >= 3:
                    err["reason"] = out.reason
                data["error"] = err
            if out.meta is not None:
                data["meta"] = clone(out.meta)
            seq = w.emit(
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
            raise InvalidArgument(f"a session title is at most 80 UTF-8 bytes: {title!r}")
        self._w.emit(
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
        if head_chars < 0 or tail_chars < 0:
            raise InvalidArgument("head_chars and tail_chars must be >= 0")
        w = self._w
        try:
            i = w.nodes.index(seq)
        except ValueError:
            i = -1
        if i < 0 or w.event(seq)["type"] != "tool/result":
            raise SurfaceError(f"seq {seq} is not a tool/result on the current surface")
        if not w.turn_open:
            raise SurfaceError(
                "the pruner rewrites a tool result inside a turn (before a request); the "
                "harness refuses a tool/result replacement outside an open turn: call .turn()"
            )
        data = clone(w.event(seq)["data"])
        block = data["message"]["content"][0]
        text = "".join(b["text"] for b in block["content"] if b.get("type") == "text")
        if len(text) <= head_chars + tail_chars:
            raise InvalidArgument(
                f"tool result {seq} has {len(text)} characters, not more than head+tail "
                f"({head_chars}+{tail_chars}); nothing to prune"
            )
        tail = text[len(text) - tail_chars :] if tail_chars else ""
        block["content"] = [{"type": "text", "text": text[:head_chars] + PRUNE_MARKER + tail}]
        w.emit(
            "compaction/prune",
            {
                "shadowedRange": {"start": seq, "end": seq},
                "shadowedSeqs": [seq],
                "shadowedTokenCount": self._node_tokens(seq),
            },
            time=self.clock.tick(1, 5),
        )
        w.replace("tool/result", data, [seq], time=self.clock.tick(0, 2))
        self._cache_cut(i)
        return self

    def compact(self, keep_last: int, summary_text: str) -> Self:
        """§10 bracket: shadow the head of the surface (after the v3 system node) up to a
        tool-balanced cut that keeps at least the last ``keep_last`` nodes verbatim."""
        if keep_last < 0:
            raise InvalidArgument("keep_last must be >= 0")
        if self._pending:
            raise InvalidArgument(
                "compaction runs between requests, not while tool calls are pending"
            )
        w = self._w
        nodes = w.nodes
        head = w.system_head()  # v3 anchors at the first non-system node
        cut = len(nodes) - keep_last
        while cut > head and self._balance(nodes[head:cut]) != 0:
            cut -= 1
        if cut <= head:
            raise SurfaceError(
                f"no tool-balanced range to compact before the last {keep_last} node(s)"
            )
        shadowed = nodes[head:cut]
        shadowed_tokens = sum(self._node_tokens(n) for n in shadowed)
        content = checkpoint_content(summary_text)
        checkpoint_tokens = estimate_message({"content": content})
        if checkpoint_tokens >= shadowed_tokens:
            raise SurfaceError(
                "the checkpoint would not be smaller than the history it replaces "
                f"({checkpoint_tokens} >= {shadowed_tokens} estimated tokens)"
            )
        cid = self._ids.new()
        turn = w.turn if w.turn_open else None
        start = w.emit(
            "compaction/start", {"compactionId": cid, "turn": turn}, time=self.clock.tick(1, 6)
        )
        summary = [{"type": "text", "text": summary_text}]
        instruction = 420  # the fixed compaction instruction, estimated
        t_summary = self.clock.advance(self.clock.jitter(4_000, 14_000))
        summary_seq = w.emit(
            "compaction/summary",
            {
                "compactionId": cid,
                "summary": summary,
                "rawOutput": clone(summary),
                "llmStreamCall": True,
                "shadowedRange": {"start": shadowed[0], "end": shadowed[-1]},
                "shadowedSeqs": list(shadowed),
                "shadowedTokenCount": shadowed_tokens,
                "provider": self.provider,
                "model": self.model,
                "maxTokens": SUMMARY_MAX_TOKENS,
                "usage": {
                    "inputTokens": self._tools_tokens() + shadowed_tokens + instruction,
                    "outputTokens": sum(estimate_block(b) for b in summary),
                },
            },
            time=t_summary,
        )
        w.replace(
            "user/message",
            {
                "content": content,
                "source": {"kind": "plugin", "plugin": "compact", "compactionId": cid},
                "role": "user",
                "id": self._ids.new(),
            },
            shadowed,
            time=t_summary,
            sources=[start, summary_seq, *shadowed],
        )
        self._cache_cut(head)
        w.emit("compaction/end", {"compactionId": cid, "turn": turn}, time=self.clock.tick(1, 6))
        return self

    def _balance(self, nodes: list[int]) -> int:
        """#tool-call blocks in assistant messages minus #tool/results (§8 pairing)."""
        count = 0
        for n in nodes:
            ev = self._w.event(n)
            if ev["type"] == "assistant/message":
                count += sum(
                    1 for b in ev["data"]["message"]["content"] if b.get("type") == "tool-call"
                )
            elif ev["type"] == "tool/result":
                count -= 1
        return count

    # --- children ----------------------------------------------------------------------------

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
            raise SurfaceError(f"fork boundary {end} is outside this log (0..{self.last_seq})")
        prefix: list[JsonDict] = clone(self._w.log()[: end + 1])
        index = replay_log(prefix, self.version)
        if index.open_turn is not None:
            raise SurfaceError(f"fork boundary {end} is inside open turn {index.open_turn}")
        starts = sum(1 for e in prefix if e["type"] == "compaction/start")
        ends = sum(1 for e in prefix if e["type"] == "compaction/end")
        if starts != ends:
            raise SurfaceError(f"fork boundary {end} is inside a compaction bracket")
        when = (
            created_at
            if created_at is not None
            else self.clock.now + self.clock.jitter(2_000, 20_000)
        )
        child = self._child(
            session_id=child_id or self._ids.child("fork"),
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
        # The child's writer continues the inherited prefix: its seqs, surface and turns.
        self._w = EventWriter(
            self.version,
            clock=self.clock.tick,
            base=prefix,
            nodes=index.surface.nodes(),
            turn=index.last_turn,
        )
        self._seed_length = len(prefix)
        self._turn_ends = {t.turn: t.end_seq for t in index.turns if t.end_seq is not None}
        self._titled = index.title_seq is not None
        self._context_sent = bool(index.context_seqs)
        if index.header_seqs:
            hdr = prefix[index.header_seqs[-1]]["data"]["header"]
            self.tools = clone(hdr.get("tools", []))
            self._header_reason = "resume"  # a new live session announces its envelope
            if self.version < 3:
                self._system_sent = hdr.get("system")
        nodes = self._w.nodes
        if self.version >= 3 and nodes:
            head = prefix[nodes[0]]
            if head["type"] == "system/message":
                self._system_sent = "".join(
                    b["text"] for b in head["data"]["message"]["content"] if b["type"] == "text"
                )
        self._system_text = self._system_sent or self._system_text
        self.clock.advance_to(max(e["time"] for e in prefix))
        self.clock.advance_to(self.created_at)
        marker: JsonDict = {"inherited": True} if self.version >= 2 else {}
        self._w.emit("session/end-seed", marker, time=self.created_at)

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
            session_id=child_id or self._ids.child("subagent"),
            created_at=when,
            origin="subagent",
            delegation_depth=self.delegation_depth + 1,
            system=system if system is not None else self._system_text,
        )
        if tools is not None:
            child.tools = clone(list(tools))
        child._w.emit(
            "sandbox/mode",
            {"mode": "danger-full-access", "source": "delegation"},
            time=child.clock.tick(1, 5),
        )
        child._descriptor = {"version": 2, "mode": "one-shot", "provider": "fork", "label": label}
        return child
