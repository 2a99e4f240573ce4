"""The model seam keeps its deadlines and its limits, against real servers on loopback.

``timeout=`` is one deadline for the whole call; a server that drips its headers or streams
only keep-alives must not hold a call past it. Each server here is a real TCP server on
127.0.0.1 (port 0) in a thread, stopped in ``finally``; each call runs under a watchdog that
fails the test if it does not return. No wall-clock duration is asserted.

Body size caps, JSON nesting limits and lone surrogates go through ``httpx.MockTransport``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import socketserver
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from ctxsdk.errors import InvalidArgument, LLMOutputError, LLMProviderError, LLMTimeout
from ctxsdk.llm import LLM, TraceEvent
from ctxsdk.llm._deadline import DeadlineBackend, install
from ctxsdk.llm._limits import MAX_JSON_DEPTH, MAX_RESPONSE_BYTES, clean_text
from ctxsdk.llm._wire import Lines
from ctxsdk.session.kernel import extract_json

WATCHDOG = 30.0  # seconds a call may take before the test calls it hung (never a timing claim)

# --- real servers ----------------------------------------------------------------------------

Behaviour = Callable[[Any, threading.Event], None]


def _read_request(rfile: Any) -> None:
    """Read one HTTP request (headers, then a Content-Length body) off the socket."""
    length = 0
    while True:
        line = rfile.readline(65537)
        if not line or line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("latin-1").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    if length:
        rfile.read(length)


@dataclass
class Server:
    url: str
    connections: list[int] = field(default_factory=list)


@contextmanager
def serve(behaviour: Behaviour) -> Iterator[Server]:
    """A real HTTP/1.1 server on 127.0.0.1 that answers every request with ``behaviour``
    (which writes raw bytes until told to stop or the client goes away)."""
    stop = threading.Event()
    server_box: list[Server] = []

    class Handler(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            server_box[0].connections.append(1)
            try:
                _read_request(self.rfile)
                behaviour(self.wfile, stop)
            except OSError:  # the client hung up: that is how these answers end
                pass

    tcp = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    tcp.daemon_threads = True
    thread = threading.Thread(target=tcp.serve_forever, daemon=True)
    thread.start()
    try:
        server_box.append(Server(f"http://127.0.0.1:{tcp.server_address[1]}/v1"))
        yield server_box[0]
    finally:
        stop.set()
        tcp.shutdown()
        tcp.server_close()
        thread.join(WATCHDOG)


def drip_headers(out: Any, stop: threading.Event) -> None:
    """A status line and then one header, one byte every 0.2 s, forever."""
    for byte in itertools.chain(b"HTTP/1.1 200 OK\r\nX-Drip: ", itertools.repeat(ord("a"))):
        if stop.is_set():
            return
        out.write(bytes([byte]))
        out.flush()
        stop.wait(0.2)


SSE_HEADERS = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
    b"Connection: close\r\n\r\n"
)


def keep_alive(beat: bytes) -> Behaviour:
    """200 with SSE headers, then ``beat`` every 0.1 s, forever."""

    def behaviour(out: Any, stop: threading.Event) -> None:
        out.write(SSE_HEADERS)
        out.flush()
        while not stop.is_set():
            out.write(beat)
            out.flush()
            stop.wait(0.1)

    return behaviour


def endless(head: bytes, prefix: bytes) -> Behaviour:
    """``head`` (a status line and headers), ``prefix``, then ``a`` bytes without end."""

    def behaviour(out: Any, stop: threading.Event) -> None:
        out.write(head + prefix)
        piece = b"a" * 16384
        while not stop.is_set():
            out.write(piece)

    return behaviour


JSON_200 = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
JSON_500 = JSON_200.replace(b"200 OK", b"500 Internal Server Error")

# --- the four ways to call, each under a watchdog -------------------------------------------


def _chat(llm: LLM) -> Any:
    return llm.chat("hi")


def _stream(llm: LLM) -> Any:
    return [d.text for d in llm.stream("hi")]


def _achat(llm: LLM) -> Any:
    return asyncio.run(llm.achat("hi"))


def _astream(llm: LLM) -> Any:
    async def main() -> list[str]:
        return [d.text async for d in llm.astream("hi")]

    return asyncio.run(main())


PATHS = {"chat": _chat, "stream": _stream, "achat": _achat, "astream": _astream}


def outcome(fn: Callable[[], Any]) -> BaseException | None:
    """Run ``fn`` in a thread; its exception (None if it returned). Fails the test if it has
    not returned within the watchdog's generous limit."""
    box: dict[str, BaseException | None] = {"error": None}
    done = threading.Event()

    def run() -> None:
        try:
            fn()
        except BaseException as exc:
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, daemon=True).start()
    if not done.wait(WATCHDOG):
        pytest.fail(f"the call did not return within {WATCHDOG:.0f} s: its deadline did not hold")
    return box["error"]


