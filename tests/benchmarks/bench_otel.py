"""OpenTelemetry sink figures: engine-thread cost, total CPU per decision, run overhead.

- ``otel_emit_us_per_event``: µs the engine thread spends per ``Recorder.emit`` with the
  OTel sink on (target ≤ 2 µs): the append, nothing else.
- ``otel_cpu_us_per_event``: all CPU (every thread: id stamping, span building,
  OTLP protobuf encoding) per decision event of a realistic run (target ≤ 30 µs).
  The exporter encodes each batch exactly as the sink's OTLP exporters do
  (``otlp_exporter``: footprint's wire encoder), then discards it.
- ``otel_cpu_us_per_event_sdk_encoder``: the same with the SDK's own ``encode_spans``,
  what a user's SDK exporter (their ``TracerProvider``) spends.
- ``otel_run_overhead_pct``: a 200-iteration run whose model answers after 20 ms, recorded
  to Parquet with the OTel sink exporting OTLP/HTTP to a receiver in another local
  process, against Parquet alone (target ≤ 5%).
- ``otel_span_us``: one span through the SDK tracer API (5 attributes, 2 events), encoded,
  for comparison.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans  # noqa: E402
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import (  # noqa: E402
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from otel_runs import scripted_run  # noqa: E402

from footprint.events import EventBase  # noqa: E402
from recorder import ParquetSink, Recorder  # noqa: E402
from recorder.otel import OTelSink, otlp_exporter  # noqa: E402
from recorder.otel._attributes import DECISION_EVENTS  # noqa: E402
from recorder.otel._wire import WireEncoder  # noqa: E402

DECISIONS = set(DECISION_EVENTS) - {"skill.graph_declared", "run.error"}


class EncodeOnly(SpanExporter):  # type: ignore[misc]
    """Encodes like the sink's OTLP exporters (or the SDK's, ``sdk=True``), sends nothing."""

    def __init__(self, sdk: bool = False) -> None:
        self.bytes = 0
        self.sdk = sdk
        self.wire = WireEncoder()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self.sdk:
            self.bytes += len(encode_spans(spans).SerializePartialToString())
        else:
            self.bytes += len(self.wire.encode_request(spans))
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None


def _runs(n: int, iterations: int) -> list[list[EventBase]]:
    return [scripted_run(f"bench-{k}", iterations=iterations, tools=1) for k in range(n)]


def emit_us(quick: bool) -> float:
    runs = _runs(2 if quick else 10, 100)
    events = [e for run in runs for e in run]
    sink = OTelSink(exporter=EncodeOnly())
    rec = Recorder(sinks=[sink], processors=[sink.stamp], capacity=len(events) + 1,
                   batch_size=len(events) + 2, interval_s=60.0)
    emit = rec.emit
    started = time.perf_counter()
    for event in events:
        emit(event)
    elapsed = time.perf_counter() - started
    rec.close()
    return elapsed / len(events) * 1e6


def cpu_us(quick: bool, sdk: bool = False) -> float:
    runs = _runs(2 if quick else 10, 100)
    decisions = sum(1 for run in runs for e in run if getattr(e, "type", "") in DECISIONS)
    exporter = EncodeOnly(sdk)
    sink = OTelSink(exporter=exporter, max_queue=1 << 20, schedule_delay_s=0.05)
    stamp = sink.stamp
    started = time.process_time()
    for run in runs:
        sink.export([stamp(e) for e in run])
    sink.shutdown()
    cpu = time.process_time() - started
    assert sink.stats().exported_spans == sink.stats().spans > 0 and exporter.bytes > 0
    return cpu / decisions * 1e6


_RECEIVER = (
    "import sys, time; sys.path.insert(0, sys.argv[1]);"
    "from otlp_receiver import HttpReceiver;"
    "r = HttpReceiver().__enter__(); print(r.endpoint, flush=True); time.sleep(600)"
)


def _one_run(events: list[EventBase], sinks: list[Any], processors: list[Any]) -> float:
    rec = Recorder(sinks=sinks, processors=processors)
    started = time.perf_counter()
    for event in events:
        if getattr(event, "type", "") == "llm.end":
            time.sleep(0.02)
        rec.emit(event)
    elapsed = time.perf_counter() - started
    rec.close()
    return elapsed


def run_overhead_pct(quick: bool) -> float:
    iterations, repeats = (50, 1) if quick else (200, 2)
    proc = subprocess.Popen([sys.executable, "-c", _RECEIVER, str(HERE.parent)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        endpoint = proc.stdout.readline().strip()
        base, otel = [], []
        with tempfile.TemporaryDirectory() as tmp:
            for k in range(repeats):
                events = scripted_run(f"overhead-{k}", iterations=iterations, tools=1)
                base.append(_one_run(events, [ParquetSink(Path(tmp) / "a")], []))
                sink = OTelSink(exporter=otlp_exporter("http/protobuf", endpoint))
                otel.append(_one_run(events, [ParquetSink(Path(tmp) / "b"), sink],
                                     [sink.stamp]))
                assert sink.stats().exported_spans == sink.stats().spans
        return (min(otel) / min(base) - 1.0) * 100
    finally:
        proc.kill()
        proc.wait()


def span_us(quick: bool) -> float:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(EncodeOnly()))
    tracer = provider.get_tracer("bench")
    n = 500 if quick else 5000
    attrs = {"a": "x", "b": 1, "c": "y", "d": 2.0, "e": True}
    started = time.process_time()
    for _ in range(n):
        span = tracer.start_span("chat m", attributes=attrs, start_time=1)
        span.add_event("e1", {"k": "v"}, timestamp=2)
        span.add_event("e2", {"k": "v"}, timestamp=3)
        span.end(end_time=4)
    return (time.process_time() - started) / n * 1e6


def figures(quick: bool) -> dict[str, float]:
    return {
        "otel_emit_us_per_event": round(emit_us(quick), 3),
        "otel_cpu_us_per_event": round(min(cpu_us(quick) for _ in range(3)), 2),
        "otel_cpu_us_per_event_sdk_encoder": round(cpu_us(quick, sdk=True), 2),
        "otel_run_overhead_pct": round(run_overhead_pct(quick), 2),
        "otel_span_us": round(span_us(quick), 2),
    }


if __name__ == "__main__":
    print(figures("--quick" in sys.argv))
