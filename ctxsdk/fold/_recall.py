"""Finding and reading what folds archived: ``search`` and ``recall``.

Search is exact (case-insensitive substring; no embeddings, by design: an identifier either
is there or is not) over each checkpoint's id, its text on the surface, its archived messages
(text, reasoning, tool calls and results) and tool names. Hits are newest first by position
in the conversation (the archived messages' seqs, not wall clock), so ``limit`` keeps the most
recent; within a checkpoint the latest matching message wins and ``match_count`` /
``earliest_seq`` keep a superseded value reachable. Short messages come back whole, long
ones as a window around the match.

Recall reads one checkpoint: ``depth="summary"`` its text, ``"exact"`` a page of its archived
messages, verified against the hashes the log recorded. A missing or corrupt bundle is never
read around: search lists it as unavailable, recall raises with the reason.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .._display import Rendered, badge, esc, plural, table
from ..errors import BundleError, CorruptBundle, InvalidArgument, NotFound
from ..session import Message
from ..session.kernel import gist, message_of, read_marker, search_text
from ._bundles import Bundle, BundleReader
from ._transaction import FoldRecord

__all__ = [
    "MAX_PAGE",
    "Recall",
    "SearchHit",
    "SearchResult",
    "checked_bundle",
    "recall",
    "resolve_ref",
    "search",
]

MAX_PAGE = 20
_WHOLE = 600  # a message this short comes back whole
_WINDOW = 400

MatchKind = Literal["id", "checkpoint-text", "message-text", "tool-name"]


@dataclass(frozen=True)
class SearchHit:
    """One checkpoint's best match: the latest matching archived message (``seq`` is its
    original surface seq), how many of its messages matched, and the earliest."""

    checkpoint_id: str
    match_kind: MatchKind
    excerpt: str
    seq: int | None = None
    message_index: int | None = None
    role: str | None = None
    match_count: int = 1
    earliest_seq: int | None = None
    earliest_message_index: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "ref": f"cp:{self.checkpoint_id}",
            "matchKind": self.match_kind,
            "seq": self.seq,
            "matchedMessageIndex": self.message_index,
            "role": self.role,
            "excerpt": self.excerpt,
            "matchCount": self.match_count,
            "earliestSeq": self.earliest_seq,
            "earliestMatchedMessageIndex": self.earliest_message_index,
        }


@dataclass(frozen=True)
class SearchResult(Rendered):
    query: str
    hits: tuple[SearchHit, ...]
    total: int
    searched: int
    unavailable: tuple[tuple[str, str], ...] = ()

    def __len__(self) -> int:
        return len(self.hits)

    def __repr__(self) -> str:
        return f"SearchResult({self.query!r}, {len(self.hits)} hits of {self.total})"

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "total": self.total,
            "searched": self.searched,
            "hits": [h.to_json() for h in self.hits],
            "unavailable": [{"ref": f"cp:{c}", "reason": r} for c, r in self.unavailable],
        }

    def _text_(self) -> str:
        lines = [
            f"search {self.query!r}: {plural(self.total, 'matching checkpoint')} of "
            f"{self.searched} searched" + (f", {len(self.hits)} shown" if self.hits else "")
        ]
        for h in self.hits:
            where = f"seq {h.seq}" if h.seq is not None else h.match_kind
            more = (
                f" ({h.match_count} matches, earliest seq {h.earliest_seq})"
                if (h.match_count > 1)
                else ""
            )
            lines.append(
                f"  cp:{h.checkpoint_id}  {where}{more}: {' '.join(h.excerpt.split())[:100]}"
            )
        for cid, why in self.unavailable:
            lines.append(f"  cp:{cid} unavailable: {why}")
        return "\n".join(lines)

    def _html_(self) -> str:
        rows = [
            (
                f"cp:{h.checkpoint_id}",
                h.seq if h.seq is not None else "",
                h.role or h.match_kind,
                h.match_count,
                f"<span class='cx-pre'>{esc(h.excerpt)}</span>",
            )
            for h in self.hits
        ]
        head = (
            f"<div class='cx-title'>search {esc(repr(self.query))}: "
            f"{esc(plural(self.total, 'matching checkpoint'))} of {self.searched}</div>"
        )
        bad = "".join(
            f"<div>{badge('unavailable', 'error')} cp:{esc(c)}: {esc(r)}</div>"
            for c, r in self.unavailable
        )
        return (
            head
            + table(["ref", "seq", "role", "matches", "excerpt"], rows, numeric=(1, 3), raw=(4,))
            + bad
        )


def _excerpt(text: str, at: int, n: int) -> str:
    if len(text) <= _WHOLE:
        return text
    lo = max(0, min(at - (_WINDOW - n) // 2, len(text) - _WINDOW))
    hi = min(len(text), lo + _WINDOW)
    return ("…" if lo else "") + text[lo:hi] + ("…" if hi < len(text) else "")


def _is_checkpoint(message: Any) -> bool:
    """A message that is itself a checkpoint (a fold's or a harness compaction's)."""
    mark = read_marker({"type": "user/message", "data": message})
    return mark is not None and mark.kind in ("fold", "compaction")


def _role(message: Any) -> str:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool-result" for b in content
    ):
        return "tool"
    return str(message.get("role", "")) if isinstance(message, dict) else ""


def search(
    records: Sequence[FoldRecord],
    reader: BundleReader,
    log: Sequence[Mapping[str, Any]],
    query: str,
    limit: int = 10,
) -> SearchResult:
    """Hits for ``query`` over ``records``' checkpoints, newest first."""
    if not query.strip():
        raise InvalidArgument("search needs a non-empty query")
    if limit < 1:
        raise InvalidArgument(f"limit must be at least 1, got {limit}")
    needle = query.lower()
    found: list[tuple[int, SearchHit]] = []
    unavailable: list[tuple[str, str]] = []
    for rec in records:
        try:
            bundle = checked_bundle(rec, reader, log)
        except (BundleError, NotFound) as exc:
            unavailable.append((rec.checkpoint_id, getattr(exc, "reason", str(exc))))
            continue
        matches: list[tuple[int, int, str, int]] = []  # (index, seq, text, at)
        tool_hit: tuple[int, str] | None = None
        narrative: tuple[int, int, str, int] | None = None  # a match in an archived checkpoint
        for i, (seq, msg) in enumerate(
            zip(bundle.ordered_surface_seqs, bundle.messages, strict=False)
        ):
            text = search_text(msg)
            if _is_checkpoint(msg):
                # a root archives earlier checkpoints: their text points at the originals,
                # which their own bundles hold; a match here ranks after those
                at = text.lower().find(needle)
                if at >= 0:
                    narrative = (i, seq, text, at)
                continue
            at = text.lower().find(needle)
            if at >= 0:
                matches.append((i, seq, text, at))
            elif tool_hit is None:
                for b in msg.get("content", ()) if isinstance(msg.get("content"), list) else ():
                    if (
                        isinstance(b, dict)
                        and b.get("type") == "tool-call"
                        and needle in str(b.get("name", "")).lower()
                    ):
                        tool_hit = (i, str(b.get("name")))
        last = max(rec.shadowed, default=rec.record_seq)
        if matches:
            i, seq, text, at = matches[-1]
            first = matches[0]
            hit = SearchHit(
                rec.checkpoint_id,
                "message-text",
                _excerpt(text, at, len(needle)),
                seq,
                i,
                _role(bundle.messages[i]),
                len(matches),
                first[1],
                first[0],
            )
            found.append((seq, hit))
        elif narrative is not None:
            i, seq, text, at = narrative
            found.append(
                (
                    seq,
                    SearchHit(
                        rec.checkpoint_id,
                        "checkpoint-text",
                        _excerpt(text, at, len(needle)),
                        seq,
                        i,
                        "checkpoint",
                    ),
                )
            )
        elif needle in rec.checkpoint_id.lower():
            found.append((last, SearchHit(rec.checkpoint_id, "id", rec.checkpoint_id)))
        elif rec.text and needle in rec.text.lower():
            at = rec.text.lower().find(needle)
            found.append(
                (
                    last,
                    SearchHit(
                        rec.checkpoint_id, "checkpoint-text", _excerpt(rec.text, at, len(needle))
                    ),
                )
            )
        elif tool_hit is not None:
            i, name = tool_hit
            seq = bundle.ordered_surface_seqs[i]
            found.append(
                (seq, SearchHit(rec.checkpoint_id, "tool-name", name, seq, i, "assistant"))
            )
    # newest first by conversation position; matches in the archived messages themselves
    # before matches in checkpoint text (ids, our own or an archived one's)
    found.sort(key=lambda p: (p[1].match_kind in ("checkpoint-text", "id"), -p[0]))
    return SearchResult(
        query, tuple(h for _, h in found[:limit]), len(found), len(records), tuple(unavailable)
    )


