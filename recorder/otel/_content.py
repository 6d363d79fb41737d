"""What the model saw and said, in the GenAI conventions' message shapes.

Only used when content capture is on. The texts come from the recorded
events after the recorder's processors ran, so redaction has already
happened: the request JSON of ``llm.start`` (``request_ref``) gives the
system prompt and the messages, and each tool message takes the result that
the matching ``tool.end`` recorded (redaction by path acts on that field).

Shapes (semantic conventions for GenAI, ``gen_ai.system_instructions``,
``gen_ai.input.messages``, ``gen_ai.output.messages``): a message is
``{"role", "parts": [...]}``; parts are ``{"type": "text", "content"}``,
``{"type": "tool_call", "id", "name", "arguments"}`` and
``{"type": "tool_call_response", "id", "response"}``; output messages add
``finish_reason``.

Bounds: each text is cut at ``limit`` characters (the part then carries
``"truncated": <original length>``), and a message list whose JSON is still
longer than ``limit`` loses its oldest messages first; :class:`Bounded`
says how many were left out so the span can carry it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Bounded", "Prompt", "input_messages", "output_messages", "read_request",
    "system_instructions", "tool_definitions", "user_message",
]

Part = dict[str, Any]
ChatMessage = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Bounded:
    """A JSON attribute value and how many messages were left out to fit it."""

    text: str
    omitted: int = 0
    truncated: bool = False


def _text(kind: str, key: str, text: str, limit: int) -> Part:
    if len(text) <= limit:
        return {"type": kind, key: text}
    return {"type": kind, key: text[: max(limit - 1, 0)] + "…", "truncated": len(text)}


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=str, separators=(",", ":"))


_TEXT_KEYS = ("content", "response")


def _longest(parts: list[Part]) -> tuple[Part, str] | None:
    best: tuple[Part, str] | None = None
    for part in parts:
        for key in _TEXT_KEYS:
            value = part.get(key)
            if isinstance(value, str) and value and (best is None or len(value) > len(
                    best[0][best[1]])):
                best = (part, key)
    return best


def _squeeze(value: object, parts: list[Part], limit: int) -> tuple[str, bool]:
    """``value`` as JSON of at most ``limit`` characters, cutting its longest texts."""
    text, cut = _dumps(value), False
    while len(text) > limit:
        found = _longest(parts)
        if found is None:
            break
        part, key = found
        current: str = part[key]
        keep = max(min(len(current) - (len(text) - limit) - 2, len(current) - 2), 0)
        part.setdefault("truncated", len(current))
        part[key] = current[:keep] + "…" if keep else ""
        text, cut = _dumps(value), True
    return text, cut


def _fit(messages: list[ChatMessage], limit: int) -> Bounded:
    """Oldest messages first, then the longest texts, until the JSON fits ``limit``."""
    clipped = any("truncated" in p for m in messages for p in m["parts"])
    omitted = 0
    while len(_dumps(messages[omitted:])) > limit and len(messages) - omitted > 1:
        omitted += 1
    kept = messages[omitted:]
    text, cut = _squeeze(kept, [p for m in kept for p in m["parts"]], limit)
    return Bounded(text, omitted, clipped or cut or omitted > 0)


def system_instructions(system: str, limit: int) -> Bounded:
    """``gen_ai.system_instructions``: the system prompt as one text part."""
    parts = [_text("text", "content", system, limit)]
    text, cut = _squeeze(parts, parts, limit)
    return Bounded(text, 0, cut or "truncated" in parts[0])


def _call_part(call: Mapping[str, Any], limit: int) -> Part:
    arguments = call.get("arguments", {})
    encoded = _dumps(arguments)
    part: Part = {"type": "tool_call", "id": call.get("id"), "name": call.get("name")}
    if len(encoded) <= limit:
        part["arguments"] = arguments
    else:
        part["arguments"] = encoded[: max(limit - 1, 0)] + "…"
        part["truncated"] = len(encoded)
    return part


def _input_message(raw: Mapping[str, Any], limit: int) -> ChatMessage:
    role = str(raw.get("role", "user"))
    content = str(raw.get("content") or "")
    if role == "tool":
        part = _text("tool_call_response", "response", content, limit)
        part["id"] = raw.get("tool_call_id")
        return {"role": "tool", "parts": [part]}
    parts: list[Part] = [_text("text", "content", content, limit)] if content else []
    parts.extend(_call_part(c, limit) for c in raw.get("tool_calls") or ())
    return {"role": role, "parts": parts}


@dataclass(frozen=True, slots=True)
class Prompt:
    """A recorded request as the trace shows it: tool messages carry recorded results."""

    system: str
    messages: tuple[Mapping[str, Any], ...]


def read_request(request_json: str, results: Mapping[str, str]) -> Prompt | None:
    """The system prompt and messages of ``llm.start``'s request JSON, or ``None``.

    ``results`` maps tool call ids to the results their ``tool.end`` recorded,
    so a result redacted on ``tool.end`` is redacted here too.
    """
    try:
        request = json.loads(request_json)
    except (TypeError, ValueError):
        return None
    raw = request.get("messages") if isinstance(request, dict) else None
    if not isinstance(raw, list):
        return None
    system = request.get("system")
    messages = tuple(_recorded(m, results) for m in raw if isinstance(m, dict))
    return Prompt(system if isinstance(system, str) else "", messages)


def _recorded(message: dict[str, Any], results: Mapping[str, str]) -> Mapping[str, Any]:
    call_id = message.get("tool_call_id")
    if message.get("role") == "tool" and call_id is not None and str(call_id) in results:
        return {**message, "content": results[str(call_id)]}
    return message


def input_messages(prompt: Prompt, limit: int) -> Bounded:
    """``gen_ai.input.messages`` of a request."""
    return _fit([_input_message(m, limit) for m in prompt.messages], limit)


def user_message(text: str, limit: int) -> Bounded:
    """The person's message of a run as ``gen_ai.input.messages`` (the root span's input)."""
    return _fit([{"role": "user", "parts": [_text("text", "content", text, limit)]}], limit)


def output_messages(content: str, calls: Sequence[Mapping[str, Any]], finish: str,
                    limit: int) -> Bounded:
    """``gen_ai.output.messages``: one assistant message with its text and tool calls."""
    parts: list[Part] = [_text("text", "content", content, limit)] if content else []
    parts.extend(_call_part(c, limit) for c in calls)
    return _fit([{"role": "assistant", "parts": parts, "finish_reason": finish}], limit)


def tool_definitions(request_json: str, limit: int) -> str | None:
    """``gen_ai.tool.definitions`` of a recorded request (JSON: each tool's ``type``,
    ``name``, ``description`` and ``parameters``); ``None`` when it offered none, or when
    the list is longer than ``limit`` (a list cut short would be no longer JSON)."""
    try:
        request = json.loads(request_json)
    except (TypeError, ValueError):
        return None
    raw = request.get("tools") if isinstance(request, dict) else None
    if not isinstance(raw, list) or not raw:
        return None
    tools = [{"type": "function", "name": t.get("name"), "description": t.get("description"),
              "parameters": t.get("input_schema") or {}} for t in raw if isinstance(t, dict)]
    text = _dumps(tools)
    return text if len(text) <= limit else None
