"""footprint — an explainable agent engine whose every decision is evidence."""

from footprint._errors import ConfigError, FootprintError, RunError
from footprint.events import EventBase, EventSink, ListSink, NullSink

__all__ = [
    "ConfigError",
    "EventBase",
    "EventSink",
    "FootprintError",
    "ListSink",
    "NullSink",
    "RunError",
]
