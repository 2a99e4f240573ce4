"""What the fact kernel returns: one ``Fact`` per thing worth remembering, and ``Facts``.

A fact is typed (``kind``), says what it is in one readable line (``text``) and carries its
source (session, seq, role and the exact quote). Settings and project facts also carry a
normalized ``key`` (one key per setting however it is phrased: "the request timeout is now
60 seconds" and "set the request timeout to 60 seconds" share ``request timeout``), a
``value`` with its ``unit``, and a polarity (``negated``). Fold, Memory and Merge read these
records; none of them splits sentences or keeps cue tables of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..._display._protocol import Rendered

if TYPE_CHECKING:
    import polars as pl

__all__ = ["FACT_KINDS", "RUN_SCOPE", "Fact", "FactKind", "FactSource", "Facts"]

FactKind = Literal[
    "instruction",  # the user's imperatives, prohibitions and corrections ("don't ...")
    "preference",  # how the user likes things ("be concise", "I prefer pnpm")
    "decision",  # a choice made, with its reason and the alternatives rejected
    "project",  # how to build/test/run, language, framework, package manager, key files
    "error",  # an error met, and (``fix``) the change that made the failing step pass
    "setting",  # a named value with unit and polarity: key -> value
    "outcome",  # what the session achieved, at its end
    "open_work",  # what was left to do at the end
]
FACT_KINDS: tuple[FactKind, ...] = (
    "instruction",
    "preference",
    "decision",
    "project",
    "error",
    "setting",
    "outcome",
    "open_work",
)

QUOTE_MAX = 240
# The scope of what holds for one run of a harness (its model, its template's rules), not
# for the project: another session's run may differ without contradicting it.
RUN_SCOPE = "this run"


@dataclass(frozen=True, slots=True)
class FactSource:
    """Where a fact was read: the session, the event seq, who said it and the exact words."""

    session: str
    seq: int
    role: str  # "user" | "assistant" | "tool" | "system"
    quote: str  # the exact source span, cut to QUOTE_MAX characters


@dataclass(frozen=True, slots=True, kw_only=True)
class Fact:
    """One thing worth remembering from a session (see the module docstring)."""

    kind: FactKind
    text: str  # one line a teammate would write down
    source: FactSource
    key: str | None = None  # normalized slot name ("request timeout", "test command")
    value: str | None = None  # the value as said, original case ("60", "pnpm", "pytest -q")
    unit: str | None = None  # "seconds", "MB", "%" ... (normalized unit name)
    negated: bool = False  # polarity: "the API is not public" -> key "api", value "public"
    scope: str | None = None  # where it applies ("tests", "this repo", "always", RUN_SCOPE)
    reason: str | None = None  # why (decisions, errors' fixes)
    rejected: tuple[str, ...] = ()  # alternatives a decision turned down
    fix: str | None = None  # errors: the step that made the failing command pass
    evidence: tuple[int, ...] = ()  # other seqs that back it (the failing run, the passing run)

    @property
    def slot(self) -> str | None:
        """The state key a later fact of the same kind and key supersedes."""
        return f"{self.kind}/{self.key}" if self.key else None

    def row(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "text": self.text,
            "key": self.key,
            "value": self.value,
            "unit": self.unit,
            "negated": self.negated,
            "scope": self.scope,
            "reason": self.reason,
            "rejected": list(self.rejected),
            "fix": self.fix,
            "session": self.source.session,
            "seq": self.source.seq,
            "role": self.source.role,
            "quote": self.source.quote,
        }


@dataclass(frozen=True, slots=True)
class Facts(Rendered):
    """The facts of one log, in log order (``read_facts``, ``Session.facts()``)."""

    session: str
    facts: tuple[Fact, ...] = field(default=())

    def __len__(self) -> int:
        return len(self.facts)

    def __iter__(self) -> Iterator[Fact]:
        return iter(self.facts)

    def of(self, *kinds: FactKind) -> tuple[Fact, ...]:
        return tuple(f for f in self.facts if f.kind in kinds)

    def current(self) -> tuple[Fact, ...]:
        """The facts still in force: for each slot only the latest one (a later value of the
        same setting supersedes the earlier, whatever its polarity); facts without a slot all."""
        last: dict[str, int] = {}
        for i, f in enumerate(self.facts):
            if f.slot is not None:
                last[f.slot] = i
        return tuple(f for i, f in enumerate(self.facts) if f.slot is None or last[f.slot] == i)

    def to_polars(self) -> pl.DataFrame:
        import polars as pl

        from ..._display._protocol import shown_text

        rows = [f.row() for f in self.facts]
        for r in rows:
            for k in ("text", "quote", "value"):
                if isinstance(r[k], str):
                    r[k] = shown_text(r[k])
        schema: dict[str, Any] = {
            "kind": pl.String,
            "text": pl.String,
            "key": pl.String,
            "value": pl.String,
            "unit": pl.String,
            "negated": pl.Boolean,
            "scope": pl.String,
            "reason": pl.String,
            "rejected": pl.List(pl.String),
            "fix": pl.String,
            "session": pl.String,
            "seq": pl.Int64,
            "role": pl.String,
            "quote": pl.String,
        }
        return pl.DataFrame(rows, schema=schema)

    def __repr__(self) -> str:
        return f"Facts(session={self.session!r}, {len(self.facts)} facts)"

    def _text_(self) -> str:
        lines = [repr(self)]
        for kind in FACT_KINDS:
            group = self.of(kind)
            if not group:
                continue
            lines.append(f"{kind} ({len(group)})")
            for f in group:
                neg = "not " if f.negated else ""
                kv = f" [{f.key} = {neg}{f.value}{' ' + f.unit if f.unit else ''}]" if f.key else ""
                lines.append(f"  #{f.source.seq} {f.text}{kv}")
        return "\n".join(lines)

    def _html_(self) -> str:
        from ..._display._html import esc

        rows = []
        for f in self.facts:
            rows.append(
                f"<tr><td>{esc(f.kind)}</td><td>{esc(f.text)}</td><td>{esc(f.key or '')}</td>"
                f"<td>{esc(('not ' if f.negated else '') + (f.value or ''))}</td>"
                f"<td>#{f.source.seq} {esc(f.source.role)}</td></tr>"
            )
        head = "<tr><th>kind</th><th>fact</th><th>key</th><th>value</th><th>source</th></tr>"
        return f"<div><b>{esc(repr(self))}</b><table>{head}{''.join(rows)}</table></div>"