def llm_for(server: Server, **kw: Any) -> LLM:
    kw.setdefault("timeout", 1.0)
    return LLM(server.url, "m", env={}, **kw)


# --- deadlines -----------------------------------------------------------------------------


@pytest.mark.parametrize("path", PATHS)
def test_headers_dripped_one_byte_at_a_time_end_at_the_deadline(path: str) -> None:
    events: list[TraceEvent] = []
    with serve(drip_headers) as server:
        llm = llm_for(server, tracer=events.append)  # max_retries=3: the deadline is total
        err = outcome(lambda: PATHS[path](llm))
        llm.close()
        assert isinstance(err, LLMTimeout), repr(err)
        assert err.reason == "timeout" and "within 1 s" in str(err)
        assert len(server.connections) == 1  # no retry starts past the deadline
    assert [e.kind for e in events] == ["request", "error"]
    assert events[-1].reason == "timeout"


@pytest.mark.parametrize("beat", [b": keep-alive\n\n", b"\n"], ids=["comment", "empty-line"])
@pytest.mark.parametrize("path", PATHS)
def test_a_stream_of_keep_alives_ends_at_the_deadline(path: str, beat: bytes) -> None:
    with serve(keep_alive(beat)) as server:
        llm = llm_for(server)
        err = outcome(lambda: PATHS[path](llm))
        llm.close()
        assert isinstance(err, LLMTimeout), repr(err)
        assert len(server.connections) == 1


def test_structured_degrades_with_timeout_against_a_dripping_server() -> None:
    class Answer(BaseModel):
        x: int

    with serve(drip_headers) as server:
        llm = llm_for(server)
        box: list[Any] = []
        assert outcome(lambda: box.append(llm.structured("hi", Answer))) is None
        llm.close()
    assert box[0].degraded_reason == "timeout" and box[0].kind == "timeout"


@pytest.mark.parametrize("path", PATHS)
def test_a_body_over_the_cap_is_refused_while_reading(path: str) -> None:
    if path.endswith("stream"):
        behaviour = endless(SSE_HEADERS, b'data: {"choices": [{"delta": {"content": "')
    else:
        behaviour = endless(JSON_200, b'{"choices": [{"message": {"content": "')
    with serve(behaviour) as server:
        llm = llm_for(server, timeout=20.0, max_response_bytes=64 * 1024)
        err = outcome(lambda: PATHS[path](llm))
        llm.close()
        assert isinstance(err, LLMProviderError), repr(err)
        assert err.reason == "provider returned a response over the size cap"
        assert "65536 byte cap" in str(err) and "max_response_bytes" in str(err)
        assert len(server.connections) == 1  # not retried


def test_an_error_body_over_the_cap_keeps_its_status() -> None:
    with serve(endless(JSON_500, b"overloaded ")) as server:
        llm = llm_for(server, timeout=20.0, max_response_bytes=64 * 1024, max_retries=0)
        err = outcome(lambda: llm.chat("hi"))
        llm.close()
    assert isinstance(err, LLMProviderError), repr(err)
    assert err.status == 500 and err.reason == "provider returned 500"


