"""Gemini CLI chat files (``~/.gemini/tmp/<projectHash>/chats/session-*.json``).

One JSON object: ``sessionId``, ``startTime``, ``messages``. A ``user`` message is a prompt; a
``gemini`` message is one model message: its ``thoughts`` become reasoning blocks, its
``content`` text, its ``toolCalls`` tool calls (``args`` as compact JSON). Gemini CLI stores
each call's result with the call itself (``result``: the ``functionResponse`` parts sent
back to the model), so each call is followed by its tool result, paired by the call id. A
call that was cancelled or failed without a recorded response is answered with an error
result (the model was told it failed); a call with no result at the very end of the file
is left open for crash repair, and one in the middle is refused, as in every importer.

``info``, ``warning`` and ``error`` messages are the CLI's notices to the person, never
model input: they are logged as skipped provenance with their text. An ``error`` after the
last prompt (the model call failed, no reply came) ends the session's last turn with
``error``. A sub-agent (``delegate_to_agent``) ran out of this file: its call and its
reported result are kept like any other tool call.

The title is the chat's own ``summary`` when Gemini CLI wrote one, else the first prompt
that states a task (not a short command such as ``show tools`` or ``/stats``).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from ._common import (
    MAX_IMPORT_BYTES,
    TITLE_BYTES,
    JsonDict,
    content_text,
    cut_title,
    fail,
    iso_ms,
    json_arguments,
    media_block,
    opt_str,
    parse_json,
    read_source,
    text_blocks,
)
from ._emit import ImportedLog, build_log
from ._items import (
    DEFAULT_CREATED_AT,
    AssistantItem,
    Item,
    Origin,
    ResultItem,
    SkipItem,
    UserItem,
    stable_id,
)

__all__ = ["read_gemini_cli"]

PROVIDER = "google"  # Gemini CLI talks to the Gemini API (or Vertex AI); the file does not say
_NOTICES = frozenset({"info", "warning", "error"})
_FAILED = frozenset({"error", "cancelled"})  # statuses whose missing result is an error result
_TASK_WORDS = 3  # a prompt shorter than this is a command ("show tools"), not the task


def read_gemini_cli(
    path: str | Path, *, session_id: str | None = None, max_bytes: int = MAX_IMPORT_BYTES
) -> ImportedLog:
    """The v3 log ``ctxsdk.session.importers.from_gemini_cli`` makes a session of (it documents
    the arguments), built and checked as the harness checks a log on load."""
    p, data = read_source(path, max_bytes)
    name = p.name
    doc = parse_json(data, name)
    messages = doc.get("messages") if isinstance(doc, dict) else None
    if not isinstance(doc, dict) or not isinstance(messages, list):
        fail(
            name,
            "not a Gemini CLI chat file: it needs one JSON object with a 'messages' list",
            "Gemini CLI writes chats as ~/.gemini/tmp/<project>/chats/session-*.json",
        )
    items: list[Item] = []
    last_kind: str | None = None  # the last user/gemini message, for how the session ended
    failure: JsonDict | None = None
    for i, raw in enumerate(messages):
        where = _where(name, i, raw)
        if not isinstance(raw, dict):
            fail(where, "a message must be an object")
        kind = raw.get("type")
        mid = raw.get("id")
        if not isinstance(mid, str) or not mid:
            fail(where, "a message needs a string 'id'")
        t = iso_ms(raw.get("timestamp"), where)
        origin = Origin(mid, where, {"index": i, "type": kind})
        if kind == "user":
            blocks = _content(raw.get("content"), where, origin)
            items.append(UserItem(mid, blocks, {"kind": "user"}, origin, t))
            last_kind, failure = kind, None
        elif kind == "gemini":
            items += _gemini(raw, mid, where, origin, t, i)
            last_kind, failure = kind, None
        elif isinstance(kind, str) and kind in _NOTICES:
            text = content_text(raw.get("content"), where)
            extra = {**origin.extra, "content": text}
            items.append(SkipItem(Origin(mid, where, extra), f"gemini-cli {kind} notice", t))
            if kind == "error" and last_kind == "user":
                failure = {"kind": "error", "error": {"message": text, "code": "gemini-cli"}}
        else:
            fail(
                where,
                f"unknown message type {kind!r}",
                "types are user, gemini, info, warning, error",
            )
    sid = doc.get("sessionId")
    base = (
        sid
        if isinstance(sid, str) and sid
        else stable_id("gemini-cli", hashlib.sha256(data).hexdigest())
    )
    kept = {k: doc[k] for k in ("projectHash", "startTime", "lastUpdated") if k in doc}
    meta = SkipItem(Origin("session", f"{name}, session", kept), "chat metadata")
    start = iso_ms(doc.get("startTime"), f"{name}, startTime")
    times = [i.time for i in items if i.time is not None]
    created = start if start is not None else times[0] if times else DEFAULT_CREATED_AT
    return build_log(
        items,
        fmt="gemini-cli",
        source=name,
        session_id=session_id or base,
        created_at=created,
        final_reason=failure,
        trailing=[meta],
        title=_title(doc, items, p.stem),
    )


def _where(name: str, i: int, raw: Any) -> str:
    mid = raw.get("id") if isinstance(raw, dict) else None
    return f"{name}, messages[{i}]" + (f" (id {mid})" if isinstance(mid, str) else "")


def _content(content: Any, where: str, origin: Origin) -> list[JsonDict]:
    """A user message's content as blocks: text, plus the media parts Gemini CLI can send."""
    if content is None or isinstance(content, str):
        return text_blocks(content or "")
    if not isinstance(content, list):
        fail(where, "content must be a string or a list of parts")
    out: list[JsonDict] = []
    for k, part in enumerate(content):
        out += _part(part, f"{where}, content[{k}]", [origin.record, k])
    return out


