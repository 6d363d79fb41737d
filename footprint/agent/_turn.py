"""Before iteration 1: declare the run, and route the turn (PickEntry or the cascade)."""

from __future__ import annotations

import math

from footprint.agent._compose import content_hash
from footprint.agent._emitter import RunEmitter
from footprint.agent._setup import AgentSetup
from footprint.agent._state import RunState, history_view
from footprint.agent._wire import json_safe
from footprint.events import (
    DeclaredCondition,
    GraphEdge,
    GraphNode,
    InjectionDeclared,
    RoutePolicy,
    RunConfigured,
    RunnerUp,
    ScoreEntry,
    SkillGraphDeclared,
    TurnRouted,
)
from footprint.graph import DeciderQuery, TurnRouting, pick_entry, route_turn
from footprint.injection import Injection, InjectionContext
from footprint.providers import LLMRequest, Message, Provider

__all__ = ["DECIDER_SYSTEM", "decider_request", "declare_run", "route_turn_stage"]

DECIDER_SYSTEM = "You route a request to one skill. Reply with exactly one option id."


def _content_of(inj: Injection) -> str:
    parts = [inj.inject.system_prompt or ""]
    parts += [f"{m.role}: {m.content}" for m in inj.inject.messages]
    parts += [t.name for t in inj.inject.tools]
    return "\n".join(parts)


def _declare_graph(setup: AgentSetup, em: RunEmitter) -> None:
    graph = setup.graph
    if graph is None or not graph.skill_ids:
        return
    if not em.keeps:
        em.skip()
        return
    nodes = tuple(GraphNode(id=s.id, kind="skill", description=s.description, title=s.title)
                  for s in graph.skills)
    edges = tuple(
        GraphEdge(to=e.to, kind=e.kind, from_skill=e.from_skill, label=e.label,
                  guard=tuple(DeclaredCondition(key=c.key, op=c.op, value=json_safe(c.value))
                              for c in e.guard.conditions) if e.guard is not None else None)
        for e in graph.edges()
    )
    em.emit(SkillGraphDeclared, "run", nodes=nodes, edges=edges)


def declare_run(setup: AgentSetup, em: RunEmitter) -> int:
    """``run.configured``, the graph and every injection; returns the configured seq."""
    tools = (*setup.baseline_tools, *setup.skill_tools)
    configured = em.emit(
        RunConfigured, "run", agent_name=setup.name, model=setup.model,
        provider=setup.provider.name, max_iterations=setup.max_iterations,
        injection_count=len(setup.injections), tool_names=tuple(tools),
        has_graph=setup.graph is not None,
        options={"posture": setup.posture, "continuity": setup.continuity,
                 "hidden_skills": list(setup.hidden_skills),
                 **({"factory": setup.factory} if setup.factory is not None else {})},
    )
    _declare_graph(setup, em)
    if not em.keeps:
        em.skip(len(setup.injections))
        return configured
    for inj in setup.injections:
        em.emit(InjectionDeclared, "run", injection_id=inj.id, flavor=inj.flavor,
                trigger_kind=inj.trigger.kind, content_hash=content_hash(_content_of(inj)),
                description=inj.description, title=inj.title)
    return configured


def _score(item: tuple[str, float], relevance: dict[str, float]) -> ScoreEntry:
    sid, score = item
    return ScoreEntry(id=sid, score=score if math.isfinite(score) else None,
                      relevance=relevance.get(sid))


def _emit_routed(em: RunEmitter, r: TurnRouting) -> None:
    rel = dict(r.relevance)
    em.emit(
        TurnRouted, "engine#0", by=r.by, from_skill=r.from_skill, to=r.to, scorer=r.scorer,
        scores=tuple(_score(s, rel) for s in r.scores),
        runner_up=RunnerUp(id=r.runner_up[0], gap=r.runner_up[1]) if r.runner_up else None,
        decisive=r.decisive, witness=r.witness, offered=r.offered, stay_offered=r.stay_offered,
        policy=RoutePolicy(near_tie_margin=r.policy.near_tie_margin,
                           menu_size=r.policy.menu_size, floor=r.policy.floor),
        dropped_resume=r.dropped_resume, decider=r.decider,
    )


def decider_request(model: str, query: DeciderQuery) -> LLMRequest:
    """The exact request the decider is sent (a replay rebuilds it to serve the recorded pick)."""
    lines = [f"- {o}" for o in query.options]
    return LLMRequest(
        model=model, system=DECIDER_SYSTEM,
        messages=(Message(role="user", content=f"Request: {query.user_message}\n"
                          "Options:\n" + "\n".join(lines)),),
    )


async def _ask(provider: Provider, model: str, query: DeciderQuery) -> str | None:
    """One constrained pick over the menu; any failure leaves the menu standing."""
    request = decider_request(model, query)
    try:
        reply = (await provider.complete(request)).content.strip().strip("`'\".")
    except Exception:  # a failing decider leaves the menu standing
        return None
    return reply if reply in query.options else None


async def route_turn_stage(setup: AgentSetup, state: RunState, em: RunEmitter) -> None:
    """PickEntry for scorer graphs; the cascade (and its decider) when configured."""
    graph = setup.graph
    if graph is None:
        return
    ctx = InjectionContext(iteration=1, user_message=state.user_message,
                           history=history_view(state.history, setup.by_id),
                           max_iterations=setup.max_iterations,
                           hidden_skill_ids=setup.hidden_skills or None)
    pick = pick_entry(graph, ctx)
    if pick is not None:
        state.cursor = pick.skill_id
        state.entry_scores, state.entry_scorer = pick.entry_scores, pick.scorer
    if not setup.has_cascade:
        return
    inherited = state.cursor if setup.continuity else None
    routed = route_turn(graph, ctx, inherited=inherited, posture=setup.posture)
    decider = setup.brains.decider if setup.brains is not None else None
    if routed.by == "menu" and routed.offered and decider is not None:
        model = decider.model or setup.model
        query = DeciderQuery(user_message=state.user_message, offered=routed.offered,
                             options=(*routed.offered,
                                      *(("stay",) if routed.stay_offered else ()), "none"),
                             stay_offered=routed.stay_offered, relevance=routed.relevance)
        picked = await _ask(setup.model_source or decider.provider, model, query)
        routed = route_turn(graph, ctx, inherited=inherited, posture=setup.posture,
                            decider=lambda _q: picked,
                            decider_name=(decider.provider.name, model))
    _emit_routed(em, routed)
    if routed.dropped_resume is not None:
        state.cursor = None
    state.turn_route = routed.turn_route
