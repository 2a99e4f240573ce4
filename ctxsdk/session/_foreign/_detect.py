"""``detect_format``: which agent wrote a file, told from a bounded prefix of its bytes.

Only the content decides, never the file name: a DSH log starts with its ``session`` header
(or is zstd-compressed, or is a session directory); a Claude Code transcript has records
with ``parentUuid`` (or ``file-history-snapshot`` / ``summary`` records); a Codex rollout has
``{timestamp, type: session_meta | response_item | …, payload}`` records; a Gemini CLI chat
is an object with ``sessionId`` and ``projectHash`` / ``startTime``; an OpenHands trajectory a
list of events with ``source`` and ``action`` / ``observation``; a mini-swe-agent trajectory
an object with ``info.mini_version`` or ``trajectory_format: mini-swe-agent…``; a SWE-agent
trajectory an object with ``trajectory`` or ``history`` and ``environment``; an aider history
markdown with a ``# aider chat started at`` line (or an aider transcript page's
``<div class="chat-transcript">``); LoCoMo a list of samples with ``sample_id`` and
``conversation``; OpenAI and Anthropic message lists a list (or ``{messages}`` object, or
JSON lines) of ``{role, content}`` messages, Anthropic when a block or key only Anthropic
has (``tool_use``, ``tool_result``, a top-level ``system``, ``input_schema`` tools) is
seen, OpenAI otherwise.

At most ``DETECT_BYTES`` (1 MiB, of the decompressed text for zstd) are read: a JSON document
longer than that is read leniently (what its prefix holds, with the value it was cut in
kept as far as it goes), and the top-level keys of every format come early. A file that
cannot be classified raises ``ImportFormatError`` saying where, what was seen, the formats
known, and how to name one.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from pathlib import Path
from typing import Any, Final, NoReturn

from ...errors import CtxError, ImportFormatError, NotFound, Unreadable
from .._codec import is_session_file_name
from .._files import open_regular_file

__all__ = ["DETECTABLE", "DETECT_BYTES", "detect_format", "scripted_input_todo"]

DETECT_BYTES: Final = 1 << 20
"""The most ``detect_format`` reads of a file (1 MiB)."""

DETECTABLE: Final[tuple[str, ...]] = (
    "dsh",
    "claude-code",
    "codex",
    "gemini-cli",
    "openhands",
    "aider",
    "swe-agent",
    "mini-swe-agent",
    "openai",
    "anthropic",
    "locomo",
)
"""The formats ``detect_format`` tells apart (``"dsh"``: a DeepSeek Harness session log)."""

_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
_MAX_DEPTH = 64  # how deep a cut JSON prefix is followed
_MAX_RECORDS = 200  # JSON lines looked at
_AIDER = re.compile(r"^# aider chat started at \d{4}-\d\d-\d\d", re.MULTILINE)
_AIDER_PAGE = re.compile(r'^\s*<div class="chat-transcript"', re.MULTILINE)
_CODEX_TYPES = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
)
_CLAUDE_TYPES = frozenset({"file-history-snapshot", "queue-operation"})
_OPENAI_ROLES = frozenset({"system", "developer", "tool", "function"})
_OPENAI_KEYS = frozenset({"tool_calls", "tool_call_id", "function_call", "name", "refusal"})
_OPENAI_PARTS = frozenset({"image_url", "input_audio", "file", "refusal"})
_ANTHROPIC_PARTS = frozenset(
    {"tool_use", "tool_result", "thinking", "redacted_thinking", "image", "document"}
)


class _Cut(Exception):
    """A JSON value that stops (the prefix ended, or the text is not JSON) after ``value``."""

    def __init__(self, value: Any = None) -> None:
        super().__init__()
        self.value = value


def detect_format(path: str | os.PathLike[str]) -> str:
    """The format of the agent log at ``path`` (one of ``DETECTABLE``), from its content.

    ``path`` is a file, or a DSH session directory (one holding ``session[.vN].jsonl[.zstd]``).
    At most ``DETECT_BYTES`` are read, only from a regular file (a FIFO or device is refused,
    never waited on). A file that is empty, binary, not JSON of a known shape, or cut inside
    its first record raises ``ImportFormatError`` naming the path, what was seen and the
    known formats; a missing path raises ``NotFound``, one that may not be read ``Unreadable``.
    Name the format to skip detection: ``Session.open_any(path, format="codex")``, or
    ``ctxsdk import --format codex PATH``.
    """
    p = Path(path).expanduser()
    if p.is_dir():
        return _detect_dir(p)
    data, complete = _read_prefix(p)
    if data[:4] == _ZSTD_MAGIC:
        return _detect_zstd(p, data)
    if b"\x00" in data:
        _unknown(p, "binary data (NUL bytes), not text")
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(data, final=complete)
    except UnicodeDecodeError as exc:
        _unknown(p, f"bytes that are not UTF-8 text ({exc.reason} at byte {exc.start})")
    text = text.removeprefix("\ufeff")
    start = _WS.match(text).end()  # type: ignore[union-attr]
    if start == len(text):
        _unknown(p, "an empty file" if not text else "only whitespace")
    if text[start] in "{[":
        return _detect_json(p, text, start, complete)
    if _AIDER.search(text) or _AIDER_PAGE.search(text):
        return "aider"
    first = text[start:].split("\n", 1)[0].strip()
    _unknown(p, f"text that is neither JSON nor an aider chat history (it starts {first[:60]!r})")


# --- reading ---------------------------------------------------------------------------------


def _read_prefix(p: Path) -> tuple[bytes, bool]:
    """Up to ``DETECT_BYTES`` of a regular file, and whether that is the whole file."""

    def refuse(problem: str, detail: str) -> ImportFormatError:
        return ImportFormatError(
            f"{p}: is {detail}, not a regular file; a format is detected from a file (or a "
            "DSH session directory), so it was not read"
        )

    try:
        with open_regular_file(p, refuse) as fd:
            parts: list[bytes] = []
            total = 0
            while total < DETECT_BYTES:
                chunk = os.read(fd, DETECT_BYTES - total)
                if not chunk:
                    return b"".join(parts), True
                parts.append(chunk)
                total += len(chunk)
            return b"".join(parts), not os.read(fd, 1)
    except FileNotFoundError:
        raise NotFound(f"{p}: no such file to detect the format of") from None
    except PermissionError as exc:
        raise Unreadable(f"{p}: may not be read ({exc.strerror}); check its permissions") from None
    except OSError as exc:
        if isinstance(exc, ImportFormatError):
            raise
        raise ImportFormatError(f"{p}: cannot be read ({exc}); nothing was detected") from None


def _detect_dir(p: Path) -> str:
    try:
        names = sorted(os.listdir(p))
    except OSError as exc:
        raise ImportFormatError(f"{p}: a directory that cannot be listed ({exc})") from None
    if any(is_session_file_name(n) for n in names):
        return "dsh"
    seen = "an empty directory" if not names else f"a directory of {len(names)} entries"
    _unknown(
        p,
        f"{seen} with no session[.vN].jsonl[.zstd] log (a DSH session directory holds one)",
        "to list a folder of agent logs, use Workspace.agent_home(path)",
    )


def _detect_zstd(p: Path, data: bytes) -> str:
    import zstandard

    try:
        reader = zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True)
        head = reader.read(DETECT_BYTES)
    except zstandard.ZstdError as exc:
        _unknown(p, f"zstd-compressed bytes that do not decompress ({exc})")
    first = head.split(b"\n", 1)[0]
    try:
        header = json.loads(first)
    except ValueError:
        header = None
    if _is_dsh_header(header):
        return "dsh"
    _unknown(p, "zstd-compressed data whose first line is not a DSH session header")


# --- JSON ------------------------------------------------------------------------------------


def _lenient(s: str, i: int, depth: int) -> tuple[Any, int]:
    """The JSON value at ``s[i]`` and where it ends; ``_Cut`` with what was read of it when
    the text stops (or stops being JSON) inside it."""
    i = _WS.match(s, i).end()  # type: ignore[union-attr]
    if i >= len(s):
        raise _Cut()
    try:
        value, end = _DECODER.raw_decode(s, i)
        return value, end
    except ValueError:
        pass
    except RecursionError:
        raise _Cut() from None
    if depth >= _MAX_DEPTH or s[i] not in "{[":
        raise _Cut()
    if s[i] == "[":
        items: list[Any] = []
        i += 1
        while True:
            try:
                value, i = _lenient(s, i, depth + 1)
            except _Cut as cut:
                if cut.value is not None:
                    items.append(cut.value)
                raise _Cut(items) from None
            items.append(value)
            i = _WS.match(s, i).end()  # type: ignore[union-attr]
            if i < len(s) and s[i] == ",":
                i += 1
                continue
            raise _Cut(items)  # "]" would have made the list whole
    obj: dict[str, Any] = {}
    i += 1
    while True:
        i = _WS.match(s, i).end()  # type: ignore[union-attr]
        try:
            key, i = _DECODER.raw_decode(s, i)
        except ValueError:
            raise _Cut(obj) from None
        i = _WS.match(s, i).end()  # type: ignore[union-attr]
        if not isinstance(key, str) or i >= len(s) or s[i] != ":":
            raise _Cut(obj)
        try:
            value, i = _lenient(s, i + 1, depth + 1)
        except _Cut as cut:
            obj[key] = cut.value
            raise _Cut(obj) from None
        obj[key] = value
        i = _WS.match(s, i).end()  # type: ignore[union-attr]
        if i < len(s) and s[i] == ",":
            i += 1
            continue
        raise _Cut(obj)


def _detect_json(p: Path, text: str, start: int, complete: bool) -> str:
    try:
        doc, end = _lenient(text, start, 0)
    except _Cut as cut:
        if complete:  # the whole file is here: it is not JSON
            _not_json(p, text, start)
        found = _classify_doc(cut.value) or _classify_records([cut.value])
        if found is None:
            _unknown(p, _seen(cut.value, "a JSON text cut at the detection limit that holds"))
        return found
    rest = _WS.match(text, end).end()  # type: ignore[union-attr]
    if rest == len(text):  # one JSON document (or a one-record JSON lines file)
        found = _classify_doc(doc) or _classify_records([doc])
        if found is None:
            _unknown(p, _seen(doc, "a JSON document holding"), _driver_script_todo(p, doc))
        return found
    return _detect_lines(p, text, complete)


def _driver_script_todo(p: Path, doc: Any) -> str:
    """What to do with a harness scenario's scripted input (``{"steps": [{"op": ...}, ...]}``,
    the ``<scenario>.input.json`` next to its snapshot log): it drove a session, it is none."""
    steps = doc.get("steps") if isinstance(doc, dict) else None
    if not steps or not isinstance(steps, list):
        return ""
    if not all(isinstance(s, dict) and isinstance(s.get("op"), str) for s in steps):
        return ""
    todo = (
        "it looks like a harness scenario's scripted input (steps of ops such as "
        "'prompt'), which drives a session and is not one"
    )
    stem = p.name.removesuffix(".json").removesuffix(".input")
    log = p.with_name(f"{stem}.session.jsonl")
    if stem != p.name and log.is_file():
        todo += f": open the session it drove, {log.name}, with Session.open"
    return todo


def scripted_input_todo(path: str | os.PathLike[str]) -> str:
    """``_driver_script_todo`` of the file at ``path`` (read as detection reads it), or ""
    when it is not a harness scenario's scripted input or cannot be read as one."""
    p = Path(path).expanduser()
    try:
        data, complete = _read_prefix(p)
        doc = json.loads(data) if complete else None
    except (CtxError, OSError, ValueError, RecursionError):
        return ""
    return _driver_script_todo(p, doc)


