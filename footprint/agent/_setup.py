"""Everything an Agent decides once, at build time, checked and frozen.

``build_setup`` runs every build-time refusal (duplicate ids, stepped-skill
rules, brains, postures) and returns an immutable ``AgentSetup`` that the
run loop only reads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

from footprint._errors import ConfigError, did_you_mean
from footprint._validate import check_positive
from footprint.agent._runmeta import check_deployment
from footprint.agent._sources import ToolSource
from footprint.agent._tools import tool as make_tool
from footprint.graph import (
    EscalationPolicy,
    FoldedSkillBrains,
    ProviderChoice,
    SkillGraph,
    build_brain_for,
    fold_skill_brains,
    skill_menu_hint,
)
from footprint.graph._brains import BrainFor
from footprint.graph._steps import StepPlan, check_steps_for_agent
from footprint.injection import (
    Injection,
    InjectionContext,
    SkillTool,
    define_instruction,
)
from footprint.providers import Provider
from footprint.providers._settings import Generation, generation

__all__ = ["AgentSetup", "Posture", "ToolLike", "build_setup"]

Posture: TypeAlias = Literal["rails", "guard"]
ToolLike: TypeAlias = SkillTool | Callable[..., Any]
RESERVED_TOOLS = ("read_skill", "list_skills")
DEFAULT_CARRIED_ROLES: tuple[str, ...] = ("user", "assistant")
"""Roles a provider carries inside messages unless it declares ``carried_roles`` (spec §1.5)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentSetup:
    """The agent as built: what the run loop reads and never changes."""

    name: str
    provider: Provider
    model: str
    system_prompt: str
    injections: tuple[Injection, ...]
    baseline_tools: Mapping[str, SkillTool]
    skill_tools: Mapping[str, tuple[SkillTool, str]]
    graph: SkillGraph | None
    brains: FoldedSkillBrains | None
    brain_for: BrainFor | None
    plans: Mapping[str, StepPlan]
    posture: Posture | None
    continuity: Literal["conversation"] | None
    max_iterations: int
    hidden_skills: tuple[str, ...] = ()
    carried_roles: tuple[str, ...] = DEFAULT_CARRIED_ROLES
    temperature: float | None = None
    max_tokens: int | None = None
    stop: tuple[str, ...] = ()
    model_timeout_s: float | None = None
    tool_timeout_s: float | None = None
    release: str | None = None
    environment: str | None = None
    factory: str | None = None
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    tool_source: ToolSource | None = None
    model_source: Provider | None = None

    by_id: Mapping[str, Injection] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def skills(self) -> tuple[Injection, ...]:
        return tuple(i for i in self.injections if i.flavor == "skill")

    @property
    def has_cascade(self) -> bool:
        g = self.graph
        return g is not None and (g.classifier is not None or self.continuity is not None)

    def injection(self, injection_id: str) -> Injection | None:
        return self.by_id.get(injection_id)


def _as_tool(item: ToolLike) -> SkillTool:
    if isinstance(item, SkillTool):
        return item
    if callable(item):
        return make_tool(item)
    raise ConfigError(
        f"tools= takes functions or SkillTool objects; got {item!r}: wrap it with "
        "footprint.tool(fn, description=...)"
    )


def _baseline(tools: Sequence[ToolLike]) -> dict[str, SkillTool]:
    out: dict[str, SkillTool] = {}
    for item in tools:
        t = _as_tool(item)
        if t.name in out:
            raise ConfigError(f"two tools are named {t.name!r}; tool names must be unique")
        if t.name in RESERVED_TOOLS:
            raise ConfigError(
                f"a tool is named {t.name!r}, which the agent registers itself for skills; "
                "rename your tool"
            )
        out[t.name] = t
    return out


def _code_of(t: SkillTool) -> object:
    """What a tool runs: the wrapped function for ``tool(fn)``, else ``execute`` itself."""
    return getattr(t.execute, "__wrapped__", t.execute)