def _part(part: Any, where: str, key: Any) -> list[JsonDict]:
    """One Gemini API part (``text``, ``inlineData``, ``fileData``) as DSH blocks."""
    if isinstance(part, str):
        return text_blocks(part)
    if not isinstance(part, dict):
        fail(where, "a part must be an object or a string")
    if isinstance(part.get("text"), str):
        return text_blocks(part["text"])
    for field, url_key in (("inlineData", None), ("fileData", "fileUri")):
        media = part.get(field)
        if isinstance(media, dict):
            mime = media.get("mimeType") if isinstance(media.get("mimeType"), str) else None
            url = media.get(url_key) if url_key and isinstance(media.get(url_key), str) else None
            kind = "image" if mime and mime.startswith("image/") else "file"
            return [media_block(kind, url, mime, key)]
    fail(where, "a part needs text, inlineData or fileData")


def _gemini(
    raw: JsonDict, mid: str, where: str, origin: Origin, t: int | None, i: int
) -> list[Item]:
    blocks = _thoughts(raw.get("thoughts"), where)
    blocks += text_blocks(content_text(raw.get("content"), where))
    calls = raw.get("toolCalls")
    if calls is None:
        calls = []
    if not isinstance(calls, list):
        fail(where, "'toolCalls' must be a list")
    results: list[Item] = []
    for k, call in enumerate(calls):
        at = f"{where}, toolCalls[{k}]"
        if not isinstance(call, dict):
            fail(at, "a tool call must be an object")
        cid, fname = call.get("id"), call.get("name")
        if not isinstance(cid, str) or not cid or not isinstance(fname, str) or not fname:
            fail(at, "a tool call needs a string 'id' and 'name'")
        at = f"{at} (id {cid})"
        args = call.get("args", {})
        if not isinstance(args, dict | str):
            fail(at, "'args' must be an object")
        blocks.append(
            {"type": "tool-call", "id": cid, "name": fname, "arguments": json_arguments(args)}
        )
        result = _result(call, cid, at, i, k, iso_ms(call.get("timestamp"), at))
        if result is not None:
            results.append(result)
    named = raw.get("model")
    model = named if isinstance(named, str) and named else "unknown"
    usage = _usage(raw.get("tokens"))
    return [AssistantItem(mid, blocks, [origin], PROVIDER, model, t, usage), *results]


def _thoughts(thoughts: Any, where: str) -> list[JsonDict]:
    """Each thought summary (``subject`` + ``description``) as one reasoning block, written as
    Gemini streamed it: the subject in bold, then the text."""
    if thoughts is None:
        return []
    if not isinstance(thoughts, list):
        fail(where, "'thoughts' must be a list")
    out: list[JsonDict] = []
    for k, th in enumerate(thoughts):
        if not isinstance(th, dict):
            fail(f"{where}, thoughts[{k}]", "a thought must be an object")
        subject = th.get("subject") if isinstance(th.get("subject"), str) else ""
        body = th.get("description") if isinstance(th.get("description"), str) else ""
        text = f"**{subject}**\n\n{body}" if subject and body else subject or body
        if text:
            out.append({"type": "reasoning", "text": text})
    return out


