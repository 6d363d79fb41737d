"""Cursor moves through a whole Agent run (spec §7 cases 9 and 10), asserting events."""

from __future__ import annotations

from agent_support import evaluated, make_agent, of, one, skill, types_of

from footprint.agent import Agent, tool
from footprint.events import (
    ListSink,
    RerouteSuperseded,
    SkillActivated,
    SkillDeactivated,
    SkillRejected,
    ToolEnd,
)
from footprint.graph import Keywords, SkillGraph, skill_graph
from footprint.injection import InjectionContext
from footprint.providers import Reply, ScriptedModel, call


def probe() -> str:
    """Probe the system."""
    return "probed"


def noop() -> str:
    """Do nothing useful."""
    return "nothing"


def _both_alpha_and_a_result(ctx: InjectionContext) -> bool:
    return bool(ctx.tool_results) and "alpha" in ctx.user_message


def _case9(*, alpha_waits_for_a_result: bool = False) -> SkillGraph:
    """Rules alpha -> a and beta -> b, and an edge a -> c on ``probe``."""
    a, b, c = skill("a"), skill("b"), skill("c")
    builder = skill_graph(a, b, c)
    if alpha_waits_for_a_result:
        builder.entry(a, when=_both_alpha_and_a_result)
    else:
        builder.entry(a, match=Keywords(("alpha",)))
    return (builder.entry(b, match=Keywords(("beta",)))
            .route(a, c, on_tool_return="probe").build(check="off"))


def _run(graph: SkillGraph, message: str, replies: list[Reply]) -> tuple[Agent, ListSink]:
    sink = ListSink()
    agent = make_agent(ScriptedModel(replies), sink, graph=graph, tools=[tool(probe),
                                                                         tool(noop)])
    agent.run_sync(message)
    return agent, sink


def _move(sink: ListSink, iteration: int) -> tuple[str | None, str | None, str]:
    move = evaluated(sink.events, iteration).cursor_move
    assert move is not None
    return move.from_skill, move.to, move.by


# ── case 9: the model pick and the resolution order ─────────────────────────


def test_given_mid_run_when_an_edge_fires_beside_a_pick_then_the_edge_wins_and_supersedes_it(
) -> None:
    _, sink = _run(_case9(), "alpha please", [[call("read_skill", id="b"), call("probe")],
                                              "done"])
    assert _move(sink, 1) == (None, "a", "entry")
    assert _move(sink, 2) == ("a", "c", "route")
    reroute = one(sink.events, RerouteSuperseded)
    assert (reroute.volunteered_id, reroute.won_id, reroute.from_skill_id,
            reroute.iteration) == ("b", "c", "a", 2)
    assert types_of(sink.events)[types_of(sink.events).index("skill.reroute_superseded"):][:4] == [
        "skill.reroute_superseded", "context.evaluated", "skill.deactivated", "skill.activated"]
    activated = of(sink.events, SkillActivated)[-1]
    assert (activated.skill_id, activated.reason) == ("c", "route")


def test_given_mid_run_when_no_edge_fires_and_the_model_picks_b_then_the_cursor_moves_to_b(
) -> None:
    _, sink = _run(_case9(), "alpha please", [call("read_skill", id="b"), "done"])
    assert _move(sink, 2) == ("a", "b", "model-pick")
    read_end = one(sink.events, ToolEnd)
    activated = of(sink.events, SkillActivated)[-1]
    assert (activated.skill_id, activated.reason) == ("b", "model-pick")
    assert (activated.evidence_seq, activated.evidence_step) == (read_end.seq, read_end.step_id)
    left = of(sink.events, SkillDeactivated)[0]
    assert (left.skill_id, left.reason, left.iteration) == ("a", "cursor-moved", 2)
    assert of(sink.events, RerouteSuperseded) == []


