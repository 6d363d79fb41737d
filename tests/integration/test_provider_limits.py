"""Provider limits against real local servers: generation limits on the wire, a
per-attempt time limit that covers the whole reply, a total deadline that
retries respect, and the agent's own limit on one model call.

The servers here are sockets on 127.0.0.1 that misbehave on purpose: one
streams a reply that never ends, one accepts and never answers. Each stops
by itself after a bounded time, so a failing test cannot hang the suite.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from footprint import Agent, ConfigError, RunError
from footprint.providers import (
    AnthropicMessages,
    LLMRequest,
    LLMResponse,
    Message,
    OpenAIChat,
)

SERVER_LIFETIME_S = 15.0


@dataclass
class RawServer:
    """A one-behaviour HTTP server on a raw socket; records each request body."""

    behave: Callable[[socket.socket, RawServer], None]
    bodies: list[dict[str, Any]] = field(default_factory=list)
    connections: int = 0
    port: int = 0

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _read_request(conn: socket.socket) -> dict[str, Any] | None:
    """The JSON body of one request, with its path under the key ``"_path"``."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(rest) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        rest += chunk
    parsed: dict[str, Any] = json.loads(rest or b"{}")
    parsed["_path"] = head.split(b" ")[1].decode()
    return parsed


def stream_forever(conn: socket.socket, server: RawServer) -> None:
    """Answer 200 and send a chunked body a few bytes at a time, never ending it."""
    body = _read_request(conn)
    if body is not None:
        server.bodies.append(body)
    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                 b"transfer-encoding: chunked\r\n\r\n")
    conn.sendall(b"1\r\n{\r\n")
    ends = time.monotonic() + SERVER_LIFETIME_S
    while time.monotonic() < ends:
        try:
            conn.sendall(b"1\r\n \r\n")
        except OSError:
            return
        time.sleep(0.05)


def never_answer(conn: socket.socket, server: RawServer) -> None:
    """Read the request, then say nothing until the client gives up."""
    body = _read_request(conn)
    if body is not None:
        server.bodies.append(body)
    conn.settimeout(SERVER_LIFETIME_S)
    try:
        conn.recv(1)
    except OSError:
        return


def busy_with_retry_after(conn: socket.socket, server: RawServer) -> None:
    """Answer 503 with a long Retry-After, as an overloaded server does."""
    body = _read_request(conn)
    if body is not None:
        server.bodies.append(body)
    reply = b'{"error": "busy"}'
    conn.sendall(b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
                 b"retry-after: 30\r\nconnection: close\r\n"
                 + f"content-length: {len(reply)}\r\n\r\n".encode() + reply)


def draining(conn: socket.socket, server: RawServer) -> None:
    """Answer 503 with a short Retry-After and the server's reason in the body."""
    body = _read_request(conn)
    if body is not None:
        server.bodies.append(body)
    reply = b'{"error": {"message": "overloaded: shard 7 is draining"}}'
    conn.sendall(b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
                 b"retry-after: 0.2\r\nconnection: close\r\n"
                 + f"content-length: {len(reply)}\r\n\r\n".encode() + reply)


def answer_ok(conn: socket.socket, server: RawServer) -> None:
    """A well-behaved reply in the wire format the request's path names."""
    body = _read_request(conn)
    if body is None:
        return
    server.bodies.append(body)
    if body["_path"].endswith("/v1/messages"):
        payload: dict[str, Any] = {"id": "msg_1", "model": "m-1", "role": "assistant",
                                   "content": [{"type": "text", "text": "ok"}],
                                   "stop_reason": "end_turn",
                                   "usage": {"input_tokens": 1, "output_tokens": 1}}
    else:
        payload = {"id": "c1", "model": "m-1",
                   "choices": [{"index": 0, "finish_reason": "stop",
                                "message": {"role": "assistant", "content": "ok"}}],
                   "usage": {"prompt_tokens": 1, "completion_tokens": 1}}
    data = json.dumps(payload).encode()
    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n"
                 + f"content-length: {len(data)}\r\n\r\n".encode() + data)


