"""Stepped skills through a whole Agent run (spec §7 cases 21, 22 and 23)."""

from __future__ import annotations

from typing import Any, Literal

from agent_support import evaluated, make_agent, of, one, skill, types_of

from footprint.agent import Agent, ToolReturn, tool
from footprint.events import (
    ListSink,
    RouteDecided,
    RunEnd,
    StepAdvanced,
    StepSkipped,
    StepsUnfinished,
    ToolEnd,
)
from footprint.graph import skill_graph
from footprint.injection import Injection
from footprint.providers import Reply, ScriptedModel, ToolSpec, call

STEPS = [{"tool": "verify", "note": "check who it is"}, {"tool": "pay", "note": "send the money"}]


def verify(customer: str) -> Any:
    """Verify the customer."""
    if customer == "boom":
        raise RuntimeError("identity service down")
    if customer == "nobody":
        return ToolReturn(content="not allowed", status="denied")
    return "verified"


def pay(amount: int) -> str:
    """Pay the money out."""
    return f"paid {amount}"


def _refund(on_skip: Literal["advance", "hold"] | None = None) -> Injection:
    return skill("refund", "refunds", tools=[tool(verify), tool(pay)], steps=STEPS,
                 on_skip=on_skip)


def _run(replies: list[Reply], *, on_skip: Literal["advance", "hold"] | None = None,
         **kw: Any) -> tuple[Agent, ListSink, ScriptedModel]:
    sink, model = ListSink(), ScriptedModel(replies)
    agent = make_agent(model, sink, injections=[_refund(on_skip)], **kw)
    agent.run_sync("refund me please")
    return agent, sink, model


def _offered(tools: tuple[ToolSpec, ...]) -> dict[str, str]:
    return {t.name: t.description for t in tools}


# ── case 21: the offer during a tenure, advancing ───────────────────────────


def test_given_a_stepped_skill_in_progress_when_offered_then_current_tool_skip_step_and_banner(
) -> None:
    _, sink, model = _run([call("read_skill", id="refund"), "done", "done anyway"])
    assert "You are on step 1 of 2: check who it is" in of(sink.events, ToolEnd)[0].result
    tools = _offered(model.requests[1].tools)
    assert tools["verify"] == "[Step 1 of 2 — check who it is] Verify the customer."
    assert "pay" not in tools
    assert "skip_step" in tools and "step 1 of 2" in tools["skip_step"]
    assert "skill-steps-hint" in evaluated(sink.events, 2).active_ids
    assert "skill-steps-hint" not in evaluated(sink.events, 1).active_ids


def test_given_clean_calls_to_each_step_tool_when_run_then_step_advanced_and_completed_last(
) -> None:
    _, sink, model = _run([call("read_skill", id="refund"), call("verify", customer="ann"),
                           call("pay", amount=30), "refunded"])
    advanced = of(sink.events, StepAdvanced)
    assert [(a.skill_id, a.step.index, a.step.tool, a.total, a.completed)
            for a in advanced] == [("refund", 1, "verify", 2, False),
                                   ("refund", 2, "pay", 2, True)]
    ends = {e.tool_call_id: e for e in of(sink.events, ToolEnd)}
    for a in advanced:
        assert a.tool_call_id is not None and ends[a.tool_call_id].seq == a.seq - 1
    assert ends[advanced[0].tool_call_id or ""].result.endswith("Now on step 2 of 2: "
                                                                "send the money. Its tool: `pay`.")
    assert "All 2 steps complete." in ends[advanced[1].tool_call_id or ""].result
    assert _offered(model.requests[2].tools)["pay"].startswith("[Step 2 of 2 — send the money]")
    assert "skip_step" not in _offered(model.requests[3].tools)
    assert of(sink.events, StepsUnfinished) == []


def test_given_a_raising_or_denied_step_tool_when_it_returns_then_the_step_does_not_advance(
) -> None:
    _, sink, model = _run([call("read_skill", id="refund"), call("verify", customer="boom"),
                           call("verify", customer="nobody"), "gave up", "gave up again"])
    assert of(sink.events, StepAdvanced) == []
    ends = of(sink.events, ToolEnd)
    assert (ends[1].error, ends[1].status) == (True, "failure")
    assert "identity service down" in ends[1].result
    assert (ends[2].error, ends[2].status, ends[2].result) == (False, "denied", "not allowed")
    assert _offered(model.requests[3].tools)["verify"].startswith("[Step 1 of 2")


# ── case 22: skip_step ──────────────────────────────────────────────────────


def test_given_on_skip_advance_when_skip_step_is_called_then_the_pointer_moves() -> None:
    _, sink, model = _run([call("read_skill", id="refund"),
                           call("skip_step", reason="already verified by phone"),
                           call("pay", amount=5), "refunded"])
    skipped = one(sink.events, StepSkipped)
    assert (skipped.skill_id, skipped.step.index, skipped.policy, skipped.reason) == (
        "refund", 1, "advance", "already verified by phone")
    end = next(e for e in of(sink.events, ToolEnd) if e.tool_name == "skip_step")
    assert skipped.seq < end.seq and "skipped" in end.result
    assert "pay" in _offered(model.requests[2].tools)
    assert "verify" not in _offered(model.requests[2].tools)
    assert [a.completed for a in of(sink.events, StepAdvanced)] == [True]


