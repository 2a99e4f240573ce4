"""``FoldState``: the bounded current state a reduce returns (its faces, its JSON) and how it
shows: the grouped lines a checkpoint carries, its text and HTML.

Kept apart from the reducer so that what the state is and how it reads can be seen without
the rules that fill it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ..._display import Rendered, badge, esc, kv, plural, section, table
from ._anchors import RUN_KEY_PREFIX, STATEMENT_KEY_PREFIX, Anchor, JsonDict, _cut, _seqs_text

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
    ("commands", "Commands run (the latest)"),
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
    commands: tuple[Anchor, ...] = ()  # the latest commands the work ran that act (derived)
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
            self.commands,
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
            "commands": many(self.commands),
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
            said = (a.state_key or "").startswith(STATEMENT_KEY_PREFIX)
            body = str(a.value) if said else f"{a.state_key} = {a.value}"
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
            "commands": self.commands,
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
