"""The reducer's mutable state and the operations every rule uses on it: declare an anchor
(its face, the head of its key, the superseded list), bound a face, reject, verify.

The reducer is one class built in layers, one module each, every layer adding one kind of
rule on top of the one before (``_explicit`` → ``_facts`` → ``_derived`` →
``_tool_results`` → ``_messages`` → ``_reduce``): a chain, so no module imports one that
imports it back.

Bounds (``StateLimits``): each face has a cap; when it overflows, an automatically
extracted item goes before an explicitly declared one (a declared standing instruction is
never pushed out by chatter), and among the extracted ones the least important goes first:
what the assistant or a tool said (hypothesis, procedural) before what the user said or a
run showed, then the oldest. Restating a constraint, obligation or decision (same normalized
text) refreshes it: its new source is added and it becomes the newest, so a face is
least-recently-stated-first. Every drop is counted in ``FoldState.dropped[face]``. Each
anchor keeps at most ``limits.sources`` source seqs (its first and its newest),
auto-extracted text is cut to ``limits.text`` characters, and declared values are kept
verbatim (cut only when rendered).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ...session.kernel import FactReader, Statement
from .._holds import FileOutlines
from .._key_names import KeyNames
from .._project_rules import ProjectRules
from .._told import ToldActions
from ._anchors import _FACE, Anchor, JsonDict, StateLimits, _merge_sources

_Call = tuple[str, tuple[str, str | None]]  # (call key, (tool name, command line or None))
# Authorities of what the assistant or a tool said about the work: dropped first over a cap.
_WEAK = frozenset({"hypothesis", "procedural"})


class _ReducerBase:
    """The mutable fold of one ``reduce_events`` call: what it has seen and holds so far."""

    def __init__(self, limits: StateLimits) -> None:
        self.limits = limits
        self.seen: dict[int, Mapping[str, Any]] = {}  # every reduced event, for the gate
        self.objective: Anchor | None = None
        self.objective_set = False  # the first prompt fills the slot once, even if retired
        self.request: Anchor | None = None
        self.requests: list[Anchor] = []  # every request, in order (bounded: ``_request``)
        self.active: dict[str, Anchor] = {}  # id -> anchor, oldest first (faces and heads)
        self.auto: set[str] = set()  # ids that the lexical rules extracted
        self.heads: dict[str, str] = {}  # state key -> anchor id
        self.texts: dict[tuple[str, str], str] = {}  # (kind, normalized text) -> anchor id
        self.superseded: list[Anchor] = []
        self.retired = 0
        self.rejected: list[tuple[str, str]] = []
        self.dropped: dict[str, int] = {}
        self.skipped = 0
        self.upto = -1
        self.calls: dict[str, tuple[str, JsonDict]] = {}  # callId -> (tool name, arguments)
        self.identity_of: dict[str, _Call] = {}  # failure id -> (call key, (tool, command))
        # the fact kernel, fed the same events; with what the harness states for the run (its
        # model and settings, a task template's rules), which a resumed run must still honour
        self.reader = FactReader(harness=True, rule_files=True)
        self.failed_edits: set[str] = set()  # paths of edit calls that failed
        self.verified: set[str] = set()  # failure ids already verified (a repeat is a no-op)
        self.asks: set[str] = set()  # obligation ids of the current request's asks
        # the assistant's specific statements: normalized text -> (sources, statement)
        self.statements: dict[str, tuple[tuple[int, ...], Statement]] = {}
        self.outlines = FileOutlines()  # what the files the session wrote and read hold
        self.key_names = KeyNames()  # the code names the conversation names
        self.project_rules = ProjectRules()  # the rules of the project's agent files
        self.told = ToldActions()  # an action told in text (SWE-agent), awaiting its output
        self.running: dict[Any, tuple[str, JsonDict]] = {}  # process id -> the call it runs
        # the commands the work ran that act (not reads): folded text -> seqs, latest last
        self.commands: dict[str, tuple[int, ...]] = {}

    # --- the state operations --------------------------------------------------------------

    def _drop(self, face: str) -> None:
        self.dropped[face] = self.dropped.get(face, 0) + 1

    def _remove(self, anchor_id: str) -> Anchor | None:
        a = self.active.pop(anchor_id, None)
        if a is not None and a.state_key is not None and self.heads.get(a.state_key) == a.id:
            del self.heads[a.state_key]
        self.auto.discard(anchor_id)
        self.identity_of.pop(anchor_id, None)
        return a

    def _bound(self, face: str) -> None:
        """Over the face's cap: an extracted item goes before a declared one, what the
        assistant or a tool said before what the user said or a run showed, older first."""
        ids = [i for i, a in self.active.items() if _FACE[a.kind] == face]
        excess = len(ids) - self.limits.cap(face)
        for _ in range(max(excess, 0)):
            auto = [i for i in ids if i in self.auto]
            weak = [i for i in auto if self.active[i].authority in _WEAK]
            victim = (weak or auto or ids)[0]
            ids.remove(victim)
            self._remove(victim)
            self._drop(face)

    def declare(self, a: Anchor, *, auto: bool = False, move: bool = True) -> None:
        """Rule 2: the objective slot, or a face (and the head of its key)."""
        if a.kind == "objective":
            self.objective, self.objective_set = a, True
            return
        old = self.active.get(a.id)
        if old is not None and auto:
            a = replace(a, sources=_merge_sources(old.sources, a.sources, self.limits.sources))
            if not move:  # refresh in place
                self.active[a.id] = a
                return
        if old is not None:
            self._remove(a.id)
        key = a.state_key
        if key is not None:
            prev_id = self.heads.get(key)
            prev = self.active.get(prev_id) if prev_id is not None else None
            if prev is not None and prev.id != a.id:
                self._remove(prev.id)
                self.superseded.append(replace(prev, lifecycle="superseded", superseded_by=a.id))
                if len(self.superseded) > self.limits.superseded:
                    del self.superseded[0]
                    self._drop("superseded")
                self.retired += 1
            self.heads[key] = a.id
        self.active[a.id] = a
        if auto:
            self.auto.add(a.id)
        self._bound(_FACE[a.kind])

    def reject(self, anchor_id: str, why: str) -> None:
        self.rejected.append((anchor_id, why))
        if len(self.rejected) > self.limits.rejected:
            del self.rejected[0]
            self._drop("rejected")

    def verify(self, anchor_id: str) -> None:
        """Out of hot state (a verified failure, a finished todo): ``retired_count += 1``."""
        if self._remove(anchor_id) is not None:
            self.retired += 1
            self.verified.add(anchor_id)
