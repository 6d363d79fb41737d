"""One-line summaries of recorded events, for the inspector, skills and why screens (pure)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping

from footprint.events import (
    ENVELOPE_FIELDS,
    ConditionEvidence,
    ContextEvaluated,
    CursorMove,
    Event,
    LLMEnd,
    ToolEnd,
    ToolStart,
)
from lens.playback._answer import tokens_of
from lens.playback._stream import clip

__all__ = ["clip", "condition_text", "move_text", "summarize", "value_text"]

_SKIP = frozenset(ENVELOPE_FIELDS) | {"type"}


def value_text(value: object, width: int = 40) -> str:
    """A compact rendering of a payload value: JSON for containers, clipped."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    if isinstance(value, Mapping | list | tuple):
        try:
            return clip(json.dumps(value, default=str, ensure_ascii=False), width)
        except (TypeError, ValueError):
            return clip(value, width)
    return clip(value, width)


def condition_text(c: ConditionEvidence) -> str:
    """``key op value → actual ✓`` (or ✗ with the note)."""
    mark = "✓" if c.passed else "✗"
    note = f" ({c.note})" if c.note else ""
    return f"{c.key} {c.op} {value_text(c.value, 30)} → {c.actual_summary} {mark}{note}"


def move_text(move: CursorMove) -> str:
    """``from → to by <rule>`` with the witness when one was recorded."""
    text = f"{move.from_skill or '∅'} → {move.to or '∅'} by {move.by}"
    if move.witness:
        text += f", witness {move.witness!r}"
    return text


def _special(event: Event) -> str | None:
    if isinstance(event, ContextEvaluated):
        move = f"cursor {move_text(event.cursor_move)}; " if event.cursor_move else ""
        return f"{move}{event.active_count} active, {event.skipped_count} skipped"
    if isinstance(event, ToolStart):
        return f"{event.tool_name}({value_text(dict(event.args), 50)}) #{event.tool_call_id}"
    if isinstance(event, ToolEnd):
        flag = " ERROR" if event.error else ""
        return f"{event.tool_name} #{event.tool_call_id} → {clip(event.result, 50)!r}{flag}"
    if isinstance(event, LLMEnd):
        calls = ", ".join(c.name for c in event.tool_calls) or "no tool calls"
        return (f"{clip(event.content, 40)!r} [{calls}; "
                f"{tokens_of(event)}]")
    return None


def summarize(event: Event, width: int = 100) -> str:
    """``seq N <type>: key fields`` — the payload's non-empty fields, compactly."""
    body = _special(event)
    if body is None:
        parts = []
        for f in dataclasses.fields(event):
            if f.name in _SKIP:
                continue
            value = getattr(event, f.name)
            if value is None or value == () or value == {} or value == "":
                continue
            parts.append(f"{f.name}={value_text(value, 30)}")
        body = " ".join(parts)
    return clip(f"seq {event.seq} {event.type}: {body}", width)
