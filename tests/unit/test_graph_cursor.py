"""The cursor resolver (spec §2.5; §7 cases 7, 8, 9, 14, 27)."""

from __future__ import annotations

import json

from footprint.events import Conflict, ConflictItem
from footprint.graph import Regex, SkillGraph, skill_graph
from footprint.injection import (
    Injection,
    InjectionContext,
    ToolResult,
    TurnRoute,
    define_skill,
    evaluate_injections,
)


def _skill(skill_id: str) -> Injection:
    return define_skill(skill_id, f"handles {skill_id}", f"You are in {skill_id}.")


A, B, C, D = (_skill(x) for x in ("a", "b", "c", "d"))


def _ctx(
    cursor: str | None = None,
    *results: ToolResult,
    message: str = "hello",
    iteration: int = 2,
    **kw: object,
) -> InjectionContext:
    return InjectionContext(
        iteration=iteration, user_message=message, current_skill_id=cursor,
        tool_results=tuple(results), **kw,  # type: ignore[arg-type]
    )


def _res(tool: str, result: str = "ok", call: str | None = None) -> ToolResult:
    return ToolResult(tool_name=tool, result=result, tool_call_id=call)


# ── case 7 ──────────────────────────────────────────────────────────────────


def _rules_graph() -> SkillGraph:
    return (
        skill_graph(A, B, C, D)
        .entry(A, match=Regex("alpha"))
        .entry(D, when=lambda c: "delta" in c.user_message)
        .route(A, B, on_tool_return="probe")
        .route(A, C, on_tool_return="probe")
        .route(D, C, when=lambda r: r.result == "go")
        .build(check="off")
    )


def test_given_a_cold_start_when_the_second_entry_passes_then_the_cursor_enters_it() -> None:
    move = _rules_graph().explain_next_skill(_ctx(None, message="delta here", iteration=1))
    assert (move.by, move.to, move.from_skill) == ("entry", "d", None)


def test_given_a_regex_entry_when_it_matches_then_the_witness_is_the_matched_text() -> None:
    move = _rules_graph().explain_next_skill(_ctx(None, message="say   alpha now", iteration=1))
    assert (move.by, move.to, move.witness) == ("entry", "a", "alpha")


def test_given_a_matching_edge_when_resolved_then_the_first_declared_edge_wins() -> None:
    move = _rules_graph().explain_next_skill(_ctx("a", _res("probe")))
    assert (move.by, move.from_skill, move.to, move.conflict) == ("route", "a", "b", None)


def test_given_no_matching_edge_when_resolved_then_the_cursor_stays() -> None:
    move = _rules_graph().explain_next_skill(_ctx("a", _res("other")))
    assert (move.by, move.from_skill, move.to) == ("stay", "a", "a")


def test_given_an_edge_from_a_when_the_cursor_is_on_d_then_it_is_dormant() -> None:
    move = _rules_graph().explain_next_skill(_ctx("d", _res("probe")))
    assert (move.by, move.to) == ("stay", "d")


def test_given_a_raising_edge_when_resolved_then_it_is_no_match_and_siblings_still_run() -> None:
    def boom(res: ToolResult) -> bool:
        raise RuntimeError("boom")

    graph = (
        skill_graph(A, B, C).entry(A)
        .route(A, B, when=boom).route(A, C, when=lambda r: True)
        .build(check="off")
    )
    assert graph.explain_next_skill(_ctx("a", _res("x"))).to == "c"


def test_given_a_raising_entry_when_cold_then_the_next_entry_is_tried() -> None:
    def boom(ctx: InjectionContext) -> bool:
        raise ValueError("nope")

    graph = skill_graph(A, B).entry(A, when=boom).entry(B).build(check="off")
    assert graph.explain_next_skill(_ctx(None, iteration=1)).to == "b"


# ── case 8: batches ─────────────────────────────────────────────────────────


def _batch_graph() -> SkillGraph:
    return (
        skill_graph(A, B, C).entry(A)
        .route(A, B, on_tool_return="alpha")
        .route(A, C, on_tool_return="beta")
        .build(check="off")
    )


def test_given_a_batch_pointing_two_ways_when_resolved_then_the_first_wins_with_conflict() -> (
    None
):
    move = _batch_graph().explain_next_skill(
        _ctx("a", _res("beta", call="c1"), _res("alpha", call="c2"))
    )
    assert (move.to, move.by) == ("c", "route")
    assert move.conflict == Conflict(
        winner=ConflictItem(tool_name="beta", target="c", tool_call_id="c1"),
        losers=(ConflictItem(tool_name="alpha", target="b", tool_call_id="c2"),),
    )


