"""Small readers shared by the importers: typed field access that fails with a located
``ImportFormatError``, timestamps, tool arguments and media blocks."""

from __future__ import annotations

import errno
import hashlib
import json
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn

from ...errors import ImportFormatError, NotFound, Unreadable
from .._codec import MAX_JSON_DEPTH, deep_path, json_path_text
from .._files import check_byte_limit, read_regular_file, size_text
from .._harness import fallback_title as harness_fallback_title

__all__ = [
    "MAX_IMPORT_BYTES",
    "TITLE_BYTES",
    "JsonDict",
    "check_depth",
    "check_import_bytes",
    "content_text",
    "cut_title",
    "fail",
    "fallback_title",
    "get_dict",
    "get_list",
    "get_str",
    "iso_ms",
    "json_arguments",
    "load_json",
    "load_json_line",
    "media_block",
    "opt_str",
    "parse_json",
    "read_source",
    "source_name",
    "text_blocks",
    "verbatim_block",
]

JsonDict = dict[str, Any]


TITLE_BYTES = 80  # any session title (spec: session/title)


def cut_title(text: str, limit: int = TITLE_BYTES) -> str:
    """``text`` in at most ``limit`` UTF-8 bytes, cut with an ellipsis when it is longer."""
    if len(text.encode()) <= limit:
        return text
    room = limit - len("…".encode())
    return text.encode()[:room].decode(errors="ignore").rstrip() + "…"


def content_text(content: Any, where: str) -> str:
    """Message content that is a string, or a list of ``{text}`` parts, as one string."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(c, dict) and isinstance(c.get("text"), str) for c in content
    ):
        return "".join(c["text"] for c in content)
    fail(where, "content must be a string or a list of text parts")


def fail(where: str, what: str, todo: str = "") -> NoReturn:
    """Raise the one import error: where (file, record), what was wrong, what to do."""
    message = f"{where}: {what}" if where else what
    raise ImportFormatError(f"{message}; {todo}" if todo else message)


_SURROGATE = re.compile("[\ud800-\udfff]")
# What in a JSON text may decode into a value a log cannot hold: a surrogate escape, or an
# integer too long for 64 bits.
_UNWRITABLE = re.compile(rb"\\u[dD][89a-fA-F]|\d{20}")
_INT_RANGE = range(-(2**63), 2**64)  # what orjson writes (and reads) as an integer


def well_formed(value: Any) -> Any:
    """A copy of JSON-like ``value`` that a log can hold: every lone surrogate in a string
    (keys too) replaced by U+FFFD (``json`` decodes ``"\\ud800"`` into a ``str`` that UTF-8
    cannot encode; the model seam does the same), and an integer past 64 bits a float (as
    JavaScript, and the log reader, read such a number)."""
    if isinstance(value, str):
        return value if value.isascii() else _SURROGATE.sub("\ufffd", value)
    if type(value) is int and value not in _INT_RANGE:
        return float(value)
    if isinstance(value, list):
        return [well_formed(v) for v in value]
    if isinstance(value, dict):
        return {well_formed(k): well_formed(v) for k, v in value.items()}
    return value


def source_name(path: str | Path | None) -> str | None:
    return None if path is None else Path(path).name


def get_dict(obj: Any, key: str, where: str, *, required: bool = True) -> JsonDict | None:
    value = obj.get(key) if isinstance(obj, Mapping) else None
    if value is None and not required:
        return None
    if not isinstance(value, dict):
        fail(where, f"{key!r} must be an object, got {_kind(value)}")
    return value


def get_list(obj: Any, key: str, where: str) -> list[Any]:
    value = obj.get(key) if isinstance(obj, Mapping) else None
    if not isinstance(value, list):
        fail(where, f"{key!r} must be a list, got {_kind(value)}")
    return value


def get_str(obj: Any, key: str, where: str) -> str:
    value = obj.get(key) if isinstance(obj, Mapping) else None
    if not isinstance(value, str):
        fail(where, f"{key!r} must be a string, got {_kind(value)}")
    return value


def opt_str(obj: Any, key: str, where: str) -> str | None:
    value = obj.get(key) if isinstance(obj, Mapping) else None
    if value is not None and not isinstance(value, str):
        fail(where, f"{key!r} must be a string when present, got {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )


def iso_ms(value: Any, where: str) -> int | None:
    """An ISO-8601 timestamp (``2026-01-02T19:18:31.028Z``) as epoch ms; None when absent.
    A zone-less time is read as UTC."""
    if value is None:
        return None
    if not isinstance(value, str):
        fail(where, f"timestamp must be an ISO-8601 string, got {_kind(value)}")
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        fail(where, f"timestamp {value!r} is not ISO-8601")
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return round(dt.timestamp() * 1000)


def json_arguments(value: Any) -> str:
    """Tool arguments as the raw JSON text DSH stores: a string stays as the model wrote it,
    an object is written the way ``JSON.stringify`` would (compact, non-ASCII kept)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


