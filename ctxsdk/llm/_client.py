"""``LLM``: chat completions against any OpenAI-compatible endpoint, over httpx.

Every call runs through one request core (``_core.Call``); the methods here build its
``CallOptions`` and run it with one of four thin drivers (sync or async, whole or streamed)
that only send, read and sleep, each blocking wait bounded by the call's deadline
(``_deadline`` for the sync client's sockets, ``asyncio.timeout`` for the async driver).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import random
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from typing import Any, Literal, Unpack

import httpx

from ..errors import InvalidArgument, LLMError, LLMNotConfigured
from . import _deadline
from ._base import (
    NO_ROUTE,
    ChatResult,
    Delta,
    M,
    Messages,
    Structured,
    Usage,
    parse_structured,
)
from ._core import Answer, Call, Route
from ._embedding_answer import parse_embeddings
from ._limits import MAX_RESPONSE_BYTES
from ._options import CallOptions, ChatKwargs, StreamKwargs, StructuredKwargs
from ._retry import RetryPolicy
from ._trace import Tracer
from ._wire import (
    ENV_API_KEY,
    ENV_BASE_URL,
    ENV_DEEPSEEK_API_KEY,
    ENV_MODEL,
    Assembler,
    encode_body,
    is_deepseek,
    prepare_messages,
    request_body,
    safe_url,
    with_schema,
)

_log = logging.getLogger("ctxsdk.llm")

DEEPSEEK_BASE_URL = "https://api.deepseek.com"
DEEPSEEK_DEFAULT_MODEL = "deepseek-v4-flash"
"""DeepSeek's current chat model id (the one DSH sessions record). The old ``deepseek-chat`` /
``deepseek-reasoner`` ids were compatibility aliases that DeepSeek announced it would retire;
pass ``model=`` or set ``CTXSDK_LLM_MODEL`` to use another."""

Provider = Literal["deepseek", "openai-compatible"]


class ChatStream:
    """A streamed completion: iterate it for ``Delta`` pieces; ``result``
    (after the end, or consuming the rest) is the assembled ``ChatResult``."""

    def __init__(self, gen: Iterator[Delta], assembler: Assembler) -> None:
        self._gen = gen
        self._assembler = assembler
        self._done = False

    def __iter__(self) -> Iterator[Delta]:
        yield from self._gen
        self._done = True

    @property
    def result(self) -> ChatResult:
        if not self._done:
            for _ in self:
                pass
        return self._assembler.result()

    def text(self) -> str:
        """Consume the stream and return the whole text."""
        return self.result.text

    def close(self) -> None:
        close = getattr(self._gen, "close", None)
        if close is not None:
            close()

    def __repr__(self) -> str:
        return f"ChatStream({'done' if self._done else 'open'})"


class AsyncChatStream:
    """The async twin of ``ChatStream``: ``async for delta in stream``, then ``result``."""

    def __init__(self, gen: AsyncIterator[Delta], assembler: Assembler) -> None:
        self._gen = gen
        self._assembler = assembler
        self._done = False

    async def __aiter__(self) -> AsyncIterator[Delta]:
        async for delta in self._gen:
            yield delta
        self._done = True

    async def aresult(self) -> ChatResult:
        if not self._done:
            async for _ in self:
                pass
        return self._assembler.result()

    @property
    def result(self) -> ChatResult:
        if not self._done:
            raise RuntimeError("the stream is not finished: iterate it or await aresult()")
        return self._assembler.result()


def _retry_field(name: str) -> Any:
    """An ``LLM`` attribute that reads, and on assignment replaces, one field of ``retry``."""
    return property(
        lambda self: getattr(self.retry, name),
        lambda self, value: setattr(
            self, "retry", dataclasses.replace(self.retry, **{name: value})
        ),
        doc=f"``retry.{name}`` (assigning it replaces the policy with one that differs there).",
    )


class LLM:
    """A chat model behind any OpenAI-compatible endpoint (``/chat/completions``).

    Route resolution, first match wins:

    - ``base_url``: the argument, ``$CTXSDK_LLM_BASE_URL``, else DeepSeek's API
      (``https://api.deepseek.com``) when a key is found;
    - ``api_key``: the argument, ``$CTXSDK_LLM_API_KEY``, else ``$DEEPSEEK_API_KEY`` but only
      for DeepSeek's own host (a DeepSeek key is never sent to another server); no key means
      no ``Authorization`` header (local servers);
    - ``model``: the argument, ``$CTXSDK_LLM_MODEL``, else ``deepseek-v4-flash`` on DeepSeek.

    Without a base URL and a model the object still exists but has no route: ``chat`` raises
    ``LLMNotConfigured`` and ``structured`` degrades with
    ``"no route configured"``. ``LLM.from_env()`` returns ``None`` instead.

    Call defaults are the seeds' mechanical-extraction settings: ``temperature=0``,
    ``reasoning_effort="off"``, ``max_tokens`` capped (4000 unless given),
    ``max_chars_per_input`` (keep the tail) when set.

    Reasoning effort on the wire: for DeepSeek, ``"off"`` sends ``thinking: {"type":
    "disabled"}`` (its V4 models think by default) and no ``reasoning_effort``; any other
    effort sends ``thinking: {"type": "enabled"}`` plus ``reasoning_effort``. For other servers
    ``reasoning_effort`` is sent only when it is not ``"off"``.

    Errors: ``chat``/``achat``/``stream`` raise ``LLMError`` subclasses
    (an explicit call wants a clear error, e.g. ``LLMAuthError`` for a
    401/403); ``structured``/``astructured`` (the engines' calls) never raise for a model
    failure and return a degraded ``Structured`` with the reason.

    Options: each call's keyword arguments become one frozen ``CallOptions``; the object's
    ``max_tokens`` and ``max_chars_per_input`` fill in the ones a call leaves ``None``.

    Retries: 408/409/425/429/5xx, timeouts and connection errors are retried up to
    ``max_retries`` times with capped exponential backoff and jitter, or after the provider's
    ``Retry-After`` (seconds or HTTP date; a wait longer than ``retry_after_cap`` is not
    attempted): the ``RetryPolicy`` in ``retry`` (``retry=`` replaces it whole; the four
    keyword arguments replace one field each). ``sleep``/``asleep``/``seed`` make this
    deterministic in tests.

    Deadline: ``timeout`` (60 s) bounds the whole call, wall clock: every attempt, connect,
    headers and body (or the whole stream, however slowly it is consumed) and the waits
    between attempts; a retry that would end past it is not attempted. A server that drips
    its headers or streams only keep-alives cannot hold a call longer: past the deadline it
    raises ``LLMTimeout``.

    Limits: a response body is read up to ``max_response_bytes`` (32 MiB; a stream counts
    all it carries) and never past it: over it a call fails with ``LLMProviderError`` (an
    error status keeps its status). JSON nested deeper than ``MAX_JSON_DEPTH`` (128) levels
    is an invalid response, and a lone surrogate in a reply's text becomes U+FFFD, so a
    result can be logged and sent again.

    Tracing: ``tracer=fn`` (also settable as ``llm.tracer``) is called with a ``TraceEvent``
    for each ``request`` (one per attempt), ``retry``, and the call's final ``response`` or
    ``error``, in order: ``LLM(..., tracer=print)`` shows every exchange. Events hold the
    URL (no userinfo or query), statuses, reasons, delays and usage; never a header, a key
    or a prompt.

    Secrets: the key goes only into the ``Authorization`` header; ``repr`` and logs never show
    it, nor any prompt. Every text sent passes through ``redact`` first (the merge engine's
    redaction hook; a no-op by default).
    """

    max_retries: int = _retry_field("max_retries")
    backoff_base: float = _retry_field("backoff_base")
    backoff_cap: float = _retry_field("backoff_cap")
    retry_after_cap: float = _retry_field("retry_after_cap")

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        *,
        provider: Provider | None = None,
        timeout: float = 60.0,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        max_retries: int | None = None,
        max_tokens: int = 4000,
        max_chars_per_input: int | None = None,
        backoff_base: float | None = None,
        backoff_cap: float | None = None,
        retry_after_cap: float | None = None,
        retry: RetryPolicy | None = None,
        tracer: Tracer | None = None,
        transport: httpx.BaseTransport | httpx.AsyncBaseTransport | None = None,
        redact: Callable[[str], str] | None = None,
        sleep: Callable[[float], None] | None = None,
        asleep: Callable[[float], Awaitable[None]] | None = None,
        seed: int | None = None,
        env: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        if timeout <= 0:
            raise InvalidArgument(f"timeout must be > 0 seconds, not {timeout}")
        if max_response_bytes <= 0:
            raise InvalidArgument(f"max_response_bytes must be > 0, not {max_response_bytes}")
        CallOptions(max_tokens=max_tokens, max_chars_per_input=max_chars_per_input)  # checks
        changes: dict[str, Any] = {
            "max_retries": max_retries,
            "backoff_base": backoff_base,
            "backoff_cap": backoff_cap,
            "retry_after_cap": retry_after_cap,
        }
        self.retry: RetryPolicy = dataclasses.replace(
            retry or RetryPolicy(), **{k: v for k, v in changes.items() if v is not None}
        )
        self.tracer: Tracer | None = tracer
        environ: Mapping[str, str] = os.environ if env is None else env
        key = api_key or environ.get(ENV_API_KEY) or None
        base = base_url or environ.get(ENV_BASE_URL) or None
        if base is None and (key or environ.get(ENV_DEEPSEEK_API_KEY)):
            base = DEEPSEEK_BASE_URL
        if key is None and base is not None and is_deepseek(base):
            key = environ.get(ENV_DEEPSEEK_API_KEY) or None
        mdl = model or environ.get(ENV_MODEL) or None
        if mdl is None and base is not None and is_deepseek(base):
            mdl = DEEPSEEK_DEFAULT_MODEL
        self._base_url = base.rstrip("/") if base else None
        self._model = mdl
        self._api_key = key
        self._provider: Provider = provider or (
            "deepseek" if base is not None and is_deepseek(base) else "openai-compatible"
        )
        self.timeout = float(timeout)
        self.max_response_bytes = max_response_bytes
        self.max_tokens = max_tokens
        self.max_chars_per_input = max_chars_per_input
        self._sync_transport = transport if isinstance(transport, httpx.BaseTransport) else None
        self._async_transport = (
            transport if isinstance(transport, httpx.AsyncBaseTransport) else None
        )
        self._redact = redact
        self._sleep = sleep
        self._asleep = asleep
        self._rng = random.Random(seed)
        self._extra_headers = dict(headers or {})
        self._lock = threading.Lock()
        self._client: httpx.Client | None = None
        self._usage_total = Usage()
        self._usage_calls: list[Usage] = []

    @classmethod
    def from_env(cls, **kwargs: Any) -> LLM | None:
        """An LLM routed by the environment, or ``None`` when no route is configured
        (so ``engine(llm=LLM.from_env())`` runs its deterministic path)."""
        llm = cls(**kwargs)
        return llm if llm.configured else None

    # --- route -------------------------------------------------------------------------

    @property
    def base_url(self) -> str | None:
        return self._base_url

    @property
    def model(self) -> str | None:
        return self._model

    @property
    def provider(self) -> Provider:
        return self._provider

    @property
    def configured(self) -> bool:
        """True when there is a base URL and a model to call."""
        return self._base_url is not None and self._model is not None

    @property
    def route(self) -> tuple[str, str] | None:
        """``(provider, model)``, or None without a route."""
        return (self._provider, self._model) if self._model and self._base_url else None

    @property
    def has_key(self) -> bool:
        return self._api_key is not None

    def __repr__(self) -> str:
        if not self.configured:
            return "LLM(no route configured)"
        key = "<set>" if self._api_key else None
        return (
            f"LLM(provider={self._provider!r}, base_url={safe_url(self._base_url or '')!r}, "
            f"model={self._model!r}, api_key={key})"
        )

    # --- usage -------------------------------------------------------------------------

    @property
    def usage_total(self) -> Usage:
        """Usage summed over every successful call of this object."""
        return self._usage_total

    @property
    def usage_calls(self) -> tuple[Usage, ...]:
        """Usage of each successful call, in order."""
        with self._lock:
            return tuple(self._usage_calls)

    def reset_usage(self) -> None:
        with self._lock:
            self._usage_total = Usage()
            self._usage_calls = []

    def _record(self, usage: Usage) -> None:
        with self._lock:
            self._usage_total = self._usage_total + usage
            self._usage_calls.append(usage)

    # --- lifecycle ---------------------------------------------------------------------

    def close(self) -> None:
        """Close the pooled sync HTTP client (async calls use a client per call)."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def __enter__(self) -> LLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- planning a call: the one place a request is built ------------------------------

    def _require_route(self) -> tuple[str, str]:
        if self._base_url is None or self._model is None:
            missing = "a base URL" if self._base_url is None else "a model"
            raise LLMNotConfigured(
                f"{NO_ROUTE}: no {missing}. Pass LLM(base_url=..., model=..., api_key=...) or "
                f"set {ENV_BASE_URL} / {ENV_MODEL} / {ENV_API_KEY} "
                f"(or {ENV_DEEPSEEK_API_KEY} for DeepSeek's API)",
            )
        return self._base_url, self._model

    def _plan(
        self,
        messages: Messages,
        options: CallOptions,
        *,
        stream: bool = False,
        schema: type[M] | None = None,
    ) -> Call:
        """The call ``options`` ask for: messages copied, redacted and capped (the schema
        appended after the cap, so it is never cut), body encoded, route fixed."""
        base, model = self._require_route()
        opts = options.resolved(
            max_tokens=self.max_tokens, max_chars_per_input=self.max_chars_per_input
        )
        prepared = prepare_messages(messages, opts.max_chars_per_input, self._redact)
        if schema is not None:
            prepared = with_schema(prepared, schema)
        body = request_body(
            prepared, opts, model=model, deepseek=self._provider == "deepseek", stream=stream
        )
        url = f"{base}/chat/completions"
        route = Route(
            provider=self._provider,
            model=model,
            url=url,
            where=safe_url(url),
            timeout=self.timeout,
            max_body=self.max_response_bytes,
            policy=self.retry,
            rng=self._rng,
            tracer=self.tracer,
            scrub=self._scrub,
            record=self._record,
        )
        return Call(route, encode_body(body), self._headers(), stream=stream, cancel=opts.cancel)

    def embed(self, texts: list[str], *, model: str | None = None) -> list[list[float]]:
        """Embeddings of ``texts`` from this endpoint's ``/embeddings`` (OpenAI-compatible),
        in order, with the same retries, timeout, size cap and tracer as a chat call.
        ``model`` defaults to this LLM's model. Raises ``LLMError`` subclasses; an answer
        that is not one vector per text is an ``LLMOutputError``."""
        base, chat_model = self._require_route()
        if not texts:
            return []
        url = f"{base}/embeddings"
        route = dataclasses.replace(
            self._plan([{"role": "user", "content": ""}], CallOptions()).route,
            url=url,
            where=safe_url(url),
            model=model or chat_model,
        )
        body = {"model": model or chat_model, "input": list(texts)}
        call = Call(route, encode_body(body), self._headers(), stream=False, cancel=None)
        with call.traced():
            answer = self._open(call)
        return parse_embeddings(answer.body, len(texts), where=route.where)

    def _scrub(self, text: str) -> str:
        if self._api_key:
            text = text.replace(self._api_key, "[REDACTED]")
        return self._redact(text) if self._redact is not None else text

    def _headers(self) -> dict[str, str]:
        h = {"Content-Type": "application/json", "Accept": "application/json"}
        h.update(self._extra_headers)
        if self._api_key:
            h["Authorization"] = f"Bearer {self._api_key}"
        return h

    # --- the sync driver: send, read, sleep --------------------------------------------

    def _sync_client(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                self._client = httpx.Client(transport=self._sync_transport)
                if self._sync_transport is None:
                    _deadline.install(self._client)
            return self._client

    def _open(self, call: Call) -> Answer:
        """Attempts until the core accepts an answer (or gives up by raising)."""
        client = self._sync_client()
        while True:
            call.begin()
            try:
                answer = self._send(client, call)
            except httpx.TransportError as exc:
                answer = call.failure(exc)
            delay = call.backoff(answer)
            if delay is None:
                return answer
            if self._sleep is not None:
                self._sleep(delay)
            elif call.cancel is not None:
                call.cancel.wait(delay)
            else:
                time.sleep(delay)

    def _send(self, client: httpx.Client, call: Call) -> Answer:
        response = client.send(_request(client, call), stream=True)
        if call.keeps_open(response.status_code):
            return Answer(response.status_code, response.headers, response=response)
        try:
            parts: list[bytes] = []
            for part in response.iter_bytes():
                if not call.take(part, response.status_code):
                    break
                parts.append(part)
            return Answer(response.status_code, response.headers, b"".join(parts))
        finally:
            response.close()

    def _complete(self, call: Call) -> ChatResult:
        with call.traced():
            return call.complete(self._open(call))

    def _stream(self, call: Call) -> Iterator[Delta]:
        with call.traced():
            response: httpx.Response = self._open(call).response
            try:
                for part in response.iter_bytes():
                    yield from call.feed(part)
                    if call.done:
                        break
                else:
                    yield from call.end()
            finally:
                response.close()
            call.finish_stream()

    # --- the async driver: the same, awaited -------------------------------------------

    def _async_client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=self._async_transport)

    async def _aopen(self, client: httpx.AsyncClient, call: Call) -> Answer:
        while True:
            call.begin()
            try:
                async with asyncio.timeout(call.remaining()):
                    answer = await self._asend(client, call)
            except (TimeoutError, httpx.TransportError) as exc:
                answer = call.failure(exc)
            delay = call.backoff(answer)
            if delay is None:
                return answer
            await (self._asleep or asyncio.sleep)(delay)

    async def _asend(self, client: httpx.AsyncClient, call: Call) -> Answer:
        response = await client.send(_request(client, call), stream=True)
        if call.keeps_open(response.status_code):
            return Answer(response.status_code, response.headers, response=response)
        try:
            parts: list[bytes] = []
            async for part in response.aiter_bytes():
                if not call.take(part, response.status_code):
                    break
                parts.append(part)
            call.check_cancel()
            return Answer(response.status_code, response.headers, b"".join(parts))
        finally:
            await response.aclose()

    async def _acomplete(self, call: Call) -> ChatResult:
        with call.traced():
            async with self._async_client() as client:
                answer = await self._aopen(client, call)
            return call.complete(answer)

    async def _astream(self, call: Call) -> AsyncIterator[Delta]:
        with call.traced():
            async with self._async_client() as client:
                response: httpx.Response = (await self._aopen(client, call)).response
                try:
                    parts = response.aiter_bytes()
                    while not call.done:
                        async with asyncio.timeout(call.remaining()):
                            part = await anext(parts, None)
                        deltas = call.end() if part is None else call.feed(part)
                        for delta in deltas:
                            yield delta
                        if part is None:
                            break
                finally:
                    await response.aclose()
            call.finish_stream()

    # --- public API ----------------------------------------------------------------------

    def chat(self, messages: Messages, **options: Unpack[ChatKwargs]) -> ChatResult:
        """One chat completion. Raises ``LLMError`` subclasses.

        ``messages`` is a user text or OpenAI-format messages (e.g. ``session.wire()``).
        ``options`` are ``CallOptions`` fields: ``max_tokens``, ``temperature``,
        ``reasoning_effort``, ``stop``, ``tools``, ``max_chars_per_input`` (caps each
        message's text, keeping the tail; default: the object's), ``cancel`` (checked before
        each attempt, during backoff and between received chunks; a blocked socket read ends
        at the timeout) and ``json_mode``.
        """
        return self._complete(self._plan(messages, CallOptions.of("chat", ChatKwargs, options)))

    def structured(
        self, messages: Messages, schema: type[M], **options: Unpack[StructuredKwargs]
    ) -> Structured[M]:
        """Ask for JSON matching ``schema`` (a pydantic model) and validate it.

        Never raises for a model failure: the result is ``ok`` with a typed ``value``, or
        degraded with the ladder's reason. The schema is appended to the last user message
        (after the ``max_chars_per_input`` cut, so it is never cut); ``json_mode`` also sends
        ``response_format: {"type": "json_object"}``. ``options`` as for ``chat``, without
        ``stop`` and ``tools``.
        """
        opts = CallOptions.of("structured", StructuredKwargs, options)
        if not self.configured:
            return _degraded(LLMNotConfigured(NO_ROUTE))
        try:
            result = self._complete(self._plan(messages, opts, schema=schema))
        except LLMError as exc:
            return _degraded(exc)
        return _validated(result, schema)

    def stream(self, messages: Messages, **options: Unpack[StreamKwargs]) -> ChatStream:
        """A streamed completion (server-sent events). Iterate it for deltas; ``.result`` is
        the assembled ``ChatResult``. Failures before the first byte are retried like
        ``chat``; a failure mid-stream raises. ``options`` as for ``chat``, without
        ``json_mode``."""
        call = self._plan(messages, CallOptions.of("stream", StreamKwargs, options), stream=True)
        return ChatStream(self._stream(call), call.assembler)

    async def achat(self, messages: Messages, **options: Unpack[ChatKwargs]) -> ChatResult:
        """The async ``chat``. Cancelling the task cancels the request cleanly
        (``asyncio.CancelledError`` propagates); ``cancel`` works as in ``chat``."""
        call = self._plan(messages, CallOptions.of("achat", ChatKwargs, options))
        return await self._acomplete(call)

    async def astructured(
        self, messages: Messages, schema: type[M], **options: Unpack[StructuredKwargs]
    ) -> Structured[M]:
        """The async ``structured`` (task cancellation still propagates)."""
        opts = CallOptions.of("astructured", StructuredKwargs, options)
        if not self.configured:
            return _degraded(LLMNotConfigured(NO_ROUTE))
        try:
            result = await self._acomplete(self._plan(messages, opts, schema=schema))
        except LLMError as exc:
            return _degraded(exc)
        return _validated(result, schema)

    def astream(self, messages: Messages, **options: Unpack[StreamKwargs]) -> AsyncChatStream:
        """The async ``stream``: ``async for delta in llm.astream(...)``."""
        call = self._plan(messages, CallOptions.of("astream", StreamKwargs, options), stream=True)
        return AsyncChatStream(self._astream(call), call.assembler)


def _request(client: httpx.Client | httpx.AsyncClient, call: Call) -> httpx.Request:
    """The attempt's request; its timeouts are the call's deadline (``_deadline``)."""
    return client.build_request(
        "POST",
        call.route.url,
        content=call.payload,
        headers=call.headers,
        extensions={"timeout": _deadline.timeouts(call.deadline)},
    )


def _degraded(error: LLMError) -> Structured[Any]:
    _log.warning("structured call degraded: %s", error.reason)
    return Structured.failed(error)


def _validated(result: ChatResult, schema: type[M]) -> Structured[M]:
    out = parse_structured(result, schema)
    if not out.ok:
        _log.warning("structured call degraded: %s", out.degraded_reason)
    return out


for _public in (LLM, ChatStream, AsyncChatStream):
    _public.__module__ = "ctxsdk.llm"