def test_given_two_results_with_the_same_target_when_resolved_then_there_is_no_conflict() -> None:
    move = _batch_graph().explain_next_skill(_ctx("a", _res("beta"), _res("beta")))
    assert (move.to, move.conflict) == ("c", None)


def test_given_an_empty_batch_when_resolved_then_the_cursor_stays() -> None:
    move = _batch_graph().explain_next_skill(_ctx("a"))
    assert (move.from_skill, move.to, move.by) == ("a", "a", "stay")


def test_given_only_last_tool_result_when_resolved_then_it_is_the_batch() -> None:
    ctx = InjectionContext(iteration=2, user_message="x", current_skill_id="a",
                           last_tool_result=_res("alpha"))
    assert _batch_graph().explain_next_skill(ctx).to == "b"


# ── case 9: model picks ─────────────────────────────────────────────────────


def _pick_graph() -> SkillGraph:
    return (
        skill_graph(A, B, C)
        .entry(A, match=Regex("alpha"))
        .entry(B, match=Regex("beta"))
        .route(A, C, on_tool_return="probe")
        .build(check="off")
    )


def test_given_cold_with_a_matching_rule_and_a_pick_when_resolved_then_the_rule_wins() -> None:
    move = _pick_graph().explain_next_skill(
        _ctx(None, message="alpha", iteration=1, pending_skill_pick="b")
    )
    assert (move.to, move.by) == ("a", "entry")


def test_given_cold_without_a_match_when_an_entry_is_picked_then_the_pick_enters() -> None:
    move = _pick_graph().explain_next_skill(_ctx(None, iteration=1, pending_skill_pick="b"))
    assert (move.to, move.by) == ("b", "model-pick")


def test_given_cold_when_a_non_entry_is_picked_then_there_is_no_cursor() -> None:
    move = _pick_graph().explain_next_skill(_ctx(None, iteration=1, pending_skill_pick="c"))
    assert (move.to, move.by) == (None, "none")


def test_given_mid_run_when_an_edge_fires_and_a_pick_exists_then_the_edge_wins() -> None:
    move = _pick_graph().explain_next_skill(_ctx("a", _res("probe"), pending_skill_pick="b"))
    assert (move.to, move.by) == ("c", "route")


def test_given_mid_run_without_an_edge_when_picked_then_the_pick_moves_the_cursor() -> None:
    move = _pick_graph().explain_next_skill(_ctx("a", pending_skill_pick="b"))
    assert (move.from_skill, move.to, move.by) == ("a", "b", "model-pick")


def test_given_a_pick_of_the_current_skill_when_resolved_then_it_stays() -> None:
    move = _pick_graph().explain_next_skill(_ctx("a", pending_skill_pick="a"))
    assert (move.to, move.by) == ("a", "stay")


def test_given_a_tool_proposal_and_a_pick_when_resolved_then_the_proposal_outranks_the_pick() -> (
    None
):
    move = _pick_graph().explain_next_skill(
        _ctx("a", pending_skill_pick="b", pending_tool_transition="c")
    )
    assert (move.to, move.by) == ("c", "tool-proposal")


def test_given_cold_and_an_activated_entry_when_resolved_then_it_is_a_model_pick() -> None:
    move = _pick_graph().explain_next_skill(
        _ctx(None, iteration=2, activated_injection_ids=("c", "b"))
    )
    assert (move.to, move.by) == ("b", "model-pick")


# ── case 14: guards ─────────────────────────────────────────────────────────


def _guard_graph() -> SkillGraph:
    return (
        skill_graph(A, B).entry(A)
        .route(A, B, on_tool_return="probe", guard={"riskLevel": {"gte": "high"}})
        .build(check="off")
    )


def test_given_a_passing_guard_when_resolved_then_the_move_carries_the_condition_evidence() -> None:
    move = _guard_graph().explain_next_skill(
        _ctx("a", _res("probe", json.dumps({"riskLevel": "high"}), call="k1"))
    )
    assert (move.to, move.by) == ("b", "route")
    assert move.guard is not None and move.guard.verdict is True
    cond = move.guard.conditions[0]
    assert (cond.key, cond.op, cond.value, cond.actual_summary, cond.passed) == (
        "riskLevel", "gte", "high", '"high"', True
    )
    assert move.guard.tool_call_id == "k1"


