"""The replay: one pass over a log's events that validates them as the harness does
(envelope, seqs, provenance, surface ops, role/source rules, turn/step enclosure, tool
pairing) and computes the surface, the ordered nodes the model sees (spec §6-§8).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import SessionFormatError, SurfaceError, UnknownEventType
from ._codec import STRIPPED_SEQ_HINT, decode_source_seqs
from ._models import event_types

__all__ = [
    "LogIndex",
    "PendingCall",
    "SurfaceState",
    "TurnSpan",
    "check_replace",
    "replace_keys",
    "replay_into",
    "replay_log",
    "surface_types",
]

_ENVELOPE = frozenset({"type", "seq", "time", "data", "sourceEventSeqs", "surfaceOp", "ignorable"})
_SURFACE_V0 = frozenset({"user/message", "assistant/message", "tool/result"})
_SURFACE_V3 = _SURFACE_V0 | {"system/message"}
_STEP_EVENTS = frozenset(
    {
        "assistant/chunk",
        "assistant/attempt",
        "assistant/message",
        "tool/call",
        "tool/result",
        "system/message",
    }
)
_TURN_EVENTS = frozenset({"request/header", "request/context", "todo/write"})
_MAX_SAFE = 2**53 - 1


def surface_types(version: int) -> frozenset[str]:
    return _SURFACE_V3 if version >= 3 else _SURFACE_V0


def replace_keys(version: int) -> tuple[str, str]:
    """The replace op's range keys: ``start/end`` up to v2, ``startSeq/endSeq`` from v3."""
    return ("startSeq", "endSeq") if version >= 3 else ("start", "end")


class SurfaceState:
    """The current surface with O(1) position lookups.

    Every node sits in a slot; slots keep append order. A replacement takes the slot of the
    first node it shadows and the other shadowed slots die, so slot order is surface order
    and "i <= j by current surface position" is a slot comparison. Dead slots are skipped
    with a path-compressed next-alive pointer, which keeps the replay linear in events.
    """

    __slots__ = ("_next", "_node", "_slot", "generation")

    def __init__(self) -> None:
        self._node: list[int] = []  # slot -> node seq, or -1 when dead
        self._next: list[int] = []  # slot -> itself when alive, else a later slot
        self._slot: dict[int, int] = {}  # alive node seq -> slot
        self.generation = 0

    def copy(self) -> SurfaceState:
        other = SurfaceState()
        other._node = self._node.copy()
        other._next = self._next.copy()
        other._slot = self._slot.copy()
        other.generation = self.generation
        return other

    def append(self, seq: int) -> None:
        self._slot[seq] = len(self._node)
        self._next.append(len(self._node))
        self._node.append(seq)

    def __contains__(self, seq: int) -> bool:
        return seq in self._slot

    def __len__(self) -> int:
        return len(self._slot)

    def _alive_from(self, slot: int) -> int:
        nxt = self._next
        root = slot
        while root < len(nxt) and nxt[root] != root:
            root = nxt[root]
        while slot != root:  # path compression
            nxt[slot], slot = root, nxt[slot]
        return root

    def first(self) -> int | None:
        slot = self._alive_from(0)
        return self._node[slot] if slot < len(self._node) else None

    def span(self, start: int, end: int) -> list[int] | None:
        """Nodes from ``start`` to ``end`` in surface order; None if either is absent or j < i."""
        i, j = self._slot.get(start), self._slot.get(end)
        if i is None or j is None or j < i:
            return None
        if i == j:  # one node (a tool-result prune): the alive slot holds it
            return [start]
        out = []
        nodes, nxt = self._node, self._next
        k = i
        while k <= j:
            out.append(nodes[k])
            k += 1
            if k < len(nxt) and nxt[k] != k:  # a dead slot: skip the run
                k = self._alive_from(k)
        return out

    def replace(self, shadowed: list[int], seq: int) -> None:
        slots, nodes, nxt = self._slot, self._node, self._next
        first = slots.pop(shadowed[0])
        for node in shadowed[1:]:
            slot = slots.pop(node)
            nodes[slot] = -1
            nxt[slot] = slot + 1
        nodes[first] = seq
        slots[seq] = first
        self.generation += 1

    def nodes(self) -> list[int]:
        return [n for n in self._node if n >= 0]

    def position_of(self, seq: int) -> int | None:
        """0-based surface position of a node (O(n); for display, not for the replay)."""
        slot = self._slot.get(seq)
        if slot is None:
            return None
        return sum(1 for n in self._node[:slot] if n >= 0)


