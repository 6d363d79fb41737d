"""Skill brains (spec §3, seed 003): the cursor picks the brain.

Two declaration homes — ``define_skill(provider=, model=)`` and the mount's
``providers={id: ProviderChoice}`` — are folded once at agent build with
every refusal, then consulted once per model call. Providers are compared by
object identity ("Decisions" §7), never by name.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from footprint._errors import ConfigError, did_you_mean
from footprint._validate import brief
from footprint.injection._types import Injection
from footprint.providers._types import Provider

__all__ = [
    "BrainFor",
    "EscalationPolicy",
    "EscalationState",
    "FoldedSkillBrains",
    "ProviderChoice",
    "ResolvedBrain",
    "ServingBrain",
    "SkillBrainDecl",
    "build_brain_for",
    "describe_serving_brain",
    "fold_skill_brains",
    "note_refusal",
    "skill_brain_of",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderChoice:
    """One brain: a provider object, optionally pinned to a model."""

    provider: Provider
    model: str | None = None

    def __post_init__(self) -> None:
        _check_brain("ProviderChoice", self.provider, self.model)


@dataclass(frozen=True, slots=True, kw_only=True)
class EscalationPolicy:
    """After ``after_refusals`` gate refusals in one turn, switch to this brain."""

    provider: Provider
    after_refusals: int
    model: str | None = None

    def __post_init__(self) -> None:
        _check_brain("EscalationPolicy", self.provider, self.model)
        n = self.after_refusals
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ConfigError(f"EscalationPolicy(after_refusals={brief(n)}) must be a whole "
                              "number >= 1; pass e.g. after_refusals=2")


def _check_brain(what: str, provider: object, model: object) -> None:
    if not (isinstance(getattr(provider, "name", None), str)
            and callable(getattr(provider, "complete", None))):
        raise ConfigError(
            f"{what}(provider=...) got {type(provider).__name__} {brief(provider)}, which is "
            "not a provider; pass a provider object (OpenAIChat(...), ScriptedModel([...])) "
            "and name the model with model=")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise ConfigError(f"{what}(model={brief(model)}) must be a model name or None")


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillBrainDecl:
    """A per-skill brain as folded: ``provider`` absent means the agent's own."""

    provider: Provider | None = None
    model: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FoldedSkillBrains:
    """Both homes merged (conflicts refused), plus the out-of-band policies."""

    by_skill: Mapping[str, SkillBrainDecl]
    escalation: EscalationPolicy | None = None
    decider: ProviderChoice | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolvedBrain:
    """The brain that won one consult.

    ``provider`` is always concrete (the agent's own when the brain named
    only a model); ``model`` is the brain's model, else the agent model the
    consult was built with (``None`` falls to the call site's default).
    ``own_provider`` says the provider is the agent's own object, so the
    agent's cache strategy applies.
    """

    provider: Provider
    model: str | None
    via: Literal["skill", "escalation"]
    skill_id: str | None = None
    own_provider: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class ServingBrain:
    """Who would answer before escalation: the ``skill.escalated`` ``from``."""

    provider: str
    model: str


@dataclass(frozen=True, slots=True, kw_only=True)
class EscalationState:
    """The per-turn refusal counter and flag (a new run starts from the default)."""

    refusals: int = 0
    escalated: bool = False


BrainFor = Callable[[str | None, bool], ResolvedBrain | None]


def skill_brain_of(injection: Injection) -> SkillBrainDecl | None:
    """The brain declared on ``define_skill(provider=, model=)``, if any."""
    provider = injection.metadata.get("provider")
    model = injection.metadata.get("model")
    if provider is None and model is None:
        return None
    return SkillBrainDecl(provider=provider, model=model)


# ── the fold ──────────────────────────────────────────────────────────────


def _same(a: SkillBrainDecl, b: SkillBrainDecl) -> bool:
    return a.provider is b.provider and a.model == b.model


def _name(provider: Provider | None) -> str:
    return "the agent's provider" if provider is None else repr(provider.name)


def _merge_homes(
    injections: Sequence[Injection], providers: Mapping[str, ProviderChoice]
) -> dict[str, SkillBrainDecl]:
    merged: dict[str, SkillBrainDecl] = {}
    for inj in injections:
        if inj.flavor == "skill" and (decl := skill_brain_of(inj)) is not None:
            merged.setdefault(inj.id, decl)
    for sid, choice in providers.items():
        mount = SkillBrainDecl(provider=choice.provider, model=choice.model)
        on_skill = merged.get(sid)
        if on_skill is not None and not _same(on_skill, mount):
            raise ConfigError(
                f"skill {sid!r} declares two different brains: define_skill(provider="
                f"{_name(on_skill.provider)}, model={on_skill.model!r}) and the mount's "
                f"providers[{sid!r}] = (provider={_name(mount.provider)}, "
                f"model={mount.model!r}); keep one home or make them identical."
            )
        merged[sid] = mount
    return merged


def _check_nodes(merged: Mapping[str, SkillBrainDecl], node_ids: Collection[str]) -> None:
    for sid in merged:
        if sid not in node_ids:
            raise ConfigError(
                f"a brain is declared for {sid!r}, which is not a node of the skill graph"
                f"{did_you_mean(sid, node_ids)}; known nodes: {sorted(node_ids)}. "
                "Fix the id or add the skill to the graph."
            )


