"""``Memory.scrub``: every text a memory file already holds, through the door again.

A file written before the door (by an older ctxsdk, or under older redaction rules) can hold
a credential in any text column, and the rules keep improving, so a file written today may
hold what tomorrow's rules catch. ``scrub`` reads every row as stored
(``MaintainedStore.rows``) and passes every text through the same decision as every way in
(``_door.screen``): a node's name, text, aliases, uri, sources (every string, keys too),
until, untilAt, fail, fix, times and ``extra`` (every string, keys too); each edge's time;
each meta key and every string of its value. What changed is written in one transaction,
with the rules' version (meta ``redaction``); then the store is compacted, so the old bytes
are gone from the file and its WAL.

A stored text cannot be refused as a new one is, so a text the door would refuse (nothing
but credentials) becomes its redacted form (``[REDACTED:<kind>]``), except:

- an alias is dropped: it only exists to find the node by, and a marker finds nothing;
- a session-map box's summary says ``(withheld: <kinds>)``, as ingest writes it;
- a uri becomes the node's default (``ctx://<type>/<id>``), as does a redacted uri that
  another node holds (uris stay unique);
- a node left meaningless is archived, not deleted (kept with its sources and edges,
  hidden from search and the map, ``restore`` brings it back): an entity whose name was
  only credentials, or another memory whose name and text both were. The workspace root
  and the session-map boxes are never archived;
- a meta key whose redacted form is already a key: the value under that key was written
  through the door since, so it is kept and the old one removed;
- two keys of one JSON object that redact to the same key: the later one gets `` (2)``.

The report counts what was withheld by kind and names rows by id, field and key (keys
redacted), never a secret.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from .._display import Rendered, esc, kv, plural, table
from ..errors import CorruptStore, LockHeld, StaleRedactionWarning
from ..session import redact
from ..session.kernel import REDACTION_KINDS, REDACTION_RULES_VERSION
from ._door import hollow, screen
from ._model import node_uri
from ._store import MaintainedStore, MemoryStore

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "RULES_KEY",
    "ScrubChange",
    "ScrubReport",
    "record_rules",
    "recorded_rules",
    "scrub_store",
    "stale",
    "warn_if_stale",
]

RULES_KEY = "redaction"  # meta: {"rules": the REDACTION_RULES_VERSION its texts went through}
_TEXTS = ("name", "text", "until", "until_at", "fail", "fix", "created_at", "updated_at")
_NEVER_ARCHIVED = ("workspace", "episode")
_SHOWN = 20  # changes listed by the text form; to_polars() has them all

Table = Literal["nodes", "edges", "meta"]
_TABLES: tuple[Table, ...] = ("nodes", "edges", "meta")


def recorded_rules(value: Any) -> int | None:
    """The rules' version a meta ``redaction`` value records; None when there is none (a
    file from before it was recorded) or it is not one this code writes."""
    rules = value.get("rules") if isinstance(value, Mapping) else None
    return rules if isinstance(rules, int) and not isinstance(rules, bool) else None


def record_rules(store: MemoryStore) -> None:
    """Record that every text in ``store`` went through today's rules (a new file: each
    text it will hold enters through the door). Inside the caller's batch."""
    store.set_meta(RULES_KEY, {"rules": REDACTION_RULES_VERSION})


def stale(rules: int | None) -> str | None:
    """What is wrong with a file that records ``rules`` (None: no version), or None when
    its texts went through today's rules (or newer ones)."""
    now = f"this ctxsdk's are v{REDACTION_RULES_VERSION}"
    if rules is None:
        return f"this memory does not record which redaction rules its texts went through; {now}"
    if rules < REDACTION_RULES_VERSION:
        return f"this memory's texts went through redaction rules v{rules}; {now}"
    return None


