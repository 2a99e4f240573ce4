"""Typed models of DSH session events, messages and content blocks (pydantic v2).

The log's raw JSON objects stay the source of truth (so a save writes back exactly the keys
that were read); these models are the typed view of them. Field names are snake_case with the
log's camelCase names as aliases; unknown keys are kept (``extra="allow"``) so newer harness
fields survive a round trip.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from .._display import Rendered, message_html
from ._text import gist, message_text

__all__ = [
    "AgentPresetSelectedData",
    "AssistantAttemptData",
    "AssistantChunkData",
    "AssistantMessageData",
    "CommandDoneData",
    "CompactionEndData",
    "CompactionPruneData",
    "CompactionStartData",
    "CompactionSummaryData",
    "ContentBlock",
    "EndSeedData",
    "Event",
    "FeedbackRecordData",
    "FileBlock",
    "ImageBlock",
    "InboxSplicedData",
    "LlmRetryData",
    "Message",
    "MessageSource",
    "PermissionPresetData",
    "PlanModeData",
    "ReasoningBlock",
    "RequestContextData",
    "RequestHeaderData",
    "SandboxModeData",
    "SessionHeader",
    "ShadowedRange",
    "StepData",
    "SubagentDescriptorData",
    "SystemMessageData",
    "TextBlock",
    "TitleData",
    "TitleLlmRequestData",
    "TodoItem",
    "TodoWriteData",
    "TokenUsage",
    "ToolCallBlock",
    "ToolCallData",
    "ToolResultBlock",
    "ToolResultData",
    "TurnEndData",
    "TurnStartData",
    "UnknownBlock",
    "event_types",
    "is_known_type",
    "parse_event",
    "parse_events",
    "strict_violation",
]


class _Model(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="allow", frozen=True)

    def to_json_dict(self) -> dict[str, Any]:
        """The log's JSON shape (camelCase keys, unset optionals omitted)."""
        return self.model_dump(by_alias=True, exclude_unset=True, mode="json")


# --- content blocks ------------------------------------------------------------------------


class TextBlock(_Model):
    type: Literal["text"] = "text"
    text: str


class ReasoningBlock(_Model):
    type: Literal["reasoning"] = "reasoning"
    text: str


class ImageBlock(_Model):
    type: Literal["image"] = "image"
    attachment: dict[str, Any]


class FileBlock(_Model):
    type: Literal["file"] = "file"


class ToolCallBlock(_Model):
    type: Literal["tool-call"] = "tool-call"
    id: str
    name: str
    arguments: str  # the raw JSON text the model produced


class ToolResultBlock(_Model):
    type: Literal["tool-result"] = "tool-result"
    tool_call_id: str = Field(alias="toolCallId")
    content: list[ContentBlock]
    is_error: bool | None = Field(default=None, alias="isError")

    @property
    def text(self) -> str:
        """The text blocks joined (``message_text``)."""
        return message_text(self)


_KNOWN_BLOCKS = frozenset({"text", "reasoning", "image", "file", "tool-call", "tool-result"})


class UnknownBlock(_Model):
    """A block type this reader does not know, kept verbatim."""

    type: str

    @field_validator("type")
    @classmethod
    def _not_a_known_type(cls, v: str) -> str:
        if v in _KNOWN_BLOCKS:  # a malformed known block must fail, not pass as unknown
            raise ValueError(f"malformed {v!r} block")
        return v


# Known block types dispatch on the "type" key inside pydantic-core; anything else falls
# through to UnknownBlock (left-to-right), so a newer harness's blocks survive.
ContentBlock = Annotated[
    Annotated[
        TextBlock | ReasoningBlock | ImageBlock | FileBlock | ToolCallBlock | ToolResultBlock,
        Field(discriminator="type"),
    ]
    | UnknownBlock,
    Field(union_mode="left_to_right"),
]
ToolResultBlock.model_rebuild()


# --- messages ------------------------------------------------------------------------------


class MessageSource(_Model):
    """Where a message came from: ``user``, ``model``, ``tool``, ``plugin`` and plugin kinds."""

    kind: str
    provider: str | None = None
    model: str | None = None
    call_id: str | None = Field(default=None, alias="callId")
    plugin: str | None = None
    form: str | None = None
    rpc_id: str | None = Field(default=None, alias="rpcId")  # a user prompt's client request
    client_time_zone: str | None = Field(default=None, alias="clientTimeZone")