@pytest.fixture
def serve() -> Iterator[Callable[[Callable[[socket.socket, RawServer], None]], RawServer]]:
    listeners: list[socket.socket] = []
    threads: list[threading.Thread] = []

    def start(behave: Callable[[socket.socket, RawServer], None]) -> RawServer:
        server = RawServer(behave)
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        sock.settimeout(0.1)
        server.port = sock.getsockname()[1]
        listeners.append(sock)

        def loop() -> None:
            ends = time.monotonic() + SERVER_LIFETIME_S
            while time.monotonic() < ends:
                try:
                    conn, _ = sock.accept()
                except (TimeoutError, OSError):
                    if sock.fileno() == -1:
                        return
                    continue
                server.connections += 1
                worker = threading.Thread(target=_handle, args=(conn, server), daemon=True)
                worker.start()

        thread = threading.Thread(target=loop, daemon=True)
        thread.start()
        threads.append(thread)
        return server

    yield start
    for sock in listeners:
        sock.close()
    for thread in threads:
        thread.join(timeout=2)


def _handle(conn: socket.socket, server: RawServer) -> None:
    with conn:
        server.behave(conn, server)


def _ask(**extra: Any) -> LLMRequest:
    return LLMRequest(model="m-1", system="Be terse.",
                      messages=(Message(role="user", content="hi"),), **extra)


async def _timed(coro: Any) -> tuple[BaseException | None, float]:
    started = time.monotonic()
    try:
        await coro
    except Exception as exc:  # the error under test
        return exc, time.monotonic() - started
    return None, time.monotonic() - started


# --- a server that never stops generating ----------------------------------------------


async def test_given_a_server_that_streams_forever_when_a_deadline_is_set_then_it_ends_on_time(
    serve: Callable[..., RawServer],
) -> None:
    server = serve(stream_forever)
    model = OpenAIChat("m-1", base_url=server.root, timeout=30, deadline=2.0, max_retries=3)
    error, took = await _timed(model.complete(_ask()))
    assert isinstance(error, RunError)
    assert "deadline of 2.0s" in str(error) and "deadline=" in str(error)
    assert 1.0 <= took <= 3.0


async def test_given_a_server_that_streams_forever_when_only_timeout_is_set_then_each_try_ends(
    serve: Callable[..., RawServer],
) -> None:
    server = serve(stream_forever)
    model = OpenAIChat("m-1", base_url=server.root, timeout=1.0, max_retries=1)
    error, took = await _timed(model.complete(_ask()))
    assert isinstance(error, RunError)
    assert "timed out after 1.0s on each of 2 attempts" in str(error)
    assert server.connections == 2
    assert took <= 4.0


async def test_given_a_server_that_never_answers_when_retries_remain_then_the_deadline_wins(
    serve: Callable[..., RawServer],
) -> None:
    server = serve(never_answer)
    model = AnthropicMessages("m-1", base_url=server.root, timeout=1.0, max_retries=10,
                              deadline=2.5)
    error, took = await _timed(model.complete(_ask()))
    assert isinstance(error, RunError)
    assert "passed its deadline of 2.5s" in str(error)
    assert 1.5 <= took <= 3.5
    assert server.connections <= 3


async def test_given_a_retry_after_past_the_deadline_when_called_then_it_fails_without_waiting(
    serve: Callable[..., RawServer],
) -> None:
    server = serve(busy_with_retry_after)
    model = OpenAIChat("m-1", base_url=server.root, timeout=5, deadline=3, max_retries=5)
    error, took = await _timed(model.complete(_ask()))
    assert isinstance(error, RunError)
    assert "after 1 attempt(s)" in str(error) and "deadline" in str(error)
    assert took < 2.0
    assert server.connections == 1


async def test_given_a_503_until_the_deadline_when_called_then_the_error_names_the_503(
    serve: Callable[..., RawServer],
) -> None:
    server = serve(draining)
    model = OpenAIChat("m-1", base_url=server.root, timeout=5, deadline=1.5, max_retries=50)
    error, _ = await _timed(model.complete(_ask()))
    assert isinstance(error, RunError)
    text = str(error)
    assert "passed its deadline of 1.5s" in text and server.connections >= 2
    assert "HTTP 503 ('overloaded: shard 7 is draining')" in text
    assert "max_tokens" not in text and "raise deadline=" in text


# --- generation limits on the wire ---------------------------------------------------------


async def test_given_openai_limits_when_a_request_leaves_them_open_then_they_are_sent(
    serve: Callable[..., RawServer],
) -> None:
    server = serve(answer_ok)
    model = OpenAIChat("m-1", base_url=server.root, max_tokens=64, temperature=0.3,
                       stop=["\n\nUser:"])
    response = await model.complete(_ask())
    assert response.content == "ok"
    sent = server.bodies[0]
    assert (sent["max_tokens"], sent["temperature"], sent["stop"]) == (64, 0.3, ["\n\nUser:"])


