"""The OpenAI-compatible wire format, without HTTP: the request body a call sends, and the
``ChatResult`` read back from a completion or assembled from streamed chunks."""

from __future__ import annotations

import codecs
import json
import re
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel

from ..errors import InvalidArgument, LLMProviderError
from ..session.kernel import truncate_keep_tail
from ._base import ChatResult, Delta, Messages, ToolCall, Usage
from ._limits import TooDeep, clean_text, loads
from ._options import CallOptions

ENV_BASE_URL = "CTXSDK_LLM_BASE_URL"
ENV_MODEL = "CTXSDK_LLM_MODEL"
ENV_API_KEY = "CTXSDK_LLM_API_KEY"
ENV_DEEPSEEK_API_KEY = "DEEPSEEK_API_KEY"
DETAIL_CHARS = 300
_SCHEMA_INSTRUCTION = (
    "Answer with one JSON object only (no prose, no code fence) that validates against "
    "this JSON Schema:\n"
)


def is_deepseek(base_url: str) -> bool:
    host = urlsplit(base_url).hostname or ""
    return host == "deepseek.com" or host.endswith(".deepseek.com")


def safe_url(url: str) -> str:
    """The URL without userinfo, query or fragment: what may appear in logs, errors, traces."""
    parts = urlsplit(url)
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


# --- the request ---------------------------------------------------------------------------


def prepare_messages(
    messages: Messages, max_chars: int | None, redact: Callable[[str], str] | None
) -> list[dict[str, Any]]:
    """Copy the messages, redact every text, cap each message's text keeping the tail."""
    raw: Iterable[Any] = (
        [{"role": "user", "content": messages}] if isinstance(messages, str) else messages
    )
    red = redact or (lambda s: s)
    out: list[dict[str, Any]] = []
    for i, msg in enumerate(raw):
        if not isinstance(msg, Mapping):
            raise InvalidArgument(
                f"messages[{i}] is a {type(msg).__name__}, not a message: pass a text or "
                f'OpenAI-format messages such as {{"role": "user", "content": "..."}}'
            )
        m = dict(msg)
        content = m.get("content")
        if isinstance(content, str):
            m["content"] = truncate_keep_tail(red(content), max_chars)
        elif isinstance(content, list):
            m["content"] = [
                {**p, "text": truncate_keep_tail(red(p["text"]), max_chars)}
                if isinstance(p, Mapping) and isinstance(p.get("text"), str)
                else p
                for p in content
            ]
        if isinstance(m.get("reasoning_content"), str):
            m["reasoning_content"] = red(m["reasoning_content"])
        calls = m.get("tool_calls")
        if isinstance(calls, list):
            m["tool_calls"] = [_redact_call(c, red) for c in calls]
        out.append(m)
    return out


def _redact_call(call: Any, redact: Callable[[str], str]) -> Any:
    if not isinstance(call, Mapping):
        return call
    fn = call.get("function")
    if isinstance(fn, Mapping) and isinstance(fn.get("arguments"), str):
        return {**call, "function": {**fn, "arguments": redact(fn["arguments"])}}
    return dict(call)


def with_schema(messages: list[dict[str, Any]], schema: type[BaseModel]) -> list[dict[str, Any]]:
    """The messages with ``schema`` appended to the last user text (after any cut)."""
    instruction = _SCHEMA_INSTRUCTION + json.dumps(
        schema.model_json_schema(), separators=(",", ":"), ensure_ascii=False
    )
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user" and isinstance(messages[i].get("content"), str):
            out = list(messages)
            out[i] = {**messages[i], "content": f"{messages[i]['content']}\n\n{instruction}"}
            return out
    return [*messages, {"role": "user", "content": instruction}]


def request_body(
    messages: list[dict[str, Any]],
    options: CallOptions,
    *,
    model: str,
    deepseek: bool,
    stream: bool,
) -> dict[str, Any]:
    """The ``/chat/completions`` body for resolved ``options`` (``max_tokens`` set)."""
    body: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "max_tokens": options.max_tokens,
        "temperature": options.temperature,
    }
    if options.stop:
        body["stop"] = list(options.stop)
    if options.tools:
        body["tools"] = [dict(t) for t in options.tools]
    effort = options.reasoning_effort
    if deepseek:
        body["thinking"] = {"type": "disabled" if effort == "off" else "enabled"}
    if effort != "off":
        body["reasoning_effort"] = effort
    if options.json_mode:
        body["response_format"] = {"type": "json_object"}
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


