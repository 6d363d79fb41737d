"""``Recorder.emit_all``: the events go in as by one ``emit`` each."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from footprint.events import ListSink, RunEnd, RunStart
from recorder import Recorder


def _events(n: int) -> list[RunStart | RunEnd]:
    starts: list[RunStart | RunEnd] = [RunStart(run_id=f"r{i % 3}", seq=i, ts=i,
                                                user_message=str(i)) for i in range(n)]
    return [*starts, RunEnd(run_id="r0", seq=n, ts=n, final_content="done")]


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 40), st.integers(1, 8), st.integers(0, 2))
def test_given_any_events_when_emitted_all_at_once_then_the_sink_gets_them_as_by_emit(
        n: int, batch: int, before: int) -> None:
    events = _events(n)
    got = []
    for bulk in (False, True):
        sink = ListSink()
        recorder = Recorder(sinks=[sink], batch_size=batch)
        for event in events[:before]:
            recorder.emit(event)
        if bulk:
            recorder.emit_all(events[before:])
        else:
            for event in events[before:]:
                recorder.emit(event)
        recorder.close()
        got.append((list(sink.events), recorder.stats().overflow))
    assert got[0] == got[1] == (events, 0)


def test_given_a_closed_recorder_when_emitted_all_then_each_is_counted_as_by_emit() -> None:
    recorder = Recorder(sinks=[ListSink()])
    recorder.close()
    recorder.emit_all(_events(3))
    assert recorder.stats().overflow == 4