def warn_if_stale(store: MemoryStore, *, stacklevel: int) -> None:
    """A ``StaleRedactionWarning`` when ``store`` records older rules than today's, or none."""
    try:
        rules = recorded_rules(store.get_meta(RULES_KEY))
    except CorruptStore:  # a damaged mark records nothing; opening must not fail on it
        rules = None
    why = stale(rules)
    if why is not None:
        warnings.warn(
            StaleRedactionWarning(
                f"{store.location}: {why}, so it may still hold a credential they withhold; "
                "Memory.scrub() (`ctxsdk memory DB scrub`) applies them to every stored text",
                rules=rules,
            ),
            stacklevel=stacklevel + 1,
        )


@dataclass(frozen=True, slots=True)
class ScrubChange:
    """One field of one row that scrub changed (or would): the ``table``, the row (``ref``:
    a node id, ``src -label-> dst``, a meta key as redacted), the ``field`` (a column), how
    many secrets of each kind were withheld from it (``counts``), and ``note`` when it was
    not only redacted (``only a credential``, ``alias dropped``, ``default uri``, ...)."""

    table: Table
    ref: str
    field: str
    counts: Mapping[str, int]
    note: str = ""

    def __post_init__(self) -> None:
        # Ids are the store's own and never rewritten; a report still never shows a secret.
        object.__setattr__(self, "ref", redact(self.ref).text)

    @property
    def withheld(self) -> int:
        return sum(self.counts.values())


