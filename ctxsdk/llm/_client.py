"""``LLM``: chat completions against any OpenAI-compatible endpoint, over httpx."""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import os
import random
import threading
import time
import uuid
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import httpx
from pydantic import BaseModel

from ..errors import (
    LLMAuthError,
    LLMCancelled,
    LLMError,
    LLMNotConfigured,
    LLMProviderError,
    LLMTimeout,
)
from ._base import (
    NO_ROUTE,
    ChatResult,
    Delta,
    M,
    Messages,
    ReasoningEffort,
    Structured,
    ToolCall,
    Usage,
    parse_structured,
    truncate_keep_tail,
)

__all__ = [
    "DEEPSEEK_BASE_URL",
    "DEEPSEEK_DEFAULT_MODEL",
    "ENV_API_KEY",
    "ENV_BASE_URL",
    "ENV_DEEPSEEK_API_KEY",
    "ENV_MODEL",
    "LLM",
    "AsyncChatStream",
    "ChatStream",
]

_log = logging.getLogger("ctxsdk.llm")

ENV_BASE_URL = "CTXSDK_LLM_BASE_URL"
ENV_MODEL = "CTXSDK_LLM_MODEL"
ENV_API_KEY = "CTXSDK_LLM_API_KEY"
ENV_DEEPSEEK_API_KEY = "DEEPSEEK_API_KEY"
DEEPSEEK_BASE_URL = "https://api.deepseek.com"
DEEPSEEK_DEFAULT_MODEL = "deepseek-v4-flash"
"""DeepSeek's current chat model id (the one DSH sessions record). The old ``deepseek-chat`` /
``deepseek-reasoner`` ids were compatibility aliases that DeepSeek announced it would retire;
pass ``model=`` or set ``CTXSDK_LLM_MODEL`` to use another."""

_RETRY_STATUSES = frozenset({408, 409, 425, 429})
_DETAIL_CHARS = 300
_SCHEMA_INSTRUCTION = (
    "Answer with one JSON object only (no prose, no code fence) that validates against "
    "this JSON Schema:\n"
)

Provider = Literal["deepseek", "openai-compatible"]


def _is_deepseek(base_url: str) -> bool:
    host = urlsplit(base_url).hostname or ""
    return host == "deepseek.com" or host.endswith(".deepseek.com")


def _safe_url(url: str) -> str:
    """The URL without userinfo, query or fragment: what may appear in logs and errors."""
    parts = urlsplit(url)
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _retry_after(headers: httpx.Headers, now: float) -> float | None:
    """Seconds the provider asked to wait (``retry-after-ms``, ``Retry-After`` seconds or
    HTTP date), or None."""
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


