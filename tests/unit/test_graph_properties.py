"""Property tests over generated graphs and contexts (the resolver, reachability, the gate)."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from footprint.graph import Keywords, SkillGraph, check_pick, skill_graph
from footprint.injection import (
    InjectionContext,
    ToolResult,
    TurnRoute,
    define_skill,
    evaluate_injections,
)

IDS = ("s0", "s1", "s2", "s3", "s4", "s5")
TOOLS = ("probe", "pay", "scan")
SKILLS = {i: define_skill(i, f"handles {i}", f"body of {i}") for i in IDS}


def _raises(ctx: object) -> bool:
    raise RuntimeError("generated predicate raises")


@st.composite
def graphs(draw: st.DrawFn) -> SkillGraph:
    n = draw(st.integers(min_value=2, max_value=len(IDS)))
    ids = IDS[:n]
    builder = skill_graph(*(SKILLS[i] for i in ids))
    for skill_id in draw(st.lists(st.sampled_from(ids), min_size=1, max_size=3, unique=True)):
        kind = draw(st.sampled_from(["plain", "keyword", "raise"]))
        if kind == "plain":
            builder.entry(skill_id)
        elif kind == "keyword":
            builder.entry(skill_id, match=Keywords((draw(st.sampled_from(["refund", "ship"])),)))
        else:
            builder.entry(skill_id, when=_raises)
    edges = st.tuples(st.sampled_from(ids), st.sampled_from(ids),
                      st.sampled_from(["bare", "tool", "guard", "status", "raise"]))
    for src, dst, kind in draw(st.lists(edges, max_size=10)):
        if kind == "bare":
            builder.route(src, dst)
        elif kind == "tool":
            builder.route(src, dst, on_tool_return=draw(st.sampled_from(TOOLS)))
        elif kind == "guard":
            builder.route(src, dst, guard={"n": {"gt": draw(st.integers(-2, 2))}})
        elif kind == "status":
            builder.route(src, dst, on_tool_status=("failure",))
        else:
            builder.route(src, dst, when=_raises)
    return builder.build(check="off")


maybe_id = st.none() | st.sampled_from((*IDS, "ghost"))
results = st.builds(
    ToolResult,
    tool_name=st.sampled_from(TOOLS),
    result=st.one_of(st.text(max_size=20), st.integers(-3, 3).map(lambda v: f'{{"n": {v}}}')),
    tool_call_id=st.none() | st.sampled_from(("c1", "c2")),
    status=st.none() | st.sampled_from(("success", "failure")),
)
turn_routes = st.none() | st.builds(
    TurnRoute, by=st.sampled_from(("entry", "intent", "menu")), to=maybe_id,
    offered=st.none() | st.tuples(st.sampled_from(IDS)),
)
contexts = st.builds(
    InjectionContext,
    iteration=st.integers(1, 4),
    user_message=st.sampled_from(("refund please", "ship it", "hello", "")),
    current_skill_id=maybe_id,
    tool_results=st.none() | st.lists(results, max_size=4).map(tuple),
    pending_skill_pick=maybe_id,
    pending_tool_transition=maybe_id,
    activated_injection_ids=st.lists(st.sampled_from(IDS), max_size=3).map(tuple),
    hidden_skill_ids=st.none() | st.lists(st.sampled_from(IDS), max_size=3).map(tuple),
    turn_route=turn_routes,
)


@given(graphs(), contexts)
def test_given_any_graph_and_ctx_when_explained_then_it_never_raises_nor_lands_on_hidden(
    graph: SkillGraph, ctx: InjectionContext
) -> None:
    move = graph.explain_next_skill(ctx)
    assert move.to is None or move.to not in (ctx.hidden_skill_ids or ())
    assert graph.next_skill(ctx) == move.to


def _as_a_host_would(graph: SkillGraph, ctx: InjectionContext) -> InjectionContext:
    """Keep only what a host that honours the contract can publish."""
    cur = ctx.current_skill_id if ctx.current_skill_id in graph.skill_ids else None
    hops = graph.reachable_skills(cur)
    pick = ctx.pending_skill_pick if ctx.pending_skill_pick in hops else None
    proposal = ctx.pending_tool_transition if ctx.pending_tool_transition in hops else None
    turn = ctx.turn_route
    if turn is not None and turn.to is not None and turn.to not in graph.entry_ids:
        turn = None
    carried = tuple(i for i in (cur, pick, proposal) if i is not None)
    return replace(
        ctx, current_skill_id=cur, pending_skill_pick=pick, pending_tool_transition=proposal,
        activated_injection_ids=ctx.activated_injection_ids + carried, turn_route=turn,
    )


@given(graphs(), contexts)
def test_given_a_contract_honouring_ctx_when_evaluated_then_the_cursor_skill_is_active_or_reported(
    graph: SkillGraph, raw: InjectionContext
) -> None:
    ctx = _as_a_host_would(graph, raw)
    evaluation = evaluate_injections(graph.skills, ctx)
    active = {i.id for i in evaluation.active}
    threw = {s.id for s in evaluation.skipped if s.reason == "predicate-threw"}
    to = graph.next_skill(ctx)
    if to is not None:  # active, or its own raising entry condition was reported
        assert to in active or to in threw
    assert not active & set(ctx.hidden_skill_ids or ())


@given(graphs(), maybe_id, st.lists(st.sampled_from(IDS), max_size=3))
def test_given_any_cursor_when_reachable_is_asked_then_it_excludes_the_cursor_and_hidden(
    graph: SkillGraph, cursor: str | None, hidden: list[str]
) -> None:
    reachable = graph.reachable_skills(cursor, hidden)
    assert cursor not in reachable
    assert not set(reachable) & set(hidden)
    assert len(reachable) == len(set(reachable))


@given(graphs(), st.sampled_from((*IDS, "ghost")), contexts,
       st.none() | st.sampled_from(("rails", "guard")))
def test_given_any_pick_when_gated_then_refusals_never_name_hidden_skills(
    graph: SkillGraph, requested: str, ctx: InjectionContext, posture: str | None
) -> None:
    verdict = check_pick(graph, requested, ctx, posture=posture)  # type: ignore[arg-type]
    hidden = set(ctx.hidden_skill_ids or ())
    assert not set(verdict.allowed) & hidden
    if verdict.accepted:
        assert requested in verdict.allowed and requested not in hidden
    else:
        assert verdict.text is not None
        assert not any(f'"{h}"' in verdict.text or f" {h}," in verdict.text for h in hidden)