@dataclass(slots=True)
class PendingCall:
    call_id: str
    name: str
    assistant_seq: int
    call_seq: int | None = None  # the tool/call event, once logged


@dataclass
class TurnSpan:
    turn: int
    start_seq: int
    end_seq: int | None = None
    reason: dict[str, Any] | None = None
    steps: list[tuple[int, int, int | None]] = field(default_factory=list)  # (step, start, end)


@dataclass
class LogIndex:
    """What one validating pass learns about a log."""

    version: int
    surface: SurfaceState
    shadowed_by: dict[int, int] = field(default_factory=dict)
    replaced: dict[int, list[int]] = field(default_factory=dict)  # replacement -> shadowed nodes
    turns: list[TurnSpan] = field(default_factory=list)
    open_turn: int | None = None
    open_step: int | None = None
    pending: dict[str, PendingCall] = field(default_factory=dict)
    title_seq: int | None = None
    header_seqs: list[int] = field(default_factory=list)
    context_seqs: list[int] = field(default_factory=list)
    end_seed_seqs: list[int] = field(default_factory=list)
    descriptor_seq: int | None = None
    compaction_seqs: list[int] = field(default_factory=list)
    unknown_seqs: list[int] = field(default_factory=list)
    source_seqs: dict[int, list[int]] = field(default_factory=dict)  # decoded, per surface event
    # Rules of the harness's optional invariant companion (enclosure, tool pairing, turn
    # numbering): refused when strict, else recorded as (seq, rule, message) and read on.
    strict: bool = True
    invariant_issues: list[tuple[int, str, str]] = field(default_factory=list)

    @property
    def last_turn(self) -> int:
        return self.turns[-1].turn if self.turns else 0

    def copy(self) -> LogIndex:
        """An independent copy, to replay further events without touching this one."""
        return LogIndex(
            version=self.version,
            surface=self.surface.copy(),
            shadowed_by=dict(self.shadowed_by),
            replaced=dict(self.replaced),
            turns=[
                TurnSpan(t.turn, t.start_seq, t.end_seq, t.reason, list(t.steps))
                for t in self.turns
            ],
            open_turn=self.open_turn,
            open_step=self.open_step,
            pending={
                k: PendingCall(p.call_id, p.name, p.assistant_seq, p.call_seq)
                for k, p in self.pending.items()
            },
            title_seq=self.title_seq,
            header_seqs=list(self.header_seqs),
            context_seqs=list(self.context_seqs),
            end_seed_seqs=list(self.end_seed_seqs),
            descriptor_seq=self.descriptor_seq,
            compaction_seqs=list(self.compaction_seqs),
            unknown_seqs=list(self.unknown_seqs),
            source_seqs=dict(self.source_seqs),
            strict=self.strict,
            invariant_issues=list(self.invariant_issues),
        )


def _fail(msg: str, seq: int) -> SessionFormatError:
    return SessionFormatError(msg, seq=seq)


def _invariant(index: LogIndex, rule: str, msg: str, seq: int) -> None:
    """A rule of the harness's optional invariant companion (``session/src/invariant.ts``),
    which its loader does not enforce: refused when strict, else recorded."""
    if index.strict:
        raise _fail(msg, seq)
    index.invariant_issues.append((seq, rule, msg))


def _check_message(msg: Any, role: str, seq: int, what: str) -> dict[str, Any]:
    try:  # the common, valid case in one expression; the slow path below names the defect
        if (
            msg["role"] == role
            and type(msg["id"]) is str
            and msg["id"]
            and type(msg["content"]) is list
            and type(msg["source"]["kind"]) is str
            and msg["source"]["kind"]
        ):
            return msg  # type: ignore[no-any-return]
    except (KeyError, TypeError):
        pass
    if not isinstance(msg, dict):
        raise _fail(f"{what} has no message object", seq)
    if msg.get("role") != role:
        raise _fail(f"{what} must have role {role!r}, not {msg.get('role')!r}", seq)
    if not isinstance(msg.get("id"), str) or not msg["id"]:
        raise _fail(f"{what} message needs a non-empty string id", seq)
    if not isinstance(msg.get("content"), list):
        raise _fail(f"{what} message content must be an array of blocks", seq)
    raise _fail(f"{what} message needs a source with a non-empty kind", seq)


