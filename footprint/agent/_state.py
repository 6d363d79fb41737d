"""The mutable state of one run (one turn), owned by the host loop alone.

The pure decision layer never sees this object: each iteration the host
reads it into a frozen ``InjectionContext`` and writes back what the
decisions said.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping
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

__all__ = ["Evidence", "HistoryViews", "RunState", "history_view"]

PERSON = "person"
INJECTION_ORIGIN = "injection#"
ENGINE_ORIGIN = "engine#"


@dataclass(frozen=True, slots=True)
class Evidence:
    """Which event admitted something: its seq, step id, and the rule's name."""

    seq: int
    step_id: str
    via: str


class HistoryViews:
    """The views of the messages one run has already seen (a run only appends to its
    history): the next ``history_view`` builds views for the new messages alone."""

    __slots__ = ("seen", "views")

    def __init__(self) -> None:
        self.seen: list[Message] = []
        self.views: list[HistoryMessage] = []


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
    history_views: HistoryViews = field(default_factory=HistoryViews)
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


def _add_views(out: list[HistoryMessage], messages: Iterable[Message],
               by_id: Mapping[str, Injection]) -> None:
    for m in messages:
        if m.role == "system":
            continue
        origin = m.origin or ""
        out.append(HistoryMessage(
            role=m.role, content=m.content, tool_name=m.tool_name,
            injected_by=_injected_by(m.origin, by_id),
            library_written=origin.startswith(ENGINE_ORIGIN),
        ))


def history_view(
    history: list[Message], by_id: Mapping[str, Injection], memo: HistoryViews | None = None
) -> tuple[HistoryMessage, ...]:
    """The conversation as triggers see it, with who-wrote-what preserved.

    With ``memo`` (kept with the same ``by_id``), messages seen before (the same
    objects at the same places) reuse their views; any other history starts afresh."""
    if memo is None:
        memo = HistoryViews()
    seen = len(memo.seen)
    if seen > len(history) or not all(map(operator.is_, memo.seen, history)):
        memo.seen, memo.views, seen = [], [], 0
    _add_views(memo.views, history[seen:], by_id)
    memo.seen.extend(history[seen:])
    return tuple(memo.views)
