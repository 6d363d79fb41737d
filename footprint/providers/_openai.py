"""OpenAI Chat Completions with tools, for any compatible server
(vLLM, llama.cpp, Ollama's ``/v1``, hosted APIs)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeAlias

from footprint._errors import ConfigError, RunError
from footprint.providers._arguments import decode_arguments, encode_arguments
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
    ToolSpec,
    Usage,
)

__all__ = ["OpenAIChat", "WireOptions", "openai_params", "openai_payload",
           "parse_openai_response"]

_FINISH: Mapping[str, StopReason] = MappingProxyType({
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "content_filter",
})


ToolChoice: TypeAlias = str | Mapping[str, Any] | None
TOOL_CHOICES = ("auto", "required", "none")


@dataclass(frozen=True, slots=True, kw_only=True)
class WireOptions:
    """What ``OpenAIChat`` adds to every body: tool choice, streaming, the seed, and extra
    body fields (``top_p``, ``response_format``, a server's own)."""

    tool_choice: ToolChoice = "auto"
    stream: bool = False
    send_seed: bool = True
    extra_body: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


MANAGED = ("model", "messages", "tools", "tool_choice", "max_tokens", "temperature", "stop",
           "seed", "stream", "stream_options")
"""Body keys ``OpenAIChat`` writes itself (each from its own option), so never extras."""


def openai_params(
    request: LLMRequest, model: str, options: WireOptions | None = None
) -> dict[str, Any]:
    """The body's fields beside the messages, tools and streaming: exactly the generation
    parameters sent (what ``llm.start`` records as ``params``)."""
    opts = options if options is not None else WireOptions()
    params: dict[str, Any] = {"model": request.model or model}
    if request.tools and opts.tool_choice is not None:
        params["tool_choice"] = _wire_choice(opts.tool_choice)
    if request.temperature is not None:
        params["temperature"] = request.temperature
    if request.max_tokens is not None:
        params["max_tokens"] = request.max_tokens
    if request.stop:
        params["stop"] = list(request.stop)
    if request.seed is not None and opts.send_seed:
        params["seed"] = request.seed
    params.update(opts.extra_body)
    return params


def openai_payload(
    request: LLMRequest, model: str, options: WireOptions | None = None
) -> dict[str, Any]:
    """The Chat Completions body for ``request`` (``model`` when it names none).

    ``tool_choice`` goes with the tools (some servers, llama.cpp's among them,
    ignore tools without it); ``stream`` asks for server-sent events with usage
    in the last chunk; the request's ``seed`` is sent when it has one; extra
    body fields go as given.
    """
    opts = options if options is not None else WireOptions()
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    messages.extend(_wire_message(m) for m in wire_order(request.messages))
    payload: dict[str, Any] = {"messages": messages}
    if request.tools:
        payload["tools"] = [_wire_tool(t) for t in request.tools]
    payload.update(openai_params(request, model, opts))
    if opts.stream:
        payload["stream"] = True
        payload["stream_options"] = {"include_usage": True}
    return payload


def _wire_choice(choice: str | Mapping[str, Any]) -> str | dict[str, Any]:
    return choice if isinstance(choice, str) else dict(choice)


def _wire_message(message: Message) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if message.role == "assistant" and message.tool_calls:
        # content is a string, never null: servers such as llama.cpp reject null
        return {
            "role": "assistant",
            "content": message.content,
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
    content = message.get("content") or ""
    refusal = message.get("refusal")
    if not content and not calls and isinstance(refusal, str) and refusal:
        content, stop = refusal, "refusal"  # a refusal only: said, and flagged as one
    model = body.get("model")
    return LLMResponse(
        content=content,
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


def _tokens(raw: Mapping[str, Any], key: str) -> int | None:
    value = raw.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _parse_usage(raw: object) -> Usage:
    """Usage as the server reported it; a count it did not send is ``None`` (unknown)."""
    if not isinstance(raw, dict):
        return Usage(input_tokens=None, output_tokens=None)
    details = raw.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return Usage(
        input_tokens=_tokens(raw, "prompt_tokens"),
        output_tokens=_tokens(raw, "completion_tokens"),
        cache_read_tokens=int(cached) if isinstance(cached, int) else None,
    )


class OpenAIChunks:
    """Chat Completions stream chunks assembled into one plain body.

    Text deltas are joined; tool-call deltas are merged per call: by
    ``index``, or, from a server that sends none (older Ollama), by ``id``,
    a delta with neither continuing the last call. A call's id and name are
    set once, from the first chunk that has them, so a server that repeats
    them in every chunk (llama.cpp's Python server, some vLLM versions) does
    not repeat the name; argument text is appended. The finish reason is
    kept, and usage read from the chunk that carries it (the last one, asked
    for with ``stream_options.include_usage``; absent, the usage is unknown).
    """

    __slots__ = ("_calls", "_finish", "_id", "_model", "_text", "_usage")

    def __init__(self) -> None:
        self._text: list[str] = []
        self._calls: dict[int, dict[str, Any]] = {}
        self._finish: object = None
        self._usage: object = None
        self._id: object = None
        self._model: object = None

    def feed(self, event: Mapping[str, Any]) -> None:
        self._id = self._id or event.get("id")
        self._model = self._model or event.get("model")
        if isinstance(event.get("usage"), dict):
            self._usage = event["usage"]
        for choice in event.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                self._text.append(delta["content"])
            for raw in delta.get("tool_calls") or ():
                if isinstance(raw, dict):
                    self._call_delta(raw)
            if choice.get("finish_reason"):
                self._finish = choice["finish_reason"]

    def _slot(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        index = raw.get("index")
        call_id = raw.get("id")
        if not isinstance(index, int) or isinstance(index, bool):
            known = [k for k, s in self._calls.items() if call_id and s["id"] == call_id]
            if known:
                index = known[0]
            elif not call_id and self._calls:
                index = max(self._calls)
            else:
                index = max(self._calls, default=-1) + 1
        return self._calls.setdefault(index, {"id": None, "name": "", "arguments": ""})

    def _call_delta(self, raw: Mapping[str, Any]) -> None:
        slot = self._slot(raw)
        slot["id"] = slot["id"] or raw.get("id")
        function = raw.get("function") or {}
        name, args = function.get("name"), function.get("arguments")
        if isinstance(name, str) and not slot["name"]:
            slot["name"] = name
        if isinstance(args, str):
            slot["arguments"] += args
        elif isinstance(args, dict):  # a server that sends the arguments as an object
            slot["arguments"] = json.dumps(args)

    def body(self) -> Mapping[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self._text)}
        if self._calls:
            message["tool_calls"] = [
                {"id": slot["id"], "type": "function",
                 "function": {"name": slot["name"], "arguments": slot["arguments"]}}
                for _, slot in sorted(self._calls.items())
            ]
        return {
            "id": self._id, "model": self._model, "usage": self._usage,
            "choices": [{"index": 0, "message": message, "finish_reason": self._finish}],
        }


def check_tool_choice(choice: object) -> ToolChoice:
    """``tool_choice`` as given, when the API can carry it."""
    if choice is None or choice in TOOL_CHOICES or isinstance(choice, Mapping):
        return choice
    raise ConfigError(
        f"OpenAIChat tool_choice={choice!r} is not one the API knows; pass 'auto' (the "
        "default), 'required', 'none', a dict naming one function "
        "({'type': 'function', 'function': {'name': ...}}), or None to send none"
    )


def _extra_body(extra: object) -> Mapping[str, Any]:
    if extra is None:
        return MappingProxyType({})
    if not isinstance(extra, Mapping) or not all(isinstance(k, str) for k in extra):
        raise ConfigError(f"OpenAIChat extra_body={extra!r} must be a dict of body fields; "
                          "pass e.g. extra_body={'top_p': 0.9}")
    managed = sorted(k for k in extra if k in MANAGED)
    if managed:
        raise ConfigError(f"OpenAIChat extra_body sets {managed}, which OpenAIChat writes "
                          "itself; pass them as their own options (max_tokens=, stop=, …)")
    try:
        json.dumps(dict(extra))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"OpenAIChat extra_body={extra!r} is not JSON ({exc}); pass plain "
                          "numbers, strings, lists and dicts") from exc
    return MappingProxyType(dict(extra))


def _wire_options(tool_choice: object, stream: object, send_seed: object,
                  extra_body: object) -> WireOptions:
    for label, value in (("stream", stream), ("send_seed", send_seed)):
        if not isinstance(value, bool):
            raise ConfigError(f"OpenAIChat {label}={value!r} must be True or False")
    return WireOptions(tool_choice=check_tool_choice(tool_choice), stream=bool(stream),
                       send_seed=bool(send_seed), extra_body=_extra_body(extra_body))


class OpenAIChat(PooledClient):
    """A :class:`~footprint.providers.Provider` speaking OpenAI Chat Completions.

    ``POST {base_url}/chat/completions``. ``base_url`` defaults to env
    ``OPENAI_BASE_URL`` or ``http://127.0.0.1:8000/v1``; ``api_key`` to env
    ``OPENAI_API_KEY`` (sent as a bearer token when set). ``model`` is used
    when a request names none. Roles carried inside messages: user,
    assistant, tool and system.

    Tools go with ``tool_choice`` (``"auto"`` by default; ``"required"``,
    ``"none"``, a dict naming a function, or None to send none). An
    assistant message that made tool calls is sent with string content,
    never null. ``stream=True`` reads the reply as server-sent events: the
    same response, with usage from the last chunk and
    ``time_to_first_chunk_s`` set. The request's ``seed`` (the run's) is sent
    as the API's ``seed`` unless ``send_seed=False``. ``extra_body`` adds body
    fields as given (``top_p``, ``response_format``, a server's own); every
    parameter sent beside the messages and tools is what ``wire_params``
    returns and ``llm.start`` records as ``params``.

    Limits: ``max_tokens``, ``temperature`` and ``stop`` are sent with every
    request that does not set its own (an agent's ``Agent(max_tokens=...)``
    wins); ``timeout`` bounds one attempt in all, reply or stream included,
    and ``deadline`` (seconds, optional) every attempt and retry wait
    together, so a stream that never ends is cut between chunks. A server
    that never finishes ends the call with a :class:`RunError` naming the
    limit it passed.

    The process's pooled HTTP client for ``base_url`` serves every call, from
    every event loop and thread (``run_sync`` after ``run_sync`` reuses its
    connection; closed at interpreter exit); ``aclose()`` (or ``close()``
    outside a loop) closes the connections to this server, and ``Agent``
    closes the providers it holds when asked to (``agent.aclose()``).
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
        tool_choice: str | Mapping[str, Any] | None = "auto",
        stream: bool = False,
        send_seed: bool = True,
        extra_body: Mapping[str, Any] | None = None,
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
        self._options = _wire_options(tool_choice, stream, send_seed, extra_body)
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
        return openai_params(self._generation.apply(request), self._settings.model,
                             self._options)

    async def complete(self, request: LLMRequest) -> LLMResponse:
        settings = self._settings
        payload = openai_payload(self._generation.apply(request), settings.model, self._options)
        headers = {"content-type": "application/json"}
        if settings.api_key:
            headers["authorization"] = f"Bearer {settings.api_key}"
        call = wire_call(self._name, settings, "/chat/completions", payload, headers)
        if not self._options.stream:
            body = await post_json(call, self._backoff, self._pool)
            return parse_openai_response(body, self._name)
        streamed = await post_stream(call, self._backoff, self._pool, OpenAIChunks)
        response = parse_openai_response(streamed.body, self._name)
        return dataclasses.replace(response, time_to_first_chunk_s=streamed.first_chunk_s)
