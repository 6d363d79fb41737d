"""A local HTTP server with the habits of llama.cpp's OpenAI-compatible server.

It answers ``POST /v1/chat/completions`` on 127.0.0.1 with a tiny rule-based
"model", and keeps the real server's quirks that broke footprint:

- a message with ``"content": null`` is refused with HTTP 500 and a body
  naming the bad request (``Failed to parse messages: ...``), as llama.cpp does;
- tools are ignored unless the request sends ``tool_choice``;
- a reply's text ends where one of the request's ``stop`` sequences begins;
- ``"stream": true`` answers server-sent events (text and tool calls in
  pieces, tool calls in the ``shape`` of one real server: ``stream_shapes``),
  with usage in a final chunk only when ``stream_options`` asks (and never
  with ``sends_usage=False``, as some servers do);
- connections are kept alive (HTTP/1.1); each one is counted, and counted
  again when the client closes it.

With ``strict`` it also refuses (HTTP 400, the reason in ``error.message``,
as OpenAI's API and vLLM do) a request whose messages are out of order: an
empty assistant turn, a tool message that does not answer the assistant
message right before it, an assistant's tool call left without its result,
a system message after the first. ``expect`` maps body keys to the values
every request must carry (``max_tokens``, ``stop``…): a request without them
is refused too. Each refusal's message is kept in ``refused``. With ``hang``
it never answers: it waits, as a server generating without end does, until
the client closes the connection (counted in ``abandoned``).

The model calls each offered tool once, in order (all at once, as parallel
calls, with ``parallel``), with arguments from ``ARGUMENTS``, then answers
with every tool result it read. ``endless`` makes every streamed reply send
text forever (until the server's lifetime ends).
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from stream_shapes import call_chunks

LIFETIME_S = 15.0
USAGE = {"prompt_tokens": 17, "completion_tokens": 5, "total_tokens": 22}
ARGUMENTS: dict[str, dict[str, Any]] = {
    "weather": {"city": "Oslo"},
    "to_fahrenheit": {"celsius": 21},
}
NULL_CONTENT_ERROR = {"error": {
    "code": 500, "type": "server_error",
    "message": "Failed to parse messages: [json.exception.type_error.302] type must be "
               "string, but is null; messages = [...]",
}}


@dataclass
class LlamaLike:
    """What the server saw; set ``endless``/``malformed`` to misbehave."""

    port: int = 0
    bodies: list[dict[str, Any]] = field(default_factory=list)
    connections: int = 0
    closed: int = 0
    endless: bool = False
    malformed: bool = False
    chunks_sent: int = 0
    shape: str = "openai"
    sends_usage: bool = True
    parallel: bool = False
    strict: bool = False
    expect: dict[str, Any] = field(default_factory=dict)
    refused: list[str] = field(default_factory=list)
    hang: bool = False
    abandoned: int = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def wait_closed(self, count: int, within_s: float = 3.0) -> int:
        """How many connections the clients closed, once ``count`` or time is up."""
        ends = time.monotonic() + within_s
        while self.closed < count and time.monotonic() < ends:
            time.sleep(0.01)
        return self.closed


def ordering_error(messages: list[dict[str, Any]]) -> str | None:
    """Why a strict server refuses these messages (``None``: it accepts them)."""
    owed: list[str] = []
    for i, m in enumerate(messages):
        role = m.get("role")
        if owed and role != "tool":
            return (f"messages[{i}]: an assistant message with 'tool_calls' must be followed "
                    f"by tool messages responding to each 'tool_call_id'; missing {owed}")
        if role == "system" and i > 0:
            return f"messages[{i}]: a system message must come first"
        if role == "tool":
            if m.get("tool_call_id") not in owed:
                return (f"messages[{i}]: messages with role 'tool' must be a response to a "
                        "preceding message with 'tool_calls'")
            owed.remove(m["tool_call_id"])
        if role == "assistant":
            owed = [c["id"] for c in m.get("tool_calls") or ()]
            if not owed and not m.get("content"):
                return f"messages[{i}]: an assistant message must have content or tool_calls"
    return f"the last message leaves tool calls unanswered: {owed}" if owed else None


def _refusal(llama: LlamaLike, body: dict[str, Any]) -> str | None:
    if llama.strict and (why := ordering_error(body.get("messages", []))):
        return why
    for key, value in llama.expect.items():
        if body.get(key) != value:
            return f"{key} was {body.get(key)!r}; this server expects {value!r}"
    return None


def reply_for(body: dict[str, Any],
              parallel: bool = False) -> tuple[str, list[dict[str, Any]]]:
    """The model's text and tool calls for a request body."""
    messages = body.get("messages", [])
    results = [m["content"] for m in messages if m.get("role") == "tool"]
    offered = [t["function"]["name"] for t in body.get("tools", [])]
    if "tool_choice" not in body or body["tool_choice"] == "none":
        offered = []  # the quirk: no tool_choice, no tools
    called = {c["function"]["name"] for m in messages for c in m.get("tool_calls") or ()}
    pending = [name for name in offered if name not in called]
    if pending:
        return "", [{"id": f"call_{len(called) + 1 + i}", "type": "function", "function": {
            "name": name, "arguments": json.dumps(ARGUMENTS.get(name, {}))}}
            for i, name in enumerate(pending if parallel else pending[:1])]
    if results:
        return "From the tools: " + "; ".join(results), []
    return "I have no tools to use.", []


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        self.server.llama.connections += 1  # type: ignore[attr-defined]

    def finish(self) -> None:
        super().finish()
        self.server.llama.closed += 1  # type: ignore[attr-defined]

    def do_POST(self) -> None:
        llama: LlamaLike = self.server.llama  # type: ignore[attr-defined]
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
        llama.bodies.append(body)
        if llama.malformed or any(
            "content" in m and m["content"] is None for m in body.get("messages", [])
        ):
            self._json(500, NULL_CONTENT_ERROR)
            return
        if llama.hang:
            self._hang(llama)
            return
        refusal = _refusal(llama, body)
        if refusal is not None:
            llama.refused.append(refusal)
            self._json(400, {"error": {"type": "invalid_request_error", "code": 400,
                                       "message": f"Invalid request: {refusal}"}})
            return
        text, calls = reply_for(body, llama.parallel)
        for stop in body.get("stop") or ():  # generation ends where a stop sequence begins
            text = text.split(stop)[0]
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                message["tool_calls"] = calls
            self._json(200, {"id": "chatcmpl-1", "model": body.get("model"), "usage": USAGE,
                             "choices": [{"index": 0, "message": message,
                                          "finish_reason": "tool_calls" if calls else "stop"}]})
            return
        self._stream(llama, body, text, calls)

    def _hang(self, llama: LlamaLike) -> None:
        """Answer nothing until the client closes the connection (or the lifetime ends)."""
        self.close_connection = True
        ends = time.monotonic() + LIFETIME_S
        while time.monotonic() < ends:
            ready, _, _ = select.select([self.connection], [], [], 0.02)
            if ready and not self.connection.recv(1, socket.MSG_PEEK):
                llama.abandoned += 1
                return

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, llama: LlamaLike, body: dict[str, Any], text: str,
                calls: list[dict[str, Any]]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for delta, finish in _deltas(text, calls, llama.shape):
            self._event(llama, {"id": "chatcmpl-1", "model": body.get("model"),
                                "choices": [{"index": 0, "delta": delta,
                                             "finish_reason": finish}]})
        ends = time.monotonic() + LIFETIME_S
        while llama.endless and time.monotonic() < ends:
            try:
                self._event(llama, {"choices": [{"index": 0, "delta": {"content": "and "}}]})
            except OSError:
                return
            time.sleep(0.05)
        if (body.get("stream_options") or {}).get("include_usage") and llama.sends_usage:
            self._event(llama, {"id": "chatcmpl-1", "choices": [], "usage": USAGE})
        self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")

    def _event(self, llama: LlamaLike, payload: dict[str, Any]) -> None:
        self._chunk(b"data: " + json.dumps(payload).encode() + b"\n\n")
        llama.chunks_sent += 1

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def log_message(self, format: str, *args: object) -> None:
        return


def _deltas(text: str, calls: list[dict[str, Any]],
            shape: str) -> Iterator[tuple[dict[str, Any], Any]]:
    """The reply in pieces, as a streaming server of ``shape`` sends it."""
    yield {"role": "assistant", "content": ""}, None
    for start in range(0, len(text), 7):
        yield {"content": text[start:start + 7]}, None
    for items in call_chunks(shape, calls):
        yield {"tool_calls": items}, None
    yield {}, "tool_calls" if calls else "stop"


@contextmanager
def llamacpp_like() -> Iterator[LlamaLike]:
    """Serve on 127.0.0.1 port 0 until the block ends."""
    llama = LlamaLike()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    httpd.llama = llama  # type: ignore[attr-defined]
    llama.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield llama
    finally:
        llama.endless = False
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