class Message(Rendered, _Model):
    """One message as the model receives it; ids are stable forever."""

    id: str
    role: Literal["system", "user", "assistant"]
    content: list[ContentBlock]
    source: MessageSource

    @property
    def text(self) -> str:
        """The text blocks joined (what a chat transcript would show; ``message_text``)."""
        return message_text(self)

    @property
    def tool_calls(self) -> list[ToolCallBlock]:
        return [b for b in self.content if isinstance(b, ToolCallBlock)]

    @property
    def tool_results(self) -> list[ToolResultBlock]:
        return [b for b in self.content if isinstance(b, ToolResultBlock)]

    def __repr__(self) -> str:
        return f"Message({self.role}, {self.source.kind}, {gist(self, 60)!r})"

    def _text_(self) -> str:
        """The role and the whole message, for ``print(message)``: its text, each tool call
        as ``-> name(arguments)`` and each tool result's text; ``repr`` stays one short line."""
        parts = [message_text(self)]
        parts += [f"-> {c.name}({c.arguments})" for c in self.tool_calls]
        for r in self.tool_results:
            parts.append(("error: " if r.is_error else "result: ") + message_text(r))
        body = "\n".join(p for p in parts if p)
        return f"{self.role}: {body}" if body else f"{self.role}:"

    def _html_(self) -> str:
        return message_html(self)


class TokenUsage(_Model):
    input_tokens: int = Field(alias="inputTokens")
    output_tokens: int = Field(alias="outputTokens")
    cache_read_tokens: int | None = Field(default=None, alias="cacheReadTokens")
    cache_write_tokens: int | None = Field(default=None, alias="cacheWriteTokens")
    reasoning_tokens: int | None = Field(default=None, alias="reasoningTokens")


# --- header --------------------------------------------------------------------------------


class SessionHeader(_Model):
    """Line 1 of a session log."""

    type: Literal["session"] = "session"
    version: int
    id: str
    created_at: int = Field(alias="createdAt")
    cwd: str | None = None
    parent_session: str | None = Field(default=None, alias="parentSession")
    seed_length: int | None = Field(default=None, alias="seedLength")
    is_seeded: bool | None = Field(default=None, alias="isSeeded")
    origin: str | None = None
    delegation_depth: int = Field(alias="delegationDepth")
    agent_preset: str | None = Field(default=None, alias="agentPreset")

    @property
    def seeded(self) -> bool:
        return bool(self.is_seeded) or bool(self.seed_length)


# --- event data ----------------------------------------------------------------------------


class TurnStartData(_Model):
    turn: int


class TurnEndData(_Model):
    turn: int
    reason: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.reason.get("kind", ""))


class StepData(_Model):
    turn: int
    step: int


class AssistantMessageData(_Model):
    turn: int
    step: int
    message: Message
    usage: TokenUsage | None = None
    stream: list[dict[str, Any]] | None = None
    interrupted: bool | None = None


class AssistantChunkData(_Model):
    turn: int
    step: int
    chunk: dict[str, Any]


class AssistantAttemptData(_Model):
    turn: int
    step: int
    stream: list[dict[str, Any]]


class ToolCallData(_Model):
    turn: int
    step: int
    call_id: str = Field(alias="callId")
    name: str
    arguments: str


class ToolResultData(_Model):
    turn: int
    step: int
    message: Message
    error: dict[str, Any] | None = None
    meta: Any = None


class SystemMessageData(_Model):
    turn: int
    step: int
    message: Message


class RequestHeaderData(_Model):
    header: dict[str, Any]
    reason: str

    @property
    def provider(self) -> str | None:
        cfg = self.header.get("config") or {}
        return cfg.get("provider") if isinstance(cfg, dict) else None

    @property
    def model(self) -> str | None:
        cfg = self.header.get("config") or {}
        return cfg.get("model") if isinstance(cfg, dict) else None


class RequestContextData(_Model):
    provider: str
    model: str
    context_window: int | None = Field(default=None, alias="contextWindow")


class EndSeedData(_Model):
    inherited: bool | None = None


class TitleData(_Model):
    title: str
    message_seqs: list[int] | None = Field(default=None, alias="messageSeqs")
    source: dict[str, Any] | None = None


class SubagentDescriptorData(_Model):
    version: int
    mode: str
    provider: str | None = None
    label: str | None = None


