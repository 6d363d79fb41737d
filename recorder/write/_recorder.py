"""The recorder: an ``EventSink`` whose ``emit`` is an append; a background thread does the rest."""

from __future__ import annotations

import atexit
import functools
import itertools
import logging
import os
import threading
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from footprint._errors import ConfigError, did_you_mean
from footprint.events import TERMINAL_TYPES, EventBase
from recorder.write._sink import (
    DROP,
    DropCounting,
    EmitSink,
    ExportResult,
    Processor,
    Sink,
    StatsAware,
    as_sink,
)

__all__ = ["DEFAULT_CAPACITY", "OnFull", "Recorder", "RecorderStats"]

_log = logging.getLogger("recorder")


DEFAULT_CAPACITY = 1 << 20
"""Events the buffer holds (1,048,576) beyond what the writer has taken: a burst that long
is recorded whole, whatever its rate."""

OnFull: TypeAlias = Literal["drop", "block"]


_RECORDERS: weakref.WeakSet[Recorder] = weakref.WeakSet()
"""Every recorder of this process, restarted in a forked child."""


def _restart_in_child() -> None:
    for recorder in list(_RECORDERS):
        recorder._after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_restart_in_child)


class _FlushRequest:
    __slots__ = ("done", "ok")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.ok = False


def _check_options(capacity: int, batch_size: int, interval_s: float, on_full: object) -> None:
    """Refuse a bound, batch or interval that is not positive, and an unknown ``on_full``."""
    if capacity < 1 or batch_size < 1 or interval_s <= 0:
        raise ConfigError(
            f"Recorder(capacity={capacity!r}, batch_size={batch_size!r}, "
            f"interval_s={interval_s!r}): all three must be positive; use the defaults"
        )
    if on_full not in ("drop", "block"):
        raise ConfigError(
            f"Recorder(on_full={on_full!r}) is unknown"
            f"{did_you_mean(str(on_full), ('drop', 'block'))}; use 'drop' (count and "
            "drop when the buffer is full) or 'block' (wait for room)"
        )


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

    ``emit`` appends to a bounded buffer of ``capacity`` events and returns.
    When the buffer is full, ``on_full="drop"`` (the default) counts the event
    (per run, written to the store as ``runs.dropped``) and drops it, never
    blocking; ``on_full="block"`` makes ``emit`` wait for room instead
    (back-pressure: nothing lost, the run slowed). A terminal event
    (``run.end``, ``run.error``) is never dropped: it goes in even past the
    bound. A daemon thread drains the buffer in batches, runs the processors
    and exports to every sink; a failing sink is logged and counted.
    ``flush()`` and ``close()`` are explicit, and ``close()`` also runs at
    interpreter exit. After ``fork()`` the child's recorder starts afresh with
    writers of its own (``os.register_at_fork``; see ``_after_fork``).
    """

    def __init__(
        self,
        sinks: Sequence[object] = (),
        processors: Sequence[Processor] = (),
        *,
        capacity: int = DEFAULT_CAPACITY,
        batch_size: int = 8192,
        interval_s: float = 0.05,
        on_full: OnFull = "drop",
    ) -> None:
        _check_options(capacity, batch_size, interval_s, on_full)
        self.on_full = on_full
        self._sinks: list[Sink] = [as_sink(s) for s in sinks]
        self._processors = tuple(processors)
        self._buf: deque[EventBase] = deque()
        self._cap = capacity
        self._batch = batch_size
        self._interval = interval_s
        self._overflow: dict[str, int] = {}
        self._overflow_seen = 0
        """The overflow count at the last :meth:`flush` (drops since make it ``False``)."""
        self._processed: dict[str, int] = {}
        self._counts = {"exported": 0, "processor_errors": 0}
        self._failures: dict[str, int] = {}
        self._requests: deque[_FlushRequest] = deque()
        self._wake = threading.Event()
        self._room = threading.Event()
        self._failed = False  # a sink failed since the last flush
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name="footprint-recorder", daemon=True)
        self._thread.start()
        atexit.register(self.close)
        _RECORDERS.add(self)

    def _after_fork(self) -> None:
        """In a child after ``fork()`` (gunicorn ``--preload``, fork pools): the parent's
        thread is gone and its buffer is the parent's to write. Start afresh: an empty
        buffer, counters and a thread of our own, and each sink's ``after_fork()`` (a
        ParquetSink takes a new writer id, lock and segment). A sink without one is
        named in the log, never silently kept."""
        if self._closed:
            return
        self._buf = deque()
        self._requests = deque()
        self._wake, self._room = threading.Event(), threading.Event()
        self._overflow, self._processed, self._failures = {}, {}, {}
        self._overflow_seen = 0
        self._counts = {"exported": 0, "processor_errors": 0}
        self._failed = False
        for sink in self._sinks:
            restart = getattr(sink, "after_fork", None)
            if restart is None:
                if not isinstance(sink, EmitSink):  # in-memory sinks need nothing
                    _log.error("recorder: sink %r has no after_fork(); after fork() in pid "
                               "%d it may lose what this process records", sink, os.getpid())
                continue
            self._guard(sink, "after_fork", restart)
        self._thread = threading.Thread(target=self._loop, name="footprint-recorder", daemon=True)
        self._thread.start()

    # -- the engine-thread side ------------------------------------------------
    def emit(self, event: EventBase) -> None:
        """Append ``event`` (O(1)); on a full buffer or after close, count it instead."""
        buf = self._buf
        n = len(buf)
        if n < self._cap and not self._closed:
            buf.append(event)
            if n == self._batch:
                self._wake.set()
        elif not self._closed and (getattr(event, "type", None) in TERMINAL_TYPES
                                   or (self.on_full == "block" and self._wait_for_room())):
            buf.append(event)  # a run's end is never dropped, even past the bound
            self._wake.set()
        else:
            run = event.run_id
            self._overflow[run] = self._overflow.get(run, 0) + 1

    def emit_all(self, events: Sequence[EventBase]) -> None:
        """:meth:`emit` each of ``events``, in order; one append when all fit the buffer."""
        buf = self._buf
        n = len(buf)
        if n + len(events) <= self._cap and not self._closed:
            buf.extend(events)
            if n <= self._batch < n + len(events):
                self._wake.set()
            return
        for event in events:
            self.emit(event)

    def _wait_for_room(self) -> bool:
        """Back-pressure: wait until the writer has taken a batch; ``False`` if it is gone."""
        while len(self._buf) >= self._cap:
            if self._closed or not self._thread.is_alive():
                return False
            self._room.clear()
            if len(self._buf) < self._cap:
                break
            self._wake.set()
            self._room.wait(0.05)
        return True

    def flush(self, timeout_s: float = 10.0) -> bool:
        """Export everything emitted so far and flush every sink.

        ``True`` only when every sink took and flushed all of it; ``False`` on
        timeout, after close, when a sink failed since the last flush, or when
        events were dropped on a full buffer since the last flush (what was
        lost is in :meth:`stats`, and per run in the store).
        """
        if self._closed or not self._thread.is_alive():
            return False
        request = _FlushRequest()
        self._requests.append(request)
        self._wake.set()
        done = request.done.wait(timeout_s) and request.ok
        overflow = sum(self._overflow.values())
        dropped, self._overflow_seen = overflow > self._overflow_seen, overflow
        return done and not dropped

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
            if requests:
                ok, self._failed = not self._failed, False
                for request in requests:
                    request.ok = ok
                    request.done.set()
            if closing:
                break
        while self._requests:
            self._requests.popleft().done.set()  # after close: ok stays False

    def _drain(self) -> None:
        buf = self._buf
        while buf:
            take = min(len(buf), self._batch)
            batch = list(itertools.starmap(buf.popleft, itertools.repeat((), take)))
            self._room.set()
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
        self._failed = True
        name = f"{type(sink).__name__}#{self._sinks.index(sink)}"
        n = self._failures.get(name, 0) + 1
        self._failures[name] = n
        if n & (n - 1) == 0:  # 1, 2, 4, 8…: logged, never a flood
            _log.warning("recorder sink %s failed (%d so far): %s", name, n, why)