def test_the_sync_client_keeps_deadlines_on_its_own_transport_only() -> None:
    client = httpx.Client()
    try:
        assert install(client) == 1 and install(client) == 0  # once
        backend = client._transport._pool._network_backend  # type: ignore[attr-defined]
        assert isinstance(backend, DeadlineBackend)
    finally:
        client.close()
    mock = httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(200)))
    with mock:
        assert install(mock) == 0


def test_a_retry_that_would_end_past_the_deadline_is_not_attempted() -> None:
    sleeps: list[float] = []
    answers = iter([httpx.Response(503, headers={"Retry-After": "5"}), httpx.Response(200)])
    llm = LLM(
        "http://model.test/v1",
        "m",
        env={},
        timeout=1.0,
        sleep=sleeps.append,
        transport=httpx.MockTransport(lambda r: next(answers)),
    )
    with pytest.raises(LLMProviderError) as exc:
        llm.chat("hi")
    assert exc.value.status == 503 and sleeps == []
    assert "another would end past the 1 s timeout" in str(exc.value)


def test_max_response_bytes_is_checked() -> None:
    assert LLM("http://x/v1", "m", env={}).max_response_bytes == MAX_RESPONSE_BYTES
    with pytest.raises(InvalidArgument, match="max_response_bytes"):
        LLM("http://x/v1", "m", env={}, max_response_bytes=0)


# --- limits on what a reply may be (MockTransport) -------------------------------------------


def _mock_llm(handler: Callable[[httpx.Request], httpx.Response], **kw: Any) -> LLM:
    return LLM("http://model.test/v1", "m", env={}, transport=httpx.MockTransport(handler), **kw)


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _completion_text(content: str) -> str:
    """A completion body whose content is the JSON text ``content`` (already escaped)."""
    return '{"choices": [{"message": {"content": ' + content + '}, "finish_reason": "stop"}]}'


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 100_000])
def test_json_nested_too_deep_is_a_provider_error(depth: int) -> None:
    body = _completion_text(json.dumps("x")).replace('"x"', _nested(depth))
    llm = _mock_llm(lambda r: httpx.Response(200, text=body))
    with pytest.raises(LLMProviderError, match="nested deeper than") as exc:
        llm.chat("hi")
    assert exc.value.reason == "provider returned an invalid response"
    line = "data: " + '{"choices": [{"delta": {"content": ' + _nested(depth) + "}}]}\n\n"
    llm2 = _mock_llm(lambda r: httpx.Response(200, text=line))
    with pytest.raises(LLMProviderError, match="nested deeper than") as exc:
        list(llm2.stream("hi"))
    assert exc.value.reason == "provider returned an invalid stream"


def test_a_deep_error_body_keeps_its_status() -> None:
    llm = _mock_llm(lambda r: httpx.Response(500, text=_nested(100_000)), max_retries=0)
    with pytest.raises(LLMProviderError) as exc:
        llm.chat("hi")
    assert exc.value.status == 500


def test_a_deep_structured_reply_degrades_as_malformed_json() -> None:
    class Answer(BaseModel):
        x: int

    reply = '{"x": ' + _nested(100_000) + "}"
    llm = _mock_llm(lambda r: httpx.Response(200, text=_completion_text(json.dumps(reply))))
    out = llm.structured("hi", Answer)
    assert out.kind == "malformed-json" and "nested deeper than" in (out.degraded_reason or "")
    with pytest.raises(LLMOutputError, match="nested deeper than"):
        extract_json('{"x": ' + _nested(MAX_JSON_DEPTH) + "}")


