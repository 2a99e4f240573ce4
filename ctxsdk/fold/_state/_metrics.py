"""The seed's state correctness metrics (ALR, SSR, provenance coverage) of a state against
the raw events it came from; a benchmark's measure, never part of a reduce.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..._display import Rendered
from ._anchors import ANCHOR_EVENT, Anchor, JsonDict
from ._fold_state import FoldState
from ._roots import _feeds


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