class _Assembler:
    """Builds a ChatResult from streamed chunks (OpenAI ``chat.completion.chunk`` objects)."""

    def __init__(self, provider: str, model: str) -> None:
        self.provider = provider
        self.model = model
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish = "stop"
        self.usage = Usage(calls=1)
        self.request_id: str | None = None
        self.attempts = 1

    def feed(self, chunk: Mapping[str, Any]) -> list[Delta]:
        if isinstance(chunk.get("error"), Mapping):
            err = chunk["error"]
            raise LLMProviderError(
                f"provider sent an error mid-stream: {str(err.get('message', ''))[:_DETAIL_CHARS]}",
                reason="provider returned an error mid-stream",
            )
        out: list[Delta] = []
        if isinstance(chunk.get("model"), str) and chunk["model"]:
            self.model = chunk["model"]
        if self.request_id is None and isinstance(chunk.get("id"), str):
            self.request_id = chunk["id"]
        if isinstance(chunk.get("usage"), Mapping):
            self.usage = Usage.from_openai(chunk["usage"])
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
            return out
        choice = choices[0]
        delta = choice.get("delta") if isinstance(choice.get("delta"), Mapping) else {}
        assert isinstance(delta, Mapping)
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            self.reasoning.append(reasoning)
            out.append(Delta("reasoning", reasoning))
        content = delta.get("content")
        if isinstance(content, str) and content:
            self.text.append(content)
            out.append(Delta("text", content))
        for tc in delta.get("tool_calls") or []:
            if not isinstance(tc, Mapping):
                continue
            index = tc.get("index", len(self.calls))
            index = index if isinstance(index, int) else len(self.calls)
            slot = self.calls.setdefault(index, {"id": None, "name": "", "arguments": []})
            fn = tc.get("function") if isinstance(tc.get("function"), Mapping) else {}
            assert isinstance(fn, Mapping)
            if isinstance(tc.get("id"), str) and tc["id"]:
                slot["id"] = tc["id"]
            if isinstance(fn.get("name"), str) and fn["name"]:
                slot["name"] += fn["name"]
            args = fn.get("arguments")
            piece = args if isinstance(args, str) else ""
            slot["arguments"].append(piece)
            out.append(Delta("tool-call", piece, index, slot["id"], slot["name"] or None))
        if isinstance(choice.get("finish_reason"), str):
            self.finish = choice["finish_reason"]
        return out

    def result(self) -> ChatResult:
        calls = tuple(
            ToolCall(
                id=slot["id"] or _new_call_id(i),
                name=slot["name"],
                arguments="".join(slot["arguments"]) or "{}",
            )
            for i, slot in sorted(self.calls.items())
        )
        return ChatResult(
            text="".join(self.text),
            reasoning="".join(self.reasoning),
            tool_calls=calls,
            finish_reason=self.finish,
            usage=self.usage,
            model=self.model,
            provider=self.provider,
            request_id=self.request_id,
            attempts=self.attempts,
        )


def _new_call_id(index: int) -> str:
    return f"call_{index:02d}_{uuid.uuid4().hex[:16]}"


def _sse_payloads(lines: Iterable[str]) -> Iterator[Any]:
    for line in lines:
        if not line.startswith("data:"):
            continue  # comments, event:, id:, blank separators
        payload = line[5:].strip()
        if payload == "[DONE]":
            return
        if payload:
            try:
                yield json.loads(payload)
            except json.JSONDecodeError as exc:
                raise LLMProviderError(
                    f"provider streamed a line that is not JSON: {exc.msg}",
                    reason="provider returned an invalid stream",
                ) from None