def _result(call: JsonDict, cid: str, at: str, i: int, k: int, t: int | None) -> ResultItem | None:
    """The tool result recorded with ``call``; None when none was recorded and the call did
    not fail (it was still running when the file was written)."""
    status = opt_str(call, "status", at)
    extra: JsonDict = {"index": i, "toolCall": k, "status": status}
    args = call.get("args")
    if call.get("name") == "delegate_to_agent" and isinstance(args, dict):
        extra["agent"] = args.get("agent_name")  # the sub-agent that ran out of this file
    origin = Origin(cid, at, extra)
    rid = f"{cid}#result"
    raw = call.get("result")
    is_error = status in _FAILED
    if raw is None or raw == []:
        if not is_error:
            return None
        shown = call.get("resultDisplay")
        text = shown if isinstance(shown, str) and shown.strip() else f"(tool call {status})"
        return ResultItem(rid, cid, text_blocks(text), origin, t, is_error=True)
    parts = raw if isinstance(raw, list) else [raw]
    blocks: list[JsonDict] = []
    for n, part in enumerate(parts):
        pat = f"{at}, result[{n}]"
        resp = part.get("functionResponse") if isinstance(part, dict) else None
        if resp is None:
            blocks += _part(part, pat, [cid, n])
            continue
        if not isinstance(resp, dict):
            fail(pat, "'functionResponse' must be an object")
        rid_of = resp.get("id")
        if rid_of is not None and rid_of != cid:
            fail(pat, f"functionResponse answers call {rid_of!r}, not this call {cid!r}")
        text, failed = _response_text(resp.get("response"), pat)
        blocks += text_blocks(text)
        is_error = is_error or failed
    return ResultItem(rid, cid, blocks, origin, t, is_error=is_error)


def _response_text(response: Any, where: str) -> tuple[str, bool]:
    """A ``functionResponse.response`` as text and whether it reports an error: ``output`` or
    ``error`` as written, anything else as compact JSON."""
    if isinstance(response, dict):
        if isinstance(response.get("error"), str):
            return response["error"], True
        if isinstance(response.get("output"), str) and len(response) == 1:
            return response["output"], False
    if response is None:
        return "", False
    if not isinstance(response, dict):
        fail(where, "functionResponse.response must be an object")
    return json_arguments(response), False


def _usage(tokens: Any) -> JsonDict | None:
    """Gemini token counts as DSH ``TokenUsage``: ``input`` includes the cached part and
    ``output`` excludes the thoughts, while DSH buckets are disjoint and output counts all."""
    if not isinstance(tokens, dict):
        return None
    counts = {k: v for k, v in tokens.items() if type(v) is int and v >= 0}
    if "input" not in counts or "output" not in counts:
        return None
    cached = min(counts.get("cached", 0), counts["input"])
    thoughts = counts.get("thoughts", 0)
    out: JsonDict = {
        "inputTokens": counts["input"] - cached,
        "outputTokens": counts["output"] + thoughts,
    }
    if cached:
        out["cacheReadTokens"] = cached
    if thoughts:
        out["reasoningTokens"] = thoughts
    return out


def _title(doc: JsonDict, items: list[Item], stem: str) -> tuple[str, JsonDict]:
    """The chat's ``summary``, else the first prompt that states a task (see the module
    docstring), cut to 80 bytes."""
    summary = doc.get("summary")
    if isinstance(summary, str) and summary.strip():
        source = {"kind": "provider", "provider": "gemini-cli"}
        return cut_title(" ".join(summary.split()), TITLE_BYTES), source
    prompts = [
        " ".join("".join(b["text"] for b in i.blocks if b.get("type") == "text").split())
        for i in items
        if isinstance(i, UserItem)
    ]
    prompts = [p for p in prompts if p]
    tasks = [p for p in prompts if not p.startswith("/") and len(p.split()) >= _TASK_WORDS]
    title = (tasks or prompts or [stem])[0]
    return cut_title(title, TITLE_BYTES), {"kind": "fallback"}
