"""``SpanProcessor(store)``: an OpenTelemetry SDK span processor that maps an app's own
GenAI spans into a store, in-process, on the SDK's batch thread (never the app's)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from recorder.ingest._intake import Intake
from recorder.write._sink import Processor

__all__ = ["SpanProcessor"]

_log = logging.getLogger("recorder")


class _IntakeExporter(SpanExporter):
    def __init__(self, intake: Intake) -> None:
        self.intake = intake

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        try:
            body = encode_spans(spans).SerializeToString()
            report = self.intake.take(body, signal="traces", fmt="pb")
        except Exception as exc:  # a recorder never raises into the app
            _log.warning("recorder.ingest: a span batch was not stored (%s: %s)",
                         type(exc).__name__, exc)
            return SpanExportResult.FAILURE
        if report.problems:
            _log.info("recorder.ingest: %s", report.line())
        return SpanExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        self.intake.flush()
        return True

    def shutdown(self) -> None:
        self.intake.close()


class SpanProcessor(BatchSpanProcessor):
    """Maps the spans an app's GenAI instrumentation makes into ``store`` as runs.

    ``tracer_provider.add_span_processor(SpanProcessor(".footprint"))``: spans are
    queued (bounded, dropped and counted by the SDK when full), encoded as OTLP and
    taken like a received batch — raw first, then mapped — on the SDK's export thread.
    ``processors`` are a native recording's (``[Redactor()]``), applied to the raw batch
    and the mapped events before either is written.
    """

    def __init__(self, store: str | Path | None = None, *, max_queue_size: int = 8192,
                 schedule_delay_millis: float = 500,
                 processors: Sequence[Processor] = ()) -> None:
        self.intake = Intake(store, processors=processors)
        super().__init__(_IntakeExporter(self.intake), max_queue_size=max_queue_size,
                         schedule_delay_millis=schedule_delay_millis)
