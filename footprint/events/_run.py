"""Run-level events: configuration, start and end, iterations, routing, failure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, TypeAlias

from footprint.events._envelope import EventBase
from footprint.events._evidence import JSONValue

__all__ = [
    "Fidelity",
    "IterationEnd",
    "IterationStart",
    "RouteChoice",
    "RouteDecided",
    "RunConfigured",
    "RunEnd",
    "RunFailed",
    "RunSource",
    "RunStart",
    "StopCause",
]

RouteChoice: TypeAlias = Literal[
    "tool-calls", "final", "output-retry", "step-nudge", "evidence-recheck", "wrap-up"
]
StopCause: TypeAlias = Literal["max-iterations", "cost-budget"]
Fidelity: TypeAlias = Literal["request-level", "partial", "usage-only"]

def _no_options() -> Mapping[str, JSONValue]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True, kw_only=True)
class RunConfigured(EventBase):
    """How the agent was built for this run (once, first)."""

    type: Literal["run.configured"] = "run.configured"
    agent_name: str
    model: str
    provider: str
    max_iterations: int
    injection_count: int = 0
    tool_names: tuple[str, ...] = ()
    has_graph: bool = False
    options: Mapping[str, JSONValue] = field(default_factory=_no_options)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunStart(EventBase):
    """The person's message that starts this run (one turn), and the run's labels.

    ``user_id``, ``session_id``, ``tags`` and ``metadata`` are what the caller
    passed to ``agent.run(...)``; ``release`` and ``environment`` what the agent
    was built with. All are ``None``/empty when not given.
    """

    type: Literal["run.start"] = "run.start"
    user_message: str
    conversation_id: str | None = None
    user_id: str | None = None
    session_id: str | None = None
    tags: tuple[str, ...] = ()
    metadata: Mapping[str, JSONValue] = field(default_factory=_no_options)
    release: str | None = None
    environment: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RunEnd(EventBase):
    """The run's answer and totals.

    ``stopped_early`` names the limit that fired (``None`` when the model
    answered on its own); ``dropped_events`` counts events a recorder had to
    drop on overflow, so a reader knows the record is incomplete.
    """

    type: Literal["run.end"] = "run.end"
    final_content: str
    total_input_tokens: int = 0
    total_output_tokens: int = 0
    iteration_count: int = 0
    duration_ms: float = 0.0
    stopped_early: StopCause | None = None
    pending_tool_calls: int = 0
    wrapped_up: bool = False
    dropped_events: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class IterationStart(EventBase):
    """One loop iteration begins (its number is the envelope's ``iteration``)."""

    type: Literal["iteration.start"] = "iteration.start"


@dataclass(frozen=True, slots=True, kw_only=True)
class IterationEnd(EventBase):
    """One loop iteration ends, with how many tool calls it ran."""

    type: Literal["iteration.end"] = "iteration.end"
    tool_call_count: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class RouteDecided(EventBase):
    """What the loop does after a model call, and why."""

    type: Literal["route.decided"] = "route.decided"
    chosen: RouteChoice
    rationale: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFailed(EventBase):
    """The run stopped on an error (the ``run.error`` event).

    Named ``RunFailed`` so it never clashes with the ``RunError`` exception.
    ``stage`` is where it failed (``llm``, ``tool``, ``evaluate``, ``route``…).
    """

    type: Literal["run.error"] = "run.error"
    error_type: str
    message: str
    stage: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RunSource(EventBase):
    """Where a run's record came from when footprint did not run the agent (once, after
    ``run.configured``): a trace another framework exported, mapped by ``recorder.ingest``.

    ``framework`` names the emitter (its instrumentation scope), ``dialect`` the
    attribute convention its spans used, ``foreign_trace_id`` the trace. ``fidelity``
    is ``request-level`` when every model call's request was in the trace,
    ``partial`` when some were, ``usage-only`` when none (content capture off).
    ``unknown`` lists what such a trace cannot tell (so no reader invents it);
    ``flagged`` names content the emitter cut or dropped, per model call.
    """

    type: Literal["run.source"] = "run.source"
    source: str
    framework: str
    dialect: str
    fidelity: Fidelity
    foreign_trace_id: str
    unknown: tuple[str, ...] = ()
    flagged: tuple[str, ...] = ()
    spans: int = 0
    unmapped_spans: int = 0
