"""The neutral span model both wire decoders produce and the mapper reads.

OTLP/JSON and OTLP protobuf decode into the same frozen records: ids as
lowercase hex, times as UTC nanoseconds, attribute values as plain Python
(str, int, float, bool, bytes, list, dict).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

__all__ = ["Attributes", "Batch", "ForeignLog", "ForeignSpan", "SpanEvent", "StatusCode"]

Attributes: TypeAlias = Mapping[str, Any]
StatusCode: TypeAlias = Literal["unset", "ok", "error"]


def _empty() -> Attributes:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True, kw_only=True)
class SpanEvent:
    """One span event (a name, a time and its attributes)."""

    name: str
    time_ns: int = 0
    attributes: Attributes = field(default_factory=_empty)


@dataclass(frozen=True, slots=True, kw_only=True)
class ForeignSpan:
    """One span as another framework's SDK exported it.

    ``dropped_attributes`` is the SDK's ``dropped_attributes_count``: attributes it
    left out (an OpenInference message list past the 128-attribute limit shows only here).
    """

    trace_id: str
    span_id: str
    name: str
    parent_id: str | None = None
    start_ns: int = 0
    end_ns: int = 0
    attributes: Attributes = field(default_factory=_empty)
    events: tuple[SpanEvent, ...] = ()
    status: StatusCode = "unset"
    status_message: str = ""
    dropped_attributes: int = 0
    resource: Attributes = field(default_factory=_empty)
    scope: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ForeignLog:
    """One log record: how some emitters send message content (``/v1/logs``)."""

    event_name: str
    trace_id: str | None = None
    span_id: str | None = None
    time_ns: int = 0
    body: Any = None
    attributes: Attributes = field(default_factory=_empty)


@dataclass(frozen=True, slots=True, kw_only=True)
class Batch:
    """What one decoded request held, and what could not be read of it.

    ``problems`` counts per reason (``"span without ids"``…): a bad item is skipped,
    the rest of the batch is kept.
    """

    spans: tuple[ForeignSpan, ...] = ()
    logs: tuple[ForeignLog, ...] = ()
    problems: Mapping[str, int] = field(default_factory=_empty)
