"""Aider chat histories (``.aider.chat.history.md``) and aider's website transcripts.

The markdown aider appends holds, line by line: ``# aider chat started at <time>`` (a new
aider run), ``#### <text>`` (what the user typed; consecutive lines are one message),
``> <text>`` (aider's own terminal output) and everything else (the model's reply). A website
page (``aider-website__*.md``) wraps the same lines in ``<div class="chat-transcript">``;
only what is inside those divs is read, and the page's ``# heading`` is the title.

The mapping (one DSH session for the whole file, a turn per user message):

- a ``####`` block is a user prompt (slash commands and y/n answers too: the user typed them);
- a reply is an assistant message; ``<thinking-content-…>`` sections are reasoning blocks;
  each edit block (``<<<<<<< SEARCH``/``=======``/``>>>>>>> REPLACE``, or the 2023
  ``ORIGINAL``/``UPDATED``) is an ``edit`` tool call with ``{path, search, replace}``;
- aider's output after a reply is the result of its edits: ``Applied edit to <path>`` for a
  call on that path, else the edit-failure report (an error result), else a result saying the
  history records no outcome (aider logs none when an edit is declined or interrupted);
- aider's output after a ``/run`` or ``/test`` command, and aider's error reports (a failed
  model call), are user messages with source ``{kind: plugin, plugin: aider, form: relay}``
  that never open a turn; the rest of its output (startup banner, token counts, commits,
  prompts it asked) never reached the model and is kept as provenance only (a banner's
  model lines, "Main model: X with diff edit format", "Weak model: Y", as ``banner``);
- each ``# aider chat started at`` header gives the time of what follows (zone-less, read as
  UTC) and is kept as provenance with the aider run's number; the session ends with the file.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from ._common import (
    MAX_IMPORT_BYTES,
    TITLE_BYTES,
    JsonDict,
    cut_title,
    fail,
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
)

__all__ = ["read_aider"]

PROVIDER = "aider"  # the history names the model (with litellm's prefix), not the provider
_RELAY = {"kind": "plugin", "plugin": "aider", "form": "relay"}
_HEADER = re.compile(r"^# aider chat started at (?P<at>\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d)\s*$")
_DIV_OPEN = re.compile(r'^\s*<div class="chat-transcript"')
_MODEL = re.compile(r"^(?:Main )?[Mm]odel: (?P<model>\S+)")
_BANNER_LINE = re.compile(r"^(?:Main |Weak |Editor )?[Mm]odel: \S")
_THINK_OPEN = re.compile(r"^<thinking-content-[0-9a-f]+>\s*$")
_THINK_CLOSE = re.compile(r"^</thinking-content-[0-9a-f]+>\s*$")
_EDIT_OPEN = re.compile(r"^<{7} (SEARCH|ORIGINAL)\s*$")
_EDIT_MID = re.compile(r"^={7}\s*$")
_EDIT_CLOSE = re.compile(r"^>{7} (REPLACE|UPDATED)\s*$")
_APPLIED = re.compile(r"^Applied edit to (?P<path>.+?)\s*$")
_EDIT_FAILED = ("SEARCH/REPLACE block failed", "did not conform to the edit format")
_ERROR = re.compile(r"^(?:litellm\.\w+|\w*Error|\w*Exception)\b|^Traceback ")
_RELAYED_COMMANDS = ("/run", "/test")


@dataclass
class _Block:
    """Consecutive lines of one kind: ``user`` (####), ``output`` (>), ``reply``, ``header``."""

    kind: str
    line: int  # 1-based line of its first line
    lines: list[str] = field(default_factory=list)


def read_aider(
    path: str | Path,
    *,
    session_id: str | None = None,
    model: str | None = None,
    max_bytes: int = MAX_IMPORT_BYTES,
) -> ImportedLog:
    """The v3 log ``ctxsdk.session.importers.from_aider`` makes a session of (it documents
    the arguments), built and checked as the harness checks a log on load."""
    p, data = read_source(path, max_bytes)
    name = p.name
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        fail(f"{name}, line {line}", f"not UTF-8 text ({exc.reason} at byte {exc.start})")
    lines = [ln.rstrip("\r\n").removesuffix("  ") for ln in text.splitlines()]
    page_title, keep = _page(lines)
    if all(keep) and not any(_HEADER.match(ln) for ln in lines):
        fail(
            name,
            "not an aider chat history: no '# aider chat started at' line and no "
            '<div class="chat-transcript">',
            "pass a .aider.chat.history.md file or an aider website transcript",
        )
    blocks = _blocks(lines, keep)
    prefix = f"aider:{p.stem}"
    items = _Reader(name, prefix, model).read(blocks)
    title = page_title or _title(blocks) or p.stem
    last = next((i for i in reversed(items) if not isinstance(i, SkipItem)), None)
    # aider never answers its own edit reports: a history that ends after the model's reply
    # (and what aider did with its edits) ended the turn; an unanswered prompt stays open
    final = {"kind": "completed"} if isinstance(last, AssistantItem | ResultItem) else None
    return build_log(
        items,
        fmt="aider",
        source=name,
        session_id=session_id or prefix,
        created_at=_first_time(blocks, name),
        title=(cut_title(title, TITLE_BYTES), {"kind": "fallback"}),
        final_reason=final,
    )


def _page(lines: list[str]) -> tuple[str | None, list[bool]]:
    """For a website page (front matter or chat-transcript divs): its ``# heading`` and which
    lines are inside a chat-transcript div. A plain history keeps every line."""
    if not any(_DIV_OPEN.match(ln) for ln in lines):
        return None, [True] * len(lines)
    keep, inside, title = [], False, None
    for ln in lines:
        if _DIV_OPEN.match(ln):
            inside = True
            keep.append(False)
        elif inside and ln.strip() == "</div>":
            inside = False
            keep.append(False)
        else:
            keep.append(inside)
            if not inside and title is None and ln.startswith("# "):
                title = ln[2:].strip()
    return title, keep


def _blocks(lines: list[str], keep: list[bool]) -> list[_Block]:
    """The lines grouped into blocks; blank lines belong to the reply they sit in."""
    out: list[_Block] = []
    code = _edit_bodies(lines)
    for i, (ln, kept) in enumerate(zip(lines, keep, strict=True), start=1):
        if code[i - 1]:
            kind, body = "reply", ln  # a '> ' or '####' line of the edited code is code
            if out and out[-1].kind == kind:
                out[-1].lines.append(body)
            else:
                out.append(_Block(kind, i, [body]))
            continue
        if not kept:
            if out and out[-1].kind == "reply":
                out.append(_Block("gap", i))  # a reply never spans two transcript divs
            continue
        if _HEADER.match(ln):
            kind, body = "header", ln
        elif ln.startswith("####"):
            kind, body = "user", ln[4:].removeprefix(" ")
        elif ln.startswith("> ") or ln == ">":
            kind, body = "output", ln[1:].removeprefix(" ")
        else:
            kind, body = "reply", ln
        if out and out[-1].kind == kind and kind != "header":
            out[-1].lines.append(body)
        else:
            out.append(_Block(kind, i, [body]))
    return _failure_reports([b for b in out if b.kind != "gap"])


# aider's report of the edit blocks that failed to match: its first line is output ("> # 1
# SEARCH/REPLACE block failed to match!"); the rest, written as plain markdown, echoes each
# failed block under a "## SearchReplaceNoExactMatch: …" heading and ends with the rule the
# model is reminded of (and, when others applied, what not to re-send).
_REPORT_HEAD = re.compile(r"^## \w+: This SEARCH block failed to exactly match lines in \S")
_REPORT_END = re.compile(r"^The SEARCH section must exactly match an existing block of lines\b")
_REPORT_TAIL = re.compile(
    r"^(?:# The other \d+ SEARCH/REPLACE blocks? (?:was|were) applied successfully\."
    r"|Don't re-send them\.|Just reply with fixed versions of the blocks? above that failed)"
)


def _failure_reports(blocks: list[_Block]) -> list[_Block]:
    """The plain-markdown part of aider's edit-failure report joined to the output line
    that opens it: it is aider's message to the model (the failed blocks echoed, the lines
    they may have meant), not a reply whose echoed blocks are new edits. A report without
    its closing rule (a cut history) is left as it was read."""
    out: list[_Block] = []
    for b in blocks:
        prev = out[-1] if out else None
        if b.kind != "reply" or prev is None or prev.kind != "output":
            out.append(b)
            continue
        if not any(_EDIT_FAILED[0] in ln for ln in prev.lines):
            out.append(b)
            continue
        start = next((i for i, ln in enumerate(b.lines) if ln.strip()), len(b.lines))
        end = next((i for i, ln in enumerate(b.lines) if _REPORT_END.match(ln)), None)
        if start == len(b.lines) or not _REPORT_HEAD.match(b.lines[start]) or end is None:
            out.append(b)
            continue
        end += 1
        while end < len(b.lines) and (not b.lines[end].strip() or _REPORT_TAIL.match(b.lines[end])):
            end += 1
        while end > start and not b.lines[end - 1].strip():
            end -= 1  # blank lines after the report belong to the reply that follows
        prev.lines.extend(b.lines[:end])
        if any(ln.strip() for ln in b.lines[end:]):
            out.append(_Block("reply", b.line + end, b.lines[end:]))
    return out


def _edit_bodies(lines: list[str]) -> list[bool]:
    """Which lines are inside a complete edit block (its marker lines too): there a line
    that looks like aider's output or a user line is part of the edited text."""
    out = [False] * len(lines)
    i = 0
    while i < len(lines):
        if _EDIT_OPEN.match(lines[i]):
            for j in range(i + 1, len(lines)):
                if _EDIT_OPEN.match(lines[j]) or _HEADER.match(lines[j]):
                    break
                if _EDIT_CLOSE.match(lines[j]):
                    out[i : j + 1] = [True] * (j + 1 - i)
                    i = j
                    break
        i += 1
    return out


class _Reader:
    """Blocks to items, pairing each edit call with what aider reported about it."""

    def __init__(self, name: str, prefix: str, model: str | None) -> None:
        self.name = name
        self.prefix = prefix
        self.fixed_model = model
        self.model = model or "unknown"
        self.items: list[Item] = []
        self.pending: list[tuple[str, str, str]] = []  # (call id, path, where)
        self.last_user = ""
        self.run = 0
        self.last_block = False

    def read(self, blocks: list[_Block]) -> list[Item]:
        for k, b in enumerate(blocks):
            where = f"{self.name}, line {b.line}"
            self.last_block = k == len(blocks) - 1
            if b.kind != "output":
                self._settle_calls(None, where)
            if b.kind == "header":
                self.run += 1
                at = _HEADER.match(b.lines[0])
                if at is None:  # blocks are grouped by this very pattern
                    fail(where, "not a '# aider chat started at' line")
                extra = {"line": b.line, "run": self.run, "startedAt": at["at"]}
                self.items.append(
                    SkipItem(Origin(b.line, where, extra), "aider run start", _ms(at["at"], where))
                )
            elif b.kind == "user":
                self._user(b, where)
            elif b.kind == "reply":
                self._reply(b, where)
            else:
                self._output(b, where)
        self._settle_calls(None, f"{self.name}, the end of the file")
        return self.items

    def _user(self, b: _Block, where: str) -> None:
        text = "\n".join(b.lines).strip("\n")
        origin = Origin(b.line, where, {"line": b.line})
        if not text.strip():
            self.items.append(SkipItem(origin, "empty user input"))
            return
        self.items.append(
            UserItem(f"{self.prefix}:{b.line}", text_blocks(text), {"kind": "user"}, origin)
        )
        self.last_user = text

    def _reply(self, b: _Block, where: str) -> None:
        lines = b.lines
        while lines and not lines[-1].strip():
            lines = lines[:-1]
        start = 0
        while start < len(lines) and not lines[start].strip():
            start += 1
        if start == len(lines):
            return  # only blank lines between blocks
        blocks, calls = self._reply_blocks(lines[start:], b.line + start)
        origin = Origin(b.line + start, where, {"line": b.line + start})
        self.items.append(
            AssistantItem(f"{self.prefix}:{b.line + start}", blocks, [origin], PROVIDER, self.model)
        )
        self.pending = calls
        self.last_user = ""

    def _reply_blocks(
        self, lines: list[str], first: int
    ) -> tuple[list[JsonDict], list[tuple[str, str, str]]]:
        """The reply as text, reasoning and ``edit`` tool-call blocks, in the order written."""
        out: list[JsonDict] = []
        calls: list[tuple[str, str, str]] = []
        text: list[str] = []

        def flush(kind: str = "text") -> None:
            body = "\n".join(text).strip("\n")
            if body.strip():
                out.append({"type": kind, "text": body})
            text.clear()

        i = 0
        while i < len(lines):
            ln = lines[i]
            where = f"{self.name}, line {first + i}"
            if _THINK_OPEN.match(ln):
                flush()
                j = i + 1
                while j < len(lines) and not _THINK_CLOSE.match(lines[j]):
                    j += 1
                text.extend(lines[i + 1 : j])
                flush("reasoning")
                i = j + 1
                continue
            if _EDIT_OPEN.match(ln):
                mid = end = None
                for j in range(i + 1, len(lines)):
                    if mid is None and _EDIT_MID.match(lines[j]):
                        mid = j
                    elif mid is not None and _EDIT_CLOSE.match(lines[j]):
                        end = j
                        break
                if (mid is None or end is None) and not self.last_block:
                    text.append(ln)  # a reply cut off mid-edit (^C): aider applied nothing
                    i += 1
                    continue
                if mid is None or end is None:
                    fail(
                        where,
                        f"edit block {ln.strip()!r} has no '=======' and closing "
                        "'>>>>>>> REPLACE/UPDATED' line in its reply",
                        "the file may be truncated; an edit block must be complete",
                    )
                path = _edit_path(lines, i, text)
                # the path line (before the fence, or inside it in 2023) is the argument
                if text and path and text[-1].strip() == path:
                    text.pop()
                elif len(text) > 1 and path and text[-2].strip() == path:
                    del text[-2]
                flush()
                cid = f"{self.prefix}:{first + i}"
                args = {
                    "path": path,
                    "search": "\n".join(lines[i + 1 : mid]),
                    "replace": "\n".join(lines[mid + 1 : end]),
                }
                out.append(
                    {
                        "type": "tool-call",
                        "id": cid,
                        "name": "edit",
                        "arguments": json.dumps(args, ensure_ascii=False),
                    }
                )
                calls.append((cid, path, where))
                i = end + 1
                continue
            text.append(ln)
            i += 1
        flush()
        return out, calls

    def _output(self, b: _Block, where: str) -> None:
        body = "\n".join(b.lines).strip("\n")
        origin = Origin(b.line, where, {"line": b.line, "lines": len(b.lines)})
        for ln in b.lines:
            m = _MODEL.match(ln)
            if m and self.fixed_model is None:
                self.model = m["model"]
        if self.pending:
            self._settle_calls(b, where)
            return
        command = self.last_user.split(maxsplit=1)[0] if self.last_user.strip() else ""
        if command in _RELAYED_COMMANDS:
            self.items.append(
                UserItem(
                    f"{self.prefix}:{b.line}", text_blocks(body), dict(_RELAY), origin, prompt=False
                )
            )
        elif any(_ERROR.match(ln) for ln in b.lines):
            source = {**_RELAY, "error": True}
            self.items.append(
                UserItem(f"{self.prefix}:{b.line}", text_blocks(body), source, origin, prompt=False)
            )
        else:
            # the banner's model lines stay readable: the run's settings are read from them
            banner = [ln for ln in b.lines if _BANNER_LINE.match(ln)]
            if banner:
                origin = Origin(b.line, where, {**origin.extra, "banner": banner})
            self.items.append(SkipItem(origin, "aider output not sent to the model"))

    def _settle_calls(self, b: _Block | None, where: str) -> None:
        """The results of the pending edit calls, from aider's output block ``b`` (None: no
        output followed the reply)."""
        if not self.pending:
            return
        lines = b.lines if b is not None else []
        applied = {_norm(m["path"]) for ln in lines if (m := _APPLIED.match(ln)) is not None}
        failed = any(any(f in ln for f in _EDIT_FAILED) for ln in lines)
        body = "\n".join(lines).strip("\n")
        for cid, path, _ in self.pending:
            rid = f"{cid}:result"
            line = b.line if b is not None else None
            origin = Origin(line, where, {"line": line, "call": cid})
            if _norm(path) in applied:
                self.items.append(
                    ResultItem(rid, cid, text_blocks(f"Applied edit to {path}"), origin)
                )
            elif failed:
                self.items.append(ResultItem(rid, cid, text_blocks(body), origin, is_error=True))
            else:
                note = "the chat history records no outcome for this edit"
                self.items.append(ResultItem(rid, cid, text_blocks(note), origin))
        self.pending = []
        if b is not None:
            self.items.append(
                SkipItem(Origin(b.line, where, {"line": b.line}), "aider edit report")
            )


def _edit_path(lines: list[str], i: int, before: list[str]) -> str:
    """The file an edit block names: the line before ``<<<<<<<`` (2023 format: inside the
    fence), else the line before the fence (current format)."""
    prev = lines[i - 1].strip() if i > 0 else ""
    if prev and not prev.startswith("```"):
        return prev
    if prev.startswith("```") and i > 1:
        cand = lines[i - 2].strip()
        if cand and not cand.startswith("```"):
            return cand
    return ""


def _norm(path: str) -> str:
    return path.strip().strip("`").replace("\\", "/")


def _ms(stamp: str, where: str) -> int:
    try:
        dt = datetime.fromisoformat(stamp)
    except ValueError:
        fail(where, f"session start time {stamp!r} is not a date and time")
    return round(dt.replace(tzinfo=UTC).timestamp() * 1000)


def _first_time(blocks: list[_Block], name: str) -> int:
    for b in blocks:
        if b.kind == "header":
            m = _HEADER.match(b.lines[0])
            if m is not None:
                return _ms(m["at"], f"{name}, line {b.line}")
    return DEFAULT_CREATED_AT


def _title(blocks: list[_Block]) -> str | None:
    """The first prompt that states a task: not a slash command, an answer to aider's own
    question, or a greeting of fewer than three words."""
    prompts = [" ".join(" ".join(b.lines).split()) for b in blocks if b.kind == "user"]
    for text in prompts:
        if text and not text.startswith("/") and "(Y)es" not in text and len(text.split()) >= 3:
            return text
    return next((t for t in prompts if t), None)
