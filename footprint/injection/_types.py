"""The Injection primitive and the per-iteration context, as frozen data.

Every form of context (skill, steering, instruction, fact, memory, RAG,
custom) is one :class:`Injection`: an id, a flavor, a trigger saying *when*,
and content saying *what* goes into which slot. The
:class:`InjectionContext` is the read-only snapshot that every trigger and
the skill graph read, built once per iteration by the host.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

from footprint._validate import (
    check_bool,
    check_callable,
    check_instance,
    check_positive,
    check_str,
)

__all__ = [
    "BASELINE_SOURCES",
    "FLAVORS",
    "TOOL_STATUSES",
    "ActiveContent",
    "ActiveInjection",
    "Always",
    "CacheContext",
    "CachePolicy",
    "CacheUntil",
    "ContextSource",
    "EntryScore",
    "Flavor",
    "HistoryMessage",
    "InjectedBy",
    "InjectedMessage",
    "Injection",
    "InjectionContent",
    "InjectionContext",
    "LLMActivated",
    "OnToolReturn",
    "ProjectedTool",
    "Retrieval",
    "Role",
    "Rule",
    "SkillTool",
    "SkillToolSchema",
    "Slot",
    "StepPointer",
    "ToolResult",
    "ToolStatus",
    "Trigger",
    "TurnRoute",
]

Flavor: TypeAlias = Literal[
    "rag", "skill", "memory", "instructions", "steering", "fact", "custom"
]
ContextSource: TypeAlias = Literal[
    "rag", "skill", "memory", "instructions", "steering", "fact", "custom",
    "user", "tool-result", "assistant", "base", "registry",
]
Role: TypeAlias = Literal["system", "user", "assistant", "tool"]
Slot: TypeAlias = Literal["system-prompt", "messages", "tools"]
ToolStatus: TypeAlias = Literal[
    "success", "failure", "denied", "invalid", "partial", "pending", "absent"
]

FLAVORS: tuple[Flavor, ...] = (
    "rag", "skill", "memory", "instructions", "steering", "fact", "custom"
)
BASELINE_SOURCES: tuple[ContextSource, ...] = (
    "user", "tool-result", "assistant", "base", "registry"
)
TOOL_STATUSES: tuple[ToolStatus, ...] = (
    "success", "failure", "denied", "invalid", "partial", "pending", "absent"
)

_EMPTY: Mapping[str, Any] = MappingProxyType({})


# ── tools ──────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillToolSchema:
    """A tool's model-facing declaration: name, description, JSON input schema."""

    name: str
    description: str
    input_schema: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)

    def __post_init__(self) -> None:
        check_str("SkillToolSchema(name=...)", self.name, fix="name the tool")
        check_str(f"SkillToolSchema({self.name}) description", self.description,
                  fix="describe what the tool does", empty_ok=True)
        check_instance(f"SkillToolSchema({self.name}) input_schema", self.input_schema,
                       Mapping, fix="pass a JSON schema dict such as {'type': 'object'}")


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillTool:
    """The narrow tool shape a skill carries: a schema and something to run.

    ``execute`` receives the validated arguments as one mapping and may
    return a value or an awaitable. ``wants`` maps an argument name to the
    artifact kind it redeems (skill vocabulary, spec §4). ``timeout_s``
    bounds one call (``None``: the agent's ``tool_timeout_s`` applies).
    ``deterministic`` says the same arguments always give the same result,
    so a replay may re-run the tool when its recorded result was redacted (and check the
    result against the recorded hash).
    """

    schema: SkillToolSchema
    execute: Callable[[Mapping[str, Any]], Any | Awaitable[Any]]
    wants: Mapping[str, str] | None = None
    timeout_s: float | None = None
    deterministic: bool = False

    def __post_init__(self) -> None:
        check_instance("SkillTool(schema=...)", self.schema, SkillToolSchema,
                       fix="pass SkillToolSchema(name=..., description=...)")
        where = f"SkillTool({self.schema.name})"
        check_callable(f"{where} execute", self.execute,
                       fix="pass a function taking the arguments mapping")
        if self.wants is not None:
            check_instance(f"{where} wants", self.wants, Mapping,
                           fix="map argument names to artifact kinds, e.g. {'ref': 'doc/pdf'}")
        check_positive(f"{where} timeout_s", self.timeout_s, example="timeout_s=30")
        check_bool(f"{where} deterministic", self.deterministic)

    @property
    def name(self) -> str:
        return self.schema.name


# ── triggers ───────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True, kw_only=True)
class Always:
    """Active on every iteration."""

    kind: Literal["always"] = "always"


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """Active when ``active_when(ctx)`` is truthy; a raise is a ``predicate-threw`` skip."""

    active_when: Callable[[InjectionContext], object]
    kind: Literal["rule"] = "rule"


@dataclass(frozen=True, slots=True, kw_only=True)
class OnToolReturn:
    """Active when any result of the previous batch came from a matching tool.

    A string matches exactly; a compiled pattern is searched.
    """

    tool_name: str | re.Pattern[str]
    kind: Literal["on-tool-return"] = "on-tool-return"