class ShadowedRange(_Model):
    start: int
    end: int


class CompactionStartData(_Model):
    compaction_id: str = Field(alias="compactionId")
    turn: int | None = None


class CompactionSummaryData(_Model):
    compaction_id: str = Field(alias="compactionId")
    summary: list[ContentBlock]
    shadowed_range: ShadowedRange | None = Field(default=None, alias="shadowedRange")
    shadowed_seqs: list[int] | None = Field(default=None, alias="shadowedSeqs")
    shadowed_token_count: int | None = Field(default=None, alias="shadowedTokenCount")


class CompactionEndData(_Model):
    compaction_id: str = Field(alias="compactionId")
    turn: int | None = None
    error: str | None = None


class CompactionPruneData(_Model):
    shadowed_range: ShadowedRange = Field(alias="shadowedRange")
    shadowed_seqs: list[int] = Field(alias="shadowedSeqs")
    shadowed_token_count: int | None = Field(default=None, alias="shadowedTokenCount")


class InboxSplicedData(_Model):
    """``agent/inbox/spliced``: queued prompts moved into (or out of) the next turn."""

    target: str
    start: int
    removed_count: int | None = Field(default=None, alias="removedCount")
    inserted: list[Message] = Field(default_factory=list)
    outcome: str | None = None


class LlmRetryData(_Model):
    """``llm/retry``: a failed model call about to be retried."""

    retry_id: str | None = Field(default=None, alias="retryId")
    turn: int | None = None
    step: int | None = None
    provider: str | None = None
    mode: str | None = None
    policy_key: str | None = Field(default=None, alias="policyKey")
    retry: int | None = None
    max_retries: int | None = Field(default=None, alias="maxRetries")
    delay_ms: int | None = Field(default=None, alias="delayMs")
    failure: dict[str, Any] | None = None


class TodoItem(_Model):
    content: str
    status: str


class TodoWriteData(_Model):
    todos: list[TodoItem]


class SandboxModeData(_Model):
    mode: str
    source: str | None = None


class PermissionPresetData(_Model):
    preset: str


class PlanModeData(_Model):
    active: bool


class FeedbackRecordData(_Model):
    text: str


class AgentPresetSelectedData(_Model):
    agent_preset: str = Field(alias="agentPreset")


class TitleLlmRequestData(_Model):
    """``session/title-llm-request``: the call that produced a provider title."""

    title_provider: str | None = Field(default=None, alias="titleProvider")
    message_seqs: list[int] | None = Field(default=None, alias="messageSeqs")
    route: dict[str, Any] | None = None
    system: str | None = None
    messages: list[Any] | None = None
    max_tokens: int | None = Field(default=None, alias="maxTokens")


class CommandDoneData(_Model):
    source_event_seq: int | None = Field(default=None, alias="sourceEventSeq")


_DATA_MODELS: dict[str, type[BaseModel]] = {
    "turn/start": TurnStartData,
    "turn/end": TurnEndData,
    "step/start": StepData,
    "step/end": StepData,
    "user/message": Message,
    "assistant/message": AssistantMessageData,
    "assistant/chunk": AssistantChunkData,
    "assistant/attempt": AssistantAttemptData,
    "tool/call": ToolCallData,
    "tool/result": ToolResultData,
    "system/message": SystemMessageData,
    "request/header": RequestHeaderData,
    "request/context": RequestContextData,
    "session/end-seed": EndSeedData,
    "session/title": TitleData,
    "subagent/descriptor": SubagentDescriptorData,
    "compaction/start": CompactionStartData,
    "compaction/summary": CompactionSummaryData,
    "compaction/end": CompactionEndData,
    "compaction/prune": CompactionPruneData,
    "agent/inbox/spliced": InboxSplicedData,
    "llm/retry": LlmRetryData,
    "todo/write": TodoWriteData,
    "sandbox/mode": SandboxModeData,
    "permission/preset": PermissionPresetData,
    "plan/mode": PlanModeData,
    "feedback/record": FeedbackRecordData,
    "agent-preset/selected": AgentPresetSelectedData,
    "session/title-llm-request": TitleLlmRequestData,
    "command/done": CommandDoneData,
}