def _skill_tools(injections: Sequence[Injection],
                 baseline: Mapping[str, SkillTool]) -> dict[str, tuple[SkillTool, str]]:
    """Every skill tool by name; a name taken twice is refused.

    The model reads one declaration per name, so a second tool with other code
    under that name would run in its place: two skills may share one function,
    but a baseline tool (``Agent(tools=...)``) given again by a skill is refused
    whatever its code, as the reference refuses it.
    """
    out: dict[str, tuple[SkillTool, str]] = {}
    for inj in injections:
        for t in inj.inject.tools:
            if t.name in RESERVED_TOOLS:
                raise ConfigError(
                    f"skill {inj.id!r} carries a tool named {t.name!r}, which the agent "
                    "registers itself for skills; rename the tool")
            if t.name in baseline:  # the reference: duplicate tool name (registry vs skill)
                raise ConfigError(
                    f"duplicate tool name {t.name!r} (registry vs skill): Agent(tools=...) "
                    f"and skill {inj.id!r} both give it; a baseline tool is offered on every "
                    "iteration already, so drop it from the skill's tools, or from tools= "
                    "to offer it only while the skill is active")
            seen = out.setdefault(t.name, (t, inj.id))
            if _code_of(seen[0]) is not _code_of(t):
                raise ConfigError(
                    f"tool name {t.name!r} is taken twice: by skill {seen[1]!r} and by skill "
                    f"{inj.id!r}, with different code; rename one, or share one tool object")
    return out


def _merge_injections(
    injections: Sequence[Injection], graph: SkillGraph | None
) -> tuple[Injection, ...]:
    """The graph's compiled skills replace their declared selves; order is kept."""
    merged: list[Injection] = []
    seen: set[str] = set()
    compiled = {s.id: s for s in graph.skills} if graph is not None else {}
    for inj in (*(graph.skills if graph is not None else ()), *injections):
        item = compiled.get(inj.id, inj)
        if item.id in seen:
            if graph is not None and inj.id in compiled:
                continue  # the same skill given to the graph and to injections=
            raise ConfigError(
                f"two injections share the id {item.id!r}; ids must be unique per agent"
            )
        seen.add(item.id)
        merged.append(item)
    if graph is not None and graph.router is not None and graph.router.kind == "classify":
        merged.append(skill_menu_hint())
    return tuple(merged)


def _steps_open(ctx: InjectionContext) -> bool:
    pointer = ctx.step_pointer
    return pointer is not None and pointer.step <= pointer.total


def skill_steps_hint() -> Injection:
    """The auto-registered ``skill-steps-hint`` banner: active while a step is in progress."""
    return define_instruction(
        "skill-steps-hint",
        prompt=(
            "You are working through a skill's steps in order. Call the current step's tool "
            "(its description starts with [Step k of n]), or call skip_step with a reason "
            "when the step cannot be done."
        ),
        active_when=_steps_open,
        description="a stepped skill is in progress: keep the model on its current step",
    )


def _check_hidden(hidden: Sequence[str], injections: Sequence[Injection]) -> None:
    ids = [i.id for i in injections if i.flavor == "skill"]
    for h in hidden:
        if h not in ids:
            raise ConfigError(
                f"hidden_skills names {h!r}, which is not a skill of this agent; "
                f"skills: {', '.join(ids) or 'none'}{did_you_mean(h, ids)}"
            )


def _check_basics(model: str, max_iterations: int, posture: object, graph: object,
                  continuity: object) -> None:
    if not isinstance(model, str) or not model.strip():
        raise ConfigError(f"model={model!r} is empty; name the model the provider should use")
    if not isinstance(max_iterations, int) or isinstance(max_iterations, bool) or (
        max_iterations < 1
    ):
        raise ConfigError(f"max_iterations={max_iterations!r}; use a whole number >= 1")
    if posture is not None and posture not in ("rails", "guard"):
        raise ConfigError(f"posture={posture!r}; use 'rails', 'guard' or None")
    if posture is not None and graph is None:
        raise ConfigError(f"posture={posture!r} needs a skill graph; pass graph= or drop it")
    if continuity not in (None, "conversation"):
        raise ConfigError(f"continuity={continuity!r}; use 'conversation' or None")


def _check_model_timeout(value: object) -> None:
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, int | float) or value <= 0
    ):
        raise ConfigError(
            f"model_timeout_s={value!r} must be a positive number of seconds (or None); "
            "pass e.g. model_timeout_s=120"
        )


def _has_cascade(graph: SkillGraph | None, continuity: object) -> bool:
    return graph is not None and (graph.classifier is not None or continuity is not None)


def _check_roles(provider: Provider, injections: Sequence[Injection]) -> tuple[str, ...]:
    """A delivered message whose role the provider cannot carry is refused at build."""
    carried = tuple(getattr(provider, "carried_roles", DEFAULT_CARRIED_ROLES))
    for inj in injections:
        for m in inj.inject.messages:
            if m.role not in carried:
                raise ConfigError(
                    f"injection {inj.id!r} delivers a {m.role!r} message, which provider "
                    f"{provider.name!r} does not carry inside messages (it carries "
                    f"{', '.join(carried)}); use the system-prompt slot or another role"
                )
    return carried


