"""The Fold's current state: a pure, deterministic reducer over the RAW session log.

``reduce_events(events, upto=None, limits=StateLimits())`` reads raw DSH events in seq order
and returns a bounded ``FoldState`` (the Epistemic Fold seed's ``FoldCurrentState``): what the
agent must keep knowing after the history that said it has left the surface. It never reads
narrative, so the state cannot be poisoned by a summary that says "all tests passed":

- ``compaction/summary`` events are ignored, and so is every surface REPLACEMENT event (any
  event whose ``surfaceOp`` is not the string ``"append"``: checkpoints, assembly collapses,
  prunes, system-prompt rewrites). Only append-origin events and log-only events feed state;
  the originals a replacement shadows are still in the log and were reduced when appended.
- The reducer never raises on odd input: an event that is not a mapping, has no string type,
  no integer seq, or repeats a seq is skipped and counted in ``FoldState.skipped``; a bad or
  ungrounded anchor operation is not applied and is recorded in ``FoldState.rejected`` as
  ``(anchor id, why)``.

Explicit anchors (``ANCHOR_EVENT`` = ``"ctxsdk/fold-anchor"``, log-only, ``ignorable``; data
``{op: declare|transition|retire, anchor?, anchorId?, failureState?, evidenceRefs?}``, the
seed's ``ef/anchor``; build one with ``anchor_event``), the seed StateReducer rules:

1. declare (``anchor {id, kind, stateKey?, value, authority, sourceRefs, failureState?}``)
   passes the authority gate first: every source ref must be an earlier event of this log
   that is a valid root (an append-origin ``user/message``, ``system/message``,
   ``tool/result`` or ``assistant/message``; never an anchor event, a summary or a
   replacement: no derived-from-derived laundering), and at least one of them must grant the
   authority: user → normative, decision; system → normative; tool result → empirical,
   procedural; assistant → hypothesis, decision. ``narrative`` is never grounded.
2. kind ``objective`` ⇒ the single objective slot. With a ``stateKey`` ⇒ the head for that
   key; a different previous head is removed from every face, kept in ``superseded`` (bounded)
   with ``superseded_by``, and ``retired_count += 1`` (so SSR = 0 by construction). Faces:
   constraint → constraints, failure → open_failures, obligation → open_obligations,
   decision → decisions, evidence → evidence; value and artifact live only in ``heads`` and
   therefore need a stateKey (rejected without one). Re-declaring an id replaces it.
3. transition of an active failure: to ``verified`` only with ≥ 1 evidence ref, each an
   append-origin ``tool/result`` (empirical/procedural: the seed's ``canVerify``) ⇒ it leaves
   hot state, ``retired_count += 1``; ``open``/``investigating``/``resolved`` update in place
   (so an assistant saying "fixed" can at most make a failure resolved, never verified).
   Verifying a failure that a later successful run already verified is a no-op.
4. retire removes an anchor everywhere, ``retired_count += 1``.

Automatic extraction (so a real log with no anchor events still has a useful state). The
reducer keeps no sentence splitter and no cue table of its own: it feeds every append-origin
event to the fact kernel's ``FactReader`` (``ctxsdk.session``) and maps its facts to
anchors; at the end of the events reduced it reads ``FactReader.finish()`` (project facts,
open work). Every anchor cites the fact's source seq.

- objective: the first non-blank user prompt (a ``user/message`` whose ``source.kind`` is
  ``user``, or that has no source), whitespace folded and cut to ``limits.text``; it fills
  the slot once (a declared objective replaces it). ``current_request``: the latest user
  prompt. A prompt whose whole text is one ``<tag>…</tag>`` element is injected output (a
  command's stdout that an importer carried in as a user message), not a request; of a
  harness template only the user's own words count (the kernel's ``user_text``: the task
  inside a wrapper, nothing of a slash-command record or an injected context block).
  ``requests``: every user prompt in order, as a compaction summary lists all the user's
  messages (a short ask such as "make the paddles bigger" holds no rule the kernel reads,
  yet the work turns on it); an acknowledgement ("go ahead", "thanks") is none; the same
  words again refresh the earlier one; over ``limits.requests`` the oldest after the first
  goes (counted in ``dropped``). The objective and the current request show once.
- the user's instructions and preferences: a rule that holds beyond the next step (a
  prohibition, a normative or standing sentence, a preference, a scoped imperative) is a
  constraint, authority normative; the ask of a message (the kernel's task imperative, two
  words or more) is an open obligation until the user's next request takes its place. The
  system prompt gives none (the model reads it
  verbatim: it is never folded).
- decisions: from the user with authority decision, from the assistant's text (never its
  reasoning) with authority hypothesis; the reason and the rejected options are kept in the
  value ("… (because …) (not …)"). A keyed decision ("let's go with SQLite for the cache")
  is the head of ``decision/<key>``: a later choice for the same key supersedes it.
- settings: a value head with stateKey ``value/<key>`` (the kernel's key, lowercase, spaces
  and hyphens as ``_``): one key however it is phrased ("the request timeout is now 60
  seconds", "set the request timeout to 60 seconds"). The value keeps its unit ("60
  seconds") and its polarity ("not public"); a bare number or boolean is typed (int, float,
  bool). A later different value supersedes the earlier one; restating the same value only
  adds a source; the assistant's value (authority hypothesis) never replaces the user's.
- project facts (test command, language, package manager …): the head ``project/<key>``
  (authority procedural); a key file the session read or wrote is an artifact
  ``file/<path>`` unless a written-file artifact already names it or an edit of it failed.
- failures: a ``tool/result`` block with ``isError: true`` ⇒ ``failure:<callId>`` (stateKey
  ``failure/tool/<callId>``, empirical, open, value ``<tool name>: <the failing line>``).
  The result of a command (a ``command``/``cmd``/``script`` argument) that the kernel reads
  as failed (its exit code, test counts, a traceback, ``error:`` …) ⇒ ``failure:<call
  key>`` (stateKey ``failure/cmd/<call key>``, value ``<call key>: <the kernel's error
  line>``), where the call key is the tool name and its command, e.g. ``bash:pytest
  tests/test_x.py``. A command that only reads (ls, grep, cat, echo) gives no failure, even
  flagged ``isError``, nor does a harness note (cancelled, denied). A poll of a still-running
  process (Codex's ``write_stdin`` of a ``Process running with session ID N``) stands for
  the command it polls. A later result with no failure verifies every open
  failure it re-ran (isError ones included): the same call key, or the same tool with a
  command line that covers the failed one (the kernel's ``covers``: each part that mattered
  matched by a part running the same program and subcommand on the failed part's operands or
  more, launchers such as ``python -m`` and ``uv run`` aside, options ignored; a narrower run
  never covers a broader failure). That leaves hot state (``retired_count += 1``): the
  evidence is a real tool result, never a claim.
- evidence: a successful command whose output has a kernel pass signal (``N passed``,
  ``OK``, ``ok <pkg>``, ``all tests pass(ed)``, ``BUILD SUCCESSFUL`` …) ⇒
  ``evidence:<call key>`` (empirical), value ``<call key>: <that line>``; a newer one for
  the same call replaces it. A kernel error fact with the change that made the failing
  command pass (what failed, and the fix) ⇒ ``evidence:fixed:<command>``.
- artifacts: the paths named by a successful call of a tool whose name has a word write,
  edit, multiedit, create, replace, patch or insert (``str_replace_based_edit_tool`` but not
  its ``view`` command, ``apply_patch``, ``MultiEdit``): its path argument and the file
  headers of a patch; and the files a shell call's command writes (the kernel's
  ``written_paths``: a redirection, ``tee``, ``sed -i``, ``touch``, the target of ``mv`` /
  ``cp``; never a here-doc's body) ⇒ stateKey ``file/<path>``, authority procedural. A file
  a shell command changed keeps that command in its value (``x.py (by sed -i 's/a/b/'
  x.py)``); a redirect, ``tee`` or ``echo`` carries contents and keeps only the path. A file
  an edit tool changed (old and new text: ``old_string``/``new_string``, ``old_str``/
  ``new_str``, ``search``/``replace``) shows the first line its latest edit added, comments
  and imports passed over (``app.py (added `def add(a, b):`)``); an edit that only removed
  lines keeps the line shown before.
- the run (the kernel's harness facts, scope "this run"): a task template's numbered rules
  (SWE-agent's tips, mini-swe-agent's "DO NOT MODIFY: Tests") are constraints, authority
  normative, cited at the template's message, which folds away like any other; the same
  rules in the system prompt give none (the model reads it verbatim). The run's settings (the
  model of each ``request/header``, Aider's banner with its edit format, Codex's environment
  context: sandbox, approval policy, shell) are heads ``run/<key>`` (authority procedural;
  a model switch retires the earlier model, which is not kept in ``superseded``: a long
  run's switches must not push the work's earlier values out of that bounded list), shown as
  ``FoldState.run``, apart from the work's ``values``, and never copied into a checkpoint.
- an action the assistant told in its text (SWE-agent's last fenced block) whose output the
  harness relays next (a ``user/message`` whose source has ``form: relay``) is read as the
  call it stands for (``_told``): ``create``/``edit`` write the open file, else a shell.
- files (``_holds``): the outline of each file the session wrote (an edit's new text, a
  here-document) or read (a read tool, ``cat``/``sed -n`` of one file, a Codex poll of it,
  the ``path:line:text`` hits of a search): the names it defines (short signatures),
  routes, constants, module-level aliases, the hosts its code talks to and the environment
  variables it reads with defaults; a document only the variables it sets. Written files
  first, then files read twice or whose names the session names; at most ``limits.files``,
  each cut to ``limits.text``; derived at the end, never heads. A manifest's package and key scripts
  (and npm's banner's package) are ``project/package`` and ``project/script_<name>``; a
  ``git checkout -b`` the head ``project/branch``.
- key names (``_key_names``): the code names the conversation keeps naming (the user's
  words, the assistant's text, its calls' arguments; never tool output or a file's text),
  most named first, none the rest of the state shows, at most ``limits.names``, packed
  comma-separated; derived at the end, never heads.
- findings (``ctxsdk.session.statements``): the assistant's text statements (and those of
  a sub-agent's report, the result of a ``Task``/``delegate_to_agent`` call, without the
  harness's id and usage lines; a JSON report read as its text; never reasoning) that name
  something specific (a path, version, code name, code span, quoted literal, quantity),
  not plans, questions or acknowledgements, nor the words of an item already kept ⇒ kind
  ``finding``, authority hypothesis, at most ``limits.findings`` (a long session's cap
  grows as sqrt(findings × statements), up to ``limits.growth`` times, for
  statements that name something: plain ones fill no more than ``limits.findings``), chosen
  at the end for what the session keeps naming (``select_statements``), in seq order.
  Derived only: never declared, never a head, never evidence.
- open work the assistant's last text names ⇒ an open obligation (authority hypothesis).
  Its outcome claims are narrative and never state.
- ``todo/write`` (``data.todos: [{content, status}]``) is a snapshot of the agent's list:
  pending/in_progress items are open obligations ``todo:<content>``; a todo obligation that
  the latest snapshot does not hold open (completed, cancelled or gone) is retired.

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

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from .._display import Rendered, badge, esc, kv, plural, section, table
from ..errors import InvalidArgument
from ..session import (
    RUN_SCOPE,
    CommandPart,
    Fact,
    FactReader,
    Statement,
    call_command,
    call_target,
    command_covers,
    command_parts,
    edit_texts,
    first_line,
    harness_note,
    heredoc_writes,
    instruction_kind,
    is_filler,
    message_of,
    message_text,
    pass_line,
    redact,
    run_outcome,
    run_value,
    select_statements,
    statements,
    user_text,
    written_paths,
    written_text,
)
from ._holds import (
    FileOutlines,
    branch_made,
    manifest_facts,
    read_path,
    runtime_versions,
    search_hits,
)
from ._key_names import KeyNames, call_words
from ._project_rules import ProjectRules
from ._told import ToldActions

__all__ = [
    "ANCHOR_EVENT",
    "ANCHOR_KINDS",
    "AUTHORITIES",
    "FAILURE_STATES",
    "Anchor",
    "FoldState",
    "StateLimits",
    "StateMetrics",
    "anchor_event",
    "reduce_events",
    "state_metrics",
]

ANCHOR_EVENT = "ctxsdk/fold-anchor"
RUN_KEY_PREFIX = "run/"  # the heads of the run's settings (the harness's, not the work's)
ANCHOR_KINDS = (
    "objective",
    "constraint",
    "decision",
    "value",
    "artifact",
    "evidence",
    "failure",
    "obligation",
)
AUTHORITIES = ("normative", "empirical", "procedural", "decision", "narrative", "hypothesis")
FAILURE_STATES = ("open", "investigating", "resolved", "verified")
LIFECYCLES = ("active", "superseded", "retired")
ANCHOR_OPS = ("declare", "transition", "retire")

Value = str | int | float | bool
JsonDict = dict[str, Any]
_Call = tuple[str, tuple[str, str | None]]  # (call key, (tool name, command line or None))

# Which event types may ground which authority (seed authority.ts).
_GRANTS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "user/message": frozenset({"normative", "decision"}),
        "system/message": frozenset({"normative"}),
        "tool/result": frozenset({"empirical", "procedural"}),
        "assistant/message": frozenset({"hypothesis", "decision"}),
    }
)
# Authorities of what the assistant or a tool said about the work: dropped first over a cap.
_WEAK = frozenset({"hypothesis", "procedural"})
# The face each kind lives in (objective has its own slot).
_FACE: Mapping[str, str] = MappingProxyType(
    {
        "constraint": "constraints",
        "failure": "open_failures",
        "obligation": "open_obligations",
        "decision": "decisions",
        "evidence": "evidence",
        "artifact": "artifacts",
        "value": "values",
    }
)


# --- the data --------------------------------------------------------------------------------


def _seqs_text(sources: Sequence[int]) -> str:
    return ("seq " if len(sources) == 1 else "seqs ") + ", ".join(str(s) for s in sources)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


@dataclass(frozen=True, kw_only=True)
class Anchor:
    """One item of state, always with the raw event seqs that ground it (never empty)."""

    id: str
    kind: str
    state_key: str | None = None
    value: Value
    authority: str
    lifecycle: str = "active"
    failure_state: str | None = None
    sources: tuple[int, ...]
    superseded_by: str | None = None

    def to_json(self) -> JsonDict:
        out: JsonDict = {"id": self.id, "kind": self.kind}
        if self.state_key is not None:
            out["stateKey"] = self.state_key
        out["value"] = self.value
        out["authority"] = self.authority
        out["lifecycle"] = self.lifecycle
        if self.failure_state is not None:
            out["failureState"] = self.failure_state
        out["sources"] = list(self.sources)
        if self.superseded_by is not None:
            out["supersededBy"] = self.superseded_by
        return out


@dataclass(frozen=True, kw_only=True)
class StateLimits:
    """Per-face caps, so the state stays bounded however long the session is. Over a face's
    cap the oldest auto-extracted item goes first, then the oldest declared one."""

    # What the work must honour.
    constraints: int = 24
    decisions: int = 12
    values: int = 32
    obligations: int = 16
    requests: int = 24  # the user's requests, in order (the first and the latest are slots)
    # What the work did, and what is still failing.
    evidence: int = 12
    artifacts: int = 24
    open_failures: int = 16
    # Anchors a newer one replaced, and anchor operations refused for want of grounding.
    superseded: int = 32
    rejected: int = 32
    findings: int = 24  # the assistant's statements that name something specific
    files: int = 12  # outlines of the key files (what each holds)
    names: int = 30  # the code names the conversation keeps naming (``_key_names``)
    rules: int = 12  # the project's rules read from its agent files (AGENTS.md …), in all
    growth: int = 4  # a long session's findings cap grows up to this many times (1: fixed)
    text: int = 240  # characters of auto-extracted text per item (and of a rendered line)
    sources: int = 8  # source seqs kept per anchor: its first and its newest
    scan_chars: int = 8000  # unused: the fact kernel bounds its own reading (kept for callers)
    sentences: int = 64  # unused, as scan_chars

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise InvalidArgument(f"StateLimits.{name} must be an int >= 1, not {value!r}")
        if self.text < 16:
            raise InvalidArgument(f"StateLimits.text must be at least 16, not {self.text}")

    def cap(self, face: str) -> int:
        return int(getattr(self, "obligations" if face == "open_obligations" else face))

    def findings_cap(self, said: int) -> int:
        """The findings kept of ``said`` statements: ``findings``, or in a long session
        sqrt(findings × said), at most ``growth × findings``: a 600-statement session found
        more than a 20-statement one, and a fixed cap lost a third of what it found."""
        grown = math.isqrt(self.findings * max(said, 0))
        return max(self.findings, min(self.growth * self.findings, grown))


_GROUPS = (
    ("objective", "Objective"),
    ("request", "Current request"),
    ("requests", "Earlier requests"),
    ("constraints", "Constraints"),
    ("rules", "Project rules (its agent files)"),
    ("values", "State"),
    ("run", "Run (the harness's settings)"),
    ("open_failures", "Open failures"),
    ("open_obligations", "Open obligations"),
    ("decisions", "Decisions"),
    ("evidence", "Evidence"),
    ("artifacts", "Artifacts"),
    ("files", "Files (what they hold)"),
    ("names", "Key names (what the work keeps naming)"),
    ("findings", "Findings (the assistant's, unverified)"),
    ("superseded", "Superseded (recallable)"),
)

StateLines = tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True, kw_only=True, repr=False)
class FoldState(Rendered):
    """The bounded current state derived from raw events (heads only; see the module doc)."""

    objective: Anchor | None = None
    current_request: Anchor | None = None
    requests: tuple[Anchor, ...] = ()  # every user request in order, the first and latest too
    constraints: tuple[Anchor, ...] = ()
    heads: Mapping[str, Anchor] = field(default_factory=lambda: MappingProxyType({}))
    open_failures: tuple[Anchor, ...] = ()
    open_obligations: tuple[Anchor, ...] = ()
    decisions: tuple[Anchor, ...] = ()
    evidence: tuple[Anchor, ...] = ()
    artifacts: tuple[Anchor, ...] = ()
    findings: tuple[Anchor, ...] = ()  # the assistant's statements (hypothesis), seq order
    files: tuple[Anchor, ...] = ()  # what the key files hold (derived, procedural)
    names: tuple[Anchor, ...] = ()  # the names the conversation keeps naming (derived)
    rules: tuple[Anchor, ...] = ()  # the project's rules from its agent files (derived)
    superseded: tuple[Anchor, ...] = ()
    retired_count: int = 0
    rejected: tuple[tuple[str, str], ...] = ()
    dropped: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    skipped: int = 0  # malformed events skipped
    upto: int = -1  # the last seq reduced (-1: none)

    def __repr__(self) -> str:
        return f"FoldState(upto={self.upto}, items={self.items()}, retired={self.retired_count})"

    @property
    def values(self) -> tuple[Anchor, ...]:
        """The value heads (kind ``value``) of the work, in key order: settings, project facts
        (the run's own settings are ``run``)."""
        return tuple(
            a
            for k, a in self.heads.items()
            if a.kind == "value" and not k.startswith(RUN_KEY_PREFIX)
        )

    @property
    def run(self) -> tuple[Anchor, ...]:
        """The run's settings as its harness stated them (heads ``run/<key>``: the model,
        a sandbox or approval mode, the shell), in key order."""
        return tuple(a for k, a in self.heads.items() if k.startswith(RUN_KEY_PREFIX))

    def active(self) -> list[Anchor]:
        """Every active anchor once: the slots, the faces, then heads not in a face."""
        out: dict[str, Anchor] = {}
        for a in (self.objective, self.current_request):
            if a is not None:
                out.setdefault(a.id, a)
        for face in (
            self.constraints,
            self.open_failures,
            self.open_obligations,
            self.decisions,
            self.evidence,
            self.artifacts,
            tuple(self.heads.values()),
            self.findings,
            self.files,
            self.names,
            self.rules,
        ):
            for a in face:
                out.setdefault(a.id, a)
        return list(out.values())

    def anchor(self, anchor_id: str) -> Anchor | None:
        """The active anchor with this id, or None (superseded ones are in ``superseded``)."""
        return next((a for a in self.active() if a.id == anchor_id), None)

    def items(self) -> int:
        """How many items the state shows: active anchors and superseded ones."""
        return len(self.active()) + len(self.superseded)

    def to_json(self) -> JsonDict:
        def many(anchors: Iterable[Anchor]) -> list[JsonDict]:
            return [a.to_json() for a in anchors]

        return {
            "upto": self.upto,
            "objective": self.objective.to_json() if self.objective else None,
            "currentRequest": self.current_request.to_json() if self.current_request else None,
            "requests": many(self.requests),
            "constraints": many(self.constraints),
            "heads": {k: self.heads[k].to_json() for k in sorted(self.heads)},
            "openFailures": many(self.open_failures),
            "openObligations": many(self.open_obligations),
            "decisions": many(self.decisions),
            "evidence": many(self.evidence),
            "artifacts": many(self.artifacts),
            "findings": many(self.findings),
            "files": many(self.files),
            "names": many(self.names),
            "rules": many(self.rules),
            "superseded": many(self.superseded),
            "retiredCount": self.retired_count,
            "rejected": [list(r) for r in self.rejected],
            "dropped": {k: self.dropped[k] for k in sorted(self.dropped)},
            "skipped": self.skipped,
        }

    # --- rendering ---------------------------------------------------------------------------

    def _line(self, a: Anchor, face: str, width: int = 240) -> str:
        """One shown item, cut to ``width``, then its source seqs."""
        seqs = f" ({_seqs_text(a.sources)})"
        if face in ("values", "run"):
            body = f"{a.state_key} = {a.value}"
        elif face == "open_failures":
            body = f"[{a.failure_state or 'open'}] {a.value}"
        elif face == "superseded":
            new = self.anchor(a.superseded_by) if a.superseded_by else None
            by = f"{new.value} ({_seqs_text(new.sources[-1:])})" if new else a.superseded_by
            return f"{_cut(f'{a.state_key} = {a.value}', width)}{seqs}, superseded by {by}"
        else:
            body = str(a.value)
            if a.state_key and face in ("constraints", "decisions", "open_obligations"):
                body += f" [{a.state_key}]"
        return _cut(body, width) + seqs

    def earlier_requests(self) -> tuple[Anchor, ...]:
        """The user's requests other than the first and the latest (shown as slots)."""
        slots = {a.sources for a in (self.objective, self.current_request) if a is not None}
        return tuple(a for a in self.requests if a.sources not in slots)

    def _faces(self) -> list[tuple[str, str, tuple[Anchor, ...]]]:
        request = self.current_request
        objective = self.objective
        if request is not None and objective is not None and request.sources == objective.sources:
            request = None  # the first prompt is both: show it once
        faces = {
            "objective": (self.objective,) if self.objective else (),
            "request": (request,) if request else (),
            "requests": self.earlier_requests(),
            "constraints": self.constraints,
            "rules": self.rules,
            "values": self.values,
            "run": self.run,
            "open_failures": self.open_failures,
            "open_obligations": self.open_obligations,
            "decisions": self.decisions,
            "evidence": self.evidence,
            "artifacts": self.artifacts,
            "findings": self.findings,
            "files": self.files,
            "names": self.names,
            "superseded": self.superseded,
        }
        return [(key, title, faces[key]) for key, title in _GROUPS if faces[key]]

    def lines(self, *, superseded: bool = True, width: int = 240) -> StateLines:
        """The lines a checkpoint shows, grouped ``(title, lines)``, non-empty groups only.

        Each line is the item (cut to ``width``), then its source seqs: ``… (seq 12)``.
        ``superseded=False`` leaves out the superseded values (they stay recallable)."""
        out: list[tuple[str, tuple[str, ...]]] = []
        for key, title, anchors in self._faces():
            if key == "superseded" and not superseded:
                continue
            out.append((title, tuple(self._line(a, key, width) for a in anchors)))
        return tuple(out)

    def _headline(self) -> str:
        parts = [
            f"FoldState through seq {self.upto}: {plural(self.items(), 'item')}",
            f"{self.retired_count} retired",
        ]
        if self.rejected:
            parts.append(f"{len(self.rejected)} rejected")
        dropped = sum(self.dropped.values())
        if dropped:
            parts.append(f"{dropped} dropped to stay bounded")
        if self.skipped:
            parts.append(f"{self.skipped} malformed events skipped")
        return " · ".join(parts)

    def _text_(self) -> str:
        out = [self._headline()]
        for title, rows in self.lines():
            out.append(f"{title}:")
            out += [f"  - {r}" for r in rows]
        if self.rejected:
            out.append("Rejected:")
            out += [f"  - {i}: {why}" for i, why in self.rejected]
        return "\n".join(out)

    def _html_(self) -> str:
        head = kv(
            [
                ("through seq", self.upto),
                ("items", self.items()),
                ("retired", self.retired_count),
                ("dropped", sum(self.dropped.values())),
            ]
        )
        parts = [f"<div class='cx-title'>{esc(self._headline())}</div>", head]
        for key, title, anchors in self._faces():
            rows = [
                (
                    badge(a.authority, a.authority),
                    self._line(a, key),
                    ", ".join(str(s) for s in a.sources),
                )
                for a in anchors
            ]
            parts.append(section(title, table(("authority", "item", "seqs"), rows, raw=(0,))))
        if self.rejected:
            parts.append(section("Rejected", table(("anchor", "why"), self.rejected)))
        return "".join(parts)


# --- anchor events -----------------------------------------------------------------------------


def anchor_event(
    op: str,
    *,
    anchor: Anchor | Mapping[str, Any] | None = None,
    anchor_id: str | None = None,
    failure_state: str | None = None,
    evidence: Iterable[int] = (),
) -> JsonDict:
    """The log-only event of one anchor operation, ready for ``Session.append`` (which fills
    ``seq`` and ``time``): ``{"type": ANCHOR_EVENT, "data": {...}, "ignorable": True}``.

    ``declare`` needs ``anchor`` (an ``Anchor``, whose ``sources`` become ``sourceRefs``, or the
    wire mapping ``{id, kind, stateKey?, value, authority, sourceRefs}``); ``transition`` needs
    ``anchor_id`` and ``failure_state`` (``evidence``: the seqs that justify it); ``retire``
    needs ``anchor_id``. Whether the operation is grounded is the reducer's decision."""
    refs = [int(s) for s in evidence]
    data: JsonDict = {"op": op}
    if op == "declare":
        if anchor is None:
            raise InvalidArgument("anchor_event('declare') needs anchor=")
        if isinstance(anchor, Anchor):
            wire: JsonDict = {"id": anchor.id, "kind": anchor.kind}
            if anchor.state_key is not None:
                wire["stateKey"] = anchor.state_key
            wire["value"] = anchor.value
            wire["authority"] = anchor.authority
            if anchor.failure_state is not None:
                wire["failureState"] = anchor.failure_state
            wire["sourceRefs"] = list(anchor.sources)
        else:
            wire = json.loads(json.dumps(dict(anchor)))  # a deep, JSON-only copy
        data["anchor"] = wire
    elif op == "transition":
        if not anchor_id or failure_state not in FAILURE_STATES:
            raise InvalidArgument(
                "anchor_event('transition') needs anchor_id= and failure_state= one of "
                f"{', '.join(FAILURE_STATES)}"
            )
        data["anchorId"] = anchor_id
        data["failureState"] = failure_state
        data["evidenceRefs"] = refs
    elif op == "retire":
        if not anchor_id:
            raise InvalidArgument("anchor_event('retire') needs anchor_id=")
        data["anchorId"] = anchor_id
    else:
        raise InvalidArgument(f"anchor op is one of {', '.join(ANCHOR_OPS)}, not {op!r}")
    return {"type": ANCHOR_EVENT, "data": data, "ignorable": True}


# --- reading the log: the fact kernel ------------------------------------------------------------

_INJECTED = re.compile(r"<([\w-]+)[^>]*>.*</\1>", re.S)  # one element: injected output
_ASK_WORDS = 2  # words an ask needs to be an obligation ("Please." alone is not)

_RUNNING = re.compile(r"Process running with session ID (\d+)")  # Codex: polled later
# Tools that hand work to a sub-agent: their result is that agent's report, in its words.
_DELEGATES = frozenset({"task", "agent", "delegate_to_agent", "spawn_agent", "dispatch_agent"})
# What the harness adds to a sub-agent's report: its id, usage, how it ended.
_REPORT_NOISE = re.compile(
    r"<usage>.*?</usage>|^(?:agentId|Termination Reason):[^\n]*$|^Subagent '[^'\n]*' finished\.$",
    re.S | re.M,
)
_MAX_STATEMENTS = 4000  # the assistant's statements a reduce keeps to choose findings from
# Programs whose command line holds a file's new contents, not the change made to it.
_CONTENT_WRITERS = frozenset({"cat", "echo", "printf", "tee", "touch", "dd", "head", "tail"})
# How much of the command that changed a file its line shows: enough to say the change
# (``sed -i '171s…``), not a long script repeated for every file it touched.
_COMMAND_SHOWN = 60


def _fold(text: str) -> str:
    return " ".join(text.split())


def _norm(text: str) -> str:
    return _fold(text).lower().rstrip(" .!;:")


def _typed(raw: str) -> Value:
    """A setting's value as said: a number or a boolean when it is one, else the text."""
    text = raw.strip()
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if re.fullmatch(r"-?\d{1,15}", text):
        return int(text)
    if re.fullmatch(r"-?\d{1,15}\.\d{1,15}", text):
        return float(text)
    return text


def _setting_value(f: Fact) -> Value:
    """The value a setting fact holds: its unit kept ("60 seconds"), its polarity kept
    ("not public"); a bare number or boolean typed."""
    raw = f.value or ""
    if f.unit:
        raw = f"{raw} {f.unit}"
    elif not f.negated:
        return _typed(raw)
    return f"not {raw}" if f.negated else raw


def _slot(key: str) -> str:
    """A kernel key as a state key part: lowercase, spaces and hyphens as ``_``."""
    return re.sub(r"[\s\-]+", "_", key.strip().lower()).strip("_.") or "_"


def _decision_text(f: Fact) -> str:
    """A decision's line: its words (a keyed one's sentence as said, not ``key = value``),
    with the reason and the rejected options it gives."""
    text = _fold(f.source.quote) if f.key and f.source.quote.strip() else f.text
    low = text.casefold()
    if f.reason and f.reason.casefold() not in low:
        text += f" (because {f.reason})"
    rejected = [r for r in f.rejected if r.casefold() not in low]
    if rejected:
        text += f" (not {', '.join(rejected)})"
    return text


def _instruction_face(f: Fact) -> str | None:
    """Where a user instruction or preference lives: a rule that holds beyond the next step
    is a constraint; an ask for one piece of work (the kernel's task imperative) an open
    obligation; a one-word ask ("Please.") nowhere."""
    if f.kind != "instruction" or f.scope is not None:
        return "constraint"
    got = instruction_kind(f.text)
    if got is None or got[1]:
        return "constraint"
    return "obligation" if len(f.text.split()) >= _ASK_WORDS else None


def _arguments(raw: Any) -> JsonDict:
    """Tool-call arguments as a dict (a JSON string parsed; anything else kept as ``_raw``)."""
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return {"_raw": raw}
        return dict(parsed) if isinstance(parsed, dict) else {"_raw": raw}
    return {}


def _call_key(name: str, args: Mapping[str, Any]) -> str:
    """A call's name in ids: the tool and its command (or path), whitespace folded."""
    command = call_target(args)
    if command is not None:
        return _cut(f"{name}:{_fold(command)}", 160)
    if not args:
        return name
    rest = json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)
    return _cut(f"{name}:{_fold(rest)}", 160)


