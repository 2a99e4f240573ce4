"""A small real OpenAI-compatible server on loopback, for tests that need one without a model.

It serves ``POST /v1/chat/completions`` over real HTTP (a thread, port 0, stopped on exit),
whole or streamed (server-sent events), and answers by a rule a test can reason about:

- ``Authorization: Bearer wrong`` gets a 401 (``bad key``);
- a request whose tools include ``context_search`` and with no tool result after its last user message
  gets one call to ``context_search`` with the first word of the last user message longer than
  six letters as the query (so an agent turn has a real tool step);
- a request that asks for JSON (``response_format`` or a schema in the prompt) gets ``{}``
  unless a reply is queued;
- anything else gets ``ok: <the last user text>``;
- ``POST /v1/embeddings`` answers each input with a deterministic vector (hashed word counts),
  so a retriever can rank with a real remote embedder; with ``embeddings`` set to ``"500"``
  it answers a server error instead, with ``"garbage"`` a 200 whose body is not an embeddings
  answer, and with ``"slow"`` it waits ``delay`` seconds before answering (a timeout).

``replies`` (a list) queues exact reply texts, taken first. Every request body is kept in
``requests``.
"""

from __future__ import annotations

import json
import re
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _vector(text: str, dim: int = 64) -> list[float]:
    """A deterministic embedding: hashed word counts (stemmed to 5 letters), unit length."""
    v = [0.0] * dim
    for w in re.findall(r"[a-z0-9]+", str(text).lower()):
        v[zlib.crc32(w[:5].encode()) % dim] += 1.0
    n = sum(x * x for x in v) ** 0.5 or 1.0
    return [x / n for x in v]


@dataclass
class OpenAIServer:
    url: str
    model: str = "loopback-model"
    replies: list[str] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    embeddings: str = "ok"  # "ok", "500", "garbage" or "slow"
    delay: float = 2.0


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    for m in reversed(messages):
        if m.get("role") == "user":
            content = m.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _answer(server: OpenAIServer, body: dict[str, Any]) -> dict[str, Any]:
    """The assistant message for one request (``content`` and maybe ``tool_calls``)."""
    messages = body.get("messages") or []
    tools = {t.get("function", {}).get("name") for t in body.get("tools") or []}
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    answered = any(m.get("role") == "tool" for m in messages[last_user + 1 :])
    if server.replies:
        return {"role": "assistant", "content": server.replies.pop(0)}
    text = _last_user_text(messages)
    if "context_search" in tools and not answered:
        words = re.findall(r"[A-Za-z]{7,}", text)
        args = json.dumps({"query": words[0].lower() if words else text[:20], "limit": 3})
        call = {
            "id": f"call_{len(server.requests)}",
            "type": "function",
            "function": {"name": "context_search", "arguments": args},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    if body.get("response_format") or "JSON" in text:
        return {"role": "assistant", "content": "{}"}
    return {"role": "assistant", "content": f"ok: {text[:200]}"}


def _completion(server: OpenAIServer, msg: dict[str, Any]) -> dict[str, Any]:
    finish = "tool_calls" if msg.get("tool_calls") else "stop"
    return {
        "id": f"chatcmpl-{len(server.requests)}",
        "object": "chat.completion",
        "model": server.model,
        "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12},
    }


def _chunks(completion: dict[str, Any]) -> Iterator[dict[str, Any]]:
    choice = completion["choices"][0]
    msg = choice["message"]
    delta: dict[str, Any] = {"role": "assistant", "content": msg.get("content") or ""}
    if msg.get("tool_calls"):
        delta["tool_calls"] = [{"index": i, **c} for i, c in enumerate(msg["tool_calls"])]
    base = {k: completion[k] for k in ("id", "model")} | {"object": "chat.completion.chunk"}
    yield base | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    yield base | {
        "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}],
        "usage": completion["usage"],
    }


@contextmanager
def openai_server() -> Iterator[OpenAIServer]:
    """Start the server on 127.0.0.1 (a free port); stop it when the block ends."""
    box: list[OpenAIServer] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            pass

        def _send(self, status: int, payload: bytes, ctype: str) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up waiting (a timeout test)

        def do_POST(self) -> None:
            server = box[0]
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            server.requests.append(body)
            if self.path.endswith("/embeddings"):
                if server.embeddings == "500":
                    self._send(500, b'{"error": {"message": "down"}}', "application/json")
                    return
                if server.embeddings == "garbage":
                    self._send(200, b'{"data": "not vectors"}', "application/json")
                    return
                if server.embeddings == "slow":
                    time.sleep(server.delay)
                texts = body.get("input") or []
                data = [{"index": i, "embedding": _vector(t)} for i, t in enumerate(texts)]
                self._send(200, json.dumps({"data": data}).encode(), "application/json")
                return
            if not self.path.endswith("/chat/completions"):
                self._send(404, b'{"error": {"message": "not found"}}', "application/json")
                return
            if self.headers.get("Authorization") == "Bearer wrong":
                self._send(401, b'{"error": {"message": "bad key"}}', "application/json")
                return
            completion = _completion(server, _answer(server, body))
            if not body.get("stream"):
                self._send(200, json.dumps(completion).encode(), "application/json")
                return
            events = b"".join(
                b"data: " + json.dumps(c).encode() + b"\n\n" for c in _chunks(completion)
            )
            self._send(200, events + b"data: [DONE]\n\n", "text/event-stream")

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        box.append(OpenAIServer(f"http://127.0.0.1:{httpd.server_address[1]}/v1"))
        yield box[0]
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(10)
