"""The request core every model call runs through: one ``Call`` holds the request, numbers
the attempts, classifies each answer or failure, decides with the ``RetryPolicy`` whether
to try again, assembles the result and reports each step to the tracer.

It does no I/O and never sleeps: the sync and async drivers in ``_client`` send the
request, read the body and wait the delay this core asks for, and nothing else.
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
    timeout: float
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
        self.status: int | None = None  # the accepted answer's
        self.assembler = Assembler(route.provider, route.model)

    # --- attempts ----------------------------------------------------------------------

    def begin(self) -> None:
        """Start the next attempt: check ``cancel``, start its clock, report ``request``."""
        self.check_cancel()
        self.attempt += 1
        self.started = time.monotonic()
        self.emit("request")

    def check_cancel(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise LLMCancelled("cancelled: the call's cancel event was set")

    def overdue(self) -> bool:
        """Check ``cancel``; True when the attempt has run past the timeout."""
        self.check_cancel()
        return time.monotonic() > self.started + self.route.timeout

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
        if delay is None:
            if self.attempt > 1:
                err.args = (f"{err.args[0]} (after {self.attempt} attempts)",)
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

    def feed(self, line: str) -> list[Delta] | None:
        """The deltas in one streamed line; ``None`` once the stream says it is done."""
        if self.overdue():
            raise self.timeout_error()
        chunk = sse_chunk(line)
        if chunk is DONE:
            return None
        return self.assembler.feed(chunk) if isinstance(chunk, Mapping) else []

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
        mid-stream becomes the matching ``LLMError`` first)."""
        try:
            yield
        except httpx.TransportError as exc:
            err = self.transport_error(exc)
            self.emit("error", reason=err.reason)
            raise err from None
        except LLMError as exc:
            self.emit("error", status=exc.status, reason=exc.reason)
            raise

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