def _detect_lines(p: Path, text: str, complete: bool) -> str:
    lines = text.split("\n")
    if not complete:
        lines.pop()  # cut at the detection limit (a first line longer than it is read above)
    records: list[Any] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            if complete and n == len(lines) and records:
                break  # a torn last line: the readers say so, detection need not
            _unknown(p, f"line {n} is not a JSON value ({exc.msg}), so it is not JSON lines")
        except RecursionError:
            _unknown(p, f"line {n} is JSON nested too deeply to read")
        if len(records) >= _MAX_RECORDS:
            break
    found = _classify_records(records)
    if found is None:
        _unknown(p, _seen(records[0] if records else None, "JSON lines whose first record is"))
    return found


def _not_json(p: Path, text: str, start: int) -> NoReturn:
    try:
        json.loads(text[start:])
    except RecursionError:
        _unknown(p, "JSON nested too deeply to read")
    except json.JSONDecodeError as exc:
        line = text[:start].count("\n") + exc.lineno
        what = (
            "ends inside a value (a truncated file?)"
            if exc.pos >= len(text) - start - 1
            else (f"is not valid JSON ({exc.msg})")
        )
        _unknown(p, f"text that starts like JSON but {what} at line {line}, column {exc.colno}")
    _unknown(p, "text that starts like JSON but is not one JSON value or JSON lines")


