"""footprint — an explainable agent engine whose every decision is evidence.

The common names are here; the rest live in the subpackages:
``footprint.injection`` (the primitive and its engine), ``footprint.graph``
(the skill graph), ``footprint.events`` (the event catalog),
``footprint.providers`` (models), ``footprint.hostkit`` (the host contract
and its conformance kit) and ``footprint.agent`` (the reference host).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from footprint._errors import ConfigError, FootprintError, RunError
from footprint._lazy import lazy_names

if TYPE_CHECKING:
    from footprint.agent import (
        Agent,
        RandomIds,
        RunResult,
        SeededIds,
        StepClock,
        SystemClock,
        ToolReturn,
        tool,
    )
    from footprint.events import EventBase, EventSink, ListSink, NullSink
    from footprint.graph import (
        All,
        EscalationPolicy,
        Intent,
        Keywords,
        KeywordScorer,
        ProviderChoice,
        Regex,
        SkillGraph,
        skill_graph,
    )
    from footprint.injection import (
        Always,
        Injection,
        InjectionContext,
        LLMActivated,
        OnToolReturn,
        Rule,
        SkillStep,
        define_fact,
        define_injection,
        define_instruction,
        define_skill,
        define_steering,
        evaluate_injections,
        is_hidden_skill,
        project_active_injection,
        said_by_person,
        tool_results_of,
    )
    from footprint.providers import (
        AnthropicMessages,
        FunctionModel,
        OpenAIChat,
        Provider,
        ScriptedModel,
        call,
    )
    from footprint.skills_dir import skills_from_dir

_HOME = {
    "Agent": "footprint.agent",
    "RandomIds": "footprint.agent",
    "RunResult": "footprint.agent",
    "SeededIds": "footprint.agent",
    "StepClock": "footprint.agent",
    "SystemClock": "footprint.agent",
    "ToolReturn": "footprint.agent",
    "tool": "footprint.agent",
    "EventBase": "footprint.events",
    "EventSink": "footprint.events",
    "ListSink": "footprint.events",
    "NullSink": "footprint.events",
    "All": "footprint.graph",
    "EscalationPolicy": "footprint.graph",
    "Intent": "footprint.graph",
    "Keywords": "footprint.graph",
    "KeywordScorer": "footprint.graph",
    "ProviderChoice": "footprint.graph",
    "Regex": "footprint.graph",
    "SkillGraph": "footprint.graph",
    "skill_graph": "footprint.graph",
    "Always": "footprint.injection",
    "Injection": "footprint.injection",
    "InjectionContext": "footprint.injection",
    "LLMActivated": "footprint.injection",
    "OnToolReturn": "footprint.injection",
    "Rule": "footprint.injection",
    "SkillStep": "footprint.injection",
    "define_fact": "footprint.injection",
    "define_injection": "footprint.injection",
    "define_instruction": "footprint.injection",
    "define_skill": "footprint.injection",
    "define_steering": "footprint.injection",
    "evaluate_injections": "footprint.injection",
    "is_hidden_skill": "footprint.injection",
    "project_active_injection": "footprint.injection",
    "said_by_person": "footprint.injection",
    "tool_results_of": "footprint.injection",
    "AnthropicMessages": "footprint.providers",
    "FunctionModel": "footprint.providers",
    "OpenAIChat": "footprint.providers",
    "Provider": "footprint.providers",
    "ScriptedModel": "footprint.providers",
    "call": "footprint.providers",
    "skills_from_dir": "footprint.skills_dir",
}
"""Where each common name lives: imported on first use, so ``import footprint.events``
(the recorder, the CLI) does not pay for the agent, the graph and the providers."""


__all__ = [
    "Agent",
    "All",
    "Always",
    "AnthropicMessages",
    "ConfigError",
    "EscalationPolicy",
    "EventBase",
    "EventSink",
    "FootprintError",
    "FunctionModel",
    "Injection",
    "InjectionContext",
    "Intent",
    "KeywordScorer",
    "Keywords",
    "LLMActivated",
    "ListSink",
    "NullSink",
    "OnToolReturn",
    "OpenAIChat",
    "Provider",
    "ProviderChoice",
    "RandomIds",
    "Regex",
    "Rule",
    "RunError",
    "RunResult",
    "ScriptedModel",
    "SeededIds",
    "SkillGraph",
    "SkillStep",
    "StepClock",
    "SystemClock",
    "ToolReturn",
    "call",
    "define_fact",
    "define_injection",
    "define_instruction",
    "define_skill",
    "define_steering",
    "evaluate_injections",
    "is_hidden_skill",
    "project_active_injection",
    "said_by_person",
    "skill_graph",
    "skills_from_dir",
    "tool",
    "tool_results_of",
]


__getattr__, __dir__ = lazy_names('footprint', _HOME, __all__)
