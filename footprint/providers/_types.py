"""The provider port: what the host sends a model and what comes back."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

__all__ = [
    "LLMRequest",
    "LLMResponse",
    "Message",
    "Provider",
    "StopReason",
    "ToolCall",
    "ToolSpec",
    "Usage",
]

StopReason: TypeAlias = Literal["end_turn", "tool_use", "max_tokens", "stop_sequence", "error",
                                "refusal", "content_filter"]
"""Why a reply ended: ``refusal`` when the model refused (its refusal is the content),
``content_filter`` when the provider's filter cut it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """One tool call the model asked for."""

    id: str
    name: str
    arguments: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """One wire message. ``origin`` records where it came from (``person``,
    ``llm#k``, ``tool#<call id>``, or an injection id) and is never sent."""

    role: Literal["user", "assistant", "tool", "system"]
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    tool_name: str | None = None
    origin: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSpec:
    """A tool as the model sees it."""

    name: str
    description: str
    input_schema: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True, kw_only=True)
class LLMRequest:
    """Exactly what one model call receives.

    ``seed`` is the run's seed (``Agent(seed=)``; ``why`` re-runs with seeds
    0..N-1): a :class:`FunctionModel` may sample with it and ``OpenAIChat``
    sends it as the API's ``seed``. It is not part of the request hash, so
    re-runs with other seeds replay the same recording.
    """

    model: str
    system: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    temperature: float | None = None
    max_tokens: int | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """Tokens one call used; ``None`` when the server did not say (unknown, never 0)."""

    input_tokens: int | None = 0
    output_tokens: int | None = 0
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class LLMResponse:
    """What one model call returned.

    ``time_to_first_chunk_s`` is set by a streaming provider: seconds from the
    start of the call to the first chunk of the reply (not part of the
    response hash: it is a timing, not what the model said).
    """

    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    stop_reason: StopReason = "end_turn"
    model: str | None = None
    response_id: str | None = None
    time_to_first_chunk_s: float | None = None


@runtime_checkable
class Provider(Protocol):
    """A model backend. ``name`` is what events record as the provider."""

    @property
    def name(self) -> str: ...

    async def complete(self, request: LLMRequest) -> LLMResponse: ...
