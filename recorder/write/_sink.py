"""The sink protocol, the processor type, and an adapter for ``emit``-style sinks."""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import Final, Protocol, TypeAlias, runtime_checkable

from footprint._errors import ConfigError
from footprint.events import EventBase, EventSink

__all__ = [
    "DROP",
    "Drop",
    "DropCounting",
    "EmitSink",
    "ExportResult",
    "Processor",
    "Sink",
    "StatsAware",
    "as_sink",
]


class ExportResult(enum.Enum):
    """What a sink says about one exported batch."""

    SUCCESS = "success"
    FAILURE = "failure"


class Drop(enum.Enum):
    """The type of :data:`DROP` (a single-member enum, so it narrows cleanly)."""

    DROP = "drop"


DROP: Final = Drop.DROP
"""What a processor returns to drop an event."""

Processor: TypeAlias = Callable[[EventBase], "EventBase | Drop"]
"""``(event) -> event | DROP``: enrich, redact or sample one event."""


@runtime_checkable
class Sink(Protocol):
    """Where the recorder's background writer sends batches (DESIGN.md §4)."""

    def export(self, batch: Sequence[EventBase]) -> ExportResult: ...

    def force_flush(self, timeout_s: float = 10.0) -> bool: ...

    def shutdown(self) -> None: ...


@runtime_checkable
class StatsAware(Protocol):
    """A sink that records the recorder's per-run drop counts next to the events.

    ``sink_drops`` counts what other sinks lost for each run (for example
    spans an OpenTelemetry exporter could not deliver), so the record says
    how complete each mirror is.
    """

    def note_drops(self, overflow: dict[str, int], processed: dict[str, int],
                   sink_drops: dict[str, int] | None = None) -> None: ...


@runtime_checkable
class DropCounting(Protocol):
    """A sink that can say how many of each run's records it failed to deliver."""

    def dropped_by_run(self) -> dict[str, int]: ...


class EmitSink:
    """Adapts an ``EventSink`` (``emit`` one at a time, e.g. ``ListSink``) to :class:`Sink`."""

    __slots__ = ("target",)

    def __init__(self, target: EventSink) -> None:
        self.target = target

    def export(self, batch: Sequence[EventBase]) -> ExportResult:
        emit = self.target.emit
        for event in batch:
            emit(event)
        return ExportResult.SUCCESS

    def force_flush(self, timeout_s: float = 10.0) -> bool:
        return True

    def shutdown(self) -> None:
        return None


def as_sink(candidate: object) -> Sink:
    """A :class:`Sink` as is, an ``EventSink`` wrapped in :class:`EmitSink`."""
    if isinstance(candidate, Sink):
        return candidate
    if isinstance(candidate, EventSink):
        return EmitSink(candidate)
    raise ConfigError(
        f"sink {candidate!r} has neither export/force_flush/shutdown nor emit; "
        "pass a ParquetSink, a ListSink, or an object with those methods"
    )
