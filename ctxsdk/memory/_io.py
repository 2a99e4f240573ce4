"""Getting memories out and back in: the JSON graph, the Markdown projection, MEMORY.md.

Three formats, three promises (the dsh-trivium seed's):

- the **JSON graph** (``export_graph`` / ``import_graph``) is the round-trip format: export,
  import and export again gives equal JSON, and an import is validated field by field, each
  problem named by its JSON path (``$.nodes[3].type``), before anything is written;
- the **Markdown projection** (``to_markdown``) is for people and is never parsed back;
- the **MEMORY.md import** (``parse_memory_md``) is a strict one-shot migration from a
  WorkBuddy-style notes file: only lines with a rule, decision or ``Key: value`` shape
  become candidates, a line (or heading) that held a secret is dropped, and the batch is
  capped (``IMPORT_CAPS``).

Whatever is written passes the memory's door (``_door``) in ``Memory``: an import's texts
are redacted, and one that is nothing but credentials is refused.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, cast

from ..errors import InvalidArgument
from ..session import redact
from ..session.kernel import MAX_JSON_DEPTH, clean_text
from ._facts_in import said_kinds
from ._ingest import (
    IMPORT_CAPS,
    Extraction,
    _finish,
    held_secret,
    parse_until,
)
from ._model import (
    EDGE_LABELS,
    LINE_MAX,
    NODE_TYPES,
    Candidate,
    Edge,
    Node,
    NodeType,
    Source,
    clip,
)

__all__ = [
    "GRAPH_FORMAT",
    "GRAPH_VERSION",
    "MARKDOWN_HEADER",
    "edge_from_json",
    "export_graph",
    "import_graph",
    "node_from_json",
    "parse_memory_md",
    "to_markdown",
]

GRAPH_FORMAT = "ctxsdk-memory-graph"
GRAPH_VERSION = 1
MARKDOWN_HEADER = "<!-- ctxsdk-memory-export v1 -->"


# -- the JSON graph --------------------------------------------------------------------------
def export_graph(nodes: Sequence[Node], edges: Sequence[Edge]) -> dict[str, Any]:
    """The graph as one JSON object (nodes and edges in the order given)."""
    return {
        "format": GRAPH_FORMAT,
        "version": GRAPH_VERSION,
        "nodes": [n.to_json() for n in nodes],
        "edges": [e.to_json() for e in edges],
    }


def _bad(path: str, what: str) -> InvalidArgument:
    return InvalidArgument(f"memory graph: {path} {what}")


def _str(data: Mapping[str, Any], key: str, path: str, *, default: str | None = None) -> str:
    if key not in data:
        if default is None:
            raise _bad(f"{path}.{key}", "is missing")
        return default
    value = data[key]
    if not isinstance(value, str):
        raise _bad(f"{path}.{key}", f"must be a string, not {type(value).__name__}")
    return _text(value, f"{path}.{key}")


def _opt_str(data: Mapping[str, Any], key: str, path: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise _bad(f"{path}.{key}", f"must be a string or null, not {type(value).__name__}")
    return None if value is None else _text(value, f"{path}.{key}")


def _text(value: str, path: str) -> str:
    """``value``, unless it holds a lone surrogate (``json`` decodes ``"\\ud800"`` into
    one): that is not text, and a round-trip format refuses it rather than change it."""
    if value != clean_text(value):
        raise _bad(path, "holds a lone surrogate, which is not text")
    return value


def _plain_json(value: Any, path: str, depth: int = 0) -> None:
    """Refuse a JSON value that a store could not keep: a lone surrogate in a key or a
    string, or nesting past ``MAX_JSON_DEPTH``."""
    if isinstance(value, str):
        _text(value, path)
    elif isinstance(value, list | dict):
        if depth >= MAX_JSON_DEPTH:
            where = path if len(path) < 80 else path[:60] + "…"
            raise _bad(where, f"nests deeper than {MAX_JSON_DEPTH} levels")
        if isinstance(value, list):
            for i, v in enumerate(value):
                _plain_json(v, f"{path}[{i}]", depth + 1)
        else:
            for k, v in value.items():
                _text(str(k), f"{path} key {str(k)[:40]!r}")
                _plain_json(v, f"{path}.{k}", depth + 1)


def _obj(value: Any, path: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _bad(path, f"must be an object, not {type(value).__name__}")
    return cast(Mapping[str, Any], value)


def _list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise _bad(path, f"must be a list, not {type(value).__name__}")
    return value


def _source_from_json(value: Any, path: str) -> Source:
    data = _obj(value, path)
    seq = data.get("seq")
    if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int) or seq < 0):
        raise _bad(f"{path}.seq", f"must be a non-negative integer or null, not {seq!r}")
    return Source(
        session=_opt_str(data, "session", path),
        seq=seq,
        quote=_str(data, "quote", path, default=""),
        via=_str(data, "via", path, default="user"),
    )


def node_from_json(data: Any, path: str = "$") -> Node:
    """A ``Node`` from its ``to_json`` form, validated (``InvalidArgument`` names the path
    of the first problem). ``id``, ``type`` and ``name`` are required; the rest default."""
    obj = _obj(data, path)
    node_id = _str(obj, "id", path)
    if not node_id:
        raise _bad(f"{path}.id", "must not be empty")
    node_type = _str(obj, "type", path)
    if node_type not in NODE_TYPES:
        raise _bad(f"{path}.type", f"must be one of {', '.join(NODE_TYPES)}, not {node_type!r}")
    aliases = _list(obj.get("aliases", []), f"{path}.aliases")
    for i, a in enumerate(aliases):
        if not isinstance(a, str):
            raise _bad(f"{path}.aliases[{i}]", "must be a string")
        _text(a, f"{path}.aliases[{i}]")
    sources = _list(obj.get("sources", []), f"{path}.sources")
    status = _str(obj, "status", path, default="active")
    if status not in ("active", "archived"):
        raise _bad(f"{path}.status", f"must be 'active' or 'archived', not {status!r}")
    extra = _obj(obj.get("extra", {}), f"{path}.extra")
    _plain_json(dict(extra), f"{path}.extra")
    return Node(
        id=node_id,
        type=cast(NodeType, node_type),
        name=_str(obj, "name", path),
        text=_str(obj, "text", path, default=""),
        aliases=tuple(aliases),
        uri=_str(obj, "uri", path, default=""),
        sources=tuple(_source_from_json(s, f"{path}.sources[{i}]") for i, s in enumerate(sources)),
        until=_opt_str(obj, "until", path),
        until_at=_opt_str(obj, "untilAt", path),
        fail=_opt_str(obj, "fail", path),
        fix=_opt_str(obj, "fix", path),
        status="archived" if status == "archived" else "active",
        created_at=_str(obj, "createdAt", path, default=""),
        updated_at=_str(obj, "updatedAt", path, default=""),
        extra=dict(extra),
    )


def edge_from_json(data: Any, path: str = "$") -> Edge:
    """An ``Edge`` from its ``to_json`` form, validated like ``node_from_json``."""
    obj = _obj(data, path)
    label = _str(obj, "label", path)
    if label not in EDGE_LABELS:
        raise _bad(f"{path}.label", f"must be one of {', '.join(EDGE_LABELS)}, not {label!r}")
    weight = obj.get("weight", 1.0)
    if isinstance(weight, bool) or not isinstance(weight, int | float) or not math.isfinite(weight):
        raise _bad(f"{path}.weight", f"must be a finite number, not {weight!r}")
    return Edge(
        src=_str(obj, "src", path),
        dst=_str(obj, "dst", path),
        label=cast(Any, label),
        weight=float(weight),
        created_at=_str(obj, "createdAt", path, default=""),
    )


def import_graph(data: Any) -> tuple[list[Node], list[Edge]]:
    """The nodes and edges of an ``export_graph`` object, all validated before any is
    returned: the format and version, every field, unique node ids, and edges between
    nodes of the graph. The store remaps ids and merges by ``uri``."""
    obj = _obj(data, "$")
    fmt = obj.get("format")
    if fmt != GRAPH_FORMAT:
        raise _bad("$.format", f"must be {GRAPH_FORMAT!r}, not {fmt!r}")
    version = obj.get("version")
    if version != GRAPH_VERSION or isinstance(version, bool):
        raise _bad("$.version", f"must be {GRAPH_VERSION}, not {version!r}")
    nodes = [
        node_from_json(n, f"$.nodes[{i}]") for i, n in enumerate(_list(obj.get("nodes"), "$.nodes"))
    ]
    ids: set[str] = set()
    for i, n in enumerate(nodes):
        if n.id in ids:
            raise _bad(f"$.nodes[{i}].id", f"repeats the id {n.id!r}")
        ids.add(n.id)
    edges = [
        edge_from_json(e, f"$.edges[{i}]") for i, e in enumerate(_list(obj.get("edges"), "$.edges"))
    ]
    for i, e in enumerate(edges):
        for end in ("src", "dst"):
            if getattr(e, end) not in ids:
                raise _bad(
                    f"$.edges[{i}].{end}", f"names no node of the graph: {getattr(e, end)!r}"
                )
    return nodes, edges


# -- the Markdown projection -----------------------------------------------------------------
_SECTIONS: tuple[tuple[str, str], ...] = (
    ("entity", "Entities"),
    ("preference", "Preferences"),
    ("decision", "Decisions"),
    ("experience", "Experiences"),
    ("observation", "Observations"),
)


def _sub(text: str) -> str:
    """A sub-line (``  - text``), at most 240 chars with its indent."""
    return "  - " + clip(text, LINE_MAX - 4)


def to_markdown(nodes: Sequence[Node], edges: Sequence[Edge]) -> str:
    """A read-only Markdown view of the active memory: a section per type, a line per node
    (``- text —label→ target`` for its outgoing edges but ``in_workspace``), and sub-lines
    for aliases, fail, fix and until; every line at most 240 chars. Not a round-trip format
    (use ``export_graph``)."""
    by_id = {n.id: n for n in nodes}
    out_edges: dict[str, list[Edge]] = {}
    for e in edges:
        if e.label != "in_workspace" and e.dst in by_id and by_id[e.dst].active:
            out_edges.setdefault(e.src, []).append(e)
    lines = [MARKDOWN_HEADER, "# Memory"]
    for node_type, title in _SECTIONS:
        members = [n for n in nodes if n.type == node_type and n.active]
        if not members:
            continue
        lines += ["", f"## {title}", ""]
        for n in members:
            links = "".join(
                f" —{e.label}→ {clip(by_id[e.dst].name, 60)}" for e in out_edges.get(n.id, [])
            )
            body = n.name if node_type == "entity" else n.text or n.name
            room = LINE_MAX - len("- ") - len(links)
            if room < 20:
                links, room = "", LINE_MAX - 2
            lines.append(clip(f"- {clip(body, room)}{links}"))
            if n.aliases:
                lines.append(_sub(f"aliases: {', '.join(n.aliases)}"))
            if node_type == "entity" and n.text and n.text != n.name:
                lines.append(_sub(n.text))
            if n.fail:
                lines.append(_sub(f"fail: {n.fail}"))
            if n.fix:
                lines.append(_sub(f"fix: {n.fix}"))
            if n.until or n.until_at:
                at = f" (untilAt {n.until_at})" if n.until_at else ""
                lines.append(_sub(f"until: {n.until or n.until_at}{at}"))
    return "\n".join(lines) + "\n"


# -- the MEMORY.md import --------------------------------------------------------------------
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_KEY_VALUE = re.compile(r"^(?P<key>[^:：\s][^:：]{0,39}?)\s*[:：]\s*(?P<value>\S.*)$")
_HEADING_STOP = frozenset(
    s.casefold()
    for s in (
        "memory memories notes note preferences preference decisions decision rules rule todo"
        " misc miscellaneous other others summary overview context general user profile log"
        " history project projects workspace facts 记忆 笔记 偏好 决策 规则 其他 杂项 总结"
        " 概览 用户 项目 日志 历史 待办 备注 约定 经验"
    ).split()
)
_DATE = re.compile(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}月\d{1,2}[日号]|\d{4}年")
_LIST = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")


def _heading_entity(title: str) -> str | None:
    """The entity a heading names, or None (a date, a stop word, or a sentence)."""
    title = title.strip().strip("`*_ ")
    if not title or _DATE.search(title) or title.casefold() in _HEADING_STOP:
        return None
    if len(title) > 64 or len(title.split()) > 5 or re.search(r"[。！？.!?,，]$", title):
        return None
    return title


def parse_memory_md(text: str, *, now: datetime | None = None) -> Extraction:
    """The candidates of a WorkBuddy-style ``MEMORY.md`` (a strict one-shot import).

    A heading names an entity (linked ``about`` from the lines under it) unless it is a
    date or a stop word (Preferences, 决策, …). Each line is read by the base's fact kernel
    (no cue table here): a decision is a decision (with its until); an instruction or a
    preference (rules, imperatives, prohibitions) a preference; else a short ``Key: value``
    line an entity named Key. Anything else is dropped ("no cue"), as are lines that held a
    secret (redacted in the drop). Words alone ("token budget") are no secret.
    Capped at ``IMPORT_CAPS``: 24/24/12/8 by type, then 24 items and 3,000 characters of text
    in all (the seed's batch guard)."""
    when = now or datetime.now(UTC)
    # The whole file is redacted before it is cut into lines: a key block spans lines.
    text = redact(text).text
    dropped: list[tuple[str, str]] = []
    cands: list[Candidate] = []
    heading: str | None = None
    in_fence = False
    for raw in text.splitlines():
        if raw.strip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence or not raw.strip() or raw.strip().startswith("<!--"):
            continue
        src_line = clip(redact(raw.strip()).text)  # redacted before it is cut
        h = _HEADING.match(raw)
        if h:
            heading = _heading_entity(h.group(2))
            if heading is not None and held_secret(heading):
                dropped.append((clip(redact(heading).text), "secret"))
                heading = None  # nor do the lines under it link to it
            if heading is not None:
                src = Source(None, None, src_line, "import")
                cands.append(Candidate("entity", heading, heading, src))
            continue
        line = _LIST.sub("", raw).strip()
        if held_secret(line):
            dropped.append((clip(redact(line).text), "secret"))
            continue
        kinds = said_kinds(line)  # what the base's fact kernel reads in the line
        src = Source(None, None, clip(line), "import")
        about = (("about", heading),) if heading else ()
        if "decision" in kinds:
            until = parse_until(line, when)
            cands.append(
                Candidate(
                    "decision",
                    clip(line, 40),
                    clip(line),
                    src,
                    until=until[0] if until else None,
                    until_at=until[1] if until else None,
                    links=(("decided", heading),) if heading else (),
                )
            )
        elif kinds & {"instruction", "preference"}:
            cands.append(Candidate("preference", clip(line, 40), clip(line), src, links=about))
        elif kv := _KEY_VALUE.match(line):
            key = kv.group("key").strip().strip("*_`")
            if "://" in line or len(key.split()) > 4:
                dropped.append((clip(line), "no cue"))
                continue
            cands.append(Candidate("entity", key, clip(f"{key}: {kv.group('value')}"), src))
        else:
            dropped.append((clip(line), "no cue"))
    return _finish(cands, dropped, IMPORT_CAPS)
