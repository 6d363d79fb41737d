"""Model and tool events: each model call, each tool call, and each tool effect."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

from footprint.events._envelope import EventBase
from footprint.events._evidence import JSONValue

if TYPE_CHECKING:
    from footprint.injection._types import ToolStatus
    from footprint.providers._types import StopReason, ToolCall

__all__ = ["LLMEnd", "LLMStart", "ToolEffect", "ToolEnd", "ToolStart"]


def _no_args() -> Mapping[str, JSONValue]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True, kw_only=True)
class LLMStart(EventBase):
    """One model call is about to be made.

    ``request_hash`` identifies the exact request (replay matches on it);
    ``request_ref`` is the request JSON itself, which redaction may drop.
    ``brain_via``/``brain_skill_id`` say which skill or escalation chose the model.
    ``params`` holds the generation parameters the provider put on the wire beside
    the messages and tools, exactly as sent (``model``, ``max_tokens``,
    ``temperature``, ``top_p``, ``stop``, ``seed``, ``tool_choice``,
    ``response_format``, any extras): a key that is absent was not sent. For a run
    taken in from a trace, the parameters the trace recorded. ``None`` when
    nothing was recorded (a recording older than this field). Not hashed.
    """

    type: Literal["llm.start"] = "llm.start"
    provider: str
    model: str
    request_hash: str
    system_prompt_chars: int = 0
    messages_count: int = 0
    tools_count: int = 0
    tool_names: tuple[str, ...] = ()
    brain_via: str | None = None
    brain_skill_id: str | None = None
    temperature: float | None = None
    request_ref: str | None = None
    params: Mapping[str, JSONValue] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class LLMEnd(EventBase):
    """What one model call returned, with usage and timing.

    ``time_to_first_chunk_s`` is set when the provider streamed the reply:
    seconds from the start of the call to its first chunk. ``input_tokens`` and
    ``output_tokens`` are ``None`` when the server reported no usage (unknown:
    counted as nothing and priced as unknown, never as 0 tokens).
    """

    type: Literal["llm.end"] = "llm.end"
    content: str
    response_hash: str
    tool_calls: tuple[ToolCall, ...] = ()
    input_tokens: int | None = 0
    output_tokens: int | None = 0
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    stop_reason: StopReason = "end_turn"
    duration_ms: float = 0.0
    model: str | None = None
    time_to_first_chunk_s: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolStart(EventBase):
    """One tool call starts (``parallel_count`` set when the batch has more than one)."""

    type: Literal["tool.start"] = "tool.start"
    tool_name: str
    tool_call_id: str
    args: Mapping[str, JSONValue] = field(default_factory=_no_args)
    parallel_count: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolEnd(EventBase):
    """One tool call finished: its result text, status and timing.

    ``result`` is what the model reads; when the host appended a stepped
    skill's note to it, ``step_note`` holds that note, so the tool's own
    result is ``result`` without it (what a replay serves back).
    ``status_by`` says who assigned ``status``: ``"tool"`` when the tool
    declared it (only these reach ``on_tool_status`` routes and ``status``
    guards), ``"host"`` when the host did — ``invalid`` for an unknown tool
    or unusable arguments, ``failure`` for a raise, an unreadable result or
    a timeout (then ``timeout_s`` holds the limit that ran out).
    """

    type: Literal["tool.end"] = "tool.end"
    tool_call_id: str
    tool_name: str
    result: str
    status: ToolStatus | None = None
    error: bool = False
    duration_ms: float = 0.0
    step_note: str | None = None
    status_by: Literal["tool", "host"] | None = None
    timeout_s: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolEffect(EventBase):
    """A tool's side request (a proposed transition, a required instruction) and its fate."""

    type: Literal["tool.effect"] = "tool.effect"
    kind: str
    outcome: Literal["accepted", "refused", "superseded"]
    tool_name: str
    tool_call_id: str | None = None
    target_skill_id: str | None = None
    reason: str | None = None
    instruction_id: str | None = None
    delivery_lease: Literal["next-call", "until-skill-exit"] | None = None
    refusal_reason: str | None = None
    superseded_by: str | None = None