def test_given_a_failing_guard_when_resolved_then_it_stays_with_guards_closed() -> None:
    move = _guard_graph().explain_next_skill(
        _ctx("a", _res("probe", json.dumps({"riskLevel": "amber"})))
    )
    assert (move.to, move.by) == ("a", "stay")
    assert len(move.guards_closed) == 1 and move.guards_closed[0].verdict is False
    assert (move.guards_closed[0].from_skill, move.guards_closed[0].to) == ("a", "b")


def test_given_another_tool_when_resolved_then_no_guard_record_exists() -> None:
    move = _guard_graph().explain_next_skill(_ctx("a", _res("other", '{"riskLevel": "high"}')))
    assert (move.to, move.guard, move.guards_closed) == ("a", None, ())


def test_given_a_status_edge_when_the_result_has_no_status_then_it_never_fires() -> None:
    graph = (
        skill_graph(A, B).entry(A).route(A, B, on_tool_status=("failure",)).build(check="off")
    )
    assert graph.explain_next_skill(_ctx("a", _res("pay"))).to == "a"
    failed = ToolResult(tool_name="pay", result="x", status="failure")
    assert graph.explain_next_skill(_ctx("a", failed)).to == "b"


# ── turn verdicts, hidden skills, memo ──────────────────────────────────────


def test_given_a_turn_verdict_on_iteration_one_when_resolved_then_it_is_consumed() -> None:
    route = TurnRoute(by="intent", to="b")
    move = _pick_graph().explain_next_skill(_ctx(None, iteration=1, turn_route=route))
    assert (move.to, move.by) == ("b", "intent")
    later = _pick_graph().explain_next_skill(_ctx("b", iteration=2, turn_route=route))
    assert later.by == "stay"


def test_given_a_hidden_edge_target_when_the_edge_fires_then_the_cursor_does_not_land() -> None:
    move = _batch_graph().explain_next_skill(_ctx("a", _res("alpha"), hidden_skill_ids=("b",)))
    assert (move.to, move.by) == ("a", "stay")


def test_given_a_hidden_cursor_when_nothing_moves_then_the_cursor_is_cleared() -> None:
    move = _batch_graph().explain_next_skill(_ctx("a", hidden_skill_ids=("a",)))
    assert (move.to, move.by) == (None, "none")


def test_given_one_ctx_when_asked_twice_then_the_predicate_runs_once() -> None:
    calls: list[str] = []

    def counted(res: ToolResult) -> bool:
        calls.append(res.tool_name)
        return True

    graph = skill_graph(A, B).entry(A).route(A, B, when=counted).build(check="off")
    ctx = _ctx("a", _res("x"))
    evaluate_injections(graph.skills, ctx)
    assert graph.next_skill(ctx) == "b"
    assert calls == ["x"]
    graph.next_skill(_ctx("a", _res("y")))
    assert calls == ["x", "y"]


# ── case 27: a conditional entry hands off ──────────────────────────────────


def test_given_a_conditional_entry_that_routes_on_when_evaluated_then_it_hands_off() -> None:
    graph = (
        skill_graph(A, B)
        .entry(A, when=lambda c: "refund" in c.user_message)
        .route(A, B, on_tool_return="lookup")
        .build(check="off")
    )
    first = _ctx(None, message="refund please", iteration=1)
    assert [i.id for i in evaluate_injections(graph.skills, first).active] == ["a"]
    cursor = graph.next_skill(first)
    second = _ctx(cursor, _res("lookup"), message="refund please")
    assert [i.id for i in evaluate_injections(graph.skills, second).active] == ["b"]
    assert graph.superseded_entries(second) == ("a",)
    third = _ctx(graph.next_skill(second), message="refund please", iteration=3)
    assert [i.id for i in evaluate_injections(graph.skills, third).active] == ["b"]


def test_given_a_raising_entry_rule_when_evaluated_then_it_is_reported_once() -> None:
    def boom(ctx: InjectionContext) -> bool:
        raise RuntimeError("boom")

    graph = skill_graph(A, B).entry(A, when=boom).entry(B).build(check="off")
    ev = evaluate_injections(graph.skills, _ctx(None, iteration=1))
    assert [(s.id, s.reason, s.error) for s in ev.skipped] == [("a", "predicate-threw", "boom")]
    assert [i.id for i in ev.active] == ["b"]