class ChatStream:
    """A streamed completion: iterate it for ``Delta`` pieces; ``result``
    (after the end, or consuming the rest) is the assembled ``ChatResult``."""

    def __init__(self, gen: Iterator[Delta], assembler: _Assembler) -> None:
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

    def __init__(self, gen: AsyncIterator[Delta], assembler: _Assembler) -> None:
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

    Retries: 408/409/425/429/5xx, timeouts and connection errors are retried up to
    ``max_retries`` times with capped exponential backoff and jitter, or after the provider's
    ``Retry-After`` (seconds or HTTP date; a wait longer than ``retry_after_cap`` is not
    attempted). ``sleep``/``asleep``/``seed`` make this deterministic in tests.

    Secrets: the key goes only into the ``Authorization`` header; ``repr`` and logs never show
    it, nor any prompt. Every text sent passes through ``redact`` first (the merge engine's
    redaction hook; a no-op by default).
    """

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        *,
        provider: Provider | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        max_tokens: int = 4000,
        max_chars_per_input: int | None = None,
        backoff_base: float = 0.5,
        backoff_cap: float = 20.0,
        retry_after_cap: float = 60.0,
        transport: httpx.BaseTransport | httpx.AsyncBaseTransport | None = None,
        redact: Callable[[str], str] | None = None,
        sleep: Callable[[float], None] | None = None,
        asleep: Callable[[float], Awaitable[None]] | None = None,
        seed: int | None = None,
        env: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        if timeout <= 0:
            raise ValueError(f"timeout must be > 0 seconds, not {timeout}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, not {max_retries}")
        environ: Mapping[str, str] = os.environ if env is None else env
        key = api_key or environ.get(ENV_API_KEY) or None
        base = base_url or environ.get(ENV_BASE_URL) or None
        if base is None and (key or environ.get(ENV_DEEPSEEK_API_KEY)):
            base = DEEPSEEK_BASE_URL
        if key is None and base is not None and _is_deepseek(base):
            key = environ.get(ENV_DEEPSEEK_API_KEY) or None
        mdl = model or environ.get(ENV_MODEL) or None
        if mdl is None and base is not None and _is_deepseek(base):
            mdl = DEEPSEEK_DEFAULT_MODEL
        self._base_url = base.rstrip("/") if base else None
        self._model = mdl
        self._api_key = key
        self._provider: Provider = provider or (
            "deepseek" if base is not None and _is_deepseek(base) else "openai-compatible"
        )
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.max_tokens = max_tokens
        self.max_chars_per_input = max_chars_per_input
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.retry_after_cap = retry_after_cap
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
            f"LLM(provider={self._provider!r}, base_url={_safe_url(self._base_url or '')!r}, "
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

    # --- request building --------------------------------------------------------------

    def _require_route(self) -> tuple[str, str]:
        if self._base_url is None or self._model is None:
            missing = "a base URL" if self._base_url is None else "a model"
            raise LLMNotConfigured(
                f"{NO_ROUTE}: no {missing}. Pass LLM(base_url=..., model=..., api_key=...) or "
                f"set {ENV_BASE_URL} / {ENV_MODEL} / {ENV_API_KEY} "
                f"(or {ENV_DEEPSEEK_API_KEY} for DeepSeek's API)",
                reason=NO_ROUTE,
            )
        return self._base_url, self._model

    def _scrub(self, text: str) -> str:
        if self._api_key:
            text = text.replace(self._api_key, "[REDACTED]")
        return self._redact(text) if self._redact is not None else text

    def _prepare(self, messages: Messages, max_chars: int | None) -> list[dict[str, Any]]:
        """Copy the messages, redact every text, cap each message's text keeping the tail."""
        raw: Iterable[Mapping[str, Any]] = (
            [{"role": "user", "content": messages}] if isinstance(messages, str) else messages
        )
        redact = self._redact or (lambda s: s)
        out: list[dict[str, Any]] = []
        for msg in raw:
            m = dict(msg)
            content = m.get("content")
            if isinstance(content, str):
                m["content"] = truncate_keep_tail(redact(content), max_chars)
            elif isinstance(content, list):
                m["content"] = [
                    {**p, "text": truncate_keep_tail(redact(p["text"]), max_chars)}
                    if isinstance(p, Mapping) and isinstance(p.get("text"), str)
                    else p
                    for p in content
                ]
            if isinstance(m.get("reasoning_content"), str):
                m["reasoning_content"] = redact(m["reasoning_content"])
            calls = m.get("tool_calls")
            if isinstance(calls, list):
                m["tool_calls"] = [_redact_call(c, redact) for c in calls]
            out.append(m)
        return out

    def _body(
        self,
        messages: list[dict[str, Any]],
        *,
        max_tokens: int | None,
        temperature: float,
        reasoning_effort: ReasoningEffort,
        stop: Sequence[str] | None,
        tools: Sequence[Mapping[str, Any]] | None,
        stream: bool,
        json_mode: bool = False,
    ) -> dict[str, Any]:
        _, model = self._require_route()
        cap = self.max_tokens if max_tokens is None else max_tokens
        if cap <= 0:
            raise ValueError(f"max_tokens must be > 0, not {cap}")
        body: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "max_tokens": cap,
            "temperature": temperature,
        }
        if stop:
            body["stop"] = list(stop)
        if tools:
            body["tools"] = [dict(t) for t in tools]
        if self._provider == "deepseek":
            if reasoning_effort == "off":
                body["thinking"] = {"type": "disabled"}
            else:
                body["thinking"] = {"type": "enabled"}
                body["reasoning_effort"] = reasoning_effort
        elif reasoning_effort != "off":
            body["reasoning_effort"] = reasoning_effort
        if json_mode:
            body["response_format"] = {"type": "json_object"}
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    def _cap(self, max_chars_per_input: int | None) -> int | None:
        return self.max_chars_per_input if max_chars_per_input is None else max_chars_per_input

    def _headers(self) -> dict[str, str]:
        h = {"Content-Type": "application/json", "Accept": "application/json"}
        h.update(self._extra_headers)
        if self._api_key:
            h["Authorization"] = f"Bearer {self._api_key}"
        return h

    @property
    def _url(self) -> str:
        base, _ = self._require_route()
        return f"{base}/chat/completions"

    def _httpx_timeout(self) -> httpx.Timeout:
        return httpx.Timeout(self.timeout, connect=min(self.timeout, 10.0))

    # --- errors and retries ------------------------------------------------------------

    def _status_error(self, status: int, headers: httpx.Headers, content: bytes) -> LLMError:
        detail = ""
        try:
            data = json.loads(content)
        except (json.JSONDecodeError, UnicodeDecodeError):
            data = None
        if isinstance(data, Mapping):
            err = data.get("error")
            msg = err.get("message") if isinstance(err, Mapping) else err or data.get("message")
            detail = str(msg) if msg else ""
        elif content:
            detail = content[:_DETAIL_CHARS].decode("utf-8", "replace")
        detail = self._scrub(detail.strip())[:_DETAIL_CHARS]
        suffix = f": {detail}" if detail else ""
        request_id = headers.get("x-request-id")
        where = _safe_url(self._url)
        if status in (401, 403):
            return LLMAuthError(
                f"auth failed: {where} returned {status}{suffix}. Check the API key "
                f"(api_key=, {ENV_API_KEY}, or {ENV_DEEPSEEK_API_KEY} for DeepSeek)",
                reason="auth failed",
                status=status,
                request_id=request_id,
            )
        return LLMProviderError(
            f"provider returned {status}{suffix} ({where})",
            reason=f"provider returned {status}",
            status=status,
            retry_after=_retry_after(headers, time.time()),
            request_id=request_id,
        )

    def _timeout_error(self) -> LLMTimeout:
        return LLMTimeout(
            f"timeout: no complete answer from {_safe_url(self._url)} within {self.timeout:g} s",
            reason="timeout",
        )

    def _unreachable(self, exc: Exception) -> LLMProviderError:
        name = type(exc).__name__
        return LLMProviderError(
            f"provider unreachable: {name} for {_safe_url(self._url)}",
            reason=f"provider unreachable: {name}",
        )

    def _retry_delay(self, err: LLMError, attempt: int) -> float | None:
        """Seconds to wait before the next attempt, or None to give up with ``err``."""
        if attempt > self.max_retries:
            return None
        if isinstance(err, LLMTimeout):
            pass
        elif isinstance(err, LLMProviderError):
            status = err.status
            if status is not None and status not in _RETRY_STATUSES and status < 500:
                return None
        else:
            return None
        if err.retry_after is not None:
            return err.retry_after if err.retry_after <= self.retry_after_cap else None
        ceiling = min(self.backoff_cap, self.backoff_base * 2.0 ** (attempt - 1))
        return ceiling / 2 + self._rng.random() * ceiling / 2

    def _giving_up(self, err: LLMError, attempt: int) -> LLMError:
        if attempt > 1:
            err.args = (f"{err.args[0]} (after {attempt} attempts)",)
        _log.debug("giving up after %d attempt(s): %s", attempt, err.reason)
        return err

    def _wait(self, delay: float, cancel: threading.Event | None) -> None:
        _log.debug("retrying in %.2f s", delay)
        if self._sleep is not None:
            self._sleep(delay)
        elif cancel is not None:
            cancel.wait(delay)
        else:
            time.sleep(delay)
        _check_cancel(cancel)

    async def _await(self, delay: float, cancel: threading.Event | None) -> None:
        _log.debug("retrying in %.2f s", delay)
        if self._asleep is not None:
            await self._asleep(delay)
        else:
            await asyncio.sleep(delay)
        _check_cancel(cancel)

    # --- sync transport ----------------------------------------------------------------

    def _sync_client(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                self._client = httpx.Client(
                    transport=self._sync_transport, timeout=self._httpx_timeout()
                )
            return self._client

    def _post(self, body: dict[str, Any], cancel: threading.Event | None) -> tuple[Any, int]:
        """POST with retries; the decoded JSON body and the number of attempts."""
        client = self._sync_client()
        payload = json.dumps(body, ensure_ascii=False).encode()
        attempt = 0
        while True:
            attempt += 1
            _check_cancel(cancel)
            err: LLMError
            try:
                status, headers, content = self._send_sync(client, payload, cancel)
            except httpx.TimeoutException:
                err = self._timeout_error()
            except httpx.TransportError as exc:
                err = self._unreachable(exc)
            else:
                _log.debug("POST %s -> %d (attempt %d)", _safe_url(self._url), status, attempt)
                if status < 300:
                    return self._decode(content), attempt
                err = self._status_error(status, headers, content)
            delay = self._retry_delay(err, attempt)
            if delay is None:
                raise self._giving_up(err, attempt)
            self._wait(delay, cancel)

    def _send_sync(
        self, client: httpx.Client, payload: bytes, cancel: threading.Event | None
    ) -> tuple[int, httpx.Headers, bytes]:
        deadline = time.monotonic() + self.timeout
        request = client.build_request("POST", self._url, content=payload, headers=self._headers())
        response = client.send(request, stream=True)
        try:
            parts: list[bytes] = []
            for part in response.iter_bytes():
                parts.append(part)
                _check_cancel(cancel)
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout("deadline", request=request)
            return response.status_code, response.headers, b"".join(parts)
        finally:
            response.close()

    def _decode(self, content: bytes) -> Any:
        try:
            return json.loads(content)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise LLMProviderError(
                f"provider returned a body that is not JSON from {_safe_url(self._url)}",
                reason="provider returned an invalid response",
            ) from None

    def _completion(self, data: Any, attempts: int) -> ChatResult:
        choices = data.get("choices") if isinstance(data, Mapping) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
            raise LLMProviderError(
                f"provider returned a response without choices from {_safe_url(self._url)}",
                reason="provider returned an invalid response",
            )
        assert isinstance(data, Mapping)
        choice = choices[0]
        msg = choice.get("message") if isinstance(choice.get("message"), Mapping) else {}
        assert isinstance(msg, Mapping)
        content = msg.get("content")
        if isinstance(content, list):
            content = "".join(
                p.get("text", "")
                for p in content
                if isinstance(p, Mapping) and p.get("type") == "text"
            )
        reasoning = msg.get("reasoning_content") or msg.get("reasoning") or ""
        calls = []
        for i, tc in enumerate(msg.get("tool_calls") or []):
            if not isinstance(tc, Mapping):
                continue
            fn = tc.get("function") if isinstance(tc.get("function"), Mapping) else {}
            assert isinstance(fn, Mapping)
            args = fn.get("arguments")
            calls.append(
                ToolCall(
                    id=tc["id"] if isinstance(tc.get("id"), str) and tc["id"] else _new_call_id(i),
                    name=str(fn.get("name") or ""),
                    arguments=args if isinstance(args, str) else json.dumps(args or {}),
                )
            )
        finish = choice.get("finish_reason")
        return ChatResult(
            text=content if isinstance(content, str) else "",
            reasoning=reasoning if isinstance(reasoning, str) else "",
            tool_calls=tuple(calls),
            finish_reason=finish if isinstance(finish, str) else "stop",
            usage=Usage.from_openai(data.get("usage")),
            model=str(data.get("model") or self._model or ""),
            provider=self._provider,
            request_id=data.get("id") if isinstance(data.get("id"), str) else None,
            attempts=attempts,
        )

    # --- public sync API ---------------------------------------------------------------

    def chat(
        self,
        messages: Messages,
        *,
        max_tokens: int | None = None,
        temperature: float = 0.0,
        reasoning_effort: ReasoningEffort = "off",
        stop: Sequence[str] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        max_chars_per_input: int | None = None,
        cancel: threading.Event | None = None,
        json_mode: bool = False,
    ) -> ChatResult:
        """One chat completion. Raises ``LLMError`` subclasses.

        ``messages`` is a user text or OpenAI-format messages (e.g. ``session.wire()``);
        ``max_chars_per_input`` caps each message's text, keeping the tail (default: the
        object's). ``cancel`` is checked before each attempt, during backoff and between
        received chunks (a blocked socket read ends at the timeout).
        """
        self._require_route()
        body = self._body(
            self._prepare(messages, self._cap(max_chars_per_input)),
            max_tokens=max_tokens,
            temperature=temperature,
            reasoning_effort=reasoning_effort,
            stop=stop,
            tools=tools,
            stream=False,
            json_mode=json_mode,
        )
        return self._complete(body, cancel)

    def _complete(self, body: dict[str, Any], cancel: threading.Event | None) -> ChatResult:
        data, attempts = self._post(body, cancel)
        result = self._completion(data, attempts)
        self._record(result.usage)
        return result

    def structured(
        self,
        messages: Messages,
        schema: type[M],
        *,
        max_tokens: int | None = None,
        temperature: float = 0.0,
        reasoning_effort: ReasoningEffort = "off",
        max_chars_per_input: int | None = None,
        cancel: threading.Event | None = None,
        json_mode: bool = False,
    ) -> Structured[M]:
        """Ask for JSON matching ``schema`` (a pydantic model) and validate it.

        Never raises for a model failure: the result is ``ok`` with a typed ``value``, or
        degraded with the ladder's reason. The schema is appended to the last user message
        (after the ``max_chars_per_input`` cut, so it is never cut); ``json_mode`` also sends
        ``response_format: {"type": "json_object"}``.
        """
        if not self.configured:
            _log.warning("structured call degraded: %s", NO_ROUTE)
            return Structured.failed(LLMNotConfigured(NO_ROUTE, reason=NO_ROUTE))
        prepared = _with_schema(self._prepare(messages, self._cap(max_chars_per_input)), schema)
        try:
            body = self._body(
                prepared,
                max_tokens=max_tokens,
                temperature=temperature,
                reasoning_effort=reasoning_effort,
                stop=None,
                tools=None,
                stream=False,
                json_mode=json_mode,
            )
            result = self._complete(body, cancel)
        except LLMError as exc:
            _log.warning("structured call degraded: %s", exc.reason)
            return Structured.failed(exc)
        out = parse_structured(result, schema)
        if not out.ok:
            _log.warning("structured call degraded: %s", out.degraded_reason)
        return out

    def stream(
        self,
        messages: Messages,
        *,
        max_tokens: int | None = None,
        temperature: float = 0.0,
        reasoning_effort: ReasoningEffort = "off",
        stop: Sequence[str] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        max_chars_per_input: int | None = None,
        cancel: threading.Event | None = None,
    ) -> ChatStream:
        """A streamed completion (server-sent events). Iterate it for deltas; ``.result`` is
        the assembled ``ChatResult``. Failures before the first byte are retried like
        ``chat``; a failure mid-stream raises."""
        self._require_route()
        body = self._body(
            self._prepare(messages, self._cap(max_chars_per_input)),
            max_tokens=max_tokens,
            temperature=temperature,
            reasoning_effort=reasoning_effort,
            stop=stop,
            tools=tools,
            stream=True,
        )
        assembler = _Assembler(self._provider, self._model or "")
        return ChatStream(self._stream_sync(body, cancel, assembler), assembler)

    def _stream_sync(
        self, body: dict[str, Any], cancel: threading.Event | None, asm: _Assembler
    ) -> Iterator[Delta]:
        client = self._sync_client()
        payload = json.dumps(body, ensure_ascii=False).encode()
        attempt = 0
        while True:
            attempt += 1
            _check_cancel(cancel)
            deadline = time.monotonic() + self.timeout
            request = client.build_request(
                "POST", self._url, content=payload, headers=self._headers()
            )
            err: LLMError
            try:
                response = client.send(request, stream=True)
            except httpx.TimeoutException:
                err = self._timeout_error()
            except httpx.TransportError as exc:
                err = self._unreachable(exc)
            else:
                try:
                    if response.status_code >= 300:
                        err = self._status_error(
                            response.status_code, response.headers, response.read()
                        )
                    else:
                        asm.attempts = attempt
                        try:
                            for chunk in _sse_payloads(response.iter_lines()):
                                _check_cancel(cancel)
                                if time.monotonic() > deadline:
                                    raise self._timeout_error()
                                if isinstance(chunk, Mapping):
                                    yield from asm.feed(chunk)
                        except httpx.TimeoutException:
                            raise self._timeout_error() from None
                        except httpx.TransportError as exc:
                            raise self._unreachable(exc) from None
                        self._record(asm.usage)
                        return
                finally:
                    response.close()
            delay = self._retry_delay(err, attempt)
            if delay is None:
                raise self._giving_up(err, attempt)
            self._wait(delay, cancel)

    # --- public async API --------------------------------------------------------------

    async def achat(
        self,
        messages: Messages,
        *,
        max_tokens: int | None = None,
        temperature: float = 0.0,
        reasoning_effort: ReasoningEffort = "off",
        stop: Sequence[str] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        max_chars_per_input: int | None = None,
        cancel: threading.Event | None = None,
        json_mode: bool = False,
    ) -> ChatResult:
        """The async ``chat``. Cancelling the task cancels the request cleanly
        (``asyncio.CancelledError`` propagates); ``cancel`` works as in ``chat``."""
        self._require_route()
        body = self._body(
            self._prepare(messages, self._cap(max_chars_per_input)),
            max_tokens=max_tokens,
            temperature=temperature,
            reasoning_effort=reasoning_effort,
            stop=stop,
            tools=tools,
            stream=False,
            json_mode=json_mode,
        )
        return await self._acomplete(body, cancel)

    async def _acomplete(self, body: dict[str, Any], cancel: threading.Event | None) -> ChatResult:
        payload = json.dumps(body, ensure_ascii=False).encode()
        async with httpx.AsyncClient(
            transport=self._async_transport, timeout=self._httpx_timeout()
        ) as client:
            attempt = 0
            while True:
                attempt += 1
                _check_cancel(cancel)
                err: LLMError
                try:
                    async with asyncio.timeout(self.timeout):
                        response = await client.post(
                            self._url, content=payload, headers=self._headers()
                        )
                        _check_cancel(cancel)
                except (TimeoutError, httpx.TimeoutException):
                    err = self._timeout_error()
                except httpx.TransportError as exc:
                    err = self._unreachable(exc)
                else:
                    if response.status_code < 300:
                        result = self._completion(self._decode(response.content), attempt)
                        self._record(result.usage)
                        return result
                    err = self._status_error(
                        response.status_code, response.headers, response.content
                    )
                delay = self._retry_delay(err, attempt)
                if delay is None:
                    raise self._giving_up(err, attempt)
                await self._await(delay, cancel)

    async def astructured(
        self,
        messages: Messages,
        schema: type[M],
        *,
        max_tokens: int | None = None,
        temperature: float = 0.0,
        reasoning_effort: ReasoningEffort = "off",
        max_chars_per_input: int | None = None,
        cancel: threading.Event | None = None,
        json_mode: bool = False,
    ) -> Structured[M]:
        """The async ``structured`` (task cancellation still propagates)."""
        if not self.configured:
            _log.warning("structured call degraded: %s", NO_ROUTE)
            return Structured.failed(LLMNotConfigured(NO_ROUTE, reason=NO_ROUTE))
        prepared = _with_schema(self._prepare(messages, self._cap(max_chars_per_input)), schema)
        try:
            body = self._body(
                prepared,
                max_tokens=max_tokens,
                temperature=temperature,
                reasoning_effort=reasoning_effort,
                stop=None,
                tools=None,
                stream=False,
                json_mode=json_mode,
            )
            result = await self._acomplete(body, cancel)
        except LLMError as exc:
            _log.warning("structured call degraded: %s", exc.reason)
            return Structured.failed(exc)
        out = parse_structured(result, schema)
        if not out.ok:
            _log.warning("structured call degraded: %s", out.degraded_reason)
        return out

    def astream(
        self,
        messages: Messages,
        *,
        max_tokens: int | None = None,
        temperature: float = 0.0,
        reasoning_effort: ReasoningEffort = "off",
        stop: Sequence[str] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        max_chars_per_input: int | None = None,
        cancel: threading.Event | None = None,
    ) -> AsyncChatStream:
        """The async ``stream``: ``async for delta in llm.astream(...)``."""
        self._require_route()
        body = self._body(
            self._prepare(messages, self._cap(max_chars_per_input)),
            max_tokens=max_tokens,
            temperature=temperature,
            reasoning_effort=reasoning_effort,
            stop=stop,
            tools=tools,
            stream=True,
        )
        assembler = _Assembler(self._provider, self._model or "")
        return AsyncChatStream(self._stream_async(body, cancel, assembler), assembler)

    async def _stream_async(
        self, body: dict[str, Any], cancel: threading.Event | None, asm: _Assembler
    ) -> AsyncIterator[Delta]:
        payload = json.dumps(body, ensure_ascii=False).encode()
        async with httpx.AsyncClient(
            transport=self._async_transport, timeout=self._httpx_timeout()
        ) as client:
            attempt = 0
            while True:
                attempt += 1
                _check_cancel(cancel)
                deadline = time.monotonic() + self.timeout
                request = client.build_request(
                    "POST", self._url, content=payload, headers=self._headers()
                )
                err: LLMError
                try:
                    response = await client.send(request, stream=True)
                except httpx.TimeoutException:
                    err = self._timeout_error()
                except httpx.TransportError as exc:
                    err = self._unreachable(exc)
                else:
                    try:
                        if response.status_code >= 300:
                            err = self._status_error(
                                response.status_code, response.headers, await response.aread()
                            )
                        else:
                            asm.attempts = attempt
                            try:
                                async for line in response.aiter_lines():
                                    _check_cancel(cancel)
                                    if time.monotonic() > deadline:
                                        raise self._timeout_error()
                                    for chunk in _sse_payloads([line]):
                                        if isinstance(chunk, Mapping):
                                            for delta in asm.feed(chunk):
                                                yield delta
                                    if line.strip() == "data: [DONE]":
                                        break
                            except httpx.TimeoutException:
                                raise self._timeout_error() from None
                            except httpx.TransportError as exc:
                                raise self._unreachable(exc) from None
                            self._record(asm.usage)
                            return
                    finally:
                        await response.aclose()
                delay = self._retry_delay(err, attempt)
                if delay is None:
                    raise self._giving_up(err, attempt)
                await self._await(delay, cancel)


def _check_cancel(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise LLMCancelled("cancelled: the call's cancel event was set", reason="cancelled")


def _redact_call(call: Any, redact: Callable[[str], str]) -> Any:
    if not isinstance(call, Mapping):
        return call
    fn = call.get("function")
    if isinstance(fn, Mapping) and isinstance(fn.get("arguments"), str):
        return {**call, "function": {**fn, "arguments": redact(fn["arguments"])}}
    return dict(call)


def _with_schema(messages: list[dict[str, Any]], schema: type[BaseModel]) -> list[dict[str, Any]]:
    instruction = _SCHEMA_INSTRUCTION + json.dumps(
        schema.model_json_schema(), separators=(",", ":"), ensure_ascii=False
    )
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user" and isinstance(messages[i].get("content"), str):
            out = list(messages)
            out[i] = {**messages[i], "content": f"{messages[i]['content']}\n\n{instruction}"}
            return out
    return [*messages, {"role": "user", "content": instruction}]
