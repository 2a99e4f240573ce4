"""``ContextTree``: the context tree of an Assembly as a notebook widget.

Everything it shows comes from the Assembly API (``tree``, ``set``, ``reset``, ``draft``,
``preview``, ``apply``, ``save_draft``) and the session it edits (``message_at``,
``messages``, ``surface``); the composition bar from ``_composition``. The widget turns
those into a skeleton (synced traits) and answers the front end's requests (bodies, the
model view, the preview, apply) over the channel of ``BaseWidget``.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import traitlets

from .._display import esc, table
from ..assemble import Assembly, DraftStore, Preview, Row
from ..assemble.kernel import apply_ops
from ..errors import InvalidArgument, NotFound
from ..session import Message, Session, TokenCounter
from ..session.kernel import is_shipped_sample, message_of
from ._base import BaseWidget, handler, panel_text
from ._bundle import bundle, bundle_css
from ._composition import composition, fold_stats

if TYPE_CHECKING:
    from ..session import Workspace

__all__ = ["ContextTree"]

# Row flags in the skeleton (the front end reads the same bits).
FAILED, SHADOWED, REGION, SUBAGENT, FIXED = 1, 2, 4, 8, 16
_CONTAINERS = frozenset({"session", "turn", "step"})
_MODE_BITS = {"full": 1, "key": 2, "off": 4}
_MODE_CHARS = {1: "f", 2: "k", 4: "o"}
_MAX_DIFF = 400  # changed messages listed in a preview diff
_MAX_CHILDREN = 200  # children listed for a container row
_PICTURE_ROWS = 400  # rows of the tree a static picture draws whole (else its turns)
_PICTURE_TURNS = 100  # turns a static picture lists


class ContextTree(BaseWidget):
    """The context tree of a session: turn → step → node rows with a full / key / off switch
    on every row, the message of the selected row, the model view, a preview diff and apply.

    ``target`` is a ``Session`` (it becomes ``Assembly(session, tokenizer=tokenizer,
    drafts=drafts, workspace=workspace)``) or an ``Assembly``, which brings its own
    tokenizer, draft store and workspace. ``window`` is the context window the composition
    bar draws (default: the session's ``context_window``); ``height`` is the tree's height in
    pixels. Mode switches change ``assembly.draft`` (saved to the draft store after each one
    when there is a store); ``apply`` in the widget runs ``assembly.apply()`` after a
    confirmation. After edits made in Python, ``refresh()`` shows them.
    """

    _esm = bundle("context_tree.js")
    _css = bundle_css("context_tree.css")

    _rows = traitlets.Dict().tag(sync=True)  # the skeleton, one list per column
    _modes = traitlets.Unicode("").tag(sync=True)  # one character per row
    stats = traitlets.Dict().tag(sync=True)
    """visible, nodes, regions, folded, original, saved, drafted, after, persisted, ..."""
    composition = traitlets.Dict().tag(sync=True)
    """The request by part against the context window (``_composition.composition``)."""
    title = traitlets.Dict().tag(sync=True)
    """The session's title, short id, format version and the tokenizer."""
    height = traitlets.Int(420).tag(sync=True, option=True)
    """The tree's height in pixels."""

    def __init__(
        self,
        target: Session | Assembly,
        *,
        tokenizer: str | None = None,
        drafts: DraftStore | None = None,
        workspace: Workspace | None = None,
        window: int | None = None,
        height: int = 420,
        **kwargs: Any,
    ) -> None:
        self._check_keywords(kwargs)
        if isinstance(target, Assembly):
            given = [
                name
                for name, v in (
                    ("tokenizer", tokenizer),
                    ("drafts", drafts),
                    ("workspace", workspace),
                )
                if v is not None
            ]
            if given:
                raise TypeError(
                    f"ContextTree(assembly) takes {', '.join(given)} from the assembly; pass "
                    f"{' and '.join(f'{g}=' for g in given)} to Assembly(...) instead"
                )
            assembly = target
        elif isinstance(target, Session):
            assembly = Assembly(
                target, tokenizer=tokenizer or "estimate", drafts=drafts, workspace=workspace
            )
        else:
            raise TypeError(
                f"ContextTree() shows a Session or an Assembly, not {type(target).__name__}"
            )
        if window is not None and window <= 0:
            raise InvalidArgument(f"window must be a positive number of tokens, not {window}")
        self.assembly = assembly
        self._window = window
        self._tokenizer = assembly.tokenizer
        self._counter = TokenCounter(self._tokenizer)
        self._persist: bool | None = None  # unknown until the first save is tried
        self._flat: list[Row] = []
        self._by_id: dict[str, Row] = {}
        self._root: Row | None = None
        self._calls: dict[str, dict[str, Any]] | None = None  # call id -> call block
        self._results: dict[str, list[int]] | None = None  # call id -> result seqs
        self._preview: tuple[int, Preview] | None = None  # (revision, preview)
        super().__init__(height=height, **kwargs)
        self._rebuild(structure=True)

    # --- the skeleton --------------------------------------------------------------------------

    @property
    def session(self) -> Session:
        """The session the assembly edits (a new one after each apply)."""
        return self.assembly.session

    def refresh(self) -> ContextTree:
        """Re-read the assembly (after ``set``, ``fit``, ``apply`` and the like in Python)."""
        self._rebuild(structure=True)
        return self

    def _rebuild(self, *, structure: bool) -> None:
        root = self.assembly.tree()
        self._root = root
        flat, parents, ends, depths = _flatten(root)
        self._flat = flat
        self._by_id = {r.id: r for r in flat}
        if structure:
            self._calls = self._results = None
        draft = self.assembly.draft
        with self.hold_sync():
            self.revision += 1  # first: the preview below is the new revision's
            after = self._preview_now().tokens_after if draft else None
            self._rows = _columns(flat, parents, ends, depths)
            self._modes = _modes(flat, ends, set(draft))
            self.stats = self._stats(root, draft, after)
            if structure:
                self.title = {
                    "name": self.session.title or self.session.id[:8],
                    "id": self.session.id[:8],
                    "version": self.session.version,
                    "tokenizer": self._tokenizer,
                }
                self.composition = composition(
                    self.session, tokenizer=self._tokenizer, window=self._window
                )

    def _stats(self, root: Row, draft: dict[int, Any], after: int | None) -> dict[str, Any]:
        leaves = [r for r in root.walk() if r.seq is not None and r.state == "live"]
        folds = fold_stats(root, self.session, self._counter)
        store = self.assembly.drafts
        return {
            "visible": root.tokens,
            "nodes": len(leaves),
            **folds,
            "drafted": len(draft),
            "after": after,
            "persisted": bool(self._persist) and bool(draft),
            "drafts_path": str(store.path) if isinstance(store, DraftStore) else None,
            "events": len(self.session),
            "path": str(self.session.path) if self.session.path is not None else None,
            "tokenizer": self._tokenizer,
        }

    def _preview_now(self) -> Preview:
        """The preview of the current draft (kept until the draft changes)."""
        if self._preview is None or self._preview[0] != self.revision:
            self._preview = (self.revision, self.assembly.preview())
        return self._preview[1]

    def _row(self, row_id: Any) -> Row:
        if not isinstance(row_id, str):
            raise InvalidArgument(f"row must be a row id such as 't3' or 's41', not {row_id!r}")
        row = self._by_id.get(row_id)
        if row is None:
            raise NotFound(
                f"no row {row_id!r} in the tree of session {self.session.id[:8]} (it may have "
                "changed: refresh)"
            )
        return row

    def _save_draft(self) -> None:
        """Keep the draft in the assembly's draft store, when it has one."""
        self._persist = self.assembly.drafts is not None
        if self._persist:
            self.assembly.save_draft()

    def _picture_body(self) -> str:
        """The tree as its HTML (root open, turns folded) when it is small; else its turns as
        a table, so a saved notebook stays small."""
        root = self._root
        if root is None:
            return ""
        rows = len(self._flat)
        if rows <= _PICTURE_ROWS:
            return root._html_()
        turns = [(c.label, f"{c.tokens:,}", c.gist) for c in root.children[:_PICTURE_TURNS]]
        return (
            f"<div class='cx-title'>{esc(root.label)} <span class='cx-muted'>"
            f"{root.tokens:,} tokens</span></div>"
            + table(("row", "tokens", "gist"), turns, numeric=(1,))
            + f"<div class='cx-muted'>{len(root.children):,} turns, {rows:,} rows: run the "
            "notebook to browse them</div>"
        )

    def _repr_fields(self) -> list[str]:
        stats = self.stats
        return [
            self.session.id[:8],
            f"{stats.get('nodes', 0)} nodes",
            f"{len(self._flat)} rows",
            f"{stats.get('drafted', 0)} drafted",
        ]

    # --- requests from the front end -----------------------------------------------------------

    @handler("set_mode")
    def _set_mode(self, row: str, mode: str, digest: str | None = None) -> dict[str, Any]:
        """Set a row's mode in the draft (a container: its subtree) and push the new modes.
        ``digest``: for ``key``, the text the model gets instead (None or empty: automatic)."""
        if digest is not None and not isinstance(digest, str):
            raise InvalidArgument(f"digest must be text, not {type(digest).__name__}")
        text = digest.strip() if digest else None
        if text and mode != "key":
            raise InvalidArgument(f"a digest is for key mode, not {mode!r}")
        target = self._row(row)
        if target.seq is not None:  # a surface node (a region too: its own seq)
            self.assembly.set(target.seq, mode, text)  # type: ignore[arg-type]
            nodes = 1
        else:  # a container (its subtree) or a shadowed row (the replacement over it)
            self.assembly.set(target, mode, text)  # type: ignore[arg-type]
            nodes = sum(1 for r in target.leaves() if r.state == "live") or 1
        self._save_draft()
        self._rebuild(structure=False)
        return {"nodes": nodes, "draft": len(self.assembly.draft), "revision": self.revision}

    @handler("reset")
    def _reset(self) -> dict[str, Any]:
        self.assembly.reset()
        self._save_draft()
        self._rebuild(structure=False)
        return {"draft": 0, "revision": self.revision}

    @handler("refresh")
    def _refresh(self) -> dict[str, Any]:
        self.refresh()
        return {"revision": self.revision}

    @handler("body")
    def _body(self, row: str) -> dict[str, Any]:
        """The full content of a row: its message (text, reasoning, tool calls with their
        results, or the result with its call), or what a container or subagent holds."""
        r = self._row(row)
        at = r.seq if r.seq is not None else r.event_seq
        out: dict[str, Any] = {
            "id": r.id,
            "kind": r.kind,
            "label": r.label,
            "mode": r.mode,
            "tokens": r.tokens,
            "seq": at,
            "state": r.state,
            "turn": r.turn,
            "step": r.step,
            "tool": r.tool,
            "failed": r.failed,
            "gist": r.gist,
        }
        if r.kind in _CONTAINERS:
            leaves = [x for x in r.leaves() if x.state == "live"]
            steps = sum(1 for c in r.children if c.kind == "step")
            out["summary"] = (
                f"{r.label}: {len(leaves)} node{'s' if len(leaves) != 1 else ''}"
                + (f" in {steps} step{'s' if steps != 1 else ''}" if steps else "")
                + f", {r.tokens:,} tokens. Its switch sets every node under it."
            )
            out["children"] = [
                {"kind": c.kind, "label": c.label, "gist": c.gist, "tokens": c.tokens}
                for c in r.children[:_MAX_CHILDREN]
            ]
            return out
        if r.kind == "subagent":
            out["subagent"] = self._subagent(r)
            return out
        if at is None:  # a v0-v2 header system prompt: not a surface node
            out["role"] = "system"
            out["message"] = {
                "role": "system",
                "kind": "system",
                "text": panel_text(self.session.system_prompt or ""),
            }
            out["summary"] = (
                "The system prompt travels in the request header of this log version, not on "
                "the surface: it is sent with every request and cannot be collapsed."
            )
            return out
        drafted = self.assembly.draft.get(at)
        out["digest"] = drafted.digest if drafted is not None else None
        message = self.session.message_at(at)
        out["role"] = message.role
        out["source"] = _source(message)
        out["message"] = self._message(message, kind=r.kind, pairs=True)
        if r.shadowed and r.state == "live":
            out["covers"] = len(r.shadowed)
            out["covers_tokens"] = fold_stats(
                Row(id="", kind="session", label="", children=[r]), self.session, self._counter
            )["original"]
        return out

    @handler("model_view")
    def _model_view(self, offset: int = 0, limit: int = 100) -> dict[str, Any]:
        """The messages the model would receive after the draft (``preview().messages``),
        ``limit`` of them from ``offset``."""
        if offset < 0 or limit <= 0:
            raise InvalidArgument(f"offset must be >= 0 and limit > 0, not {offset}, {limit}")
        preview = self._preview_now()
        messages = preview.messages
        seq_of = dict(
            zip((m.id for m in self.session.messages()), self.session.message_seqs(), strict=True)
        )
        replaced = {n.seq for n in self.session.surface() if n.shadowed}
        calls = {c.id: c for m in messages for c in m.tool_calls}
        page = []
        for index in range(offset, min(len(messages), offset + limit)):
            m = messages[index]
            seq = seq_of.get(m.id)
            item = self._message(m, kind=_kind(m), pairs=False, calls=calls)
            item["index"] = index
            item["seq"] = seq
            item["tokens"] = self._counter.count_message(m.to_json_dict())
            item["fold"] = (
                "new replacement" if seq is None else "replacement" if seq in replaced else None
            )
            page.append(item)
        return {
            "total": len(messages),
            "offset": offset,
            "tokens": preview.tokens_after,
            "drafted": bool(self.assembly.draft),
            "messages": page,
        }

    @handler("preview")
    def _preview_request(self) -> dict[str, Any]:
        """The draft as a before/after diff: ops, notes, tokens, composition and messages."""
        p = self._preview_now()
        before = self.session.messages()
        after_session = apply_ops(self.session, list(p.ops), time=0) if p.ops else self.session
        return {
            "revision": self.revision,
            "ops": [
                {
                    "kind": op.kind,
                    "mode": op.mode,
                    "start_seq": op.start_seq,
                    "end_seq": op.end_seq,
                    "nodes": len(op.shadowed),
                    "tokens_before": op.tokens_before,
                    "tokens_after": op.tokens_after,
                }
                for op in p.ops
            ],
            "notes": list(p.notes),
            "tokens_before": p.tokens_before,
            "tokens_after": p.tokens_after,
            "saved": p.saved,
            "messages_before": len(before),
            "messages_after": len(p.messages),
            "composition_before": self.composition,
            "composition_after": composition(
                after_session, tokenizer=self._tokenizer, window=self._window
            ),
            "diff": self._diff(before, p.messages),
            "path": str(self.session.path) if self.session.path is not None else None,
            "read_only": self._read_only(),
        }

    def _read_only(self) -> str | None:
        """Why the log cannot take an apply (a sample shipped in the package, a file this
        user may not write), or None: the widget says so before the confirm, not after."""
        path = self.session.path
        if path is None:
            return None
        if is_shipped_sample(path):
            return (
                "This is a sample shipped with ctxsdk, read-only: save a copy "
                "(s.save(path)), open that, and apply there."
            )
        if not os.access(path, os.W_OK):
            return f"{path.name} is not writable here: apply to a copy (s.save(path))."
        return None

    @handler("apply")
    def _apply(self, revision: int) -> dict[str, Any]:
        """``assembly.apply()``: the confirmed draft, appended to the log (one batch under the
        lease) when the session was read from a file. Refused when the draft changed after
        the preview that was confirmed."""
        if revision != self.revision:
            raise InvalidArgument(
                f"the draft changed after the preview you confirmed (revision {revision}, now "
                f"{self.revision}); preview again, then apply"
            )
        if not self.assembly.draft:
            raise InvalidArgument("the draft is empty: nothing to apply")
        before = len(self.session)
        path = self.session.path
        out = self.assembly.apply()
        written = path is not None and not out.pending_events
        self._save_draft()  # the applied draft is gone; an empty one stops inheritance
        self._rebuild(structure=True)
        return {
            "written": written,
            "appended": len(out) - before,
            "events_before": before,
            "events_after": len(out),
            "path": str(path) if path is not None else None,
            "revision": self.revision,
        }

    # --- helpers -----------------------------------------------------------------------------

    def _index_calls(self) -> tuple[dict[str, dict[str, Any]], dict[str, list[int]]]:
        """Every tool call (by id) and the seqs of the results that answer it, whole log."""
        if self._calls is None or self._results is None:
            calls: dict[str, dict[str, Any]] = {}
            results: dict[str, list[int]] = {}
            for seq, raw in enumerate(self.session.raw_events):
                msg = message_of(raw) if raw.get("type") in _MESSAGE_TYPES else None
                for block in (msg or {}).get("content") or ():
                    if not isinstance(block, dict):
                        continue
                    if block.get("type") == "tool-call":
                        calls[str(block.get("id"))] = block
                    elif block.get("type") == "tool-result":
                        results.setdefault(str(block.get("toolCallId")), []).append(seq)
            self._calls, self._results = calls, results
        return self._calls, self._results

    def _result_of(self, call_id: str) -> dict[str, Any] | None:
        """The result that answers ``call_id``: the one on the surface, else the last one."""
        _, results = self._index_calls()
        seqs = results.get(call_id)
        if not seqs:
            return None
        live = set(self.session.index.surface_seqs())
        on_surface = [s for s in seqs if s in live]
        seq = on_surface[-1] if on_surface else seqs[-1]
        message = self.session.message_at(seq)
        block = next((b for b in message.tool_results if b.tool_call_id == call_id), None)
        return {
            "seq": seq,
            "text": panel_text(block.text if block is not None else ""),
            "is_error": bool(block.is_error) if block is not None else False,
            "shadowed": not on_surface,
        }

    def _message(
        self,
        message: Message,
        *,
        kind: str,
        pairs: bool,
        calls: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A message for the panel: text, reasoning, calls (with their results when
        ``pairs``), and a tool result with the call that made it."""
        out: dict[str, Any] = {
            "role": message.role,
            "kind": kind,
            "source": _source(message),
            "text": panel_text(message.text),
            "reasoning": [
                panel_text(str(getattr(b, "text", "")))
                for b in message.content
                if b.type == "reasoning"
            ],
            "calls": [],
        }
        for c in message.tool_calls:
            call: dict[str, Any] = {
                "id": c.id,
                "name": c.name,
                "arguments": panel_text(c.arguments),
            }
            if pairs:
                call["result"] = self._result_of(c.id)
            out["calls"].append(call)
        for r in message.tool_results[:1]:
            found = (calls or {}).get(r.tool_call_id)
            if found is None:
                block = self._index_calls()[0].get(r.tool_call_id)
                call_view = (
                    {
                        "id": r.tool_call_id,
                        "name": str(block.get("name")),
                        "arguments": panel_text(str(block.get("arguments", ""))),
                    }
                    if block is not None
                    else None
                )
            else:
                call_view = {
                    "id": found.id,
                    "name": found.name,
                    "arguments": panel_text(found.arguments),
                }
            out["result"] = {
                "call": call_view,
                "text": panel_text(r.text),
                "is_error": bool(r.is_error),
            }
        return out

    def _subagent(self, row: Row) -> dict[str, Any]:
        ws = self.assembly.workspace
        info: dict[str, Any] = {"id": row.id, "title": row.gist, "tokens": row.tokens}
        if ws is None:
            return info
        child = ws.open(row.id)
        messages = child.messages()
        prompt = next((m.text for m in messages if m.role == "user" and m.text), "")
        info.update(messages=len(messages), prompt=panel_text(prompt, 4000), path=str(child.path))
        return info

    def _diff(self, before: Sequence[Message], after: Sequence[Message]) -> list[dict[str, Any]]:
        """The messages before and after as a list of runs: ``=`` (unchanged, counted), ``-``
        (removed) and ``+`` (added), compared by message id."""
        matcher = difflib.SequenceMatcher(
            a=[m.id for m in before], b=[m.id for m in after], autojunk=False
        )
        out: list[dict[str, Any]] = []
        changed = 0

        def item(op: str, m: Message) -> dict[str, Any]:
            return {
                "op": op,
                "role": m.role,
                "kind": _kind(m),
                "gist": m.text.strip().split("\n", 1)[0][:160] or _calls_gist(m),
                "tokens": self._counter.count_message(m.to_json_dict()),
            }

        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                out.append({"op": "=", "count": i2 - i1})
                continue
            for m in _take(before[i1:i2], _MAX_DIFF - changed):
                out.append(item("-", m))
                changed += 1
            for m in _take(after[j1:j2], _MAX_DIFF - changed):
                out.append(item("+", m))
                changed += 1
        total = sum(1 for d in out if d["op"] != "=")
        hidden = _count_changes(matcher) - total
        if hidden > 0:
            out.append({"op": "…", "count": hidden})
        return out


_MESSAGE_TYPES = frozenset({"user/message", "assistant/message", "tool/result", "system/message"})


def _take(items: Sequence[Message], room: int) -> Iterable[Message]:
    return items[: max(0, room)]


def _count_changes(matcher: difflib.SequenceMatcher[str]) -> int:
    return sum(
        (i2 - i1) + (j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
    )


def _kind(message: Message) -> str:
    if message.tool_results:
        return "tool"
    return message.role


def _calls_gist(message: Message) -> str:
    if message.tool_calls:
        return "calls " + ", ".join(c.name for c in message.tool_calls)
    if message.tool_results:
        return "result: " + message.tool_results[0].text.strip().split("\n", 1)[0][:140]
    return ""


def _source(message: Message) -> str:
    s = message.source
    return s.kind + (f" {s.plugin}" if s.plugin else "")


def _flatten(root: Row) -> tuple[list[Row], list[int], list[int], list[int]]:
    """The rows under ``root`` in pre-order, with each row's parent index (-1 at the top),
    the index one past its subtree, and its depth."""
    flat: list[Row] = []
    parents: list[int] = []
    ends: list[int] = []
    depths: list[int] = []
    stack: list[tuple[Row, int, int, bool]] = [(c, -1, 0, False) for c in reversed(root.children)]
    while stack:
        row, parent, depth, done = stack.pop()
        if done:
            ends[parent] = len(flat)
            continue
        at = len(flat)
        flat.append(row)
        parents.append(parent)
        ends.append(at + 1)
        depths.append(depth)
        if row.children:
            stack.append((row, at, depth, True))
            stack.extend((c, at, depth + 1, False) for c in reversed(row.children))
    return flat, parents, ends, depths


def _columns(
    flat: list[Row], parents: list[int], ends: list[int], depths: list[int]
) -> dict[str, list[Any]]:
    """The skeleton by column (one list per field: compact to sync, quick to read)."""
    flags = []
    seqs = []
    for r in flat:
        f = FAILED if r.failed else 0
        if r.state == "shadowed":
            f |= SHADOWED
        elif r.shadowed:
            f |= REGION
        if r.kind == "subagent":
            f |= SUBAGENT | FIXED
        elif r.kind not in _CONTAINERS and r.seq is None and r.event_seq is None:
            f |= FIXED  # a header system prompt: not a surface node
        flags.append(f)
        at = r.seq if r.seq is not None else r.event_seq
        seqs.append(-1 if at is None else at)
    return {
        "id": [r.id for r in flat],
        "parent": parents,
        "end": ends,
        "depth": depths,
        "kind": [r.kind for r in flat],
        "label": [r.label for r in flat],
        "gist": [r.gist for r in flat],
        "seq": seqs,
        "tokens": [r.tokens for r in flat],
        "flags": flags,
        "tool": [r.tool or "" for r in flat],
    }


def _modes(flat: list[Row], ends: list[int], drafted: set[int]) -> str:
    """One character per row: f / k / o, m for a container whose nodes differ; upper case
    when the row (or a node under it) is in the draft."""
    n = len(flat)
    bits = [0] * n  # mode bits of the nodes under a container, 8 = drafted
    out = [""] * n
    for i in range(n - 1, -1, -1):
        r = flat[i]
        if r.kind in _CONTAINERS:
            agg = 0
            j = i + 1
            while j < ends[i]:  # direct children only: each holds its subtree's bits
                agg |= bits[j]
                j = ends[j]
            bits[i] = agg
            modes = agg & 7
            if modes in _MODE_CHARS:
                c = _MODE_CHARS[modes]
            elif modes:
                c = "m"
            else:
                c = _MODE_CHARS[_MODE_BITS[r.mode]]
            out[i] = c.upper() if agg & 8 else c
            continue
        own = _MODE_BITS[r.mode]
        is_node = r.seq is not None and r.state == "live"
        d = is_node and r.seq in drafted
        bits[i] = (own | (8 if d else 0)) if is_node else 0
        c = _MODE_CHARS[own]
        out[i] = c.upper() if d else c
    return "".join(out)


def _static_files() -> list[Path]:
    """The front-end files this widget is built from (for tests and docs)."""
    from ._bundle import static_files

    return static_files("context_tree")