@dataclass(frozen=True)
class Recall(Rendered):
    """One checkpoint read back: its ``text`` (depth summary), or a page of its exact
    archived ``messages`` with their original ``seqs`` (depth exact), verified."""

    checkpoint_id: str
    depth: Literal["summary", "exact"]
    text: str
    messages: tuple[dict[str, Any], ...]
    seqs: tuple[int, ...]
    offset: int
    total: int
    next_offset: int | None
    logical_hash: str
    verified: bool

    def __repr__(self) -> str:
        return (
            f"Recall(cp:{self.checkpoint_id}, {self.depth}, messages {self.offset}.."
            f"{self.offset + len(self.messages)} of {self.total})"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "ref": f"cp:{self.checkpoint_id}",
            "depth": self.depth,
            "verified": self.verified,
            "text": self.text if self.depth == "summary" else None,
            "messages": [
                {"seq": s, "message": m} for s, m in zip(self.seqs, self.messages, strict=True)
            ],
            "offset": self.offset,
            "total": self.total,
            "nextOffset": self.next_offset,
            "logicalHash": self.logical_hash,
        }

    def _text_(self) -> str:
        state = "verified" if self.verified else "not verified"
        head = f"recall cp:{self.checkpoint_id} ({self.depth}, {state})"
        if self.depth == "summary":
            return head + "\n" + self.text
        lines = [
            head
            + f": messages {self.offset}–{self.offset + len(self.messages) - 1} of {self.total}"
        ]
        for s, m in zip(self.seqs, self.messages, strict=True):
            lines.append(f"  seq {s} {_role(m)}: {gist(m, 110)}")
        if self.next_offset is not None:
            lines.append(f"  … more from offset {self.next_offset}")
        return "\n".join(lines)

    def _html_(self) -> str:
        head = (
            f"<div class='cx-title'>recall cp:{esc(self.checkpoint_id)} "
            f"{badge(self.depth)} "
            f"{badge('verified', 'ok') if self.verified else badge('not verified', 'error')}</div>"
        )
        if self.depth == "summary":
            return head + f"<pre class='cx-pre'>{esc(self.text)}</pre>"
        body = "".join(_message_html(m, s) for s, m in zip(self.seqs, self.messages, strict=True))
        more = (
            f"<div class='cx-dim'>more from offset {self.next_offset}</div>"
            if self.next_offset is not None
            else ""
        )
        return head + body + more