def _tool_result_call_id(data: Any, seq: int, version: int) -> str:
    try:
        msg = data["message"]
        call_id = msg["source"]["callId"]
        content = msg["content"]
        block = content[0]
        if (
            msg["role"] == "user"
            and type(msg["id"]) is str
            and msg["id"]
            and msg["source"]["kind"] == "tool"
            and type(call_id) is str
            and call_id
            and len(content) == 1
            and block["type"] == "tool-result"
            and block["toolCallId"] == call_id
            and type(block["content"]) is list
            and (version < 3 or "error" not in data or block.get("isError") is True)
        ):
            return call_id
    except (KeyError, TypeError, IndexError):
        pass
    return _explain_tool_result(data, seq, version)


def _explain_tool_result(data: Any, seq: int, version: int) -> str:
    if not isinstance(data, dict):
        raise _fail("tool/result has no data object", seq)
    msg = _check_message(data.get("message"), "user", seq, "tool/result")
    src = msg["source"]
    call_id = src.get("callId")
    if src.get("kind") != "tool" or not isinstance(call_id, str) or not call_id:
        raise _fail("tool/result source must be {kind:'tool', callId} with a non-empty callId", seq)
    content = msg["content"]
    if (
        len(content) != 1
        or not isinstance(content[0], dict)
        or content[0].get("type") != "tool-result"
        or content[0].get("toolCallId") != call_id
    ):
        raise _fail("tool/result content must be exactly one tool-result block for its callId", seq)
    if not isinstance(content[0].get("content"), list):
        raise _fail("tool-result block content must be an array of blocks", seq)
    if version >= 3 and "error" in data and content[0].get("isError") is not True:
        raise _fail("v3 tool/result with an error must have isError: true", seq)
    return call_id


def _same_but_result_content(old: Any, new: Any) -> bool:
    """``_without_result_content(old) == _without_result_content(new)``, without the copies
    when both are tool/result data as the replay checked them (an object whose message
    holds one tool-result block)."""
    try:
        om, nm = old["message"], new["message"]
        oc, nc = om["content"], nm["content"]
        ob, nb = oc[0], nc[0]
        shaped = (
            type(old) is dict
            and type(new) is dict
            and type(om) is dict
            and type(nm) is dict
            and type(oc) is list
            and type(nc) is list
            and len(oc) == 1
            and len(nc) == 1
            and type(ob) is dict
            and type(nb) is dict
            and "content" in ob
            and "content" in nb
        )
    except (KeyError, TypeError, IndexError):
        shaped = False
    if not shaped:
        return _without_result_content(old) == _without_result_content(new)
    if old.keys() != new.keys() or om.keys() != nm.keys() or ob.keys() != nb.keys():
        return False
    for k, v in old.items():  # loops, not all() over generators (a frame each)
        if k != "message" and v != new[k]:
            return False
    for k, v in om.items():
        if k != "content" and v != nm[k]:
            return False
    return all(v == nb[k] for k, v in ob.items() if k != "content")


def _without_result_content(data: dict[str, Any]) -> dict[str, Any]:
    msg = dict(data.get("message") or {})
    content = list(msg.get("content") or [])
    if content and isinstance(content[0], dict):
        content[0] = {k: v for k, v in content[0].items() if k != "content"}
    msg["content"] = content
    return {**data, "message": msg}


