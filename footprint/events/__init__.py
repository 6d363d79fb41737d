"""The event catalog: one frozen, typed record per kind of decision."""

from footprint.events._envelope import SCHEMA_VERSION, EventBase, EventSink, ListSink, NullSink

__all__ = ["SCHEMA_VERSION", "EventBase", "EventSink", "ListSink", "NullSink"]
