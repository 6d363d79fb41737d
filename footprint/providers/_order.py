"""Messages in the order every OpenAI-compatible server accepts.

A request recorded from another framework's trace (or rebuilt with pieces
taken out) may hold parallel tool calls as one assistant message per call,
results after all of them, an assistant turn left with nothing, or a result
whose call is gone. Strict servers refuse each of these. :func:`wire_order`
rebuilds the messages so that consecutive assistant messages become one (its
text joined, its tool calls in order), each assistant message that made tool
calls is followed directly by their results (in call order), a call without a
result and a result without a call are left out, and an assistant message
with neither text nor calls is dropped. A request already in that shape comes
back unchanged (every request a native run sends).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from footprint.providers._types import Message

__all__ = ["wire_order"]


def _merged(messages: Sequence[Message]) -> list[Message]:
    """Consecutive assistant messages as one, where any of them made tool calls."""
    out: list[Message] = []
    for m in messages:
        last = out[-1] if out else None
        if (last is not None and m.role == last.role == "assistant"
                and (m.tool_calls or last.tool_calls)):
            text = "\n".join(t for t in (last.content, m.content) if t)
            out[-1] = replace(last, content=text, tool_calls=last.tool_calls + m.tool_calls)
            continue
        out.append(m)
    return out


def wire_order(messages: Sequence[Message]) -> tuple[Message, ...]:
    """``messages`` in the shape strict servers require (module doc)."""
    results: dict[str, list[Message]] = {}
    for m in messages:
        if m.role == "tool" and m.tool_call_id is not None:
            results.setdefault(m.tool_call_id, []).append(m)
    out: list[Message] = []
    for m in _merged(messages):
        if m.role == "tool" and m.tool_call_id is not None:
            continue  # placed after its call, or left out when its call is gone
        if m.role == "assistant" and m.tool_calls:
            answered = [(c, results[c.id].pop(0)) for c in m.tool_calls if results.get(c.id)]
            calls = tuple(c for c, _ in answered)
            if calls != m.tool_calls:
                m = replace(m, tool_calls=calls)
            if calls or m.content:
                out.append(m)
            out.extend(r for _, r in answered)
            continue
        if m.role == "assistant" and not m.content:
            continue
        out.append(m)
    return tuple(out)
