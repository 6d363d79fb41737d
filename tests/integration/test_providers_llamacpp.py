"""OpenAIChat against a local server with llama.cpp's quirks (tests/llamacpp_like.py):
tool calls end to end with and without streaming, a stream cut at its deadline,
a malformed-request 500 not retried, one pooled connection, the run's seed on
the wire and in a FunctionModel. With ``FOOTPRINT_LLAMACPP_URL`` set, the
two-tool agent also runs against a real llama.cpp server."""

from __future__ import annotations

import asyncio
import os
import random
import ssl
import time
from collections.abc import Iterator
from typing import Any

import pytest
from llamacpp_like import USAGE, LlamaLike, llamacpp_like
from stream_shapes import SHAPES

from footprint import Agent, ConfigError, RunError
from footprint.agent import tool
from footprint.events import ListSink, LLMEnd, LLMStart, ToolEnd
from footprint.providers import AnthropicMessages, FunctionModel, LLMRequest, Message, OpenAIChat
from lens.playback._answer import tokens_of


@pytest.fixture
def llama() -> Iterator[LlamaLike]:
    with llamacpp_like() as server:
        yield server


def weather(city: str) -> str:
    """Current weather for a city."""
    return f"{city}: sunny, 21C"


def to_fahrenheit(celsius: float) -> str:
    """A Celsius temperature in Fahrenheit."""
    return f"{celsius}C is {celsius * 9 / 5 + 32:g}F"


def _agent(provider: OpenAIChat | FunctionModel, sink: ListSink, **options: object) -> Agent:
    return Agent(provider=provider, model="tiny", tools=[tool(weather), tool(to_fahrenheit)],
                 sink=sink, **options)  # type: ignore[arg-type]


def _ask(text: str = "Weather in Oslo, in F?") -> LLMRequest:
    return LLMRequest(model="tiny", system="Be terse.",
                      messages=(Message(role="user", content=text),))


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_given_a_llamacpp_like_server_when_an_agent_with_two_tools_runs_then_it_answers_from_both(
    llama: LlamaLike, stream: bool,
) -> None:
    sink = ListSink()
    agent = _agent(OpenAIChat("tiny", base_url=llama.base_url, stream=stream), sink)
    result = agent.run_sync("Weather in Oslo, in F?")
    assert result.answer == "From the tools: Oslo: sunny, 21C; 21C is 69.8F"
    assert [b.get("tool_choice") for b in llama.bodies] == ["auto"] * 3
    second = llama.bodies[1]["messages"]
    assert second[-2]["role"] == "assistant" and second[-2]["content"] == ""
    assert second[-1] == {"role": "tool", "tool_call_id": "call_1",
                          "content": "Oslo: sunny, 21C"}
    assert [e.tool_name for e in sink.events if isinstance(e, ToolEnd)] == [
        "weather", "to_fahrenheit"]
    ends = [e for e in sink.events if isinstance(e, LLMEnd)]
    assert [e.input_tokens for e in ends] == [USAGE["prompt_tokens"]] * 3
    assert llama.connections == 1
    if stream:
        assert all(b["stream_options"] == {"include_usage": True} for b in llama.bodies)
        assert all(e.time_to_first_chunk_s is not None and e.time_to_first_chunk_s > 0
                   for e in ends)
        assert all(e.time_to_first_chunk_s <= e.duration_ms / 1000 + 1e-3  # type: ignore[operator]
                   for e in ends)
    else:
        assert "stream" not in llama.bodies[0]
        assert all(e.time_to_first_chunk_s is None for e in ends)


@pytest.mark.parametrize("shape", SHAPES)
def test_given_tool_calls_streamed_in_a_real_servers_shape_when_an_agent_runs_then_tools_are_found(
    llama: LlamaLike, shape: str,
) -> None:
    llama.shape, llama.parallel = shape, True
    sink = ListSink()
    agent = _agent(OpenAIChat("tiny", base_url=llama.base_url, stream=True), sink)
    result = agent.run_sync("Weather in Oslo, in F?")
    ends = [e for e in sink.events if isinstance(e, ToolEnd)]
    assert [(e.tool_name, e.status_by) for e in ends] == [("weather", None),
                                                          ("to_fahrenheit", None)]
    assert result.answer == "From the tools: Oslo: sunny, 21C; 21C is 69.8F"


