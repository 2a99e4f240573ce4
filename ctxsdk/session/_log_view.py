"""``LogView``: a read-only view of what the validating replay learned about a log.

Engines, views and tools read the structure of a log through this view (``Session.index``):
turn and step spans, which node replaced which, what a replacement covers, the decoded
sources of each event, the seqs of titles, headers and compactions. The replay's own
``LogIndex`` is mutable bookkeeping and stays private to the base.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar

from ..errors import InvalidArgument
from ._replay import LogIndex

__all__ = ["LogView", "PendingCallView", "TurnRange"]

_V = TypeVar("_V")


@dataclass(frozen=True)
class TurnRange:
    """One turn's span: ``steps`` are (step, start_seq, end_seq or None while open)."""

    turn: int
    start_seq: int
    end_seq: int | None
    reason: Mapping[str, Any] | None
    steps: tuple[tuple[int, int, int | None], ...]


@dataclass(frozen=True)
class PendingCallView:
    """A tool call the log has not answered yet."""

    call_id: str
    name: str
    assistant_seq: int
    call_seq: int | None


class _ReadOnly(Mapping[int, _V]):
    """A read-only mapping over one of the index's tables, each value read through
    ``convert`` (seq lists come out as tuples; nothing is copied up front)."""

    __slots__ = ("_convert", "_d")

    def __init__(self, d: Mapping[int, Any], convert: Callable[[Any], _V]) -> None:
        self._d = d
        self._convert = convert

    def __getitem__(self, key: int) -> _V:
        return self._convert(self._d[key])

    def __iter__(self) -> Iterator[int]:
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def __contains__(self, key: object) -> bool:
        return key in self._d


def _same(value: int) -> int:
    return value


class _Seqs:
    """A read-only attribute: one of the index's seq lists, as a tuple."""

    def __init__(self, field: str, doc: str) -> None:
        self._field = field
        self.__doc__ = doc

    def __get__(self, view: LogView, owner: type | None = None) -> tuple[int, ...]:
        return tuple(getattr(view._ix, self._field))


class LogView:
    """Read-only: the structure of one session's log (``Session.index``)."""

    def __init__(self, index: LogIndex) -> None:
        self._ix = index

    # --- the surface -----------------------------------------------------------------------

    @property
    def version(self) -> int:
        return self._ix.version

    def surface_seqs(self) -> tuple[int, ...]:
        """The current surface node seqs, in model order."""
        return tuple(self._ix.surface.nodes())

    def on_surface(self, seq: int) -> bool:
        return seq in self._ix.surface

    @property
    def generation(self) -> int:
        """How many replace ops the surface has seen."""
        return self._ix.surface.generation

    @property
    def replaced(self) -> Mapping[int, tuple[int, ...]]:
        """Replacement seq -> the surface nodes it took the place of, in order."""
        return _ReadOnly(self._ix.replaced, tuple)

    @property
    def shadowed_by(self) -> Mapping[int, int]:
        """Node seq -> the replacement that took its place."""
        return _ReadOnly(self._ix.shadowed_by, _same)

    def originals(self, seq: int) -> tuple[int, ...]:
        """The nodes replacement ``seq`` shadowed (empty when ``seq`` replaced nothing)."""
        return tuple(self._ix.replaced.get(seq, ()))

    def origin(self, seq: int) -> int:
        """The first original event under a (possibly nested) replacement."""
        replaced = self._ix.replaced
        while seq in replaced:
            seq = replaced[seq][0]
        return seq

    def covered(self, seq: int) -> tuple[int, ...]:
        """Every original event a (possibly nested) replacement covers, in order; a node
        that replaced nothing covers itself."""
        replaced = self._ix.replaced
        out: list[int] = []
        stack = [seq]
        while stack:
            s = stack.pop()
            if s in replaced:
                stack.extend(reversed(replaced[s]))
            else:
                out.append(s)
        return tuple(out)

    @property
    def source_seqs(self) -> Mapping[int, tuple[int, ...]]:
        """Event seq -> its decoded ``sourceEventSeqs``."""
        return _ReadOnly(self._ix.source_seqs, tuple)

    # --- turns -----------------------------------------------------------------------------

    @cached_property
    def turns(self) -> tuple[TurnRange, ...]:
        return tuple(
            TurnRange(t.turn, t.start_seq, t.end_seq, t.reason, tuple(t.steps))
            for t in self._ix.turns
        )

    @cached_property
    def _turn_starts(self) -> list[int]:
        return [t.start_seq for t in self._ix.turns]

    def turn_of(self, seq: int) -> TurnRange | None:
        """The turn whose span holds ``seq`` (None between turns)."""
        if isinstance(seq, bool) or not isinstance(seq, int):
            raise InvalidArgument(f"a seq is an event's position in the log (an int), not {seq!r}")
        i = bisect.bisect_right(self._turn_starts, seq) - 1
        if i < 0:
            return None
        t = self.turns[i]
        return t if t.end_seq is None or seq <= t.end_seq else None

    @property
    def last_turn(self) -> int:
        return self._ix.last_turn

    @property
    def open_turn(self) -> int | None:
        return self._ix.open_turn

    @property
    def open_step(self) -> int | None:
        return self._ix.open_step

    @property
    def pending_calls(self) -> tuple[PendingCallView, ...]:
        """Tool calls not answered yet (a log that ends inside a step)."""
        return tuple(
            PendingCallView(p.call_id, p.name, p.assistant_seq, p.call_seq)
            for p in self._ix.pending.values()
        )

    # --- where things are ------------------------------------------------------------------

    @property
    def title_seq(self) -> int | None:
        return self._ix.title_seq

    @property
    def descriptor_seq(self) -> int | None:
        return self._ix.descriptor_seq

    header_seqs = _Seqs("header_seqs", "Seqs of the ``request/header`` events.")
    context_seqs = _Seqs("context_seqs", "Seqs of the ``request/context`` events.")
    end_seed_seqs = _Seqs("end_seed_seqs", "Seqs of the ``session/end-seed`` markers.")
    compaction_seqs = _Seqs("compaction_seqs", "Seqs of the ``compaction/*`` events.")
    unknown_seqs = _Seqs("unknown_seqs", "Seqs of ignorable events of unknown types.")

    def __repr__(self) -> str:
        ix = self._ix
        return (
            f"LogView(v{ix.version}, {len(ix.surface)} surface nodes, {len(ix.turns)} turns, "
            f"{len(ix.replaced)} replacements)"
        )
