"""A conversation as plain JSON: what ``checkpoint()`` writes and ``continue_from=`` reads."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from footprint._errors import ConfigError
from footprint.agent._wire import json_safe
from footprint.providers import Message, ToolCall

__all__ = ["FORMAT", "Conversation", "conversation_from", "conversation_to"]

FORMAT = "footprint.checkpoint/1"
_ROLES = ("user", "assistant", "tool", "system")


@dataclass(frozen=True, slots=True, kw_only=True)
class Conversation:
    """What carries from one turn to the next."""

    conversation_id: str
    turns: int
    history: list[Message]
    cursor: str | None


def _message_to(m: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.tool_calls:
        out["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": json_safe(c.arguments)}
                             for c in m.tool_calls]
    for key in ("tool_call_id", "tool_name", "origin"):
        if getattr(m, key) is not None:
            out[key] = getattr(m, key)
    return out


def conversation_to(conv: Conversation) -> dict[str, Any]:
    """The conversation as a JSON-safe dict."""
    return {"format": FORMAT, "conversation_id": conv.conversation_id, "turns": conv.turns,
            "cursor": conv.cursor, "history": [_message_to(m) for m in conv.history]}


def _bad(where: str, value: object, fix: str) -> ConfigError:
    return ConfigError(f"continue_from: {where} is {value!r}; {fix}")


def _message_from(i: int, raw: object) -> Message:
    if not isinstance(raw, Mapping):
        raise _bad(f"history[{i}]", raw, "each message is an object with role and content")
    role, content = raw.get("role"), raw.get("content")
    if role not in _ROLES or not isinstance(content, str):
        raise _bad(f"history[{i}]", raw, f"role must be one of {_ROLES} and content a string")
    calls = tuple(
        ToolCall(id=str(c["id"]), name=str(c["name"]), arguments=dict(c.get("arguments") or {}))
        for c in raw.get("tool_calls") or ()
    )
    return Message(role=role, content=content, tool_calls=calls,
                   tool_call_id=raw.get("tool_call_id"), tool_name=raw.get("tool_name"),
                   origin=raw.get("origin"))


def conversation_from(data: Mapping[str, Any]) -> Conversation:
    """Read a checkpoint back; a malformed one is a ``ConfigError`` naming the field."""
    if not isinstance(data, Mapping) or data.get("format") != FORMAT:
        got = data.get("format") if isinstance(data, Mapping) else data
        raise _bad("format", got, f"pass what agent.checkpoint() returned ({FORMAT!r})")
    turns, history = data.get("turns"), data.get("history")
    if not isinstance(turns, int) or turns < 0:
        raise _bad("turns", turns, "it must be a whole number >= 0")
    if not isinstance(history, list):
        raise _bad("history", history, "it must be a list of messages")
    cursor = data.get("cursor")
    return Conversation(conversation_id=str(data.get("conversation_id") or ""), turns=turns,
                        history=[_message_from(i, m) for i, m in enumerate(history)],
                        cursor=cursor if isinstance(cursor, str) else None)