def encode_body(body: Mapping[str, Any]) -> bytes:
    """The request bytes: UTF-8 JSON, any lone surrogate in a text sent as U+FFFD (a
    ``str`` may hold one, e.g. from a reply decoded elsewhere; it cannot be encoded)."""
    return clean_text(json.dumps(body, ensure_ascii=False)).encode()


# --- the answer ----------------------------------------------------------------------------


def error_detail(content: bytes) -> str:
    """The provider's error message in an error response body, unscrubbed and uncut."""
    try:
        data = loads(content)
    except (ValueError, UnicodeDecodeError):  # not JSON, or nested too deep
        data = None
    if isinstance(data, Mapping):
        err = data.get("error")
        msg = err.get("message") if isinstance(err, Mapping) else err or data.get("message")
        return str(msg) if msg else ""
    return content[:DETAIL_CHARS].decode("utf-8", "replace") if content else ""


def parse_completion(
    content: bytes, *, attempts: int, model: str, provider: str, where: str
) -> ChatResult:
    """The ``ChatResult`` of a ``chat.completion`` body; ``LLMProviderError`` when the body is
    not one (``where``: the safe URL, for the message)."""
    try:
        data = loads(content)
    except TooDeep as exc:
        raise LLMProviderError(
            f"provider returned {exc} from {where}",
            reason="provider returned an invalid response",
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise LLMProviderError(
            f"provider returned a body that is not JSON from {where}",
            reason="provider returned an invalid response",
        ) from None
    choices = data.get("choices") if isinstance(data, Mapping) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise LLMProviderError(
            f"provider returned a response without choices from {where}",
            reason="provider returned an invalid response",
        )
    choice = choices[0]
    msg = choice.get("message") if isinstance(choice.get("message"), Mapping) else {}
    assert isinstance(msg, Mapping)
    content_ = msg.get("content")
    if isinstance(content_, list):
        content_ = "".join(
            p.get("text", "")
            for p in content_
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
        text=content_ if isinstance(content_, str) else "",
        reasoning=reasoning if isinstance(reasoning, str) else "",
        tool_calls=tuple(calls),
        finish_reason=finish if isinstance(finish, str) else "stop",
        usage=Usage.from_openai(data.get("usage")),
        model=str(data.get("model") or model),
        provider=provider,
        request_id=data.get("id") if isinstance(data.get("id"), str) else None,
        attempts=attempts,
    )


def _new_call_id(index: int) -> str:
    return f"call_{index:02d}_{uuid.uuid4().hex[:16]}"


def sse_chunk(line: str) -> Any:
    """The JSON payload of one server-sent-events line: ``None`` for a line that carries none
    (comments, ``event:``, ``id:``, blank separators), ``DONE`` for ``data: [DONE]``."""
    if not line.startswith("data:"):
        return None
    payload = line[5:].strip()
    if payload == "[DONE]":
        return DONE
    if not payload:
        return None
    try:
        return loads(payload)
    except TooDeep as exc:
        detail = str(exc)
    except json.JSONDecodeError as exc:
        detail = f"not JSON: {exc.msg}"
    raise LLMProviderError(
        f"provider streamed a line that is {detail}",
        reason="provider returned an invalid stream",
    )


DONE = object()
"""What ``sse_chunk`` returns for the stream's last line."""

_NEWLINE = re.compile(r"\r\n|\r|\n")


class Lines:
    """Splits a stream's bytes into lines as they arrive (UTF-8, an invalid byte read as
    U+FFFD; a line ends at CRLF, LF or CR, as server-sent events do)."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._tail = ""

    def feed(self, data: bytes) -> list[str]:
        """The lines that ``data`` completes."""
        lines = _NEWLINE.split(self._tail + self._decoder.decode(data))
        self._tail = lines.pop()
        return lines

    def end(self) -> list[str]:
        """The last line, when the stream ended without a newline."""
        tail, self._tail = self._tail + self._decoder.decode(b"", final=True), ""
        return [tail] if tail else []


class Assembler:
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
                f"provider sent an error mid-stream: {str(err.get('message', ''))[:DETAIL_CHARS]}",
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
