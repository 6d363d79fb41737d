"""A bounded export pipeline: a span processor that never blocks and counts what it drops.

``on_end`` appends to a bounded queue (O(1)); a daemon thread exports
batches. A full queue drops the oldest span; an export that fails (endpoint
down, erroring, too slow) drops its batch. Both are counted per trace id,
so the sink can say per run how many spans never reached the backend.
``force_flush`` and ``shutdown`` wait at most their timeout.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from footprint._errors import ConfigError

__all__ = ["BoundedExportProcessor"]

_log = logging.getLogger("recorder.otel")


class BoundedExportProcessor:
    """``SpanProcessor`` with a bounded queue and per-trace drop counts."""

    def __init__(self, exporter: SpanExporter, *, max_queue: int = 2048, max_batch: int = 512,
                 schedule_delay_s: float = 0.2) -> None:
        if max_queue < 1 or max_batch < 1 or schedule_delay_s <= 0:
            raise ConfigError(
                f"BoundedExportProcessor(max_queue={max_queue!r}, max_batch={max_batch!r}, "
                f"schedule_delay_s={schedule_delay_s!r}): all must be positive; "
                "use the defaults (2048, 512, 0.2)"
            )
        self.exporter = exporter
        self._queue: deque[ReadableSpan] = deque()
        self._in_flight: list[ReadableSpan] = []
        self._max_queue = max_queue
        self._max_batch = max_batch
        self._delay = schedule_delay_s
        self._wake = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._lock = threading.Lock()
        self._count_lock = threading.Lock()
        self._stop = False
        self.dropped: dict[int, int] = {}
        self.exported = 0
        self.failed_exports = 0
        self.peak_queue = 0
        self._thread = threading.Thread(target=self._loop, name="footprint-otel-export",
                                        daemon=True)
        self._thread.start()

    # -- SpanProcessor ---------------------------------------------------------------
    def on_start(self, span: Any, parent_context: Any = None) -> None:
        return None

    def on_end(self, span: ReadableSpan) -> None:
        if self._stop:
            self._drop([span])
            return
        queue = self._queue
        if len(queue) >= self._max_queue:
            with self._lock:
                old = queue.popleft() if queue else None
            if old is not None:
                self._drop([old])
        queue.append(span)
        n = len(queue)
        if n > self.peak_queue:
            self.peak_queue = n
        if n >= self._max_batch:
            self._wake.set()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Ask the worker to export everything queued; wait at most ``timeout_millis``."""
        if self._stop:
            return False
        self._idle.clear()
        self._wake.set()
        return self._idle.wait(timeout_millis / 1000)

    def shutdown(self, timeout_millis: int = 30_000) -> None:
        """Flush for at most ``timeout_millis``, then drop (and count) what is left."""
        if self._stop:
            return
        self.force_flush(timeout_millis)
        self._stop = True
        self._wake.set()
        self._thread.join(min(timeout_millis / 1000, 1.0))
        with self._lock:
            left = [self._queue.popleft() for _ in range(len(self._queue))]
            # a batch still inside the exporter is not known delivered: it counts as
            # dropped now, and its late result is ignored (it is counted once)
            left += self._in_flight
            self._in_flight = []
        self._drop(left)
        try:
            self.exporter.shutdown()
        except Exception:
            _log.exception("OTel exporter shutdown failed")

    @property
    def queued(self) -> int:
        return len(self._queue)

    def dropped_total(self) -> int:
        return sum(self.dropped.values())

    # -- the worker -------------------------------------------------------------------
    def _loop(self) -> None:
        while not self._stop:
            self._wake.wait(self._delay)
            self._wake.clear()
            while self._queue and not self._stop:
                self._export_one_batch()
            if not self._queue:
                self._idle.set()

    def _export_one_batch(self) -> None:
        with self._lock:
            take = min(len(self._queue), self._max_batch)
            batch = [self._queue.popleft() for _ in range(take)]
            self._in_flight = batch
        if not batch:
            return
        try:
            result = self.exporter.export(batch)
        except Exception:
            _log.exception("OTel exporter raised; %d spans dropped", len(batch))
            result = SpanExportResult.FAILURE
        with self._lock:
            if self._in_flight is not batch:
                return  # shutdown gave up on it and counted it dropped
            self._in_flight = []
        if result is SpanExportResult.SUCCESS:
            self.exported += len(batch)
        else:
            self.failed_exports += 1
            self._drop(batch)

    def _drop(self, spans: Sequence[ReadableSpan]) -> None:
        dropped = self.dropped
        with self._count_lock:
            for span in spans:
                ctx = span.context
                trace = ctx.trace_id if ctx is not None else 0
                dropped[trace] = dropped.get(trace, 0) + 1
