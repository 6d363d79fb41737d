"""Tool-call arguments: JSON decoding, the reserved key for malformed text,
and the deterministic token estimate the in-process models use."""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from footprint.providers._types import LLMRequest, ToolCall

__all__ = [
    "ARGUMENTS_ERROR_KEY",
    "RAW_ARGUMENTS_KEY",
    "decode_arguments",
    "encode_arguments",
    "estimate_tokens",
    "estimate_usage_tokens",
    "raw_arguments_of",
]

RAW_ARGUMENTS_KEY = "__footprint_raw_arguments__"
"""Reserved key: a tool call whose arguments were not a JSON object carries
the model's raw text under this key, so the host can answer with a teaching
error instead of running the tool."""

ARGUMENTS_ERROR_KEY = "__footprint_arguments_error__"
"""Reserved key next to :data:`RAW_ARGUMENTS_KEY`: why the text was refused."""


def decode_arguments(raw: object) -> Mapping[str, Any]:
    """Decode a wire ``arguments`` value into a read-only mapping.

    A JSON object (text or already decoded) becomes that object; empty text
    becomes ``{}``; anything else keeps the raw text under the reserved keys.
    """
    if isinstance(raw, Mapping):
        return MappingProxyType(dict(raw))
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return MappingProxyType({})
    text = raw if isinstance(raw, str) else json.dumps(raw)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return _malformed(text, f"not valid JSON ({exc.msg} at position {exc.pos})")
    if not isinstance(value, dict):
        return _malformed(text, f"a JSON {type(value).__name__}, not an object")
    return MappingProxyType(value)


def _malformed(text: str, why: str) -> Mapping[str, Any]:
    return MappingProxyType({RAW_ARGUMENTS_KEY: text, ARGUMENTS_ERROR_KEY: why})


def raw_arguments_of(call: ToolCall) -> str | None:
    """The raw argument text when the model sent malformed arguments, else None."""
    raw = call.arguments.get(RAW_ARGUMENTS_KEY)
    return raw if isinstance(raw, str) else None


def encode_arguments(call: ToolCall) -> str:
    """Arguments as wire JSON text; malformed ones go back verbatim, so the
    model sees exactly what it sent."""
    raw = raw_arguments_of(call)
    if raw is not None:
        return raw
    return json.dumps(dict(call.arguments), ensure_ascii=False, sort_keys=True)


def estimate_tokens(text: str) -> int:
    """A deterministic estimate: one token per four characters, rounded up."""
    return (len(text) + 3) // 4


def estimate_usage_tokens(request: LLMRequest) -> int:
    """Estimated prompt tokens of a request: system, messages, tool calls, tools."""
    parts: list[str] = [request.system]
    for message in request.messages:
        parts.append(message.content)
        parts.extend(call.name + encode_arguments(call) for call in message.tool_calls)
    for tool in request.tools:
        parts.append(tool.name + tool.description)
        parts.append(json.dumps(dict(tool.input_schema), sort_keys=True, default=str))
    return estimate_tokens("".join(parts))
