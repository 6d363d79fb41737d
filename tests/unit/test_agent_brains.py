"""Skill brains through a whole Agent run (spec §7 cases 18, 19 and 20)."""

from __future__ import annotations

from typing import Any

import pytest
from agent_support import make_agent, of, one, skill

from footprint._errors import ConfigError
from footprint.agent import Agent, tool
from footprint.events import ListSink, LLMStart, SkillEscalated, SkillRejected
from footprint.graph import (
    EscalationPolicy,
    Intent,
    KeywordScorer,
    ProviderChoice,
    SkillGraph,
    skill_graph,
)
from footprint.providers import ScriptedModel, call


def lookup() -> str:
    """Look the order up."""
    return "order found"


def _graph(**refund_kw: Any) -> SkillGraph:
    """triage (entry) -> refund on ``lookup``; audit is only reachable from refund."""
    triage, refund, audit = skill("triage"), skill("refund", **refund_kw), skill("audit")
    return (skill_graph(triage, refund, audit).entry(triage)
            .route(triage, refund, on_tool_return="lookup")
            .route(refund, audit, on_tool_return="flag").build(check="off"))


def _starts(sink: ListSink, run_id: str | None = None) -> list[tuple[str, str | None]]:
    return [(e.model, e.brain_via) for e in of(sink.events, LLMStart)
            if run_id is None or e.run_id == run_id]


# ── case 18: escalation ─────────────────────────────────────────────────────


def test_given_two_refused_picks_when_after_refusals_is_2_then_escalated_once_and_the_turn_moves(
) -> None:
    model = ScriptedModel([call("read_skill", id="audit"), call("read_skill", id="audit"),
                           call("read_skill", id="audit"), "answer", "next answer"],
                          name="mock")
    sink = ListSink()
    agent = make_agent(model, sink, graph=_graph(), tools=[tool(lookup)],
                       escalation=EscalationPolicy(provider=model, model="esc-model",
                                                   after_refusals=2))
    agent.run_sync("help")
    escalated = one(sink.events, SkillEscalated)
    assert (escalated.iteration, escalated.after_refusals, escalated.refusals) == (2, 2, 2)
    assert (escalated.from_provider, escalated.from_model) == ("mock", "agent-model")
    assert (escalated.to_provider, escalated.to_model) == ("mock", "esc-model")
    assert len(of(sink.events, SkillRejected)) == 3
    assert escalated.seq == of(sink.events, SkillRejected)[1].seq + 1
    assert _starts(sink) == [("agent-model", None), ("agent-model", None),
                             ("esc-model", "escalation"), ("esc-model", "escalation")]
    assert [r.model for r in model.requests] == ["agent-model", "agent-model", "esc-model",
                                                 "esc-model"]
    result = agent.run_sync("help again")
    assert _starts(sink, result.run_id) == [("agent-model", None)]
    assert len(of(sink.events, SkillEscalated)) == 1


def test_given_one_refusal_when_the_threshold_is_2_then_nothing_escalates() -> None:
    model = ScriptedModel([call("read_skill", id="audit"), "answer"], name="mock")
    sink = ListSink()
    agent = make_agent(model, sink, graph=_graph(),
                       escalation=EscalationPolicy(provider=model, model="esc-model",
                                                   after_refusals=2))
    agent.run_sync("help")
    assert len(of(sink.events, SkillRejected)) == 1
    assert of(sink.events, SkillEscalated) == []
    assert _starts(sink) == [("agent-model", None), ("agent-model", None)]


# ── case 19: the per-skill brain ────────────────────────────────────────────


def test_given_a_skill_brain_when_a_hop_lands_on_it_then_that_call_uses_the_skill_model() -> None:
    model = ScriptedModel([call("lookup"), "refunded"], name="mock")
    sink = ListSink()
    agent = make_agent(model, sink, graph=_graph(model="refund-model"), tools=[tool(lookup)])
    agent.run_sync("help")
    starts = of(sink.events, LLMStart)
    assert [(s.iteration, s.model, s.brain_via, s.brain_skill_id, s.provider)
            for s in starts] == [(1, "agent-model", None, None, "mock"),
                                 (2, "refund-model", "skill", "refund", "mock")]
    assert model.requests[1].model == "refund-model"


