"""footprint — an explainable agent engine whose every decision is evidence.

The common names are here; the rest live in the subpackages:
``footprint.injection`` (the primitive and its engine), ``footprint.graph``
(the skill graph), ``footprint.events`` (the event catalog),
``footprint.providers`` (models), ``footprint.hostkit`` (the host contract
and its conformance kit) and ``footprint.agent`` (the reference host).
"""

from footprint._errors import ConfigError, FootprintError, RunError
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