def _message_html(message: dict[str, Any], seq: int) -> str:
    """An archived (raw) message through the shared viewer, which reads typed messages; one
    the model does not validate is shown as its JSON."""
    from pydantic import ValidationError

    from .._display import message_html

    try:
        typed = Message.model_validate(message)
    except ValidationError:
        return f"<pre class='cx-pre'>{esc(json.dumps(message, ensure_ascii=False)[:4000])}</pre>"
    return message_html(typed, seq=seq)


def resolve_ref(records: Sequence[FoldRecord], ref: str | int) -> FoldRecord:
    """The record a reference names: ``cp:<id>``, a bare id, or an original seq it archived."""
    if isinstance(ref, int):
        for rec in reversed(records):
            if ref in rec.shadowed:
                return rec
        raise NotFound(f"no fold archived seq {ref}")
    cid = ref[3:] if ref.startswith("cp:") else ref
    for rec in records:
        if rec.checkpoint_id == cid:
            return rec
    known = ", ".join(f"cp:{r.checkpoint_id}" for r in records[-5:]) or "none"
    raise NotFound(f"no checkpoint {ref!r} in this session (latest: {known})")


def checked_bundle(
    record: FoldRecord, reader: BundleReader, log: Sequence[Mapping[str, Any]]
) -> Bundle:
    """``record``'s bundle, verified: its own hashes, the file and logical hashes the log
    recorded (v3), and its messages equal to the log's own copies of the shadowed events
    (the log is append-only, so they are still there). Raises ``BundleMissing`` or
    ``CorruptBundle``; never returns bytes that failed a check."""
    bundle = reader.get(record.checkpoint_id, file_sha256=record.file_sha256 or None)
    path = reader.store.path(bundle.session_id, bundle.checkpoint_id)
    if record.logical_hash and bundle.logical_hash != record.logical_hash:
        raise CorruptBundle(
            f"bundle {record.checkpoint_id}: logical hash {bundle.logical_hash[:16]}… is not the "
            f"{record.logical_hash[:16]}… the log recorded",
            problem="logical-hash",
            path=path,
        )
    if tuple(bundle.ordered_surface_seqs) != tuple(record.shadowed):
        raise CorruptBundle(
            f"bundle {record.checkpoint_id} archives seqs "
            f"{list(bundle.ordered_surface_seqs)[:6]}…, "
            f"not the {list(record.shadowed)[:6]}… its fold took off the surface",
            problem="source-digest",
            path=path,
        )
    for seq, msg in zip(record.shadowed, bundle.messages, strict=True):
        original = message_of(log[seq]) if 0 <= seq < len(log) else None
        if original is not None and original != msg:
            raise CorruptBundle(
                f"bundle {record.checkpoint_id}: its message for seq {seq} differs from the log's",
                problem="log-mismatch",
                path=path,
            )
    return bundle


