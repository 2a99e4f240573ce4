"""A node, an edge and a meta value as a store keeps them, the same in every store:
the columns of each table, the checks a value passes before it is written, JSON encoded one
way (sorted keys, no NaN, bounded depth), and a stored row read back into a ``Node`` or an
``Edge`` (a value no store writes is ``CorruptStore`` naming the row and the column).
``SQLiteStore`` and ``PostgresStore`` both use it, so the two hold the same bytes."""

from __future__ import annotations

import json
import math
import re
import secrets
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from json.encoder import encode_basestring as _quoted
from typing import Any, Protocol, cast

from ..errors import CorruptStore, InvalidArgument
from ..session.kernel import MAX_JSON_DEPTH, clean_text
from ._model import EDGE_LABELS, NODE_TYPES, Edge, EdgeLabel, Node, NodeStatus, NodeType, Source

__all__ = [
    "COLUMNS",
    "DAMAGED",
    "INDEXED",
    "KEY_BYTES",
    "MAINTAINED",
    "NODE_COLUMNS",
    "NODE_ORDER",
    "OPTIONAL_COLUMNS",
    "REVISION_KEY",
    "STATUSES",
    "VECTOR_COLUMNS",
    "WRITABLE",
    "RowLike",
    "check_key",
    "check_meta_key",
    "check_model",
    "check_node",
    "checked_column",
    "damaged",
    "dumps_value",
    "edge_of",
    "failing",
    "is_utf8",
    "kind_of",
    "load_json",
    "loadable",
    "new_node_id",
    "new_node_ids",
    "new_row",
    "node_columns",
    "node_of",
    "now_stamp",
    "stamped",
    "storable_text",
    "stored_row",
    "taken",
    "too_deep",
    "update_params",
]

STATUSES = ("active", "archived")
REVISION_KEY = "__revision__"  # reserved meta key: set_meta refuses it

# The columns SCHEMA_VERSION has, table by table (what an opened file must hold).
COLUMNS = {
    "nodes": frozenset(
        "id type name text aliases uri sources until until_at fail fix status created_at "
        "updated_at extra".split()
    ),
    "edges": frozenset("src dst label weight created_at".split()),
    "meta": frozenset(("key", "value")),
}
VECTOR_COLUMNS = frozenset(("node", "model", "hash", "vector"))
# The node columns an embedding is made from: a write that changes one drops the vectors.
INDEXED = ("name", "text", "aliases", "fail", "fix", "until")


class RowLike(Protocol):
    """A row read by column name: ``sqlite3.Row``, or the dict a PostgreSQL cursor gives."""

    def __getitem__(self, column: str) -> Any: ...


def now_stamp() -> str:
    """ISO-8601 UTC with milliseconds, e.g. ``2026-12-01T16:52:56.123Z``."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


_id_lock = threading.Lock()
_id_last = (0, 0)  # (millisecond, random part) of this process's last id


def new_node_id() -> str:
    """A short id unique across processes without coordination, sortable by creation time:
    ``n`` + 11 hex digits of the millisecond clock + 8 hex digits, random for the first id
    of a millisecond and incremented after it (ULID-style), so ids made by one process sort
    in creation order. Another process's id in the same millisecond collides with odds of
    2**-32; the store's primary key catches even that and draws again."""
    global _id_last
    with _id_lock:
        ms = time.time_ns() // 1_000_000
        last_ms, last_rand = _id_last
        if ms <= last_ms and last_rand < 0xFFFFFFFF:
            ms, rand = last_ms, last_rand + 1  # same millisecond (or the clock went back)
        else:
            ms, rand = max(ms, last_ms + (ms <= last_ms)), secrets.randbits(31)
        _id_last = (ms, rand)
    return f"n{ms:011x}{rand:08x}"