def test_given_a_stream_without_usage_when_recorded_then_tokens_are_unknown_and_unpriced(
    llama: LlamaLike,
) -> None:
    llama.sends_usage = False
    sink = ListSink()
    agent = _agent(OpenAIChat("tiny", base_url=llama.base_url, stream=True), sink)
    agent.run_sync("Weather in Oslo, in F?")
    ends = [e for e in sink.events if isinstance(e, LLMEnd)]
    assert all(b["stream_options"] == {"include_usage": True} for b in llama.bodies)
    assert [(e.input_tokens, e.output_tokens) for e in ends] == [(None, None)] * 3
    assert tokens_of(ends[0]) == "tokens unknown (no usage reported)"


def test_given_no_tool_choice_when_tools_are_offered_then_the_server_ignores_them(
    llama: LlamaLike,
) -> None:
    agent = _agent(OpenAIChat("tiny", base_url=llama.base_url, tool_choice=None), ListSink())
    assert agent.run_sync("Weather in Oslo?").answer == "I have no tools to use."
    assert "tool_choice" not in llama.bodies[0] and len(llama.bodies[0]["tools"]) == 2


async def test_given_a_stream_that_never_ends_when_a_deadline_is_set_then_it_is_cut_on_time(
    llama: LlamaLike,
) -> None:
    llama.endless = True
    model = OpenAIChat("tiny", base_url=llama.base_url, stream=True, timeout=30, deadline=1.5)
    started = time.monotonic()
    with pytest.raises(RunError, match=r"passed its deadline of 1\.5s"):
        await model.complete(_ask())
    took = time.monotonic() - started
    await model.aclose()
    assert 1.0 <= took <= 3.0
    assert llama.chunks_sent >= 5 and len(llama.bodies) == 1


async def test_given_a_500_naming_a_malformed_request_when_called_then_it_is_not_retried(
    llama: LlamaLike,
) -> None:
    llama.malformed = True
    model = OpenAIChat("tiny", base_url=llama.base_url, max_retries=3)
    with pytest.raises(RunError) as caught:
        await model.complete(_ask())
    await model.aclose()
    message = str(caught.value)
    assert "HTTP 500" in message and "malformed request" in message and "not retried" in message
    assert "type must be string, but is null" in message
    assert len(llama.bodies) == 1


async def test_given_one_provider_when_called_three_times_then_one_client_and_connection_serve(
    llama: LlamaLike,
) -> None:
    model = OpenAIChat("tiny", base_url=llama.base_url)
    for _ in range(3):
        assert (await model.complete(_ask())).content == "I have no tools to use."
    assert (model.pool.built, llama.connections) == (1, 1)
    await model.aclose()
    await model.complete(_ask())
    await model.aclose()
    assert (model.pool.built, llama.connections, len(llama.bodies)) == (2, 2, 4)