def check_replace(
    ev: dict[str, Any],
    sources: list[int] | None,
    events: list[dict[str, Any]],
    state: SurfaceState,
    version: int,
) -> list[int]:
    """Validate one replace op against the current surface; return the shadowed nodes.

    Raises ``SurfaceError`` with the harness's reason when it would refuse the op.
    """
    seq, etype, op = ev["seq"], ev["type"], ev["surfaceOp"]
    k_start, k_end = ("startSeq", "endSeq") if version >= 3 else ("start", "end")
    shaped = type(op) is dict and len(op) == 3 and k_start in op and k_end in op and "op" in op
    if not (shaped or set(op) == {"op", k_start, k_end}) or op.get("op") != "replace":
        raise SurfaceError(
            f"a v{version} replace op has exactly the keys op, {k_start}, {k_end}", seq=seq
        )
    start, end = op[k_start], op[k_end]
    for v in (start, end):
        if type(v) is not int or not 0 <= v <= _MAX_SAFE:
            raise SurfaceError(f"replace bounds must be non-negative integers, got {v!r}", seq=seq)
    shadowed = state.span(start, end)
    if shadowed is None:
        if start not in state or end not in state:
            gone = start if start not in state else end
            raise SurfaceError(f"replace bound {gone} is not on the current surface", seq=seq)
        raise SurfaceError(
            f"replace start {start} comes after end {end} on the current surface", seq=seq
        )
    if version >= 3 and etype == "assistant/message":
        raise SurfaceError("a v3 assistant/message never replaces surface nodes", seq=seq)
    if sources is None:
        raise SurfaceError(
            "a replacement must cite every shadowed node in sourceEventSeqs", seq=seq
        )
    if len(shadowed) == 1:  # a prune: one node, cited or not
        missing = set() if shadowed[0] in sources else set(shadowed)
    else:
        missing = set(shadowed).difference(sources)
    if missing:
        raise SurfaceError(
            f"sourceEventSeqs does not cover shadowed node(s) {sorted(missing)[:5]}", seq=seq
        )
    if version >= 3:
        head = state.first()
        if (
            head is not None
            and head in shadowed
            and events[head]["type"] == "system/message"
            and (etype != "system/message" or shadowed != [head] or sources != [head])
        ):
            raise SurfaceError(
                "the v3 system head (node 0) can only be replaced 1:1 by a system/message "
                "citing exactly it",
                seq=seq,
            )
    if etype == "tool/result":
        if len(shadowed) != 1 or events[shadowed[0]]["type"] != "tool/result":
            raise SurfaceError(
                "a tool/result replacement must shadow exactly one tool/result", seq=seq
            )
        if not _same_but_result_content(events[shadowed[0]]["data"], ev["data"]):
            raise SurfaceError(
                "a tool/result rewrite may change only message.content[0].content", seq=seq
            )
    return shadowed


def replay_log(events: list[dict[str, Any]], version: int, *, strict: bool = True) -> LogIndex:
    """Validate every event and replay the surface ops; raises ``SessionFormatError`` with seq.

    ``strict=False`` reads a log that breaks only the harness's optional invariants
    (enclosure, tool pairing, turn numbering) as its loader does, recording each in
    ``invariant_issues``; every format rule still refuses.
    """
    index = LogIndex(version=version, surface=SurfaceState(), strict=strict)
    replay_into(index, events, 0)
    return index


def replay_into(index: LogIndex, events: list[dict[str, Any]], start: int) -> None:
    """Continue a replay over ``events[start:]`` (used for appended batches too)."""
    version = index.version
    surface = surface_types(version)
    v2plus = version >= 2
    envelope = _ENVELOPE
    vocabulary = event_types(version)
    step_events = _STEP_EVENTS
    max_safe = _MAX_SAFE
    for i in range(start, len(events)):
        ev = events[i]
        try:  # the envelope of a well-formed event, checked in one go
            etype = ev["type"]
            t = ev["time"]
            seq = ev["seq"]
            data: Any = ev["data"]  # required, though it may be any JSON value
            n_keys = len(ev)
            ok = (
                seq == i
                and type(seq) is int
                and type(t) is int
                and type(etype) is str
                and -max_safe <= t <= max_safe
                # four keys, all four read above: exactly the required envelope
                and (
                    n_keys == 4
                    or (n_keys == 5 and "surfaceOp" in ev)  # an appended surface node
                    or (envelope.issuperset(ev) and ev.get("ignorable", True) is True)
                )
            )
        except (KeyError, TypeError):
            ok = False
        if not ok:
            _explain_envelope(ev, i)
        if etype in surface:  # every surface type is in the vocabulary
            _replay_surface(index, events, ev, i, etype, data, ev.get("surfaceOp"), v2plus)
            continue
        if etype not in vocabulary:  # unknown to this generation of the format
            if ev.get("ignorable") is True:
                index.unknown_seqs.append(i)
                continue
            raise UnknownEventType(
                f"event type {etype!r} is not in the format v{version} vocabulary and is not "
                "marked ignorable: true; this log needs a newer reader (or was written wrong)",
                seq=i,
            )
        if n_keys != 4 and (ev.get("surfaceOp") is not None or "sourceEventSeqs" in ev):
            raise _fail(f"{etype} is not a surface type and may not carry surfaceOp/sources", i)
        if etype in step_events:  # the most frequent kind (tool/call): first
            if not (
                type(data) is dict
                and index.open_step is not None
                and data.get("turn") == index.open_turn
                and data.get("step") == index.open_step
            ):
                _check_in_step(index, data, etype, i)
            if etype == "tool/call":
                cid = data.get("callId")
                call = index.pending.get(cid) if isinstance(cid, str) else None
                if call is None:
                    _invariant(
                        index,
                        "tool-pairing",
                        f"tool/call {cid!r} answers no tool-call block of this step",
                        i,
                    )
                elif call.call_seq is not None:
                    _invariant(index, "tool-pairing", f"tool/call {cid!r} logged twice", i)
                else:
                    call.call_seq = i
            elif etype == "assistant/chunk" and v2plus:
                raise _fail(f"assistant/chunk events do not exist in v{version} logs", i)
            continue
        _replay_other(index, ev, i, etype, data)