# The event vocabulary of each format generation, as the harness's released format packages
# list it (``RELEASED_V0_EVENT_TYPES`` / ``RELEASED_V2_EVENT_TYPES``; v3 adds the system head,
# the PTC renames and message feedback, and drops the code-mode names). A type outside its
# log's generation is unknown there: refused without ``ignorable: true``, skipped with it.
_RELEASED_V0_TYPES: frozenset[str] = frozenset(
    {
        "agent-preset/selected",
        "agent/inbox/spliced",
        "approval/asked",
        "approval/decided",
        "approval/policy",
        "assistant/chunk",
        "assistant/message",
        "command/done",
        "command/run",
        "compaction/end",
        "compaction/prune",
        "compaction/start",
        "compaction/summary",
        "feedback/record",
        "goal/change",
        "hook/invoked",
        "hook/result",
        "llm/retry",
        "llm/retry-started",
        "model/selection",
        "permission/preset",
        "plan/mode",
        "request/context",
        "request/header",
        "sandbox/mode",
        "schedule/change",
        "session-log-deepseek/delivery-accepted",
        "session/end-seed",
        "session/title",
        "session/title-llm-request",
        "step/end",
        "step/start",
        "subagent/descriptor",
        "subagent/model-selection-policy",
        "team/member",
        "team/message/delivered",
        "team/message/queued",
        "team/task",
        "todo/write",
        "tool-workflow/agent-end",
        "tool-workflow/agent-start",
        "tool-workflow/run-end",
        "tool-workflow/run-start",
        "tool/call",
        "tool/code-dispatch",
        "tool/code-dispatch-start",
        "tool/result",
        "turn/end",
        "turn/start",
        "user/message",
        "web/deepseek-search-llm-request",
    }
)
_RELEASED_V2_TYPES = (_RELEASED_V0_TYPES - {"assistant/chunk"}) | {"assistant/attempt"}
_V3_TYPES = (_RELEASED_V2_TYPES - {"tool/code-dispatch", "tool/code-dispatch-start"}) | {
    "system/message",
    "tool/ptc-dispatch",
    "tool/ptc-dispatch-start",
    "feedback/message-put",
    "feedback/message-delete",
}
_VOCABULARY: dict[int, frozenset[str]] = {
    0: _RELEASED_V0_TYPES,
    1: _RELEASED_V0_TYPES,
    2: _RELEASED_V2_TYPES,
    3: _V3_TYPES,
}


def event_types(version: int) -> frozenset[str]:
    """The event types a log of format ``version`` may hold without ``ignorable: true``."""
    return _VOCABULARY.get(version, _V3_TYPES)


def is_known_type(event_type: str, version: int | None = None) -> bool:
    """Whether ``event_type`` is in the vocabulary of ``version`` (of any version if None)."""
    if version is not None:
        return event_type in event_types(version)
    return any(event_type in vocab for vocab in _VOCABULARY.values())


class Event(_Model):
    """One event of the log: ``type``, ``seq``, ``time``, typed ``data`` and surface fields.

    ``data`` is the typed model for the event type (``Message`` for ``user/message``,
    ``ToolResultData`` for ``tool/result``, ...) or a plain dict for log-only types that
    ctxsdk keeps verbatim.
    """

    type: str
    seq: int
    time: int
    data: Any = None
    source_event_seqs: list[int] | None = Field(default=None, alias="sourceEventSeqs")
    surface_op: str | dict[str, Any] | None = Field(default=None, alias="surfaceOp")
    ignorable: bool | None = None

    @property
    def is_surface(self) -> bool:
        return self.surface_op is not None

    @property
    def is_replace(self) -> bool:
        return isinstance(self.surface_op, dict)

    @property
    def message(self) -> Message | None:
        """The message this event carries, if it is a surface event."""
        d = self.data
        if isinstance(d, Message):
            return d
        inner = getattr(d, "message", None)
        return inner if isinstance(inner, Message) else None

    def __repr__(self) -> str:
        op = ""
        if isinstance(self.surface_op, dict):
            s = self.surface_op.get("startSeq", self.surface_op.get("start"))
            e = self.surface_op.get("endSeq", self.surface_op.get("end"))
            op = f", replace {s}..{e}"
        elif self.surface_op == "append":
            op = ", append"
        return f"Event({self.seq}, {self.type!r}{op})"


_EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)
_DATA_ADAPTERS: dict[str, TypeAdapter[Any]] = {k: TypeAdapter(v) for k, v in _DATA_MODELS.items()}