def _unlaunched(command: str) -> list[CommandPart]:
    """The kernel's parts of a command line, launchers left out: ``python -m pytest x`` and
    ``uv run pytest x`` run the same tests as ``pytest x``."""
    return [replace(p, launcher=()) for p in command_parts(command)]


def _reruns(done: tuple[str, str | None], failed: tuple[str, str | None]) -> bool:
    """Whether a successful call re-ran what a failed one ran, or more: the same tool and a
    command line that covers the failed one (the kernel's ``covers``: a narrower run never
    covers a broader failure; options ignored)."""
    (tool, command), (ftool, fcommand) = done, failed
    if tool != ftool or command is None or fcommand is None:
        return False
    return command_covers(_unlaunched(command), _unlaunched(fcommand))


_ADDED_SHOWN = 80  # characters of the added line an artifact shows
# A line that says nothing of the change: a comment, a shebang, an import or include.
_PREAMBLE = re.compile(
    r"(?:#|//|/\*|\*|<!--|--|;|export \* |(?:import|from|require|use|using|include|package)\b)"
)


def _added(args: Mapping[str, Any]) -> str | None:
    """The first line an edit call added: the first line of its new text that its old text
    lacks, passing over blank lines, comments and imports (``@app.route("/add/<int:a>")``,
    ``MAX_ITEMS = 50``); None when the edit only removed or moved lines."""
    old, new = edit_texts(args)  # the base's one reader of an edit call's arguments
    if not (isinstance(old, str) and isinstance(new, str)):
        return None
    had = {line.strip() for line in old.splitlines()}
    for line in new.splitlines():
        got = line.strip()
        if got in had or sum(ch.isalnum() for ch in got) < 3 or _PREAMBLE.match(got):
            continue
        return _cut(got, _ADDED_SHOWN)
    return None


