"""The emitter every importer shares: normalized items in, a valid v3 DSH log out.

An importer reads its format into a list of items (system, user, assistant, tool result,
compaction, context edit), each with its source record, and ``build_session`` writes the
raw v3 events, turn and step structure included, as the harness would have logged them.
``LogBuilder`` is not used because it mints its own message and
call ids, times and runtime-context messages, while an import must keep the source's.

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
from ..builder import CHECKPOINT_PREAMBLE
from ..codec import encode_source_seqs
from ..session import Session
from ..tokens import estimate_message
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

__all__ = ["IMPORT_EVENT", "build_session"]

IMPORT_EVENT = "ctxsdk/import"
_TITLE_BYTES = 80
_STEP_MS = 1000  # deterministic clock: one second per message when the source has no times
SYSTEM_PLUGIN = "@deepseek-ai/dsh-system-prompt"


@dataclass
class _Pending:
    name: str
    arguments: str
    where: str
    call_seq: int | None = None


class _Emitter:
    def __init__(
        self,
        fmt: str,
        source: str | None,
        header: JsonDict,
        tools: list[JsonDict] | None,
        title: tuple[str, JsonDict] | None,
        descriptor: JsonDict | None,
    ) -> None:
        self.fmt = fmt
        self.source = source
        self.header = header
        self.tools = tools
        self.title = title
        self.descriptor = descriptor
        self.events: list[JsonDict] = []
        self.now: int = header["createdAt"]
        self.where_of: dict[int, str] = {}  # seq -> source record, for errors after the fold
        self.nodes: list[int] = []  # the surface, kept in step with every op
        self.node_of_id: dict[str, int] = {}  # message id -> its current surface node
        self.head: SystemItem | None = None
        self.turn = 0
        self.turn_open = False
        self.turn_has_assistant = False
        self.step = 0
        self.step_open = False
        self.step_answered = False
        self.answered = False  # the turn's last model output was a final answer
        self.pending: dict[str, _Pending] = {}
        self.route: tuple[str, str] | None = None
        self.titled = False

    # --- low level ---------------------------------------------------------------------------

    def _time(self, t: int | None) -> int:
        self.now = t if t is not None else self.now + _STEP_MS
        return self.now

    def _emit(
        self,
        etype: str,
        data: Any,
        *,
        time: int | None = None,
        sources: list[int] | None = None,
        op: str | JsonDict | None = None,
        ignorable: bool = False,
    ) -> int:
        seq = len(self.events)
        ev: JsonDict = {
            "type": etype,
            "seq": seq,
            "time": self.now if time is None else time,
            "data": data,
        }
        if sources is not None:
            ev["sourceEventSeqs"] = encode_source_seqs(sources)  # runs as [start, end] (§2.4)
        if op is not None:
            ev["surfaceOp"] = op
        if ignorable:
            ev["ignorable"] = True
        self.events.append(ev)
        if op == "append":
            self.nodes.append(seq)
        return seq

    def _provenance(self, origin: Origin, message_seq: int | None, **extra: Any) -> None:
        data: JsonDict = {
            "format": self.fmt,
            "source": self.source,
            "record": origin.record,
            "messageSeq": message_seq,
        }
        for key, value in {**origin.extra, **extra}.items():
            data.setdefault(key, value)  # a source field never hides where the record came from
        self._emit(IMPORT_EVENT, data, ignorable=True)
        if message_seq is not None:
            self.where_of.setdefault(message_seq, origin.where)

    def _replace(self, shadowed: list[int], seq: int) -> None:
        i = self.nodes.index(shadowed[0])
        self.nodes[i : i + len(shadowed)] = [seq]

    # --- turns and steps ---------------------------------------------------------------------

    def _open_turn(self) -> None:
        self.turn += 1
        self.turn_open = True
        self.turn_has_assistant = False
        self.answered = False
        self.step = 0
        self._emit("turn/start", {"turn": self.turn})
        self._open_step()

    def _open_step(self) -> None:
        self.step += 1
        self.step_open = True
        self.step_answered = False
        self._emit("step/start", {"turn": self.turn, "step": self.step})
        if not self.nodes:  # v3 node 0: the system prompt, or an empty "no system prompt"
            head = self.head
            message = {
                "id": head.id if head is not None else f"{self.header['id']}:system",
                "role": "system",
                "content": head.blocks if head is not None else [],
                "source": {"kind": "plugin", "plugin": SYSTEM_PLUGIN},
            }
            seq = self._emit(
                "system/message",
                {"turn": self.turn, "step": self.step, "message": message},
                op="append",
            )
            if head is not None and head.origin is not None:
                self._provenance(head.origin, seq)
        if self.descriptor is not None:
            self._emit("subagent/descriptor", self.descriptor)
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
        self._emit("step/end", {"turn": self.turn, "step": self.step})
        self.step_open = False

    def _close_turn(self, reason: JsonDict, where: str) -> None:
        if self.step_open:
            self._close_step(where)
        self._emit("turn/end", {"turn": self.turn, "reason": reason})
        self.turn_open = False

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
        if not self.turn_open:
            self._open_turn()
        elif not self.step_open:
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
        if item.prompt and self.turn_open and self.turn_has_assistant:
            self._settle_turn(item.origin.where)
        t = self._time(item.time)
        self._fresh_step(item.origin.where)
        seq = self._emit(
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
        harness's fallback (the prompt's first words)."""
        self.titled = True
        if self.title is not None:
            title, source = self.title
        else:
            text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
            fallback = fallback_title(text)
            if fallback is None:
                return
            title, source = fallback, {"kind": "fallback"}
        raw = title.encode()[:_TITLE_BYTES].decode(errors="ignore")  # any title is <= 80 bytes
        self._emit("session/title", {"title": raw, "messageSeqs": [seq], "source": source})

    def _system(self, item: SystemItem) -> None:
        """A system message after node 0 is appended in history (v3 allows later system nodes)."""
        t = self._time(item.time)
        where = item.origin.where if item.origin is not None else "system"
        self._fresh_step(where)
        message = {
            "id": item.id,
            "role": "system",
            "content": item.blocks,
            "source": {"kind": "plugin", "plugin": SYSTEM_PLUGIN},
        }
        seq = self._emit(
            "system/message",
            {"turn": self.turn, "step": self.step, "message": message},
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
            self._emit("request/header", {"header": header, "reason": reason})
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
            "turn": self.turn,
            "step": self.step,
            "message": message,
            "stream": stream,
        }
        if item.usage is not None:
            data["usage"] = item.usage
        seq = self._emit("assistant/message", data, time=t, op="append")
        self.node_of_id[item.id] = seq
        for origin in item.origins:
            self._provenance(origin, seq)
        self.step_answered = True
        self.turn_has_assistant = True
        self.answered = not calls
        for block in calls:
            self.pending[block["id"]] = _Pending(block["name"], block["arguments"], where)

    def _tool_call(self, call_id: str, call: _Pending) -> int:
        seq = self._emit(
            "tool/call",
            {
                "turn": self.turn,
                "step": self.step,
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
        seq = self._emit(
            "tool/result",
            {"turn": self.turn, "step": self.step, "message": message},
            time=t,
            sources=[call_seq],
            op="append",
        )
        self.node_of_id[item.id] = seq
        self.answered = False
        self._provenance(item.origin, seq)

    def _edit(self, item: EditItem) -> None:
        node = self.node_of_id.get(item.target)
        if node is None or node not in self.nodes:
            fail(item.origin.where, f"edits message {item.target!r}, which is not in the context")
        t = self._time(item.time)
        old = self.events[node]
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
        seq = self._emit(
            etype,
            data,
            time=t,
            sources=[node],
            op={"op": "replace", "startSeq": node, "endSeq": node},
        )
        self._replace([node], seq)
        self.node_of_id[item.target] = seq
        self._provenance(item.origin, seq, edits=item.target)

    def _compact(self, item: CompactItem) -> None:
        if self.pending:
            call_id = next(iter(self.pending))
            fail(item.start.where, f"compaction while tool call {call_id!r} is unanswered")
        if self.turn_open and self.answered:
            self._close_turn({"kind": "completed"}, item.start.where)  # a manual /compact
        t_start = self._time(item.time)
        if all(self.events[n]["type"] == "system/message" for n in self.nodes):
            # Nothing before it in this file (a continued transcript): the checkpoint opens the
            # log, appended inside a step after the system head instead of replacing anything.
            self._fresh_step(item.start.where)
        turn = self.turn if self.turn_open else None
        start = self._emit(
            "compaction/start", {"compactionId": item.compaction_id, "turn": turn}, time=t_start
        )
        self._provenance(item.start, None, eventSeq=start)
        head = 0
        while head < len(self.nodes) and self.events[self.nodes[head]]["type"] == "system/message":
            head += 1  # v3 never compacts the system head
        shadowed = self.nodes[head:]
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
                estimate_message(self._message_of(s)) for s in shadowed
            )
        summary_data.update(provider=item.provider, model=item.model)
        summary_seq = self._emit("compaction/summary", summary_data, time=t_summary)
        content = [
            {"type": "text", "text": f"{CHECKPOINT_PREAMBLE}\n\n<compacted-summary>"},
            {"type": "text", "text": item.summary_text},
            {"type": "text", "text": "</compacted-summary>"},
        ]
        message = {
            "content": content,
            "source": {"kind": "plugin", "plugin": "compact", "compactionId": item.compaction_id},
            "role": "user",
            "id": item.summary_id,
        }
        op: str | JsonDict = "append"
        if shadowed:
            op = {"op": "replace", "startSeq": shadowed[0], "endSeq": shadowed[-1]}
        repl = self._emit(
            "user/message",
            message,
            time=t_summary,
            sources=[start, summary_seq, *shadowed],
            op=op,
        )
        if shadowed:
            self._replace(shadowed, repl)
        self.node_of_id[item.summary_id] = repl
        self._provenance(item.summary, repl)
        self._emit(
            "compaction/end", {"compactionId": item.compaction_id, "turn": turn}, time=t_summary
        )

    def _message_of(self, seq: int) -> JsonDict:
        ev = self.events[seq]
        msg = ev["data"] if ev["type"] == "user/message" else ev["data"]["message"]
        return msg  # type: ignore[no-any-return]

    def finish(self, final_reason: JsonDict | None) -> None:
        if self.pending:
            # The transcript stops after the model's calls: log them as started (the outcome
            # is unknown) and leave the turn open for crash repair.
            for call_id, call in self.pending.items():
                if call.call_seq is None:
                    self._tool_call(call_id, call)
            return
        if not self.turn_open:
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


def build_session(
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
) -> Session:
    """Emit ``items`` as a v3 log and open it as a ``Session`` (validated as the harness
    validates a log on load). ``trailing`` items (skipped records) are logged after the end."""
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
    if not em.events and em.head is not None:
        em._open_turn()  # only a system prompt: keep it as node 0 of an open turn
    em.finish(final_reason)
    for item in trailing:
        em.add(item)
    try:
        return Session.from_events(header, em.events)
    except SessionFormatError as exc:
        where = em.where_of.get(exc.seq, source or fmt) if exc.seq is not None else (source or fmt)
        raise ImportFormatError(
            f"{where}: the imported log is not valid DSH ({exc}); this input is outside what "
            "the importer understands: please report it with the record named"
        ) from None
