"""The envelope every event carries, and the sink seam the engine emits into."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["SCHEMA_VERSION", "EventBase", "EventSink", "ListSink", "NullSink", "keeps_events"]

SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class EventBase:
    """Envelope fields shared by every event.

    ``run_id`` is time-sortable (UUIDv7), ``seq`` counts 0, 1, 2… within the
    run with no gaps, ``ts`` is UTC nanoseconds, ``step_id`` names the
    step that produced the event (``llm#3``, ``tool#call_ab12``,
    ``engine#3``). ``trace_id``/``span_id`` are filled when OpenTelemetry is on.
    Concrete events add a ``type`` Literal tag and typed payload fields.
    """

    run_id: str
    seq: int
    ts: int
    turn: int = 0
    iteration: int = 0
    step_id: str = ""
    parent_step: str | None = None
    trace_id: str | None = None
    span_id: str | None = None
    schema_version: int = SCHEMA_VERSION


@runtime_checkable
class EventSink(Protocol):
    """Where the host sends events. ``emit`` must never raise into or block a run.

    A sink that drops every event may say so with a class attribute
    ``keeps_events = False`` (as :class:`NullSink` does): the engine then sends it
    nothing and skips building the events, with the same seq numbers and clock
    readings as ever. A sink without the attribute keeps events.
    """

    def emit(self, event: EventBase) -> None: ...


def keeps_events(sink: object) -> bool:
    """Whether ``sink`` wants events (``False`` only when it says ``keeps_events = False``)."""
    return getattr(sink, "keeps_events", True) is not False


class NullSink:
    """Discards every event (the default when nothing records).

    ``keeps_events = False``: a run sends it nothing and builds no event. A subclass
    that wants the events after all sets ``keeps_events = True``.
    """

    __slots__ = ()

    keeps_events = False

    def emit(self, event: EventBase) -> None:
        return None


class ListSink:
    """Keeps every event in memory, in order. For tests and small tools."""

    __slots__ = ("events",)

    def __init__(self) -> None:
        self.events: list[EventBase] = []

    def emit(self, event: EventBase) -> None:
        self.events.append(event)

    def of_type(self, type_tag: str) -> list[EventBase]:
        """The events whose ``type`` tag equals ``type_tag``, in order."""
        return [e for e in self.events if getattr(e, "type", None) == type_tag]

    def types(self) -> list[str]:
        """The ``type`` tags of every event, in order."""
        return [str(getattr(e, "type", "")) for e in self.events]
