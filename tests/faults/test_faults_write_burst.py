"""A million events in one quick burst: the run's end is stored, every event is either stored
or counted as dropped on its run, and ``verify`` calls such a run incomplete evidence."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from footprint.events import Event, RunEnd, RunStart, ToolEnd
from recorder import ParquetSink, Recorder, open_store, verify_run

T0 = 1_700_000_000_000_000_000


def _burst(run_id: str, n: int) -> Iterator[Event]:
    yield RunStart(run_id=run_id, seq=0, ts=T0, user_message="go")
    for i in range(1, n - 1):
        yield ToolEnd(run_id=run_id, seq=i, ts=T0 + i, tool_call_id="c", tool_name="tick",
                      result="ok")
    yield RunEnd(run_id=run_id, seq=n - 1, ts=T0 + n, final_content="done")


@pytest.mark.slow
def test_given_a_1m_event_burst_past_the_buffer_when_recorded_then_end_kept_and_drops_counted(
    tmp_path: Path,
) -> None:
    n = 1_000_000
    root = tmp_path / "store"
    with Recorder([ParquetSink(root)], capacity=100_000) as rec:
        for event in _burst("burst", n):
            rec.emit(event)
    assert rec.stats().overflow > 0  # the buffer was outrun: this test is about what follows
    store = open_store(root)
    ((status, events, dropped, last_seq),) = store.rows(
        "SELECT status, events, dropped, last_seq FROM runs WHERE run_id = 'burst'")
    assert (status, last_seq) == ("complete", n - 1)  # run.end is never dropped
    assert events + dropped == n and dropped == rec.stats().overflow
    result = verify_run(store, "burst")
    assert result.valid and not result.complete
    assert (result.records, result.dropped) == (events, dropped)
    assert "INCOMPLETE evidence" in result.summary()


@pytest.mark.slow
def test_given_back_pressure_when_a_burst_outruns_a_small_buffer_then_nothing_is_dropped(
    tmp_path: Path,
) -> None:
    n = 100_000
    root = tmp_path / "store"
    with Recorder([ParquetSink(root)], capacity=5_000, on_full="block") as rec:
        for event in _burst("steady", n):
            rec.emit(event)
    assert rec.stats().overflow == 0
    store = open_store(root)
    assert store.rows("SELECT status, events, dropped FROM runs") == [("complete", n, 0)]
    assert verify_run(store, "steady").complete
