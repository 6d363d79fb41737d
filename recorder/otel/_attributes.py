"""Bounded ``footprint.*`` span-event attributes, one small function per decision type.

Only ids, codes, counts, hashes and guard verdicts go out by default; free
text (reasons written as prose, rationales) only when content capture is on.
Strings are cut at :data:`MAX_CHARS`, lists at :data:`MAX_ITEMS`, and
``None`` values are left out (an attribute costs the exporter ~3 µs).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeAlias

from footprint.events import (
    BudgetPressure,
    ContextEvaluated,
    ContextInjected,
    EventBase,
    RerouteSuperseded,
    RouteConflict,
    RouteDecided,
    RunFailed,
    SkillActivated,
    SkillDeactivated,
    SkillEscalated,
    SkillGraphDeclared,
    SkillRejected,
    StepAdvanced,
    StepSkipped,
    StepsUnfinished,
    ToolEffect,
    TurnRouted,
)

__all__ = [
    "DECISION_EVENTS", "MAX_CHARS", "MAX_ITEMS", "AttrValue", "Attrs", "clip", "event_attributes",
    "ids",
]

AttrValue: TypeAlias = str | bool | int | float | tuple[str, ...]
Attrs: TypeAlias = dict[str, AttrValue]
MAX_CHARS = 256
MAX_ITEMS = 20
P = "footprint."


def clip(text: str, limit: int = MAX_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def ids(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(clip(v) for v, _ in zip(values, range(MAX_ITEMS), strict=False))


def _put(attrs: Attrs, key: str, value: str | None) -> None:
    if value is not None:
        attrs[P + key] = clip(value)


def _evaluated(e: ContextEvaluated, content: bool) -> Attrs:
    a: Attrs = {P + "active.ids": ids(e.active_ids)}
    if e.active_count > MAX_ITEMS:
        a[P + "active.count"] = e.active_count
    if e.skipped:
        a[P + "skipped.ids"] = ids(s.id for s in e.skipped)
        a[P + "skipped.reasons"] = ids(s.reason for s in e.skipped)
    move = e.cursor_move
    if move is not None:
        a[P + "cursor.by"] = move.by
        _put(a, "cursor.from", move.from_skill)
        _put(a, "cursor.to", move.to)
        if move.guard is not None:
            a[P + "guard.verdict"] = move.guard.verdict
        if move.guards_closed:
            a[P + "guards.closed"] = ids(f"{g.from_skill}->{g.to}" for g in move.guards_closed)
        if move.conflict is not None:
            a[P + "conflict.winner"] = clip(move.conflict.winner.target)
    return a


def _injected(e: ContextInjected, content: bool) -> Attrs:
    a: Attrs = {
        P + "injection.id": clip(e.injection_id or e.source),
        P + "slot": e.slot,
        P + "content.hash": e.content_hash,
        P + "admitted.via": e.admitted_via,
        P + "position": e.position,
    }
    if content:
        a[P + "reason"] = clip(e.reason)
    return a


def _route(e: RouteDecided, content: bool) -> Attrs:
    a: Attrs = {P + "route.chosen": e.chosen}
    if content and e.rationale:
        a[P + "route.rationale"] = clip(e.rationale)
    return a


def _effect(e: ToolEffect, content: bool) -> Attrs:
    a: Attrs = {P + "effect.kind": clip(e.kind), P + "effect.outcome": e.outcome}
    _put(a, "tool.call.id", e.tool_call_id)
    _put(a, "skill.target", e.target_skill_id)
    _put(a, "effect.refusal", e.refusal_reason)
    _put(a, "effect.superseded_by", e.superseded_by)
    _put(a, "reason", e.reason)
    return a


def _activated(e: SkillActivated | SkillDeactivated, content: bool) -> Attrs:
    a: Attrs = {P + "skill.id": clip(e.skill_id), P + "reason": e.reason}
    _put(a, "evidence.step", e.evidence_step)
    return a


def _rejected(e: SkillRejected, content: bool) -> Attrs:
    a: Attrs = {P + "skill.requested": clip(e.requested_id), P + "reason": e.reason,
                P + "skill.allowed": ids(e.allowed)}
    _put(a, "skill.current", e.current_skill_id)
    _put(a, "posture", e.posture)
    return a


def _escalated(e: SkillEscalated, content: bool) -> Attrs:
    a: Attrs = {P + "refusals": e.refusals, P + "escalation.from": clip(e.from_model),
                P + "escalation.to_provider": clip(e.to_provider)}
    _put(a, "escalation.to", e.to_model)
    return a


def _conflict(e: RouteConflict, content: bool) -> Attrs:
    a: Attrs = {P + "conflict.winner": clip(e.winner.target),
                P + "conflict.losers": ids(x.target for x in e.losers)}
    _put(a, "tool.call.id", e.winner.tool_call_id)
    return a


def _superseded(e: RerouteSuperseded, content: bool) -> Attrs:
    a: Attrs = {P + "skill.volunteered": clip(e.volunteered_id)}
    _put(a, "skill.won", e.won_id)
    return a


def _turn_routed(e: TurnRouted, content: bool) -> Attrs:
    a: Attrs = {P + "turn.by": e.by}
    _put(a, "cursor.to", e.to)
    if e.decisive is not None:
        a[P + "turn.decisive"] = e.decisive
    if e.offered:
        a[P + "turn.offered"] = ids(e.offered)
    return a


def _step(e: StepAdvanced | StepSkipped, content: bool) -> Attrs:
    a: Attrs = {P + "skill.id": clip(e.skill_id), P + "step.index": e.step.index,
                P + "step.total": e.total}
    if isinstance(e, StepSkipped):
        a[P + "step.policy"] = e.policy
    elif e.completed:
        a[P + "step.completed"] = True
    return a


def _unfinished(e: StepsUnfinished, content: bool) -> Attrs:
    return {P + "skill.id": clip(e.skill_id), P + "steps.remaining": len(e.remaining),
            P + "steps.action": e.action}


def _pressure(e: BudgetPressure, content: bool) -> Attrs:
    return {P + "slot": e.slot, P + "budget.overflow_by": e.overflow_by,
            P + "budget.action": clip(e.plan_action)}


def _graph(e: SkillGraphDeclared, content: bool) -> Attrs:
    return {P + "graph.nodes": len(e.nodes), P + "graph.edges": len(e.edges)}


def _failed(e: RunFailed, content: bool) -> Attrs:
    a: Attrs = {"error.type": clip(e.error_type), P + "stage": clip(e.stage)}
    if content:
        a[P + "error.message"] = clip(e.message)
    return a


_Fn: TypeAlias = Callable[[Any, bool], Attrs]
DECISION_EVENTS: dict[str, _Fn] = {
    "context.evaluated": _evaluated,
    "context.injected": _injected,
    "context.budget_pressure": _pressure,
    "route.decided": _route,
    "tool.effect": _effect,
    "skill.activated": _activated,
    "skill.deactivated": _activated,
    "skill.rejected": _rejected,
    "skill.escalated": _escalated,
    "skill.route_conflict": _conflict,
    "skill.reroute_superseded": _superseded,
    "skill.turn_routed": _turn_routed,
    "skill.step_advanced": _step,
    "skill.step_skipped": _step,
    "skill.steps_unfinished": _unfinished,
    "skill.graph_declared": _graph,
    "run.error": _failed,
}
"""Event type -> its span-event attributes. Each becomes a span event ``footprint.<type>``."""


def event_attributes(event: EventBase, content: bool) -> Attrs | None:
    """The span-event attributes of a decision event, or ``None`` when it is not one."""
    fn = DECISION_EVENTS.get(getattr(event, "type", ""))
    return None if fn is None else fn(event, content)