def _kinds_text(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{k} {n}" for k, n in counts.items())


@dataclass(frozen=True)
class ScrubReport(Rendered):
    """What one ``Memory.scrub`` changed (or, ``dry_run``, would change): every changed
    field (``changes``), the nodes archived because nothing but credentials was left of
    them (``archived``), the rules' version applied (``rules``) and the one the file
    recorded before (``previous``; None: never recorded), the rows read, and whether the
    file and its WAL were compacted (``compacted``; None on a dry run, False when another
    connection kept old WAL frames alive). It never holds a secret."""

    location: str
    rules: int
    previous: int | None
    dry_run: bool
    changes: tuple[ScrubChange, ...]
    archived: tuple[str, ...]
    read: Mapping[str, int]  # rows read per table
    compacted: bool | None

    @property
    def changed(self) -> bool:
        return bool(self.changes)

    @property
    def nodes(self) -> int:
        """Nodes with at least one changed field."""
        return len({c.ref for c in self.changes if c.table == "nodes"})

    @property
    def fields(self) -> int:
        """Fields changed, over every table."""
        return len(self.changes)

    @property
    def edges(self) -> int:
        return len({c.ref for c in self.changes if c.table == "edges"})

    @property
    def meta(self) -> int:
        return len({c.ref for c in self.changes if c.table == "meta"})

    @property
    def kinds(self) -> dict[str, int]:
        """Secrets withheld per kind (``REDACTION_KINDS`` order, unknown kinds after)."""
        total: Counter[str] = Counter()
        for c in self.changes:
            total.update(c.counts)
        known = [k for k in REDACTION_KINDS if total[k]]
        return {k: total[k] for k in (*known, *sorted(set(total) - set(known)))}

    @property
    def withheld(self) -> int:
        return sum(self.kinds.values())

    def __repr__(self) -> str:
        mode = "dry run, " if self.dry_run else ""
        return (
            f"ScrubReport({mode}{self.nodes} nodes, {self.fields} fields, {self.withheld} withheld)"
        )

    def _headline(self) -> str:
        verb = "would change" if self.dry_run else "changed"
        was = "none recorded" if self.previous is None else f"v{self.previous}"
        head = (
            f"scrub {self.location} (redaction rules v{self.rules}; the file had {was}): "
            f"{plural(self.nodes, 'node')}, {plural(self.fields, 'field')}, "
            f"{plural(self.edges, 'edge')}, {plural(self.meta, 'meta value')} {verb}"
        )
        if self.withheld:
            head += f"; {plural(self.withheld, 'credential')} withheld ({_kinds_text(self.kinds)})"
        return head

    def _tail(self) -> str:
        if self.dry_run:
            return "dry run: nothing written"
        if self.compacted:
            return "compacted: the file and its WAL hold no old bytes"
        return (
            "not compacted: another connection held the file, so old bytes may remain in it "
            "or its WAL; scrub again once that connection has closed"
        )

    def _text_(self) -> str:
        lines = [self._headline()]
        if self.archived:
            lines.append(f"  archived (nothing but credentials left): {', '.join(self.archived)}")
        for c in self.changes[:_SHOWN]:
            what = _kinds_text(c.counts)
            note = f" ({c.note})" if c.note and what else c.note
            lines.append(
                f"  {c.table[:-1] if c.table != 'meta' else 'meta'} {c.ref} {c.field}: {what}{note}"
            )
        if len(self.changes) > _SHOWN:
            lines.append(f"  ... {len(self.changes) - _SHOWN} more (to_polars() lists them all)")
        lines.append(self._tail())
        return "\n".join(lines)

    def _html_(self) -> str:
        pairs: list[tuple[str, object]] = [
            ("rules", f"v{self.rules}"),
            ("recorded before", "none" if self.previous is None else f"v{self.previous}"),
            ("withheld", _kinds_text(self.kinds) or "nothing"),
            ("rows read", ", ".join(f"{n} {t}" for t, n in self.read.items())),
            ("archived", ", ".join(self.archived) or "none"),
            ("result", self._tail()),
        ]
        rows = [
            (c.table, esc(c.ref), esc(c.field), esc(_kinds_text(c.counts)), esc(c.note))
            for c in self.changes
        ]
        return (
            f"<div class='cx-title'>{esc(self._headline())}</div>"
            + kv(pairs)
            + (
                table(["table", "row", "field", "withheld", "note"], rows, raw=(1, 2, 3, 4))
                if rows
                else ""
            )
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "location": self.location,
            "rules": self.rules,
            "previous": self.previous,
            "dryRun": self.dry_run,
            "nodes": self.nodes,
            "fields": self.fields,
            "edges": self.edges,
            "meta": self.meta,
            "kinds": self.kinds,
            "archived": list(self.archived),
            "compacted": self.compacted,
            "read": dict(self.read),
            "changes": [
                {
                    "table": c.table,
                    "ref": c.ref,
                    "field": c.field,
                    "counts": dict(c.counts),
                    "note": c.note,
                }
                for c in self.changes
            ],
        }

    def to_polars(self) -> pl.DataFrame:
        """One row per changed field: table, ref, field, withheld (the count), kinds (the
        counts as text) and note."""
        import polars as pl

        schema = {
            "table": pl.String,
            "ref": pl.String,
            "field": pl.String,
            "withheld": pl.Int64,
            "kinds": pl.String,
            "note": pl.String,
        }
        rows = [
            {
                "table": c.table,
                "ref": c.ref,
                "field": c.field,
                "withheld": c.withheld,
                "kinds": _kinds_text(c.counts),
                "note": c.note,
            }
            for c in self.changes
        ]
        return pl.DataFrame(rows, schema=schema)


# -- the plan --------------------------------------------------------------------------------
def _json_texts(value: Any, counts: Counter[str]) -> Any:
    """``value`` with every string in it, object keys too, through the door (a text that
    is only credentials keeps its marker form); keys that meet get `` (2)``, `` (3)``."""
    if isinstance(value, str):
        s = screen(value)
        counts.update(s.counts)
        return s.text
    if isinstance(value, list):
        return [_json_texts(v, counts) for v in value]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            base = key = _json_texts(str(k), counts)
            n = 2
            while key in out:
                key, n = f"{base} ({n})", n + 1
            out[key] = _json_texts(v, counts)
        return out
    return value


@dataclass
class _Plan:
    """What scrub writes: per table, row key -> column -> new value; the meta keys to drop."""

    updates: dict[Table, dict[tuple[str, ...], dict[str, Any]]] = field(
        default_factory=lambda: {"nodes": {}, "edges": {}, "meta": {}}
    )
    drop_meta: list[str] = field(default_factory=list)
    changes: list[ScrubChange] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)
    read: dict[str, int] = field(default_factory=dict)  # rows read per table

    def set(self, table: Table, key: tuple[str, ...], column: str, value: Any) -> None:
        self.updates[table].setdefault(key, {})[column] = value


