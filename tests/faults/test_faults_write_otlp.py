"""Spans still inside the exporter when the recorder closes are counted as dropped on their
run (a slow collector used to swallow them uncounted)."""

from __future__ import annotations

from pathlib import Path

from otel_runs import scripted_run
from otlp_receiver import HttpReceiver

from recorder import ParquetSink, Recorder, open_store
from recorder.otel import OTelSink, otlp_exporter

RUN = "run-slow-collector"


def test_given_a_slow_collector_when_closing_mid_export_then_the_batch_in_flight_is_counted(
    tmp_path: Path,
) -> None:
    events = scripted_run(RUN, iterations=40, tools=1)
    with HttpReceiver("slow", delay_s=3.0) as receiver:
        sink = OTelSink(exporter=otlp_exporter("http/protobuf", receiver.endpoint, timeout_s=10),
                        max_queue=4096, max_batch=32, schedule_delay_s=0.02,
                        flush_timeout_s=0.3)
        rec = Recorder(sinks=[ParquetSink(tmp_path), sink], processors=[sink.stamp])
        for event in events:
            rec.emit(event)
        rec.close()
        stats = sink.stats()
        assert receiver.attempts >= 1  # a batch was on the wire when the recorder closed
    assert stats.exported_spans == 0
    assert stats.dropped_spans == stats.spans  # every span, the one in flight included
    with open_store(tmp_path) as store:
        assert store.rows("SELECT mirror_dropped FROM runs WHERE run_id = ?",
                          [RUN]) == [(stats.spans,)]