def test_given_a_cold_cursor_when_nothing_matches_and_the_model_picks_b_then_b_by_model_pick(
) -> None:
    agent, sink = _run(_case9(), "hello there", [call("read_skill", id="b"), "done"])
    assert _move(sink, 1) == (None, None, "none")
    assert _move(sink, 2) == (None, "b", "model-pick")
    assert agent.checkpoint()["cursor"] == "b"


def test_given_a_cold_cursor_when_an_entry_condition_holds_beside_a_pick_then_the_entry_wins(
) -> None:
    _, sink = _run(_case9(alpha_waits_for_a_result=True), "alpha please",
                   [call("read_skill", id="b"), "done"])
    assert _move(sink, 1) == (None, None, "none")
    assert _move(sink, 2) == (None, "a", "entry")
    reroute = one(sink.events, RerouteSuperseded)
    assert (reroute.volunteered_id, reroute.won_id) == ("b", "a")


def test_given_a_cold_cursor_when_the_model_picks_a_non_entry_then_it_is_refused_and_nothing_moves(
) -> None:
    _, sink = _run(_case9(), "hello there", [call("read_skill", id="c"), "done"])
    rejected = one(sink.events, SkillRejected)
    assert (rejected.requested_id, rejected.reason, rejected.allowed, rejected.iteration) == (
        "c", "unreachable", ("a", "b"), 1)
    assert _move(sink, 2) == (None, None, "none")
    assert of(sink.events, SkillActivated) == []
    assert "not reachable" in one(sink.events, ToolEnd).result


def test_given_mid_run_when_there_is_no_pick_and_no_edge_then_the_cursor_stays(
) -> None:
    _, sink = _run(_case9(), "alpha please", [call("noop"), "done"])
    assert _move(sink, 2) == ("a", "a", "stay")
    assert [e.skill_id for e in of(sink.events, SkillActivated)] == ["a"]


def test_given_mid_run_when_the_model_picks_the_current_skill_then_a_self_call_notice_and_stay(
) -> None:
    _, sink = _run(_case9(), "alpha please", [call("read_skill", id="a"), "done"])
    rejected = one(sink.events, SkillRejected)
    assert (rejected.requested_id, rejected.reason, rejected.current_skill_id) == (
        "a", "self-call", "a")
    assert "already in skill 'a'" in one(sink.events, ToolEnd).result.lower()
    assert _move(sink, 2) == ("a", "a", "stay")


# ── case 10: a pick volunteered in the same message as a firing edge ─────────


def _case10() -> SkillGraph:
    triage, found, other, deep = skill("triage"), skill("found"), skill("other"), skill("deep")
    return (skill_graph(triage, found, other, deep).entry(triage)
            .route(triage, found, on_tool_return="probe")
            .route(triage, other, on_tool_return="lookup")
            .route(found, deep, on_tool_return="noop").build(check="off"))


def test_given_a_pick_and_a_firing_probe_in_one_message_when_iteration_2_runs_then_the_route_wins(
) -> None:
    _, sink = _run(_case10(), "help", [[call("read_skill", id="other"), call("probe")], "done"])
    second = evaluated(sink.events, 2)
    assert [i for i in second.active_ids if i in ("triage", "found", "other", "deep")] == [
        "triage", "found"]
    reroute = one(sink.events, RerouteSuperseded)
    assert (reroute.iteration, reroute.volunteered_id, reroute.won_id) == (2, "other", "found")
    assert reroute.seq < second.seq


def test_given_an_unreachable_pick_when_refused_then_rejected_at_iteration_1_and_no_reroute(
) -> None:
    _, sink = _run(_case10(), "help", [call("read_skill", id="deep"), "done"])
    rejected = one(sink.events, SkillRejected)
    assert (rejected.iteration, rejected.requested_id, rejected.reason) == (1, "deep",
                                                                          "unreachable")
    assert _move(sink, 2) == ("triage", "triage", "stay")
    assert of(sink.events, RerouteSuperseded) == []
    assert "deep" not in evaluated(sink.events, 2).active_ids