_DATA_URL = re.compile(r"data:([^;,]+)?(;base64)?,", re.ASCII)


def media_block(kind: str, url: str | None, media_type: str | None, origin: Any) -> JsonDict:
    """A DSH ``image``/``file`` block for foreign media. The bytes live outside DSH logs (an
    attachment store) and are not imported: the attachment id is a hash of the source part,
    a remote URL is kept, an inline ``data:`` URL or base64 payload is dropped."""
    digest = hashlib.sha256(
        json.dumps(origin, sort_keys=True, ensure_ascii=False, default=str).encode()
    ).hexdigest()
    attachment: JsonDict = {"attachmentId": f"import-sha256-{digest[:32]}"}
    if url is not None:
        m = _DATA_URL.match(url)
        if m is None:
            attachment["url"] = url
        elif media_type is None:
            media_type = m.group(1)
    if media_type:
        attachment["mediaType"] = media_type
    return {"type": kind, "attachment": attachment}


def fallback_title(text: str) -> str | None:
    """The harness's fallback title (five words, 40 bytes), or None for an empty prompt."""
    return harness_fallback_title(text) or None


MAX_IMPORT_BYTES = 256 << 20
"""The most an importer reads of one file by default (256 MiB): a transcript, a trajectory or
a chat file is text a model read, and the largest real ones are tens of MB, while parsing a
JSON file takes several times its size in memory. Every importer (and ``import_file``) takes
``max_bytes=`` to read a larger one; ``ctxsdk import`` takes ``--max-bytes N``."""


def check_import_bytes(max_bytes: Any) -> int:
    """``max_bytes`` if it is a positive whole number of bytes, else ``InvalidArgument``."""
    return check_byte_limit(max_bytes, "MAX_IMPORT_BYTES", MAX_IMPORT_BYTES)


def read_source(path: str | Path, max_bytes: int = MAX_IMPORT_BYTES) -> tuple[Path, bytes]:
    """An input file (``~`` expanded) and its bytes, read only if it is a regular file of at
    most ``max_bytes`` (a FIFO is never waited on, a device never read): otherwise an
    ``ImportFormatError`` naming it; a missing one is ``NotFound``, one this process may
    not read ``Unreadable``."""
    check_import_bytes(max_bytes)
    p = Path(path).expanduser()

    def refuse(problem: str, detail: str) -> ImportFormatError:
        if problem == "too-large":
            return ImportFormatError(
                f"{p}: is {detail}, more than {size_text(max_bytes)} (max_bytes={max_bytes}), "
                "the most an import reads of one file; if it is a real log, pass a larger "
                "max_bytes= (import_file(format, path, max_bytes=...) or the importer's own)"
            )
        return ImportFormatError(
            f"{p}: is {detail}, not a regular file; an import reads a regular file (a "
            "transcript, a trajectory, a JSON file), so it was not read"
        )

    try:
        return p, read_regular_file(p, max_bytes, refuse)
    except FileNotFoundError:
        raise NotFound(f"{p}: no such file to import") from None
    except PermissionError as exc:
        raise Unreadable(
            f"{p}: permission denied ({exc.strerror}): this process may not read it; fix its "
            "permissions (or its directory's), or read it as its owner",
            path=p,
        ) from None
    except OSError as exc:
        if exc.errno == errno.ENOTDIR:
            raise NotFound(f"{p}: no such file to import ({exc.strerror})") from None
        what = "a symlink that cannot be followed" if exc.errno == errno.ELOOP else "unreadable"
        raise ImportFormatError(f"{p}: {what} ({exc.strerror or exc}); nothing was read") from None


