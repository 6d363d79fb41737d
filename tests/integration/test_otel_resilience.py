"""A down, slow or erroring endpoint never breaks a run or its Parquet record; drops are counted."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from otel_runs import scripted_run
from otlp_receiver import HttpReceiver, down_endpoint

from recorder import ParquetSink, Recorder, open_store
from recorder.otel import OTelSink, otlp_exporter

RUN = "run-otel-1"


@contextmanager
def _endpoint(mode: str) -> Iterator[str]:
    if mode == "down":
        yield down_endpoint()
        return
    with HttpReceiver(mode, delay_s=2.0, status=503) as receiver:
        yield receiver.endpoint


@pytest.mark.parametrize("mode", ["down", "slow", "error"])
def test_given_a_bad_endpoint_when_a_run_is_recorded_then_it_finishes_whole_and_drops_counted(
    mode: str, tmp_path: Path,
) -> None:
    events = scripted_run(RUN, iterations=60, tools=1)
    with _endpoint(mode) as url:
        sink = OTelSink(exporter=otlp_exporter("http/protobuf", url, timeout_s=0.5),
                        max_queue=32, max_batch=16, schedule_delay_s=0.02, flush_timeout_s=0.5)
        rec = Recorder(sinks=[ParquetSink(tmp_path), sink], processors=[sink.stamp])
        for event in events:
            rec.emit(event)
        rec.close()
    stats = sink.stats()
    assert rec.stats().overflow == 0
    with open_store(tmp_path) as store:
        assert store.rows("SELECT count(*), max(type) FILTER (WHERE seq = ?) FROM events",
                          [len(events) - 1]) == [(len(events), "run.end")]
        # the record says how incomplete the mirror is: dropped spans are on the run's row
        assert store.rows("SELECT dropped, mirror_dropped FROM runs WHERE run_id = ?",
                          [RUN]) == [(0, stats.dropped_spans)]
    assert stats.spans == 1 + 60 * 2 + 59
    assert stats.exported_spans == 0
    assert sink.dropped_spans(RUN) == stats.dropped_spans == stats.spans
    assert sink.dropped_by_run() == {RUN: stats.spans}
    assert stats.peak_queue <= 32 and stats.queued == 0


def _retained_by_sink(iterations: int) -> int:
    events = scripted_run(RUN, iterations=iterations, tools=1)
    sink = OTelSink(exporter=otlp_exporter("http/protobuf", down_endpoint(), timeout_s=0.2),
                    max_queue=64, max_batch=64, schedule_delay_s=5.0, flush_timeout_s=0.2)
    gc.collect()
    tracemalloc.start()
    try:
        for start in range(0, len(events), 256):
            sink.export(events[start : start + 256])
        gc.collect()
        retained, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        sink.shutdown()
    assert sink.stats().peak_queue <= 64
    return retained


def test_given_a_down_endpoint_when_runs_grow_tenfold_then_the_sink_memory_stays_flat() -> None:
    small, large = _retained_by_sink(100), _retained_by_sink(1000)
    assert large < small * 2 + 256 * 1024
