"""``TraceEvent``: what an ``LLM(tracer=...)`` hook sees of each call. No HTTP here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypeAlias

from ._base import Usage

TraceKind: TypeAlias = Literal["request", "retry", "response", "error"]


@dataclass(frozen=True)
class TraceEvent:
    """One step of a model call, as ``LLM(tracer=fn)`` reports it (``fn(event)``).

    A call reports ``request`` before each attempt; ``retry`` when an attempt failed and
    another follows (``delay`` seconds later); then ``response`` once (the answer, read to
    its end for a stream, with its ``usage``) or ``error`` once (the failure the call
    raises or degrades with). An event holds no prompt, no header and no key: ``url`` is
    the endpoint without userinfo, query or fragment.

    ``attempt`` is 1-based; ``status`` the HTTP status when there was one; ``reason`` the
    ladder text of a failure; ``elapsed`` the seconds since the attempt began.
    """

    kind: TraceKind
    attempt: int
    url: str
    model: str
    stream: bool = False
    status: int | None = None
    reason: str | None = None
    delay: float | None = None
    usage: Usage | None = None
    request_id: str | None = None
    elapsed: float | None = None

    def __str__(self) -> str:
        head = f"{self.kind} #{self.attempt} {self.url}"
        status = f" -> {self.status}" if self.status is not None else ""
        reason = f" ({self.reason})" if self.reason else ""
        delay = f", next attempt in {self.delay:.2f} s" if self.delay is not None else ""
        usage = f" {self.usage!r}" if self.usage is not None else ""
        return f"{head}{status}{reason}{delay}{usage}"


Tracer: TypeAlias = Callable[[TraceEvent], None]
"""A ``tracer=`` hook: called with every ``TraceEvent``, in order, on the calling thread."""
