"""The emitter every importer shares: normalized items in, a valid v3 DSH log out.

An importer reads its format into a list of items (system, user, assistant, tool result,
compaction, context edit), each with its source record, and ``build_session`` writes the
raw v3 events, turn and step structure included, as the harness would have logged them.
The events go through the one ``EventWriter`` (envelope, seqs, turns and steps, surface
nodes); unlike the test-log builder (``ctxsdk.testing``), which mints its own message and
call ids, times and runtime-context messages, an import keeps the source's ids and times.

Grouping rules (the same for every format):

- a *prompt* user message starts a new turn once the open turn has an assistant message;
  until then consecutive user messages share the turn's first step;
- each assistant message is one step; a user message after an answered step opens the next
  step of the same turn (SWE-agent observations, mid-turn notices);
- tool results answer the calls of their own step; a call still unanswered when a later
  message arrives is refused, but calls left open at the very end of the input stay open:
  the log then ends inside its turn and crash repair (``Session.repaired()``, ``wire()``)
  answers them ``TOOL_OUTCOME_UNKNOWN`` and closes the turn ``interrupted``;
- a turn closes ``completed`` when its last model output was a final answer (no calls),
  ``aborted {user}`` when the next prompt arrived first; the last turn stays open (the
  transcript ended while the model still owed a reply) unless the importer knows better.

Every message event is followed by an ignorable ``ctxsdk/import`` event naming the source
record, so the harness skips it and ``import_provenance`` can map messages back.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import ImportFormatError, SessionFormatError
from .._checked import check_log
from .._event_writer import EventWriter
from .._facts._templates import user_text
from .._harness import checkpoint_content, system_prompt_message
from .._replay import LogIndex
from .._tokens import estimate_message
from ._common import JsonDict, fail, fallback_title
from ._items import (
    AssistantItem,
    CompactItem,
    EditItem,
    Item,
    Origin,
    ResultItem,
    SystemItem,
    UserItem,
)

__all__ = ["IMPORT_EVENT", "ImportedLog", "build_log"]

IMPORT_EVENT = "ctxsdk/import"
_TITLE_BYTES = 80
_STEP_MS = 1000  # deterministic clock: one second per message when the source has no times


@dataclass
class _Pending:
    name: str
    arguments: str
    where: str
    call_seq: int | None = None


@dataclass
class _Emitter:
    fmt: str
    source: str | None
    header: JsonDict
    tools: list[JsonDict] | None
    title: tuple[str, JsonDict] | None
    descriptor: JsonDict | None

    def __post_init__(self) -> None:
        self.now: int = self.header["createdAt"]
        # Envelope, seqs, turn/step and the surface nodes; an event without a time of its
        # own takes the time of the latest source record.
        self.w = EventWriter(3, clock=lambda: self.now)
        self.where_of: dict[int, str] = {}  # seq -> source record, for errors after the replay
        self.node_of_id: dict[str, int] = {}  # message id -> its current surface node
        self.head: SystemItem | None = None
        self.turn_has_assistant = False
        self.step_answered = False
        self.answered = False  # the turn's last model output was a final answer
        self.pending: dict[str, _Pending] = {}
        self.route: tuple[str, str] | None = None
        self.titled = False

    # --- low level ---------------------------------------------------------------------------

    def _time(self, t: int | None) -> int:
        self.now = t if t is not None else self.now + _STEP_MS
        return self.now

    def _provenance(self, origin: Origin, message_seq: int | None, **extra: Any) -> None:
        data: JsonDict = {
            "format": self.fmt,
            "source": self.source,
            "record": origin.record,
            "messageSeq": message_seq,
        }
        for key, value in {**origin.extra, **extra}.items():
            data.setdefault(key, value)  # a source field never hides where the record came from
        self.w.emit(IMPORT_EVENT, data, ignorable=True)
        if message_seq is not None:
            self.where_of.setdefault(message_seq, origin.where)

    # --- turns and steps ---------------------------------------------------------------------

    def _open_turn(self) -> None:
        self.turn_has_assistant = False
        self.answered = False
        self.w.start_turn()
        self._open_step()

    def _open_step(self) -> None:
        self.step_answered = False
        self.w.start_step()
        if not self.w.nodes:  # v3 node 0: the system prompt, or an empty "no system prompt"
            head = self.head
            message = system_prompt_message(
                head.id if head is not None else f"{self.header['id']}:system",
                head.blocks if head is not None else [],
            )
            seq = self.w.system_message(message)
            if head is not None and head.origin is not None:
                self._provenance(head.origin, seq)
        if self.descriptor is not None:
            self.w.emit("subagent/descriptor", self.descriptor)
            self.descriptor = None

    def _close_step(self, where: str) -> None:
        if self.pending:
            call_id, call = next(iter(self.pending.items()))
            fail(
                call.where,
                f"tool call {call_id!r} ({call.name}) has no tool result before {where}",
                "every tool call needs its result before the next message; only the last "
                "step of a transcript may end with unanswered calls",
            )
        self.w.end_step()

    def _close_turn(self, reason: JsonDict, where: str) -> None:
        if self.w.step_open:
            self._close_step(where)
        self.w.end_turn(reason)

    def _settle_turn(self, where: str) -> None:
        """Close the open turn with the reason its history implies."""
        reason = (
            {"kind": "completed"}
            if self.answered
            else {"kind": "aborted", "reason": {"kind": "user"}}
        )
        self._close_turn(reason, where)

    def _fresh_step(self, where: str) -> None:
        """Make sure a step is open that has no assistant message yet."""
        if not self.w.turn_open:
            self._open_turn()
        elif not self.w.step_open:
            self._open_step()
        elif self.step_answered:
            self._close_step(where)
            self._open_step()

    # --- items -------------------------------------------------------------------------------

    def add(self, item: Item) -> None:
        if isinstance(item, UserItem):
            self._user(item)
        elif isinstance(item, AssistantItem):
            self._assistant(item)
        elif isinstance(item, ResultItem):
            self._result(item)
        elif isinstance(item, SystemItem):
            self._system(item)
        elif isinstance(item, CompactItem):
            self._compact(item)
        elif isinstance(item, EditItem):
            self._edit(item)
        else:
            if item.time is not None:
                self._time(item.time)
            self._provenance(item.origin, None, skipped=item.reason)

    def _user(self, item: UserItem) -> None:
        if item.prompt and self.w.turn_open and self.turn_has_assistant:
            self._settle_turn(item.origin.where)
        t = self._time(item.time)
        self._fresh_step(item.origin.where)
        seq = self.w.emit(
            "user/message",
            {"content": item.blocks, "source": item.source, "role": "user", "id": item.id},
            time=t,
            op="append",
        )
        self.node_of_id[item.id] = seq
        self.answered = False
        self._provenance(item.origin, seq)
        if not self.titled and item.source.get("kind") == "user":
            self._title(item.blocks, seq)

    def _title(self, blocks: list[JsonDict], seq: int) -> None:
        """``session/title`` after the first prompt: the source's own title, else the
        harness's fallback (the prompt's first words). A prompt that is only a harness
        template (a Claude Code ``<command-name>/clear</command-name>``) titles nothing: the
        next prompt is tried; a template that wraps the user's task is titled by the task."""
        if self.title is not None:
            self.titled = True
            title, source = self.title
        else:
            text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
            own = user_text(text)
            if own is None:
                return
            self.titled = True
            fallback = fallback_title(own)
            if fallback is None:
                return
            title, source = fallback, {"kind": "fallback"}
        raw = title.encode()[:_TITLE_BYTES].decode(errors="ignore")  # any title is <= 80 bytes
        self.w.emit("session/title", {"title": raw, "messageSeqs": [seq], "source": source})

    def _system(self, item: SystemItem) -> None:
        """A system message after node 0 is appended in history (v3 allows later system nodes)."""
        t = self._time(item.time)
        where = item.origin.where if item.origin is not None else "system"
        self._fresh_step(where)
        seq = self.w.emit(
            "system/message",
            {
                "turn": self.w.turn,
                "step": self.w.step,
                "message": system_prompt_message(item.id, item.blocks),
            },
            time=t,
            op="append",
        )
        if item.origin is not None:
            self._provenance(item.origin, seq)

    def _assistant(self, item: AssistantItem) -> None:
        t = self._time(item.time)
        where = item.origins[0].where
        self._fresh_step(where)
        if self.route != (item.provider, item.model):
            config = {"provider": item.provider, "model": item.model}
            header: JsonDict = {"config": config}
            if self.tools:
                header["tools"] = self.tools
            reason = "initial" if self.route is None else "change"
            self.w.emit("request/header", {"header": header, "reason": reason})
            self.route = (item.provider, item.model)
        calls = [b for b in item.blocks if b.get("type") == "tool-call"]
        ids = [b["id"] for b in calls]
        if len(set(ids)) != len(ids):
            fail(
                where,
                "the same tool call id is used twice in one message",
                "call ids must be unique",
            )
        finish = item.finish or ("tool-calls" if calls else "stop")
        stream: list[JsonDict] = []
        if item.usage is not None:
            stream.append(
                {"type": "chunk", "time": t, "chunk": {"type": "usage", "usage": item.usage}}
            )
        stream.append(
            {"type": "chunk", "time": t, "chunk": {"type": "finish", "reason": {"kind": finish}}}
        )
        message = {
            "role": "assistant",
            "content": item.blocks,
            "source": {"kind": "model", "provider": item.provider, "model": item.model},
            "id": item.id,
        }
        data: JsonDict = {
            "turn": self.w.turn,
            "step": self.w.step,
            "message": message,
            "stream": stream,
        }
        if item.usage is not None:
            data["usage"] = item.usage
        seq = self.w.emit("assistant/message", data, time=t, op="append")
        self.node_of_id[item.id] = seq
        for origin in item.origins:
            self._provenance(origin, seq)
        self.step_answered = True
        self.turn_has_assistant = True
        self.answered = not calls
        for block in calls:
            self.pending[block["id"]] = _Pending(block["name"], block["arguments"], where)

    def _tool_call(self, call_id: str, call: _Pending) -> int:
        seq = self.w.emit(
            "tool/call",
            {
                "turn": self.w.turn,
                "step": self.w.step,
                "callId": call_id,
                "name": call.name,
                "arguments": call.arguments,
            },
        )
        call.call_seq = seq
        return seq

    def _result(self, item: ResultItem) -> None:
        call = self.pending.pop(item.call_id, None)
        if call is None:
            fail(
                item.origin.where,
                f"tool result for call {item.call_id!r}, which no assistant message of this "
                "step made (or which was answered already)",
                "a tool result must follow the assistant message whose tool call it answers",
            )
        call_seq = self._tool_call(item.call_id, call)
        t = self._time(item.time)
        message = {
            "source": {"kind": "tool", "callId": item.call_id},
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": item.call_id,
                    "content": item.blocks,
                    "isError": item.is_error,
                }
            ],
            "role": "user",
            "id": item.id,
        }
        seq = self.w.emit(
            "tool/result",
            {"turn": self.w.turn, "step": self.w.step, "message": message},
            time=t,
            sources=[call_seq],
            op="append",
        )
        self.node_of_id[item.id] = seq
        self.answered = False
        self._provenance(item.origin, seq)

    def _edit(self, item: EditItem) -> None:
        node = self.node_of_id.get(item.target)
        if node is None or node not in self.w.nodes:
            fail(item.origin.where, f"edits message {item.target!r}, which is not in the context")
        t = self._time(item.time)
        old = self.w.event(node)
        if old["type"] == "tool/result":
            data = _tool_result_with(old["data"], item.blocks)
            etype = "tool/result"
        elif old["type"] == "user/message":
            data = {**old["data"], "content": item.blocks, "id": item.new_id}
            etype = "user/message"
        else:
            fail(
                item.origin.where,
                f"only tool results and user messages can be edited, not {old['type']}",
            )
        seq = self.w.replace(etype, data, [node], time=t)
        self.node_of_id[item.target] = seq
        self._provenance(item.origin, seq, edits=item.target)

    def _compact(self, item: CompactItem) -> None:
        if self.pending:
            call_id = next(iter(self.pending))
            fail(item.start.where, f"compaction while tool call {call_id!r} is unanswered")
        if self.w.turn_open and self.answered:
            self._close_turn({"kind": "completed"}, item.start.where)  # a manual /compact
        t_start = self._time(item.time)
        if self.w.system_head() == len(self.w.nodes):
            # Nothing before it in this file (a continued transcript): the checkpoint opens the
            # log, appended inside a step after the system head instead of replacing anything.
            self._fresh_step(item.start.where)
        turn = self.w.turn if self.w.turn_open else None
        start = self.w.emit(
            "compaction/start", {"compactionId": item.compaction_id, "turn": turn}, time=t_start
        )
        self._provenance(item.start, None, eventSeq=start)
        shadowed = self.w.nodes[self.w.system_head() :]  # v3 never compacts the system head
        t_summary = self._time(item.summary_time)
        summary_blocks = [{"type": "text", "text": item.summary_text}]
        summary_data: JsonDict = {
            "compactionId": item.compaction_id,
            "summary": summary_blocks,
            "rawOutput": [dict(b) for b in summary_blocks],
        }
        if shadowed:
            summary_data["shadowedRange"] = {"start": shadowed[0], "end": shadowed[-1]}
            summary_data["shadowedSeqs"] = list(shadowed)
            summary_data["shadowedTokenCount"] = sum(
                estimate_message(self.w.message_of(s)) for s in shadowed
            )
        summary_data.update(provider=item.provider, model=item.model)
        summary_seq = self.w.emit("compaction/summary", summary_data, time=t_summary)
        message = {
            "content": checkpoint_content(item.summary_text),
            "source": {"kind": "plugin", "plugin": "compact", "compactionId": item.compaction_id},
            "role": "user",
            "id": item.summary_id,
        }
        sources = [start, summary_seq, *shadowed]
        if shadowed:
            repl = self.w.replace(
                "user/message", message, shadowed, time=t_summary, sources=sources
            )
        else:
            repl = self.w.emit(
                "user/message", message, time=t_summary, sources=sources, op="append"
            )
        self.node_of_id[item.summary_id] = repl
        self._provenance(item.summary, repl)
        self.w.emit(
            "compaction/end", {"compactionId": item.compaction_id, "turn": turn}, time=t_summary
        )

    def finish(self, final_reason: JsonDict | None) -> None:
        if self.pending:
            # The transcript stops after the model's calls: log them as started (the outcome
            # is unknown) and leave the turn open for crash repair.
            for call_id, call in self.pending.items():
                if call.call_seq is None:
                    self._tool_call(call_id, call)
            return
        if not self.w.turn_open:
            return
        if final_reason is not None:
            self._close_turn(final_reason, "the end of the input")
        elif self.answered:
            self._close_turn({"kind": "completed"}, "the end of the input")