def parse_event(raw: dict[str, Any]) -> Event:
    """The typed view of one decoded raw event (raises ``pydantic.ValidationError``)."""
    adapter = _DATA_ADAPTERS.get(raw["type"])
    data = raw.get("data")
    typed = adapter.validate_python(data) if adapter is not None else data
    sources = raw.get("sourceEventSeqs")
    if isinstance(sources, list) and any(isinstance(m, list) for m in sources):
        # the [start, end] runs of the stored encoding (checked by the replay), expanded
        expanded: list[Any] = []
        for m in sources:
            if isinstance(m, list) and len(m) == 2 and all(type(x) is int for x in m):
                expanded.extend(range(m[0], m[1] + 1))
            else:
                expanded.append(m)
        return Event.model_validate({**raw, "data": typed, "sourceEventSeqs": expanded})
    return Event.model_validate({**raw, "data": typed})


# Fields where the harness writes an explicit null (a manual ``/compact`` between turns).
_NULLABLE: frozenset[tuple[str, str]] = frozenset(
    {("compaction/start", "turn"), ("compaction/end", "turn"), ("compaction/summary", "turn")}
)
_NULL_DEFAULTS: dict[str, tuple[str, ...]] = {
    etype: tuple(
        f.alias or name
        for name, f in model.model_fields.items()
        if not f.is_required() and f.default is None and (etype, f.alias or name) not in _NULLABLE
    )
    for etype, model in _DATA_MODELS.items()
}


# The message source kinds the harness's v2 -> v3 migration classifies (``SOURCE_KINDS`` of
# ``dsh-session-format-v2-to-v3``); a v0-v2 message with another kind is refused on load by
# the current harness ("cannot safely transform unclassified message source"). A v3 log may
# carry other (producer-owned) kinds: the v3 reader admits them.
_MIGRATABLE_SOURCE_KINDS: frozenset[str] = frozenset(
    {
        "user",
        "plugin",
        "model",
        "tool",
        "agent-instructions",
        "session-reference",
        "team-message",
        "goal",
        "skill-invocation",
        "skill-catalog",
        "coordinator",
        "subagent-report",
        "subagent-settled",
        "webhook",
        "agent-message",
    }
)
_REQUEST_REASONS = ("initial", "resume", "change", "series")
_MAX_SAFE = 2**53 - 1


def _nested_null(model: BaseModel, path: str) -> str | None:
    """The path of the first optional field set to ``null`` inside ``model``'s nested models
    (content blocks, sources, usage, ...), or None. ``model``'s own fields are the caller's."""
    fields = type(model).model_fields
    for name in model.model_fields_set:
        info = fields.get(name)
        if info is None:  # a key the model does not know (kept verbatim, not checked)
            continue
        value = getattr(model, name)
        key = f"{path}.{info.alias or name}" if path else (info.alias or name)
        children = value if isinstance(value, list) else [value]
        for k, child in enumerate(children):
            if not isinstance(child, BaseModel):
                continue
            where = f"{key}.{k}" if isinstance(value, list) else key
            found = _null_field(child, where)
            if found is not None:
                return found
    return None


def _null_field(model: BaseModel, path: str) -> str | None:
    """The first optional field of ``model`` (or of a model inside it) that is ``null``."""
    fields = type(model).model_fields
    for name in model.model_fields_set:
        info = fields.get(name)
        if info is not None and getattr(model, name) is None and not info.is_required():
            return f"{path}.{info.alias or name}"
    return _nested_null(model, path)


def _is_count(v: Any, *, positive: bool = False) -> bool:
    return type(v) is int and (1 if positive else 0) <= v <= _MAX_SAFE


