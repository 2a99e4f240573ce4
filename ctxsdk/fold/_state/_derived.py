"""The groups derived at the end of a reduce, never heads: the findings chosen from the
assistant's statements, the key files' outlines, the key names, the project's rules.

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
- findings (``ctxsdk.session.kernel.statements``): the assistant's text statements (and those of
  a sub-agent's report, the result of a ``Task``/``delegate_to_agent`` call, without the
  harness's id and usage lines; a JSON report read as its text; never reasoning) that name
  something specific (a path, version, code name, code span, quoted literal, quantity),
  not plans, questions or acknowledgements, nor the words of an item already kept ⇒ kind
  ``finding``, authority hypothesis, at most ``limits.findings`` (a long session's cap
  grows as sqrt(findings × statements), up to ``limits.growth`` times, for
  statements that name something: plain ones fill no more than ``limits.findings``), chosen
  at the end for what the session keeps naming (``select_statements``), in seq order.
  Derived only: never declared, never a head, never evidence. Read with the kernel's strict
  reading (``statements(strict=True)``): a verdict, a led plan, a sentence presenting a
  block, a plain step or advice is no finding.
- commands run (``_calls._acts``): the latest distinct commands the work ran that act (run,
  test, build, install, change a file in place, talk to a server: a CTF's ``curl -F …``, a
  revert by ``sed -i``), not reads, searches, housekeeping (``rm``, ``mkdir``) or writes
  from a here-document or a patch (the files' groups show those), none the rest of the
  state already shows, at most ``limits.commands``, in the order run; a checkpoint shows
  them with what the other derived groups leave. Derived only, never heads.
"""

from __future__ import annotations

from ...session.kernel import select_statements, statements
from ._anchors import Anchor, _cut, _fold, _merge_sources, _norm
from ._calls import _acts
from ._facts import _FactAnchors

_MAX_STATEMENTS = 4000  # the assistant's statements a reduce keeps to choose findings from
_MAX_COMMANDS = 256  # the distinct commands a reduce keeps (the latest are shown)
_COMMAND_WIDTH = 160  # characters of a command shown


class _DerivedGroups(_FactAnchors):
    """The reducer's layer that collects statements and derives the end-of-log groups."""

    def _statements(self, text: str, seq: int) -> None:
        """Keep the text's specific statements (``ctxsdk.session.kernel.statements``); the same
        words again add a source. Bounded: past the cap the oldest goes (a finding is
        chosen at the end)."""
        for st in statements(text, strict=True):
            norm = _norm(st.text)
            old = self.statements.pop(norm, None)
            sources = (seq,) if old is None else _merge_sources(old[0], (seq,), 2)
            self.statements[norm] = (sources, st)
        while len(self.statements) > _MAX_STATEMENTS:
            del self.statements[next(iter(self.statements))]

    def _command(self, command: str, seq: int) -> None:
        """A command the work ran that acts (``_calls._acts``): kept, latest last, bounded."""
        if not _acts(command):
            return
        text = _fold(command)
        old = self.commands.pop(text, ())
        self.commands[text] = _merge_sources(old, (seq,), 2)
        while len(self.commands) > _MAX_COMMANDS:
            del self.commands[next(iter(self.commands))]

    def commands_run(self, known: str) -> tuple[Anchor, ...]:
        """The latest commands the work ran that act, none the rest of the state (``known``)
        already shows, at most ``limits.commands``, in the order run: derived, never heads."""
        out: list[Anchor] = []
        for text, seqs in reversed(self.commands.items()):
            if len(out) >= self.limits.commands:
                break
            if _cut(text, 60) in known:
                continue
            out.append(
                Anchor(
                    id=f"command:{seqs[-1]}",
                    kind="evidence",
                    value=_cut(text, _COMMAND_WIDTH),
                    authority="procedural",
                    sources=seqs,
                )
            )
        return tuple(reversed(out))

    def findings(self) -> tuple[Anchor, ...]:
        """The statements that together name the most of what the session keeps naming
        (``select_statements``, session kernel), unless the state already holds their words."""
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
