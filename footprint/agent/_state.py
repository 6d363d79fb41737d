"""The mutable state of one run (one turn), owned by the host loop alone.

The pure decision layer never sees this object: each iteration the host
reads it into a frozen ``InjectionContext`` and writes back what the
decisions said.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from footprint.agent._workers import ToolWorkers
from footprint.graph import AcceptedProposal
from footprint.graph._brains import EscalationState
from footprint.injection import (
    EntryScore,
    HistoryMessage,
    InjectedBy,
    Injection,
    Lease,
    StepPointer,
    ToolResult,
    TurnRoute,
)
from footprint.injection._types import ContextSource
from footprint.providers import Message

__all__ = ["Evidence", "RunState", "history_view"]

PERSON = "person"
INJECTION_ORIGIN = "injection#"
ENGINE_ORIGIN = "engine#"


@dataclass(frozen=True, slots=True)
class Evidence:
    """Which event admitted something: its seq, step id, and the rule's name."""

    seq: int
    step_id: str
    via: str


@dataclass(slots=True, kw_only=True)
class RunState:
    """Everything one run carries from iteration to iteration."""

    user_message: str
    history: list[Message]
    cursor: str | None = None
    seed: int | None = None
    activated: list[str] = field(default_factory=list)
    pending_pick: str | None = None
    proposal: AcceptedProposal | None = None
    leases: tuple[Lease, ...] = ()
    pointer: StepPointer | None = None
    escalation: EscalationState = field(default_factory=EscalationState)
    last_batch: tuple[ToolResult, ...] | None = None
    turn_route: TurnRoute | None = None
    entry_scores: tuple[EntryScore, ...] | None = None
    entry_scorer: str | None = None
    # where plain tools run (the agent's own, kept across runs; a lone run's when not given)
    workers: ToolWorkers = field(default_factory=lambda: ToolWorkers(keep=0))
    # provenance bookkeeping
    tool_end_seq: dict[str, Evidence] = field(default_factory=dict)
    activation_evidence: dict[str, Evidence] = field(default_factory=dict)
    lease_evidence: dict[str, Evidence] = field(default_factory=dict)
    active_skills: dict[str, Evidence] = field(default_factory=dict)
    delivered: set[tuple[str, str, str]] = field(default_factory=set)
    delivered_evidence: dict[str, Evidence] = field(default_factory=dict)
    digests: dict[str, tuple[str, str]] = field(default_factory=dict)
    nudged: bool = False
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


def _injected_by(origin: str | None, by_id: Mapping[str, Injection]) -> InjectedBy | None:
    if origin is None or not origin.startswith(INJECTION_ORIGIN):
        return None
    inj_id = origin[len(INJECTION_ORIGIN):]
    inj = by_id.get(inj_id)
    flavor: ContextSource = inj.flavor if inj is not None else "custom"
    return InjectedBy(injection_id=inj_id, flavor=flavor)


def history_view(
    history: list[Message], by_id: Mapping[str, Injection]
) -> tuple[HistoryMessage, ...]:
    """The conversation as triggers see it, with who-wrote-what preserved."""
    out: list[HistoryMessage] = []
    for m in history:
        if m.role == "system":
            continue
        origin = m.origin or ""
        out.append(HistoryMessage(
            role=m.role, content=m.content, tool_name=m.tool_name,
            injected_by=_injected_by(m.origin, by_id),
            library_written=origin.startswith(ENGINE_ORIGIN),
        ))
    return tuple(out)
