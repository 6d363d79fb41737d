"""Evidence shapes shared by the decision layer and the events that record it.

The pure engine returns these as its answers (a cursor move with its guard
evidence, a skipped injection with its reason), and the host puts the very
same objects into event payloads: one noun, one type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

__all__ = [
    "ConditionEvidence",
    "Conflict",
    "ConflictItem",
    "CursorMove",
    "GuardEvidence",
    "GuardRecord",
    "JSONScalar",
    "JSONValue",
    "MoveBy",
    "SkipReason",
    "SkippedInjection",
]

JSONScalar: TypeAlias = str | int | float | bool | None
JSONValue: TypeAlias = JSONScalar | list["JSONValue"] | dict[str, "JSONValue"]

SkipReason: TypeAlias = Literal[
    "predicate-threw", "unknown-trigger-kind", "unknown-fact", "parked", "hidden"
]
MoveBy: TypeAlias = Literal[
    "entry", "route", "model-pick", "tool-proposal", "intent",
    "continuity", "decider", "stay", "none",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class SkippedInjection:
    """An injection the evaluator refused this pass, and why."""

    id: str
    reason: SkipReason
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ConditionEvidence:
    """One guard condition as judged: ``key op value`` against what was seen.

    ``actual_summary`` is at most 80 characters (``'undefined'`` or JSON);
    ``note`` explains a failure that is not a plain comparison
    (``type-mismatch``, ``not-json``, ``missing``).
    """

    key: str
    op: str
    value: JSONValue
    actual_summary: str
    passed: bool
    note: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class GuardEvidence:
    """Every condition of one guard (no short-circuit) and the AND of them."""

    verdict: bool
    conditions: tuple[ConditionEvidence, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class GuardRecord:
    """A guard judged on one route edge for one tool result."""

    from_skill: str
    to: str
    tool_name: str
    verdict: bool
    conditions: tuple[ConditionEvidence, ...]
    tool_call_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ConflictItem:
    """One tool result that matched an edge: which call, which tool, which target."""

    tool_name: str
    target: str
    tool_call_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Conflict:
    """A batch whose results pointed the cursor at different skills."""

    winner: ConflictItem
    losers: tuple[ConflictItem, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class CursorMove:
    """Where the cursor went, by which rule, with the evidence that moved it.

    ``reachable`` is filled by the host (hops from the landed cursor plus
    the open skills); ``offered``/``declined_offer`` when a pick closes a menu.
    """

    by: MoveBy
    from_skill: str | None = None
    to: str | None = None
    witness: str | None = None
    keyword: str | None = None
    guard: GuardRecord | None = None
    guards_closed: tuple[GuardRecord, ...] = ()
    conflict: Conflict | None = None
    reachable: tuple[str, ...] | None = None
    offered: tuple[str, ...] | None = None
    declined_offer: bool = False