def test_given_a_foreign_skill_provider_when_the_hop_lands_then_that_provider_answers() -> None:
    agent_model = ScriptedModel([call("lookup")], name="mock")
    refund_model = ScriptedModel(["refunded by the big model"], name="big")
    sink = ListSink()
    agent = make_agent(agent_model, sink, graph=_graph(), tools=[tool(lookup)],
                       providers={"refund": ProviderChoice(provider=refund_model,
                                                           model="big-1")})
    result = agent.run_sync("help")
    assert result.answer == "refunded by the big model"
    assert [(s.provider, s.model, s.brain_via) for s in of(sink.events, LLMStart)] == [
        ("mock", "agent-model", None), ("big", "big-1", "skill")]
    assert len(agent_model.requests) == 1 and len(refund_model.requests) == 1


# ── case 20: build refusals through Agent(...) ──────────────────────────────


def _build(**kw: Any) -> Agent:
    kw.setdefault("graph", _graph())
    return make_agent(ScriptedModel([]), ListSink(), **kw)


OTHER = ScriptedModel([], name="other")


@pytest.mark.parametrize(("kw", "needle"), [
    ({"graph": _graph(model="refund-model"),
      "providers": {"refund": ProviderChoice(provider=OTHER, model="x")}}, "refund"),
    ({"providers": {"ghost": ProviderChoice(provider=OTHER, model="x")}}, "ghost"),
    ({"graph": None, "escalation": EscalationPolicy(provider=OTHER, model="x",
                                                    after_refusals=2)}, "graph"),
    ({"providers": {"refund": ProviderChoice(provider=OTHER)}}, "model"),
    ({"decider": ProviderChoice(provider=OTHER, model="x")}, "cascade"),
], ids=["disagreeing-homes", "unknown-node", "no-graph", "foreign-without-model",
        "decider-without-cascade"])
def test_given_a_bad_brain_declaration_when_the_agent_is_built_then_config_error(
    kw: dict[str, Any], needle: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        _build(**kw)
    assert needle in str(raised.value)


def test_given_a_cascade_when_a_decider_is_declared_then_the_agent_builds_and_asks_it() -> None:
    refund, billing = skill("refund", "refund a payment"), skill("billing", "invoices")
    graph = (skill_graph(refund, billing)
             .entry(refund, match=Intent("refund money", ("money back",)))
             .entry(billing, match=Intent("invoice billing", ("my invoice",)))
             .classify(KeywordScorer()).build(check="off"))
    decider = ScriptedModel(["billing"], name="decider")
    sink = ListSink()
    agent = make_agent(ScriptedModel(["ok"], name="mock"), sink, graph=graph,
                       decider=ProviderChoice(provider=decider, model="small"))
    result = agent.run_sync("zzz qqq")
    assert result.cursor == "billing"
    assert len(decider.requests) == 1 and decider.requests[0].model == "small"


def test_given_a_system_message_injection_when_the_provider_lacks_that_role_then_build_refuses(
) -> None:
    from footprint import ConfigError
    from footprint.injection import define_instruction
    from footprint.providers import AnthropicMessages

    note = define_instruction("note", prompt="Mind the policy.", slot="messages", role="system")
    with pytest.raises(ConfigError, match=r"'note' delivers a 'system' message.*anthropic"):
        Agent(provider=AnthropicMessages("claude-x", api_key="k"), model="claude-x",
              injections=[note])


@pytest.mark.parametrize("after", [0, 1.5, True])
def test_given_a_bad_after_refusals_when_the_policy_is_made_then_config_error(
    after: Any,
) -> None:
    with pytest.raises(ConfigError, match=f"after_refusals={after!r}"):
        EscalationPolicy(provider=OTHER, model="x", after_refusals=after)