def _tool_result_with(data: JsonDict, blocks: list[JsonDict]) -> JsonDict:
    """A copy of tool/result data whose only change is the result block's content (§7)."""
    msg = dict(data["message"])
    first = dict(msg["content"][0])
    first["content"] = blocks
    msg["content"] = [first]
    return {**data, "message": msg}


@dataclass(frozen=True)
class ImportedLog:
    """A foreign log as a v3 DSH log: the header, the events, and the index their checking
    replay built (so a ``Session`` made of it is not replayed again)."""

    header: JsonDict
    events: list[JsonDict]
    index: LogIndex


def build_log(
    items: Iterable[Item],
    *,
    fmt: str,
    source: str | None,
    session_id: str,
    created_at: int,
    cwd: str | None = None,
    parent: str | None = None,
    origin: str | None = None,
    delegation_depth: int = 0,
    tools: Sequence[JsonDict] | None = None,
    title: tuple[str, JsonDict] | None = None,
    descriptor: JsonDict | None = None,
    final_reason: JsonDict | None = None,
    trailing: Iterable[Item] = (),
) -> ImportedLog:
    """Emit ``items`` as a v3 log, checked as the harness checks a log on load (a log the
    importer got wrong names the source record). ``trailing`` items (skipped records) are
    logged after the end."""
    header: JsonDict = {"type": "session", "version": 3, "id": session_id, "createdAt": created_at}
    if cwd is not None:
        header["cwd"] = cwd
    if parent is not None:
        header["parentSession"] = parent
    header["isSeeded"] = False
    if origin is not None:
        header["origin"] = origin
    header["delegationDepth"] = delegation_depth
    em = _Emitter(fmt, source, header, list(tools) if tools else None, title, descriptor)
    queue = list(items)
    first = queue[0] if queue else None
    if isinstance(first, SystemItem):
        em.head = first  # a leading system message is the v3 system head (node 0)
        queue.pop(0)
    for item in queue:
        em.add(item)
    if not em.w.events and em.head is not None:
        em._open_turn()  # only a system prompt: keep it as node 0 of an open turn
    em.finish(final_reason)
    for item in trailing:
        em.add(item)
    try:
        _, index = check_log(header, em.w.events)
    except SessionFormatError as exc:
        where = em.where_of.get(exc.seq, source or fmt) if exc.seq is not None else (source or fmt)
        raise ImportFormatError(
            f"{where}: the imported log is not valid DSH ({exc}); this input is outside what "
            "the importer understands: please report it with the record named"
        ) from None
    return ImportedLog(header, em.w.events, index)
