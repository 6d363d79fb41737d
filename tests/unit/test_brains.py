"""Skill brains (spec §3, §7 cases 18–20): the fold's refusals and the runtime consult."""

from __future__ import annotations

from typing import Any

import pytest

from footprint._errors import ConfigError
from footprint.graph._brains import (
    EscalationPolicy,
    EscalationState,
    FoldedSkillBrains,
    ProviderChoice,
    build_brain_for,
    describe_serving_brain,
    fold_skill_brains,
    note_refusal,
)
from footprint.injection import Injection, define_skill
from footprint.providers import LLMRequest, LLMResponse


class Mock:
    """A deterministic provider (the provider protocol; never called here)."""

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    async def complete(self, request: LLMRequest) -> LLMResponse:
        return LLMResponse(content=f"{self._name}:{request.model}")


AGENT = Mock("mock")
STRONG = Mock("strong")
NODES = frozenset({"triage", "refund"})


def fold(injections: list[Injection] | None = None, **kw: Any) -> FoldedSkillBrains | None:
    args: dict[str, Any] = {
        "injections": injections or [], "graph_mounted": True, "node_ids": NODES,
        "agent_provider": AGENT,
    }
    args.update(kw)
    return fold_skill_brains(**args)


def test_given_nothing_declared_when_folded_then_the_feature_is_off() -> None:
    assert fold([define_skill("triage", "T", "t")]) is None
    assert fold(graph_mounted=False, node_ids=None) is None


def test_given_brains_without_a_graph_when_folded_then_build_refuses() -> None:
    skill = define_skill("triage", "T", "t", model="small")
    with pytest.raises(ConfigError, match="no skill graph is mounted"):
        fold([skill], graph_mounted=False, node_ids=None)
    with pytest.raises(ConfigError, match="the graph has no nodes"):
        fold([skill], node_ids=None)


def test_given_two_homes_disagreeing_when_folded_then_both_homes_are_named() -> None:
    skill = define_skill("refund", "R", "r", provider=STRONG, model="big")
    with pytest.raises(ConfigError) as err:
        fold([skill], providers={"refund": ProviderChoice(provider=Mock("strong"), model="big")})
    assert "define_skill(provider=" in str(err.value)
    assert "providers['refund']" in str(err.value)
    with pytest.raises(ConfigError, match="two different brains"):
        fold([skill], providers={"refund": ProviderChoice(provider=STRONG, model="other")})


def test_given_identical_declarations_in_both_homes_when_folded_then_accepted() -> None:
    skill = define_skill("refund", "R", "r", provider=STRONG, model="big")
    folded = fold([skill], providers={"refund": ProviderChoice(provider=STRONG, model="big")})
    assert folded is not None
    assert folded.by_skill["refund"].provider is STRONG


def test_given_an_unknown_node_when_folded_then_refused_with_did_you_mean() -> None:
    with pytest.raises(ConfigError, match=r"'refnd'.*did you mean 'refund'"):
        fold(providers={"refnd": ProviderChoice(provider=AGENT, model="m")})


@pytest.mark.parametrize("where", ["skill", "escalation", "decider"])
def test_given_a_foreign_provider_without_model_when_folded_then_refused(where: str) -> None:
    kw: dict[str, Any] = {"has_cascade": True}
    if where == "skill":
        kw["providers"] = {"refund": ProviderChoice(provider=STRONG)}
    elif where == "escalation":
        kw["escalation"] = EscalationPolicy(provider=STRONG, after_refusals=2)
    else:
        kw["decider"] = ProviderChoice(provider=STRONG)
    with pytest.raises(ConfigError, match=r"'strong'.*without a model"):
        fold(**kw)


def test_given_the_agents_own_provider_without_model_when_folded_then_accepted() -> None:
    folded = fold(providers={"refund": ProviderChoice(provider=AGENT)})
    assert folded is not None


@pytest.mark.parametrize("bad", [0, 1.5, True, -1])
def test_given_after_refusals_not_a_positive_int_when_declared_then_refused(bad: object) -> None:
    with pytest.raises(ConfigError, match=f"after_refusals={bad!r}"):
        EscalationPolicy(provider=AGENT, after_refusals=bad)  # type: ignore[arg-type]


def test_given_a_decider_without_the_cascade_when_folded_then_refused() -> None:
    with pytest.raises(ConfigError, match="no turn cascade"):
        fold(decider=ProviderChoice(provider=AGENT, model="m"))
    assert fold(decider=ProviderChoice(provider=AGENT, model="m"), has_cascade=True) is not None


def test_given_folded_brains_when_consulted_then_escalation_beats_skill_beats_none() -> None:
    folded = fold(
        [define_skill("refund", "R", "r", model="big")],
        escalation=EscalationPolicy(provider=STRONG, model="esc-model", after_refusals=2),
    )
    assert folded is not None
    brain_for = build_brain_for(folded, AGENT, "agent-model")
    assert brain_for("triage", False) is None
    skill = brain_for("refund", False)
    assert skill is not None
    assert (skill.via, skill.skill_id, skill.model, skill.own_provider) == (
        "skill", "refund", "big", True)
    assert skill.provider is AGENT  # a model-only brain keeps the agent's provider
    esc = brain_for("refund", True)
    assert esc is not None
    assert (esc.via, esc.model, esc.provider, esc.own_provider) == (
        "escalation", "esc-model", STRONG, False)


def test_given_a_cursor_when_described_then_the_serving_brain_follows_precedence() -> None:
    folded = fold([define_skill("refund", "R", "r", provider=STRONG, model="big")])
    served = describe_serving_brain(folded, "refund", agent_provider=AGENT,
                                    default_model="agent-model")
    assert (served.provider, served.model) == ("strong", "big")
    other = describe_serving_brain(folded, "triage", agent_provider=AGENT,
                                   default_model="agent-model", resolved_model="configured")
    assert (other.provider, other.model) == ("mock", "configured")


def test_given_two_refusals_when_counted_then_escalation_fires_exactly_once() -> None:
    policy = EscalationPolicy(provider=AGENT, model="esc-model", after_refusals=2)
    state, fired = note_refusal(EscalationState(), policy)
    assert (state.refusals, state.escalated, fired) == (1, False, False)
    state, fired = note_refusal(state, policy)
    assert (state.refusals, state.escalated, fired) == (2, True, True)
    state, fired = note_refusal(state, policy)
    assert (state.refusals, state.escalated, fired) == (3, True, False)
    assert note_refusal(EscalationState(), None) == (EscalationState(refusals=1), False)
