"""Skill events: the declared graph, activations, refusals, routing and steps."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from footprint.events._envelope import EventBase
from footprint.events._evidence import ConflictItem, JSONValue

__all__ = [
    "ActivationReason",
    "DeactivationReason",
    "DeciderCall",
    "DeclaredCondition",
    "DroppedResume",
    "GraphEdge",
    "GraphNode",
    "RejectReason",
    "RerouteSuperseded",
    "RouteConflict",
    "RoutePolicy",
    "RunnerUp",
    "ScoreEntry",
    "SkillActivated",
    "SkillDeactivated",
    "SkillEscalated",
    "SkillGraphDeclared",
    "SkillRejected",
    "StepAdvanced",
    "StepInfo",
    "StepSkipped",
    "StepsUnfinished",
    "TurnRouted",
    "TurnRoutedBy",
]

ActivationReason: TypeAlias = Literal[
    "entry", "route", "model-pick", "tool-proposal", "lease",
    "rule", "always", "intent", "continuity", "decider",
]
DeactivationReason: TypeAlias = Literal[
    "entry", "route", "model-pick", "tool-proposal", "lease",
    "rule", "always", "intent", "continuity", "decider",
    "cursor-moved", "turn-end",
]
RejectReason: TypeAlias = Literal["unreachable", "posture", "self-call"]
TurnRoutedBy: TypeAlias = Literal["entry", "intent", "continuity", "menu", "decider", "none"]


# ── the declared graph ─────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True, kw_only=True)
class GraphNode:
    """One skill node as declared (``title`` is never sent to the model)."""

    id: str
    kind: str
    description: str | None = None
    title: str | None = None
    label: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DeclaredCondition:
    """One guard condition as written: ``key op value``."""

    key: str
    op: str
    value: JSONValue


@dataclass(frozen=True, slots=True, kw_only=True)
class GraphEdge:
    """One edge: an entry (``from_skill`` is ``None``) or a route between skills."""

    to: str
    kind: str
    from_skill: str | None = None
    label: str | None = None
    guard: tuple[DeclaredCondition, ...] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillGraphDeclared(EventBase):
    """The skill graph this run uses (once per run, absent without a graph)."""

    type: Literal["skill.graph_declared"] = "skill.graph_declared"
    nodes: tuple[GraphNode, ...] = ()
    edges: tuple[GraphEdge, ...] = ()


# ── activation, refusal, escalation ────────────────────────────────────────


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillActivated(EventBase):
    """A skill joined the active set; ``evidence_seq``/``evidence_step`` moved it."""

    type: Literal["skill.activated"] = "skill.activated"
    skill_id: str
    reason: ActivationReason
    evidence_seq: int | None = None
    evidence_step: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillDeactivated(EventBase):
    """A skill left the active set, and what made it leave."""

    type: Literal["skill.deactivated"] = "skill.deactivated"
    skill_id: str
    reason: DeactivationReason
    evidence_seq: int | None = None
    evidence_step: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillRejected(EventBase):
    """A ``read_skill`` pick the gate refused, with what was allowed instead."""

    type: Literal["skill.rejected"] = "skill.rejected"
    requested_id: str
    reason: RejectReason
    allowed: tuple[str, ...] = ()
    current_skill_id: str | None = None
    posture: str | None = None
    tool_call_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillEscalated(EventBase):
    """Refusals reached the limit, so the run moved to a stronger brain."""

    type: Literal["skill.escalated"] = "skill.escalated"
    after_refusals: int
    refusals: int
    from_provider: str
    from_model: str
    to_provider: str
    to_model: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RouteConflict(EventBase):
    """One batch pointed the cursor at different skills; ``winner`` took it."""

    type: Literal["skill.route_conflict"] = "skill.route_conflict"
    winner: ConflictItem
    losers: tuple[ConflictItem, ...] = ()
    from_skill_id: str | None = None
    source: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RerouteSuperseded(EventBase):
    """A volunteered pick (or accepted proposal) lost to another cursor move."""

    type: Literal["skill.reroute_superseded"] = "skill.reroute_superseded"
    volunteered_id: str
    won_id: str | None = None
    from_skill_id: str | None = None
    source: str | None = None


# ── turn routing ───────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True, kw_only=True)
class ScoreEntry:
    """One candidate's score; ``score`` is ``None`` when the scorer gave a non-finite one."""

    id: str
    score: float | None
    relevance: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RunnerUp:
    """The second-best candidate and its gap to the top (``tanh`` of half the difference)."""

    id: str
    gap: float


@dataclass(frozen=True, slots=True, kw_only=True)
class RoutePolicy:
    """The tier-2 policy in force."""

    near_tie_margin: float = 0.15
    menu_size: int = 3
    floor: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DroppedResume:
    """An inherited cursor the cascade could not resume."""

    id: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DeciderCall:
    """The tier-3 decider's constrained pick (``picked`` absent when it left the menu)."""

    provider: str
    model: str
    picked: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnRouted(EventBase):
    """The turn-start cascade's verdict, with every score it weighed."""

    type: Literal["skill.turn_routed"] = "skill.turn_routed"
    by: TurnRoutedBy
    from_skill: str | None = None
    to: str | None = None
    scorer: str | None = None
    scores: tuple[ScoreEntry, ...] = ()
    runner_up: RunnerUp | None = None
    decisive: bool | None = None
    witness: str | None = None
    offered: tuple[str, ...] | None = None
    stay_offered: bool = False
    policy: RoutePolicy = field(default_factory=RoutePolicy)
    dropped_resume: DroppedResume | None = None
    decider: DeciderCall | None = None


# ── stepped skills ─────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True, kw_only=True)
class StepInfo:
    """One step of a stepped skill (``index`` is 1-based)."""

    index: int
    tool: str
    note: str


@dataclass(frozen=True, slots=True, kw_only=True)
class StepAdvanced(EventBase):
    """A clean call to the current step's tool moved the procedure on."""

    type: Literal["skill.step_advanced"] = "skill.step_advanced"
    skill_id: str
    step: StepInfo
    total: int
    tool_call_id: str | None = None
    completed: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class StepSkipped(EventBase):
    """``skip_step`` was called; ``policy`` says whether the pointer moved."""

    type: Literal["skill.step_skipped"] = "skill.step_skipped"
    skill_id: str
    step: StepInfo
    total: int
    reason: str
    policy: Literal["advance", "hold"]
    tool_call_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StepsUnfinished(EventBase):
    """The model answered with steps left: nudged, accepted, or cut short by a limit."""

    type: Literal["skill.steps_unfinished"] = "skill.steps_unfinished"
    skill_id: str
    remaining: tuple[StepInfo, ...]
    total: int
    action: Literal["nudged", "accepted", "cut-short"]
