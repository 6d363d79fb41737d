"""Canonical JSON of what a model call sent and received, for hashes and replay.

The request hash covers exactly what the provider receives (the ``origin``
bookkeeping on messages is never sent, so it is not hashed), which is what a
replaying model matches on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from footprint.providers import LLMRequest, LLMResponse, Message, ToolCall

__all__ = ["json_safe", "request_json", "response_json", "to_text"]


def json_safe(value: Any) -> Any:
    """``value`` as plain JSON data (mappings to dicts, tuples to lists, others to str)."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [json_safe(v) for v in value]
    return str(value)


def to_text(value: Any) -> str:
    """A tool's return value as the string the model reads."""
    if isinstance(value, str):
        return value
    return json.dumps(json_safe(value), ensure_ascii=False, sort_keys=True)


def _call(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "name": call.name, "arguments": json_safe(call.arguments)}


def _message(m: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.tool_calls:
        out["tool_calls"] = [_call(c) for c in m.tool_calls]
    if m.tool_call_id is not None:
        out["tool_call_id"] = m.tool_call_id
    if m.tool_name is not None:
        out["tool_name"] = m.tool_name
    return out


def _dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def request_json(request: LLMRequest) -> str:
    """The request as canonical JSON (sorted keys, no whitespace).

    ``stop`` is written only when set, so requests without stop sequences hash
    as they always have (recorded cassettes keep matching). The run's ``seed``
    is never written: a re-run under another seed sends the same request, and
    a recording made under one seed replays under any.
    """
    body: dict[str, Any] = {
        "model": request.model,
        "system": request.system,
        "messages": [_message(m) for m in request.messages],
        "tools": [
            {"name": t.name, "description": t.description,
             "input_schema": json_safe(t.input_schema)}
            for t in request.tools
        ],
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
    }
    if request.stop:
        body["stop"] = list(request.stop)
    return _dumps(body)


def response_json(response: LLMResponse) -> str:
    """The response as canonical JSON (timings such as the time to first chunk left out)."""
    u = response.usage
    return _dumps({
        "content": response.content,
        "tool_calls": [_call(c) for c in response.tool_calls],
        "usage": {"input_tokens": u.input_tokens, "output_tokens": u.output_tokens,
                  "cache_read_tokens": u.cache_read_tokens,
                  "cache_write_tokens": u.cache_write_tokens},
        "stop_reason": response.stop_reason,
        "model": response.model,
        "response_id": response.response_id,
    })