def _too_deep(where: str, at: str) -> NoReturn:
    fail(
        where,
        f"nested more than {MAX_JSON_DEPTH} levels of arrays/objects deep{at}, past the limit "
        f"MAX_JSON_DEPTH = {MAX_JSON_DEPTH} (real transcripts nest about a dozen levels)",
        "remove or flatten that value; it is not imported",
    )


def check_depth(value: Any, where: str, data: bytes | None = None) -> None:
    """Refuse a parsed value nested deeper than ``MAX_JSON_DEPTH``, naming ``where`` and the
    path to the deep part. ``data`` (the text it was parsed from) skips the walk when it has
    too few ``[``/``{`` to nest that deep."""
    if data is not None and data.count(b"[") + data.count(b"{") <= MAX_JSON_DEPTH:
        return
    path = deep_path(value)
    if path is not None:
        _too_deep(where, f", at {json_path_text(path)}")


def load_json(path: str | Path, max_bytes: int = MAX_IMPORT_BYTES) -> Any:
    """A JSON file (read by ``read_source``): see ``parse_json``."""
    p, data = read_source(path, max_bytes)
    return parse_json(data, p.name)


def parse_json(data: bytes, name: str) -> Any:
    """The JSON document of file ``name``; a syntax error names the file, line and column,
    and a document nested deeper than ``MAX_JSON_DEPTH`` is refused naming the file and the
    path to the deep part."""
    try:
        doc = json.loads(data)
    except json.JSONDecodeError as exc:
        fail(
            f"{name}, line {exc.lineno} column {exc.colno}",
            f"not valid JSON ({exc.msg})",
            "check that the file is complete and was not truncated",
        )
    except UnicodeDecodeError as exc:
        fail(name, f"not UTF-8 text ({exc.reason} at byte {exc.start})")
    except RecursionError:  # Python's parser recurses: ~1000 levels exhaust the stack
        _too_deep(name, " (too deep for the JSON parser)")
    check_depth(doc, name, data)
    return well_formed(doc) if _UNWRITABLE.search(data) else doc


def load_json_line(raw: bytes, where: str, todo: str = "") -> Any:
    """One line of a JSONL file, refused with ``where`` (file and line) when it is not JSON,
    not UTF-8, or nested deeper than ``MAX_JSON_DEPTH``."""
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        fail(where, f"not valid JSON ({exc.msg})", todo)
    except UnicodeDecodeError as exc:
        fail(where, f"not UTF-8 text ({exc.reason})")
    except RecursionError:
        _too_deep(where, " (too deep for the JSON parser)")
    check_depth(value, where, raw)
    return well_formed(value) if _UNWRITABLE.search(raw) else value


_DSH_BLOCK_TYPES = frozenset({"text", "reasoning", "image", "file", "tool-call", "tool-result"})


def verbatim_block(block: Any, where: str) -> JsonDict:
    """A foreign content block DSH has no type for, kept as it is: ctxsdk shows and counts it,
    the provider wire leaves it out. Its type must not pose as a DSH block type."""
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        fail(where, f"a content block must be an object with a string type, got {_kind(block)}")
    if block["type"] in _DSH_BLOCK_TYPES:
        fail(where, f"malformed {block['type']!r} content block")
    return dict(block)


def text_blocks(text: str) -> list[JsonDict]:
    """One text block, or none for an empty string (an empty text carries nothing)."""
    return [{"type": "text", "text": text}] if text else []


PartConverter = Callable[[Any, Any, str], list[JsonDict]]


def content_blocks(
    content: Any, where: str, convert: PartConverter, what: str = "a string or a list of blocks"
) -> list[JsonDict]:
    """A message's content as DSH blocks: a string is one text block; in a list, text parts
    become text blocks and every other part goes to ``convert(type, part, where)``."""
    if isinstance(content, str):
        return text_blocks(content)
    if not isinstance(content, list):
        fail(where, f"content must be {what}")
    out: list[JsonDict] = []
    for k, part in enumerate(content):
        at = f"{where}, content[{k}]"
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            out += text_blocks(get_str(part, "text", at))
        else:
            out += convert(kind, part, at)
    return out
