"""Reachability, the pick gate and tool effects (spec §2.6, §2.7, §1.4; §7 cases 10, 11)."""

from __future__ import annotations

from footprint.events import Conflict, ConflictItem
from footprint.graph import (
    ProposeTransition,
    RequireInstruction,
    SkillGraph,
    apply_tool_effects,
    check_pick,
    skill_graph,
)
from footprint.injection import (
    Injection,
    InjectionContext,
    LLMActivated,
    ToolResult,
    TurnRoute,
    define_instruction,
    define_skill,
    evaluate_injections,
)


def _skill(skill_id: str) -> Injection:
    return define_skill(skill_id, f"handles {skill_id}", f"You are in {skill_id}.")


TRIAGE, FOUND, OTHER, HELP, SECRET = (
    _skill(x) for x in ("triage", "found", "other", "help", "secret")
)


def _graph() -> SkillGraph:
    """triage -(probe)-> found; triage -bare-> other; help and secret are unwired (open)."""
    return (
        skill_graph(TRIAGE, FOUND, OTHER, HELP, SECRET)
        .entry(TRIAGE)
        .route(TRIAGE, FOUND, on_tool_return="probe")
        .route(TRIAGE, OTHER)
        .build(check="off")
    )


# ── case 11: reachability and open skills ───────────────────────────────────


def test_given_a_cursor_when_reachable_is_asked_then_hops_come_first_minus_the_cursor() -> None:
    graph = _graph()
    assert graph.reachable_skills("triage") == ("found", "other")
    assert graph.reachable_skills("found") == ("triage",)
    assert graph.reachable_skills(None) == ("triage",)


def test_given_unwired_skills_when_open_skills_asked_then_they_are_open_and_targets_are_not() -> (
    None
):
    graph = _graph()
    assert graph.open_skills() == ("help", "secret")
    assert graph.open_skills(hidden=("secret",)) == ("help",)
    assert isinstance(graph.skill("other").trigger, LLMActivated)


def test_given_an_open_skill_when_picked_from_anywhere_then_it_is_admitted_without_a_hop() -> None:
    verdict = check_pick(_graph(), "help", "found")
    assert (verdict.accepted, verdict.hop) == (True, False)


def test_given_a_bare_edge_when_picked_off_its_source_then_it_is_refused() -> None:
    verdict = check_pick(_graph(), "other", "found")
    assert (verdict.accepted, verdict.reason) == (False, "unreachable")
    assert verdict.text == (
        'read_skill("other") is not reachable from here. Reachable skills: triage, help, '
        "secret. Pick one of these, or finish."
    )


def test_given_a_bare_edge_when_picked_from_its_source_then_it_is_a_hop() -> None:
    verdict = check_pick(_graph(), "other", "triage")
    assert (verdict.accepted, verdict.hop) == (True, True)


def test_given_a_rule_triggered_skill_when_not_reachable_then_it_is_never_admitted() -> None:
    verdict = check_pick(_graph(), "found", "other")
    assert verdict.accepted is False and "found" not in verdict.allowed


# ── self-call, hidden, postures ─────────────────────────────────────────────


def test_given_the_cursor_skill_when_picked_then_it_is_a_self_call_notice() -> None:
    verdict = check_pick(_graph(), "triage", "triage")
    assert (verdict.accepted, verdict.reason) == (False, "self-call")
    assert verdict.text is not None and "Already in skill 'triage'" in verdict.text


def test_given_a_hidden_skill_when_refused_then_no_text_names_it() -> None:
    ctx = InjectionContext(iteration=2, user_message="x", current_skill_id="triage",
                           hidden_skill_ids=("secret", "found"))
    verdict = check_pick(_graph(), "secret", ctx)
    assert verdict.accepted is False and verdict.reason == "unreachable"
    assert verdict.text is not None
    assert "secret" not in verdict.text and "found" not in verdict.text
    assert "secret" not in verdict.allowed


def test_given_rails_when_a_hop_is_picked_then_it_is_refused_but_open_skills_pass() -> None:
    graph = _graph()
    refused = check_pick(graph, "other", "triage", posture="rails")
    assert (refused.accepted, refused.reason, refused.posture) == (False, "posture", "rails")
    assert refused.text is not None and "help" in refused.text
    assert check_pick(graph, "help", "triage", posture="rails").accepted is True


def test_given_guard_posture_when_the_pick_is_off_the_menu_then_it_is_refused() -> None:
    graph = _graph()
    off = check_pick(graph, "other", "triage", posture="guard", menu=("found",))
    assert (off.accepted, off.reason, off.posture) == (False, "posture", "guard")
    on = check_pick(graph, "other", "triage", posture="guard", menu=("other", "found"))
    assert on.accepted is True and on.hop is True


def test_given_a_ctx_with_an_open_menu_when_guard_checks_then_the_menu_comes_from_the_ctx() -> (
    None
):
    graph = (
        skill_graph(TRIAGE, FOUND).entry_by_read().entry(TRIAGE).entry(FOUND).build(check="off")
    )
    ctx = InjectionContext(iteration=1, user_message="x",
                           turn_route=TurnRoute(by="menu", offered=("found",)))
    assert check_pick(graph, "found", ctx, posture="guard").accepted is True
    assert check_pick(graph, "triage", ctx, posture="guard").reason == "posture"


