"""The pure parts of the wire providers: arguments, payloads, parsing, backoff, settings."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from footprint import ConfigError, RunError
from footprint.providers import (
    ARGUMENTS_ERROR_KEY,
    RAW_ARGUMENTS_KEY,
    AnthropicMessages,
    Backoff,
    LLMRequest,
    Message,
    OpenAIChat,
    ToolCall,
    ToolSpec,
    raw_arguments_of,
)
from footprint.providers._anthropic import anthropic_payload, parse_anthropic_response
from footprint.providers._arguments import decode_arguments, encode_arguments
from footprint.providers._http import (
    names_malformed_request,
    retry_after_seconds,
    server_message,
)
from footprint.providers._openai import openai_payload, parse_openai_response

JSON_LEAF = st.none() | st.booleans() | st.integers() | st.text(max_size=20)
JSON = st.recursive(
    JSON_LEAF,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=12,
)
OBJECTS = st.dictionaries(st.text(max_size=8), JSON, max_size=5)


# --- arguments ----------------------------------------------------------------------------


@given(OBJECTS)
def test_given_a_json_object_when_decoded_and_reencoded_then_it_round_trips(
    arguments: dict[str, Any],
) -> None:
    decoded = decode_arguments(json.dumps(arguments))
    assert dict(decoded) == arguments
    again = encode_arguments(ToolCall(id="c", name="t", arguments=decoded))
    assert json.loads(again) == arguments


@given(st.text(max_size=60))
def test_given_any_text_that_is_no_json_object_when_decoded_then_raw_text_is_kept(
    text: str,
) -> None:
    try:
        is_object = isinstance(json.loads(text), dict)
    except json.JSONDecodeError:
        is_object = False
    decoded = decode_arguments(text)
    call = ToolCall(id="c", name="t", arguments=decoded)
    if is_object or not text.strip():
        assert raw_arguments_of(call) is None
    else:
        assert raw_arguments_of(call) == text
        assert ARGUMENTS_ERROR_KEY in decoded
        assert encode_arguments(call) == text


def test_given_a_json_array_when_decoded_then_the_error_says_it_is_not_an_object() -> None:
    decoded = decode_arguments("[1, 2]")
    assert decoded[RAW_ARGUMENTS_KEY] == "[1, 2]"
    assert decoded[ARGUMENTS_ERROR_KEY] == "a JSON list, not an object"


# --- OpenAI payload and parsing -----------------------------------------------------------


def test_given_no_system_and_an_inline_system_message_when_encoded_then_openai_carries_it(
) -> None:
    request = LLMRequest(model="", system="", messages=(
        Message(role="system", content="be brief"), Message(role="user", content="hi")),
        tools=(ToolSpec(name="ping", description="Ping"),))
    assert openai_payload(request, "fallback") == {
        "model": "fallback",
        "messages": [{"role": "system", "content": "be brief"},
                     {"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {
            "name": "ping", "description": "Ping",
            "parameters": {"type": "object", "properties": {}}}}],
        "tool_choice": "auto",
    }


@pytest.mark.parametrize(("finish", "expected"), [
    ("stop", "end_turn"), ("length", "max_tokens"), ("content_filter", "content_filter"),
    (None, "end_turn"), ("something-new", "end_turn"),
])
def test_given_an_openai_finish_reason_when_parsed_then_it_maps_to_our_stop_reason(
    finish: str | None, expected: str,
) -> None:
    body = {"choices": [{"finish_reason": finish, "message": {"content": "x"}}]}
    assert parse_openai_response(body).stop_reason == expected


def test_given_openai_calls_without_ids_when_parsed_then_ids_derive_from_the_response() -> None:
    body = {"id": "r9", "choices": [{"finish_reason": "stop", "message": {"tool_calls": [
        {"function": {"name": "a", "arguments": ""}},
        {"function": {"name": "b", "arguments": {"k": 1}}}]}}]}
    got = parse_openai_response(body)
    assert [(c.id, c.name, dict(c.arguments)) for c in got.tool_calls] == [
        ("r9_1", "a", {}), ("r9_2", "b", {"k": 1})]
    assert (got.stop_reason, got.content, got.usage.cache_read_tokens) == ("tool_use", "", None)


def test_given_an_openai_body_without_choices_when_parsed_then_run_error_names_the_format(
) -> None:
    pattern = r"provider 'local' answered without choices: \{\"object\": \"list\"\}.*Chat Comp"
    with pytest.raises(RunError, match=pattern):
        parse_openai_response({"object": "list"}, "local")


# --- Anthropic payload and parsing --------------------------------------------------------


@given(st.lists(st.text(max_size=10), min_size=1, max_size=6), st.text(max_size=10))
def test_given_n_tool_results_when_encoded_for_anthropic_then_one_user_message_holds_them(
    results: list[str], after: str,
) -> None:
    calls = tuple(ToolCall(id=f"t{i}", name="x") for i in range(len(results)))
    history = (
        Message(role="user", content="go"),
        Message(role="assistant", content="", tool_calls=calls),
        *(Message(role="tool", content=r, tool_call_id=f"t{i}") for i, r in enumerate(results)),
        Message(role="user", content=after),
    )
    wire = anthropic_payload(LLMRequest(model="m", system="", messages=history), "m", 10)
    assert [m["role"] for m in wire["messages"]] == ["user", "assistant", "user", "user"]
    blocks = wire["messages"][2]["content"]
    assert [(b["tool_use_id"], b["content"]) for b in blocks] == [
        (f"t{i}", r) for i, r in enumerate(results)]
    assert wire["messages"][1]["content"] == [
        {"type": "tool_use", "id": c.id, "name": "x", "input": {}} for c in calls]
    assert "system" not in wire


def test_given_a_system_role_message_when_encoded_for_anthropic_then_run_error_names_fix(
) -> None:
    request = LLMRequest(model="m", system="", messages=(Message(role="system", content="x"),))
    with pytest.raises(RunError, match=r"cannot carry a role 'system'.*system prompt instead"):
        anthropic_payload(request, "m", 10)


@pytest.mark.parametrize(("stop", "expected"), [
    ("end_turn", "end_turn"), ("max_tokens", "max_tokens"),
    ("stop_sequence", "stop_sequence"), ("refusal", "refusal"), ("pause_turn", "end_turn"),
])
def test_given_an_anthropic_stop_reason_when_parsed_then_it_maps(stop: str, expected: str) -> None:
    body = {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            "stop_reason": stop}
    got = parse_anthropic_response(body)
    assert (got.content, got.stop_reason, got.usage.cache_write_tokens) == ("ab", expected, None)


def test_given_an_anthropic_body_without_content_when_parsed_then_run_error() -> None:
    with pytest.raises(RunError, match=r"without content blocks.*Anthropic Messages"):
        parse_anthropic_response({"type": "error"})


# --- backoff and server messages ----------------------------------------------------------


@given(st.integers(min_value=0, max_value=2**32), st.integers(min_value=1, max_value=12))
def test_given_a_seed_when_delays_are_drawn_then_they_are_bounded_and_repeatable(
    seed: int, retry: int,
) -> None:
    first = Backoff(rng=random.Random(seed), base=0.5, jitter=0.25, max_delay=30.0)
    second = Backoff(rng=random.Random(seed), base=0.5, jitter=0.25, max_delay=30.0)
    delay = first.delay(retry)
    raw = 0.5 * 2.0 ** (retry - 1)
    assert delay == second.delay(retry)
    assert min(raw * 0.75, 30.0) <= delay <= min(raw * 1.25, 30.0)


def test_given_retry_after_when_delaying_then_it_replaces_backoff_and_is_capped() -> None:
    backoff = Backoff(max_delay=10.0)
    assert (backoff.delay(1, 4.0), backoff.delay(5, 99.0), backoff.delay(1, -3.0)) == (
        4.0, 10.0, 0.0)


@pytest.mark.parametrize(("kwargs", "fragment"), [
    ({"base": -1.0}, "base=-1.0"), ({"multiplier": 0.5}, "multiplier=0.5"),
    ({"jitter": 2.0}, "jitter=2.0"),
])
def test_given_bad_backoff_numbers_when_built_then_config_error_quotes_them(
    kwargs: dict[str, float], fragment: str,
) -> None:
    with pytest.raises(ConfigError, match=fragment):
        Backoff(**kwargs)  # type: ignore[arg-type]


def test_given_retry_after_headers_when_parsed_then_seconds_and_dates_both_work() -> None:
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after_seconds("3", now) == 3.0
    assert retry_after_seconds("Thu, 01 Jan 2026 12:00:05 GMT", now) == 5.0
    assert retry_after_seconds("soon", now) is None
    assert retry_after_seconds(None, now) is None


@pytest.mark.parametrize(("body", "expected"), [
    ('{"error": {"message": "bad key"}}', "bad key"),
    ('{"error": "model not found"}', "model not found"),
    ('{"detail": "Not Found"}', "Not Found"),
    ("plain failure\n", "plain failure"),
])
def test_given_an_error_body_when_read_then_the_servers_message_is_found(
    body: str, expected: str,
) -> None:
    assert server_message(body) == expected


# --- settings -----------------------------------------------------------------------------


def test_given_env_vars_when_building_then_they_fill_base_url_and_explicit_values_win(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://10.0.0.5:9000/v1/")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://10.0.0.6:9000")
    assert OpenAIChat("m").base_url == "http://10.0.0.5:9000/v1"
    assert AnthropicMessages("m").base_url == "http://10.0.0.6:9000"
    assert OpenAIChat("m", base_url="http://127.0.0.1:1/v1").base_url == "http://127.0.0.1:1/v1"


def test_given_no_env_when_building_then_the_local_defaults_apply(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    assert OpenAIChat("m").base_url == "http://127.0.0.1:8000/v1"
    assert AnthropicMessages("m").base_url == "http://127.0.0.1:8000"


@pytest.mark.parametrize(("kwargs", "fragment"), [
    ({"model": ""}, "needs a model name, got ''"),
    ({"model": "m", "max_retries": -1}, "max_retries=-1"),
    ({"model": "m", "timeout": 0}, "timeout=0"),
    ({"model": "m", "base_url": "localhost:8000"}, "base_url='localhost:8000'"),
])
def test_given_bad_settings_when_building_then_config_error_quotes_the_value(
    kwargs: dict[str, Any], fragment: str,
) -> None:
    with pytest.raises(ConfigError, match=fragment):
        OpenAIChat(**kwargs)


def test_given_zero_max_tokens_when_building_anthropic_then_config_error() -> None:
    with pytest.raises(ConfigError, match=r"max_tokens=0 must be an integer >= 1"):
        AnthropicMessages("m", max_tokens=0)


@pytest.mark.parametrize(("body", "malformed"), [
    ('{"error": {"code": 500, "message": "Failed to parse messages: [json.exception.'
     'type_error.302] type must be string, but is null", "type": "server_error"}}', True),
    ('{"detail": "1 validation error for Message\\ncontent\\n  Field required"}', True),
    ('{"error": {"message": "can only concatenate str (not \\"NoneType\\") to str"}}', True),
    ('{"error": {"message": "Invalid value for \'content\': expected a string"}}', True),
    ('{"error": {"message": "overloaded, try again"}}', False),
    ('{"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}', False),
    ("<html>502 Bad Gateway</html>", False),
])
def test_given_a_5xx_body_when_read_then_only_a_malformed_request_is_named(
    body: str, malformed: bool,
) -> None:
    assert names_malformed_request(body) is malformed


def test_given_wire_providers_when_asked_their_params_then_they_are_what_the_body_carries(
) -> None:
    request = LLMRequest(model="", system="s", messages=(Message(role="user", content="q"),),
                         tools=(ToolSpec(name="f", description="d"),), seed=3)
    chat = OpenAIChat("m", base_url="http://127.0.0.1:1/v1", max_tokens=9, stop="END",
                      extra_body={"top_p": 0.5, "response_format": {"type": "text"}})
    body = openai_payload(chat._generation.apply(request), "m", chat._options)
    assert dict(chat.wire_params(request)) == {
        k: v for k, v in body.items() if k not in ("messages", "tools")} == {
        "model": "m", "max_tokens": 9, "stop": ["END"], "seed": 3, "tool_choice": "auto",
        "top_p": 0.5, "response_format": {"type": "text"}}
    messages = AnthropicMessages("c", base_url="http://127.0.0.1:1", max_tokens=5,
                                 temperature=0.1, stop=["x"])
    assert dict(messages.wire_params(request)) == {
        "model": "c", "max_tokens": 5, "temperature": 0.1, "stop_sequences": ["x"]}


def test_given_extra_body_naming_a_managed_field_when_built_then_config_error_names_it() -> None:
    with pytest.raises(ConfigError, match=r"extra_body sets \['max_tokens'\]"):
        OpenAIChat("m", base_url="http://127.0.0.1:1/v1", extra_body={"max_tokens": 3})
