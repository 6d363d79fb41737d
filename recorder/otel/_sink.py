"""``OTelSink``: the recorder's events mirrored as OpenTelemetry GenAI spans.

The engine thread never sees this class: the recorder's background thread
calls :meth:`OTelSink.export` with batches, spans are built there with the
events' own timestamps, and a bounded processor (or the user's provider)
exports them on its own thread. Nothing here blocks longer than
``flush_timeout_s`` or raises into the recorder.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from opentelemetry.sdk.trace.export import SpanExporter
from opentelemetry.trace import SpanKind

from footprint._errors import ConfigError
from footprint.events import TERMINAL_TYPES, EventBase, FeedbackRecorded
from recorder.otel._ids import OTelIds
from recorder.otel._mapping import RunTrace, SpanRecord, evaluation_span
from recorder.otel._setup import capture_content_from_env, resolve_pipeline
from recorder.otel._spans import SpanFactory
from recorder.write._sink import ExportResult

__all__ = ["OTelSink", "OTelStats"]

_log = logging.getLogger("recorder.otel")


@dataclass(frozen=True, slots=True, kw_only=True)
class OTelStats:
    """What the sink did; ``dropped_spans`` counts spans that never reached the exporter's end."""

    runs_traced: int
    runs_unsampled: int
    spans: int
    dropped_spans: int
    exported_spans: int
    queued: int
    peak_queue: int
    failed_exports: int


def _bounded(call: Callable[[], object], timeout_s: float) -> bool:
    """Run ``call`` on a daemon thread and wait at most ``timeout_s`` for it."""
    box: list[object] = []
    worker = threading.Thread(target=lambda: box.append(call()), daemon=True,
                              name="footprint-otel-flush")
    worker.start()
    worker.join(timeout_s)
    return bool(box and box[0] is not False)