# --- shapes ----------------------------------------------------------------------------------


def _is_dsh_header(rec: Any) -> bool:
    return (
        isinstance(rec, dict)
        and rec.get("type") == "session"
        and type(rec.get("version")) is int
        and "id" in rec
    )


def _dicts(items: Any) -> list[dict[str, Any]]:
    return (
        [x for x in items[:_MAX_RECORDS] if isinstance(x, dict)] if isinstance(items, list) else []
    )


def _classify_doc(doc: Any) -> str | None:
    """The format of one JSON document (possibly cut), None when no shape matches."""
    if isinstance(doc, list):
        items = _dicts(doc)
        if not items:
            return None
        if any("source" in x and ("action" in x or "observation" in x) for x in items):
            return "openhands"
        if any("sample_id" in x or ("qa" in x and "conversation" in x) for x in items):
            return "locomo"
        if all("role" in x for x in items):
            return _chat_flavour(items, {})
        return None
    if not isinstance(doc, dict):
        return None
    fmt = doc.get("trajectory_format")
    info = doc.get("info")
    if (isinstance(fmt, str) and fmt.startswith("mini-swe-agent")) or (
        isinstance(info, dict) and "mini_version" in info
    ):
        return "mini-swe-agent"
    if isinstance(doc.get("trajectory"), list) or (
        isinstance(doc.get("history"), list) and ("environment" in doc or "info" in doc)
    ):
        return "swe-agent"
    if "sessionId" in doc and ("projectHash" in doc or "startTime" in doc):
        return "gemini-cli"
    messages = _dicts(doc.get("messages"))
    if messages and all("role" in m for m in messages):
        return _chat_flavour(messages, doc)
    return None


