"""The top of every iteration: one context, one cursor move, one evaluation.

``begin_iteration`` builds the iteration's ``InjectionContext`` once, asks
the graph where the cursor goes with that exact object, evaluates every
trigger with that same object, and emits what it decided: route conflicts,
``context.evaluated``, reroutes, and the skill activation delta.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from footprint.agent._emitter import RunEmitter
from footprint.agent._setup import AgentSetup
from footprint.agent._state import Evidence, RunState, history_view
from footprint.events import (
    ActivationReason,
    CatalogEntry,
    ContextEvaluated,
    CursorMove,
    KindCount,
    RerouteSuperseded,
    RouteConflict,
    RoutingEntry,
    SkillActivated,
    SkillDeactivated,
)
from footprint.graph import menu_outstanding
from footprint.graph._steps import rekey_pointer
from footprint.injection import (
    Always,
    Injection,
    InjectionContext,
    InjectionEvaluation,
    LLMActivated,
    OnToolReturn,
    Rule,
    evaluate_injections,
    lease_active_ids,
    lease_tenant,
    summarize_evaluation,
)

__all__ = ["Frame", "admission_of", "begin_iteration", "build_context"]

_BY_REASON: dict[str, ActivationReason] = {
    "entry": "entry", "route": "route", "model-pick": "model-pick",
    "tool-proposal": "tool-proposal", "intent": "intent", "continuity": "continuity",
    "decider": "decider", "stay": "entry", "none": "entry",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Frame:
    """What the top of one iteration decided, for the rest of the iteration."""

    iteration: int
    ctx: InjectionContext
    move: CursorMove | None
    cursor: str | None
    active: tuple[Injection, ...]
    evaluated: Evidence


def _base_context(setup: AgentSetup, state: RunState, iteration: int) -> InjectionContext:
    batch = state.last_batch
    proposal = state.proposal.target_at(iteration) if state.proposal is not None else None
    return InjectionContext(
        iteration=iteration,
        user_message=state.user_message,
        history=history_view(state.history, setup.by_id, state.history_views),
        max_iterations=setup.max_iterations,
        last_tool_result=batch[-1] if batch else None,
        tool_results=batch,
        activated_injection_ids=tuple(state.activated),
        current_skill_id=state.cursor,
        pending_skill_pick=state.pending_pick,
        pending_tool_transition=proposal,
        hidden_skill_ids=setup.hidden_skills or None,
        entry_scores=state.entry_scores,
        entry_scorer=state.entry_scorer,
        turn_route=state.turn_route,
        step_pointer=state.pointer,
    )


def build_context(setup: AgentSetup, state: RunState, iteration: int) -> InjectionContext:
    """The one context of this iteration, leases and step pointer re-keyed to its tenure."""
    ctx = _base_context(setup, state, iteration)
    if not state.leases and not setup.plans:
        return ctx
    advanced = setup.graph.next_skill(ctx) if setup.graph is not None else None
    live, state.leases = lease_active_ids(
        state.leases, iteration, lease_tenant(advanced, state.activated)
    )
    pointer = state.pointer
    if setup.plans:
        tenant = advanced if setup.graph is not None else (
            state.activated[-1] if state.activated else None
        )
        pointer = rekey_pointer(setup.plans, state.pointer, tenant)
    return replace(ctx, lease_active_ids=live or None, step_pointer=pointer)


def admission_of(inj: Injection, frame: Frame, state: RunState) -> Evidence:
    """The event that admitted ``inj`` into this iteration's active set."""
    ev = frame.evaluated
    if inj.id in (frame.ctx.lease_active_ids or ()):
        return state.lease_evidence.get(inj.id, Evidence(ev.seq, ev.step_id, "lease"))
    trigger = inj.trigger
    if isinstance(trigger, Always):
        return Evidence(ev.seq, ev.step_id, "always")
    if isinstance(trigger, Rule):
        via = "cursor" if inj.metadata.get("skill_graph") is not None else "rule"
        return Evidence(ev.seq, ev.step_id, via)
    if isinstance(trigger, OnToolReturn):
        for res in frame.ctx.tool_results or ():
            hit = state.tool_end_seq.get(res.tool_call_id or "")
            if hit is not None and _name_hit(trigger.tool_name, res.tool_name):
                return Evidence(hit.seq, hit.step_id, "tool-return")
        return Evidence(ev.seq, ev.step_id, "tool-return")
    if isinstance(trigger, LLMActivated):
        return state.activation_evidence.get(inj.id, Evidence(ev.seq, ev.step_id, "read-skill"))
    return Evidence(ev.seq, ev.step_id, "rule")


def _name_hit(pattern: object, name: str) -> bool:
    if isinstance(pattern, str):
        return pattern == name
    search = getattr(pattern, "search", None)
    return bool(search(name)) if search is not None else False


def _emit_conflict(em: RunEmitter, move: CursorMove, step: str) -> None:
    if move.conflict is not None:
        em.emit(RouteConflict, step, winner=move.conflict.winner,
                losers=move.conflict.losers, from_skill_id=move.from_skill, source="route")


def _with_reachable(setup: AgentSetup, ctx: InjectionContext,
                    move: CursorMove | None) -> CursorMove | None:
    """The move as recorded: the reachable set, and the menu a pick closed (spec §2.8)."""
    graph = setup.graph
    if graph is None or move is None:
        return move
    hidden = setup.hidden_skills
    hops = graph.reachable_skills(move.to, hidden)
    reach = tuple(dict.fromkeys((*hops, *graph.open_skills(hidden))))
    tr = ctx.turn_route
    if (move.by in ("model-pick", "tool-proposal") and tr is not None and tr.offered
            and menu_outstanding(tr, ctx.current_skill_id)):
        return replace(move, reachable=reach, offered=tr.offered,
                       declined_offer=move.to not in tr.offered)
    return replace(move, reachable=reach)