def recall(
    record: FoldRecord,
    reader: BundleReader,
    log: Sequence[Mapping[str, Any]],
    depth: str = "summary",
    offset: int = 0,
    limit: int = MAX_PAGE,
) -> Recall:
    """Read ``record``'s checkpoint. Raises ``BundleMissing`` / ``CorruptBundle`` (never wrong
    bytes) when the exact messages cannot be verified."""
    if depth not in ("summary", "exact"):
        raise InvalidArgument(f"depth must be 'summary' or 'exact', got {depth!r}")
    if offset < 0 or not 1 <= limit <= MAX_PAGE:
        raise InvalidArgument(f"offset must be ≥ 0 and limit 1..{MAX_PAGE}, got {offset}, {limit}")
    if depth == "summary" and record.text:
        return Recall(
            record.checkpoint_id,
            "summary",
            record.text,
            (),
            (),
            0,
            record.messages,
            None,
            record.logical_hash,
            False,
        )
    bundle = checked_bundle(record, reader, log)
    if depth == "summary":  # a masking pass has no checkpoint text: list what it holds
        text = "\n".join(
            f"seq {s}: {gist(m, 110)}"
            for s, m in zip(bundle.ordered_surface_seqs, bundle.messages, strict=False)
        )
        return Recall(
            record.checkpoint_id,
            "summary",
            text,
            (),
            (),
            0,
            len(bundle.messages),
            None,
            bundle.logical_hash,
            True,
        )
    page = bundle.messages[offset : offset + limit]
    seqs = bundle.ordered_surface_seqs[offset : offset + limit]
    nxt = offset + limit if offset + limit < len(bundle.messages) else None
    return Recall(
        record.checkpoint_id,
        "exact",
        "",
        tuple(page),
        tuple(seqs),
        offset,
        len(bundle.messages),
        nxt,
        bundle.logical_hash,
        True,
    )