def _request_header_defect(data: dict[str, Any]) -> str | None:
    """What the harness's released payload validator refuses in a ``request/header`` that the
    lenient read lets through (``requestHeaderValue`` and the event's own fields)."""
    reason = data.get("reason")
    if reason not in _REQUEST_REASONS:
        return f"request/header reason must be one of {', '.join(_REQUEST_REASONS)}, not {reason!r}"
    if "startsSeries" in data and data["startsSeries"] is not True:
        return f"request/header startsSeries may only be true, not {data['startsSeries']!r}"
    header = data["header"]  # an object with a checked config: the lenient read saw to it
    config = header["config"]
    if "temperature" in config:
        t = config["temperature"]
        if type(t) not in (int, float) or not math.isfinite(t) or (t == 0 and str(t) == "-0.0"):
            return f"request/header config.temperature must be a finite number, not {t!r}"
    if "maxTokens" in config and not _is_count(config["maxTokens"], positive=True):
        return (
            "request/header config.maxTokens must be a positive integer, "
            f"not {config['maxTokens']!r}"
        )
    if "stop" in config and not (
        isinstance(config["stop"], list) and all(isinstance(x, str) for x in config["stop"])
    ):
        return f"request/header config.stop must be an array of strings, not {config['stop']!r}"
    # adapterDefaults: refused by the replay on every read, as the harness refuses it.
    if "system" in header and not isinstance(header["system"], str):
        return f"request/header system must be a string, not {header['system']!r}"
    if "tools" in header:
        tools = header["tools"]
        if not isinstance(tools, list):
            return f"request/header tools must be an array, not {tools!r}"
        for k, tool in enumerate(tools):
            if not (
                isinstance(tool, dict)
                and isinstance(tool.get("name"), str)
                and tool["name"]
                and isinstance(tool.get("description"), str)
                and isinstance(tool.get("parameters"), dict)
            ):
                return (
                    f"request/header tools[{k}] must have a non-empty name, a description "
                    "string and a parameters object"
                )
    return None


# ``TurnEndReason`` of the harness's session types (``packages/core/session/src/types.ts``)
# and the shapes its released payload validator gives each arm (``turnEndReasonValue``,
# ``llmFailureValue``): a kind outside these is one no harness writes.
_TURN_END_PLAIN = ("completed", "blocked", "max-tokens", "interrupted")
_ABORT_CAUSES = ("user", "parent", "disposed", "legacy")
_LLM_FAILURE_KEYS = ("message", "code", "status", "providerRetryAfterMs", "requestId")
_TURN_END_SET = (
    "the harness's turn/end reasons are completed, blocked, max-tokens, interrupted, "
    "aborted {reason: user | parent | disposed | legacy | hook {reason}} and "
    "error {error: {message, code, status?, providerRetryAfterMs?, requestId?}}"
)


def _extra_keys(value: dict[str, Any], allowed: tuple[str, ...]) -> str | None:
    extra = sorted(k for k in value if k not in allowed)
    return f"unexpected member(s) {', '.join(map(repr, extra))}" if extra else None


def _llm_failure_defect(failure: Any) -> str | None:
    if not isinstance(failure, dict):
        return f"must be an object, not {failure!r}"
    extra = _extra_keys(failure, _LLM_FAILURE_KEYS)
    if extra is not None:
        return f"has {extra}"
    for key in ("message", "code"):
        if not (isinstance(failure.get(key), str) and failure[key]):
            return f"{key} must be a non-empty string, not {failure.get(key)!r}"
    if "status" in failure and not (
        type(failure["status"]) is int and 100 <= failure["status"] <= 599
    ):
        return f"status must be an HTTP status 100 through 599, not {failure['status']!r}"
    if "providerRetryAfterMs" in failure:
        ms = failure["providerRetryAfterMs"]
        if type(ms) not in (int, float) or not math.isfinite(ms) or ms <= 0:
            return f"providerRetryAfterMs must be a positive number, not {ms!r}"
    if "requestId" in failure and not (
        isinstance(failure["requestId"], str) and failure["requestId"]
    ):
        return f"requestId must be a non-empty string, not {failure['requestId']!r}"
    return None


def _turn_end_defect(reason: Any) -> str | None:
    """What is wrong with a ``turn/end`` reason the harness's types do not have (the replay
    has checked it is an object with a string ``kind``), or None."""
    kind = reason.get("kind")
    what: str | None
    if kind in _TURN_END_PLAIN:
        what = _extra_keys(reason, ("kind",))
        what = f"{kind} has {what}" if what else None
    elif kind == "aborted":
        cause = reason.get("reason")
        what = _extra_keys(reason, ("kind", "reason"))
        if what is not None:
            what = f"aborted has {what}"
        elif not isinstance(cause, dict):
            what = f"aborted needs its reason object (the cause), not {cause!r}"
        elif cause.get("kind") == "hook":
            extra = _extra_keys(cause, ("kind", "reason"))
            if extra is not None:
                what = f"aborted by a hook has {extra}"
            elif not isinstance(cause.get("reason"), str):
                what = f"aborted by a hook needs a reason string, not {cause.get('reason')!r}"
        elif cause.get("kind") not in _ABORT_CAUSES:
            what = f"aborted cause kind {cause.get('kind')!r} is not one the harness writes"
        else:
            extra = _extra_keys(cause, ("kind",))
            what = f"aborted cause has {extra}" if extra else None
    elif kind == "error":
        what = _extra_keys(reason, ("kind", "error"))
        if what is not None:
            what = f"error has {what}"
        elif "error" not in reason:
            what = "error needs its error object (the LLM failure)"
        else:
            failure = _llm_failure_defect(reason["error"])
            what = f"error's error {failure}" if failure else None
    else:
        what = f"kind {kind!r} is not one the harness writes"
    return None if what is None else f"turn/end reason {what} (strict); {_TURN_END_SET}"