def test_given_fresh_run_syncs_when_each_builds_a_client_then_one_ssl_context_serves_all(
    llama: LlamaLike, monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[object] = []
    real = ssl.create_default_context

    def counted(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        built.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(ssl, "create_default_context", counted)
    for _ in range(3):  # each run_sync: a new loop, a new provider, a new client
        model = OpenAIChat("tiny", base_url=llama.base_url)
        assert _agent(model, ListSink()).run_sync("Weather in Oslo, in F?").answer
        assert model.pool.built == 1
    assert len(built) <= 1  # the process's one SSL context (built here, or before)


def test_given_a_loop_left_open_when_the_provider_is_closed_then_its_client_closes_in_it(
    llama: LlamaLike,
) -> None:
    model = OpenAIChat("tiny", base_url=llama.base_url)
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(model.complete(_ask()))
        assert llama.wait_closed(1, within_s=0.3) == 0
        model.close()
        assert llama.wait_closed(1) == 1
    finally:
        loop.close()


def test_given_an_agent_seed_when_it_runs_then_the_server_gets_it_and_the_hash_ignores_it(
    llama: LlamaLike,
) -> None:
    hashes = []
    for seed in (7, 8):
        sink = ListSink()
        _agent(OpenAIChat("tiny", base_url=llama.base_url), sink, seed=seed).run_sync("hi")
        hashes.append([e.request_hash for e in sink.events if isinstance(e, LLMStart)])
    assert [b["seed"] for b in llama.bodies] == [7] * 3 + [8] * 3
    assert hashes[0] == hashes[1]


def test_given_send_seed_off_when_a_request_has_a_seed_then_none_is_sent(
    llama: LlamaLike,
) -> None:
    _agent(OpenAIChat("tiny", base_url=llama.base_url, send_seed=False), ListSink(),
           seed=3).run_sync("hi")
    assert all("seed" not in b for b in llama.bodies)


def test_given_a_function_model_when_agents_run_with_seeds_then_it_samples_per_seed() -> None:
    def sample(request: LLMRequest) -> str:
        return random.Random(request.seed).choice(["sunny", "rainy", "windy", "foggy", "snowy"])

    def answer(seed: int) -> str:
        model = FunctionModel(sample)
        result = Agent(provider=model, model="m", seed=seed).run_sync("Weather?")
        assert [r.seed for r in model.requests] == [seed]
        return result.answer

    assert answer(1) == answer(1)
    assert len({answer(seed) for seed in range(8)}) > 1


@pytest.mark.parametrize(("make", "option", "needle"), [
    (OpenAIChat, {"tool_choice": "sometimes"}, "tool_choice='sometimes' is not one the API"),
    (OpenAIChat, {"tool_choice": 3}, "tool_choice=3 is not one the API knows"),
    (OpenAIChat, {"stream": "yes"}, "OpenAIChat stream='yes' must be True or False"),
    (OpenAIChat, {"send_seed": 1}, "send_seed=1 must be True or False"),
    (AnthropicMessages, {"stream": None}, "AnthropicMessages stream=None must be True or"),
])
def test_given_a_bad_wire_option_when_built_then_a_config_error_names_it(
    make: type, option: dict[str, object], needle: str,
) -> None:
    with pytest.raises(ConfigError, match=needle):
        make("tiny", **option)


async def test_given_an_agent_in_a_running_loop_when_closed_there_then_its_clients_are_released(
    llama: LlamaLike,
) -> None:
    model = OpenAIChat("tiny", base_url=llama.base_url)
    agent = _agent(model, ListSink())
    await agent.run("hi")
    with pytest.raises(RunError, match=r"await agent.aclose\(\)"):
        agent.close()
    await agent.aclose()
    await asyncio.sleep(0.05)
    assert model.pool.built == 1
    await agent.run("again")
    await agent.aclose()
    assert model.pool.built == 2


REAL_SERVER = os.environ.get("FOOTPRINT_LLAMACPP_URL")


@pytest.mark.skipif(not REAL_SERVER, reason="set FOOTPRINT_LLAMACPP_URL=http://host:port/v1 "
                    "to run against a real llama.cpp server (llama-server --jinja)")
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_given_a_real_llamacpp_server_when_an_agent_with_two_tools_runs_then_it_finishes(
    stream: bool,
) -> None:
    sink = ListSink()
    model = OpenAIChat(os.environ.get("FOOTPRINT_LLAMACPP_MODEL", "local"),
                       base_url=REAL_SERVER, stream=stream, temperature=0.0, deadline=300)
    agent = _agent(model, sink, system_prompt="Use the tools: weather first, then "
                   "to_fahrenheit on its Celsius value. Answer in one sentence.")
    result = agent.run_sync("What is the weather in Oslo, in Fahrenheit?")
    results = [e for e in sink.events if isinstance(e, ToolEnd)]
    assert results and not any(e.error for e in results)
    assert result.answer.strip()
    if stream:
        assert all(e.time_to_first_chunk_s is not None
                   for e in sink.events if isinstance(e, LLMEnd))