def _plan_node(row: Mapping[str, Any], plan: _Plan) -> str | None:
    """Plan one node's texts (its uri aside); returns its redacted uri when that changed
    (the caller keeps uris unique)."""
    nid, ntype = str(row["id"]), str(row["type"])
    key = (nid,)
    new: dict[str, Any] = {}
    for column in _TEXTS:
        value = row[column]
        if value is None:
            continue
        s = screen(value)
        if s.text == value:
            continue
        note = ""
        text = s.text
        if s.refused is not None:
            note = "only a credential"
            if ntype == "episode" and column == "text":  # as ingest writes a box's summary
                text, note = f"(withheld: {', '.join(s.kinds)})", "summary withheld"
        new[column] = text
        plan.set("nodes", key, column, text)
        plan.changes.append(ScrubChange("nodes", nid, column, s.counts, note))
    _plan_aliases(row, plan)
    for column in ("sources", "extra"):
        counts: Counter[str] = Counter()
        value = _json_texts(row[column], counts)
        if value != row[column]:
            plan.set("nodes", key, column, value)
            plan.changes.append(ScrubChange("nodes", nid, column, _ordered(counts)))
    if row["status"] == "active" and ntype not in _NEVER_ARCHIVED:
        name, text = new.get("name", row["name"]), new.get("text", row["text"])
        if ntype == "entity":
            hollowed = "name" in new and hollow(name)
        else:
            hollowed = bool({"name", "text"} & set(new)) and hollow(name) and hollow(text)
        if hollowed:
            plan.set("nodes", key, "status", "archived")
            plan.changes.append(ScrubChange("nodes", nid, "status", {}, "archived"))
            plan.archived.append(redact(nid).text)
    uri = row["uri"]
    s = screen(uri)
    if s.text == uri:
        return None
    plan.changes.append(ScrubChange("nodes", nid, "uri", s.counts))
    return node_uri(ntype, nid) if s.refused is not None else s.text


def _plan_aliases(row: Mapping[str, Any], plan: _Plan) -> None:
    aliases, nid = row["aliases"], str(row["id"])
    counts: Counter[str] = Counter()
    if not (isinstance(aliases, list) and all(isinstance(a, str) for a in aliases)):
        value = _json_texts(aliases, counts)  # not what the store writes: every string
        if value != aliases:
            plan.set("nodes", (nid,), "aliases", value)
            plan.changes.append(ScrubChange("nodes", nid, "aliases", _ordered(counts)))
        return
    kept: list[str] = []
    dropped = 0
    for alias in aliases:
        s = screen(alias)
        counts.update(s.counts)
        if s.text != alias and (hollow(s.text) or s.text in kept):
            dropped += 1  # only a credential (or the same as one kept, once redacted)
            continue
        kept.append(s.text)
    if kept != aliases:
        note = f"{plural(dropped, 'alias', 'aliases')} dropped" if dropped else ""
        plan.set("nodes", (nid,), "aliases", kept)
        plan.changes.append(ScrubChange("nodes", nid, "aliases", _ordered(counts), note))


def _ordered(counts: Counter[str]) -> dict[str, int]:
    known = [k for k in REDACTION_KINDS if counts[k]]
    return {k: counts[k] for k in (*known, *sorted(k for k in counts if k not in known))}