def _routing(setup: AgentSetup, active: tuple[Injection, ...]) -> tuple[RoutingEntry, ...]:
    out: list[RoutingEntry] = []
    for inj in active:
        prov = inj.metadata.get("skill_graph")
        if prov is None:
            continue
        out.append(RoutingEntry(
            injection_id=inj.id, flavor=inj.flavor, via=str(getattr(prov, "via", "model")),
            label=getattr(prov, "label", None), from_skill=getattr(prov, "from_skill", None),
            trigger_kind=inj.trigger.kind, tools=tuple(t.name for t in inj.inject.tools),
        ))
    return tuple(out)


def _evaluated(setup: AgentSetup, ctx: InjectionContext, move: CursorMove | None,
               evaluation: InjectionEvaluation) -> dict[str, Any]:
    """The ``context.evaluated`` payload (built only for a sink that keeps it)."""
    summary = summarize_evaluation(setup.injections, evaluation)
    superseded = setup.graph.superseded_entries(ctx) if setup.graph is not None else ()
    return dict(
        active_count=summary.active_count, skipped_count=summary.skipped_count,
        evaluated_total=summary.evaluated_total, active_ids=summary.active_ids,
        skipped=evaluation.skipped,
        trigger_kind_counts=tuple(KindCount(kind=k, count=n)
                                  for k, n in summary.trigger_kind_counts),
        skill_catalog=tuple(CatalogEntry(id=i, description=d) for i, d in summary.skill_catalog),
        cursor_move=_with_reachable(setup, ctx, move), superseded_ids=superseded,
        routing=_routing(setup, evaluation.active),
    )


def _evaluate(setup: AgentSetup, ctx: InjectionContext, move: CursorMove | None,
              em: RunEmitter, step: str) -> tuple[tuple[Injection, ...], int]:
    """The active set and the seq of its ``context.evaluated``."""
    evaluation = evaluate_injections(setup.injections, ctx)
    _emit_reroutes(ctx, move, evaluation.active, em, step)  # spec §6: before the evaluation
    seq = em.emit_with(ContextEvaluated, step,
                       lambda: _evaluated(setup, ctx, move, evaluation))
    return evaluation.active, seq


def _emit_reroutes(ctx: InjectionContext, move: CursorMove | None,
                   active: tuple[Injection, ...], em: RunEmitter, step: str) -> None:
    active_ids = {i.id for i in active}
    cursor = move.to if move is not None else None
    pick = ctx.pending_skill_pick
    if pick is not None and pick not in active_ids:
        em.emit(RerouteSuperseded, step, volunteered_id=pick, won_id=cursor,
                from_skill_id=ctx.current_skill_id)
    target = ctx.pending_tool_transition
    if target is not None and move is not None and target != cursor:
        em.emit(RerouteSuperseded, step, volunteered_id=target, won_id=cursor,
                from_skill_id=ctx.current_skill_id, source="tool-proposal")


def _activation_reason(inj: Injection, frame: Frame, state: RunState) -> ActivationReason:
    if frame.move is not None and inj.id == frame.cursor:
        return _BY_REASON.get(frame.move.by, "entry")
    via = admission_of(inj, frame, state).via
    table: dict[str, ActivationReason] = {
        "lease": "lease", "always": "always", "cursor": "rule", "rule": "rule",
        "tool-return": "rule", "tool-proposal": "tool-proposal",
    }
    return table.get(via, "model-pick")


def _emit_delta(state: RunState, frame: Frame, em: RunEmitter, step: str) -> None:
    now = {i.id: i for i in frame.active if i.flavor == "skill"}
    moved = frame.move is not None and frame.move.from_skill != frame.cursor
    for sid, was in list(state.active_skills.items()):
        if sid not in now:
            reason = "cursor-moved" if moved else ("lease" if was.via == "lease" else "rule")
            em.emit(SkillDeactivated, step, skill_id=sid, reason=reason,
                    evidence_seq=frame.evaluated.seq, evidence_step=frame.evaluated.step_id)
            del state.active_skills[sid]
    for sid, inj in now.items():
        if sid in state.active_skills:
            continue
        reason = _activation_reason(inj, frame, state)
        proof = admission_of(inj, frame, state)
        picked = state.activation_evidence.get(sid)
        if reason in ("model-pick", "tool-proposal") and picked is not None:
            proof = picked
        elif reason in ("entry", "route", "intent", "continuity", "decider", "always", "rule"):
            proof = frame.evaluated
        em.emit(SkillActivated, step, skill_id=sid, reason=reason,
                evidence_seq=proof.seq, evidence_step=proof.step_id)
        state.active_skills[sid] = Evidence(proof.seq, proof.step_id, reason)


def begin_iteration(setup: AgentSetup, state: RunState, em: RunEmitter,
                    iteration: int) -> Frame:
    """Build the ctx once, move the cursor, evaluate, and say what happened."""
    em.iteration = iteration
    step = f"engine#{iteration}"
    ctx = build_context(setup, state, iteration)
    move = setup.graph.explain_next_skill(ctx) if setup.graph is not None else None
    if move is not None:
        _emit_conflict(em, move, step)
    active, evaluated = _evaluate(setup, ctx, move, em, step)
    frame = Frame(
        iteration=iteration, ctx=ctx, move=move,
        cursor=move.to if move is not None else None, active=active,
        evaluated=Evidence(evaluated, step, "evaluated"),
    )
    _emit_delta(state, frame, em, step)
    state.cursor = frame.cursor
    state.pointer = ctx.step_pointer
    state.pending_pick = None
    return frame