def _written(path: str, command: str | None, args: Mapping[str, Any]) -> str:
    """A written file's line: the path, and the command that changed it when the command
    says the change (``sed -i 's/a/b/' x.py``, ``mv a.py b.py``); a redirect, ``tee`` or
    ``echo`` carries only contents. An editor tool's call shows the first line it added
    (``app.py (added `def add(a, b):`)``), not its whole text."""
    if command is None:
        added = _added(args)
        return f"{path} (added `{added}`)" if added else path
    for p in command_parts(command):
        if path in p.writes and p.program not in _CONTENT_WRITERS and "\n" not in p.text:
            return f"{path} (by {_cut(_fold(p.text), _COMMAND_SHOWN)})"
    return path


def _report(text: str) -> str:
    """A sub-agent's report without what its harness added (its id, token usage, how it
    ended): only the agent's own words are findings. A report written as JSON (Gemini CLI's
    investigator) is read as its text: each string, and each list of names after its key."""
    text = _REPORT_NOISE.sub("", text)
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return text
    try:
        data = json.loads(text[start : end + 1])
    except ValueError:
        return text
    lines: list[str] = []
    _json_text(data, "", lines)
    return text[:start] + "\n".join(lines) + text[end + 1 :]


def _json_text(value: Any, key: str, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, Mapping):
        for k, v in value.items():
            _json_text(v, str(k), out)
    elif isinstance(value, list):
        if value and all(isinstance(v, str) and len(v) <= 80 for v in value):
            out.append(f"{key}: {', '.join(value)}.")
        else:
            for v in value:
                _json_text(v, key, out)


