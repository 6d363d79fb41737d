"""Tool effects over one batch (spec §1.4 leases, §2.7 proposals), as pure data.

A tool may return effects: ``propose-transition{target_skill_id, reason}``
asks to move the cursor, ``require-instruction{instruction_id,
delivery_lease}`` pushes an injection through a lease.
:func:`apply_tool_effects` judges a whole batch and returns one outcome per
effect (the ``tool.effect`` data), the winning proposal, the granted leases,
the ids to append to the activated list, and the tool-proposal conflict when
later proposals named other targets.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from footprint._errors import did_you_mean
from footprint.events import Conflict, ConflictItem
from footprint.graph._declare import SkillGraph
from footprint.injection import Injection, Lease, grant_lease, lease_tenant

__all__ = [
    "AcceptedProposal",
    "EffectOutcome",
    "EffectsResult",
    "ProposeTransition",
    "RequireInstruction",
    "ToolEffect",
    "apply_tool_effects",
]

Outcome: TypeAlias = Literal["accepted", "refused", "superseded"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ProposeTransition:
    """A tool's request to move the cursor to ``target_skill_id``."""

    target_skill_id: str
    reason: str
    tool_name: str
    tool_call_id: str | None = None
    kind: Literal["propose-transition"] = "propose-transition"


@dataclass(frozen=True, slots=True, kw_only=True)
class RequireInstruction:
    """A tool's request to push ``instruction_id`` for ``delivery_lease``."""

    instruction_id: str
    delivery_lease: str
    tool_name: str
    tool_call_id: str | None = None
    kind: Literal["require-instruction"] = "require-instruction"


ToolEffect: TypeAlias = ProposeTransition | RequireInstruction


@dataclass(frozen=True, slots=True, kw_only=True)
class EffectOutcome:
    """One effect as judged: the payload of a ``tool.effect`` event."""

    kind: Literal["propose-transition", "require-instruction"]
    outcome: Outcome
    tool_name: str
    iteration: int
    tool_call_id: str | None = None
    target_skill_id: str | None = None
    reason: str | None = None
    instruction_id: str | None = None
    delivery_lease: str | None = None
    refusal_reason: str | None = None
    superseded_by: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AcceptedProposal:
    """The batch's winning proposal; honoured at Evaluate of ``iteration + 1`` only."""

    target_skill_id: str
    tool_name: str
    reason: str
    iteration: int
    tool_call_id: str | None = None

    def target_at(self, iteration: int) -> str | None:
        """The ``pending_tool_transition`` for pass ``iteration`` (None unless it is the next)."""
        return self.target_skill_id if iteration == self.iteration + 1 else None


@dataclass(frozen=True, slots=True, kw_only=True)
class EffectsResult:
    """Everything a batch of effects decided."""

    outcomes: tuple[EffectOutcome, ...]
    proposal: AcceptedProposal | None
    conflict: Conflict | None
    leases: tuple[Lease, ...]
    activate: tuple[str, ...]


def _proposal_refusal(graph: SkillGraph | None, target: str, cursor: str | None,
                      hidden: frozenset[str]) -> str | None:
    if graph is None:
        return "no-graph: a propose-transition effect needs a skill graph to move in"
    if target not in graph.skill_ids:
        return f"unknown-skill: {target!r} is not a skill of this graph" + did_you_mean(
            target, [s for s in graph.skill_ids if s not in hidden]
        )
    if target not in graph.reachable_skills(cursor, hidden):
        return "unreachable: the target is not reachable from the current skill"
    return None


@dataclass(slots=True)
class _Batch:
    outcomes: list[EffectOutcome]
    winner: AcceptedProposal | None = None
    losers: list[ConflictItem] | None = None


