"""A model call's wall-clock deadline, down to each socket read of the sync driver.

httpx's timeouts bound each connect, read and write, never a whole exchange: a server that
sends its headers one byte at a time, or streams keep-alive comments forever, never trips
them. Here a ``Deadline`` is a ``float`` (the seconds left when the request was built, so any
transport reads it as an ordinary timeout) that also carries the call's absolute deadline on
the monotonic clock, and ``install`` wraps the network backend of the sync client's own
transports so that every connect, read and write waits at most until that deadline, then
fails with httpcore's timeout (which httpx raises as ``httpx.TimeoutException``).

The async driver needs none of this: ``asyncio.timeout`` cancels the awaited exchange.
"""

from __future__ import annotations

import time
import typing
from collections.abc import Iterable

import httpcore
import httpx

CONNECT_CAP = 10.0
"""The longest a connect may take, within the deadline."""


class Deadline(float):
    """Seconds left (capped at ``cap``) as of its creation, and the absolute ``at``."""

    __slots__ = ("at",)
    at: float

    def __new__(cls, at: float, cap: float | None = None) -> Deadline:
        left = max(at - time.monotonic(), 0.0)
        self = super().__new__(cls, left if cap is None else min(left, cap))
        self.at = at
        return self


def timeouts(at: float) -> dict[str, float]:
    """The ``timeout`` request extension for a call that must end by ``at``."""
    return {
        "connect": Deadline(at, CONNECT_CAP),
        "read": Deadline(at),
        "write": Deadline(at),
        "pool": Deadline(at),
    }


def _left(timeout: float | None, error: type[Exception]) -> float | None:
    """The timeout for one wait: a ``Deadline``'s time left now (raising ``error`` once it
    has passed), any other value unchanged."""
    if not isinstance(timeout, Deadline):
        return timeout
    left = timeout.at - time.monotonic()
    if left <= 0:
        raise error("the call's deadline has passed")
    return min(float(timeout), left)


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: typing.Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        tls = self._inner.start_tls(
            ssl_context, server_hostname, _left(timeout, httpcore.ConnectTimeout)
        )
        return _Stream(tls)

    def get_extra_info(self, info: str) -> typing.Any:
        return self._inner.get_extra_info(info)


class DeadlineBackend(httpcore.NetworkBackend):
    """A network backend whose streams keep ``Deadline`` timeouts."""

    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[typing.Any] | None = None,
    ) -> httpcore.NetworkStream:
        left = _left(timeout, httpcore.ConnectTimeout)
        return _Stream(self._inner.connect_tcp(host, port, left, local_address, socket_options))

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[typing.Any] | None = None,
    ) -> httpcore.NetworkStream:
        left = _left(timeout, httpcore.ConnectTimeout)
        return _Stream(self._inner.connect_unix_socket(path, left, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def install(client: httpx.Client) -> int:
    """Wrap the network backend of each of ``client``'s own transports (the default one and
    any proxy mounts) in a ``DeadlineBackend``; the number wrapped. A transport without an
    httpcore pool (``MockTransport``, a caller's own) is left as it is."""
    wrapped = 0
    for transport in [client._transport, *client._mounts.values()]:
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if isinstance(backend, DeadlineBackend):
            continue
        if isinstance(backend, httpcore.NetworkBackend):
            pool._network_backend = DeadlineBackend(backend)  # type: ignore[union-attr]
            wrapped += 1
    return wrapped
