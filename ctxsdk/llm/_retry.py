"""``RetryPolicy``: which failed attempts are tried again, and after how long. No HTTP here."""

from __future__ import annotations

import email.utils
import random
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import InvalidArgument, LLMError, LLMProviderError, LLMTimeout


@dataclass(frozen=True)
class RetryPolicy:
    """How an ``LLM`` retries a failed attempt (``LLM(retry=RetryPolicy(...))``).

    Retried: a timeout, a connection error, a status in ``retry_statuses`` (408, 409, 425,
    429) and every 5xx; anything else (401/403, other 4xx, a body that is not a completion, a
    failure mid-stream) fails at once. At most ``max_retries`` retries follow the first
    attempt. The wait is the provider's ``Retry-After`` when it sent one (``retry-after-ms``,
    seconds or an HTTP date; a wait longer than ``retry_after_cap`` seconds is not attempted),
    else capped exponential backoff with jitter: uniform in ``[c/2, c]`` for
    ``c = min(backoff_cap, backoff_base * 2 ** (retry - 1))``.
    """

    max_retries: int = 3
    backoff_base: float = 0.5
    backoff_cap: float = 20.0
    retry_after_cap: float = 60.0
    retry_statuses: frozenset[int] = frozenset({408, 409, 425, 429})

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise InvalidArgument(f"max_retries must be >= 0, not {self.max_retries}")
        for name in ("backoff_base", "backoff_cap", "retry_after_cap"):
            if getattr(self, name) < 0:
                raise InvalidArgument(f"{name} must be >= 0 seconds, not {getattr(self, name)}")

    def retries(self, error: LLMError) -> bool:
        """Whether an attempt that failed with ``error`` is worth another one."""
        if isinstance(error, LLMTimeout):
            return True
        if not isinstance(error, LLMProviderError):
            return False
        status = error.status
        return status is None or status in self.retry_statuses or status >= 500

    def delay(self, error: LLMError, attempt: int, rng: random.Random) -> float | None:
        """Seconds to wait after failed attempt number ``attempt`` (1-based) before the next,
        or ``None`` to give up with ``error``."""
        if attempt > self.max_retries or not self.retries(error):
            return None
        if error.retry_after is not None:
            return error.retry_after if error.retry_after <= self.retry_after_cap else None
        ceiling = min(self.backoff_cap, self.backoff_base * 2.0 ** (attempt - 1))
        return ceiling / 2 + rng.random() * ceiling / 2


def retry_after(headers: Mapping[str, str], now: float) -> float | None:
    """Seconds the provider asked to wait (``retry-after-ms``, ``Retry-After`` seconds or
    HTTP date), or None. ``headers`` looks names up case-insensitively (``httpx.Headers``)."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(float(ms) / 1000.0, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - now, 0.0)
