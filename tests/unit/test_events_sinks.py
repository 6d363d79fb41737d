"""The engine-side recording seam: ListSink keeps events in order, NullSink drops them."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from strategies import events

from footprint.events import (
    EventBase,
    EventSink,
    IterationStart,
    ListSink,
    NullSink,
    RouteDecided,
    RunStart,
)

ENVELOPE: dict[str, Any] = {"run_id": "r1", "ts": 0}


def _sample() -> list[EventBase]:
    return [
        RunStart(**ENVELOPE, seq=0, user_message="hi"),
        IterationStart(**ENVELOPE, seq=1, iteration=1),
        RouteDecided(**ENVELOPE, seq=2, iteration=1, chosen="tool-calls"),
        IterationStart(**ENVELOPE, seq=3, iteration=2),
        RouteDecided(**ENVELOPE, seq=4, iteration=2, chosen="final", rationale="no tool calls"),
    ]


def test_given_both_sinks_when_checked_then_they_satisfy_the_sink_protocol() -> None:
    assert isinstance(ListSink(), EventSink)
    assert isinstance(NullSink(), EventSink)


def test_given_a_list_sink_when_events_are_emitted_then_it_keeps_them_in_order() -> None:
    sink, sample = ListSink(), _sample()
    for event in sample:
        sink.emit(event)
    assert sink.events == sample
    assert sink.types() == [
        "run.start", "iteration.start", "route.decided", "iteration.start", "route.decided"
    ]


def test_given_a_list_sink_when_filtered_by_type_then_only_that_type_returns_in_order() -> None:
    sink = ListSink()
    for event in _sample():
        sink.emit(event)
    decided = sink.of_type("route.decided")
    assert [e.seq for e in decided] == [2, 4]
    assert sink.of_type("tool.end") == []


def test_given_a_null_sink_when_events_are_emitted_then_nothing_is_kept_or_returned() -> None:
    sink = NullSink()
    results = [sink.emit(event) for event in _sample()]  # type: ignore[func-returns-value]
    assert results == [None] * 5
    assert not hasattr(sink, "__dict__")


def test_given_two_list_sinks_when_one_receives_events_then_the_other_stays_empty() -> None:
    first, second = ListSink(), ListSink()
    first.emit(_sample()[0])
    assert len(first.events) == 1 and second.events == []


@given(batch=events().map(lambda e: [e, e]))
def test_given_any_events_when_emitted_to_a_list_sink_then_each_is_kept_by_identity(
    batch: list[EventBase],
) -> None:
    sink = ListSink()
    for event in batch:
        sink.emit(event)
    assert all(kept is sent for kept, sent in zip(sink.events, batch, strict=True))
    assert sink.types() == [getattr(e, "type") for e in batch]  # noqa: B009
