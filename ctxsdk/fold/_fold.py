"""``Fold``: lossless compaction of one session.

``f = cx.Fold(s, store=..., policy="economy")``; ``f.run()`` folds when the policy says so
(and says why not otherwise), ``f.fold((a, b))`` folds the span you name, ``f.rebase()``
merges the checkpoints into one. Every fold archives the exact messages first, then writes
the harness's compaction transaction to the log (see ``_transaction``); ``f.search`` and
``f.recall`` read the archive back, verified; ``f.status()`` reports what is where.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, get_args

from .._display import Rendered, badge, bar, esc, fmt_tokens, kv, plural, section, table
from ..errors import BundleError, CorruptBundle, FoldRefused, InvalidArgument, NotFound
from ..model import ModelProtocol
from ..session import Session, TokenCounter
from ..session.kernel import (
    display_text,
    fold_source,
    fork_points,
    message_of,
    node_tokens,
    tool_groups,
    widget,
)
from ._bundles import BundleReader, BundleRef, BundleStatus, FileBundleStore, Problem
from ._checkpoint import (
    CHECKPOINT_SHARE,
    basic_content,
    basic_summary,
    mask_text,
    shown_in,
    state_checkpoint_text,
    told_run,
    unshown,
)
from ._economics import EconomicsProfile, UsageCost, usage_cost
from ._economics import profile as get_profile
from ._frontier import Frontier, locate_frontier
from ._model import BASIC_INSTRUCTION, RATIONALE_INSTRUCTION, ModelText, ask
from ._policy import Decision, FoldPolicy, Pressure, decide, measure_pressure, resolve_policy
from ._recall import (
    MAX_PAGE,
    Recall,
    SearchResult,
    checked_bundle,
    recall,
    resolve_ref,
    search,
)
from ._state import FoldState, reduce_events
from ._transaction import (
    FoldRecord,
    commit,
    default_store_root,
    lineage,
    new_checkpoint_id,
    no_store_reason,
    read_records,
)

__all__ = ["Fold", "FoldResult", "FoldStatus"]

Tracer = Callable[[str, Mapping[str, Any]], None]


@dataclass(frozen=True)
class _Draft:
    content: list[dict[str, Any]]
    source: dict[str, Any] | None
    asked: ModelText | None
    tokens: int | None = None  # the content's count, when drafting it counted it


@dataclass(frozen=True)
class FoldResult(Rendered):
    """What one ``run`` / ``fold`` / ``rebase`` did: ``folded`` or not, and ``reason``."""

    folded: bool
    action: str
    reason: str
    tokens_before: int
    tokens_after: int
    record: FoldRecord | None = None

    @property
    def checkpoint_id(self) -> str | None:
        return self.record.checkpoint_id if self.record else None

    @property
    def reclaimed(self) -> int:
        return max(0, self.tokens_before - self.tokens_after)

    def __repr__(self) -> str:
        if not self.folded:
            return f"FoldResult(no fold: {self.reason})"
        assert self.record is not None
        return (
            f"FoldResult({self.action} cp:{self.record.checkpoint_id}, "
            f"{len(self.record.shadowed)} nodes, "
            f"{self.tokens_before:,} -> {self.tokens_after:,} tokens)"
        )

    def _text_(self) -> str:
        if not self.folded or self.record is None:
            return f"no fold: {self.reason}"
        r = self.record
        return "\n".join(
            [
                f"{self.action} fold cp:{r.checkpoint_id}: {len(r.shadowed)} nodes "
                f"(seq {r.shadowed[0]}–{r.shadowed[-1]}) archived and verified",
                f"  tokens {self.tokens_before:,} -> {self.tokens_after:,} "
                f"(reclaimed {self.reclaimed:,}; "
                f"checkpoint {r.checkpoint_tokens:,}, {r.tokenizer})",
                f"  bundle {r.bundle_session}/{r.checkpoint_id}: {r.messages} messages, "
                f"{r.bytes:,} bytes, sha256 {r.file_sha256[:12]}…",
                f"  why: {self.reason}",
            ]
        )

    def _html_(self) -> str:
        if not self.folded or self.record is None:
            return f"<div>{badge('no fold')} {esc(self.reason)}</div>"
        r = self.record
        return section(
            f"{self.action} fold cp:{r.checkpoint_id}",
            bar(self.tokens_after, self.tokens_before, title="after / before", kind="marker")
            + kv(
                [
                    ("archived", f"{len(r.shadowed)} nodes, seq {r.shadowed[0]}–{r.shadowed[-1]}"),
                    (
                        "tokens",
                        f"{self.tokens_before:,} → {self.tokens_after:,} "
                        f"(reclaimed {self.reclaimed:,})",
                    ),
                    ("checkpoint", f"{r.checkpoint_tokens:,} tokens ({r.tokenizer})"),
                    (
                        "bundle",
                        f"{r.messages} messages, {r.bytes:,} bytes, sha256 {r.file_sha256[:12]}…",
                    ),
                    ("why", self.reason),
                ]
            ),
        )


@dataclass(frozen=True)
class Figure:
    """A number with how it was obtained: measured, estimated, or unknown (value None)."""

    value: float | int | str | None
    how: str  # "measured" | "estimated" | "unknown"
    note: str = ""

    def __str__(self) -> str:
        if self.value is None:
            return "unknown" + (f" ({self.note})" if self.note else "")
        v = (
            f"{self.value:,}"
            if isinstance(self.value, int)
            else (f"{self.value:.6f}" if isinstance(self.value, float) else str(self.value))
        )
        return f"{v} ({self.how}{', ' + self.note if self.note else ''})"


@dataclass(frozen=True)
class FoldStatus(Rendered):
    """``Fold.status()``: policy, pressure, checkpoints now and over the session's life,
    bundle health and cost so far; every figure says whether it is measured or estimated."""

    policy: str
    pressure: Pressure
    tokenizer: str
    frontier: Frontier
    on_surface: tuple[str, ...]
    folds: Mapping[str, int]
    bundles: tuple[BundleStatus, ...]
    orphans: tuple[BundleRef, ...]
    figures: Mapping[str, Figure]
    window_source: str = ""  # "set", "the last fold's", or "" (the log's route or the policy)

    @property
    def healthy(self) -> bool:
        return all(b.ok for b in self.bundles)

    def __repr__(self) -> str:
        return (
            f"FoldStatus({self.policy}, {self.pressure.total:,}/{self.pressure.threshold:,} "
            f"tokens, {len(self.on_surface)} checkpoints, {sum(self.folds.values())} folds)"
        )

    def _rows(self) -> list[tuple[str, str]]:
        p = self.pressure
        bad = [b for b in self.bundles if not b.ok]
        health = f"{len(self.bundles) - len(bad)} verified" + "".join(
            f", {b.checkpoint_id} {b.state}" + (f" ({b.reason})" if b.reason else "") for b in bad
        )
        win = {"set": "as set", "the last fold's": "the one the last fold used"}.get(
            self.window_source,
            "measured from the log's route" if p.window_measured else "assumed from the policy",
        )
        return [
            ("policy", self.policy),
            ("regime", p.regime),
            ("surface", f"{p.total:,} tokens (measured, {self.tokenizer}); frozen {p.frozen:,}"),
            ("threshold", f"{p.threshold:,} of a {p.window:,}-token window ({win})"),
            ("checkpoints now", ", ".join(f"cp:{c}" for c in self.on_surface) or "none"),
            (
                "folds so far",
                ", ".join(f"{k} {v}" for k, v in sorted(self.folds.items())) or "none",
            ),
            ("bundles", health if self.bundles else "none referenced"),
            ("orphan bundles", ", ".join(o.checkpoint_id for o in self.orphans) or "none"),
            *((k, str(v)) for k, v in self.figures.items()),
        ]

    def _text_(self) -> str:
        width = max(len(k) for k, _ in self._rows())
        return "Fold status\n" + "\n".join(f"  {k:<{width}}  {v}" for k, v in self._rows())

    def _html_(self) -> str:
        p = self.pressure
        return section(
            "Fold status",
            bar(p.total, max(p.threshold, 1), title="surface / threshold", kind="marker")
            + kv(self._rows()),
        )


class Fold(Rendered):
    """Lossless compaction of ``session`` under ``policy`` (``basic``, ``masking``,
    ``economy`` (default), ``balanced``, ``quality``; keyword settings override the preset,
    e.g. ``window=32000``). Bundles go to ``store`` (a folder or a ``FileBundleStore``;
    default: next to the session's DSH home). Folds are written to the session's log when it
    was read from a file and ``write`` is true; otherwise they stay pending on ``f.session``.
    """

    def __init__(
        self,
        session: Session,
        *,
        store: str | Path | FileBundleStore | None = None,
        policy: str | FoldPolicy = "economy",
        tokenizer: str = "cl100k_base",
        llm: ModelProtocol | None = None,
        write: bool = True,
        tracer: Tracer | None = None,
        id_factory: Callable[[], str] | None = None,
        **settings: Any,
    ) -> None:
        if not isinstance(session, Session):
            raise InvalidArgument(f"Fold needs a Session, got {type(session).__name__}")
        self.policy = resolve_policy(policy, **settings)
        if isinstance(store, FileBundleStore):
            self.store = store
        else:
            root = Path(store) if store is not None else default_store_root(session)
            if root is None:
                raise InvalidArgument(f"{no_store_reason(session)}: pass store=<folder>")
            self.store = FileBundleStore(root, tracer=tracer)
        if tracer is not None and self.store.tracer is None:
            self.store.tracer = tracer
        self.tracer = tracer
        # new checkpoint ids (random by default); a benchmark passes a counter to be exact
        self.id_factory = id_factory or new_checkpoint_id
        self.llm = llm
        self.write = write
        self._counter = TokenCounter(tokenizer)
        self._states: dict[int, FoldState] = {}
        self._session = session
        self._derived: dict[str, Any] = {}
        # A fold made at a window the log does not state (``--window 6000``) is measured
        # against it again when the log is reopened without one: its record says which.
        self.window_source = "set" if self.policy.window is not None else ""
        if self.policy.window is None:
            last = next((r.window for r in reversed(self.records) if r.window), None)
            if last is not None and last != session.context_window:
                self.policy = replace(self.policy, window=last)
                self.window_source = "the last fold's"

    @property
    def session(self) -> Session:
        """The session as it is now (each fold replaces it with the session it wrote)."""
        return self._session

    @session.setter
    def session(self, value: Session) -> None:
        # What is derived from the session (records, node tokens) is computed once per
        # session; states by seq stay valid while the new session continues the old log.
        old = self._session.raw_events
        new = value.raw_events
        if (
            value.id != self._session.id
            or len(new) < len(old)
            or (old and new[len(old) - 1] != old[-1])
        ):
            self._states.clear()
        self._session = value
        self._derived = {}

    # --- what is there -----------------------------------------------------------------------

    @property
    def tokenizer(self) -> str:
        return str(self._counter.tokenizer.name)

    @property
    def records(self) -> list[FoldRecord]:
        """Every fold over the session's life (inherited ones included), oldest first."""
        if "records" not in self._derived:
            self._derived["records"] = read_records(self.session)
        return list(self._derived["records"])

    @property
    def checkpoints(self) -> list[FoldRecord]:
        """The folds whose checkpoint is on the surface now, in surface order."""
        by_id = {r.checkpoint_id: r for r in self.records}
        return [by_id[c] for c in self.frontier().checkpoint_ids if c in by_id]

    @property
    def state(self) -> FoldState:
        """The current state, reduced from the raw log (never from a checkpoint's text)."""
        return self._state_at(len(self.session.raw_events) - 1)

    def frontier(self) -> Frontier:
        return locate_frontier(self.session)

    def _window(self) -> int:
        """The context window this fold measures against (recorded with each fold)."""
        return self.policy.window_for(self.session.context_window)

    def _tokens(self) -> list[int]:
        if "tokens" not in self._derived:
            self._derived["tokens"] = node_tokens(self.session, self._counter)
        return list(self._derived["tokens"])

    def pressure(self) -> Pressure:
        return measure_pressure(
            self.frontier(), self._tokens(), self.policy, self.session.context_window
        )

    def reader(self) -> BundleReader:
        """Reads this session's bundles and its ancestors', never a sibling's."""
        records = self.records
        ids = lineage(self.session, records)
        for rec in records:
            # A v0-v2 log cannot name the session that stored an inherited fold's bundle
            # (a grandparent, say): find its owner in the store. Only ids this log inherited
            # are looked up, and the bytes are checked against the log's own copies.
            if rec.inherited and not rec.bundle_session:
                ids += [o for o in self.store.owners(rec.checkpoint_id) if o not in ids]
        return self.store.reader(ids)

    # --- deciding ----------------------------------------------------------------------------

    def plan(self, *, force: bool = False) -> Decision:
        """What ``run`` would do now, and why (nothing is written)."""
        frontier, tokens = self.frontier(), self._tokens()
        pressure = measure_pressure(frontier, tokens, self.policy, self.session.context_window)
        groups = tool_groups(self.session.surface())
        drawn: list[str] = []  # one new id, drawn when a checkpoint is first drafted

        def draft(span: tuple[int, int], root: bool) -> int:
            if not drawn:
                drawn.append(self.id_factory())
            return self._draft_tokens(drawn[0], frontier, span, root=root)

        decision = decide(
            self.policy,
            frontier,
            tokens,
            groups,
            pressure,
            checkpoint_tokens=draft,
            folds_since_root=self._folds_since_root(),
            force=force,
        )
        # the fold that follows writes the checkpoint under this id, so its count is exact
        return replace(decision, checkpoint_id=drawn[0] if drawn else None)

    def _folds_since_root(self) -> int:
        n = 0
        for r in reversed(self.records):
            if r.mode == "root":
                break
            n += 1
        return n

    def _draft_tokens(
        self, cid: str, frontier: Frontier, span: tuple[int, int], *, root: bool
    ) -> int:
        draft = self._content(cid, frontier, span, root=root)
        if draft.tokens is not None:
            return draft.tokens
        return self._counter.count_message({"role": "user", "content": draft.content})

    def _content(
        self,
        cid: str,
        frontier: Frontier,
        span: tuple[int, int],
        *,
        root: bool,
        final: bool = False,
    ) -> _Draft:
        """The checkpoint message for ``span``: its content, a source (basic's), who wrote it,
        and, when ``final``, the model's part (basic's summary, quality's rationale) asked
        for; a draft for counting never calls the model."""
        seqs = self.session.index.surface_seqs()[span[0] : span[1]]
        raws = self.session.raw_events
        state = self.state
        mode = "root" if root else "leaf"
        asked: ModelText | None = None
        if self.policy.checkpoint == "summary":
            if final and self.llm is not None:
                asked = self._ask(seqs, BASIC_INSTRUCTION, 8192)
            if asked is not None and asked.text is not None:
                summary = asked.text
            else:
                summary = basic_summary(state, display_text(message_of(raws[seqs[-1]]) or {}))
            return _Draft(basic_content(summary), fold_source(mode, cid, harness_form=True), asked)
        if final and self.policy.rationale:
            asked = self._ask(seqs, RATIONALE_INSTRUCTION, 600)
        tokens = self._tokens()
        closed: list[Any] = []
        if not root:
            shown, was_open = self._shown(frontier)
            now = {a.id for a in state.active()}
            closed = [a for i, a in was_open.items() if i not in now]
            state = unshown(state, shown)
        folded = sum(tokens[span[0] : span[1]])

        def written(share: float) -> list[dict[str, Any]]:
            text = state_checkpoint_text(
                checkpoint_id=cid,
                mode=mode,
                state=state,
                closed=closed,
                first_seq=seqs[0],
                last_seq=seqs[-1],
                messages=len(seqs),
                tokens=folded,
                framing=root or not frontier.checkpoint_ids,
                rationale=asked.text if asked is not None else None,
                told=told_run(state, raws, seqs[-1]),
                share=share,
            )
            return [{"type": "text", "text": text}]

        content = written(CHECKPOINT_SHARE)
        counted = self._counter.count_message({"role": "user", "content": content})
        if counted >= folded:
            # the derived groups help resume the work, they are not state: a short span
            # they would make no smaller is folded without them (the state is all shown)
            return _Draft(written(0.0), None, asked)
        return _Draft(content, None, asked, counted)

    def _ask(self, seqs: Sequence[int], instruction: str, max_tokens: int) -> ModelText:
        raws = self.session.raw_events
        messages = [message_of(raws[q]) or {} for q in seqs]
        return ask(
            self.llm, self.session.system_prompt, messages, instruction, max_tokens=max_tokens
        )

    def _state_at(self, upto: int) -> FoldState:
        """The state as a fold at ``upto`` saw it (cached: the log only grows)."""
        if upto not in self._states:
            self._states[upto] = reduce_events(self.session.raw_events, upto=upto)
        return self._states[upto]

    def _shown(self, frontier: Frontier) -> tuple[set[tuple[str, str]], dict[str, Any]]:
        """What the frozen checkpoints already show (id, value), and the failures and
        obligations they show open (by id)."""
        frozen = {c.seq for c in frontier.frozen if c.checkpoint_id is not None}
        shown: set[tuple[str, str]] = set()
        was_open: dict[str, Any] = {}
        for rec in self.records:
            if rec.checkpoint_seq not in frozen or rec.policy == "basic":
                continue
            st = self._state_at(rec.record_seq - 1)
            shown |= shown_in(st, rec.text)  # what it showed, not all it held
            was_open.update({a.id: a for a in (*st.open_failures, *st.open_obligations)})
        return shown, was_open

    # --- folding -----------------------------------------------------------------------------

    def run(self, *, force: bool = False) -> FoldResult:
        """Fold once if the policy decides to (``force`` ignores the threshold and admission),
        else say why not."""
        decision = self.plan(force=force)
        before = sum(self._tokens())
        if not decision.folds or decision.span is None:
            return FoldResult(False, "none", decision.reason, before, before)
        if decision.action == "mask":
            try:
                return self._apply("mask", decision.span, decision.reason)
            except FoldRefused as exc:  # nothing maskable: a decision not to fold, not an error
                return FoldResult(False, "none", str(exc), before, before)
        return self._apply(decision.action, decision.span, decision.reason, decision.checkpoint_id)

    def fold(self, span: tuple[int, int] | None = None, *, mode: str = "leaf") -> FoldResult:
        """Fold the surface nodes ``span = (start_seq, end_seq)`` (inclusive, by surface
        order; default: what the policy's leaf span would be). Refuses (``FoldRefused``) a
        span that covers the system head or a checkpoint, or splits a tool call from its
        results."""
        if mode not in ("leaf", "emergency"):
            raise InvalidArgument(f"fold mode must be 'leaf' or 'emergency', got {mode!r}")
        if span is None:
            d = self.plan(force=True)
            if d.span is None or not d.folds:
                raise FoldRefused(d.reason)
            # the policy may answer with a mask or, when no leaf can be made, a root rebase
            # of the checkpoints: apply what it decided, never a leaf over checkpoints
            action = d.action if d.action in ("mask", "root") else mode
            return self._apply(action, d.span, "asked: " + d.reason, d.checkpoint_id)
        seqs = list(self.session.index.surface_seqs())
        try:
            lo, hi = seqs.index(span[0]), seqs.index(span[1])
        except ValueError:
            raise FoldRefused(f"{span[0]}..{span[1]} are not both current surface nodes") from None
        if lo > hi:
            raise FoldRefused(f"{span[0]} comes after {span[1]} on the surface")
        frontier = self.frontier()
        if lo < frontier.first_open:
            raise FoldRefused(
                f"seq {span[0]} is in the system head or the frozen prefix (open nodes start "
                f"at seq {seqs[frontier.first_open] if frontier.first_open < len(seqs) else '-'}); "
                "a leaf fold never re-folds a checkpoint: use rebase() to merge checkpoints"
            )
        if lo > frontier.first_open:
            raise FoldRefused(
                f"a leaf fold starts at the frontier (seq {seqs[frontier.first_open]}), so the "
                f"checkpoints stay one contiguous prefix; fold ({seqs[frontier.first_open]}, "
                f"{span[1]}) instead"
            )
        for first, last in tool_groups(self.session.surface()):
            if (first < lo <= last) or (first <= hi < last):
                raise FoldRefused(
                    f"{span[0]}..{span[1]} splits the tool call at seq {seqs[first]} from its "
                    f"results (through seq {seqs[last]}); widen the span to "
                    f"{seqs[first]}..{seqs[last]}"
                )
        return self._apply(mode, (lo, hi + 1), f"asked to fold seq {span[0]}..{span[1]}")

    def rebase(self) -> FoldResult:
        """Merge every checkpoint of the frozen prefix into one root checkpoint (their
        bundles stay, and stay recallable)."""
        frontier = self.frontier()
        if len(frontier.frozen) < 2 and frontier.consistent:
            before = sum(self._tokens())
            return FoldResult(
                False, "none", "fewer than two checkpoints: nothing to merge", before, before
            )
        end = frontier.stray_end if frontier.stray_end is not None else frontier.first_open
        return self._apply("root", (frontier.head, end), "asked to rebase")

    def _apply(
        self, action: str, span: tuple[int, int], reason: str, cid: str | None = None
    ) -> FoldResult:
        frontier = self.frontier()
        tokens = self._tokens()
        before = sum(tokens)
        seqs = list(self.session.index.surface_seqs())
        shadowed = seqs[span[0] : span[1]]
        if frontier.head > span[0]:
            raise FoldRefused("a fold never covers the system head")
        cid = cid or self.id_factory()
        span_tokens = sum(tokens[span[0] : span[1]])
        if action == "mask":
            new, record = self._mask(cid, shadowed, tokens, seqs)
        else:
            draft = self._content(cid, frontier, span, root=action == "root", final=True)
            content, source = draft.content, draft.source
            asked = draft.asked
            summarizer = ("ctxsdk", "fold-state" if source is None else "fold-extractive")
            if asked is not None:
                if asked.text is None:
                    reason += f" (the model's part was left out: {asked.reason})"
                else:
                    summarizer = (asked.provider, asked.model)
            cp_tokens = draft.tokens
            if cp_tokens is None:
                cp_tokens = self._counter.count_message({"role": "user", "content": content})
            if cp_tokens >= span_tokens:
                raise FoldRefused(
                    f"the checkpoint ({cp_tokens:,} tokens) would not be smaller than the "
                    f"{span_tokens:,} tokens of seq {shadowed[0]}–{shadowed[-1]}"
                )
            children = [
                c.checkpoint_id
                for c in frontier.frozen
                if c.checkpoint_id is not None and c.seq in shadowed
            ]
            mode = action if action in ("leaf", "root", "emergency") else "leaf"
            new, record = commit(
                self.session,
                self.store,
                checkpoint_id=cid,
                mode=mode,
                policy=self.policy.name,
                shadowed=shadowed,
                shadowed_tokens=span_tokens,
                checkpoint_tokens=cp_tokens,
                tokenizer=self.tokenizer,
                content=content,
                source=source,
                children=children,
                summarizer=summarizer,
                write=self.write,
                tracer=self.tracer,
                window=self._window(),
            )
        self.session = new
        after = sum(self._tokens())
        return FoldResult(True, action, reason, before, after, record)

    def _mask(
        self, cid: str, candidates: Sequence[int], tokens: Sequence[int], seqs: Sequence[int]
    ) -> tuple[Session, FoldRecord]:
        raws = self.session.raw_events
        pos = {s: i for i, s in enumerate(seqs)}
        masks: dict[int, tuple[str, int]] = {}
        for seq in candidates:
            ev = raws[seq]
            if ev["type"] != "tool/result" or ev.get("surfaceOp") != "append":
                continue  # only original results: a rewritten one is already someone's edit
            msg = message_of(ev) or {}
            body = display_text(msg)
            text = mask_text(
                cid, seq, _tool_name(self.session, ev), body.count("\n") + 1, tokens[pos[seq]]
            )
            new_tokens = self._counter.count_message(
                {
                    **msg,
                    "content": [{**msg["content"][0], "content": [{"type": "text", "text": text}]}],
                }
            )
            if new_tokens < tokens[pos[seq]]:
                masks[seq] = (text, tokens[pos[seq]])
        if not masks:
            raise FoldRefused("no tool result older than the verbatim tail is worth masking")
        shadowed = sorted(masks, key=lambda s: pos[s])
        return commit(
            self.session,
            self.store,
            checkpoint_id=cid,
            mode="mask",
            policy=self.policy.name,
            shadowed=shadowed,
            shadowed_tokens=sum(masks[s][1] for s in shadowed),
            checkpoint_tokens=0,
            tokenizer=self.tokenizer,
            masks=masks,
            write=self.write,
            tracer=self.tracer,
            window=self._window(),
        )

    def clean(self, *, min_age: float = 3600.0, dry_run: bool = True) -> list[Path]:
        """Orphan bundles (stored by a fold that never reached the log) and temp files of this
        session, older than ``min_age`` seconds: listed, and deleted unless ``dry_run``."""
        return self.store.clean(
            [r.checkpoint_id for r in self.records],
            self.session.id,
            min_age=min_age,
            dry_run=dry_run,
        )

    def fork_point(self, ref: str | int) -> int | None:
        """Where a fork keeps the fold ``ref``: the first seq at or after its transaction at
        which the harness may cut (outside an open turn), or None if there is none yet."""
        record = resolve_ref(self.records, ref)
        last = max(record.record_seq, record.checkpoint_seq or 0)
        return next((p for p in fork_points(self.session) if p >= last), None)

    # --- reading back ------------------------------------------------------------------------

    def search(self, query: str, *, limit: int = 10) -> SearchResult:
        """Exact search over everything folded (newest first); see ``ctxsdk.fold`` docs."""
        return search(self.records, self.reader(), self.session.raw_events, query, limit)

    def recall(
        self, ref: str | int, depth: str = "summary", *, offset: int = 0, limit: int = MAX_PAGE
    ) -> Recall:
        """A checkpoint read back: ``ref`` is ``cp:<id>``, an id, or an archived seq;
        ``depth="exact"`` pages through the archived messages (verified)."""
        record = resolve_ref(self.records, ref)
        return recall(record, self.reader(), self.session.raw_events, depth, offset, limit)

    def status(self) -> FoldStatus:
        records = self.records
        reader = self.reader()
        frontier = self.frontier()
        bundles = tuple(self._health(reader, r) for r in records)
        try:
            orphans = tuple(self.store.orphans([r.checkpoint_id for r in records], self.session.id))
        except (BundleError, NotFound, InvalidArgument, OSError):  # an id no bundle can have
            orphans = ()
        folds: dict[str, int] = {}
        for r in records:
            folds[r.mode] = folds.get(r.mode, 0) + 1
        return FoldStatus(
            self.policy.name,
            self.pressure(),
            self.tokenizer,
            frontier,
            frontier.checkpoint_ids,
            folds,
            bundles,
            orphans,
            self._figures(records),
            self.window_source,
        )

    def _health(self, reader: BundleReader, record: FoldRecord) -> BundleStatus:
        """``verify`` of the store, then the checks recall makes against the log."""
        status = reader.verify(record.checkpoint_id, file_sha256=record.file_sha256 or None)
        if not status.ok:
            return status
        try:
            checked_bundle(record, reader, self.session.raw_events)
        except CorruptBundle as exc:
            problem = exc.problem if exc.problem in get_args(Problem) else "format"
            return BundleStatus(
                "corrupt",
                record.checkpoint_id,
                status.path,
                problem,  # type: ignore[arg-type]
                exc.reason,
            )
        return status

    def _figures(self, records: Sequence[FoldRecord]) -> dict[str, Figure]:
        out: dict[str, Figure] = {
            "reclaimed by folds": Figure(
                sum(max(0, r.shadowed_tokens - r.checkpoint_tokens) for r in records),
                "measured",
                "tokens, at fold time",
            ),
        }
        cost = self.economics()
        if not cost.requests:
            out["input tokens so far"] = Figure(None, "unknown", "no provider usage in the log")
            out["cost so far"] = Figure(None, "unknown", "no provider usage in the log")
            return out
        how = "provider usage in the log"
        out["input tokens so far"] = Figure(cost.input_tokens, "measured", how)
        out["output tokens so far"] = Figure(cost.output_tokens, "measured", how)
        hits = cost.cache_hit_tokens
        if hits is None:
            out["cache hits so far"] = Figure(
                None, "unknown", "the log's usage has no cache counts"
            )
            out["cost so far"] = Figure(None, "unknown", "needs cache counts to price")
        else:
            out["cache hits so far"] = Figure(hits, "measured", how)
            out["cost so far"] = Figure(
                round(cost.cost, 6),
                "estimated",
                f"USD at {cost.profile.id} prices, from measured usage",
            )
        return out

    def economics(self, profile: str | EconomicsProfile | None = None) -> UsageCost:
        """What this session's requests cost under ``profile`` (default: the policy's), from
        the usage its provider reported, with the measured cache realisation."""
        econ = self.policy.economics if profile is None else get_profile(profile)
        return usage_cost(self.session.usage(), econ)

    # --- tools and display -------------------------------------------------------------------

    def widget(self, **options: Any) -> Any:
        """The CheckpointGraph widget over this fold."""
        return widget("checkpoint_graph", self, **options)

    def __repr__(self) -> str:
        return (
            f"Fold({self.session.id[:8]}, {self.policy.name}, "
            f"{plural(len(self.frontier().checkpoint_ids), 'checkpoint')} on the surface)"
        )

    def _text_(self) -> str:
        return str(self.status())

    def _html_(self) -> str:
        s = self.status()
        rows = [
            (
                f"cp:{r.checkpoint_id}",
                r.mode,
                len(r.shadowed),
                fmt_tokens(r.shadowed_tokens),
                fmt_tokens(r.checkpoint_tokens),
            )
            for r in self.records
        ]
        return s._html_() + (
            section(
                "Folds",
                table(
                    ["checkpoint", "mode", "nodes", "archived", "checkpoint"],
                    rows,
                    numeric=(2, 3, 4),
                ),
            )
            if rows
            else ""
        )


def _tool_name(session: Session, ev: Mapping[str, Any]) -> str:
    msg = message_of(ev) or {}
    call_id = (msg.get("source") or {}).get("callId")
    for c in session.raw_events[: int(ev["seq"])][::-1]:
        if c.get("type") == "tool/call" and c.get("data", {}).get("callId") == call_id:
            return str(c["data"].get("name", "tool"))
    return "tool"
