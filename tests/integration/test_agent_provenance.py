"""Provenance is recorded, not inferred: every piece, message and activation names its cause.

Three agents cover the admission paths: a graph agent with guarded routes and
picks, a plain agent with rules, on-tool-return, facts and steering, and a
graph agent whose tool grants a lease and proposes a transition.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from agent_support import make_agent, of

from footprint.agent import Agent, tool
from footprint.events import (
    ContextInjected,
    EventBase,
    ListSink,
    SkillActivated,
    ToolEffect,
    ToolEnd,
)
from footprint.graph import skill_graph
from footprint.injection import (
    InjectedMessage,
    InjectionContext,
    OnToolReturn,
    define_fact,
    define_injection,
    define_instruction,
    define_skill,
    define_steering,
)
from footprint.providers import ScriptedModel, call


def lookup_order(order_id: str) -> dict[str, Any]:
    """Look up an order by id."""
    return {"order_id": order_id, "risk": "low", "amount": 40}


def weather(city: str) -> str:
    """Today's weather in a city."""
    return f"sunny in {city}"


def escalate(reason: str) -> dict[str, Any]:
    """Hand the case over, with a required policy."""
    return {"content": f"escalating: {reason}", "status": "success", "effects": [
        {"kind": "require-instruction", "instruction_id": "policy",
         "delivery_lease": "next-call"},
        {"kind": "propose-transition", "target_skill_id": "billing", "reason": reason},
    ]}


def _skill(skill_id: str, **kw: Any) -> Any:
    return define_skill(skill_id, f"{skill_id} requests", f"You handle {skill_id}.", **kw)


def graph_agent(sink: ListSink) -> Agent:
    triage, billing = _skill("triage", tools=[tool(lookup_order)]), _skill("billing")
    refund, faq = _skill("refund"), _skill("faq")
    graph = (skill_graph(triage, billing, refund, faq).entry(triage)
             .route(triage, billing, on_tool_return="lookup_order",
                    guard={"risk": {"eq": "low"}, "amount": {"lt": 100}})
             .route(billing, refund).build(check="off"))
    model = ScriptedModel([call("read_skill", id="faq"), call("lookup_order", order_id="A1"),
                           call("read_skill", id="refund"), "refund sent"])
    return make_agent(model, sink, graph=graph, system_prompt="You are support.")


def _after_weather(ctx: InjectionContext) -> bool:
    return ctx.iteration >= 2


def plain_agent(sink: ListSink) -> Agent:
    injections = [
        define_steering("tone", "Be brief."),
        define_fact("vip", {"tier": "gold"}, slot="messages", role="user"),
        define_instruction("late", "Wrap up soon.", active_when=_after_weather),
        define_injection("after-weather", "custom", OnToolReturn(tool_name="weather"),
                         system_prompt="Quote the weather verbatim.",
                         messages=(InjectedMessage(role="assistant",
                                                   content="I will quote it."),)),
    ]
    model = ScriptedModel([call("weather", city="Oslo"), "It is sunny in Oslo."])
    return make_agent(model, sink, injections=injections, tools=[tool(weather)])


def lease_agent(sink: ListSink) -> Agent:
    triage = _skill("triage", tools=[tool(escalate)])
    billing = _skill("billing")
    graph = (skill_graph(triage, billing).entry(triage)
             .route(triage, billing, on_tool_return="never_called").build(check="off"))
    policy = define_instruction("policy", "Follow the refund policy.",
                                active_when=lambda ctx: False)
    model = ScriptedModel([call("escalate", reason="angry customer"), "handed over"])
    return make_agent(model, sink, graph=graph, injections=[policy])


AGENTS: dict[str, Callable[[ListSink], Agent]] = {
    "graph": graph_agent, "plain": plain_agent, "lease": lease_agent,
}


