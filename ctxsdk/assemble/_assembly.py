"""``Assembly``: edit a session's context per node (full / key / off), preview, apply.

``s.assemble()`` re-derives everything from the log; edits are a draft of target modes until
``apply()`` writes them as replace ops the harness accepts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._display import Rendered, details, esc, message_html, plural, stacked_bar, table
from ..errors import InvalidArgument
from ..session import Message, Session, TokenCounter
from ..session.kernel import node_tokens, read_marker, widget
from ._digest import DigestConfig
from ._drafts import DraftStore
from ._fit import FitResult, fit_plan
from ._modes import MODES, Mode, collapse_mark
from ._planner import PlanOp, Target, apply_ops, compile_plan, current_modes
from ._tree import Row, RowKind, attach_subagents, build_tree, header_system_tokens

if TYPE_CHECKING:
    from ..session import Embedder, Workspace

__all__ = ["Assembly", "Preview", "Rule"]


@dataclass(frozen=True)
class Rule:
    """A preset: rows matching every given condition get ``mode`` (and a digest template).

    ``template`` may use ``{tool}``, ``{gist}``, ``{seq}`` and ``{turn}``.
    """

    mode: Mode
    kind: RowKind | None = None
    tool: str | None = None
    failed: bool | None = None
    label: str | None = None  # a regex searched in the row's gist
    older_than_turns: int | None = None
    template: str | None = None
    auto: bool = False
    name: str = ""

    def matches(self, row: Row, last_turn: int, *, age: int | None = None) -> bool:
        """Whether ``row`` matches; ``age`` (turns since the row's, when the caller counts
        them itself) overrides ``last_turn - row.turn``."""
        if self.kind is not None and row.kind != self.kind:
            return False
        if self.tool is not None and row.tool != self.tool:
            return False
        if self.failed is not None and row.failed != self.failed:
            return False
        if self.label is not None and not re.search(self.label, row.gist):
            return False
        if self.older_than_turns is None:
            return True
        if row.turn is None:
            return False
        return (last_turn - row.turn if age is None else age) >= self.older_than_turns

    def digest_for(self, row: Row) -> str | None:
        if self.template is None:
            return None
        return self.template.format(tool=row.tool or "", gist=row.gist, seq=row.seq, turn=row.turn)


@dataclass(frozen=True)
class Preview(Rendered):
    """A dry run: the ops, tokens before and after, and exactly what the model would receive.

    Printed: the ops as a before/after table and the notes; in a notebook also the token
    bars before and after and the messages the model would receive (folded)."""

    ops: tuple[PlanOp, ...]
    notes: tuple[str, ...]
    tokens_before: int
    tokens_after: int
    messages: tuple[Message, ...]
    rows: tuple[tuple[int, str, int, int], ...] = field(default=())  # seq, mode, before, after

    @property
    def saved(self) -> int:
        return self.tokens_before - self.tokens_after

    def to_polars(self) -> Any:
        import polars as pl

        return pl.DataFrame(
            {
                "kind": [op.kind for op in self.ops],
                "mode": [op.mode for op in self.ops],
                "start_seq": [op.start_seq for op in self.ops],
                "end_seq": [op.end_seq for op in self.ops],
                "nodes": [len(op.shadowed) for op in self.ops],
                "tokens_before": [op.tokens_before for op in self.ops],
                "tokens_after": [op.tokens_after for op in self.ops],
            },
            schema={
                "kind": pl.Utf8,
                "mode": pl.Utf8,
                "start_seq": pl.Int64,
                "end_seq": pl.Int64,
                "nodes": pl.Int64,
                "tokens_before": pl.Int64,
                "tokens_after": pl.Int64,
            },
        )

    def __repr__(self) -> str:
        return (
            f"Preview({len(self.ops)} ops, {self.tokens_before} -> {self.tokens_after} tokens, "
            f"{len(self.messages)} messages)"
        )

    def _headline(self) -> str:
        return (
            f"Preview: {plural(len(self.ops), 'op')}, {self.tokens_before:,} -> "
            f"{self.tokens_after:,} tokens (saves {self.saved:,}), "
            f"{plural(len(self.messages), 'message')} after"
        )

    def _op_rows(self) -> list[tuple[str, str, str, str, str, str]]:
        rows: list[tuple[str, str, str, str, str, str]] = []
        for op in self.ops:
            span = (
                str(op.start_seq)
                if op.start_seq == op.end_seq
                else (f"{op.start_seq}-{op.end_seq}")
            )
            rows.append(
                (
                    op.kind,
                    op.mode,
                    span,
                    plural(len(op.shadowed), "node"),
                    f"{op.tokens_before:,} -> {op.tokens_after:,}",
                    op.text.split("\n", 1)[0][:70],
                )
            )
        return rows

    def _text_(self) -> str:
        lines = [self._headline()]
        for kind, mode, span, nodes, tokens, first in self._op_rows():
            lines.append(f"  {kind:<12} {mode:<4} {span:>11}  {nodes:>9}  {tokens:>18}  {first}")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    def _html_(self) -> str:
        total = max(self.tokens_before, self.tokens_after, 1)
        bars = stacked_bar(
            [("after", self.tokens_after, "accent"), ("saved", self.saved, "free")],
            total,
            marks=[(self.tokens_before, f"before {self.tokens_before:,}")],
            title="tokens before and after",
        )
        ops = table(
            ("op", "mode", "seqs", "covers", "tokens", "replacement"),
            self._op_rows(),
            numeric=(2, 4),
        )
        notes = "".join(f"<div class='cx-muted'>note: {esc(n)}</div>" for n in self.notes)
        msgs = "".join(message_html(m) for m in self.messages)
        model = details(
            f"the {plural(len(self.messages), 'message')} the model would receive", msgs
        )
        return f"<div class='cx-title'>{esc(self._headline())}</div>{bars}{ops}{notes}{model}"


def _conversation_turns(session: Session) -> dict[int, int]:
    """Each turn's number among the turns that hold a step: an edit turn (no step, only the
    surface ops an assembly wrote there) does not age the rows before it."""
    ranks = {0: 0}
    rank = 0
    for turn in session.index.turns:
        rank += 1 if turn.steps else 0
        ranks[turn.turn] = rank
    return ranks


class Assembly:
    """The per-node context editor over one session."""

    def __init__(
        self,
        session: Session,
        *,
        tokenizer: str = "cl100k_base",
        config: DigestConfig | None = None,
        rules: Sequence[Rule] = (),
        draft: dict[int, Target] | None = None,
        drafts: DraftStore | None = None,
        workspace: Workspace | None = None,
    ) -> None:
        self.session = session
        self.workspace = workspace  # when given, subagent sessions nest under their tool row
        self.config = config or DigestConfig()
        self.rules: list[Rule] = list(rules)
        self._counter = TokenCounter(tokenizer)
        self._store = drafts
        self.draft_source: str | None = None  # the session whose saved draft was loaded
        if draft is None and drafts is not None:
            draft, self.draft_source = drafts.load(
                session.id,
                parent=session.parent_id if session.is_fork else None,
                max_seq=session.inherited_event_count or None,
            )
        self._draft: dict[int, Target] = dict(draft or {})
        self._fitted: set[int] = set()  # draft entries the last fit chose (a new fit may move them)

    # --- reading ---------------------------------------------------------------------------

    def _surface_tokens(self) -> list[int]:
        return node_tokens(self.session, self._counter)

    def _system_tokens(self) -> int:
        return header_system_tokens(self.session, self._counter.tokenizer.name)

    def _total(self) -> int:
        """What the model receives, as ``Session.tokens().total`` counts it."""
        return sum(self._surface_tokens()) + self._system_tokens()

    def tree(self) -> Row:
        """The context tree of the session as it is now, with the draft's modes shown."""
        surface = list(self.session.surface())
        modes = current_modes(self.session, surface)
        for pos, node in enumerate(surface):
            if node.seq in self._draft:
                modes[pos] = self._draft[node.seq].mode
        root = build_tree(
            self.session, modes, self._surface_tokens(), system_tokens=self._system_tokens()
        )
        if self.workspace is not None:
            attach_subagents(root, self._subagents())
        return root

    def _subagents(self) -> list[tuple[str, str, int]]:
        assert self.workspace is not None
        df = self.workspace.children(self.session.id)
        out = []
        for row in df.to_dicts():
            if row.get("kind") != "subagent" or not row.get("readable"):
                continue
            child = self.workspace.open(str(row["id"]))
            tokens = sum(self._counter.count_messages(m.to_json_dict() for m in child.messages()))
            out.append((str(row["id"]), str(row.get("title") or row["id"]), tokens))
        return out

    @property
    def tokenizer(self) -> str:
        """The tokenizer this assembly counts with."""
        return str(self._counter.tokenizer.name)

    @property
    def drafts(self) -> DraftStore | None:
        """Where the draft is saved (``save_draft``), if anywhere."""
        return self._store

    def widget(self, **options: Any) -> Any:
        """The ContextTree widget over this assembly (``ctxsdk.widgets.ContextTree``)."""
        return widget("context_tree", self, **options)

    @property
    def draft(self) -> dict[int, Target]:
        """Unapplied target modes by surface seq."""
        return dict(self._draft)

    # --- editing ---------------------------------------------------------------------------

    def set(self, target: int | str | Row, mode: Mode, digest: str | None = None) -> Assembly:
        """Set a row's mode: a surface seq, a row id (``"t3"``, ``"t3.2"``, ``"s41"``) or a Row;
        container rows apply to their whole subtree. Changes this assembly's draft and returns
        the assembly, so calls chain."""
        if mode not in MODES:
            raise InvalidArgument(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        for seq in self._resolve(target, mode):
            self._draft[seq] = Target(mode, digest)
            self._fitted.discard(seq)
        return self

    def reset(self) -> Assembly:
        """Clear the draft (no mode set, nothing fitted). Changes this assembly and returns it,
        so calls chain."""
        self._draft.clear()
        self._fitted.clear()
        return self

    def save_draft(self) -> Assembly:
        """Persist the unapplied draft (an empty one stops inheritance from the parent).
        Returns this assembly, so calls chain."""
        if self._store is None:
            raise InvalidArgument("this assembly has no draft store; pass drafts=DraftStore(...)")
        self._store.save(self.session.id, self._draft, parent=self.session.parent_id)
        self.draft_source = self.session.id
        return self

    def _resolve(self, target: int | str | Row, mode: Mode = "full") -> list[int]:
        from ..errors import NotFound

        if isinstance(target, int):
            return [self._resolve_seq(target, mode)]
        if isinstance(target, str):
            row = next((r for r in self.tree().walk() if r.id == target), None)
            if row is None:
                raise NotFound(f"no row {target!r} in the tree of session {self.session.id}")
            target = row
        if target.state == "shadowed" and target.event_seq is not None:
            return [self._resolve_seq(target.event_seq, mode)]
        seqs = [r.seq for r in target.leaves() if r.seq is not None]
        if not seqs:
            raise InvalidArgument(
                f"row {target.id!r} ({target.label}) holds no surface node of session "
                f"{self.session.id}: a v0-v2 system prompt lives in the request header, "
                "not on the surface, and cannot be collapsed"
            )
        return seqs

    def _resolve_seq(self, seq: int, mode: Mode) -> int:
        """The surface node that stands for event ``seq``: the node itself, or the replacement
        on the surface that covers it (a shadowed row shown as ``(seq)`` in the tree)."""
        from ..errors import NotFound

        index = self.session.index
        surface = set(index.surface_seqs())
        if seq in surface:
            return seq
        chain: list[int] = []  # the replacements over seq, innermost first
        at = seq
        while at in index.shadowed_by:
            at = index.shadowed_by[at]
            chain.append(at)
        if not chain or chain[-1] not in surface:
            raws = self.session.raw_events
            what = f"a {raws[seq]['type']} event" if 0 <= seq < len(raws) else "no event"
            raise NotFound(
                f"seq {seq} is {what}, neither on the surface of session {self.session.id} nor "
                "covered by a replacement on it (tree rows show surface seqs, and the events a "
                "replacement covers as (seq))"
            )
        top = chain[-1]
        if mode != "full":
            return top  # collapsing what covers it is the only way to change what the model sees
        # Expanding restores one level at a time: the first replacement from the top that
        # ctxsdk did not write (a compaction, a prune) is where the way back ends.
        for inner in reversed(chain):
            if collapse_mark(self.session.raw_events[inner]) is not None:
                continue
            hint = (
                f"; set({top}, 'full') expands the collapse at seq {top}, which brings back "
                f"seq {inner}"
                if inner != top
                else ""
            )
            raise InvalidArgument(
                f"seq {seq} is covered by {self._describe(inner)}, which ctxsdk did not write and "
                f"cannot expand: what it covers stays in the log (s.message_at({seq}) reads "
                f"it){hint}"
            )
        return top

    def _describe(self, seq: int) -> str:
        """What a replacement is, in words: a harness compaction checkpoint, a prune, ..."""
        raw = self.session.raw_events[seq]
        mark = read_marker(raw)
        if mark is not None and mark.kind == "compaction":
            cid = (raw["data"].get("source") or {}).get("compactionId")
            named = f", compaction {cid}" if cid else ""
            return f"the harness compaction checkpoint at seq {seq}{named}"
        if mark is not None and mark.kind == "prune":
            return f"the harness's tool-result prune at seq {seq}"
        return f"the replacement at seq {seq} ({raw['type']}, written by another tool)"

    def apply_rules(
        self, rules: Iterable[Rule] | None = None, *, auto_only: bool = False
    ) -> Assembly:
        """Apply presets (first matching rule wins) to rows without an explicit draft entry.
        Changes this assembly's draft and returns the assembly, so calls chain."""
        rules = list(self.rules if rules is None else rules)
        last_turn = self.session.index.last_turn
        ranks = _conversation_turns(self.session)
        for row in self.tree().leaves():
            assert row.seq is not None
            if row.seq in self._draft or row.kind == "system":
                continue
            age = None if row.turn is None else ranks[last_turn] - ranks.get(row.turn, 0)
            for rule in rules:
                if auto_only and not rule.auto:
                    continue
                if rule.matches(row, last_turn, age=age):
                    self._draft[row.seq] = Target(rule.mode, rule.digest_for(row))
                    break
        return self

    # --- planning --------------------------------------------------------------------------

    def plan(self) -> tuple[list[PlanOp], list[str]]:
        return compile_plan(self.session, self._draft, counter=self._counter, config=self.config)

    def preview(self) -> Preview:
        """The ops, tokens before/after, and the messages the model would receive."""
        ops, notes = self.plan()
        after = apply_ops(self.session, ops, time=0)
        before_tokens = self._total()
        after_tokens = Assembly(after, tokenizer=self._counter.tokenizer.name)._total()
        rows = tuple((op.start_seq, op.mode, op.tokens_before, op.tokens_after) for op in ops)
        return Preview(
            tuple(ops), tuple(notes), before_tokens, after_tokens, tuple(after.messages()), rows
        )

    def apply(self, *, write: bool = True) -> Session:
        """Append the ops; with ``write`` and a session read from a file, they are written to
        the log (one batch, under the lease, atomically). Returns the new Session."""
        ops, _ = self.plan()
        out = apply_ops(self.session, ops)
        if write and out.path is not None and out.pending_events:
            out = out.append_to_log()
        self.session = out
        self._draft.clear()
        self._fitted.clear()
        return out

    def fit(
        self, budget: int, query: str | None = None, *, embedder: Embedder | None = None
    ) -> FitResult:
        """Choose modes so the derived messages fit ``budget`` tokens, keeping what ``query``
        needs. The choice becomes this assembly's draft (inspect, adjust, then apply).

        What ``query`` needs is ranked by the base's :class:`~ctxsdk.session.Retriever` (the
        retrieval ``Memory.find`` uses): lexical, or with ``embedder`` (e.g.
        ``ctxsdk.session.get_embedder("e5-small")``) hybrid, lexical fused with embeddings.
        The nodes are embedded once per session and embedder, so fitting again does not
        embed them again.

        Every mode already in the draft (``set``, rules, a loaded draft) stays as it is: fit
        fits around them, and says so in ``notes`` when they alone exceed the budget. What an
        earlier ``fit`` chose is not such a choice, so fitting again re-plans it."""
        base = {s: t for s, t in self._draft.items() if s not in self._fitted}
        result = fit_plan(
            self.session,
            budget,
            query=query,
            counter=self._counter,
            config=self.config,
            base=base,
            embedder=embedder,
        )
        self._draft = dict(result.targets)
        self._fitted = set(result.targets) - set(base)
        return result

    def __repr__(self) -> str:
        return (
            f"Assembly({self.session.id[:8]}, {len(self.session.surface())} nodes, "
            f"{len(self._draft)} drafted)"
        )
