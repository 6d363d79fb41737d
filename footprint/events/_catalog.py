"""The closed catalog: every concrete event class, by its ``type`` tag."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from types import MappingProxyType
from typing import TypeAlias

from footprint.events._context import (
    BudgetPressure,
    ContextEvaluated,
    ContextInjected,
    InjectionDeclared,
    SlotComposed,
)
from footprint.events._envelope import EventBase
from footprint.events._model import LLMEnd, LLMStart, ToolEffect, ToolEnd, ToolStart
from footprint.events._run import (
    IterationEnd,
    IterationStart,
    RouteDecided,
    RunConfigured,
    RunEnd,
    RunFailed,
    RunSource,
    RunStart,
)
from footprint.events._skill import (
    RerouteSuperseded,
    RouteConflict,
    SkillActivated,
    SkillDeactivated,
    SkillEscalated,
    SkillGraphDeclared,
    SkillRejected,
    StepAdvanced,
    StepSkipped,
    StepsUnfinished,
    TurnRouted,
)

__all__ = ["ENVELOPE_FIELDS", "EVENT_TYPES", "TERMINAL_TYPES", "Event", "type_tag_of"]

Event: TypeAlias = (
    RunConfigured | RunSource | RunStart | RunEnd | IterationStart | IterationEnd | RouteDecided
    | SkillGraphDeclared | InjectionDeclared
    | ContextEvaluated | ContextInjected | SlotComposed | BudgetPressure
    | SkillActivated | SkillDeactivated | SkillRejected | SkillEscalated
    | RouteConflict | RerouteSuperseded | TurnRouted
    | StepAdvanced | StepSkipped | StepsUnfinished
    | LLMStart | LLMEnd | ToolStart | ToolEnd | ToolEffect
    | RunFailed
)

_CLASSES: tuple[type[Event], ...] = (
    RunConfigured, RunSource, RunStart, RunEnd, IterationStart, IterationEnd, RouteDecided,
    SkillGraphDeclared, InjectionDeclared,
    ContextEvaluated, ContextInjected, SlotComposed, BudgetPressure,
    SkillActivated, SkillDeactivated, SkillRejected, SkillEscalated,
    RouteConflict, RerouteSuperseded, TurnRouted,
    StepAdvanced, StepSkipped, StepsUnfinished,
    LLMStart, LLMEnd, ToolStart, ToolEnd, ToolEffect,
    RunFailed,
)


def type_tag_of(cls: type[EventBase]) -> str:
    """The ``type`` tag a concrete event class carries (its field default)."""
    for f in fields(cls):
        if f.name == "type" and isinstance(f.default, str):
            return f.default
    raise TypeError(f"{cls.__name__} has no 'type' tag; add `type: Literal[...] = ...`")


EVENT_TYPES: Mapping[str, type[Event]] = MappingProxyType(
    {type_tag_of(cls): cls for cls in _CLASSES}
)

TERMINAL_TYPES: frozenset[str] = frozenset({"run.end", "run.error"})
"""The type tags that end a run: nothing of the run follows them."""

ENVELOPE_FIELDS: tuple[str, ...] = (
    "schema_version", "run_id", "seq", "ts", "type", "turn", "iteration",
    "step_id", "parent_step", "trace_id", "span_id",
)
