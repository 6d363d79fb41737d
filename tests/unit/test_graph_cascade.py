"""Turn routing: the cascade, the decider, PickEntry (spec §2.8; §7 cases 16, 17)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pytest

from footprint._errors import RunError
from footprint.events import DroppedResume
from footprint.graph import (
    Intent,
    Keywords,
    KeywordScorer,
    RoutingPolicy,
    SkillGraph,
    check_pick,
    menu_outstanding,
    pick_entry,
    route_turn,
    skill_graph,
    skill_menu_hint,
)
from footprint.injection import (
    Injection,
    InjectionContext,
    TurnRoute,
    define_skill,
    evaluate_injections,
)


def _skill(skill_id: str, description: str) -> Injection:
    return define_skill(skill_id, description, f"You are in {skill_id}.")


REFUND = _skill("refund", "refund a payment")
BILLING = _skill("billing", "billing questions and invoices")
SHIPPING = _skill("shipping", "track a parcel")
URGENT = _skill("urgent", "urgent escalation")


def _cascade() -> SkillGraph:
    return (
        skill_graph(REFUND, BILLING, SHIPPING, URGENT)
        .entry(URGENT, match=Keywords(("urgent",)))
        .entry(REFUND, match=Intent("refund money back", ("i want my money back",)))
        .entry(BILLING, match=Intent("invoice billing", ("where is my invoice",)))
        .entry(SHIPPING, match=Intent("parcel tracking", ("where is my parcel",)))
        .classify(KeywordScorer())
        .build(check="off")
    )


def _ctx(message: str, **kw: object) -> InjectionContext:
    return InjectionContext(iteration=1, user_message=message, **kw)  # type: ignore[arg-type]


# ── case 16 ─────────────────────────────────────────────────────────────────


def test_given_a_rule_entry_that_matches_when_routed_then_by_entry_with_the_default_policy() -> (
    None
):
    graph = _cascade()
    ctx_in = _ctx("this is urgent please")
    routed = route_turn(graph, ctx_in)
    assert (routed.by, routed.to, routed.decisive, routed.witness) == (
        "entry", "urgent", True, "urgent"
    )
    policy = routed.policy
    assert (policy.near_tie_margin, policy.menu_size, policy.floor) == (0.15, 3, 0)
    ctx = _ctx("this is urgent please", turn_route=routed.turn_route)
    assert graph.explain_next_skill(ctx).by == "entry"
    assert [i.id for i in evaluate_injections(graph.skills, ctx).active] == ["urgent"]


def test_given_a_clear_intent_when_routed_then_by_intent_with_scores() -> None:
    routed = route_turn(_cascade(), _ctx("money back refund now"))
    assert (routed.by, routed.to, routed.scorer) == ("intent", "refund", "keyword")
    assert routed.scores[0][0] == "refund" and routed.decisive is True
    move = _cascade().explain_next_skill(_ctx("x", turn_route=routed.turn_route))
    assert (move.by, move.to) == ("intent", "refund")


def test_given_a_near_tie_when_routed_then_a_menu_and_only_the_menu_hint_is_active() -> None:
    graph = _cascade()
    routed = route_turn(graph, _ctx("invoice parcel"))
    assert routed.by == "menu"
    assert routed.offered == ("billing", "shipping") and routed.decisive is False
    assert routed.runner_up == ("shipping", 0.0)
    ctx = _ctx("invoice parcel", turn_route=routed.turn_route)
    active = [i.id for i in evaluate_injections((*graph.skills, skill_menu_hint()), ctx).active]
    assert active == ["skill-menu-hint"]
    assert menu_outstanding(routed.turn_route, None) is True


def test_given_no_keyword_overlap_cold_when_routed_then_every_visible_entry_is_offered() -> None:
    routed = route_turn(_cascade(), _ctx("zzz qqq"), hidden_resolver=lambda: ["shipping"])
    assert routed.by == "menu"
    assert routed.offered == ("urgent", "refund", "billing")


# ── case 17: postures and resume ────────────────────────────────────────────


def test_given_guard_posture_when_the_model_picks_off_the_menu_then_it_is_refused() -> None:
    graph = _cascade()
    routed = route_turn(graph, _ctx("invoice parcel"), posture="guard")
    ctx = _ctx("invoice parcel", turn_route=routed.turn_route)
    assert check_pick(graph, "refund", ctx, posture="guard").posture == "guard"
    assert routed.offered is not None
    assert check_pick(graph, routed.offered[0], ctx, posture="guard").accepted is True


def test_given_rails_when_a_menu_results_then_it_is_recorded_as_none() -> None:
    routed = route_turn(_cascade(), _ctx("invoice parcel"), posture="rails")
    assert (routed.by, routed.turn_route) == ("none", None)
    assert routed.offered is not None


def test_given_an_unknown_resume_id_when_routed_then_it_is_dropped_and_the_run_starts_cold() -> (
    None
):
    routed = route_turn(_cascade(), _ctx("refund money back"), inherited="gone")
    assert routed.dropped_resume == DroppedResume(id="gone", reason="unknown-skill")
    assert (routed.from_skill, routed.by, routed.to) == (None, "intent", "refund")


def test_given_a_near_tie_mid_conversation_when_routed_then_continuity_keeps_the_incumbent() -> (
    None
):
    routed = route_turn(_cascade(), _ctx("invoice parcel"), inherited="billing")
    assert (routed.by, routed.to, routed.from_skill) == ("continuity", "billing", "billing")


# ── the decider ─────────────────────────────────────────────────────────────


def test_given_a_menu_when_the_decider_picks_an_offered_id_then_by_decider() -> None:
    seen: list[tuple[str, ...]] = []

    def decide(query: object) -> str:
        options = query.options  # type: ignore[attr-defined]
        seen.append(options)
        return str(options[1])

    routed = route_turn(_cascade(), _ctx("invoice parcel"), decider=decide,
                        decider_name=("mock", "small"))
    assert seen and seen[0][-1] == "none"
    assert routed.by == "decider" and routed.to == seen[0][1]
    assert routed.decider is not None and routed.decider.picked == routed.to
    assert routed.turn_route is not None and routed.turn_route.offered is None


@pytest.mark.parametrize("answer", ["none", "not-an-id"])
def test_given_a_menu_when_the_decider_declines_then_the_menu_stands(answer: str) -> None:
    routed = route_turn(_cascade(), _ctx("invoice parcel"), decider=lambda q: answer,
                        decider_name=("mock", "small"))
    assert routed.by == "menu" and routed.decider is not None
    assert (routed.decider.provider, routed.decider.model, routed.decider.picked) == (
        "mock", "small", None
    )


def test_given_a_raising_decider_when_routed_then_the_menu_stands() -> None:
    def boom(query: object) -> str:
        raise RuntimeError("down")

    assert route_turn(_cascade(), _ctx("invoice parcel"), decider=boom).by == "menu"


# ── scorer contract and PickEntry ───────────────────────────────────────────


@dataclass(frozen=True)
class _FixedScorer:
    values: tuple[float, ...]
    name: str = "fixed"
    floor: float | None = None
    categorical: bool = False

    def score(self, text: str, candidates: Sequence[tuple[str, str]]) -> Sequence[float]:
        return list(self.values)


def test_given_a_scorer_returning_too_few_scores_when_routed_then_it_raises() -> None:
    graph = (
        skill_graph(REFUND, BILLING)
        .entry(REFUND, match=Intent("refund")).entry(BILLING, match=Intent("billing"))
        .classify(_FixedScorer((0.5,)))
        .build(check="off")
    )
    with pytest.raises(RunError, match="returned 1 score"):
        route_turn(graph, _ctx("x"))


def test_given_an_entry_scorer_graph_when_picking_then_the_argmax_with_softmax_is_written() -> None:
    graph = (
        skill_graph(REFUND, BILLING, SHIPPING)
        .entry(REFUND).entry(BILLING).entry(SHIPPING, when=lambda c: False)
        .entry_by(_FixedScorer((0.2, float("nan"))))
        .build(check="off")
    )
    pick = pick_entry(graph, _ctx("anything"))
    assert pick is not None and (pick.skill_id, pick.scorer) == ("refund", "fixed")
    assert [s.id for s in pick.entry_scores] == ["refund", "billing"]
    assert pick.entry_scores[0].relevance == pytest.approx(1.0)
    ctx = InjectionContext(iteration=1, user_message="x", current_skill_id=pick.skill_id)
    assert graph.explain_next_skill(ctx).by == "stay"


def test_given_a_near_tie_policy_when_classified_then_the_menu_is_capped() -> None:
    graph = (
        skill_graph(REFUND, BILLING, SHIPPING, URGENT)
        .entry(REFUND, match=Intent("a")).entry(BILLING, match=Intent("b"))
        .entry(SHIPPING, match=Intent("c")).entry(URGENT, match=Intent("d"))
        .classify(_FixedScorer((0.5, 0.5, 0.5, 0.5)), RoutingPolicy(menu_size=2))
        .build(check="off")
    )
    routed = route_turn(graph, _ctx("x"))
    assert routed.offered == ("refund", "billing")


def test_given_a_menu_route_when_the_cursor_moved_elsewhere_then_it_is_no_longer_outstanding() -> (
    None
):
    route = TurnRoute(by="menu", from_skill="billing", offered=("refund",))
    assert menu_outstanding(route, "billing") is True
    assert menu_outstanding(route, "refund") is False
    assert menu_outstanding(None, None) is False