def _judge_proposal(effect: ProposeTransition, batch: _Batch, graph: SkillGraph | None,
                    cursor: str | None, hidden: frozenset[str], iteration: int) -> None:
    base = EffectOutcome(kind=effect.kind, outcome="accepted", tool_name=effect.tool_name,
                         iteration=iteration, tool_call_id=effect.tool_call_id,
                         target_skill_id=effect.target_skill_id, reason=effect.reason)
    refusal = _proposal_refusal(graph, effect.target_skill_id, cursor, hidden)
    winner = batch.winner
    if refusal is not None:
        batch.outcomes.append(_with(base, outcome="refused", refusal_reason=refusal))
    elif winner is None:
        batch.winner = AcceptedProposal(
            target_skill_id=effect.target_skill_id, tool_name=effect.tool_name,
            reason=effect.reason, iteration=iteration, tool_call_id=effect.tool_call_id,
        )
        batch.outcomes.append(base)
    elif winner.target_skill_id == effect.target_skill_id:
        batch.outcomes.append(base)
    else:
        batch.outcomes.append(
            _with(base, outcome="superseded", superseded_by=winner.target_skill_id)
        )
        batch.losers = [*(batch.losers or []), ConflictItem(
            tool_name=effect.tool_name, target=effect.target_skill_id,
            tool_call_id=effect.tool_call_id,
        )]


def _with(base: EffectOutcome, *, outcome: Outcome, refusal_reason: str | None = None,
          superseded_by: str | None = None) -> EffectOutcome:
    return EffectOutcome(
        kind=base.kind, outcome=outcome, tool_name=base.tool_name, iteration=base.iteration,
        tool_call_id=base.tool_call_id, target_skill_id=base.target_skill_id,
        reason=base.reason, instruction_id=base.instruction_id,
        delivery_lease=base.delivery_lease, refusal_reason=refusal_reason,
        superseded_by=superseded_by,
    )


def _judge_lease(effect: RequireInstruction, injections: Sequence[Injection],
                 tenant: str | None, iteration: int) -> tuple[EffectOutcome, Lease | None]:
    granted = grant_lease(instruction_id=effect.instruction_id,
                          delivery_lease=effect.delivery_lease, injections=injections,
                          tenant=tenant, iteration=iteration)
    outcome = EffectOutcome(
        kind=effect.kind, outcome="accepted", tool_name=effect.tool_name, iteration=iteration,
        tool_call_id=effect.tool_call_id, instruction_id=effect.instruction_id,
        delivery_lease=effect.delivery_lease,
    )
    if isinstance(granted, Lease):
        return outcome, granted
    reason = f"{granted.reason}: {granted.note}"
    return _with(outcome, outcome="refused", refusal_reason=reason), None


def apply_tool_effects(
    graph: SkillGraph | None,
    effects: Sequence[ToolEffect],
    *,
    cursor: str | None,
    iteration: int,
    injections: Sequence[Injection] = (),
    activated_ids: Sequence[str] = (),
    hidden: Iterable[str] = (),
) -> EffectsResult:
    """Judge a batch's effects in call order (``cursor`` is the advanced cursor).

    The first accepted proposal wins; a later one naming another target is
    ``superseded`` and the batch reports a tool-proposal conflict.
    """
    gone = frozenset(hidden)
    batch = _Batch(outcomes=[])
    leases: list[Lease] = []
    tenant = lease_tenant(cursor, activated_ids)
    for effect in effects:
        if isinstance(effect, ProposeTransition):
            _judge_proposal(effect, batch, graph, cursor, gone, iteration)
            continue
        outcome, lease = _judge_lease(effect, injections, tenant, iteration)
        batch.outcomes.append(outcome)
        if lease is not None:
            leases.append(lease)
    winner = batch.winner
    conflict = None
    if winner is not None and batch.losers:
        conflict = Conflict(
            winner=ConflictItem(tool_name=winner.tool_name, target=winner.target_skill_id,
                                tool_call_id=winner.tool_call_id),
            losers=tuple(batch.losers),
        )
    activate = (winner.target_skill_id,) if winner is not None else ()
    return EffectsResult(outcomes=tuple(batch.outcomes), proposal=winner, conflict=conflict,
                         leases=tuple(leases), activate=activate)
