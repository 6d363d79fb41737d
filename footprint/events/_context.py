"""Context events: declared injections, each evaluation pass, and what landed where."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias

from footprint.events._envelope import EventBase
from footprint.events._evidence import CursorMove, SkippedInjection

if TYPE_CHECKING:
    from footprint.injection._types import ContextSource, Flavor, Role, Slot

__all__ = [
    "SUMMARY_LIMIT",
    "AdmittedVia",
    "BudgetPressure",
    "CatalogEntry",
    "ContextEvaluated",
    "ContextInjected",
    "InjectionDeclared",
    "KindCount",
    "RoutingEntry",
    "SlotComposed",
    "SourceShare",
    "summarize_content",
]

AdmittedVia: TypeAlias = Literal[
    "always", "rule", "tool-return", "read-skill", "cursor",
    "lease", "baseline", "delivered", "retrieval", "tool-proposal",
]

SUMMARY_LIMIT = 80


def summarize_content(text: str, limit: int = SUMMARY_LIMIT) -> str:
    """One line of at most ``limit`` characters: whitespace folded, ``…`` when cut."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: max(limit - 1, 0)] + "…"


@dataclass(frozen=True, slots=True, kw_only=True)
class InjectionDeclared(EventBase):
    """One declared injection, as the run was configured (once per run)."""

    type: Literal["injection.declared"] = "injection.declared"
    injection_id: str
    flavor: Flavor
    trigger_kind: str
    content_hash: str
    description: str | None = None
    title: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class KindCount:
    """How many active injections had one trigger kind."""

    kind: str
    count: int


@dataclass(frozen=True, slots=True, kw_only=True)
class CatalogEntry:
    """One skill as the catalog lists it (``'(no description)'`` when it has none)."""

    id: str
    description: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RoutingEntry:
    """Why one injection is active: the graph path or trigger that carried it."""

    injection_id: str
    flavor: Flavor
    via: str
    path: str | None = None
    label: str | None = None
    from_skill: str | None = None
    trigger_kind: str | None = None
    tools: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextEvaluated(EventBase):
    """One evaluation pass: what is active, what was refused, where the cursor went."""

    type: Literal["context.evaluated"] = "context.evaluated"
    active_count: int
    skipped_count: int
    evaluated_total: int
    active_ids: tuple[str, ...] = ()
    skipped: tuple[SkippedInjection, ...] = ()
    trigger_kind_counts: tuple[KindCount, ...] = ()
    skill_catalog: tuple[CatalogEntry, ...] = ()
    cursor_move: CursorMove | None = None
    superseded_ids: tuple[str, ...] = ()
    routing: tuple[RoutingEntry, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextInjected(EventBase):
    """One piece of context that landed in a slot for the next model call.

    ``admitted_by`` is the ``seq`` of the event in this run that admitted the
    piece (the evaluation, tool result, read_skill call or lease grant), and
    ``admitted_via`` names the rule. ``raw_content`` may be dropped by
    redaction while ``content_hash`` still joins to the blob table.
    """

    type: Literal["context.injected"] = "context.injected"
    slot: Slot
    source: ContextSource
    content_hash: str
    content_summary: str
    reason: str
    admitted_via: AdmittedVia
    injection_id: str | None = None
    position: int = 0
    as_role: Role | None = None
    raw_content: str | None = None
    admitted_by: int | None = None
    retrieval_score: float | None = None
    rank_position: int | None = None
    threshold: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceShare:
    """How much of a slot one source filled."""

    source: str
    chars: int
    count: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SlotComposed(EventBase):
    """A slot's final composition for one model call."""

    type: Literal["context.slot_composed"] = "context.slot_composed"
    slot: Slot
    cap: int
    used: int
    headroom_chars: int
    source_breakdown: tuple[SourceShare, ...] = ()
    dropped_count: int = 0
    dropped_summaries: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class BudgetPressure(EventBase):
    """A slot's content would overflow its cap, and what the plan does about it."""

    type: Literal["context.budget_pressure"] = "context.budget_pressure"
    slot: Slot
    overflow_by: int
    plan_action: str
    unit: Literal["chars", "tokens"]
    cap: int
    projected: int