def test_given_on_skip_hold_when_skip_step_is_called_then_the_step_stays_current() -> None:
    _, sink, model = _run([call("read_skill", id="refund"), call("skip_step", reason="no id"),
                           call("verify", customer="ann"), call("pay", amount=5), "done"],
                          on_skip="hold")
    skipped = one(sink.events, StepSkipped)
    assert (skipped.step.index, skipped.policy) == (1, "hold")
    assert "still current" in of(sink.events, ToolEnd)[1].result
    assert _offered(model.requests[2].tools)["verify"].startswith("[Step 1 of 2")
    assert [a.step.index for a in of(sink.events, StepAdvanced)] == [1, 2]


def test_given_an_empty_reason_or_no_procedure_when_skip_step_is_called_then_teach_and_no_event(
) -> None:
    _, sink, _ = _run([call("read_skill", id="refund"), call("skip_step", reason="  "),
                       call("verify", customer="a"), call("pay", amount=1),
                       call("skip_step", reason="late"), "done"])
    assert of(sink.events, StepSkipped) == []
    ends = [e for e in of(sink.events, ToolEnd) if e.tool_name == "skip_step"]
    assert "needs a reason" in ends[0].result
    assert ends[1].error is True and "skip_step" in ends[1].result
    assert [a.step.index for a in of(sink.events, StepAdvanced)] == [1, 2]


# ── case 23: finishing with steps left ──────────────────────────────────────


def test_given_steps_left_when_the_model_answers_twice_then_nudged_first_and_accepted_second(
) -> None:
    agent, sink, model = _run([call("read_skill", id="refund"), "all done", "really done"])
    unfinished = of(sink.events, StepsUnfinished)
    assert [(u.action, u.iteration, u.total) for u in unfinished] == [
        ("nudged", 2, 2), ("accepted", 3, 2)]
    assert [s.tool for s in unfinished[0].remaining] == ["verify", "pay"]
    routes = [r.chosen for r in of(sink.events, RouteDecided)]
    assert routes == ["tool-calls", "step-nudge", "final"]
    tail = types_of(sink.events)
    nudge_at = tail.index("skill.steps_unfinished")
    assert tail[nudge_at - 1] == "route.decided"
    accepted_at = len(tail) - 1 - tail[::-1].index("skill.steps_unfinished")
    assert tail[accepted_at + 1] == "route.decided"
    nudge = model.requests[2].messages[-1]
    assert nudge.role == "user" and "unfinished step" in nudge.content
    assert one(sink.events, RunEnd).final_content == "really done"
    assert agent.checkpoint()["history"][-2]["origin"] == "engine#nudge"


def test_given_steps_left_when_the_iteration_limit_fires_then_cut_short_and_wrapped_up() -> None:
    _, sink, _ = _run([call("read_skill", id="refund"), call("verify", customer="ann"),
                       "best effort"], max_iterations=2)
    unfinished = one(sink.events, StepsUnfinished)
    assert (unfinished.action, [s.index for s in unfinished.remaining]) == ("cut-short", [1, 2])
    end = one(sink.events, RunEnd)
    assert (end.stopped_early, end.wrapped_up, end.pending_tool_calls) == (
        "max-iterations", True, 1)
    assert [r.chosen for r in of(sink.events, RouteDecided)][-2:] == ["wrap-up", "final"]
    assert of(sink.events, StepAdvanced) == []


def test_given_a_graph_entry_with_steps_when_the_run_starts_then_the_tenure_begins_at_once(
) -> None:
    graph = skill_graph(_refund()).entry("refund").build(check="off")
    sink, model = ListSink(), ScriptedModel([call("verify", customer="a"),
                                             call("pay", amount=2), "ok"])
    make_agent(model, sink, graph=graph).run_sync("refund")
    assert _offered(model.requests[0].tools)["verify"].startswith("[Step 1 of 2")
    assert [a.completed for a in of(sink.events, StepAdvanced)] == [False, True]


def check(order: str) -> dict[str, Any]:
    """Check an order's risk."""
    return {"order": order, "risk": "high" if order == "B2" else "low"}


def settle(order: str) -> str:
    """Settle the order."""
    return f"settled {order}"


def test_given_a_step_tool_returning_json_when_a_guarded_route_reads_it_then_it_routes() -> None:
    """The step note is for the model; routes and guards judge the tool's own result."""
    stepped = skill("review", "reviews", tools=[tool(check), tool(settle)],
                    steps=[{"tool": "check", "note": "check the risk"},
                           {"tool": "settle", "note": "settle it"}])
    fraud = skill("fraud", "fraud desk")
    graph = (skill_graph(stepped, fraud).entry(stepped)
             .route("review", "fraud", on_tool_return="check", guard={"risk": {"eq": "high"}})
             .build(check="off"))
    sink, model = ListSink(), ScriptedModel([call("check", order="B2"), "handed to fraud"])
    make_agent(model, sink, graph=graph).run_sync("review order B2")
    end = next(e for e in of(sink.events, ToolEnd) if e.tool_name == "check")
    assert "Step 1 of 2 done" in end.result  # the model still reads the step note
    move = evaluated(sink.events, 2).cursor_move
    assert move is not None and (move.by, move.to) == ("route", "fraud")
    assert move.guard is not None and move.guard.verdict is True