def new_node_ids(count: int) -> list[str]:
    """``[new_node_id() for _ in range(count)]`` drawn at once: the ids the calls one by one
    would give when the clock shows one millisecond throughout (the random part incremented
    after the first, a new millisecond and random part when it would overflow), with one
    lock and one clock read for all of them."""
    global _id_last
    out: list[str] = []
    with _id_lock:
        now = time.time_ns() // 1_000_000
        ms, rand = _id_last
        for _ in range(count):
            if now <= ms and rand < 0xFFFFFFFF:
                rand += 1
            else:
                ms, rand = max(now, ms + (now <= ms)), secrets.randbits(31)
            out.append(f"n{ms:011x}{rand:08x}")
        _id_last = (ms, rand)
    return out


# One encoder for every value (``json.dumps`` with options builds a new one per call).
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, sort_keys=True)


# ``_ENCODER``'s C loop, made once: ``JSONEncoder.encode`` makes one per call, most of the
# cost of a small value (a node's extra). It is made without the circular check, whose
# record it would keep across calls (and threads): a value it fails on (a cycle, a type
# JSON lacks, NaN) is encoded again by ``_ENCODER``, which gives the error it always gave.
_C_ENCODER: Any = getattr(json.encoder, "c_make_encoder", None)
_FAST_ENCODE: Any = (
    None
    if _C_ENCODER is None
    else _C_ENCODER(None, _ENCODER.default, _quoted, None, ": ", ", ", True, False, False)
)


def _encoded(value: Any) -> str:
    """``_ENCODER.encode(value)``: the same text, by the encoder made once when it can."""
    if _FAST_ENCODE is not None:
        try:
            return "".join(_FAST_ENCODE(value, 0))
        except Exception:  # the encoder's own path below raises what it raises
            pass
    return _ENCODER.encode(value)


def dumps_value(value: Any, what: str) -> str:
    if not value and isinstance(value, list | dict):
        return "[]" if isinstance(value, list) else "{}"  # most aliases, many extras
    try:
        text = _encoded(value)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidArgument(f"{what} is not JSON-serialisable: {exc}") from None
    if too_deep(text, value):  # the reader would refuse it as damage
        raise InvalidArgument(f"{what} nests deeper than {MAX_JSON_DEPTH} levels")
    return storable_text(text, what)


def _sources_json(sources: Sequence[Source]) -> str | None:
    """``_ENCODER.encode([s.to_json() for s in sources])`` (keys sorted: quote, seq,
    session, via) for sources whose fields hold what ``Source`` declares; None when one
    holds anything else (the caller encodes it the general way)."""
    parts: list[str] = []
    for s in sources:
        if type(s) is not Source or type(s.quote) is not str or type(s.via) is not str:
            return None
        seq, session = s.seq, s.session
        if not (seq is None or type(seq) is int) or not (session is None or type(session) is str):
            return None
        parts.append(
            f'{{"quote": {_quoted(s.quote)}, "seq": {"null" if seq is None else int.__repr__(seq)}'
            f', "session": {"null" if session is None else _quoted(session)}'
            f', "via": {_quoted(s.via)}}}'
        )
    return "[" + ", ".join(parts) + "]"


