"""Claude Code session transcripts (``~/.claude/projects/<project>/<session>.jsonl``).

The main thread is the ``uuid``/``parentUuid`` chain that ends at the file's last message
record (a ``compact_boundary`` continues through its ``logicalParentUuid``); records on other
branches, sidechains, file-history snapshots and hook notices carry no model input and are
logged as skipped provenance only. Claude Code writes one content block per assistant record;
records with the same ``message.id`` are merged back into one assistant message. Records
without a message (``progress`` and the like, Claude Code 2.1.x) are skipped where they sit
on the chain, and the chain kept. Parallel tool calls hang off sibling records: an assistant
record off the chain with an on-chain record's ``message.id`` is spliced in after it, and a
user record off the chain that holds only results for calls nothing on the chain answers goes
in right after the calling message, its results in the calls' order. A
``compact_boundary`` and the summary user record after it become a spec §10 compaction: the
whole surface after the system head is replaced by the framed checkpoint. A file made only of
``isSidechain`` records (a sub-agent transcript, ``<session>/subagents/agent-<id>.jsonl``)
imports as a subagent session; its parallel calls are spliced the same way, and its thread
may start at a record whose parent is in the main transcript (the compaction agent,
``agent-acompact-<id>.jsonl``, continues from the main thread's last record before the
boundary): the provenance of that first record names the outside parent. A tool call with
no result before the next message is answered as the harness's crash repair answers it
(``TOOL_OUTCOME_UNKNOWN``, an error result). Image and document blocks become DSH
``image``/``file`` blocks whose attachment names the source part (the bytes are not copied).
Errors name the file's full path and the line.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from .._repair import OUTCOME_UNKNOWN_TEXT
from ._anthropic import FINISH, PROVIDER, assistant_blocks, usage_of, user_items
from ._common import (
    MAX_IMPORT_BYTES,
    JsonDict,
    fail,
    get_dict,
    iso_ms,
    load_json_line,
    read_source,
)
from ._emit import ImportedLog, build_log
from ._items import (
    DEFAULT_CREATED_AT,
    AssistantItem,
    CompactItem,
    Item,
    Origin,
    ResultItem,
    SkipItem,
    UserItem,
    stable_id,
)

__all__ = ["read_claude_code"]

_MESSAGE_TYPES = frozenset({"user", "assistant", "system"})
_SUMMARY_PREFIX = "This session is being continued from a previous conversation"
_NOTICE = {"kind": "plugin", "plugin": "claude-code", "form": "notice"}

_Record = tuple[int, JsonDict]  # (1-based line, record)


def read_claude_code(
    path: str | Path, *, session_id: str | None = None, max_bytes: int = MAX_IMPORT_BYTES
) -> ImportedLog:
    """The v3 log ``ctxsdk.session.importers.from_claude_code`` makes a session of (it documents
    the arguments), built and checked as the harness checks a log on load."""
    p, data = read_source(path, max_bytes)
    name = str(p)  # errors name the whole path; provenance keeps the file name
    records = _read(data, name)
    by_uuid: dict[str, _Record] = {}
    for n, rec in records:
        if rec.get("type") in ("user", "assistant") or "uuid" in rec:
            uid = rec.get("uuid")
            if not isinstance(uid, str) or not uid:
                fail(f"{name}, line {n}", f"{rec.get('type')} record without a uuid")
            by_uuid.setdefault(uid, (n, rec))
    threads = [(n, r) for n, r in records if _kind(r) in _MESSAGE_TYPES and "uuid" in r]
    main = [(n, r) for n, r in threads if not r.get("isSidechain")]
    subagent = not main
    pool = main or threads
    if not pool:
        fail(name, "no user, assistant or system records", "is this a Claude Code transcript?")
    chain, outside = _walk(pool[-1], by_uuid, name, subagent)
    chain = _splice_results(chain, records, subagent)
    on_chain = {r["uuid"] for _, r in chain}
    notes = {chain[0][0]: {"outsideParentUuid": outside}} if outside is not None else {}
    items = _close_unanswered(_items(chain, name, notes))
    trailing: list[Item] = [
        SkipItem(_origin(r, n, name), _skip_reason(r, subagent))
        for n, r in records
        if r.get("uuid") not in on_chain
    ]
    first = chain[0][1]
    sid = first.get("sessionId") if isinstance(first.get("sessionId"), str) else None
    digest = hashlib.sha256(data).hexdigest()  # the bytes the records came from
    base = sid or stable_id("claude-code", digest)
    times = [iso_ms(r.get("timestamp"), _where(r, n, name)) for n, r in chain]
    known = [t for t in times if t is not None]
    common: dict[str, Any] = {
        "fmt": "claude-code",
        "source": p.name,
        "created_at": known[0] if known else DEFAULT_CREATED_AT,
        "cwd": first.get("cwd") if isinstance(first.get("cwd"), str) else None,
        "title": _title(records),
        "trailing": trailing,
    }
    if not subagent:
        return build_log(items, session_id=session_id or base, **common)
    agent = first.get("agentId") if isinstance(first.get("agentId"), str) else None
    # Its own UUID, not ``<parent>-agent-<id>``: an id sharing the parent's prefix would make
    # every short prefix of the parent ambiguous (``ws.open("c45af7b1")``).
    child = stable_id("claude-code", "subagent", base, agent or digest)
    return build_log(
        items,
        session_id=session_id or child,
        parent=sid,
        origin="subagent",
        delegation_depth=1,
        descriptor={"version": 2, "mode": "one-shot", "label": _agent_label(agent)},
        **common,
    )


def _agent_label(agent: str | None) -> str:
    # ``agent-acompact-<id>.jsonl``: the agent Claude Code runs to write a compaction summary
    if agent is not None and agent.startswith("acompact-"):
        return f"Claude Code compaction agent {agent}"
    return f"Claude Code agent {agent}"


def _read(data: bytes, name: str) -> list[_Record]:
    out: list[_Record] = []
    for n, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        rec = load_json_line(raw, f"{name}, line {n}", "is the line torn?")
        if not isinstance(rec, dict):
            fail(f"{name}, line {n}", "a record must be a JSON object")
        out.append((n, rec))
    return out


def _where(rec: JsonDict, n: int, name: str) -> str:
    uid = rec.get("uuid")
    return f"{name}, line {n}" + (f" (uuid {uid})" if isinstance(uid, str) else "")


def _origin(rec: JsonDict, n: int, name: str, **extra: Any) -> Origin:
    uid = rec.get("uuid")
    return Origin(uid if isinstance(uid, str) else None, _where(rec, n, name), {"line": n, **extra})


def _walk(
    leaf: _Record, by_uuid: dict[str, _Record], name: str, subagent: bool
) -> tuple[list[_Record], str | None]:
    """The thread from its root to ``leaf`` by parent links, and the parent outside the file
    its root points to, if any.

    In a sub-agent file (all records ``isSidechain``) the thread may start at a record whose
    ``parentUuid`` is a record of the main transcript: Claude Code's compaction agent
    (``agent-acompact-*.jsonl``) continues from the main thread without copying it. In a main
    transcript a parent missing from the file is refused."""
    chain: list[_Record] = []
    seen: set[str] = set()
    cur: _Record | None = leaf
    while cur is not None:
        n, rec = cur
        uid = rec["uuid"]
        if uid in seen:
            fail(_where(rec, n, name), "the parentUuid links form a cycle")
        seen.add(uid)
        chain.append(cur)
        parent = rec.get("parentUuid")
        if parent is None and rec.get("subtype") == "compact_boundary":
            logical = rec.get("logicalParentUuid")
            # A boundary whose pre-compaction part is in another file starts the thread.
            parent = logical if isinstance(logical, str) and logical in by_uuid else None
        if parent is None:
            break
        if subagent and isinstance(parent, str) and parent not in by_uuid:
            chain.reverse()
            return chain, parent
        if not isinstance(parent, str) or parent not in by_uuid:
            fail(
                _where(rec, n, name),
                f"parentUuid {parent!r} is not a record of this file",
                "the transcript is incomplete or was edited; its earlier records are missing",
            )
        cur = by_uuid[parent]
    chain.reverse()
    return chain, None


def _result_ids(rec: JsonDict) -> list[str] | None:
    """The ``tool_use_id``s of a user record made only of tool results, else None."""
    message = rec.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if rec.get("type") != "user" or not isinstance(content, list) or not content:
        return None
    ids = [b.get("tool_use_id") if isinstance(b, dict) else None for b in content]
    if not all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
        return None
    return [i for i in ids if isinstance(i, str)] or None


def _splice_results(chain: list[_Record], records: list[_Record], side: bool) -> list[_Record]:
    """Put back the sibling records of parallel tool calls.

    Claude Code writes each ``tool_use`` of one API message as its own record, and the result
    of a call is a child of that call's record, so the thread (the parent links up from the
    leaf) passes through one call's record and result only: the other calls of the message
    and their results sit on side branches. An off-thread assistant record with the
    ``message.id`` of one on the thread is spliced in after that message's last record (and
    merged into it later); an off-thread user record made only of tool results, answering
    calls on the thread that the thread does not answer, right after the call's message, its
    results ordered as the calls. Only records of the thread's own kind are spliced: main
    records into a main thread, ``isSidechain`` ones into a sub-agent file's thread (Claude
    Code streams a sub-agent's parallel calls the same way, and may even run the first call
    and write its result before the message's next ``tool_use`` record).
    """
    ends: dict[str, int] = {}  # message.id -> chain index of its last assistant record
    for i, (_, rec) in enumerate(chain):
        mid = _message_id(rec)
        if rec.get("type") == "assistant" and mid is not None:
            ends[mid] = i
    on_chain = {id(rec) for _, rec in chain}
    extra: dict[int, list[_Record]] = {}
    for n, rec in records:
        mid = _message_id(rec)
        if rec.get("type") != "assistant" or id(rec) in on_chain or _side(rec) != side:
            continue
        if mid is not None and mid in ends:
            extra.setdefault(ends[mid] + 1, []).append((n, rec))
            on_chain.add(id(rec))
    chain = _insert(chain, extra)
    calls: dict[str, int] = {}  # tool_use id -> chain index of its assistant record
    answered: set[str] = set()
    for i, (_, rec) in enumerate(chain):
        if rec.get("type") == "assistant":
            for call in _call_ids(rec):
                calls.setdefault(call, i)
        answered.update(_result_ids(rec) or [])
    hanging: dict[int, list[_Record]] = {}  # insert-before index -> records
    for n, rec in records:
        ids = _result_ids(rec)
        if id(rec) in on_chain or _side(rec) != side or not ids:
            continue
        if any(i not in calls or i in answered for i in ids):
            continue
        at = max(calls[i] for i in ids)
        mid = _message_id(chain[at][1])
        end = at + 1
        while end < len(chain):
            kind = _kind(chain[end][1])
            same = kind == "assistant" and mid is not None and _message_id(chain[end][1]) == mid
            if kind in _MESSAGE_TYPES and not same:
                break
            end += 1
        hanging.setdefault(end, []).append((n, rec))
        answered.update(ids)
    if not hanging:
        return chain
    spliced = {id(rec) for recs in hanging.values() for _, rec in recs}
    out = _insert(chain, hanging)
    order = {call: i for i, call in enumerate(calls)}

    def first_call(r: _Record) -> int:
        return min(order.get(i, len(order)) for i in _result_ids(r[1]) or [""])

    i = 0
    while i < len(out):  # a run of result records holding a spliced one: in call order
        j = i
        while j < len(out) and _result_ids(out[j][1]):
            j += 1
        if j > i and any(id(r) in spliced for _, r in out[i:j]):
            out[i:j] = sorted(out[i:j], key=first_call)
        i = max(j, i + 1)
    return out


def _insert(chain: list[_Record], extra: dict[int, list[_Record]]) -> list[_Record]:
    """``chain`` with ``extra[i]`` put before its record ``i``."""
    if not extra:
        return chain
    out: list[_Record] = []
    for i in range(len(chain) + 1):
        out += extra.get(i, [])
        if i < len(chain):
            out.append(chain[i])
    return out


def _side(rec: JsonDict) -> bool:
    return bool(rec.get("isSidechain"))


def _call_ids(rec: JsonDict) -> list[str]:
    message = rec.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [
        b["id"]
        for b in content
        if isinstance(b, dict) and b.get("type") == "tool_use" and isinstance(b.get("id"), str)
    ]


def _message_id(rec: JsonDict) -> str | None:
    message = rec.get("message")
    mid = message.get("id") if isinstance(message, dict) else None
    return mid if isinstance(mid, str) else None


def _items(chain: list[_Record], name: str, notes: dict[int, JsonDict]) -> list[Item]:
    """The thread's records as items; ``notes[line]`` goes into that record's provenance."""
    items: list[Item] = []
    model = "unknown"
    last: AssistantItem | None = None  # the assistant message later records may continue
    last_id: str | None = None
    boundary: tuple[Origin, int | None] | None = None
    for n, rec in chain:
        where = _where(rec, n, name)
        t = iso_ms(rec.get("timestamp"), where)
        kind = _kind(rec)  # a type that is not a string is no message: skipped as unknown
        note = notes.get(n, {})
        if kind not in _MESSAGE_TYPES:  # progress, attachment, …: on the chain, no model input
            items.append(SkipItem(_origin(rec, n, name, **note), str(kind), t))
            continue
        if kind == "system":
            if rec.get("subtype") == "compact_boundary":
                meta = rec.get("compactMetadata")
                boundary = (_origin(rec, n, name, compactMetadata=meta, **note), t)
            else:
                reason = f"system/{rec.get('subtype')}"
                items.append(SkipItem(_origin(rec, n, name, **note), reason, t))
            continue
        message = get_dict(rec, "message", where)
        assert message is not None  # get_dict raises when required
        origin = _origin(rec, n, name, **note)
        if boundary is not None:
            items.append(_compaction(boundary, rec, message, origin, t, model))
            boundary, last = None, None
            continue
        if kind == "assistant":
            blocks = assistant_blocks(message.get("content"), where)
            m = message.get("model")
            model = m if isinstance(m, str) and m else model
            mid = message.get("id") if isinstance(message.get("id"), str) else None
            usage = usage_of(message.get("usage"))
            finish = FINISH.get(str(message.get("stop_reason")))
            if last is not None and mid is not None and mid == last_id:
                last.blocks += blocks  # one content block per record: merge them back
                last.origins.append(origin)
                last.usage = usage or last.usage  # the last record carries the final count
                last.finish = finish or last.finish
                continue
            last = AssistantItem(rec["uuid"], blocks, [origin], PROVIDER, model, t, usage, finish)
            last_id = mid
            items.append(last)
        else:  # user
            source = _NOTICE if rec.get("isMeta") else {"kind": "user"}
            new = user_items(message.get("content"), rec["uuid"], origin, dict(source), time=t)
            if any(isinstance(i, UserItem) for i in new):
                last = None  # real input in between: a same-id record later is a new message
            items += new
    if boundary is not None:
        fail(boundary[0].where, "compact_boundary is not followed by its summary record")
    return items


def _close_unanswered(items: list[Item]) -> list[Item]:
    """Answer, as the harness's crash repair does, each tool call that got no result before
    the next message: an error result with the harness's ``TOOL_OUTCOME_UNKNOWN`` text (the
    call was made; what it did is not recorded), put right after the call's last result.

    Claude Code writes a result for a call the user interrupted (``[Request interrupted by
    user for tool use]``); a call with none was cut off by a crash or a killed process, or its
    result record was lost. Calls still open at the end of the transcript stay open: the log
    ends inside its turn and crash repair closes it (``Session.repaired()``)."""
    out: list[Item] = []
    pending: dict[str, AssistantItem] = {}
    for item in items:
        if isinstance(item, ResultItem):
            pending.pop(item.call_id, None)
        elif not isinstance(item, SkipItem):
            for call_id, call in pending.items():
                origin = Origin(
                    None,
                    call.origins[-1].where,
                    {"synthetic": "no tool_result in the transcript", "callId": call_id},
                )
                text = [{"type": "text", "text": OUTCOME_UNKNOWN_TEXT}]
                result_id = f"interrupted-tool-result-{call_id}"
                out.append(ResultItem(result_id, call_id, text, origin, item.time, True))
            pending = {}
            if isinstance(item, AssistantItem):
                calls = [b["id"] for b in item.blocks if b.get("type") == "tool-call"]
                pending = dict.fromkeys(calls, item)
        out.append(item)
    return out


def _compaction(
    boundary: tuple[Origin, int | None],
    rec: JsonDict,
    message: JsonDict,
    origin: Origin,
    t: int | None,
    model: str,
) -> CompactItem:
    start, t_start = boundary
    content = message.get("content")
    if isinstance(content, list):
        text = "".join(
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    else:
        text = content if isinstance(content, str) else ""
    if rec.get("type") != "user" or not (
        rec.get("isCompactSummary") or text.startswith(_SUMMARY_PREFIX)
    ):
        fail(start.where, "compact_boundary is not followed by its summary record")
    return CompactItem(
        compaction_id=str(start.record),
        summary_id=rec["uuid"],
        summary_text=text,
        start=start,
        summary=origin,
        provider=PROVIDER,
        model=model,
        time=t_start,
        summary_time=t,
    )


def _kind(rec: JsonDict) -> str | None:
    kind = rec.get("type")
    return kind if isinstance(kind, str) else None


def _skip_reason(rec: JsonDict, subagent: bool) -> str:
    kind = _kind(rec)
    if kind not in _MESSAGE_TYPES:
        return str(kind)
    if rec.get("isSidechain") and not subagent:
        return "sidechain"
    return "off-thread"


def _title(records: list[_Record]) -> tuple[str, JsonDict] | None:
    """Claude Code's own session title: the latest ``summary`` record."""
    titles = [r["summary"] for _, r in records if r.get("type") == "summary"]
    titles = [t for t in titles if isinstance(t, str) and t.strip()]
    return (titles[-1], {"kind": "provider", "provider": PROVIDER}) if titles else None