def _explores(command: str) -> bool:
    """A command line that only reads (ls, grep, cat, echo …): what it prints is content,
    and its exit code is no verdict on the work."""
    ps = command_parts(command)
    return bool(ps) and all(p.purpose == "read" for p in ps)


def _feeds(ev: Mapping[str, Any]) -> bool:
    """Append-origin or log-only: the events state may be derived from."""
    op = ev.get("surfaceOp")
    return op is None or op == "append"


def _grants(ev: Mapping[str, Any]) -> frozenset[str] | None:
    """The authorities an event can ground, or None when it is not a valid root."""
    if not _feeds(ev):
        return None
    return _GRANTS.get(str(ev.get("type")))


def _merge_sources(old: Sequence[int], new: Sequence[int], cap: int) -> tuple[int, ...]:
    seqs = sorted(set(old) | set(new))
    return tuple(seqs if len(seqs) <= cap else [seqs[0], *seqs[len(seqs) - cap + 1 :]])


def _int_list(value: Any) -> list[int] | None:
    if not isinstance(value, list):
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return None
    return list(value)


# --- the reducer --------------------------------------------------------------------------------


class _Reducer:
    """The mutable fold of one ``reduce_events`` call (never shared, never returned)."""

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

    # --- explicit anchor operations --------------------------------------------------------

    def _ungrounded(self, authority: str, refs: Sequence[int], seq: int) -> str | None:
        """Why ``refs`` do not ground ``authority`` (None when they do)."""
        if not refs:
            return "no sourceRefs: an anchor must cite the raw events it comes from"
        if authority == "narrative":
            return "narrative authority is never grounded"
        granted: set[str] = set()
        for ref in refs:
            ev = self.seen.get(ref)
            if ev is None or ref >= seq:
                return f"source seq {ref} is not an earlier event of this log"
            grants = _grants(ev)
            if grants is None:
                return f"source seq {ref} ({ev.get('type')}) is not a valid root"
            granted |= grants
        if authority not in granted:
            return f"{authority} authority is not grounded by seqs {list(refs)}"
        return None

    def anchor_op(self, ev: Mapping[str, Any], seq: int) -> None:
        data = ev.get("data")
        if not isinstance(data, Mapping) or data.get("op") not in ANCHOR_OPS:
            self.reject(f"seq {seq}", "an anchor event needs data.op declare|transition|retire")
            return
        op = data["op"]
        if op == "declare":
            self._declare_op(data.get("anchor"), seq)
            return
        anchor_id = data.get("anchorId")
        if not isinstance(anchor_id, str) or not anchor_id:
            self.reject(f"seq {seq}", f"{op} needs anchorId")
            return
        if op == "retire":
            if self.objective is not None and self.objective.id == anchor_id:
                self.objective = None
                self.retired += 1
            elif self._remove(anchor_id) is not None:
                self.retired += 1
            else:
                self.reject(anchor_id, f"retire at seq {seq}: no active anchor with this id")
            return
        self._transition_op(anchor_id, data, seq)

    def _declare_op(self, raw: Any, seq: int) -> None:
        if not isinstance(raw, Mapping):
            self.reject(f"seq {seq}", "declare needs an anchor object")
            return
        aid = raw.get("id")
        if not isinstance(aid, str) or not aid:
            self.reject(f"seq {seq}", "the declared anchor has no id")
            return
        kind, authority, value = raw.get("kind"), raw.get("authority"), raw.get("value")
        key, refs = raw.get("stateKey"), _int_list(raw.get("sourceRefs"))
        fstate = raw.get("failureState")
        problem = None
        if kind not in ANCHOR_KINDS:
            problem = f"kind {kind!r} is not one of {', '.join(ANCHOR_KINDS)}"
        elif authority not in AUTHORITIES:
            problem = f"authority {authority!r} is not one of {', '.join(AUTHORITIES)}"
        elif not isinstance(value, str | int | float):
            problem = "value must be a string, number or boolean"
        elif key is not None and (not isinstance(key, str) or not key):
            problem = "stateKey must be a non-empty string"
        elif raw.get("lifecycle", "active") != "active":
            problem = "only active anchors are declared"
        elif kind in ("value", "artifact") and key is None:
            problem = f"a {kind} anchor lives only in heads, so it needs a stateKey"
        elif fstate is not None and (kind != "failure" or fstate not in FAILURE_STATES):
            problem = "failureState is for failures: open|investigating|resolved|verified"
        elif refs is None:
            problem = "sourceRefs must be a list of seqs"
        if problem is None:
            assert isinstance(authority, str) and refs is not None
            problem = self._ungrounded(authority, refs, seq)
        if problem is not None:
            self.reject(aid, problem)
            return
        assert isinstance(kind, str) and isinstance(authority, str) and refs is not None
        assert isinstance(value, str | int | float)
        if kind == "failure" and fstate == "verified":
            self.reject(aid, "a failure is verified by a transition with evidence, not declared")
            return
        self.declare(
            Anchor(
                id=aid,
                kind=kind,
                state_key=key if isinstance(key, str) else None,
                value=value,
                authority=authority,
                failure_state=(fstate or "open") if kind == "failure" else None,
                sources=tuple(sorted(set(refs))),
            )
        )

    def _transition_op(self, anchor_id: str, data: Mapping[str, Any], seq: int) -> None:
        a = self.active.get(anchor_id)
        state = data.get("failureState")
        refs = _int_list(data.get("evidenceRefs", [])) if "evidenceRefs" in data else []
        if a is None and state == "verified" and anchor_id in self.verified:
            return  # already verified by a later successful run: nothing left to do
        if a is None or a.kind != "failure":
            self.reject(anchor_id, f"transition at seq {seq}: no active failure with this id")
            return
        if state not in FAILURE_STATES:
            self.reject(anchor_id, f"failureState {state!r} is not one of {FAILURE_STATES}")
            return
        if refs is None:
            self.reject(anchor_id, "evidenceRefs must be a list of seqs")
            return
        for ref in refs:
            ev = self.seen.get(ref)
            if ev is None or ref >= seq or _grants(ev) is None:
                self.reject(anchor_id, f"evidence seq {ref} is not an earlier root event")
                return
        if state == "verified":
            if not refs:
                self.reject(anchor_id, "verified needs at least one evidence ref")
                return
            weak = [r for r in refs if self.seen[r].get("type") != "tool/result"]
            if weak:  # canVerify: only empirical/procedural evidence (a tool result)
                self.reject(anchor_id, f"evidence seqs {weak} are not tool results")
                return
            self.verify(anchor_id)
            return
        sources = _merge_sources(a.sources, refs, self.limits.sources)
        self.active[anchor_id] = replace(a, failure_state=state, sources=sources)

    # --- the facts of the log -----------------------------------------------------------------

    def _text_anchor(
        self, kind: str, text: str, seq: int, i: int, authority: str, key: str | None = None
    ) -> str:
        """A constraint, obligation or decision; a restatement refreshes it (same id, the
        newest wording, both sources) and makes it the newest of its face; returns its id."""
        norm = _norm(text)
        known = self.texts.get((kind, norm))
        aid = known if known is not None and known in self.active else f"{kind}:{seq}.{i}"
        self.texts[(kind, norm)] = aid
        value = _cut(text, self.limits.text)
        self.declare(
            Anchor(
                id=aid, kind=kind, state_key=key, value=value, authority=authority, sources=(seq,)
            ),
            auto=True,
        )
        return aid

    def _value(
        self, key: str, value: Value, seq: int, authority: str, *, face: str = "value"
    ) -> None:
        state_key = f"{face}/{key}"
        head_id = self.heads.get(state_key)
        head = self.active.get(head_id) if head_id is not None else None
        if head is not None and head.value == value and type(head.value) is type(value):
            self.declare(replace(head, sources=(seq,)), auto=True, move=False)
            return
        if head is not None and authority == "hypothesis" and head.authority == "normative":
            return  # the assistant restating a setting never overrides what the user set
        if isinstance(value, str):
            value = _cut(value, self.limits.text)
        if head is not None and face == "run":
            # a run setting replaced (a model switch) is retired, never kept as superseded: a
            # long run's switches must not push the work's earlier values out of that list
            self._remove(head.id)
            self.retired += 1
        self.declare(
            Anchor(
                id=f"{face}:{key}@{seq}",
                kind="value",
                state_key=state_key,
                value=value,
                authority=authority,
                sources=(seq,),
            ),
            auto=True,
        )

    def _project(self, f: Fact) -> None:
        """A project fact: a key file is an artifact, anything else (test command, language,
        package manager …) the head of ``project/<key>``."""
        key, seq = f.key or "", f.source.seq
        if key.startswith("file ") and f.value:
            path = f.value
            known = [k for k in self.heads if k == f"file/{path}" or k.endswith(f"/{path}")]
            failed = any(p == path or p.endswith(f"/{path}") for p in self.failed_edits)
            if not known and not failed:
                self.declare(
                    Anchor(
                        id=f"artifact:{path}",
                        kind="artifact",
                        state_key=f"file/{path}",
                        value=_cut(f.text, self.limits.text),
                        authority="procedural",
                        sources=(seq,),
                    ),
                    auto=True,
                    move=False,
                )
            return
        self._project_value(key or "fact", f.text if not f.value else f.value, seq)

    def _project_value(self, key: str, text: str, seq: int) -> None:
        """The head of ``project/<key>``; the same value again changes nothing."""
        value = _cut(text, self.limits.text)
        state_key = f"project/{_slot(key)}"
        head_id = self.heads.get(state_key)
        head = self.active.get(head_id) if head_id is not None else None
        if head is not None and head.value == value:
            return
        self.declare(
            Anchor(
                id=f"project:{_slot(key)}@{seq}",
                kind="value",
                state_key=state_key,
                value=value,
                authority="procedural",
                sources=(seq,),
            ),
            auto=True,
        )

    def _fixed(self, f: Fact) -> None:
        """An error the work got past (the kernel's error fact with the passing run): what
        failed and what fixed it, kept as evidence."""
        if f.reason is None or f.fix is None:
            return  # still failing (the open failure says it), or passed again unchanged
        seqs = sorted({f.source.seq, *f.evidence[-1:]})
        self.declare(
            Anchor(
                id=f"evidence:fixed:{_cut(f.value or f.text, 120)}",
                kind="evidence",
                value=_cut(f.text, self.limits.text),  # "<command>: <error> — fixed by <files>"
                authority="empirical",
                sources=tuple(seqs),
            ),
            auto=True,
        )

    def facts(self, found: Sequence[Fact]) -> None:
        """Map the kernel's facts of one event (or of the log's end) to anchors."""
        for i, f in enumerate(found):
            role, seq = f.source.role, f.source.seq
            if seq not in self.seen or not _feeds(self.seen[seq]):
                continue  # never cite what is not a root of this log
            if self.project_rules.add(f):
                continue  # a rule of AGENTS.md, CLAUDE.md …: its own group (``rules``)
            user = role == "user"
            if f.scope == RUN_SCOPE:
                self._run_fact(f, seq, i)
            elif f.kind in ("instruction", "preference") and user:
                face = _instruction_face(f)
                if face is not None:
                    aid = self._text_anchor(face, f.text, seq, i, "normative")
                    if face == "obligation":
                        self.asks.add(aid)
            elif f.kind == "decision":
                key = f"decision/{_slot(f.key)}" if f.key else None
                authority = "decision" if user else "hypothesis"
                self._text_anchor("decision", _decision_text(f), seq, i, authority, key)
            elif f.kind == "setting" and f.key and f.value:
                authority = "normative" if user else "hypothesis"
                self._value(_slot(f.key), _setting_value(f), seq, authority)
            elif f.kind == "project":
                self._project(f)
            elif f.kind == "error":
                self._fixed(f)
            elif f.kind == "open_work":
                self._text_anchor("obligation", f.text, seq, i, "hypothesis")
            # outcome: the assistant's account of its work, narrative, never state

    def _run_fact(self, f: Fact, seq: int, i: int) -> None:
        """What the harness stated for this run: a task template's rule is a constraint (the
        template's message folds away like any other, its rules still bind the run), unless
        the system prompt said it (the model reads that verbatim); a run setting (model,
        sandbox, shell) is the head of ``run/<key>``, so a model switch supersedes it."""
        if f.kind in ("instruction", "preference"):
            if self.seen[seq].get("type") != "system/message":
                self._text_anchor("constraint", f.text, seq, i, "normative")
        elif f.kind == "setting" and f.key and f.value:
            # as the harness said it: Aider's edit format goes with its model
            value = run_value(f) or _setting_value(f)
            self._value(_slot(f.key), value, seq, "procedural", face="run")

    def user_message(self, ev: Mapping[str, Any], seq: int) -> None:
        msg = message_of(ev)
        if msg is None:
            self.skipped += 1
            return
        source = msg.get("source")
        if source is not None and not (isinstance(source, dict) and source.get("kind") == "user"):
            if isinstance(source, dict) and source.get("form") == "relay":
                self._relayed(message_text(msg), seq)
            return  # plugin-injected context is not the user's voice
        text = message_text(msg).strip()
        inner = user_text(text) if text and not _INJECTED.fullmatch(text) else None
        if inner and inner != text and inner in text:  # a template around the user's words
            self.key_names.harness(text.replace(inner, " "))
        if not inner:
            return  # injected output or a harness template: not a request
        self.key_names.said(seq, redact(inner).text, user=True)
        # An ask is the work of its request: the user's next request takes its place (what is
        # left open of it, the assistant's open work and the todo list say).
        # (Not counted as retired: nothing declared them done; the request moved on.)
        for aid in sorted(self.asks):
            self._remove(aid)
        self.asks.clear()
        slot = _cut(_fold(inner), self.limits.text)
        if not self.objective_set:
            self.objective_set = True
            self.objective = Anchor(
                id="objective", kind="objective", value=slot, authority="normative", sources=(seq,)
            )
        self.request = Anchor(
            id="request", kind="objective", value=slot, authority="normative", sources=(seq,)
        )
        if not is_filler(inner):  # "go ahead", "thanks": no request to keep
            self._request(replace(self.request, id=f"request:{seq}"))

    def _relayed(self, text: str, seq: int) -> None:
        """A harness relayed the output of an action the assistant told in its text: the
        result of the call that action stands for."""
        call = self.told.relayed()
        if call is not None:
            cid = f"told-{seq}"
            self.calls[cid] = (call[0], dict(call[1]))
            self._result(cid, text, False, seq)

    def _request(self, a: Anchor) -> None:
        """Keep every request the user made, as a compaction summary lists all user messages:
        a short ask ("make it slower", "reply in Russian") is often the one the work turns
        on, and the kernel reads no rule in it. The same words again refresh the earlier
        one; over the cap the oldest after the first goes."""
        same = next((i for i, r in enumerate(self.requests) if r.value == a.value), None)
        if same is not None:
            old = self.requests.pop(same)
            a = replace(a, sources=_merge_sources(old.sources, a.sources, self.limits.sources))
        self.requests.append(a)
        if len(self.requests) > self.limits.requests:
            del self.requests[1]
            self._drop("requests")

    def system_message(self, ev: Mapping[str, Any], seq: int) -> None:
        # The system prompt is the surface's head, which no fold ever covers: the model keeps
        # reading it verbatim, so copying its sentences into every checkpoint is only noise
        # (a tool description's "must appear exactly once" is not the user's constraint). It
        # still grounds declared anchors that cite it (the authority gate).
        msg = message_of(ev)
        if msg is None:
            self.skipped += 1
        else:
            self.key_names.harness(message_text(msg))  # its names are the harness's

    def assistant_message(self, ev: Mapping[str, Any], seq: int) -> None:
        msg = message_of(ev)
        if msg is None:
            self.skipped += 1
            return
        content = msg.get("content")
        called = False
        code: list[str] = []
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "tool-call":
                called = True
                cid, name = block.get("id"), block.get("name")
                if isinstance(cid, str) and isinstance(name, str):
                    self.calls.setdefault(cid, (name, _arguments(block.get("arguments"))))
                    self.outlines.said(json.dumps(block.get("arguments"), default=str))
                code += call_words(_arguments(block.get("arguments")))
        text = redact(message_text(msg)).text
        self.told.told("" if called else text)
        self.outlines.said(text)
        self.key_names.said(seq, text, code=[redact(c).text for c in code])
        self._statements(text, seq)

    def _statements(self, text: str, seq: int) -> None:
        """Keep the text's specific statements (``ctxsdk.session.statements``); the same
        words again add a source. Bounded: past the cap the oldest goes (a finding is
        chosen at the end)."""
        for st in statements(text):
            norm = _norm(st.text)
            old = self.statements.pop(norm, None)
            sources = (seq,) if old is None else _merge_sources(old[0], (seq,), 2)
            self.statements[norm] = (sources, st)
        while len(self.statements) > _MAX_STATEMENTS:
            del self.statements[next(iter(self.statements))]

    def findings(self) -> tuple[Anchor, ...]:
        """The statements that together name the most of what the session keeps naming
        (``ctxsdk.session.select_statements``), unless the state already holds their words."""
        said = {norm for _, norm in self.texts}
        found = [
            (sources[-1], st) for norm, (sources, st) in self.statements.items() if norm not in said
        ]
        sources_of = {st.text: sources for sources, st in self.statements.values()}
        return tuple(
            Anchor(
                id=f"finding:{seq}:{_cut(_norm(st.text), 80)}",
                kind="finding",
                value=_cut(st.text, self.limits.text),
                authority="hypothesis",
                sources=sources_of[st.text],
            )
            for seq, st in select_statements(
                found, self.limits.findings_cap(len(found)), room=self.limits.findings
            )
        )

    def files(self) -> tuple[Anchor, ...]:
        """The key files' outlines (``_holds``): derived at the end, never heads."""
        return tuple(
            Anchor(
                id=f"file:{path}",
                kind="artifact",
                value=line,
                authority="procedural",
                sources=seqs,
            )
            for path, line, seqs in self.outlines.lines(self.limits.files, self.limits.text)
        )

    def names(self, known: str) -> tuple[Anchor, ...]:
        """The names the conversation keeps naming (``_key_names``), none the rest of the
        state (``known``, its lines) already shows: derived at the end, never heads."""
        return tuple(
            Anchor(
                id=f"names:{n}",
                kind="finding",
                value=line,
                authority="hypothesis",
                sources=_merge_sources((), seqs, self.limits.sources),
            )
            for n, (line, seqs) in enumerate(
                self.key_names.lines(self.limits.names, self.limits.text, known), 1
            )
        )

    def rules(self) -> tuple[Anchor, ...]:
        """The project's rules (``_project_rules``): derived at the end, never heads."""
        return tuple(
            Anchor(
                id=f"rule:{r.path}:{_cut(_norm(r.text), 80)}",
                kind="constraint",
                value=f"{r.path}: {r.text}",
                authority=r.authority,
                sources=r.seqs,
            )
            for r in self.project_rules.lines(self.limits.rules, self.limits.text)
        )

    def tool_call(self, ev: Mapping[str, Any]) -> None:
        data = ev.get("data")
        if not isinstance(data, Mapping):
            self.skipped += 1
            return
        cid, name = data.get("callId"), data.get("name")
        if isinstance(cid, str) and isinstance(name, str):
            self.calls[cid] = (name, _arguments(data.get("arguments")))

    def tool_result(self, ev: Mapping[str, Any], seq: int) -> None:
        msg = message_of(ev)
        content = msg.get("content") if msg is not None else None
        if not isinstance(content, list):
            self.skipped += 1
            return
        source = msg.get("source") if msg is not None else None
        fallback = source.get("callId") if isinstance(source, dict) else None
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool-result":
                cid = block.get("toolCallId")
                cid = cid if isinstance(cid, str) and cid else fallback
                is_error = block.get("isError") is True or block.get("is_error") is True
                self._result(str(cid or f"seq-{seq}"), message_text(block), is_error, seq)

    def _result(self, cid: str, text: str, is_error: bool, seq: int) -> None:
        name, args = self.calls.get(cid, ("tool", {}))
        if harness_note(text):
            return  # cancelled, denied, a sibling's error: no verdict on the call itself
        running = _RUNNING.search(text[:400])
        if running is not None:
            self.running[int(running.group(1))] = (name, dict(args))
            return  # still running (Codex): its output and verdict come with a later poll
        polled = self.running.get(args.get("session_id"))
        if polled is not None:  # a poll (``write_stdin``) stands for the command it polls
            name, args = polled
        identity = _call_key(name, args)
        command = call_command(args)
        width = self.limits.text
        if not is_error and name.lower() in _DELEGATES:
            self._statements(_report(redact(text).text), seq)  # a sub-agent's findings
        if is_error and command is not None and _explores(command):
            return  # a search that found nothing, a listing of a missing path: no failure
        if is_error:
            self.failed_edits.update(written_paths(name, args))
            fid = f"failure:{cid}"
            line = run_outcome(text, True).error or first_line(text, width) or "error"
            value = f"{name}: {line}"
            self._failure(fid, f"failure/tool/{cid}", value, (identity, (name, command)), seq)
            return
        verdict = None
        if command is not None and not _explores(command):
            verdict = run_outcome(text)
            for key, value in runtime_versions(text):  # a failed run's header says it too
                self._project_value(key, value, seq)
        if verdict is not None and verdict.failed:
            fid = f"failure:{identity}"
            line = verdict.error or first_line(text, width) or "failed"
            value = _cut(f"{identity}: {line}", width)
            self._failure(fid, f"failure/cmd/{identity}", value, (identity, (name, command)), seq)
            return
        # A success: it verifies the open failures of the same call, or of a command it
        # covers (run again with options, or as part of a broader run: tool evidence either
        # way).
        done = (name, command)
        for fid in [
            f
            for f, (ident, failed) in self.identity_of.items()
            if ident == identity or _reruns(done, failed)
        ]:
            self.verify(fid)
        proof = pass_line(text) if verdict is not None else None
        if proof is not None:
            self.declare(
                Anchor(
                    id=f"evidence:{identity}",
                    kind="evidence",
                    value=_cut(f"{identity}: {proof}", width),
                    authority="empirical",
                    sources=(seq,),
                ),
                auto=True,
            )
        self._holds(name, args, command, text, seq)
        for path in written_paths(name, args):
            # A re-edit declares the same id: its head is refreshed, never superseded; an
            # edit that only removed lines keeps the line an earlier edit added.
            value = _written(path, command, args)
            old = self.active.get(f"artifact:{path}")
            if value == path and old is not None:
                value = str(old.value)
            self.declare(
                Anchor(
                    id=f"artifact:{path}",
                    kind="artifact",
                    state_key=f"file/{path}",
                    value=_cut(value, width),
                    authority="procedural",
                    sources=(seq,),
                ),
                auto=True,
            )

    def _holds(
        self, name: str, args: Mapping[str, Any], command: str | None, text: str, seq: int
    ) -> None:
        """What a successful call shows of a file: the text an edit tool wrote into it, or
        what a read printed of it; a manifest's (or npm's banner's) package and scripts are
        project facts."""
        if "\nOutput:\n" in text[:400]:
            text = text.split("\nOutput:\n", 1)[-1]  # a harness's header (Codex) is no content
        code, replaced = written_text(args)  # nothing for a shell: its here-documents below
        if code:
            for path in written_paths(name, args):
                self.outlines.add(path, code, seq, written=True, replaced=replaced)
        if command is not None:
            for path, body in heredoc_writes(command):
                self.outlines.add(path, body, seq, written=True)
            branch = branch_made(command)
            if branch is not None:
                self._project_value("branch", branch, seq)
            for path, lines in search_hits(command, redact(text).text).items():
                self.outlines.add(path, lines, seq, written=False)
        read = read_path(name, args)
        if read is not None:
            self.outlines.add(read, redact(text).text, seq, written=False)
        for key, value in manifest_facts(read or "", text):
            self._project_value(key, value, seq)

    def _failure(self, fid: str, key: str, value: str, call: _Call, seq: int) -> None:
        self.declare(
            Anchor(
                id=fid,
                kind="failure",
                state_key=key,
                value=value,
                authority="empirical",
                failure_state="open",
                sources=(seq,),
            ),
            auto=True,
        )
        if fid in self.active:
            self.identity_of[fid] = call

    def todo_write(self, ev: Mapping[str, Any], seq: int) -> None:
        data = ev.get("data")
        todos = data.get("todos") if isinstance(data, Mapping) else None
        if not isinstance(todos, list):
            self.skipped += 1
            return
        open_ids: list[str] = []
        for item in todos:
            if not isinstance(item, dict) or not isinstance(item.get("content"), str):
                continue
            text = _fold(item["content"])
            if not text:
                continue
            if item.get("status") in ("pending", "in_progress"):
                aid = f"todo:{_cut(_norm(text), 80)}"
                open_ids.append(aid)
                anchor = Anchor(
                    id=aid,
                    kind="obligation",
                    value=_cut(text, self.limits.text),
                    authority="procedural",
                    sources=(seq,),
                )
                self.declare(anchor, auto=True, move=False)
        for aid in [i for i in self.active if i.startswith("todo:") and i not in open_ids]:
            self.verify(aid)  # completed, cancelled or gone from the list: retired

    # --- one event ---------------------------------------------------------------------------

    def event(self, ev: Mapping[str, Any], seq: int) -> None:
        self.seen[seq] = ev
        self.upto = seq
        if not _feeds(ev):
            return  # a replacement: narrative over events already reduced
        etype = ev["type"]
        found = self.read(ev) if etype != ANCHOR_EVENT else []
        if etype == ANCHOR_EVENT:
            self.anchor_op(ev, seq)
        elif etype == "user/message":
            self.user_message(ev, seq)
        elif etype == "system/message":
            self.system_message(ev, seq)
        elif etype == "assistant/message":
            self.assistant_message(ev, seq)
        elif etype == "tool/call":
            self.tool_call(ev)
        elif etype == "tool/result":
            self.tool_result(ev, seq)
        elif etype == "todo/write":
            self.todo_write(ev, seq)
        # compaction/summary and every other type: ignored (never narrative into state)
        self.facts(found)

    def read(self, ev: Mapping[str, Any]) -> list[Fact]:
        try:
            return self.reader.feed(ev)
        except Exception:  # the kernel never raises; if it did, the event gives no facts
            return []

    def finish(self) -> None:
        """What only the end of the log (so far) tells: project facts, errors never fixed,
        open work."""
        try:
            found = self.reader.finish()
        except Exception:
            found = []
        self.facts(found)

    def state(self) -> FoldState:
        faces: dict[str, list[Anchor]] = {f: [] for f in _FACE.values()}
        for a in self.active.values():
            faces[_FACE[a.kind]].append(a)
        heads = {k: self.active[i] for k, i in sorted(self.heads.items())}
        state = FoldState(
            objective=self.objective,
            current_request=self.request,
            requests=tuple(self.requests),
            constraints=tuple(faces["constraints"]),
            heads=MappingProxyType(heads),
            open_failures=tuple(faces["open_failures"]),
            open_obligations=tuple(faces["open_obligations"]),
            decisions=tuple(faces["decisions"]),
            evidence=tuple(faces["evidence"]),
            artifacts=tuple(faces["artifacts"]),
            findings=self.findings(),
            files=self.files(),
            rules=self.rules(),
            superseded=tuple(self.superseded),
            retired_count=self.retired,
            rejected=tuple(self.rejected),
            dropped=MappingProxyType(dict(sorted(self.dropped.items()))),
            skipped=self.skipped,
            upto=self.upto,
        )
        known = "\n".join(line for _, lines in state.lines() for line in lines)
        return replace(state, names=self.names(known))