class OTelSink:
    """``Recorder(sinks=[ParquetSink(), otel], processors=[otel.stamp])``.

    ``tracer_provider``: an SDK provider you configured (spans go to its
    processors); or ``exporter``: any SDK span exporter, fed through the
    sink's own bounded queue (drops counted); or neither: the global SDK
    provider if one is set, else an exporter from ``OTEL_TRACES_EXPORTER`` /
    ``OTEL_EXPORTER_OTLP_*``. ``sample_ratio`` keeps that share of runs
    (by trace id); ``capture_content`` (default: the
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` variable) adds
    what the model saw and said — ``gen_ai.system_instructions``,
    ``gen_ai.input.messages``, ``gen_ai.output.messages`` — from the redacted
    records, each attribute bounded at ``content_limit`` characters (cut
    texts and left-out messages are marked). ``openinference`` adds
    OpenInference attributes for Phoenix/Arize-style backends.
    """

    def __init__(
        self,
        tracer_provider: object | None = None,
        *,
        exporter: SpanExporter | None = None,
        sample_ratio: float = 1.0,
        capture_content: bool | None = None,
        content_limit: int = 16384,
        openinference: bool = False,
        max_queue: int = 2048,
        max_batch: int = 512,
        schedule_delay_s: float = 0.2,
        flush_timeout_s: float = 1.0,
        max_open_runs: int = 1024,
    ) -> None:
        if content_limit < 1 or flush_timeout_s <= 0 or max_open_runs < 1:
            raise ConfigError(
                f"OTelSink(content_limit={content_limit!r}, flush_timeout_s={flush_timeout_s!r}, "
                f"max_open_runs={max_open_runs!r}): all must be positive; use the defaults"
            )
        self.ids = OTelIds(sample_ratio)
        self.capture_content = (capture_content_from_env() if capture_content is None
                                else capture_content)
        self.content_limit = content_limit
        self.openinference = openinference
        self.flush_timeout_s = flush_timeout_s
        self._pipeline = resolve_pipeline(tracer_provider, exporter, max_queue=max_queue,
                                          max_batch=max_batch, schedule_delay_s=schedule_delay_s)
        self._factory = (SpanFactory(self._pipeline.resource, ids=self.ids)
                         if self._pipeline is not None else None)
        self._max_runs = max_open_runs
        self._runs: OrderedDict[str, RunTrace] = OrderedDict()
        self._done: OrderedDict[str, bool] = OrderedDict()  # run id -> was it traced
        self._traces: OrderedDict[int, str] = OrderedDict()  # trace id -> run id
        self._counts = {"traced": 0, "unsampled": 0, "spans": 0}
        self._skipped: dict[str, int] = {}  # run id -> events the mapping could not read
        self._closed = False

    @property
    def stamp(self) -> Callable[[EventBase], EventBase]:
        """The recorder processor that writes this sink's trace/span ids into every event."""
        return self.ids.stamp

    # -- Sink ----------------------------------------------------------------------------
    def export(self, batch: Sequence[EventBase]) -> ExportResult:
        if self._factory is None or self._closed:
            return ExportResult.SUCCESS if self._factory is None else ExportResult.FAILURE
        runs = self._runs
        for event in batch:
            if isinstance(event, FeedbackRecorded):  # often long after the run's spans
                if self._sampled(event.run_id):
                    self._ship(event.run_id, [evaluation_span(event)])
                continue
            state = runs.get(event.run_id)
            if state is None:
                state = self._open(event)
                if state is None:
                    continue
            try:
                done = state.feed(event)
            except Exception:  # one event the mapping cannot read: it alone is lost, counted
                _log.exception("OTel mapping failed on %s seq %r of run %r; event skipped",
                               getattr(event, "type", "?"), event.seq, event.run_id)
                self._skipped[event.run_id] = self._skipped.get(event.run_id, 0) + 1
                continue
            if done:
                self._ship(state.run_id, done)
            if getattr(event, "type", "") in TERMINAL_TYPES:
                self._finish(event.run_id, traced=True)
        return ExportResult.SUCCESS

    def force_flush(self, timeout_s: float = 10.0) -> bool:
        if self._pipeline is None:
            return True
        wait = min(timeout_s, self.flush_timeout_s)
        processor = self._pipeline.processor
        return _bounded(lambda: processor.force_flush(int(wait * 1000)), wait)

    def shutdown(self) -> None:
        """End the spans of runs that never ended (marked incomplete), flush, stop."""
        if self._closed:
            return
        for run_id in list(self._runs):
            self._evict(run_id)
        self._closed = True
        pipeline = self._pipeline
        if pipeline is None:
            return
        if pipeline.owned is not None:
            pipeline.owned.shutdown(int(self.flush_timeout_s * 1000))
        else:
            self.force_flush(self.flush_timeout_s)

    # -- accounting ----------------------------------------------------------------------
    def dropped_spans(self, run_id: str | None = None) -> int:
        """Spans the sink's own queue dropped or failed to export (one run, or all)."""
        owned = self._pipeline.owned if self._pipeline is not None else None
        if owned is None:
            return 0
        if run_id is None:
            return owned.dropped_total()
        return owned.dropped.get(self.ids.trace_id(run_id), 0)

    def dropped_by_run(self) -> dict[str, int]:
        """``{run id: dropped spans}`` for the runs this sink still remembers, plus the events
        its mapping could not read (each lost alone, its batch kept)."""
        owned = self._pipeline.owned if self._pipeline is not None else None
        out = dict(self._skipped)
        if owned is not None:
            for trace, n in list(owned.dropped.items()):
                run = self._traces.get(trace)
                if run is not None:
                    out[run] = out.get(run, 0) + n
        return out

    def stats(self) -> OTelStats:
        owned = self._pipeline.owned if self._pipeline is not None else None
        return OTelStats(
            runs_traced=self._counts["traced"], runs_unsampled=self._counts["unsampled"],
            spans=self._counts["spans"], dropped_spans=self.dropped_spans(),
            exported_spans=owned.exported if owned else 0,
            queued=owned.queued if owned else 0, peak_queue=owned.peak_queue if owned else 0,
            failed_exports=owned.failed_exports if owned else 0,
        )

    # -- internals -------------------------------------------------------------------------
    def _open(self, event: EventBase) -> RunTrace | None:
        run_id = event.run_id
        if run_id in self._done:
            return None
        if not self._sampled(run_id):
            self._counts["unsampled"] += 1
            self._finish(run_id, traced=False)
            return None
        self._counts["traced"] += 1
        state = RunTrace(run_id, content=self.capture_content, content_limit=self.content_limit,
                         openinference=self.openinference)
        self._runs[run_id] = state
        self._traces[self.ids.trace_id(run_id)] = run_id
        if len(self._traces) > 16 * self._max_runs:
            self._traces.popitem(last=False)
        if len(self._runs) > self._max_runs:
            self._evict(next(iter(self._runs)))
        return state

    def _sampled(self, run_id: str) -> bool:
        if not self.ids.sampled(run_id):
            return False
        sampler = self._pipeline.sampler if self._pipeline is not None else None
        if sampler is None:
            return True
        result: Any = sampler.should_sample(None, self.ids.trace_id(run_id), "invoke_agent",
                                            SpanKind.INTERNAL)
        return bool(result.decision.is_sampled())

    def _evict(self, run_id: str) -> None:
        state = self._runs.get(run_id)
        if state is None:
            return
        self._ship(run_id, state.finish())
        self._finish(run_id, traced=True)

    def _finish(self, run_id: str, *, traced: bool) -> None:
        self._runs.pop(run_id, None)
        self._done[run_id] = traced
        if len(self._done) > 16 * self._max_runs:
            self._done.popitem(last=False)

    def _ship(self, run_id: str, records: list[SpanRecord]) -> None:
        assert self._factory is not None and self._pipeline is not None
        spans = self._factory.build(run_id, records)
        self._counts["spans"] += len(spans)
        on_end = self._pipeline.processor.on_end
        for span in spans:
            try:
                on_end(span)
            except Exception:
                _log.exception("OTel span processor failed on %s", span.name)