def _replay_other(index: LogIndex, ev: dict[str, Any], i: int, etype: str, data: Any) -> None:
    """An event of a known type that is neither on the surface nor inside a step."""
    if etype == "step/start":
        if not isinstance(data, dict) or data.get("turn") != index.open_turn:
            raise _fail("step/start outside its open turn", i)
        steps = index.turns[-1].steps
        if index.open_step is not None:
            raise _fail(f"step/start while step {index.open_step} is still open", i)
        if data.get("step") != len(steps) + 1:
            raise _fail(f"step/start {data.get('step')!r} where {len(steps) + 1} was expected", i)
        index.open_step = data["step"]
        steps.append((data["step"], i, None))
    elif etype == "step/end":
        if (
            not isinstance(data, dict)
            or data.get("turn") != index.open_turn
            or data.get("step") != index.open_step
            or index.open_step is None
        ):
            raise _fail("step/end without that step open", i)
        if index.pending:
            ids = ", ".join(list(index.pending)[:3])
            _invariant(
                index, "tool-pairing", f"step/end with tool call(s) still unanswered: {ids}", i
            )
            index.pending.clear()  # as the companion does: a step's calls end with it
        steps = index.turns[-1].steps
        steps[-1] = (steps[-1][0], steps[-1][1], i)
        index.open_step = None
    elif etype == "turn/start":
        turn = data.get("turn") if isinstance(data, dict) else None
        if index.open_turn is not None:
            raise _fail(f"turn/start while turn {index.open_turn} is still open", i)
        if turn != index.last_turn + 1:
            if type(turn) is not int or not 0 < turn <= _MAX_SAFE:
                raise _fail(f"turn/start turn must be a positive integer, not {turn!r}", i)
            _invariant(
                index,
                "turn-order",
                f"turn/start {turn} where {index.last_turn + 1} was expected",
                i,
            )
        index.open_turn = turn
        index.turns.append(TurnSpan(turn, i))
    elif etype == "turn/end":
        turn = data.get("turn") if isinstance(data, dict) else None
        if index.open_turn is None or turn != index.open_turn:
            raise _fail(f"turn/end {turn!r} without that turn open", i)
        if index.open_step is not None:
            raise _fail(f"turn/end while step {index.open_step} is still open", i)
        reason = data.get("reason")
        if not isinstance(reason, dict) or not isinstance(reason.get("kind"), str):
            raise _fail("turn/end needs a reason with a kind", i)
        span = index.turns[-1]
        span.end_seq, span.reason = i, reason
        index.open_turn = None
    elif etype in _TURN_EVENTS:
        if index.open_turn is None:
            _invariant(index, "enclosure", f"{etype} outside an open turn", i)
        if etype == "request/header":
            if not isinstance(data, dict) or not isinstance(data.get("header"), dict):
                raise _fail("request/header needs a header object", i)
            _check_request_config(data["header"].get("config"), i)
            _check_adapter_defaults(data["header"], i)
            if index.version >= 3:
                header = data["header"]
                if "system" in header:
                    raise _fail("a v3 request/header may not carry system", i)
                if header.get("tools") == [] or header.get("adapterDefaults") == {}:
                    raise _fail(
                        "a v3 request/header omits empty optional fields (tools: [], "
                        "adapterDefaults: {}), as the harness requires",
                        i,
                    )
            index.header_seqs.append(i)
        elif etype == "request/context":
            index.context_seqs.append(i)
    elif etype == "session/title":
        if not isinstance(data, dict) or not isinstance(data.get("title"), str):
            raise _fail("session/title needs a title string", i)
        index.title_seq = i
    elif etype == "session/end-seed":
        index.end_seed_seqs.append(i)
    elif etype == "subagent/descriptor":
        index.descriptor_seq = i
    elif etype in ("compaction/start", "compaction/summary", "compaction/end"):
        index.compaction_seqs.append(i)