def _check_foreign(where: str, provider: Provider | None, model: str | None,
                   agent_provider: Provider) -> None:
    if provider is not None and provider is not agent_provider and not model:
        raise ConfigError(
            f"{where} uses provider {provider.name!r}, which is not the agent's own "
            f"provider object, without a model; the agent's model id belongs to another "
            f"provider. Pin one: model='<a {provider.name} model>'."
        )


def _check_escalation(escalation: EscalationPolicy, agent_provider: Provider) -> None:
    n = escalation.after_refusals
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ConfigError(
            f"escalation after_refusals={n!r} must be an integer >= 1 "
            "(the number of gate refusals in one turn); e.g. after_refusals=2."
        )
    _check_foreign("escalation", escalation.provider, escalation.model, agent_provider)


def _check_decider(decider: ProviderChoice, has_cascade: bool, agent_provider: Provider) -> None:
    if not has_cascade:
        raise ConfigError(
            "a decider is declared but the mount has no turn cascade; the decider "
            "only resolves a cascade's menu: add .classify(scorer) or drop decider."
        )
    _check_foreign("the decider", decider.provider, decider.model, agent_provider)


def _has_declarations(
    injections: Sequence[Injection], providers: Mapping[str, ProviderChoice],
    escalation: EscalationPolicy | None, decider: ProviderChoice | None,
) -> bool:
    return bool(providers) or escalation is not None or decider is not None or any(
        i.flavor == "skill" and skill_brain_of(i) is not None for i in injections
    )


def fold_skill_brains(
    *,
    injections: Sequence[Injection],
    providers: Mapping[str, ProviderChoice] | None = None,
    escalation: EscalationPolicy | None = None,
    decider: ProviderChoice | None = None,
    graph_mounted: bool,
    node_ids: Collection[str] | None,
    agent_provider: Provider,
    has_cascade: bool = False,
) -> FoldedSkillBrains | None:
    """Fold both homes with every build refusal; ``None`` when nothing is declared.

    ``node_ids`` are the mounted graph's nodes (``None``: the graph carries
    none, so brains cannot be checked and are refused). ``has_cascade`` says
    the mount runs the turn cascade, which a decider needs.
    """
    homes = dict(providers or {})
    if not _has_declarations(injections, homes, escalation, decider):
        return None
    if not graph_mounted or node_ids is None:
        why = "no skill graph is mounted" if not graph_mounted else "the graph has no nodes"
        raise ConfigError(
            f"skill brains (providers/model on skills, escalation or decider) are declared "
            f"but {why}; brains follow the graph's cursor: mount a skill graph or drop them."
        )
    merged = _merge_homes(injections, homes)
    _check_nodes(merged, node_ids)
    for sid, decl in merged.items():
        _check_foreign(f"skill {sid!r}'s brain", decl.provider, decl.model, agent_provider)
    if escalation is not None:
        _check_escalation(escalation, agent_provider)
    if decider is not None:
        _check_decider(decider, has_cascade, agent_provider)
    return FoldedSkillBrains(
        by_skill=MappingProxyType(merged), escalation=escalation, decider=decider
    )


# ── runtime ───────────────────────────────────────────────────────────────


def build_brain_for(
    brains: FoldedSkillBrains, agent_provider: Provider, agent_model: str | None = None
) -> BrainFor:
    """The consult each model call makes with the advanced cursor and the flag.

    Precedence: escalation > the cursor's skill brain > ``None`` (the agent's
    own configuration). ``agent_model`` is the model the agent would use
    otherwise (``configure()``'s resolved model, else the build model).
    """

    def brain_for(cursor: str | None, escalated: bool) -> ResolvedBrain | None:
        if escalated and brains.escalation is not None:
            esc = brains.escalation
            return ResolvedBrain(
                provider=esc.provider, model=esc.model or agent_model, via="escalation",
                own_provider=esc.provider is agent_provider,
            )
        decl = brains.by_skill.get(cursor) if cursor is not None else None
        if decl is None:
            return None
        provider = decl.provider or agent_provider
        return ResolvedBrain(
            provider=provider, model=decl.model or agent_model, via="skill",
            skill_id=cursor, own_provider=provider is agent_provider,
        )

    return brain_for


def describe_serving_brain(
    brains: FoldedSkillBrains | None,
    cursor: str | None,
    *,
    agent_provider: Provider,
    default_model: str,
    resolved_model: str | None = None,
) -> ServingBrain:
    """The brain that would serve ``cursor`` before escalation (skill > configured > default)."""
    decl = brains.by_skill.get(cursor) if brains is not None and cursor is not None else None
    provider = decl.provider if decl is not None and decl.provider is not None else None
    model = (decl.model if decl is not None else None) or resolved_model or default_model
    return ServingBrain(provider=(provider or agent_provider).name, model=model)


def note_refusal(
    state: EscalationState, escalation: EscalationPolicy | None
) -> tuple[EscalationState, bool]:
    """Count one emitted ``skill.rejected``; the bool says ``skill.escalated`` fires now."""
    counted = EscalationState(refusals=state.refusals + 1, escalated=state.escalated)
    if escalation is None or state.escalated or counted.refusals < escalation.after_refusals:
        return counted, False
    return EscalationState(refusals=counted.refusals, escalated=True), True
