"""The turn cascade through a whole Agent run (spec §7 cases 16 and 17), asserting events."""

from __future__ import annotations

from typing import Any

from agent_support import evaluated, make_agent, of, one, skill, types_of

from footprint.agent import Agent
from footprint.events import ListSink, SkillActivated, SkillRejected, ToolEnd, TurnRouted
from footprint.graph import Intent, Keywords, KeywordScorer, SkillGraph, skill_graph
from footprint.providers import FunctionModel, LLMRequest, Reply, ScriptedModel, call

SKILLS = ("urgent", "refund", "billing", "shipping", "faq")


def _cascade() -> SkillGraph:
    """urgent is a keyword rule; refund, billing, shipping are intents; faq is open."""
    urgent, refund = skill("urgent", "urgent escalation"), skill("refund", "refund a payment")
    billing, shipping = skill("billing", "billing and invoices"), skill("shipping", "parcels")
    return (
        skill_graph(urgent, refund, billing, shipping, skill("faq", "common questions"))
        .entry(urgent, match=Keywords(("urgent",)))
        .entry(refund, match=Intent("refund money back", ("i want my money back",)))
        .entry(billing, match=Intent("invoice billing", ("where is my invoice",)))
        .entry(shipping, match=Intent("parcel tracking", ("where is my parcel",)))
        .route(billing, refund, on_tool_return="issue_refund")
        .classify(KeywordScorer())
        .build(check="off")
    )


def _agent(replies: list[Reply], **kw: Any) -> tuple[Agent, ListSink]:
    sink = ListSink()
    return make_agent(ScriptedModel(replies), sink, graph=_cascade(), **kw), sink


# ── case 16 ─────────────────────────────────────────────────────────────────


def test_given_a_rule_entry_when_the_turn_is_routed_then_by_entry_with_the_policy_and_the_move(
) -> None:
    agent, sink = _agent(["on it"])
    agent.run_sync("this is urgent please")
    routed = one(sink.events, TurnRouted)
    assert (routed.by, routed.to, routed.decisive, routed.witness) == (
        "entry", "urgent", True, "urgent")
    assert (routed.policy.near_tie_margin, routed.policy.menu_size, routed.policy.floor) == (
        0.15, 3, 0)
    seq = types_of(sink.events)
    assert seq.index("run.start") < seq.index("skill.turn_routed") < seq.index(
        "context.evaluated")
    move = evaluated(sink.events, 1).cursor_move
    assert move is not None and (move.by, move.to) == ("entry", "urgent")
    assert [(e.skill_id, e.reason) for e in of(sink.events, SkillActivated)] == [
        ("urgent", "entry")]


def test_given_a_clear_intent_when_the_turn_is_routed_then_by_intent_with_scores() -> None:
    agent, sink = _agent(["refunding"])
    agent.run_sync("money back refund now")
    routed = one(sink.events, TurnRouted)
    assert (routed.by, routed.to, routed.scorer, routed.decisive) == (
        "intent", "refund", "keyword", True)
    assert routed.scores[0].id == "refund" and routed.scores[0].score is not None
    assert {s.id for s in routed.scores} == {"refund", "billing", "shipping"}
    move = evaluated(sink.events, 1).cursor_move
    assert move is not None and (move.by, move.to) == ("intent", "refund")
    assert [(e.skill_id, e.reason) for e in of(sink.events, SkillActivated)] == [
        ("refund", "intent")]


def test_given_a_near_tie_when_the_turn_is_routed_then_a_menu_and_only_the_hint_is_active(
) -> None:
    model = ScriptedModel(["which one?"])
    sink = ListSink()
    make_agent(model, sink, graph=_cascade()).run_sync("invoice parcel")
    routed = one(sink.events, TurnRouted)
    assert (routed.by, routed.offered, routed.decisive) == (
        "menu", ("billing", "shipping"), False)
    active = evaluated(sink.events, 1).active_ids
    assert "skill-menu-hint" in active
    assert not set(active) & set(SKILLS)
    read_skill = next(t for t in model.requests[0].tools if t.name == "read_skill")
    assert "billing" in read_skill.description and "shipping" in read_skill.description


# ── case 17 ─────────────────────────────────────────────────────────────────


def test_given_guard_posture_when_the_model_picks_off_the_menu_then_refused_with_posture(
) -> None:
    agent, sink = _agent([call("read_skill", id="refund"), call("read_skill", id="billing"),
                          "done"], posture="guard")
    agent.run_sync("invoice parcel")
    rejected = one(sink.events, SkillRejected)
    assert (rejected.requested_id, rejected.reason, rejected.posture) == (
        "refund", "posture", "guard")
    move = evaluated(sink.events, 3).cursor_move
    assert move is not None and (move.by, move.to) == ("model-pick", "billing")
    assert move.offered == ("billing", "shipping") and move.declined_offer is False


def test_given_rails_when_a_menu_results_then_by_none_and_hops_are_refused_but_open_skills_admitted(
) -> None:
    agent, sink = _agent([[call("read_skill", id="billing"), call("read_skill", id="faq")],
                          "done"], posture="rails")
    agent.run_sync("invoice parcel")
    routed = one(sink.events, TurnRouted)
    assert routed.by == "none" and routed.offered == ("billing", "shipping")
    rejected = one(sink.events, SkillRejected)
    assert (rejected.requested_id, rejected.reason, rejected.posture) == (
        "billing", "posture", "rails")
    ends = of(sink.events, ToolEnd)
    assert "faq" in ends[1].result and "not reachable" not in ends[1].result
    assert "faq" in evaluated(sink.events, 2).active_ids
    move = evaluated(sink.events, 2).cursor_move
    assert move is not None and move.to is None


def test_given_continuity_and_an_unknown_resumed_cursor_when_routed_then_dropped_resume(
) -> None:
    agent, sink = _agent(["ok", "refunding"], continuity="conversation")
    agent.run_sync("hello")
    saved = agent.checkpoint()
    saved["cursor"] = "gone"
    agent.run_sync("money back refund now", continue_from=saved)
    routed = of(sink.events, TurnRouted)[-1]
    assert routed.dropped_resume is not None
    assert (routed.dropped_resume.id, routed.dropped_resume.reason) == ("gone", "unknown-skill")
    assert (routed.from_skill, routed.by, routed.to) == (None, "intent", "refund")


def test_given_continuity_when_the_next_turn_is_a_near_tie_then_the_incumbent_continues(
) -> None:
    def reply(request: LLMRequest) -> Reply:
        return "ok"

    sink = ListSink()
    agent = make_agent(FunctionModel(reply), sink, graph=_cascade(), continuity="conversation")
    first = agent.run_sync("where is my invoice billing")
    assert first.cursor == "billing"
    agent.run_sync("invoice parcel", continue_from=agent.checkpoint())
    routed = of(sink.events, TurnRouted)[-1]
    assert (routed.by, routed.from_skill, routed.to) == ("continuity", "billing", "billing")
    last = [e for e in sink.events if e.run_id == routed.run_id]
    move = evaluated(last, 1).cursor_move
    assert move is not None and (move.by, move.to) == ("continuity", "billing")


def test_given_no_posture_when_the_model_picks_off_the_menu_then_the_move_records_declining_it(
) -> None:
    agent, sink = _agent([call("read_skill", id="refund"), "done"])
    agent.run_sync("invoice parcel")
    move = evaluated(sink.events, 2).cursor_move
    assert move is not None and (move.by, move.to) == ("model-pick", "refund")
    assert move.offered == ("billing", "shipping") and move.declined_offer is True