def _ordered(events: Iterable[Any], upto: int | None) -> tuple[list[Mapping[str, Any]], int]:
    """The well-formed events in seq order (up to ``upto``), and how many were malformed."""
    good: list[tuple[int, int, Mapping[str, Any]]] = []
    bad = 0
    for n, ev in enumerate(events):
        seq = ev.get("seq") if isinstance(ev, Mapping) else None
        if (
            not isinstance(ev, Mapping)
            or not isinstance(ev.get("type"), str)
            or not isinstance(seq, int)
            or isinstance(seq, bool)
            or seq < 0
        ):
            bad += 1
            continue
        if upto is None or seq <= upto:
            good.append((seq, n, ev))
    good.sort(key=lambda t: (t[0], t[1]))
    out: list[Mapping[str, Any]] = []
    last = -1
    for seq, _, ev in good:
        if seq == last:
            bad += 1  # a repeated seq: the first one stands
            continue
        out.append(ev)
        last = seq
    return out, bad


def reduce_events(
    events: Iterable[Mapping[str, Any]],
    upto: int | None = None,
    limits: StateLimits | None = None,
) -> FoldState:
    """The current state of raw DSH events (``session.raw_events``), seqs ``<= upto`` only
    when given. Pure and deterministic: the same events give an equal state (and an equal
    ``to_json()``). Never raises on odd events; see the module docstring for every rule."""
    r = _Reducer(limits if limits is not None else StateLimits())
    ordered, r.skipped = _ordered(events, upto)
    for ev in ordered:
        seq = ev["seq"]
        assert isinstance(seq, int)
        try:
            r.event(ev, seq)
        except (TypeError, ValueError, KeyError, AttributeError):
            r.skipped += 1  # an odd shape the checks above did not foresee: skipped, counted
    r.finish()
    return r.state()