def _classify_records(records: list[Any]) -> str | None:
    """The format of JSON lines records (the first ``_MAX_RECORDS``), None when none matches."""
    recs = [r for r in records if isinstance(r, dict)]
    if not recs:
        return None
    if _is_dsh_header(recs[0]):
        return "dsh"
    if any(r.get("type") in _CODEX_TYPES and isinstance(r.get("payload"), dict) for r in recs):
        return "codex"
    if any(
        "parentUuid" in r
        or r.get("type") in _CLAUDE_TYPES
        or (r.get("type") == "summary" and "leafUuid" in r)
        for r in recs
    ):
        return "claude-code"
    if all("role" in r for r in recs):
        return _chat_flavour(recs, {})
    return None


def _chat_flavour(messages: list[dict[str, Any]], doc: dict[str, Any]) -> str:
    """``"anthropic"`` when anything only Anthropic messages have is seen, else ``"openai"``."""
    if isinstance(doc.get("system"), str | list):
        return "anthropic"
    tools = _dicts(doc.get("tools"))
    if any("input_schema" in t for t in tools):
        return "anthropic"
    if any(t.get("type") == "function" for t in tools):
        return "openai"
    for m in messages:
        if m.get("role") in _OPENAI_ROLES or _OPENAI_KEYS & m.keys():
            return "openai"
        for part in _dicts(m.get("content")):
            kind = part.get("type")
            if kind in _ANTHROPIC_PARTS:
                return "anthropic"
            if kind in _OPENAI_PARTS:
                return "openai"
    return "openai"


# --- errors ----------------------------------------------------------------------------------


def _seen(value: Any, lead: str) -> str:
    if isinstance(value, dict):
        keys = ", ".join(repr(k) for k in list(value)[:8])
        more = ", …" if len(value) > 8 else ""
        return f"{lead} an object with keys {keys}{more}" if value else f"{lead} an empty object"
    if isinstance(value, list):
        if not value:
            return f"{lead} an empty list"
        first = _seen(value[0], "the first is")
        return f"{lead} a list of {len(value)} item(s) ({first})"
    return f"{lead} {type(value).__name__ if value is not None else 'nothing'}"


def _unknown(p: Path, seen: str, todo: str = "") -> NoReturn:
    raise ImportFormatError(
        f"{p}: cannot tell which agent's log this is: {seen}. Known formats: "
        f"{', '.join(DETECTABLE)}. "
        + (f"{todo[0].upper()}{todo[1:]}; or, if" if todo else "If")
        + " it is one of them, name it: Session.open_any(path, format=NAME) or "
        "ctxsdk import --format NAME PATH (the importer then says what it cannot read)"
    )
