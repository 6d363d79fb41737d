"""The Anthropic Messages API: top-level system, tool_use / tool_result blocks."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from footprint._errors import ConfigError, RunError
from footprint.providers._arguments import decode_arguments, raw_arguments_of
from footprint.providers._http import Backoff, post_json
from footprint.providers._order import wire_order
from footprint.providers._pool import HttpPool, PooledClient
from footprint.providers._settings import (
    Generation,
    WireSettings,
    generation,
    wire_call,
    wire_settings,
)
from footprint.providers._stream import post_stream
from footprint.providers._types import (
    LLMRequest,
    LLMResponse,
    Message,
    StopReason,
    ToolCall,
    Usage,
)

__all__ = [
    "ANTHROPIC_VERSION",
    "AnthropicMessages",
    "anthropic_payload",
    "parse_anthropic_response",
]

ANTHROPIC_VERSION = "2023-06-01"

_STOP: Mapping[str, StopReason] = MappingProxyType({
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "pause_turn": "end_turn",
    "refusal": "refusal",
})


def anthropic_payload(
    request: LLMRequest, model: str, max_tokens: int, provider: str = "anthropic"
) -> dict[str, Any]:
    """The Messages body for ``request``; ``model``/``max_tokens`` fill what it leaves open."""
    payload: dict[str, Any] = {
        "model": request.model or model,
        "max_tokens": request.max_tokens if request.max_tokens is not None else max_tokens,
        "messages": _wire_messages(wire_order(request.messages), provider),
    }
    if request.system:
        payload["system"] = request.system
    if request.tools:
        payload["tools"] = [
            {
                "name": t.name,
                "description": t.description,
                "input_schema": dict(t.input_schema) or {"type": "object", "properties": {}},
            }
            for t in request.tools
        ]
    if request.temperature is not None:
        payload["temperature"] = request.temperature
    if request.stop:
        payload["stop_sequences"] = list(request.stop)
    return payload


def _wire_messages(messages: tuple[Message, ...], provider: str) -> list[dict[str, Any]]:
    """Wire messages; consecutive tool results share one user message."""
    wire: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if message.role == "system":
            raise RunError(
                f"provider {provider!r} cannot carry a role 'system' message inside messages "
                f"(message #{index + 1}: {message.content[:60]!r}); put it in the system "
                "prompt instead, or deliver it with role 'user'"
            )
        if message.role == "tool":
            block = _tool_result(message)
            if wire and wire[-1].get("_tool_results"):
                wire[-1]["content"].append(block)
            else:
                wire.append({"role": "user", "content": [block], "_tool_results": True})
        elif message.role == "assistant" and message.tool_calls:
            wire.append({"role": "assistant", "content": _assistant_blocks(message)})
        else:
            wire.append({"role": message.role, "content": message.content})
    for item in wire:
        item.pop("_tool_results", None)
    return wire


def _tool_result(message: Message) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": message.tool_call_id,
        "content": message.content,
    }


def _assistant_blocks(message: Message) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    blocks.extend(
        {"type": "tool_use", "id": c.id, "name": c.name, "input": _tool_input(c)}
        for c in message.tool_calls
    )
    return blocks


def _tool_input(call: ToolCall) -> dict[str, Any]:
    # A malformed call is sent back as an empty object: tool_use input must be one.
    return {} if raw_arguments_of(call) is not None else dict(call.arguments)


def parse_anthropic_response(
    body: Mapping[str, Any], provider: str = "anthropic"
) -> LLMResponse:
    """Our response for a Messages body; a body without content blocks is a RunError."""
    blocks = body.get("content")
    if not isinstance(blocks, list):
        raise RunError(
            f"provider {provider!r} answered without content blocks: "
            f"{json.dumps(dict(body), default=str)[:200]}; check that the server speaks "
            "the Anthropic Messages format"
        )
    texts = [
        str(b.get("text", "")) for b in blocks if isinstance(b, dict) and b.get("type") == "text"
    ]
    calls = tuple(
        ToolCall(
            id=str(b.get("id") or f"toolu_{index}"),
            name=str(b.get("name") or ""),
            arguments=decode_arguments(b.get("input")),
        )
        for index, b in enumerate(blocks, start=1)
        if isinstance(b, dict) and b.get("type") == "tool_use"
    )
    stop = body.get("stop_reason")
    reason: StopReason = "tool_use" if calls else _STOP.get(str(stop), "end_turn")
    model, response_id = body.get("model"), body.get("id")
    return LLMResponse(
        content="".join(texts),
        tool_calls=calls,
        usage=_parse_usage(body.get("usage")),
        stop_reason=reason,
        model=model if isinstance(model, str) else None,
        response_id=response_id if isinstance(response_id, str) else None,
    )


def _parse_usage(raw: object) -> Usage:
    if not isinstance(raw, dict):
        return Usage(input_tokens=None, output_tokens=None)  # not reported: unknown

    def optional(key: str) -> int | None:
        value = raw.get(key)
        return value if isinstance(value, int) else None

    return Usage(
        input_tokens=optional("input_tokens"),
        output_tokens=optional("output_tokens"),
        cache_read_tokens=optional("cache_read_input_tokens"),
        cache_write_tokens=optional("cache_creation_input_tokens"),
    )


class AnthropicEvents:
    """Messages stream events assembled into one plain Messages body.

    ``message_start`` gives id, model and input usage; each content block
    starts with ``content_block_start`` and grows by ``text_delta`` or
    ``input_json_delta`` (tool input as JSON text, decoded at the end);
    ``message_delta`` gives the stop reason and output usage.
    """

    __slots__ = ("_blocks", "_message", "_stop", "_usage")

    def __init__(self) -> None:
        self._message: dict[str, Any] = {}
        self._blocks: dict[int, dict[str, Any]] = {}
        self._usage: dict[str, Any] = {}
        self._stop: object = None

    def feed(self, event: Mapping[str, Any]) -> None:
        kind, index = event.get("type"), event.get("index")
        if kind == "message_start" and isinstance(event.get("message"), dict):
            self._message = dict(event["message"])
            self._usage.update(self._message.get("usage") or {})
        elif kind == "content_block_start" and isinstance(index, int):
            block = dict(event.get("content_block") or {})
            block["_json"] = ""
            self._blocks[index] = block
        elif kind == "content_block_delta" and index in self._blocks:
            self._delta(self._blocks[index], event.get("delta") or {})
        elif kind == "message_delta":
            self._stop = (event.get("delta") or {}).get("stop_reason") or self._stop
            self._usage.update(event.get("usage") or {})

    @staticmethod
    def _delta(block: dict[str, Any], delta: Mapping[str, Any]) -> None:
        if delta.get("type") == "text_delta":
            block["text"] = str(block.get("text") or "") + str(delta.get("text") or "")
        elif delta.get("type") == "input_json_delta":
            block["_json"] += str(delta.get("partial_json") or "")

    def body(self) -> Mapping[str, Any]:
        blocks = []
        for _, kept in sorted(self._blocks.items()):
            block = dict(kept)
            raw = block.pop("_json")
            if block.get("type") == "tool_use" and raw:
                block["input"] = raw
            blocks.append(block)
        return {**self._message, "content": blocks, "stop_reason": self._stop,
                "usage": self._usage}


def _generation(
    max_tokens: object, temperature: object, stop: object, stream: object
) -> Generation:
    if max_tokens is None:
        raise ConfigError(
            "AnthropicMessages max_tokens=None: the Messages API needs a limit; "
            "pass e.g. max_tokens=1024"
        )
    if not isinstance(stream, bool):
        raise ConfigError(f"AnthropicMessages stream={stream!r} must be True or False")
    return generation(
        "AnthropicMessages", max_tokens=max_tokens, temperature=temperature, stop=stop
    )


class AnthropicMessages(PooledClient):
    """A :class:`~footprint.providers.Provider` speaking the Anthropic Messages API.

    ``POST {base_url}/v1/messages`` with ``x-api-key`` and
    ``anthropic-version: 2023-06-01``. ``base_url`` defaults to env
    ``ANTHROPIC_BASE_URL`` or ``http://127.0.0.1:8000``; ``api_key`` to env
    ``ANTHROPIC_API_KEY``. Roles carried inside messages: user, assistant and
    tool (as tool_result blocks) — not system.

    Limits: ``max_tokens`` (required by the API; default 1024),
    ``temperature`` and ``stop`` (sent as ``stop_sequences``) fill what a
    request leaves open; ``timeout`` bounds one attempt in all, reply
    included, and ``deadline`` (optional) every attempt and retry wait
    together, ending the call with a :class:`RunError` naming the limit.

    ``stream=True`` reads the reply as server-sent events (the same
    response, with ``time_to_first_chunk_s`` set; a stream that never ends is
    cut between chunks by ``timeout``/``deadline``). The Messages API has no
    seed, so the request's ``seed`` is not sent. The process's pooled HTTP client
    for ``base_url`` serves every call, from every event loop and thread;
    ``aclose()``/``close()`` close the connections to this server.
    """

    carried_roles: tuple[str, ...] = ("user", "assistant")

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        max_tokens: int = 1024,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: Backoff | None = None,
        name: str = "anthropic",
        trust_env: bool = True,
        temperature: float | None = None,
        stop: str | tuple[str, ...] | list[str] | None = None,
        deadline: float | None = None,
        stream: bool = False,
    ) -> None:
        self._settings: WireSettings = wire_settings(
            kind="AnthropicMessages",
            model=model,
            base_url=base_url,
            base_url_env="ANTHROPIC_BASE_URL",
            default_base_url="http://127.0.0.1:8000",
            api_key=api_key,
            api_key_env="ANTHROPIC_API_KEY",
            timeout=timeout,
            max_retries=max_retries,
            deadline=deadline,
        )
        self._generation: Generation = _generation(max_tokens, temperature, stop, stream)
        self._max_tokens = max_tokens
        self._stream = stream
        self._backoff = backoff if backoff is not None else Backoff()
        self._name = name
        self._pool = HttpPool(base_url=self._settings.base_url, trust_env=trust_env)

    @property
    def name(self) -> str:
        return self._name

    @property
    def model(self) -> str:
        return self._settings.model

    @property
    def base_url(self) -> str:
        return self._settings.base_url

    def wire_params(self, request: LLMRequest) -> Mapping[str, Any]:
        """The generation parameters ``complete(request)`` sends (``llm.start.params``)."""
        sent = self._generation.apply(request)
        params: dict[str, Any] = {
            "model": sent.model or self._settings.model,
            "max_tokens": sent.max_tokens if sent.max_tokens is not None else self._max_tokens}
        if sent.temperature is not None:
            params["temperature"] = sent.temperature
        if sent.stop:
            params["stop_sequences"] = list(sent.stop)
        return params

    async def complete(self, request: LLMRequest) -> LLMResponse:
        settings = self._settings
        payload = anthropic_payload(
            self._generation.apply(request), settings.model, self._max_tokens, self._name
        )
        if self._stream:
            payload["stream"] = True
        headers = {"content-type": "application/json", "anthropic-version": ANTHROPIC_VERSION}
        if settings.api_key:
            headers["x-api-key"] = settings.api_key
        call = wire_call(self._name, settings, "/v1/messages", payload, headers)
        if not self._stream:
            return parse_anthropic_response(
                await post_json(call, self._backoff, self._pool), self._name)
        streamed = await post_stream(call, self._backoff, self._pool, AnthropicEvents)
        response = parse_anthropic_response(streamed.body, self._name)
        return dataclasses.replace(response, time_to_first_chunk_s=streamed.first_chunk_s)