# --- metrics ------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class StateMetrics(Rendered):
    """The seed's state correctness metrics (never combined into one scalar).

    ``alr``: expected active anchors missing / expected (0.0 when none is expected).
    ``ssr``: heads that are not active / heads (0.0 without heads).
    ``provenance_coverage``: anchors whose every source seq exists in the log and is not a
    replacement, a summary or an anchor event / anchors (1.0 without anchors)."""

    alr: float
    ssr: float
    provenance_coverage: float
    missing: tuple[str, ...] = ()
    unsourced: tuple[str, ...] = ()
    expected: int = 0
    heads: int = 0
    anchors: int = 0

    def to_json(self) -> JsonDict:
        return {
            "alr": self.alr,
            "ssr": self.ssr,
            "provenanceCoverage": self.provenance_coverage,
            "missing": list(self.missing),
            "unsourced": list(self.unsourced),
            "expected": self.expected,
            "heads": self.heads,
            "anchors": self.anchors,
        }

    def _text_(self) -> str:
        out = [
            f"ALR {self.alr:.3f} ({len(self.missing)}/{self.expected} expected missing) · "
            f"SSR {self.ssr:.3f} ({self.heads} heads) · "
            f"provenance {self.provenance_coverage:.3f} ({self.anchors} anchors)"
        ]
        if self.missing:
            out.append("missing: " + ", ".join(self.missing))
        if self.unsourced:
            out.append("without valid provenance: " + ", ".join(self.unsourced))
        return "\n".join(out)


