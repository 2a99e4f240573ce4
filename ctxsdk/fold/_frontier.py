"""The fold frontier: where the frozen checkpoints end and the open conversation begins.

Located from the current surface every time (identity, never a stored index): the system head
(leading system messages), then the frozen prefix — the checkpoints, which must sit side by
side right after the head — then the open nodes a leaf fold may take. A harness compaction
checkpoint (compaction-basic's, no fold mark) at the front counts as frozen too: it is
older history a leaf fold must not re-fold. A fold checkpoint anywhere after an open node
makes the frontier inconsistent, and leaf folds refuse until a root rebase repairs it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..session import Session
from ..session.kernel import read_marker

__all__ = ["CheckpointNode", "Frontier", "locate_frontier"]


@dataclass(frozen=True)
class CheckpointNode:
    """One frozen node on the surface: a fold checkpoint (``checkpoint_id`` set) or a harness
    compaction checkpoint (``checkpoint_id`` None, nothing to recall)."""

    seq: int
    position: int
    checkpoint_id: str | None
    mode: str


@dataclass(frozen=True)
class Frontier:
    """``head`` system nodes, then ``frozen`` (the checkpoints, in surface order), then the
    open nodes from ``first_open`` on. ``problem`` says why the frontier is inconsistent
    (a fold checkpoint after an open node), None when it is not."""

    head: int
    frozen: tuple[CheckpointNode, ...]
    first_open: int
    size: int
    problem: str | None = None
    stray_end: int | None = None  # past the last checkpoint found after an open node

    @property
    def consistent(self) -> bool:
        return self.problem is None

    @property
    def checkpoint_ids(self) -> tuple[str, ...]:
        return tuple(c.checkpoint_id for c in self.frozen if c.checkpoint_id is not None)

    @property
    def open_nodes(self) -> int:
        return self.size - self.first_open


def _checkpoint_of(event: Mapping[str, Any], seq: int, pos: int) -> CheckpointNode | None:
    mark = read_marker(event)
    if mark is None or event.get("surfaceOp") == "append":
        return None
    if mark.kind == "fold" and mark.mode in ("leaf", "root", "emergency"):
        return CheckpointNode(seq, pos, mark.checkpoint, mark.mode)
    if mark.kind == "compaction":  # a harness checkpoint: ours (basic) when it is stamped
        mode = "basic" if mark.checkpoint else "compaction"
        return CheckpointNode(seq, pos, mark.checkpoint, mode)
    return None


def locate_frontier(session: Session, seqs: Sequence[int] | None = None) -> Frontier:
    """The frontier of ``session``'s current surface (or of the surface ``seqs``)."""
    raws = session.raw_events
    nodes = list(session.index.surface_seqs() if seqs is None else seqs)
    head = 0
    while head < len(nodes) and raws[nodes[head]]["type"] == "system/message":
        head += 1
    frozen: list[CheckpointNode] = []
    pos = head
    while pos < len(nodes):
        cp = _checkpoint_of(raws[nodes[pos]], nodes[pos], pos)
        if cp is None:
            break
        frozen.append(cp)
        pos += 1
    problem, stray_end = None, None
    for later in range(pos, len(nodes)):
        cp = _checkpoint_of(raws[nodes[later]], nodes[later], later)
        if cp is not None and cp.checkpoint_id is not None and cp.mode != "basic":
            stray_end = later + 1
            problem = problem or (
                f"fold checkpoint {cp.checkpoint_id} (seq {cp.seq}) sits at surface position "
                f"{later}, after open node seq {nodes[pos]} at position {pos}: checkpoints must "
                "form a contiguous prefix after the system head; a root rebase repairs it"
            )
    return Frontier(head, tuple(frozen), pos, len(nodes), problem, stray_end)