def _explain_envelope(ev: Any, i: int) -> None:
    if type(ev) is not dict:
        raise _fail("an event must be a JSON object", i)
    if ev.get("seq") != i or type(ev.get("seq")) is not int:
        hint = STRIPPED_SEQ_HINT if "seq" not in ev else ""
        raise SessionFormatError(
            f"seq {ev.get('seq')!r} where {i} was expected: seqs must be contiguous from 0{hint}",
            seq=i,
        )
    if not isinstance(ev.get("type"), str):
        raise _fail("an event needs a string type", i)
    t = ev.get("time")
    if type(t) is not int or not -_MAX_SAFE <= t <= _MAX_SAFE:
        raise _fail("time must be a safe integer (epoch ms)", i)
    if "data" not in ev:
        raise _fail("an event needs data (any JSON value, but present)", i)
    if "ignorable" in ev and ev["ignorable"] is not True:
        raise _fail(f"ignorable may only be true, not {ev['ignorable']!r}", i)
    extra = sorted(set(ev) - _ENVELOPE)
    raise _fail(f"unknown envelope key(s) {extra}", i)


def _check_request_config(config: Any, seq: int) -> None:
    """The route a request/header records, as the harness's loader checks it
    (``assertCurrentLlmShape``): non-empty provider and model, and a reasoningEffort that,
    when present, is a non-empty string."""
    if (
        not isinstance(config, dict)
        or type(config.get("provider")) is not str
        or not config["provider"]
        or type(config.get("model")) is not str
        or not config["model"]
    ):
        raise _fail("request/header config needs a non-empty provider and model", seq)
    effort = config.get("reasoningEffort", "-")
    if type(effort) is not str or not effort:
        raise _fail(f"request/header has an invalid reasoningEffort {effort!r}", seq)


_ADAPTER_DEFAULTS = ("reasoningEffort", "maxTokens")


def _check_adapter_defaults(header: dict[str, Any], seq: int) -> None:
    """``adapterDefaults`` as the harness's request-header validator checks it (every
    version; it reads v0-v2 logs through it on load): an object whose only keys are
    ``reasoningEffort`` and ``maxTokens``, each ``true`` and each with its config value."""
    if "adapterDefaults" not in header:
        return
    defaults = header["adapterDefaults"]
    if not isinstance(defaults, dict):
        raise _fail(
            "request/header adapterDefaults must be an object (reasoningEffort and maxTokens "
            f"marked true), not {defaults!r}",
            seq,
        )
    config = header["config"]  # an object: checked just before
    for key, marker in defaults.items():
        if key not in _ADAPTER_DEFAULTS:
            raise _fail(
                f"request/header adapterDefaults has unexpected member {key!r}: the harness "
                f"marks only {' and '.join(_ADAPTER_DEFAULTS)} as adapter defaults",
                seq,
            )
        if marker is not True:
            raise _fail(f"request/header adapterDefaults {key} must be true, not {marker!r}", seq)
        if key not in config:
            raise _fail(
                f"request/header adapter default {key} lacks config value (config.{key})",
                seq,
            )


def _check_in_step(index: LogIndex, data: Any, etype: str, seq: int) -> None:
    if not isinstance(data, dict):
        raise _fail(f"{etype} has no data object", seq)
    if (
        index.open_step is None
        or data.get("turn") != index.open_turn
        or data.get("step") != index.open_step
    ):
        _invariant(index, "enclosure", f"{etype} outside its open step", seq)


