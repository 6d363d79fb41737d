"""The event catalog: one frozen, typed record per kind of decision."""

from footprint.events._envelope import SCHEMA_VERSION, EventBase, EventSink, ListSink, NullSink
from footprint.events._evidence import (
    ConditionEvidence,
    Conflict,
    ConflictItem,
    CursorMove,
    GuardEvidence,
    GuardRecord,
    JSONScalar,
    JSONValue,
    MoveBy,
    SkippedInjection,
    SkipReason,
)

__all__ = [
    "SCHEMA_VERSION",
    "ConditionEvidence",
    "Conflict",
    "ConflictItem",
    "CursorMove",
    "EventBase",
    "EventSink",
    "GuardEvidence",
    "GuardRecord",
    "JSONScalar",
    "JSONValue",
    "ListSink",
    "MoveBy",
    "NullSink",
    "SkipReason",
    "SkippedInjection",
]
