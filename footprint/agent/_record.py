"""Recording one tool batch: starts, refusals, ends, steps and effects, in call order."""

from __future__ import annotations

from footprint.agent._batch import CallOutcome, args_of
from footprint.agent._emitter import RunEmitter
from footprint.agent._engine import Frame
from footprint.agent._setup import AgentSetup
from footprint.agent._state import Evidence, RunState
from footprint.events import (
    RouteConflict,
    SkillEscalated,
    SkillRejected,
    StepAdvanced,
    StepInfo,
    StepSkipped,
    ToolEffect,
    ToolEnd,
    ToolStart,
)
from footprint.graph import apply_tool_effects
from footprint.graph._brains import describe_serving_brain, note_refusal
from footprint.providers import Message, ToolCall

__all__ = ["record_effects", "record_outcomes", "record_starts"]


def record_starts(em: RunEmitter, calls: tuple[ToolCall, ...], parent: str) -> None:
    """One ``tool.start`` per call, in call order, before any of them runs."""
    parallel = len(calls) if len(calls) > 1 else None
    for c in calls:
        em.emit(ToolStart, f"tool#{c.id}", parent_step=parent, tool_name=c.name,
                tool_call_id=c.id, args=args_of(c), parallel_count=parallel)


def _escalate(setup: AgentSetup, state: RunState, em: RunEmitter, step: str,
              cursor: str | None) -> None:
    policy = setup.brains.escalation if setup.brains is not None else None
    state.escalation, fired = note_refusal(state.escalation, policy)
    if not fired or policy is None:
        return
    serving = describe_serving_brain(setup.brains, cursor, agent_provider=setup.provider,
                                     default_model=setup.model)
    em.emit(SkillEscalated, step, after_refusals=policy.after_refusals,
            refusals=state.escalation.refusals, from_provider=serving.provider,
            from_model=serving.model, to_provider=policy.provider.name,
            to_model=policy.model or setup.model)


def _refusal(setup: AgentSetup, state: RunState, em: RunEmitter, out: CallOutcome,
             step: str) -> None:
    pick = out.pick
    if pick is None or pick.accepted or pick.reason is None:
        return
    em.emit(SkillRejected, step, requested_id=pick.requested_id, reason=pick.reason,
            allowed=pick.allowed, current_skill_id=pick.current_skill_id,
            posture=pick.posture, tool_call_id=out.call.id)
    _escalate(setup, state, em, step, pick.current_skill_id)


def _info(step: object) -> StepInfo:
    return StepInfo(index=getattr(step, "index", 0), tool=getattr(step, "tool", ""),
                    note=getattr(step, "note", ""))


def _one(setup: AgentSetup, state: RunState, em: RunEmitter, out: CallOutcome,
         parent: str) -> None:
    step = f"tool#{out.call.id}"
    _refusal(setup, state, em, out, step)
    skip = out.skip
    if skip is not None and skip.kind == "skipped" and skip.step is not None:
        em.emit(StepSkipped, step, skill_id=skip.skill_id or "", step=_info(skip.step),
                total=skip.total, reason=skip.reason or "", policy=skip.policy or "advance",
                tool_call_id=out.call.id)
    end_seq = em.emit(ToolEnd, step, parent_step=parent, tool_call_id=out.call.id,
                      tool_name=out.call.name, result=out.text, status=out.status,
                      error=out.error, duration_ms=out.duration_ms, status_by=out.status_by,
                      timeout_s=out.timeout_s,
                      step_note=out.advanced.result_suffix if out.advanced is not None else None)
    proof = Evidence(end_seq, step, "read-skill")
    state.tool_end_seq[out.call.id] = Evidence(end_seq, step, "tool-return")
    if out.pick is not None and out.pick.accepted:
        state.activation_evidence[out.pick.requested_id] = proof
    elif out.call.name == "read_skill" and not out.error:
        requested = out.call.arguments.get("id")
        if isinstance(requested, str) and requested:
            state.activation_evidence.setdefault(requested, proof)
    adv = out.advanced
    if adv is not None:
        em.emit(StepAdvanced, step, skill_id=adv.pointer.skill_id, step=_info(adv.step),
                total=adv.total, tool_call_id=out.call.id, completed=adv.completed)


def record_outcomes(setup: AgentSetup, state: RunState, em: RunEmitter,
                    outs: list[CallOutcome], parent: str) -> None:
    """Refusals, ends and step events per call, then the results into history."""
    for out in outs:
        _one(setup, state, em, out, parent)
    for out in outs:
        state.history.append(Message(role="tool", content=out.text, tool_call_id=out.call.id,
                                     tool_name=out.call.name, origin=f"tool#{out.call.id}"))


def record_effects(setup: AgentSetup, state: RunState, em: RunEmitter, frame: Frame,
                   outs: list[CallOutcome]) -> None:
    """Judge the batch's tool effects and record each outcome."""
    effects = [e for out in outs for e in out.effects]
    if not effects:
        return
    result = apply_tool_effects(setup.graph, effects, cursor=frame.cursor,
                                iteration=frame.iteration, injections=setup.injections,
                                activated_ids=state.activated, hidden=setup.hidden_skills)
    for o in result.outcomes:
        step = f"tool#{o.tool_call_id}" if o.tool_call_id else f"engine#{frame.iteration}"
        seq = em.emit(ToolEffect, step, kind=o.kind, outcome=o.outcome, tool_name=o.tool_name,
                      tool_call_id=o.tool_call_id, target_skill_id=o.target_skill_id,
                      reason=o.reason, instruction_id=o.instruction_id,
                      delivery_lease=o.delivery_lease, refusal_reason=o.refusal_reason,
                      superseded_by=o.superseded_by)
        if o.outcome != "accepted":
            continue
        if o.instruction_id is not None:
            state.lease_evidence[o.instruction_id] = Evidence(seq, step, "lease")
        if o.target_skill_id is not None and o.kind == "propose-transition":
            state.activation_evidence[o.target_skill_id] = Evidence(seq, step,
                                                                    "tool-proposal")
    state.leases = (*state.leases, *result.leases)
    if result.proposal is not None:
        state.proposal = result.proposal
    for target in result.activate:
        if target not in state.activated:
            state.activated.append(target)
    if result.conflict is not None:
        em.emit(RouteConflict, f"engine#{frame.iteration}", winner=result.conflict.winner,
                losers=result.conflict.losers, from_skill_id=frame.cursor,
                source="tool-proposal")