@dataclass(frozen=True, slots=True, kw_only=True)
class LLMActivated:
    """Active once the model activated it (``read_skill``) this run."""

    via_tool_name: str = "read_skill"
    kind: Literal["llm-activated"] = "llm-activated"


Trigger: TypeAlias = Always | Rule | OnToolReturn | LLMActivated


# ── content ────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True, kw_only=True)
class InjectedMessage:
    """A message an injection delivers into history (role never ``tool``)."""

    role: Role
    content: str


@dataclass(frozen=True, slots=True, kw_only=True)
class InjectionContent:
    """What an injection contributes, per slot."""

    system_prompt: str | None = None
    messages: tuple[InjectedMessage, ...] = ()
    tools: tuple[SkillTool, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class CacheContext:
    """What a ``CacheUntil`` predicate may read."""

    iteration: int
    iterations_remaining: int
    user_message: str
    cumulative_input_tokens: int
    last_tool_name: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CacheUntil:
    """Cacheable until ``until(ctx)`` becomes true (a raise means not cacheable)."""

    until: Callable[[CacheContext], bool]


CachePolicy: TypeAlias = Literal["always", "never", "while-active"] | CacheUntil


@dataclass(frozen=True, slots=True, kw_only=True)
class Injection:
    """THE primitive: an id, a flavor, a trigger (when) and content (what).

    ``metadata`` is a free bag; the engine reads only the known keys
    (``surface_mode``, ``auto_activate``, ``cache``, ``steps``, ``on_skip``,
    ``produces``, ``consumes``, ``provider``, ``model``, ``skill_graph``) and
    ignores the rest. ``title`` is for people and is never sent to the model.
    """

    id: str
    flavor: Flavor
    trigger: Trigger
    inject: InjectionContent
    description: str | None = None
    title: str | None = None
    templated: bool = False
    metadata: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)


# ── the per-iteration context ──────────────────────────────────────────────


@dataclass(frozen=True, slots=True, kw_only=True)
class InjectedBy:
    """Which injection delivered a history message."""

    injection_id: str
    flavor: ContextSource


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryMessage:
    """One message of the conversation so far, as triggers see it.

    ``injected_by`` is set exactly when an injection delivered it;
    ``library_written`` marks the library's own user-role bookkeeping
    (wrap-up, nudges, corrections) so that :func:`said_by_person` can skip it.
    """

    role: Role
    content: str
    tool_name: str | None = None
    injected_by: InjectedBy | None = None
    library_written: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    """One result of the previous iteration's batch, as the model read it."""

    tool_name: str
    result: str
    tool_call_id: str | None = None
    status: ToolStatus | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StepPointer:
    """Where a stepped skill's procedure stands (1-based; done at total+1)."""

    skill_id: str
    step: int
    total: int
    skipped: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class EntryScore:
    """An entry scorer's verdict for one entry: raw score and softmax share."""

    id: str
    score: float
    relevance: float


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnRoute:
    """The turn-start routing verdict the cursor consumes on iteration 1."""

    by: Literal["entry", "intent", "continuity", "decider", "menu", "none"]
    from_skill: str | None = None
    to: str | None = None
    witness: str | None = None
    offered: tuple[str, ...] | None = None
    stay_offered: bool = False
    relevance: Mapping[str, float] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class InjectionContext:
    """The read-only snapshot every trigger and the graph read, once per iteration.

    ``iterations_remaining`` is derived from ``max_iterations`` so the two
    are present together or not at all.
    """

    iteration: int
    user_message: str
    history: tuple[HistoryMessage, ...] = ()
    max_iterations: int | None = None
    last_tool_result: ToolResult | None = None
    tool_results: tuple[ToolResult, ...] | None = None
    activated_injection_ids: tuple[str, ...] = ()
    current_skill_id: str | None = None
    pending_skill_pick: str | None = None
    pending_tool_transition: str | None = None
    lease_active_ids: tuple[str, ...] | None = None
    parked_ids: tuple[str, ...] | None = None
    hidden_skill_ids: tuple[str, ...] | None = None
    entry_scores: tuple[EntryScore, ...] | None = None
    entry_scorer: str | None = None
    turn_route: TurnRoute | None = None
    step_pointer: StepPointer | None = None

    @property
    def iterations_remaining(self) -> int | None:
        if self.max_iterations is None:
            return None
        return max(0, self.max_iterations - self.iteration)


# ── the projection: an active injection as plain data ──────────────────────


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectedTool:
    """A tool schema without its ``execute``, tagged with its injection."""

    schema: SkillToolSchema
    injection_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ActiveContent:
    system_prompt: str | None = None
    messages: tuple[InjectedMessage, ...] = ()
    tools: tuple[ProjectedTool, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Retrieval:
    """Why a retrieved chunk earned its place."""

    score: float
    rank: int
    threshold: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ActiveInjection:
    """An active injection as serialisable data: no trigger, no ``execute``."""

    id: str
    flavor: Flavor
    inject: ActiveContent
    description: str | None = None
    surface_mode: Literal["auto", "system-prompt", "tool-only", "both"] | None = None
    auto_activate: Literal["currentSkill"] | None = None
    cache: CachePolicy | None = None
    retrieval: Retrieval | None = None