def state_metrics(
    state: FoldState,
    events: Iterable[Mapping[str, Any]],
    expected_active: Iterable[str] = (),
) -> StateMetrics:
    """ALR, SSR and provenance coverage of ``state`` against the raw ``events`` it came from."""
    by_seq: dict[int, Mapping[str, Any]] = {}
    for ev in events:
        seq = ev.get("seq") if isinstance(ev, Mapping) else None
        if isinstance(seq, int) and not isinstance(seq, bool):
            by_seq.setdefault(seq, ev)
    expected = list(dict.fromkeys(expected_active))
    missing = tuple(i for i in expected if state.anchor(i) is None)
    heads = list(state.heads.values())
    stale = sum(1 for a in heads if a.lifecycle != "active")
    anchors = [*state.active(), *state.superseded]

    def sourced(a: Anchor) -> bool:
        def ok(seq: int) -> bool:
            ev = by_seq.get(seq)
            return (
                ev is not None
                and _feeds(ev)
                and ev.get("type") not in (ANCHOR_EVENT, "compaction/summary")
            )

        return bool(a.sources) and all(ok(s) for s in a.sources)

    unsourced = tuple(a.id for a in anchors if not sourced(a))
    return StateMetrics(
        alr=len(missing) / len(expected) if expected else 0.0,
        ssr=stale / len(heads) if heads else 0.0,
        provenance_coverage=1.0 - len(unsourced) / len(anchors) if anchors else 1.0,
        missing=missing,
        unsourced=unsourced,
        expected=len(expected),
        heads=len(heads),
        anchors=len(anchors),
    )
