"""The state's data: an ``Anchor`` (one item, with the raw seqs that ground it), the
vocabulary of kinds, authorities and failure states, the per-face caps (``StateLimits``), and
the small text helpers every part of the reducer cuts and compares anchor text with.

Everything else in the package builds on these, so they import nothing of it.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ...errors import InvalidArgument

ANCHOR_EVENT = "ctxsdk/fold-anchor"
RUN_KEY_PREFIX = "run/"  # the heads of the run's settings (the harness's, not the work's)
# A project fact said without a key ("there is existing logic for scanning history"): none
# replaces another, so each distinct statement is a head of its own, keyed by a digest of its
# words (``statement_key``) and shown as its words alone.
STATEMENT_KEY_PREFIX = "project/fact:"
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


def _seqs_text(sources: Sequence[int]) -> str:
    return ("seq " if len(sources) == 1 else "seqs ") + ", ".join(str(s) for s in sources)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def _fold(text: str) -> str:
    return " ".join(text.split())


def _norm(text: str) -> str:
    return _fold(text).lower().rstrip(" .!;:")


def statement_key(text: str) -> str:
    """The state key of an unkeyed project fact: the same words (as ``_norm`` compares them)
    give the same key, so a restatement refreshes its head instead of adding one."""
    digest = hashlib.sha256(_norm(text).encode("utf-8", "surrogatepass")).hexdigest()
    return STATEMENT_KEY_PREFIX + digest[:12]


def _merge_sources(old: Sequence[int], new: Sequence[int], cap: int) -> tuple[int, ...]:
    seqs = sorted(set(old) | set(new))
    return tuple(seqs if len(seqs) <= cap else [seqs[0], *seqs[len(seqs) - cap + 1 :]])


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
    commands: int = 12  # the latest commands the work ran that act (not reads), derived
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