def _run(name: str) -> tuple[Agent, list[EventBase]]:
    sink = ListSink()
    agent = AGENTS[name](sink)
    agent.run_sync("I was charged twice")
    return agent, sink.events


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_given_an_agent_when_it_runs_then_every_injected_piece_names_an_earlier_admitting_event(
    name: str,
) -> None:
    _, events = _run(name)
    by_seq = {e.seq: e for e in events}
    pieces = of(events, ContextInjected)
    assert pieces
    for piece in pieces:
        assert piece.admitted_by is not None, piece
        assert piece.admitted_by in by_seq and piece.admitted_by < piece.seq, piece
        assert by_seq[piece.admitted_by].run_id == piece.run_id


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_given_an_agent_when_it_runs_then_the_envelope_is_complete_and_seq_is_gap_free(
    name: str,
) -> None:
    _, events = _run(name)
    assert [e.seq for e in events] == list(range(len(events)))
    assert len({e.run_id for e in events}) == 1
    for e in events:
        assert e.run_id and e.ts > 0 and e.turn == 0 and e.step_id, e
        assert isinstance(e.iteration, int) and e.iteration >= 0
    assert [e.ts for e in events] == sorted(e.ts for e in events)


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_given_an_agent_when_it_runs_then_every_history_message_has_an_origin(name: str) -> None:
    agent, _ = _run(name)
    history = agent.checkpoint()["history"]
    assert len(history) >= 3
    assert all(m.get("origin") for m in history), history
    assert history[0]["origin"] == "person"


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_given_an_agent_when_a_skill_activates_then_its_evidence_is_an_earlier_event(
    name: str,
) -> None:
    _, events = _run(name)
    by_seq = {e.seq: e for e in events}
    for act in of(events, SkillActivated):
        assert act.evidence_seq is not None and act.evidence_seq < act.seq, act
        assert by_seq[act.evidence_seq].step_id == act.evidence_step


def test_given_a_graph_agent_when_picks_and_guarded_routes_run_then_the_evidence_is_specific(
) -> None:
    agent, events = _run("graph")
    acts = {a.skill_id: a for a in of(events, SkillActivated)}
    ends = {e.tool_call_id: e for e in of(events, ToolEnd)}
    read_faq = next(e for e in ends.values() if e.tool_name == "read_skill")
    assert (acts["faq"].reason, acts["faq"].evidence_seq) == ("model-pick", read_faq.seq)
    assert acts["billing"].reason == "route"
    assert acts["refund"].reason == "model-pick"
    assert agent.checkpoint()["cursor"] == "refund"
    faq_piece = next(p for p in of(events, ContextInjected) if p.injection_id == "faq"
                     and p.slot == "system-prompt")
    assert (faq_piece.admitted_via, faq_piece.admitted_by) == ("read-skill", read_faq.seq)


def test_given_a_plain_agent_when_a_tool_returns_then_on_tool_return_pieces_point_at_it() -> None:
    agent, events = _run("plain")
    weather_end = next(e for e in of(events, ToolEnd) if e.tool_name == "weather")
    fired = [p for p in of(events, ContextInjected) if p.injection_id == "after-weather"]
    system = [p for p in fired if p.slot == "system-prompt"]
    assert [(p.iteration, p.admitted_via, p.admitted_by) for p in system] == [
        (2, "tool-return", weather_end.seq)]
    delivered = [p for p in fired if p.slot == "messages"]
    assert delivered and delivered[0].admitted_via == "delivered"
    origins = [m["origin"] for m in agent.checkpoint()["history"]]
    assert origins.count("injection#after-weather") == 1 and "injection#vip" in origins
    late = [p for p in of(events, ContextInjected) if p.injection_id == "late"]
    assert [(p.iteration, p.admitted_via) for p in late] == [(2, "rule")]


def test_given_a_lease_and_a_proposal_when_granted_then_the_pieces_point_at_the_effects() -> None:
    agent, events = _run("lease")
    effects = {e.kind: e for e in of(events, ToolEffect)}
    assert effects["require-instruction"].outcome == "accepted"
    assert effects["propose-transition"].outcome == "accepted"
    leased = [p for p in of(events, ContextInjected) if p.injection_id == "policy"]
    assert [(p.iteration, p.admitted_via, p.admitted_by) for p in leased] == [
        (2, "lease", effects["require-instruction"].seq)]
    billing = next(a for a in of(events, SkillActivated) if a.skill_id == "billing")
    assert (billing.reason, billing.evidence_seq) == (
        "tool-proposal", effects["propose-transition"].seq)
    assert agent.checkpoint()["cursor"] == "billing"
