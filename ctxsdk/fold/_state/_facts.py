"""The facts of the log as anchors: the reducer's layer that maps what the fact kernel reads
(instructions, decisions, settings, project facts, errors fixed, the run's settings, open
work) to constraints, obligations, decisions and heads.

Automatic extraction (so a real log with no anchor events still has a useful state). The
reducer keeps no sentence splitter and no cue table of its own: it feeds every append-origin
event to the fact kernel's ``FactReader`` (``ctxsdk.session``) and maps its facts to
anchors; at the end of the events reduced it reads ``FactReader.finish()`` (project facts,
open work). Every anchor cites the fact's source seq.

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
- the run (the kernel's harness facts, scope "this run"): a task template's numbered rules
  (SWE-agent's tips, mini-swe-agent's "DO NOT MODIFY: Tests") are constraints, authority
  normative, cited at the template's message, which folds away like any other; the same
  rules in the system prompt give none (the model reads it verbatim). The run's settings (the
  model of each ``request/header``, Aider's banner with its edit format, Codex's environment
  context: sandbox, approval policy, shell) are heads ``run/<key>`` (authority procedural;
  a model switch retires the earlier model, which is not kept in ``superseded``: a long
  run's switches must not push the work's earlier values out of that bounded list), shown as
  ``FoldState.run``, apart from the work's ``values``; a checkpoint copies only those a
  message it folds told the model (``_checkpoint.told_run``: Codex's environment context),
  never a request header's model or an importer's banner, which the model never read.
- open work the assistant's last text names ⇒ an open obligation (authority hypothesis).
  Its outcome claims are narrative and never state.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from ...session import Fact
from ...session.kernel import RUN_SCOPE, instruction_kind, run_value
from ._anchors import Anchor, Value, _cut, _fold, _norm, statement_key
from ._explicit import _ExplicitAnchors
from ._roots import _feeds

_ASK_WORDS = 2  # words an ask needs to be an obligation ("Please." alone is not)


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


class _FactAnchors(_ExplicitAnchors):
    """The reducer's layer that turns the fact kernel's facts into anchors."""

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
        if not key:  # one of the things the user says holds: a head of its own
            self._project_value("", f.text, seq, state_key=statement_key(f.text))
            return
        self._project_value(key, f.text if not f.value else f.value, seq)

    def _project_value(self, key: str, text: str, seq: int, *, state_key: str = "") -> None:
        """The head of ``project/<key>`` (or of ``state_key``); the same value again changes
        nothing."""
        value = _cut(text, self.limits.text)
        state_key = state_key or f"project/{_slot(key)}"
        head_id = self.heads.get(state_key)
        head = self.active.get(head_id) if head_id is not None else None
        if head is not None and head.value == value:
            return
        self.declare(
            Anchor(
                id=f"project:{state_key.removeprefix('project/')}@{seq}",
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