def too_deep(text: str, value: Any) -> bool:
    """Whether ``value`` (decoded from, or encoded as, ``text``) nests more than
    ``MAX_JSON_DEPTH`` levels of arrays and objects (itself is level 1). Counting the
    openers in the text first skips the walk for every ordinary value."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:  # iterative: a deep value must not exhaust the stack here either
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            if depth > MAX_JSON_DEPTH:
                return True
            stack.extend((child, depth + 1) for child in item)
    return False


def storable_text(text: str, what: str) -> str:
    """``text`` when SQLite can store it: a lone surrogate (which ``json`` decodes from
    ``"\\ud800"``) cannot be encoded, and is refused before the write starts."""
    if text != clean_text(text):
        at = next(i for i, ch in enumerate(text) if "\ud800" <= ch <= "\udfff")
        raise InvalidArgument(
            f"{what} holds a lone surrogate (U+{ord(text[at]):04X}) at character {at}, "
            "which is not text"
        )
    return text


NODE_COLUMNS = (
    "id, type, name, text, aliases, uri, sources, until, until_at, fail, fix, status, "
    "created_at, updated_at, extra"
)


DAMAGED = "the memory database is damaged; restore it from a backup"
_TEXT_COLUMNS = ("id", "type", "name", "text", "uri", "status", "created_at", "updated_at")
OPTIONAL_COLUMNS = ("until", "until_at", "fail", "fix")
_STR, _STR_OR_NONE = {str}, {str, type(None)}


# What rows() and update() know of each table: its key, its JSON columns, the columns that
# may be NULL; and what update() may write (text columns, and a node's status).
MAINTAINED: dict[str, tuple[tuple[str, ...], frozenset[str], frozenset[str]]] = {
    "nodes": (("id",), frozenset({"aliases", "sources", "extra"}), frozenset(OPTIONAL_COLUMNS)),
    "edges": (("src", "dst", "label"), frozenset(), frozenset()),
    "meta": (("key",), frozenset({"value"}), frozenset()),
}
WRITABLE = {
    "nodes": COLUMNS["nodes"] - {"id", "type"},
    "edges": frozenset({"created_at"}),
    "meta": frozenset({"key", "value"}),
}


def damaged(where: str, what: str, column: str, why: str) -> CorruptStore:
    return CorruptStore(f"{where}: {what}, column {column}: {why}; {DAMAGED}", path=where)


def failing(where: str, what: str, column: str) -> Callable[[str], CorruptStore]:
    return lambda why: damaged(where, what, column, why)


def kind_of(value: object) -> str:
    return "bytes (a blob)" if isinstance(value, bytes) else type(value).__name__


def load_json(raw: object, fail: Callable[[str], CorruptStore]) -> Any:
    """The JSON value stored as ``raw``, or ``fail(why)`` when it is not one this store
    writes: not text, not JSON, or nested past ``MAX_JSON_DEPTH``."""
    if not isinstance(raw, str):
        raise fail(f"holds {kind_of(raw)}, not JSON text")
    try:
        value = json.loads(raw)
    except RecursionError:
        raise fail("holds JSON nested past the parser's limit") from None
    except ValueError as exc:
        raise fail(f"holds text that is not JSON ({str(exc)[:80]})") from None
    if too_deep(raw, value):
        raise fail(f"holds JSON nested deeper than {MAX_JSON_DEPTH} levels")
    return value


def is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def node_of(row: RowLike, where: str) -> Node:
    """The node in ``row``, or ``CorruptStore`` naming the node and the column when a value
    is not one this store writes (damaged bytes that SQLite still reads)."""
    nid = row["id"]

    def fail(column: str) -> Callable[[str], CorruptStore]:
        return lambda why: damaged(where, f"node {nid!r}", column, why)

    # each value read once; the checks in one step when every value is what this store
    # writes (the first find of a memory reads every node), column by column when not
    texts = [row[c] for c in _TEXT_COLUMNS]
    if set(map(type, texts)) != _STR:
        for column, value in zip(_TEXT_COLUMNS, texts, strict=True):
            if not isinstance(value, str):
                raise fail(column)(f"holds {kind_of(value)}, not text")
    optional = [row[c] for c in OPTIONAL_COLUMNS]
    if not set(map(type, optional)) <= _STR_OR_NONE:
        for column, value in zip(OPTIONAL_COLUMNS, optional, strict=True):
            if value is not None and not isinstance(value, str):
                raise fail(column)(f"holds {kind_of(value)}, not text or NULL")
    _, type_, name, text, uri, status, created_at, updated_at = texts
    if type_ not in NODE_TYPES:
        raise fail("type")(f"{type_!r} is not a node type")
    if status not in STATUSES:
        raise fail("status")(f"{status!r} is not active or archived")
    # no aliases and no extra, as most nodes are stored: read without the JSON parser
    raw = row["aliases"]
    aliases = [] if raw == "[]" else load_json(raw, fail("aliases"))
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise fail("aliases")("is not a list of strings")
    sources = load_json(row["sources"], fail("sources"))
    if not isinstance(sources, list) or not all(isinstance(x, dict) for x in sources):
        raise fail("sources")("is not a list of objects")
    raw = row["extra"]
    extra = {} if raw == "{}" else load_json(raw, fail("extra"))
    if not isinstance(extra, dict):
        raise fail("extra")(f"holds a JSON {kind_of(extra)}, not an object")
    until, until_at, fail_text, fix = optional
    return Node(
        id=nid,
        type=cast(NodeType, type_),
        name=name,
        text=text,
        aliases=tuple(aliases),
        uri=uri,
        sources=tuple(Source.from_json(x) for x in sources),
        until=until,
        until_at=until_at,
        fail=fail_text,
        fix=fix,
        status=cast(NodeStatus, status),
        created_at=created_at,
        updated_at=updated_at,
        extra=extra,
    )


def edge_of(row: RowLike, where: str) -> Edge:
    """The edge in ``row``, or ``CorruptStore`` naming it and the column (as ``node_of``)."""
    src, dst, label, weight = row["src"], row["dst"], row["label"], row["weight"]
    what = f"edge {src!r} -{label}-> {dst!r}"
    for column in ("src", "dst", "label", "created_at"):
        if not isinstance(row[column], str):
            raise damaged(where, what, column, f"holds {kind_of(row[column])}, not text")
    if label not in EDGE_LABELS:
        raise damaged(where, what, "label", f"{label!r} is not an edge label")
    if not isinstance(weight, int | float) or not math.isfinite(weight):
        raise damaged(where, what, "weight", f"holds {weight!r}, not a finite number")
    return Edge(
        src=src,
        dst=dst,
        label=cast(EdgeLabel, label),
        weight=float(weight),
        created_at=row["created_at"],
    )


# The longest key each store keeps, in UTF-8 bytes: PostgreSQL indexes a key in one btree
# entry (at most ~2.7 kB with its namespace), so both stores hold keys to the same limits
# and a memory copies between them whole. Generated ids are 20 bytes, uris under 200.
KEY_BYTES = {"id": 256, "uri": 1024, "meta key": 512, "vector model": 256}


def check_key(value: str, kind: str, what: str) -> str:
    """``value`` when it is a key of ``kind`` every store can keep (``KEY_BYTES``), else
    ``InvalidArgument`` naming ``what`` and the limit."""
    size = len(value.encode("utf-8", "surrogatepass"))
    limit = KEY_BYTES[kind]
    if size > limit:
        raise InvalidArgument(f"{what} is {size:,} bytes; a {kind} is at most {limit} bytes")
    return value


def checked_column(table: str, column: str, value: str, what: str) -> str:
    """A text ``value`` for ``column`` of ``table`` (an ``update``): storable, and within
    ``KEY_BYTES`` when the column is a key (a node's uri, a meta key)."""
    storable_text(value, what)
    kind = dict(_KEY_COLUMNS.get(table, ())).get(column)
    return value if kind is None else check_key(value, kind, what)


def check_meta_key(key: object) -> str:
    """``key`` when a meta value may be stored under it: a non-empty string within
    ``KEY_BYTES``, not the store's own revision counter."""
    if not isinstance(key, str) or not key:
        raise InvalidArgument(f"a meta key is a non-empty string, not {key!r}")
    if key == REVISION_KEY:
        raise InvalidArgument(f"meta key {key!r} is the store's own revision counter")
    return check_key(storable_text(key, "a meta key"), "meta key", "a meta key")


def check_model(model: object) -> str:
    """``model`` when vectors may be stored under it (a non-empty name within limits)."""
    if not isinstance(model, str) or not model:
        raise InvalidArgument(f"a vector's model is a non-empty string, not {model!r}")
    return check_key(model, "vector model", "a vector's model")


NODE_ORDER = tuple(c.strip() for c in NODE_COLUMNS.split(","))


def stamped(node: Node, node_id: str, uri: str, created_at: str, updated_at: str) -> Node:
    """``node`` as a store keeps it: its id and uri settled, its times stamped."""
    return Node(
        id=node_id,
        type=node.type,
        name=node.name,
        text=node.text,
        aliases=tuple(node.aliases),
        uri=uri,
        sources=tuple(node.sources),
        until=node.until,
        until_at=node.until_at,
        fail=node.fail,
        fix=node.fix,
        status=node.status,
        created_at=created_at,
        updated_at=updated_at,
        extra=dict(node.extra),
    )


def _json_columns(node: Node) -> tuple[str, str, str]:
    """``node``'s aliases, sources and extra as stored: ``dumps_value`` of each, the same
    text, plain sources (most of them) written without building their dicts first."""
    aliases = "[]" if not node.aliases else dumps_value(list(node.aliases), "aliases")
    sources = _sources_json(node.sources)
    if sources is None:
        sources = dumps_value([s.to_json() for s in node.sources], "sources")
    else:
        sources = storable_text(sources, "sources")
    extra = node.extra
    return aliases, sources, dumps_value(extra if type(extra) is dict else dict(extra), "extra")


def node_columns(node: Node) -> dict[str, Any]:
    """The columns of ``node``'s row (``NODE_ORDER``), JSON ones encoded one way."""
    return dict(zip(NODE_ORDER, _node_row(node), strict=True))


def _node_row(node: Node) -> tuple[Any, ...]:
    """``node``'s row, its columns in ``NODE_ORDER`` (what an insert binds)."""
    aliases, sources, extra = _json_columns(node)
    return (
        node.id,
        node.type,
        node.name,
        node.text,
        aliases,
        node.uri,
        sources,
        node.until,
        node.until_at,
        node.fail,
        node.fix,
        node.status,
        node.created_at,
        node.updated_at,
        extra,
    )


def new_row(node: Node, node_id: str, uri: str, now: str) -> tuple[Node, tuple[Any, ...]]:
    """A new node as a store keeps it (``stamped``: its id and uri, created ``now`` unless
    it says when, updated ``now``) and its row (``_node_row``): what a batch insert does per
    node."""
    stored = stamped(node, node_id, uri, node.created_at or now, now)
    return stored, _node_row(stored)


# Keys this many characters long or shorter fit ``KEY_BYTES`` whatever they hold (UTF-8
# spends at most 4 bytes on a character; ``surrogatepass`` 3 on a surrogate).
_ID_CHARS, _URI_CHARS = KEY_BYTES["id"] // 4, KEY_BYTES["uri"] // 4
_SURROGATE = re.compile("[\ud800-\udfff]")  # what storable_text refuses


def _plainly_storable(node: Node) -> bool:
    """Whether ``check_node`` would pass ``node`` without looking further: a ``Node`` of a
    known type and status whose texts hold no lone surrogate and whose id and uri are
    short. False sends it through the full check (the same errors, in order)."""
    if type(node) is not Node or node.type not in NODE_TYPES or node.status not in STATUSES:
        return False
    if not (type(node.name) is type(node.text) is type(node.id) is type(node.uri) is str):
        return False
    if len(node.id) > _ID_CHARS or len(node.uri) > _URI_CHARS:
        return False
    for value in (
        node.id,
        node.name,
        node.text,
        node.uri,
        node.until,
        node.until_at,
        node.fail,
        node.fix,
        node.created_at,
    ):  # the fields the full check reads as text
        if isinstance(value, str) and not value.isascii() and _SURROGATE.search(value):
            return False
    return True


def check_node(node: Node) -> None:
    """``InvalidArgument`` for a node no store may write (its type, status, texts, keys)."""
    if not _plainly_storable(node):
        _check_node_fully(node)


def _check_node_fully(node: Node) -> None:
    if not isinstance(node, Node):
        raise InvalidArgument(f"put() takes a Node, not {type(node).__name__}")
    if node.type not in NODE_TYPES:
        raise InvalidArgument(f"unknown node type {node.type!r}; known: {', '.join(NODE_TYPES)}")
    if node.status not in STATUSES:
        raise InvalidArgument(f"unknown node status {node.status!r}; known: active, archived")
    if not isinstance(node.name, str) or not isinstance(node.text, str):
        raise InvalidArgument("a node's name and text must be strings")
    who = f"node {node.id[:40]!r}" if node.id else f"a new {node.type}"
    for field in ("id", "name", "text", "uri", "until", "until_at", "fail", "fix", "created_at"):
        value = getattr(node, field)
        if isinstance(value, str):
            storable_text(value, f"{who}: {field}")
    check_key(node.id, "id", f"{who}: id")
    check_key(node.uri, "uri", f"{who}: uri")


_ROW_NAMES = {"nodes": "node", "edges": "edge", "meta": "meta key"}
_KEY_COLUMNS = {
    "nodes": (("id", "id"), ("uri", "uri")),
    "edges": (("src", "id"), ("dst", "id")),
    "meta": (("key", "meta key"),),
}


def loadable(table: str, row: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``row`` of ``table`` as ``rows(table)`` gives it, checked and encoded for a store's
    ``load`` to write as it is: every column of the table and no other, text where text
    belongs, JSON columns encoded one way, and only values ``node_of`` / ``edge_of`` read
    back (a copy never writes a row the destination would call damaged). A value that is
    not one is ``InvalidArgument`` naming the row and the column."""
    if table not in MAINTAINED:
        raise InvalidArgument(f"load() writes nodes, edges or meta, not {table!r}")
    key, json_columns, optional = MAINTAINED[table]
    if not isinstance(row, Mapping):
        raise InvalidArgument(f"load() takes rows as mappings, not {type(row).__name__}")
    what = f"{where}: {_ROW_NAMES[table]} " + ", ".join(repr(row.get(k)) for k in key)
    columns = COLUMNS[table]
    missing, odd = sorted(columns - set(row)), sorted(set(row) - columns)
    if missing or odd:
        wrong = [f"without {', '.join(missing)}"] if missing else []
        wrong += [f"with unknown {', '.join(map(str, odd))}"] if odd else []
        raise InvalidArgument(f"{what}: a {table} row {' and '.join(wrong)}")
    out: dict[str, Any] = {}
    for column in sorted(columns):
        value, at = row[column], f"{what}: {column}"
        if column in json_columns:
            out[column] = dumps_value(value, at)
        elif column == "weight":
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InvalidArgument(f"{at} is a number, not {type(value).__name__}")
            if not math.isfinite(value):
                raise InvalidArgument(f"{at} is a finite number, not {value!r}")
            out[column] = float(value)
        elif value is None and column in optional:
            out[column] = None
        elif not isinstance(value, str):
            raise InvalidArgument(f"{at} is text, not {type(value).__name__}")
        else:
            out[column] = storable_text(value, at)
    for column in key:
        if not row[column]:
            raise InvalidArgument(f"{what}: {column} is empty")
    for column, kind in _KEY_COLUMNS[table]:
        check_key(row[column], kind, f"{what}: {column}")
    if table == "nodes":
        _loadable_node(row, what)
    elif table == "edges" and row["label"] not in EDGE_LABELS:
        raise InvalidArgument(f"{what}: unknown edge label {row['label']!r}")
    elif table == "meta" and row["key"] == REVISION_KEY:
        raise InvalidArgument(f"{what}: {REVISION_KEY!r} is the store's own revision counter")
    return out


def taken(table: str, row: Mapping[str, Any], node_with: Callable[[str, str], str | None]) -> str:
    """What a loaded row of ``table`` would have replaced, in words, for the error a store's
    ``load`` raises; ``node_with(column, value)`` is the id of the stored node whose ``id``
    or ``uri`` column holds ``value`` (None: none), asked only as far as the words need."""
    if table == "nodes":
        if node_with("id", row["id"]) is not None:
            return f"would replace node {row['id']!r}; it writes new rows only"
        holder = node_with("uri", row["uri"])
        who = "another node" if holder is None else f"node {holder!r}"
        return f"would give node {row['id']!r} uri {row['uri']!r}, which is {who}'s"
    if table == "edges":
        edge = f"{row['src']!r} -{row['label']}-> {row['dst']!r}"
        return f"would replace edge {edge}; it writes new rows only"
    return f"would replace meta key {row['key']!r}; it writes new rows only"


def _loadable_node(row: Mapping[str, Any], what: str) -> None:
    """The checks ``node_of`` makes of a node's values, as ``InvalidArgument``."""
    if row["type"] not in NODE_TYPES:
        raise InvalidArgument(f"{what}: unknown node type {row['type']!r}")
    if row["status"] not in STATUSES:
        raise InvalidArgument(f"{what}: unknown node status {row['status']!r}")
    if not row["uri"]:
        raise InvalidArgument(f"{what}: uri is empty")
    aliases, sources, extra = row["aliases"], row["sources"], row["extra"]
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise InvalidArgument(f"{what}: aliases is not a list of strings")
    if not isinstance(sources, list) or not all(isinstance(x, dict) for x in sources):
        raise InvalidArgument(f"{what}: sources is not a list of objects")
    if not isinstance(extra, dict):
        raise InvalidArgument(f"{what}: extra is not an object")


def stored_row(table: str, row: RowLike, columns: list[str], where: str) -> dict[str, Any]:
    """One row as ``rows(table)`` gives it: JSON columns decoded, the rest as stored; a
    value this store never writes is ``CorruptStore`` naming the row and the column."""
    key, json_columns, optional = MAINTAINED[table]
    ident = ", ".join(repr(row[k]) for k in key)
    what = f"{_ROW_NAMES[table]} {ident}"
    got: dict[str, Any] = {}
    for column in columns:
        value = row[column]
        if column in json_columns:
            value = load_json(value, failing(where, what, column))
        elif column == "weight":
            pass  # a number, read by edge_of()
        elif not isinstance(value, str) and not (value is None and column in optional):
            raise damaged(where, what, column, f"holds {kind_of(value)}, not text")
        got[column] = value
    return got


def update_params(table: str, key: Sequence[str], values: Mapping[str, Any]) -> list[Any]:
    """The checked, encoded values of an ``update(table, key, values)``, in ``values``'
    order: only writable columns, text where text belongs (keys within ``KEY_BYTES``), JSON
    columns encoded, a known status; ``InvalidArgument`` names what is wrong."""
    if table not in MAINTAINED:
        raise InvalidArgument(f"update() writes nodes, edges or meta, not {table!r}")
    names, json_columns, optional = MAINTAINED[table]
    writable = WRITABLE[table]
    if len(key) != len(names):
        raise InvalidArgument(f"a {table} row's key is ({', '.join(names)}), not {key!r}")
    odd = sorted(set(values) - writable)
    if odd:
        raise InvalidArgument(
            f"update() writes {', '.join(sorted(writable))} of {table}, not {', '.join(odd)}"
        )
    if table == "meta" and REVISION_KEY in (key[0], values.get("key")):
        raise InvalidArgument(f"meta key {REVISION_KEY!r} is the store's own revision counter")
    params: list[Any] = []
    for column, value in values.items():
        what = f"{table} {key!r}: {column}"
        if column in json_columns:
            params.append(dumps_value(value, what))
        elif value is None and column in optional:
            params.append(None)
        elif not isinstance(value, str):
            raise InvalidArgument(f"{what} is text, not {type(value).__name__}")
        elif column == "status" and value not in STATUSES:
            raise InvalidArgument(f"unknown node status {value!r}; known: active, archived")
        else:
            params.append(checked_column(table, column, value, what))
    return params