def test_given_a_dead_end_when_refused_then_the_text_says_nothing_is_reachable() -> None:
    graph = skill_graph(TRIAGE, FOUND).entry(TRIAGE).route(TRIAGE, FOUND, on_tool_return="p")
    built = graph.build(check="off")
    verdict = check_pick(built, "nope", "triage", hidden=("found",))
    assert verdict.text is not None and "No skill is reachable from 'triage'" in verdict.text


# ── case 10: a pick volunteered while an edge fires ─────────────────────────


def test_given_a_pick_and_a_firing_edge_in_one_batch_when_evaluated_then_the_edge_wins() -> None:
    graph = (
        skill_graph(TRIAGE, FOUND, OTHER).entry(TRIAGE)
        .route(TRIAGE, FOUND, on_tool_return="probe")
        .route(TRIAGE, OTHER, on_tool_return="escalate")
        .build(check="off")
    )
    verdict = check_pick(graph, "other", "triage")
    assert verdict.accepted and verdict.hop
    ctx = InjectionContext(
        iteration=2, user_message="x", current_skill_id="triage",
        tool_results=(ToolResult(tool_name="probe", result="{}"),),
        activated_injection_ids=("other",), pending_skill_pick="other",
    )
    active = [i.id for i in evaluate_injections(graph.skills, ctx).active]
    assert active == ["triage", "found"]
    assert graph.next_skill(ctx) == "found"
    assert ctx.pending_skill_pick not in active  # the host emits reroute_superseded


def test_given_an_unreachable_pick_when_gated_then_the_cursor_does_not_move() -> None:
    graph = _graph()
    verdict = check_pick(graph, "found", "other")
    assert verdict.accepted is False
    ctx = InjectionContext(iteration=2, user_message="x", current_skill_id="other")
    assert graph.next_skill(ctx) == "other"


# ── effects: proposals and leases ───────────────────────────────────────────


def test_given_two_proposals_to_different_targets_when_applied_then_the_second_is_superseded() -> (
    None
):
    effects = [
        ProposeTransition(target_skill_id="found", reason="hit", tool_name="probe",
                          tool_call_id="c1"),
        ProposeTransition(target_skill_id="other", reason="maybe", tool_name="scan",
                          tool_call_id="c2"),
    ]
    result = apply_tool_effects(_graph(), effects, cursor="triage", iteration=3)
    assert [o.outcome for o in result.outcomes] == ["accepted", "superseded"]
    assert result.outcomes[1].superseded_by == "found"
    assert result.proposal is not None and result.proposal.target_skill_id == "found"
    assert result.proposal.target_at(4) == "found" and result.proposal.target_at(5) is None
    assert result.activate == ("found",)
    assert result.conflict == Conflict(
        winner=ConflictItem(tool_name="probe", target="found", tool_call_id="c1"),
        losers=(ConflictItem(tool_name="scan", target="other", tool_call_id="c2"),),
    )


def test_given_an_unreachable_or_unknown_proposal_when_applied_then_it_is_refused() -> None:
    effects = [
        ProposeTransition(target_skill_id="help", reason="r", tool_name="t"),
        ProposeTransition(target_skill_id="fund", reason="r", tool_name="t"),
    ]
    result = apply_tool_effects(_graph(), effects, cursor="triage", iteration=1)
    assert [o.outcome for o in result.outcomes] == ["refused", "refused"]
    assert result.outcomes[0].refusal_reason is not None
    assert result.outcomes[0].refusal_reason.startswith("unreachable")
    assert "did you mean 'found'" in (result.outcomes[1].refusal_reason or "")
    assert (result.proposal, result.conflict) == (None, None)


def test_given_no_graph_when_a_proposal_is_applied_then_it_is_refused() -> None:
    effects = [ProposeTransition(target_skill_id="found", reason="r", tool_name="t")]
    result = apply_tool_effects(None, effects, cursor=None, iteration=1)
    assert (result.outcomes[0].outcome, result.proposal) == ("refused", None)


def test_given_lease_requests_when_applied_then_known_ids_are_granted_to_the_tenant() -> None:
    note = define_instruction("note", prompt="cite sources")
    tool_only = define_skill("quiet", "q", "body", surface_mode="tool-only")
    effects = [
        RequireInstruction(instruction_id="note", delivery_lease="next-call", tool_name="t"),
        RequireInstruction(instruction_id="nope", delivery_lease="next-call", tool_name="t"),
        RequireInstruction(instruction_id="quiet", delivery_lease="until-skill-exit",
                           tool_name="t"),
    ]
    result = apply_tool_effects(_graph(), effects, cursor="triage", iteration=2,
                                injections=(note, tool_only))
    assert [o.outcome for o in result.outcomes] == ["accepted", "refused", "refused"]
    assert [(lease.instruction_id, lease.skill_id) for lease in result.leases] == [
        ("note", "triage")
    ]
    assert (result.outcomes[2].refusal_reason or "").startswith("tool-only-target")