def test_a_body_over_the_cap_is_not_retried() -> None:
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return httpx.Response(200, text=_completion_text(json.dumps("a" * 5000)))

    llm = _mock_llm(handler, max_response_bytes=4096, sleep=lambda s: None)
    with pytest.raises(LLMProviderError, match="4096 byte cap"):
        llm.chat("hi")
    assert calls == [1]
    assert _mock_llm(handler, max_response_bytes=8192).chat("hi").text == "a" * 5000


class Recorder:
    """A MockTransport handler answering from a list and keeping every request body."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.bodies: list[bytes] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(request.content)
        text = self.answers.pop(0)
        ctype = "text/event-stream" if text.startswith("data:") else "application/json"
        return httpx.Response(200, text=text, headers={"content-type": ctype})


OK = _completion_text('"fine"')


def test_a_lone_surrogate_in_a_reply_is_replaced_and_the_next_call_works() -> None:
    body = (
        '{"choices": [{"message": {"content": "bad \\ud800 end", "reasoning_content": '
        '"\\udfff", "tool_calls": [{"id": "c1", "function": {"name": "f\\ud801", '
        '"arguments": "{\\"q\\": \\"\\udc00\\"}"}}]}, "finish_reason": "stop"}]}'
    )
    rec = Recorder(body, OK)
    llm = _mock_llm(rec)
    first = llm.chat("hi")
    assert first.text == "bad \ufffd end" and first.reasoning == "\ufffd"
    call = first.tool_calls[0]
    assert call.name == "f\ufffd" and json.loads(call.arguments) == {"q": "\ufffd"}
    json.dumps(first.text, ensure_ascii=False).encode()  # loggable
    again = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": first.text, "reasoning_content": first.reasoning},
    ]
    assert llm.chat([*again, {"role": "user", "content": "go on"}]).text == "fine"
    sent = json.loads(rec.bodies[1].decode("utf-8"))  # valid UTF-8 on the wire
    assert sent["messages"][1]["content"] == "bad \ufffd end"


def test_a_lone_surrogate_in_a_stream_delta_is_replaced() -> None:
    stream = (
        'data: {"choices": [{"delta": {"content": "a\\ud800"}}]}\n\n'
        'data: {"choices": [{"delta": {"content": "b"}, "finish_reason": "stop"}]}\n\n'
        "data: [DONE]\n\n"
    )
    rec = Recorder(stream, OK)
    llm = _mock_llm(rec)
    s = llm.stream("hi")
    assert [d.text for d in s] == ["a\ufffd", "b"]
    assert s.result.text == "a\ufffdb"
    messages = [{"role": "assistant", "content": s.result.text}, {"role": "user", "content": "x"}]
    assert llm.chat(messages).text == "fine"


def test_a_lone_surrogate_in_a_message_is_sent_as_a_replacement() -> None:
    rec = Recorder(OK)
    assert _mock_llm(rec).chat("name: caf\udce9").text == "fine"  # e.g. os.fsdecode's
    sent = json.loads(rec.bodies[0].decode("utf-8"))
    assert sent["messages"][0]["content"] == "name: caf\ufffd"


def test_clean_text_keeps_valid_text() -> None:
    assert clean_text("plain") == "plain"
    assert clean_text("emoji \U0001f600 ok") == "emoji \U0001f600 ok"
    assert clean_text("a\ud83d\ude00") == "a\ufffd\ufffd"  # two lone halves in a str


def test_lines_split_as_server_sent_events_do() -> None:
    lines = Lines()
    assert lines.feed(b"data: 1\r\ndata: 2\rdata: 3\n: ke") == ["data: 1", "data: 2", "data: 3"]
    assert lines.feed(b"ep-alive\n\ncaf\xc3") == [": keep-alive", ""]
    assert lines.feed(b"\xa9 \xff\n") == ["caf\u00e9 \ufffd"]  # a split character, a bad byte
    assert lines.feed(b"data: [DONE]") == []
    assert lines.end() == ["data: [DONE]"] and lines.end() == []