def _messages_of(etype: str, data: dict[str, Any]) -> list[Any]:
    """The raw messages one event's data carries (for the source-kind rule)."""
    if etype == "user/message":
        return [data]
    if etype in ("assistant/message", "tool/result", "system/message"):
        return [data.get("message")]
    if etype == "agent/inbox/spliced":
        return list(data.get("inserted") or [])
    if etype == "session/title-llm-request":
        return list(data.get("messages") or [])
    return []


def strict_violation(events: list[dict[str, Any]], version: int = 3) -> tuple[int, str] | None:
    """The first semantic defect the harness refuses that the lenient read lets through, as
    ``(seq, reason)``: data that only a lax parse accepts (``true`` for an integer, ``"1"``
    for a number), an explicit ``null`` where the harness omits an optional field (at the top
    of the data or nested: a content block's ``isError``, a source's ``plugin``, a usage
    bucket), a ``request/header`` whose ``reason``, ``startsSeries`` or header fields the
    harness's payload validator refuses, a ``turn/end`` reason outside the harness's
    ``TurnEndReason`` (a kind such as ``"bogus"``, members an arm does not have), a
    message id appended twice, a
    ``compaction/summary`` without its ``compaction/start``, and in a v0-v2 log a message
    source kind the harness cannot migrate. Run by ``Session.open(strict=True)``; the default
    read never pays for it."""
    ids: dict[str, int] = {}
    started: set[Any] = set()
    for ev in events:
        etype, seq = ev["type"], ev["seq"]
        data: Any = ev.get("data")
        adapter = _DATA_ADAPTERS.get(etype)
        if adapter is None:
            continue
        try:
            typed = adapter.validate_python(data, strict=True)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(p) for p in err["loc"]) or "data"
            return seq, f"{etype} data at {loc}: {err['msg']} (strict)"
        for key in _NULL_DEFAULTS[etype]:
            if key in data and data[key] is None:
                return seq, f"{etype} data.{key} is null; the harness omits an absent field"
        nested = _nested_null(typed, "")
        if nested is not None:
            return seq, f"{etype} data.{nested} is null; the harness omits an absent field"
        if etype == "request/header":
            defect = _request_header_defect(data)
            if defect is not None:
                return seq, defect
        elif etype == "turn/end":
            defect = _turn_end_defect(data["reason"])
            if defect is not None:
                return seq, defect
        if version <= 2:
            for msg in _messages_of(etype, data):
                src = msg.get("source") if isinstance(msg, dict) else None
                kind = src.get("kind") if isinstance(src, dict) else None
                if isinstance(kind, str) and kind not in _MIGRATABLE_SOURCE_KINDS:
                    return seq, (
                        f"message source kind {kind!r} is one the harness cannot migrate from "
                        f"format v{version} (it reads a v{version} log by migrating it to v3 "
                        "and refuses unclassified sources)"
                    )
        if etype == "compaction/start":
            started.add(data["compactionId"])
        elif etype == "compaction/summary" and data["compactionId"] not in started:
            return seq, f"compaction/summary {data['compactionId']!r} has no compaction/start"
        if ev.get("surfaceOp") == "append":
            msg = data if etype == "user/message" else data.get("message")
            mid = msg.get("id") if isinstance(msg, dict) else None
            if isinstance(mid, str):
                first = ids.setdefault(mid, seq)
                if first != seq:
                    return seq, f"message id {mid!r} was already appended at seq {first}"
    return None


def parse_events(raws: list[dict[str, Any]]) -> list[Event]:
    return [parse_event(r) for r in raws]
