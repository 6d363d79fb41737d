"""Mapping after the acknowledgement: the receiver answers a batch once it is stored raw
(durable) and decoded, and one thread maps the batches in the order they were taken.

The sender no longer waits for the mapping (nor, with ``receive --workers``, for a peer's
mapping of its share), so a worker's requests and its mapping overlap. At most
:data:`DEPTH` decoded batches wait: past it, taking the next one waits (back-pressure,
as the recorder's own backlog does). What waits is in a raw batch already, pending until
its runs are written, so a crash loses nothing the next start does not map again."""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

from recorder.ingest._spans import Batch

__all__ = ["DEPTH", "Later"]

_log = logging.getLogger("recorder")

DEPTH = 4
"""Decoded batches waiting for the mapping thread at most (a 512-span batch is a few MB of
Python objects)."""

R = TypeVar("R")


class Later(Generic[R]):
    """One mapping thread, started at the first batch; :meth:`drain` waits until every
    batch given so far is mapped; :meth:`close` stops the thread."""

    def __init__(self, work: Callable[[Batch, Path | None], R], depth: int = DEPTH) -> None:
        self._work = work
        self._queue: queue.Queue[tuple[Batch, Path | None, Callable[[R], None] | None] | None]
        self._queue = queue.Queue(maxsize=depth)
        self._thread: threading.Thread | None = None
        self._start = threading.Lock()

    def put(self, batch: Batch, raw: Path | None, done: Callable[[R], None] | None) -> None:
        """Map ``batch`` on the thread (``done`` gets its report there); waits while
        :data:`DEPTH` batches wait."""
        with self._start:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name="footprint-intake-map")
                self._thread.start()
        self._queue.put((batch, raw, done))

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            batch, raw, done = item
            try:
                report = self._work(batch, raw)
                if done is not None:
                    done(report)
            except Exception as exc:  # never lose the thread: the batch stays pending raw
                _log.warning("recorder.ingest: a batch was not mapped (%s: %s); it stays "
                             "pending and the next start maps it", type(exc).__name__, exc)
            finally:
                self._queue.task_done()
        self._queue.task_done()

    def drain(self) -> None:
        """Wait until every batch given so far is mapped."""
        if self._thread is not None:
            self._queue.join()

    def close(self) -> None:
        """Map what waits, then stop the thread."""
        with self._start:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(None)
            thread.join()
