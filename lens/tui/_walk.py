"""The skills view's text: the cursor's walk, refusals, escalations and conflicts (pure).

Each line is ``(kind, text)``; the widget maps a kind to a colour. Kinds:
``head``, ``move``, ``pass``, ``fail``, ``refusal``, ``escalation``,
``conflict``, ``note``.
"""

from __future__ import annotations

from collections.abc import Sequence

from footprint.events import (
    ContextEvaluated,
    CursorMove,
    Event,
    GuardRecord,
    RerouteSuperseded,
    RouteConflict,
    SkillEscalated,
    SkillGraphDeclared,
    SkillRejected,
    StepAdvanced,
    StepSkipped,
    StepsUnfinished,
    TurnRouted,
)
from lens.tui._summary import condition_text, move_text, value_text

__all__ = ["WALK_HEAD", "WALK_SQL", "Line", "entry_lines", "graph_lines", "skill_lines",
           "totals_line"]

Line = tuple[str, str]

WALK_SQL = (
    "type IN ('skill.rejected', 'skill.escalated', 'skill.route_conflict', "
    "'skill.reroute_superseded', 'skill.turn_routed', 'skill.step_advanced', "
    "'skill.step_skipped', 'skill.steps_unfinished') "
    "OR (type = 'context.evaluated' AND moved_by IS NOT NULL)"
)
"""The events of the walk, as an SQL condition over the store's hot columns."""


def graph_lines(e: SkillGraphDeclared) -> list[Line]:
    """The declared graph: a head, then each skill, then each edge with its guard."""
    return _graph(e)


def _graph(e: SkillGraphDeclared) -> list[Line]:
    lines: list[Line] = [("head", f"skill graph (seq {e.seq}): {len(e.nodes)} skills")]
    for node in e.nodes:
        lines.append(("note", f"  {node.id:<16} {node.description or ''}"))
    for edge in e.edges:
        guard = ""
        if edge.guard:
            guard = " if " + " AND ".join(
                f"{c.key} {c.op} {value_text(c.value, 20)}" for c in edge.guard)
        lines.append(("note", f"  {edge.from_skill or 'entry'} → {edge.to} ({edge.kind}){guard}"))
    return lines


def _guard(g: GuardRecord, indent: str = "      ") -> list[Line]:
    verdict = "passed" if g.verdict else "failed"
    kind = "pass" if g.verdict else "fail"
    lines: list[Line] = [(kind, f"{indent}guard {g.from_skill} → {g.to} on {g.tool_name}: "
                                f"{verdict}")]
    lines += [("pass" if c.passed else "fail", f"{indent}  {condition_text(c)}")
              for c in g.conditions]
    return lines


def _move(e: ContextEvaluated, m: CursorMove) -> list[Line]:
    lines: list[Line] = [("move", f"  #{e.iteration:<3} seq {e.seq:<5} {move_text(m)}")]
    if m.keyword:
        lines.append(("note", f"      keyword {m.keyword!r}"))
    if m.guard is not None:
        lines += _guard(m.guard)
    for closed in m.guards_closed:
        lines += _guard(closed)
    if m.conflict is not None:
        losers = ", ".join(f"{x.tool_name}→{x.target}" for x in m.conflict.losers)
        lines.append(("conflict", f"      conflict: {m.conflict.winner.tool_name}→"
                                  f"{m.conflict.winner.target} won over {losers}"))
    if m.reachable is not None:
        lines.append(("note", f"      reachable: {', '.join(m.reachable) or 'none'}"))
    return lines


def _refusal(e: SkillRejected) -> Line:
    allowed = ", ".join(e.allowed) or "none"
    return ("refusal", f"  #{e.iteration:<3} seq {e.seq:<5} ⚠ read_skill({e.requested_id!r}) "
                       f"refused from {e.current_skill_id or '∅'}: {e.reason}; "
                       f"allowed: {allowed}" + (f" (posture {e.posture})" if e.posture else ""))


def _other(e: Event) -> Line | None:
    at = f"  #{e.iteration:<3} seq {e.seq:<5}"
    if isinstance(e, SkillEscalated):
        return ("escalation", f"{at} ⇧ escalated after {e.refusals} refusals "
                              f"(limit {e.after_refusals}): {e.from_provider}/{e.from_model} → "
                              f"{e.to_provider}/{e.to_model or '(same model)'}")
    if isinstance(e, RouteConflict):
        losers = ", ".join(f"{x.tool_name}→{x.target}" for x in e.losers) or "none"
        return ("conflict", f"{at} conflict from {e.from_skill_id or '∅'}: "
                            f"{e.winner.tool_name}→{e.winner.target} won; lost: {losers}")
    if isinstance(e, RerouteSuperseded):
        return ("conflict", f"{at} superseded: {e.volunteered_id} lost to {e.won_id or '∅'}")
    if isinstance(e, TurnRouted):
        return ("move", f"{at} turn routed {e.from_skill or '∅'} → {e.to or '∅'} by {e.by}"
                        + (f", witness {e.witness!r}" if e.witness else ""))
    if isinstance(e, StepAdvanced):
        return ("pass", f"{at} step {e.step.index}/{e.total} of {e.skill_id}: {e.step.tool}"
                        + (" (all done)" if e.completed else ""))
    if isinstance(e, StepSkipped):
        return ("note", f"{at} step {e.step.index}/{e.total} of {e.skill_id} skipped "
                        f"({e.policy}): {e.reason}")
    if isinstance(e, StepsUnfinished):
        return ("fail", f"{at} {len(e.remaining)} of {e.total} steps of {e.skill_id} "
                        f"unfinished: {e.action}")
    return None


def entry_lines(e: Event) -> list[Line]:
    """One event of the walk: its line, then its evidence (guards, conditions, conflicts)."""
    if isinstance(e, ContextEvaluated):
        return _move(e, e.cursor_move) if e.cursor_move is not None else []
    if isinstance(e, SkillRejected):
        return [_refusal(e)]
    line = _other(e)
    return [line] if line is not None else []


WALK_HEAD: Line = ("head", "cursor walk (per iteration: from → to, by, evidence)")


def totals_line(refusals: int, escalations: int) -> Line:
    return ("head", f"{refusals} refusal(s), {escalations} escalation(s)")


def skill_lines(events: Sequence[Event]) -> list[Line]:
    """The graph, then the walk in seq order, then counts of refusals and escalations."""
    lines: list[Line] = []
    for e in events:
        if isinstance(e, SkillGraphDeclared):
            lines += _graph(e)
    lines.append(WALK_HEAD)
    for e in events:
        lines += entry_lines(e)
    return [*lines, totals_line(sum(isinstance(e, SkillRejected) for e in events),
                                sum(isinstance(e, SkillEscalated) for e in events))]
