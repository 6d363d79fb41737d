"""The recorder: an ``EventSink`` whose ``emit`` is an append; a background thread does the rest."""

from __future__ import annotations

import atexit
import functools
import itertools
import logging
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from footprint._errors import ConfigError
from footprint.events import EventBase
from recorder._sink import (
    DROP,
    DropCounting,
    ExportResult,
    Processor,
    Sink,
    StatsAware,
    as_sink,
)

__all__ = ["Recorder", "RecorderStats"]

_log = logging.getLogger("recorder")


@dataclass(frozen=True, slots=True, kw_only=True)
class RecorderStats:
    """Counters a recorder keeps; none of them ever raises into a run."""

    exported: int = 0
    overflow: int = 0
    dropped_by_processors: int = 0
    processor_errors: int = 0
    sink_failures: dict[str, int] = field(default_factory=dict)


class Recorder:
    """``Recorder(sinks=[...], processors=[...])``: record events without slowing the run.

    ``emit`` appends to a bounded buffer and returns; when the buffer is full
    the event is counted (per run) and dropped, never blocking. A daemon
    thread drains the buffer in batches, runs the processors and exports to
    every sink; a failing sink is logged and counted. ``flush()`` and
    ``close()`` are explicit, and ``close()`` also runs at interpreter exit.
    """

    def __init__(
        self,
        sinks: Sequence[object] = (),
        processors: Sequence[Processor] = (),
        *,
        capacity: int = 1 << 18,
        batch_size: int = 8192,
        interval_s: float = 0.05,
    ) -> None:
        if capacity < 1 or batch_size < 1 or interval_s <= 0:
            raise ConfigError(
                f"Recorder(capacity={capacity!r}, batch_size={batch_size!r}, "
                f"interval_s={interval_s!r}): all three must be positive; use the defaults"
            )
        self._sinks: list[Sink] = [as_sink(s) for s in sinks]
        self._processors = tuple(processors)
        self._buf: deque[EventBase] = deque()
        self._cap = capacity
        self._batch = batch_size
        self._interval = interval_s
        self._overflow: dict[str, int] = {}
        self._processed: dict[str, int] = {}
        self._counts = {"exported": 0, "processor_errors": 0}
        self._failures: dict[str, int] = {}
        self._requests: deque[threading.Event] = deque()
        self._wake = threading.Event()
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name="footprint-recorder", daemon=True)
        self._thread.start()
        atexit.register(self.close)

    # -- the engine-thread side ------------------------------------------------
    def emit(self, event: EventBase) -> None:
        """Append ``event`` (O(1)); on a full buffer or after close, count it instead."""
        buf = self._buf
        n = len(buf)
        if n < self._cap and not self._closed:
            buf.append(event)
            if n == self._batch:
                self._wake.set()
        else:
            run = event.run_id
            self._overflow[run] = self._overflow.get(run, 0) + 1

    def flush(self, timeout_s: float = 10.0) -> bool:
        """Export everything emitted so far and flush every sink; ``False`` on timeout."""
        if self._closed or not self._thread.is_alive():
            return False
        done = threading.Event()
        self._requests.append(done)
        self._wake.set()
        return done.wait(timeout_s)

    def close(self, timeout_s: float = 30.0) -> None:
        """Drain, flush and shut every sink down. Idempotent; registered with ``atexit``."""
        if self._closed:
            return
        self._closed = True
        self._wake.set()
        self._thread.join(timeout_s)
        atexit.unregister(self.close)

    def stats(self) -> RecorderStats:
        """A snapshot of the counters."""
        return RecorderStats(
            exported=self._counts["exported"],
            overflow=sum(self._overflow.values()),
            dropped_by_processors=sum(self._processed.values()),
            processor_errors=self._counts["processor_errors"],
            sink_failures=dict(self._failures),
        )

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the background side ---------------------------------------------------
    def _loop(self) -> None:
        while True:
            self._wake.wait(self._interval)
            self._wake.clear()
            closing = self._closed
            requests = [self._requests.popleft() for _ in range(len(self._requests))]
            self._drain()
            if closing:
                self._close_sinks()
            elif requests:
                self._flush_sinks()
            for done in requests:
                done.set()
            if closing:
                break
        while self._requests:
            self._requests.popleft().set()

    def _drain(self) -> None:
        buf = self._buf
        while buf:
            take = min(len(buf), self._batch)
            batch = list(itertools.starmap(buf.popleft, itertools.repeat((), take)))
            kept = self._process(batch) if self._processors else batch
            if kept:
                self._export(kept)

    def _process(self, batch: list[EventBase]) -> list[EventBase]:
        kept: list[EventBase] = []
        for event in batch:
            current: EventBase | None = event
            for processor in self._processors:
                try:
                    result = processor(current) if current is not None else DROP
                except Exception:
                    _log.exception("recorder processor %r failed; event dropped", processor)
                    self._counts["processor_errors"] += 1
                    result = DROP
                if result is DROP:
                    self._processed[event.run_id] = self._processed.get(event.run_id, 0) + 1
                    current = None
                    break
                current = result
            if current is not None:
                kept.append(current)
        return kept

    def _export(self, batch: list[EventBase]) -> None:
        for sink in self._sinks:
            result = self._guard(sink, "export", functools.partial(sink.export, batch))
            if result is ExportResult.FAILURE:
                self._count_failure(sink, "export returned FAILURE")
        self._counts["exported"] += len(batch)

    def _mirrors(self) -> list[Sink]:
        return [s for s in self._sinks if not isinstance(s, StatsAware)]

    def _flush_sinks(self) -> None:
        """Mirrors flush first, so what they lost is known when the record writes stats."""
        for sink in self._mirrors():
            self._flush_one(sink)
        self._note_and_flush_records()

    def _close_sinks(self) -> None:
        """Mirrors shut down first (dropping what they cannot deliver, counted), then the
        record notes every count and shuts down last: nothing lost goes unrecorded."""
        for sink in self._mirrors():
            self._flush_one(sink)
            self._guard(sink, "shutdown", sink.shutdown)
        self._note_and_flush_records()
        for sink in self._sinks:
            if isinstance(sink, StatsAware):
                self._guard(sink, "shutdown", sink.shutdown)

    def _note_and_flush_records(self) -> None:
        lost: dict[str, int] = {}
        for sink in self._mirrors():
            if isinstance(sink, DropCounting):
                counts = self._guard(sink, "dropped_by_run", sink.dropped_by_run)
                for run, n in (counts if isinstance(counts, dict) else {}).items():
                    lost[run] = lost.get(run, 0) + n
        for sink in self._sinks:
            if isinstance(sink, StatsAware):
                note = functools.partial(
                    sink.note_drops, dict(self._overflow), dict(self._processed), lost
                )
                self._guard(sink, "note_drops", note)
                self._flush_one(sink)

    def _flush_one(self, sink: Sink) -> None:
        ok = self._guard(sink, "force_flush", sink.force_flush)
        if ok is False:
            self._count_failure(sink, "force_flush returned False")

    def _guard(self, sink: Sink, what: str, call: Callable[[], object]) -> object:
        try:
            return call()
        except Exception as exc:
            self._count_failure(sink, f"{what} raised {type(exc).__name__}: {exc}")
            return None

    def _count_failure(self, sink: Sink, why: str) -> None:
        name = f"{type(sink).__name__}#{self._sinks.index(sink)}"
        n = self._failures.get(name, 0) + 1
        self._failures[name] = n
        if n & (n - 1) == 0:  # 1, 2, 4, 8…: logged, never a flood
            _log.warning("recorder sink %s failed (%d so far): %s", name, n, why)