def _plans(
    merged: tuple[Injection, ...], graph: SkillGraph | None, baseline: Mapping[str, SkillTool]
) -> tuple[Mapping[str, StepPlan], tuple[Injection, ...]]:
    """The stepped skills' plans (with §2.9's refusals), plus the steps hint when any exist."""
    plans = check_steps_for_agent(
        merged, graph_mounted=graph is not None,
        open_skill_ids=graph.open_skills() if graph is not None else (),
        tool_names=baseline,
    )
    if plans and all(i.id != "skill-steps-hint" for i in merged):
        merged = (*merged, skill_steps_hint())
    return plans, merged


def _fold_brains(
    merged: tuple[Injection, ...], graph: SkillGraph | None, provider: Provider,
    continuity: object, providers: Mapping[str, ProviderChoice] | None,
    escalation: EscalationPolicy | None, decider: ProviderChoice | None,
) -> FoldedSkillBrains | None:
    """The skills' brains folded against the graph (if mounted) and the agent's provider."""
    return fold_skill_brains(
        injections=merged, providers=providers, escalation=escalation, decider=decider,
        graph_mounted=graph is not None, agent_provider=provider,
        node_ids=graph.skill_ids if graph is not None else None,
        has_cascade=_has_cascade(graph, continuity),
    )


def _check_limits(
    *, temperature: float | None, max_tokens: int | None, stop: str | Sequence[str] | None,
    model_timeout_s: float | None, tool_timeout_s: float | None,
    release: str | None, environment: str | None,
) -> Generation:
    """The generation settings, both timeouts and the deployment labels, checked in turn."""
    limits = generation("Agent", max_tokens=max_tokens, temperature=temperature, stop=stop)
    _check_model_timeout(model_timeout_s)
    check_positive("Agent(tool_timeout_s=...)", tool_timeout_s, example="tool_timeout_s=60")
    check_deployment(release, environment)
    return limits


def build_setup(
    *,
    name: str,
    provider: Provider,
    model: str,
    system_prompt: str,
    injections: Sequence[Injection],
    tools: Sequence[ToolLike],
    graph: SkillGraph | None,
    providers: Mapping[str, ProviderChoice] | None,
    escalation: EscalationPolicy | None,
    decider: ProviderChoice | None,
    posture: Posture | None,
    continuity: Literal["conversation"] | None,
    max_iterations: int,
    hidden_skills: Sequence[str],
    temperature: float | None,
    tool_source: ToolSource | None = None,
    model_source: Provider | None = None,
    max_tokens: int | None = None,
    stop: str | Sequence[str] | None = None,
    model_timeout_s: float | None = None,
    tool_timeout_s: float | None = None,
    release: str | None = None,
    environment: str | None = None,
    factory: str | None = None,
) -> AgentSetup:
    """Check every build-time rule and fold the agent's declarations."""
    _check_basics(model, max_iterations, posture, graph, continuity)
    merged = _merge_injections(injections, graph)
    baseline = _baseline(tools)
    _check_hidden(hidden_skills, merged)
    brains = _fold_brains(merged, graph, provider, continuity, providers, escalation, decider)
    plans, merged = _plans(merged, graph, baseline)
    carried = _check_roles(provider, merged)
    limits = _check_limits(
        temperature=temperature, max_tokens=max_tokens, stop=stop, model_timeout_s=model_timeout_s,
        tool_timeout_s=tool_timeout_s, release=release, environment=environment,
    )
    return AgentSetup(
        name=name, provider=provider, model=model, system_prompt=system_prompt,
        injections=merged, by_id=MappingProxyType({i.id: i for i in merged}),
        baseline_tools=MappingProxyType(baseline),
        skill_tools=MappingProxyType(_skill_tools(merged, baseline)), graph=graph, brains=brains,
        brain_for=build_brain_for(brains, provider, model) if brains is not None else None,
        plans=plans, posture=posture, continuity=continuity, max_iterations=max_iterations,
        hidden_skills=tuple(hidden_skills), carried_roles=tuple(carried),
        temperature=limits.temperature, max_tokens=limits.max_tokens, stop=limits.stop,
        model_timeout_s=model_timeout_s, tool_timeout_s=tool_timeout_s,
        tool_source=tool_source, model_source=model_source,
        release=release, environment=environment, factory=factory,
    )
