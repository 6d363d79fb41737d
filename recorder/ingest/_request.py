"""The normalised request of one foreign model call, whatever dialect carried it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

__all__ = ["Call", "ChatRequest", "Dialect", "Doc", "Msg", "ToolDef", "arguments_of", "text_of"]

Dialect: TypeAlias = Literal["otel-genai", "openinference", "legacy-indexed"]
MsgRole: TypeAlias = Literal["user", "assistant", "tool", "system"]


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})


_ENCODER = json.JSONEncoder(ensure_ascii=False, sort_keys=True, default=str)
"""What ``json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)`` builds anew
on every call (an encoder keeps no state between calls)."""


def text_of(value: Any) -> str:
    """A content value as text: strings as they are, anything else as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return _ENCODER.encode(value)


def arguments_of(value: Any) -> Mapping[str, Any]:
    """Tool-call arguments as a mapping (a JSON object string is parsed; other values kept
    under ``"input"``)."""
    if type(value) is dict or isinstance(value, Mapping):
        return MappingProxyType(dict(value))
    if isinstance(value, str):
        try:
            parsed = json.loads(value) if value.strip() else {}
        except ValueError:
            return MappingProxyType({"input": value})
        return arguments_of(parsed) if isinstance(parsed, Mapping) else MappingProxyType(
            {"input": parsed})
    return MappingProxyType({} if value is None else {"input": value})


@dataclass(frozen=True, slots=True, kw_only=True)
class Call:
    """One tool call a model asked for."""

    id: str
    name: str
    arguments: Mapping[str, Any] = field(default_factory=_empty)


@dataclass(frozen=True, slots=True, kw_only=True)
class Msg:
    """One message of a request or a response, as the emitter recorded it."""

    role: MsgRole
    content: str = ""
    tool_calls: tuple[Call, ...] = ()
    tool_call_id: str | None = None
    tool_name: str | None = None
    truncated: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolDef:
    """One tool as the model was offered it."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=_empty)


@dataclass(frozen=True, slots=True, kw_only=True)
class Doc:
    """One retrieved document the emitter marked as such."""

    content: str
    doc_id: str | None = None
    score: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ChatRequest:
    """One model call: the request as sent (as far as the span tells) and its response.

    ``notes`` says what the span could not tell or lost (dropped attributes,
    truncation marks, parts that are not text); ``has_content`` is false when the
    span did not carry the request's content (capture off, inputs hidden, or only the
    parts' shapes): the request is then unknown, whatever the response says.
    """

    dialect: Dialect
    model: str = ""
    provider: str = ""
    system: tuple[str, ...] = ()
    messages: tuple[Msg, ...] = ()
    tools: tuple[ToolDef, ...] = ()
    output: tuple[Msg, ...] = ()
    finish_reason: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    temperature: float | None = None
    max_tokens: int | None = None
    params: Mapping[str, Any] = field(default_factory=_empty)
    """The generation parameters the span recorded (``gen_ai.request.*``, OpenInference's
    ``llm.invocation_parameters``), as sent; a key that is absent is not in the trace."""
    notes: tuple[str, ...] = ()
    has_content: bool = True
