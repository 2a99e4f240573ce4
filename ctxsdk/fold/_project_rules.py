"""The project's rules for agents, as the state shows them: bounded, file by file.

The kernel reads the rules of the project's instruction files (AGENTS.md, CLAUDE.md,
CONVENTIONS.md …: ``ctxsdk.session.kernel.rule_file``) wherever the log holds them: a harness's
injected copy, a read's output, what the session wrote into one. A resumed agent must keep
honouring them after the message that held them folds away, and a teammate wants what the
session added. The state shows them apart from the user's constraints ("Project rules"),
each line naming its file; at most ``cap`` lines in all, shared among the files in the order
they were met; within a file what the session wrote first (its own additions), then what it
read, each in the order written.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..session import Fact
from ..session.kernel import rule_file

__all__ = ["ProjectRules", "RuleLine"]


@dataclass(slots=True)
class _Rule:
    text: str
    seqs: list[int]
    written: bool  # the session wrote it (an edit or a created file), not only read it


@dataclass(frozen=True, slots=True)
class RuleLine:
    """One shown rule: its file, its text, the seqs that ground it, and who stated it."""

    path: str
    text: str
    seqs: tuple[int, ...]
    authority: str  # "decision" (the session wrote it), "normative" (the harness loaded it),
    # "procedural" (a read's output)


@dataclass(slots=True)
class ProjectRules:
    """The rules met so far, per file in the order the files were met."""

    files: dict[str, list[_Rule]] = field(default_factory=dict)
    roles: dict[tuple[str, str], str] = field(default_factory=dict)  # (file, text) -> role

    def add(self, f: Fact) -> bool:
        """Keep ``f`` if it is a project rule (returns whether it was one)."""
        path = rule_file(f)
        if path is None:
            return False
        rules = self.files.setdefault(path, [])
        key = " ".join(f.text.casefold().split())
        for r in rules:
            if " ".join(r.text.casefold().split()) == key:
                if f.source.seq not in r.seqs:
                    r.seqs.append(f.source.seq)
                r.written = r.written or f.source.role == "assistant"
                return True
        rules.append(_Rule(f.text, [f.source.seq], f.source.role == "assistant"))
        self.roles[(path, key)] = f.source.role
        return True

    def lines(self, cap: int, width: int) -> list[RuleLine]:
        """At most ``cap`` lines: each file its share (the files met first get the rest),
        the session's own additions first, each rule cut to ``width`` characters."""
        if not self.files or cap < 1:
            return []
        paths = list(self.files)[:cap]
        share, extra = divmod(cap, len(paths))
        out: list[RuleLine] = []
        for n, path in enumerate(paths):
            rules = self.files[path]
            ordered = [r for r in rules if r.written] + [r for r in rules if not r.written]
            for r in ordered[: share + (1 if n < extra else 0)]:
                text = r.text if len(r.text) <= width else r.text[: width - 1] + "…"
                role = self.roles.get((path, " ".join(r.text.casefold().split())), "tool")
                authority = (
                    "decision"
                    if r.written
                    else ("normative" if role in ("system", "user") else "procedural")
                )
                out.append(RuleLine(path, text, tuple(sorted(r.seqs)[:8]), authority))
        return out
