"""OpenAI Chat Completions with tools, for any compatible server
(vLLM, llama.cpp, Ollama's ``/v1``, hosted APIs)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from footprint._errors import RunError
from footprint.providers._arguments import decode_arguments, encode_arguments
from footprint.providers._http import Backoff, HttpCall, post_json
from footprint.providers._settings import Generation, WireSettings, generation, wire_settings
from footprint.providers._types import (
    LLMRequest,
    LLMResponse,
    Message,
    StopReason,
    ToolCall,
    ToolSpec,
    Usage,
)

__all__ = ["OpenAIChat", "openai_payload", "parse_openai_response"]

_FINISH: Mapping[str, StopReason] = MappingProxyType({
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "error",
})


def openai_payload(request: LLMRequest, model: str) -> dict[str, Any]:
    """The Chat Completions body for ``request`` (``model`` when it names none)."""
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    messages.extend(_wire_message(m) for m in request.messages)
    payload: dict[str, Any] = {"model": request.model or model, "messages": messages}
    if request.tools:
        payload["tools"] = [_wire_tool(t) for t in request.tools]
    if request.temperature is not None:
        payload["temperature"] = request.temperature
    if request.max_tokens is not None:
        payload["max_tokens"] = request.max_tokens
    if request.stop:
        payload["stop"] = list(request.stop)
    return payload


def _wire_message(message: Message) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if message.role == "assistant" and message.tool_calls:
        return {
            "role": "assistant",
            "content": message.content or None,
            "tool_calls": [_wire_call(c) for c in message.tool_calls],
        }
    return {"role": message.role, "content": message.content}


def _wire_call(call: ToolCall) -> dict[str, Any]:
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": encode_arguments(call)},
    }


def _wire_tool(tool: ToolSpec) -> dict[str, Any]:
    parameters = dict(tool.input_schema) or {"type": "object", "properties": {}}
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": parameters},
    }


def parse_openai_response(body: Mapping[str, Any], provider: str = "openai") -> LLMResponse:
    """Our response for a Chat Completions body; a body without a choice is a RunError."""
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise RunError(
            f"provider {provider!r} answered without choices: "
            f"{json.dumps(dict(body), default=str)[:200]}; check that the server speaks "
            "the OpenAI Chat Completions format"
        )
    choice = choices[0]
    message = choice.get("message") or {}
    response_id = body.get("id") if isinstance(body.get("id"), str) else None
    calls = tuple(
        _parse_call(raw, index, response_id)
        for index, raw in enumerate(message.get("tool_calls") or (), start=1)
    )
    finish = choice.get("finish_reason")
    stop: StopReason = "tool_use" if calls else _FINISH.get(str(finish), "end_turn")
    model = body.get("model")
    return LLMResponse(
        content=message.get("content") or "",
        tool_calls=calls,
        usage=_parse_usage(body.get("usage")),
        stop_reason=stop,
        model=model if isinstance(model, str) else None,
        response_id=response_id,
    )


def _parse_call(raw: Mapping[str, Any], index: int, response_id: str | None) -> ToolCall:
    function = raw.get("function") or {}
    call_id = raw.get("id") or f"{response_id or 'call'}_{index}"
    return ToolCall(
        id=str(call_id),
        name=str(function.get("name") or ""),
        arguments=decode_arguments(function.get("arguments")),
    )


def _parse_usage(raw: object) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    details = raw.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return Usage(
        input_tokens=int(raw.get("prompt_tokens") or 0),
        output_tokens=int(raw.get("completion_tokens") or 0),
        cache_read_tokens=int(cached) if isinstance(cached, int) else None,
    )


class OpenAIChat:
    """A :class:`~footprint.providers.Provider` speaking OpenAI Chat Completions.

    ``POST {base_url}/chat/completions``. ``base_url`` defaults to env
    ``OPENAI_BASE_URL`` or ``http://127.0.0.1:8000/v1``; ``api_key`` to env
    ``OPENAI_API_KEY`` (sent as a bearer token when set). ``model`` is used
    when a request names none. Roles carried inside messages: user,
    assistant, tool and system.

    Limits: ``max_tokens``, ``temperature`` and ``stop`` are sent with every
    request that does not set its own (an agent's ``Agent(max_tokens=...)``
    wins); ``timeout`` bounds one attempt in all, reply included, and
    ``deadline`` (seconds, optional) every attempt and retry wait together.
    A server that never finishes ends the call with a :class:`RunError`
    naming the limit it passed.
    """

    carried_roles: tuple[str, ...] = ("user", "assistant", "system")

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: Backoff | None = None,
        name: str = "openai",
        trust_env: bool = True,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: str | tuple[str, ...] | list[str] | None = None,
        deadline: float | None = None,
    ) -> None:
        self._settings: WireSettings = wire_settings(
            kind="OpenAIChat",
            model=model,
            base_url=base_url,
            base_url_env="OPENAI_BASE_URL",
            default_base_url="http://127.0.0.1:8000/v1",
            api_key=api_key,
            api_key_env="OPENAI_API_KEY",
            timeout=timeout,
            max_retries=max_retries,
            deadline=deadline,
        )
        self._generation: Generation = generation(
            "OpenAIChat", max_tokens=max_tokens, temperature=temperature, stop=stop
        )
        self._backoff = backoff if backoff is not None else Backoff()
        self._name = name
        self._trust_env = trust_env

    @property
    def name(self) -> str:
        return self._name

    @property
    def model(self) -> str:
        return self._settings.model

    @property
    def base_url(self) -> str:
        return self._settings.base_url

    async def complete(self, request: LLMRequest) -> LLMResponse:
        settings = self._settings
        payload = openai_payload(self._generation.apply(request), settings.model)
        headers = {"content-type": "application/json"}
        if settings.api_key:
            headers["authorization"] = f"Bearer {settings.api_key}"
        body = await post_json(
            HttpCall(
                provider=self._name,
                url=f"{settings.base_url}/chat/completions",
                base_url=settings.base_url,
                model=str(payload["model"]),
                payload=payload,
                headers=headers,
                timeout=settings.timeout,
                max_retries=settings.max_retries,
                api_key_env=settings.api_key_env,
                has_api_key=bool(settings.api_key),
                trust_env=self._trust_env,
                deadline=settings.deadline,
            ),
            self._backoff,
        )
        return parse_openai_response(body, self._name)