async def test_given_a_request_with_its_own_limits_when_sent_then_they_win_over_the_provider(
    serve: Callable[..., RawServer],
) -> None:
    server = serve(answer_ok)
    model = OpenAIChat("m-1", base_url=server.root, max_tokens=64, stop="END")
    await model.complete(_ask(max_tokens=8, stop=("STOP",)))
    assert (server.bodies[0]["max_tokens"], server.bodies[0]["stop"]) == (8, ["STOP"])


async def test_given_anthropic_limits_when_sent_then_stop_goes_as_stop_sequences(
    serve: Callable[..., RawServer],
) -> None:
    server = serve(answer_ok)
    model = AnthropicMessages("m-1", base_url=server.root, max_tokens=32, temperature=0.0,
                              stop=("###",))
    response = await model.complete(_ask())
    sent = server.bodies[0]
    assert response.content == "ok"
    assert (sent["max_tokens"], sent["temperature"], sent["stop_sequences"]) == (32, 0.0, ["###"])


def test_given_an_agent_with_limits_when_it_runs_then_every_request_carries_them(
    serve: Callable[..., RawServer],
) -> None:
    server = serve(answer_ok)
    agent = Agent(provider=OpenAIChat("m-1", base_url=server.root, max_tokens=999),
                  model="m-1", max_tokens=40, temperature=0.1, stop=["\n\n"])
    assert agent.run_sync("hello").answer == "ok"
    sent = server.bodies[0]
    assert (sent["max_tokens"], sent["temperature"], sent["stop"]) == (40, 0.1, ["\n\n"])


# --- the agent's limit on one model call ---------------------------------------------------


class _Stuck:
    """A provider that never answers (an async wait, as a network call would be)."""

    name = "stuck"

    async def complete(self, request: LLMRequest) -> LLMResponse:
        await asyncio.sleep(SERVER_LIFETIME_S)
        return LLMResponse(content="late")


def test_given_a_provider_that_never_answers_when_the_agent_has_a_limit_then_the_run_fails_on_time(
) -> None:
    agent = Agent(provider=_Stuck(), model="m", model_timeout_s=0.5)
    started = time.monotonic()
    with pytest.raises(RunError, match=r"did not answer within model_timeout_s=0\.5"):
        agent.run_sync("hello")
    assert time.monotonic() - started < 3.0


# --- bad limits are refused at build -------------------------------------------------------


@pytest.mark.parametrize(("build", "needle"), [
    (lambda: OpenAIChat("m", max_tokens=0), "max_tokens=0 must be an integer >= 1"),
    (lambda: OpenAIChat("m", max_tokens="100"), "max_tokens='100' must be an integer"),
    (lambda: OpenAIChat("m", temperature=-1), "temperature=-1 must be a number >= 0"),
    (lambda: OpenAIChat("m", stop=[""]), "stop=[''] must be a stop string"),
    (lambda: OpenAIChat("m", stop=[1]), "stop=[1] must be a stop string"),
    (lambda: OpenAIChat("m", deadline=0), "deadline=0 must be a positive number"),
    (lambda: OpenAIChat("m", timeout="5"), "timeout='5' must be a positive number"),
    (lambda: AnthropicMessages("m", deadline=-2), "deadline=-2 must be a positive number"),
    (lambda: AnthropicMessages("m", max_tokens=None), "needs a limit"),
    (lambda: AnthropicMessages("m", stop=("",)), "must be a stop string"),
    (lambda: Agent(provider=_Stuck(), model="m", max_tokens=-5), "max_tokens=-5"),
    (lambda: Agent(provider=_Stuck(), model="m", stop=[None]), "stop=(None,) must be a"),
    (lambda: Agent(provider=_Stuck(), model="m", model_timeout_s=0), "model_timeout_s=0"),
])
def test_given_a_bad_limit_when_built_then_a_one_line_config_error_names_the_fix(
    build: Callable[[], object], needle: str,
) -> None:
    with pytest.raises(ConfigError) as caught:
        build()
    message = str(caught.value)
    assert needle in message
    assert "\n" not in message and "pass e.g." in message


def test_given_a_server_that_never_stops_generating_when_an_agent_runs_then_the_run_ends_on_time(
    serve: Callable[..., RawServer],
) -> None:
    server = serve(stream_forever)
    agent = Agent(provider=OpenAIChat("m-1", base_url=server.root, deadline=2.0, max_retries=3),
                  model="m-1", max_tokens=64)
    started = time.monotonic()
    with pytest.raises(RunError, match=r"passed its deadline of 2\.0s"):
        agent.run_sync("Tell me a very long story")
    assert 1.0 <= time.monotonic() - started <= 3.0
    assert server.bodies[0]["max_tokens"] == 64