def _replay_surface(
    index: LogIndex,
    events: list[dict[str, Any]],
    ev: dict[str, Any],
    i: int,
    etype: str,
    data: Any,
    op: Any,
    v2plus: bool,
) -> None:
    version = index.version
    raw_sources = ev.get("sourceEventSeqs")
    sources: list[int] | None
    if raw_sources is None:
        sources = None
    elif type(raw_sources) is list and len(raw_sources) == 1 and type(raw_sources[0]) is int:
        sources = raw_sources  # the common single citation, checked inline
        if not 0 <= raw_sources[0] < i:
            raise _fail("sourceEventSeqs must cite earlier events only", i)
    else:
        sources = decode_source_seqs(raw_sources, i)
    if sources is not None:
        index.source_seqs[i] = sources
    if op is None:
        raise _fail(f"{etype} is a surface type and needs surfaceOp", i)
    replacing = isinstance(op, dict)
    if not replacing and op != "append":
        raise _fail(f"surfaceOp must be 'append' or a replace object, not {op!r}", i)
    # Role/source rules the harness enforces on load.
    if etype == "user/message":
        _check_message(data, "user", i, "user/message")
        if sources is not None and not sources:
            raise _fail("sourceEventSeqs may not be empty here", i)
    elif etype == "assistant/message":
        if not replacing and not (
            type(data) is dict
            and index.open_step is not None
            and data.get("turn") == index.open_turn
            and data.get("step") == index.open_step
        ):
            _check_in_step(index, data, etype, i)
        inner = data.get("message") if isinstance(data, dict) else None
        msg = _check_message(inner, "assistant", i, "assistant/message")
        src = msg["source"]
        if (
            src.get("kind") != "model"
            or not isinstance(src.get("provider"), str)
            or not src["provider"]
            or not isinstance(src.get("model"), str)
            or not src["model"]
        ):
            raise _fail("assistant/message source must be {kind:'model', provider, model}", i)
        if v2plus:
            if sources is not None:
                raise _fail(f"a v{version} assistant/message may not carry sourceEventSeqs", i)
            if not isinstance(data.get("stream"), list):
                raise _fail(f"a v{version} assistant/message needs its stream", i)
        for block in msg["content"]:
            if isinstance(block, dict) and block.get("type") == "tool-call" and not replacing:
                cid = block.get("id")
                if not isinstance(cid, str) or cid in index.pending:
                    raise _fail(f"tool-call block id {cid!r} is missing or repeated", i)
                index.pending[cid] = PendingCall(cid, str(block.get("name")), i)
    elif etype == "tool/result":
        call_id = _tool_result_call_id(data, i, version)
        if not replacing:
            if not (
                type(data) is dict
                and index.open_step is not None
                and data.get("turn") == index.open_turn
                and data.get("step") == index.open_step
            ):
                _check_in_step(index, data, etype, i)
            call = index.pending.pop(call_id, None)
            error = data.get("error")
            code = error.get("code") if isinstance(error, dict) else None
            if call is None and code != "TOOL_NOT_STARTED":
                _invariant(
                    index,
                    "tool-pairing",
                    f"tool/result for {call_id!r}, which no open tool call expects",
                    i,
                )
            if call is not None and call.call_seq is None and code != "TOOL_NOT_STARTED":
                _invariant(
                    index,
                    "tool-pairing",
                    f"tool/result for {call_id!r} before its tool/call event",
                    i,
                )
        if sources is not None and not sources:
            raise _fail("sourceEventSeqs may not be empty here", i)
    else:  # system/message
        if not replacing and not (
            type(data) is dict
            and index.open_step is not None
            and data.get("turn") == index.open_turn
            and data.get("step") == index.open_step
        ):
            _check_in_step(index, data, etype, i)
        _check_message(
            data.get("message") if isinstance(data, dict) else None, "system", i, "system/message"
        )
    if replacing:
        try:
            shadowed = check_replace(ev, sources, events, index.surface, version)
        except SurfaceError as exc:
            raise _fail(exc.reason, i) from None
        index.surface.replace(shadowed, i)
        index.replaced[i] = shadowed
        index.shadowed_by.update(dict.fromkeys(shadowed, i))
    else:
        index.surface.append(i)
