"""Time between sessions: an earlier session's word does not overrule a later session's.

The score weighs a value by its evidence (the user's words above a tool's above the
assistant's), and within one session a later fact supersedes an earlier one. Across
sessions evidence alone can hide a real disagreement: a user said PostgreSQL on Monday, and
on Tuesday another session's assistant found the database is MySQL. A demanding reader
wants both sides then, each with its evidence, not Monday's word as if nothing followed.

So a value the score outweighed stays in dispute when every session that states it ran
after every session that backs the winner (the sessions' spans of event times do not
overlap): the later sessions were not answered by the earlier one, whatever its authority.
A winner stated later than (or at the same time as) the value it outweighs supersedes it
by evidence as before: later in time with more authority. A tie of equal authority is
settled the same way only by a later explicit correction of that very value: the later
sessions say "not 30 seconds, 60" where the earlier said 30 (``correcting_value``); a later
value said without refuting the earlier one stays a tie, disputed.
Sessions whose times overlap or are unknown (logs written in code share one clock, an
import without times) are not ordered, and the score decides alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ._claims import Claim, value_of

__all__ = ["Span", "correcting_value", "later_values"]

Span = tuple[int, int]
"""A session's first and last event times (epoch ms)."""


def _after(later: Iterable[str], earlier: Iterable[str], spans: Mapping[str, Span]) -> bool:
    """Whether every session of ``later`` began after every session of ``earlier`` ended."""
    late, early = list(later), list(earlier)
    if not late or not early or any(s not in spans for s in (*late, *early)):
        return False
    return min(spans[s][0] for s in late) > max(spans[s][1] for s in early)


def later_values(winner: str, votes: Iterable[Claim], spans: Mapping[str, Span]) -> tuple[str, ...]:
    """The values of ``votes`` (a slot's voting claims) other than ``winner`` that only
    sessions later than every session backing ``winner`` state, sorted."""
    by_value: dict[str, set[str]] = {}
    for c in votes:
        by_value.setdefault(value_of(c), set()).add(c.source)
    backers = by_value.get(winner, set())
    return tuple(
        sorted(
            v
            for v, sources in by_value.items()
            if v != winner and not sources & backers and _after(sources, backers, spans)
        )
    )


def correcting_value(
    tied: Iterable[str], claims: Iterable[Claim], spans: Mapping[str, Span]
) -> str | None:
    """The tied value whose sessions all ran after the sessions of every other tied value,
    refute each of those values in so many words (a negated claim of it: the kernel keeps
    only the latest fact of a key current, so "not 30, 60" leaves the "not 30" superseded),
    and hold it at no lower evidence; None when no value does."""
    claims = list(claims)
    sources: dict[str, set[str]] = {}
    evidence: dict[str, int] = {}
    for c in claims:
        if not c.negated and not c.superseded:
            sources.setdefault(c.value, set()).add(c.source)
            evidence[c.value] = max(evidence.get(c.value, 0), c.evidence)
    values = list(tied)
    for v in values:
        mine = sources.get(v, set())
        if mine and all(
            _after(mine, sources.get(u, ()), spans)
            and evidence.get(v, 0) >= evidence.get(u, 0)
            and any(c.negated and c.value == u and c.source in mine for c in claims)
            for u in values
            if u != v
        ):
            return v
    return None
