"""The request core every model call runs through: one ``Call`` holds the request, numbers
the attempts, classifies each answer or failure, decides with the ``RetryPolicy`` whether
to try again, assembles the result and reports each step to the tracer.

It does no I/O and never sleeps: the sync and async drivers in ``_client`` send the
request, read the body and wait the delay this core asks for, and nothing else.

The call's ``timeout`` is one deadline for the whole call: every attempt, connect, headers,
body or stream, and the waits between attempts. Each received piece of a body or stream is
counted against the response size cap and checked against the deadline here; the drivers
bound each blocking wait by ``remaining()``.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from ..errors import LLMAuthError, LLMCancelled, LLMError, LLMProviderError, LLMTimeout
from ._base import ChatResult, Delta, Usage
from ._retry import RetryPolicy, retry_after
from ._trace import TraceEvent, TraceKind, Tracer
from ._wire import (
    DETAIL_CHARS,
    DONE,
    ENV_API_KEY,
    ENV_DEEPSEEK_API_KEY,
    Assembler,
    Lines,
    error_detail,
    parse_completion,
    sse_chunk,
)

_log = logging.getLogger("ctxsdk.llm")


@dataclass(frozen=True)
class Answer:
    """What one attempt got: a status with its headers and body, an open 2xx stream
    (``response``), or the ``error`` of a failed exchange."""

    status: int | None = None
    headers: Mapping[str, str] | None = None
    body: bytes = b""
    response: Any = None
    error: LLMError | None = None


@dataclass(frozen=True)
class Route:
    """What every call of one ``LLM`` object shares."""

    provider: str
    model: str
    url: str
    where: str  # the URL without userinfo, query or fragment
    timeout: float  # seconds for the whole call
    max_body: int  # bytes of one response body (a stream: all of it)
    policy: RetryPolicy
    rng: random.Random
    tracer: Tracer | None
    scrub: Callable[[str], str]
    record: Callable[[Usage], None]


class Call:
    """One model call, planned: its request bytes, its attempts, its retry decisions."""

    def __init__(
        self,
        route: Route,
        payload: bytes,
        headers: Mapping[str, str],
        *,
        stream: bool,
        cancel: threading.Event | None,
    ) -> None:
        self.route = route
        self.payload = payload
        self.headers = dict(headers)
        self.stream = stream
        self.cancel = cancel
        self.attempt = 0
        self.started = 0.0
        self.deadline = 0.0  # on the monotonic clock, set when the first attempt begins
        self.received = 0  # bytes of the current attempt's body
        self.done = False  # the stream said [DONE]
        self.status: int | None = None  # the accepted answer's
        self.assembler = Assembler(route.provider, route.model)
        self.lines = Lines()

    # --- attempts ----------------------------------------------------------------------

    def begin(self) -> None:
        """Start the next attempt: check ``cancel``, start its clock, report ``request``."""
        self.check_cancel()
        self.attempt += 1
        self.started = time.monotonic()
        if self.attempt == 1:
            self.deadline = self.started + self.route.timeout
        self.received = 0
        self.emit("request")

    def check_cancel(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise LLMCancelled("cancelled: the call's cancel event was set")

    def overdue(self) -> bool:
        """Check ``cancel``; True when the call has run past its deadline."""
        self.check_cancel()
        return time.monotonic() >= self.deadline

    def remaining(self) -> float:
        """Seconds left until the call's deadline (0 once it has passed)."""
        return max(self.deadline - time.monotonic(), 0.0)

    def take(self, part: bytes, status: int) -> bool:
        """Count one received piece of a body with ``status``: raises ``LLMTimeout`` past
        the deadline (``LLMCancelled`` when cancelled) and ``LLMProviderError`` when a 2xx
        body outgrows the cap; False when an error body reached the cap (keep what was read,
        stop reading: its status says what went wrong)."""
        if self.overdue():
            raise self.timeout_error()
        self.received += len(part)
        if self.received <= self.route.max_body:
            return True
        if status >= 300:
            return False
        cap = self.route.max_body
        raise LLMProviderError(
            f"provider returned a response over the {cap} byte cap from {self.route.where}; "
            f"raise LLM(max_response_bytes=...) if such replies are expected",
            reason="provider returned a response over the size cap",
        )

    def keeps_open(self, status: int) -> bool:
        """Whether the driver hands this response over unread (a 2xx stream)."""
        return self.stream and status < 300

    def failure(self, exc: BaseException) -> Answer:
        """The answer of an attempt whose exchange raised ``exc`` (a transport error, or the
        ``TimeoutError`` of an async deadline)."""
        return Answer(error=self.transport_error(exc))

    def timeout_error(self) -> LLMTimeout:
        return LLMTimeout(
            f"timeout: no complete answer from {self.route.where} within {self.route.timeout:g} s"
            f" (the whole call; raise LLM(timeout=...) for longer replies)"
        )

    def transport_error(self, exc: BaseException) -> LLMError:
        if isinstance(exc, TimeoutError | httpx.TimeoutException):
            return self.timeout_error()
        name = type(exc).__name__
        return LLMProviderError(
            f"provider unreachable: {name} for {self.route.where}",
            reason=f"provider unreachable: {name}",
        )

    def backoff(self, answer: Answer) -> float | None:
        """``None`` when ``answer`` is a success; else the seconds to wait before the next
        attempt. Raises the attempt's error when the policy gives up."""
        if answer.error is None and answer.status is not None:
            _log.debug("POST %s -> %d (attempt %d)", self.route.where, answer.status, self.attempt)
            if answer.status < 300:
                self.status = answer.status
                return None
        err = answer.error or self.status_error(answer)
        delay = self.route.policy.delay(err, self.attempt, self.route.rng)
        late = delay is not None and time.monotonic() + delay >= self.deadline
        if delay is None or late:
            notes = [f"after {self.attempt} attempts"] if self.attempt > 1 else []
            if late and not isinstance(err, LLMTimeout):
                notes.append(f"another would end past the {self.route.timeout:g} s timeout")
            if notes:
                err.args = (f"{err.args[0]} ({'; '.join(notes)})",)
            _log.debug("giving up after %d attempt(s): %s", self.attempt, err.reason)
            raise err
        _log.debug("retrying in %.2f s", delay)
        self.emit("retry", status=err.status, reason=err.reason, delay=delay)
        return delay

    def status_error(self, answer: Answer) -> LLMError:
        status = answer.status or 0
        headers = answer.headers or {}
        detail = self.route.scrub(error_detail(answer.body).strip())[:DETAIL_CHARS]
        suffix = f": {detail}" if detail else ""
        request_id = headers.get("x-request-id")
        if status in (401, 403):
            return LLMAuthError(
                f"auth failed: {self.route.where} returned {status}{suffix}. Check the API key "
                f"(api_key=, {ENV_API_KEY}, or {ENV_DEEPSEEK_API_KEY} for DeepSeek)",
                status=status,
                request_id=request_id,
            )
        return LLMProviderError(
            f"provider returned {status}{suffix} ({self.route.where})",
            reason=f"provider returned {status}",
            status=status,
            retry_after=retry_after(headers, time.time()),
            request_id=request_id,
        )

    # --- results -----------------------------------------------------------------------

    def complete(self, answer: Answer) -> ChatResult:
        """The result of a non-streamed call from its accepted answer."""
        result = parse_completion(
            answer.body,
            attempts=self.attempt,
            model=self.route.model,
            provider=self.route.provider,
            where=self.route.where,
        )
        return self._finish(result)

    def feed(self, part: bytes) -> Iterator[Delta]:
        """The deltas in one received piece of a stream, counted by ``take``, line by line
        (``cancel`` and the deadline are checked before each). ``done`` is set once the
        stream said ``[DONE]``; what follows is ignored."""
        self.take(part, 200)
        return self._deltas(self.lines.feed(part))

    def end(self) -> Iterator[Delta]:
        """The deltas of the stream's last line, when it ended without a newline."""
        return self._deltas(self.lines.end())

    def _deltas(self, lines: list[str]) -> Iterator[Delta]:
        for line in lines:
            if self.done:
                return
            if self.overdue():
                raise self.timeout_error()
            chunk = sse_chunk(line)
            if chunk is DONE:
                self.done = True
            elif isinstance(chunk, Mapping):
                yield from self.assembler.feed(chunk)

    def finish_stream(self) -> ChatResult:
        """The result of a stream read to its end."""
        self.assembler.attempts = self.attempt
        return self._finish(self.assembler.result())

    def _finish(self, result: ChatResult) -> ChatResult:
        self.route.record(result.usage)
        self.emit("response", status=self.status, usage=result.usage, request_id=result.request_id)
        return result

    @contextmanager
    def traced(self) -> Iterator[None]:
        """Around a driver: a failure leaving it is reported as ``error`` (a transport error
        or an async deadline mid-stream becomes the matching ``LLMError`` first)."""
        try:
            yield
        except LLMError as exc:
            self.emit("error", status=exc.status, reason=exc.reason)
            raise
        except (httpx.TransportError, TimeoutError) as exc:
            err = self.transport_error(exc)
            self.emit("error", reason=err.reason)
            raise err from None

    def emit(self, kind: TraceKind, **fields: Any) -> None:
        tracer = self.route.tracer
        if tracer is None:
            return
        elapsed = time.monotonic() - self.started if self.started and kind != "request" else None
        tracer(
            TraceEvent(
                kind,
                self.attempt,
                self.route.where,
                self.route.model,
                self.stream,
                elapsed=elapsed,
                **fields,
            )
        )