def _plan_uris(rows: Iterable[Mapping[str, Any]], wanted: Mapping[str, str], plan: _Plan) -> None:
    """Each node whose uri changes gets its redacted uri unless another node holds it (or
    is given it first): then its default uri, which holds its own id."""
    taken = {str(r["uri"]) for r in rows if str(r["id"]) not in wanted}
    for row in rows:
        nid = str(row["id"])
        if nid not in wanted:
            continue
        uri = wanted[nid]
        if uri in taken:
            uri = node_uri(str(row["type"]), nid)
            ref = redact(nid).text
            change = next(c for c in plan.changes if c.ref == ref and c.field == "uri")
            plan.changes[plan.changes.index(change)] = ScrubChange(
                "nodes", nid, "uri", change.counts, "default uri"
            )
        taken.add(uri)
        plan.set("nodes", (nid,), "uri", uri)


def _plan_meta(rows: list[dict[str, Any]], plan: _Plan) -> None:
    keys = {str(r["key"]) for r in rows}
    for row in rows:
        old = str(row["key"])
        s = screen(old)
        counts: Counter[str] = Counter()
        value = _json_texts(row["value"], counts)
        if s.text != old and s.text in keys:
            plan.drop_meta.append(old)
            counts.update(s.counts)
            note = "key taken: old value dropped"
            plan.changes.append(ScrubChange("meta", s.text, "key", _ordered(counts), note))
            continue
        if s.text != old:
            keys.add(s.text)
            plan.set("meta", (old,), "key", s.text)
            plan.changes.append(ScrubChange("meta", s.text, "key", s.counts))
        if value != row["value"]:
            plan.set("meta", (old,), "value", value)
            plan.changes.append(ScrubChange("meta", s.text, "value", _ordered(counts)))


def plan_scrub(store: MaintainedStore) -> _Plan:
    """Read every row and decide what changes (the caller holds the transaction)."""
    plan = _Plan()
    nodes, edges, meta = store.rows("nodes"), store.rows("edges"), store.rows("meta")
    plan.read = {"nodes": len(nodes), "edges": len(edges), "meta": len(meta)}
    wanted: dict[str, str] = {}
    for row in nodes:
        uri = _plan_node(row, plan)
        if uri is not None:
            wanted[str(row["id"])] = uri
    _plan_uris(nodes, wanted, plan)
    for row in edges:
        value = row["created_at"]
        s = screen(value)
        if s.text != value:
            key = (str(row["src"]), str(row["dst"]), str(row["label"]))
            plan.set("edges", key, "created_at", s.text)
            ref = f"{key[0]} -{key[2]}-> {key[1]}"
            note = "only a credential" if s.refused else ""
            plan.changes.append(ScrubChange("edges", ref, "created_at", s.counts, note))
    _plan_meta([r for r in meta if r["key"] != RULES_KEY], plan)
    return plan


def scrub_store(store: MaintainedStore, *, dry_run: bool) -> ScrubReport:
    """Scrub ``store`` (see the module docs): plan and write in one transaction, record the
    rules' version, then compact (not on a dry run)."""
    context = store.snapshot() if dry_run else store.batch()
    with context:
        previous = recorded_rules(store.get_meta(RULES_KEY))
        plan = plan_scrub(store)
        if not dry_run:
            for table in _TABLES:
                for key, values in plan.updates[table].items():
                    store.update(table, key, values)
            for old in plan.drop_meta:
                store.set_meta(old, None)
            if previous is None or previous < REDACTION_RULES_VERSION:
                store.set_meta(RULES_KEY, {"rules": REDACTION_RULES_VERSION})
    compacted: bool | None = None
    if not dry_run:
        try:
            compacted = store.compact()
        except LockHeld:  # another writer held the file all along: the rewrite stands
            compacted = False
    return ScrubReport(
        location=store.location,
        rules=REDACTION_RULES_VERSION,
        previous=previous,
        dry_run=dry_run,
        changes=tuple(plan.changes),
        archived=tuple(plan.archived),
        read=plan.read,
        compacted=compacted,
    )
