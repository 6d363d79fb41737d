"""OpenAIChat and AnthropicMessages end to end against small local HTTP servers.

Each server is a ThreadingHTTPServer on 127.0.0.1 port 0 that plays a script
of (status, body, headers) replies and records exactly what it received.
"""

from __future__ import annotations

import json
import random
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from footprint import RunError
from footprint.providers import (
    RAW_ARGUMENTS_KEY,
    AnthropicMessages,
    Backoff,
    LLMRequest,
    Message,
    OpenAIChat,
    Provider,
    ToolCall,
    ToolSpec,
)


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class FakeServer:
    """A scripted HTTP server; an empty script answers 500 so a test notices."""

    script: deque[tuple[int, Any, dict[str, str]]] = field(default_factory=deque)
    delay: float = 0.0
    received: list[Received] = field(default_factory=list)
    port: int = 0

    def reply(self, status: int, body: Any, **headers: str) -> None:
        self.script.append((status, body, headers))

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        fake: FakeServer = self.server.fake  # type: ignore[attr-defined]
        raw = self.rfile.read(int(self.headers.get("content-length", "0")))
        fake.received.append(
            Received(self.path, {k.lower(): v for k, v in self.headers.items()}, json.loads(raw))
        )
        if fake.delay:
            time.sleep(fake.delay)
        status, body, headers = (
            fake.script.popleft() if fake.script else (500, {"error": "script exhausted"}, {})
        )
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        headers = dict(headers)
        self.send_response(status)
        self.send_header("content-type", headers.pop("content_type", "application/json"))
        self.send_header("content-length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def server() -> Iterator[FakeServer]:
    fake = FakeServer()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.fake = fake  # type: ignore[attr-defined]
    fake.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield fake
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def backoff(sleeps: list[float]) -> Backoff:
    async def fake_sleep(seconds: float) -> None:
        sleeps.append(seconds)

    return Backoff(rng=random.Random(7), sleep=fake_sleep)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


WEATHER = ToolSpec(
    name="weather",
    description="Current weather for a city",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
)


def _ask(text: str = "Weather in Oslo?", **extra: Any) -> LLMRequest:
    return LLMRequest(
        model="m-1", system="You are terse.", messages=(Message(role="user", content=text),),
        **extra,
    )


# --- the two wire formats ------------------------------------------------------------


def openai_text(text: str, **usage: int) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1", "model": "m-1",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3, **usage},
    }


def anthropic_text(text: str) -> dict[str, Any]:
    return {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m-1",
        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 12, "output_tokens": 3},
    }


@dataclass(frozen=True)
class Wire:
    label: str
    make: Callable[..., Provider]
    text: Callable[[str], dict[str, Any]]
    path: str
    key_env: str
    root_suffix: str


WIRES = [
    Wire("openai", OpenAIChat, openai_text, "/v1/chat/completions", "OPENAI_API_KEY", "/v1"),
    Wire("anthropic", AnthropicMessages, anthropic_text, "/v1/messages", "ANTHROPIC_API_KEY", ""),
]


@pytest.fixture(params=WIRES, ids=lambda w: w.label)
def wire(request: pytest.FixtureRequest) -> Wire:
    return request.param  # type: ignore[no-any-return]


def _provider(wire: Wire, base: str, backoff: Backoff, **options: Any) -> Provider:
    options.setdefault("api_key", "sk-test")
    return wire.make("m-1", base_url=base + wire.root_suffix, backoff=backoff,
                     trust_env=False, **options)


# --- OpenAI Chat Completions ------------------------------------------------------------


async def test_given_an_openai_server_when_asked_plainly_then_text_usage_and_headers_map(
    server: FakeServer, backoff: Backoff
) -> None:
    server.reply(200, openai_text("Sunny.", prompt_tokens_details={"cached_tokens": 8}))
    model = OpenAIChat("m-1", base_url=server.root + "/v1", api_key="sk-test",
                       backoff=backoff, trust_env=False)
    response = await model.complete(_ask(temperature=0.2, max_tokens=50))
    assert (response.content, response.stop_reason) == ("Sunny.", "end_turn")
    assert (response.response_id, response.model) == ("chatcmpl-1", "m-1")
    assert (response.usage.input_tokens, response.usage.output_tokens) == (12, 3)
    assert response.usage.cache_read_tokens == 8
    [got] = server.received
    assert got.path == "/v1/chat/completions"
    assert got.headers["authorization"] == "Bearer sk-test"
    assert got.body == {
        "model": "m-1", "temperature": 0.2, "max_tokens": 50,
        "messages": [{"role": "system", "content": "You are terse."},
                     {"role": "user", "content": "Weather in Oslo?"}],
    }


