"""The iteration pipeline of one run, in spec order.

build the context once -> cursor move -> evaluate -> deliver -> compose the
three slots -> brain -> model call -> route -> tool calls -> effects -> gate
(the gate runs inside the tool calls). A run ends on a final answer, or on
the wrap-up call after ``max_iterations``.
"""

from __future__ import annotations

from dataclasses import dataclass

from footprint.agent._batch import execute_batch
from footprint.agent._compose import Composition, compose
from footprint.agent._emitter import RunEmitter
from footprint.agent._engine import Frame, begin_iteration
from footprint.agent._model_call import ModelCall, call_model
from footprint.agent._record import record_effects, record_outcomes, record_starts
from footprint.agent._setup import AgentSetup
from footprint.agent._state import ENGINE_ORIGIN, Evidence, RunState
from footprint.events import (
    IterationEnd,
    IterationStart,
    RouteDecided,
    StepInfo,
    StepsUnfinished,
)
from footprint.graph._steps import FinalVerdict, decide_final
from footprint.injection import ToolResult
from footprint.providers import Message

__all__ = ["TurnOutcome", "run_iterations"]

WRAP_UP = ("You have used all {n} actions of this turn. Answer now with what you have; "
           "do not call any tool.")


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnOutcome:
    """How the iterations of one run ended."""

    answer: str
    iterations: int
    stopped_early: str | None = None
    pending_tool_calls: int = 0
    wrapped_up: bool = False


def _steps_event(em: RunEmitter, step: str, verdict: FinalVerdict) -> None:
    em.emit(StepsUnfinished, step, skill_id=verdict.skill_id, total=verdict.total,
            remaining=tuple(StepInfo(index=s.index, tool=s.tool, note=s.note)
                            for s in verdict.remaining), action=verdict.action)


async def _tool_round(setup: AgentSetup, state: RunState, em: RunEmitter, frame: Frame,
                      comp: Composition, call: ModelCall) -> None:
    calls = call.response.tool_calls
    em.emit(RouteDecided, call.step_id, chosen="tool-calls",
            rationale=f"{len(calls)} tool call(s)")
    record_starts(em, calls, call.step_id)
    outs = await execute_batch(setup, state, frame, comp, calls, em)
    record_outcomes(setup, state, em, outs, call.step_id)
    record_effects(setup, state, em, frame, outs)
    # routing evidence: calls the host refused never ran, and a host-assigned status
    # (crash, timeout) is not the tool's own word, so it never satisfies on_tool_status
    state.last_batch = tuple(
        ToolResult(tool_name=o.call.name, result=o.route_text, tool_call_id=o.call.id,
                   status=o.declared_status) for o in outs if o.ran
    )


def _final(setup: AgentSetup, state: RunState, em: RunEmitter, call: ModelCall) -> bool:
    """Record a final answer; ``False`` when a stepped skill nudges the loop on."""
    verdict = decide_final(setup.plans, state.pointer, limit_fired=False,
                           already_nudged=state.nudged)
    if verdict is not None and verdict.action == "nudged":
        em.emit(RouteDecided, call.step_id, chosen="step-nudge",
                rationale=f"skill {verdict.skill_id!r} has unfinished steps")
        _steps_event(em, call.step_id, verdict)
        state.nudged = True
        state.history.append(Message(role="user", content=verdict.nudge_text or "",
                                     origin=ENGINE_ORIGIN + "nudge"))
        state.last_batch = None
        return False
    if verdict is not None:
        _steps_event(em, call.step_id, verdict)
    em.emit(RouteDecided, call.step_id, chosen="final", rationale="the model answered")
    return True


async def _iteration(setup: AgentSetup, state: RunState, em: RunEmitter, i: int,
                     base: Evidence) -> ModelCall:
    frame = begin_iteration(setup, state, em, i)
    comp = compose(setup, frame, state, em, base)
    em.emit(IterationStart, f"engine#{i}")
    call = await call_model(setup, state, em, comp, frame.cursor)
    if call.response.tool_calls and i < setup.max_iterations:
        await _tool_round(setup, state, em, frame, comp, call)
    return call


def _pend(state: RunState, call: ModelCall, em: RunEmitter) -> int:
    """Answer tool calls left at the limit, so the history stays well formed."""
    calls = call.response.tool_calls
    em.emit(RouteDecided, call.step_id, chosen="wrap-up",
            rationale=f"max_iterations reached with {len(calls)} tool call(s) pending")
    for c in calls:
        state.history.append(Message(
            role="tool", tool_call_id=c.id, tool_name=c.name, origin=ENGINE_ORIGIN + "limit",
            content="Not run: this turn's action limit was reached."))
    state.last_batch = None
    return len(calls)


async def _wrap_up(setup: AgentSetup, state: RunState, em: RunEmitter, i: int,
                   base: Evidence, pending: int) -> TurnOutcome:
    state.history.append(Message(role="user", content=WRAP_UP.format(n=setup.max_iterations),
                                 origin=ENGINE_ORIGIN + "wrap-up"))
    frame = begin_iteration(setup, state, em, i)
    comp = compose(setup, frame, state, em, base)
    em.emit(IterationStart, f"engine#{i}")
    call = await call_model(setup, state, em, comp, frame.cursor, offer_tools=False)
    verdict = decide_final(setup.plans, state.pointer, limit_fired=True, already_nudged=True)
    if verdict is not None:
        _steps_event(em, call.step_id, verdict)
    em.emit(RouteDecided, call.step_id, chosen="final", rationale="wrap-up answer")
    em.emit(IterationEnd, f"engine#{i}", tool_call_count=0)
    return TurnOutcome(answer=call.response.content, iterations=i,
                       stopped_early="max-iterations", pending_tool_calls=pending,
                       wrapped_up=True)


async def run_iterations(setup: AgentSetup, state: RunState, em: RunEmitter,
                         base: Evidence) -> TurnOutcome:
    """Loop until a final answer, or wrap up after ``max_iterations``."""
    i = 0
    while True:
        i += 1
        call = await _iteration(setup, state, em, i, base)
        calls = call.response.tool_calls
        if calls and i >= setup.max_iterations:
            pending = _pend(state, call, em)
            em.emit(IterationEnd, f"engine#{i}", tool_call_count=0)
            return await _wrap_up(setup, state, em, i + 1, base, pending)
        if calls:
            em.emit(IterationEnd, f"engine#{i}", tool_call_count=len(calls))
            continue
        done = _final(setup, state, em, call)
        em.emit(IterationEnd, f"engine#{i}", tool_call_count=0)
        if done:
            return TurnOutcome(answer=call.response.content, iterations=i)
        if i >= setup.max_iterations:
            return await _wrap_up(setup, state, em, i + 1, base, 0)
