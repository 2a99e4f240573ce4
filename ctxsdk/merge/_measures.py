"""A run's measurement is no belief: it belongs to the run that measured it.

The kernel keeps, beside the project's test command, what the last run counted (``test
count`` = 16 passed). A count is a result of one run at one state of the code, not a claim
sessions agree or disagree on: two sessions that ran the suite at different times and
counted 16 and 212 passed do not dispute anything. So a measurement claim is keyed per
session (``test count (624a4a58)``) and never votes against another session's; the block
leaves it out (the test command's line already says "last run: N passed"), and the slot
stays in ``result.slots`` with the reason.

Which keys are measurements is the kernel's vocabulary (``MEASURES``): the kernel gives no
mark of its own that a fact was counted from a run's output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..session.kernel import short_id
from ._claims import Claim

__all__ = ["MEASURED", "MEASURES", "measure_key", "scope_measures"]

MEASURES = frozenset({"test count"})
"""Kernel project-fact keys whose value a run's output counted."""

MEASURED = "a run's measurement (the test command's line shows the last run), not a belief"


def measure_key(key: str) -> bool:
    """Whether ``key`` is a measurement slot's key (``test count (624a4a58)``)."""
    return key.partition(" (")[0] in MEASURES


def scope_measures(claims: Sequence[Claim]) -> list[Claim]:
    """``claims`` with every measurement keyed by its session (see the module docs)."""
    return [
        replace(c, key=f"{c.key} ({short_id(c.source)})") if c.project and c.key in MEASURES else c
        for c in claims
    ]