async def test_given_an_openai_tool_turn_when_the_result_is_sent_back_then_the_wire_is_exact(
    server: FakeServer, backoff: Backoff
) -> None:
    server.reply(200, {
        "id": "chatcmpl-2", "model": "m-1",
        "choices": [{"finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None,
            "tool_calls": [{"id": "call_a", "type": "function", "function": {
                "name": "weather", "arguments": "{\"city\": \"Oslo\"}"}}]}}],
    })
    server.reply(200, openai_text("It is sunny in Oslo."))
    model = OpenAIChat("m-1", base_url=server.root + "/v1", backoff=backoff, trust_env=False)
    first = await model.complete(_ask(tools=(WEATHER,)))
    assert first.stop_reason == "tool_use"
    assert first.tool_calls == (ToolCall(id="call_a", name="weather", arguments={"city": "Oslo"}),)
    follow_up = (
        *_ask().messages,
        Message(role="assistant", content="", tool_calls=first.tool_calls),
        Message(role="tool", content="sunny, 21C", tool_call_id="call_a", tool_name="weather"),
    )
    second = await model.complete(
        LLMRequest(model="m-1", system="You are terse.", messages=follow_up, tools=(WEATHER,))
    )
    assert second.content == "It is sunny in Oslo."
    assert server.received[1].body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Weather in Oslo?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_a", "type": "function",
             "function": {"name": "weather", "arguments": "{\"city\": \"Oslo\"}"}}]},
        {"role": "tool", "tool_call_id": "call_a", "content": "sunny, 21C"},
    ]
    assert server.received[1].body["tool_choice"] == "auto"
    assert server.received[1].body["tools"] == [{"type": "function", "function": {
        "name": "weather", "description": "Current weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]


async def test_given_malformed_openai_arguments_when_parsed_then_the_raw_text_is_kept(
    server: FakeServer, backoff: Backoff
) -> None:
    server.reply(200, {"choices": [{"finish_reason": "tool_calls", "message": {
        "content": "", "tool_calls": [{"id": "c1", "function": {
            "name": "weather", "arguments": "{city: Oslo"}}]}}]})
    model = OpenAIChat("m-1", base_url=server.root + "/v1", backoff=backoff, trust_env=False)
    [got] = (await model.complete(_ask())).tool_calls
    assert got.arguments[RAW_ARGUMENTS_KEY] == "{city: Oslo"


async def test_given_an_openai_unknown_model_when_called_then_the_error_names_the_model(
    server: FakeServer, backoff: Backoff
) -> None:
    server.reply(404, {"error": {"message": "The model `m-1` does not exist.",
                                 "code": "model_not_found"}})
    model = OpenAIChat("m-1", base_url=server.root + "/v1", backoff=backoff, trust_env=False)
    with pytest.raises(RunError, match=r"does not know model 'm-1'"):
        await model.complete(_ask())


async def test_given_a_wrong_openai_path_when_called_then_the_error_points_at_base_url(
    server: FakeServer, backoff: Backoff
) -> None:
    server.reply(404, {"detail": "Not Found"})
    model = OpenAIChat("m-1", base_url=server.root, backoff=backoff, trust_env=False)
    with pytest.raises(RunError, match=r"HTTP 404 .*'Not Found'.*check base_url="):
        await model.complete(_ask())


# --- Anthropic Messages -----------------------------------------------------------------


async def test_given_an_anthropic_server_when_asked_plainly_then_system_headers_usage_map(
    server: FakeServer, backoff: Backoff
) -> None:
    body = anthropic_text("Sunny.")
    body["usage"] |= {"cache_read_input_tokens": 100, "cache_creation_input_tokens": 7}
    server.reply(200, body)
    model = AnthropicMessages("m-1", base_url=server.root, api_key="sk-ant", max_tokens=77,
                              backoff=backoff, trust_env=False)
    response = await model.complete(_ask())
    assert (response.content, response.stop_reason, response.response_id) == (
        "Sunny.", "end_turn", "msg_1")
    assert (response.usage.cache_read_tokens, response.usage.cache_write_tokens) == (100, 7)
    [got] = server.received
    assert got.path == "/v1/messages"
    assert (got.headers["x-api-key"], got.headers["anthropic-version"]) == (
        "sk-ant", "2023-06-01")
    assert got.body == {"model": "m-1", "max_tokens": 77, "system": "You are terse.",
                        "messages": [{"role": "user", "content": "Weather in Oslo?"}]}


async def test_given_two_anthropic_tool_uses_when_results_return_then_they_share_a_message(
    server: FakeServer, backoff: Backoff
) -> None:
    server.reply(200, {
        "id": "msg_2", "model": "m-1", "stop_reason": "tool_use",
        "content": [{"type": "text", "text": "Checking."},
                    {"type": "tool_use", "id": "toolu_1", "name": "weather",
                     "input": {"city": "Oslo"}},
                    {"type": "tool_use", "id": "toolu_2", "name": "weather",
                     "input": {"city": "Bergen"}}],
        "usage": {"input_tokens": 20, "output_tokens": 9},
    })
    server.reply(200, anthropic_text("Both sunny."))
    model = AnthropicMessages("m-1", base_url=server.root, backoff=backoff, trust_env=False)
    first = await model.complete(_ask(tools=(WEATHER,)))
    assert (first.content, first.stop_reason) == ("Checking.", "tool_use")
    assert [c.id for c in first.tool_calls] == ["toolu_1", "toolu_2"]
    history = (
        *_ask().messages,
        Message(role="assistant", content=first.content, tool_calls=first.tool_calls),
        Message(role="tool", content="sunny", tool_call_id="toolu_1"),
        Message(role="tool", content="also sunny", tool_call_id="toolu_2"),
    )
    await model.complete(LLMRequest(model="m-1", system="s", messages=history, tools=(WEATHER,)))
    sent = server.received[1].body
    assert sent["messages"] == [
        {"role": "user", "content": "Weather in Oslo?"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Oslo"}},
            {"type": "tool_use", "id": "toolu_2", "name": "weather",
             "input": {"city": "Bergen"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"},
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "also sunny"}]},
    ]
    assert sent["tools"] == [{"name": "weather", "description": "Current weather for a city",
                              "input_schema": dict(WEATHER.input_schema)}]


async def test_given_an_anthropic_unknown_model_when_called_then_the_error_names_the_model(
    server: FakeServer, backoff: Backoff
) -> None:
    server.reply(404, {"type": "error",
                       "error": {"type": "not_found_error", "message": "model: m-1"}})
    model = AnthropicMessages("m-1", base_url=server.root, backoff=backoff, trust_env=False)
    with pytest.raises(RunError, match=r"does not know model 'm-1'.*'model: m-1'"):
        await model.complete(_ask())


# --- failures, on both wires ------------------------------------------------------------


async def test_given_a_429_with_retry_after_when_called_then_it_waits_and_retries_once(
    server: FakeServer, backoff: Backoff, sleeps: list[float], wire: Wire
) -> None:
    server.reply(429, {"error": {"message": "slow down"}}, retry_after="2")
    server.reply(200, wire.text("Done."))
    response = await _provider(wire, server.root, backoff).complete(_ask())
    assert response.content == "Done."
    assert len(server.received) == 2
    assert sleeps == [2.0]


async def test_given_a_401_when_called_then_the_error_names_the_key_variable_without_retry(
    server: FakeServer, backoff: Backoff, wire: Wire, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(wire.key_env, raising=False)
    server.reply(401, {"error": {"message": "invalid x-api-key"}})
    provider = _provider(wire, server.root, backoff, api_key=None)
    with pytest.raises(RunError) as caught:
        await provider.complete(_ask())
    message = str(caught.value)
    assert "HTTP 401" in message and "'invalid x-api-key'" in message
    assert f"set {wire.key_env}" in message and "no API key was sent" in message
    assert len(server.received) == 1


async def test_given_500_every_time_when_retries_run_out_then_the_error_counts_attempts(
    server: FakeServer, backoff: Backoff, sleeps: list[float], wire: Wire
) -> None:
    for _ in range(3):
        server.reply(500, {"error": {"message": "overloaded"}})
    provider = _provider(wire, server.root, backoff, max_retries=2)
    with pytest.raises(RunError, match=r"after 3 attempts.*HTTP 500 \('overloaded'\)"):
        await provider.complete(_ask())
    assert len(server.received) == 3
    assert len(sleeps) == 2 and 0 < sleeps[0] < sleeps[1]


async def test_given_no_server_when_called_then_the_error_asks_whether_it_is_running(
    backoff: Backoff, sleeps: list[float], wire: Wire
) -> None:
    root = f"http://127.0.0.1:{_closed_port()}"
    provider = _provider(wire, root, backoff, max_retries=1)
    with pytest.raises(RunError) as caught:
        await provider.complete(_ask())
    assert f"is the server running at {root}{wire.root_suffix}?" in str(caught.value)
    assert "after 2 attempts" in str(caught.value)
    assert len(sleeps) == 1


async def test_given_a_400_when_called_then_the_servers_message_is_quoted(
    server: FakeServer, backoff: Backoff, wire: Wire
) -> None:
    server.reply(400, {"error": {"message": "temperature must be <= 2"}})
    provider = _provider(wire, server.root, backoff)
    with pytest.raises(RunError, match=r"HTTP 400: 'temperature must be <= 2'"):
        await provider.complete(_ask(temperature=9.0))
    assert len(server.received) == 1


async def test_given_a_body_that_is_not_json_when_called_then_the_error_names_base_url(
    server: FakeServer, backoff: Backoff, wire: Wire
) -> None:
    server.reply(200, "<html>hello</html>")
    provider = _provider(wire, server.root, backoff)
    with pytest.raises(RunError, match=r"not a JSON object: '<html>hello</html>'.*base_url="):
        await provider.complete(_ask())


async def test_given_a_key_in_the_environment_when_none_is_passed_then_it_is_sent(
    server: FakeServer, backoff: Backoff, wire: Wire, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(wire.key_env, "sk-from-env")
    server.reply(200, wire.text("ok"))
    await _provider(wire, server.root, backoff, api_key=None).complete(_ask())
    headers = server.received[0].headers
    sent = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
    assert sent == "sk-from-env"


async def test_given_a_rejected_key_when_called_then_the_error_says_it_was_rejected(
    server: FakeServer, backoff: Backoff, wire: Wire
) -> None:
    server.reply(403, {"error": {"message": "forbidden"}})
    with pytest.raises(RunError, match=r"HTTP 403 .*the API key was rejected; set "):
        await _provider(wire, server.root, backoff).complete(_ask())


async def test_given_a_server_slower_than_the_timeout_when_called_then_the_error_says_so(
    server: FakeServer, backoff: Backoff, wire: Wire
) -> None:
    server.delay = 0.5
    server.reply(200, wire.text("too late"))
    provider = _provider(wire, server.root, backoff, timeout=0.1, max_retries=0)
    with pytest.raises(RunError, match=r"timed out after 0.1s on each of 1 attempts.*timeout="):
        await provider.complete(_ask())


# --- streamed replies -------------------------------------------------------------------


def _sse(*events: dict[str, Any]) -> str:
    return "".join(f"event: {e.get('type', 'message')}\ndata: {json.dumps(e)}\n\n"
                   for e in events)


async def test_given_an_anthropic_stream_when_read_then_text_tool_input_and_usage_assemble(
    server: FakeServer, backoff: Backoff
) -> None:
    server.reply(200, _sse(
        {"type": "message_start", "message": {"id": "msg_9", "model": "m-1", "role": "assistant",
                                              "content": [], "usage": {"input_tokens": 25}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text",
                                                                      "text": ""}},
        {"type": "ping"},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "text_delta", "text": "Let me "}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "text_delta", "text": "check."}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {
            "type": "tool_use", "id": "toolu_7", "name": "weather", "input": {}}},
        {"type": "content_block_delta", "index": 1,
         "delta": {"type": "input_json_delta", "partial_json": "{\"city\": \"Os"}},
        {"type": "content_block_delta", "index": 1,
         "delta": {"type": "input_json_delta", "partial_json": "lo\"}"}},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"},
         "usage": {"output_tokens": 14}},
        {"type": "message_stop"},
    ), content_type="text/event-stream")
    model = AnthropicMessages("m-1", base_url=server.root, backoff=backoff, trust_env=False,
                              stream=True)
    response = await model.complete(_ask(tools=(WEATHER,)))
    await model.aclose()
    assert (response.content, response.stop_reason, response.response_id) == (
        "Let me check.", "tool_use", "msg_9")
    assert response.tool_calls == (
        ToolCall(id="toolu_7", name="weather", arguments={"city": "Oslo"}),)
    assert (response.usage.input_tokens, response.usage.output_tokens) == (25, 14)
    assert response.time_to_first_chunk_s is not None
    assert server.received[0].body["stream"] is True


async def test_given_a_server_that_ignores_stream_when_it_answers_json_then_it_is_read_plainly(
    server: FakeServer, backoff: Backoff
) -> None:
    server.reply(200, openai_text("Sunny."))
    model = OpenAIChat("m-1", base_url=server.root + "/v1", backoff=backoff, trust_env=False,
                       stream=True)
    response = await model.complete(_ask())
    await model.aclose()
    assert (response.content, response.usage.input_tokens) == ("Sunny.", 12)
    assert response.time_to_first_chunk_s is None
    assert server.received[0].body["stream"] is True


async def test_given_an_error_event_mid_stream_when_it_is_transient_then_the_call_is_retried(
    server: FakeServer, backoff: Backoff, sleeps: list[float]
) -> None:
    chunk = {"choices": [{"index": 0, "delta": {"content": "Sun"}}]}
    server.reply(200, f"data: {json.dumps(chunk)}\n\n"
                      'data: {"error": {"message": "server overloaded"}}\n\n',
                 content_type="text/event-stream")
    server.reply(200, f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n",
                 content_type="text/event-stream")
    model = OpenAIChat("m-1", base_url=server.root + "/v1", backoff=backoff, trust_env=False,
                       stream=True)
    response = await model.complete(_ask())
    await model.aclose()
    assert response.content == "Sun"
    assert len(server.received) == 2 and len(sleeps) == 1


async def test_given_two_tool_calls_streamed_in_turns_when_read_then_each_assembles_by_index(
    server: FakeServer, backoff: Backoff
) -> None:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        return "data: " + json.dumps({"id": "chatcmpl-5", "model": "m-1", "choices": [
            {"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n"

    def piece(index: int, **function: str) -> dict[str, Any]:
        return {"tool_calls": [{"index": index, "function": function}]}

    server.reply(200, "".join([
        chunk({"role": "assistant", "content": None}),
        chunk({"tool_calls": [{"index": 0, "id": "call_x", "type": "function",
                               "function": {"name": "weather", "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 1, "id": "call_y", "type": "function",
                               "function": {"name": "weather", "arguments": "{\"ci"}}]}),
        chunk(piece(0, arguments="{\"city\": \"Oslo\"}")),
        chunk(piece(1, arguments="ty\": \"Bergen\"}")),
        chunk({}, "tool_calls"),
        ": keep-alive\n\n",
        'data: {"id": "chatcmpl-5", "choices": [], "usage": {"prompt_tokens": 30, '
        '"completion_tokens": 11}}\n\n',
        "data: [DONE]\n\n",
    ]), content_type="text/event-stream")
    model = OpenAIChat("m-1", base_url=server.root + "/v1", backoff=backoff, trust_env=False,
                       stream=True)
    response = await model.complete(_ask(tools=(WEATHER,)))
    await model.aclose()
    assert response.tool_calls == (
        ToolCall(id="call_x", name="weather", arguments={"city": "Oslo"}),
        ToolCall(id="call_y", name="weather", arguments={"city": "Bergen"}),
    )
    assert (response.stop_reason, response.content, response.response_id) == (
        "tool_use", "", "chatcmpl-5")
    assert (response.usage.input_tokens, response.usage.output_tokens) == (30, 11)
