"""Worker threads for plain tool calls, kept by one agent across its calls and runs.

A plain (sync) tool runs on a worker thread so that its timeout can abandon
it. A thread started per call cost more than the rest of an iteration, so an
agent keeps its workers:

* a call takes an idle worker, or starts a new one when none is idle. A
  worker stuck in a timed-out call is never idle, so it never holds up a
  later call: the pool grows instead, and the stuck worker (a daemon
  thread) finishes, or not, without holding the process open;
* a worker whose call returns goes back to idle while fewer than ``keep``
  are idle, else it ends; an idle worker ends after ``idle_s`` without work;
* ``close()`` ends the idle workers at once and the busy ones when their
  call returns; later calls still run, each on a worker of its own;
* after ``fork()`` the child has none of its parent's threads: its first
  call starts the pool afresh instead of waiting for a worker that is not there.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable

__all__ = ["ToolWorkers"]

Done = Callable[[], None]
Job = Callable[[], Done]
"""Work that returns its hand-off (the waiter's wake-up), which the worker calls once
it can take the next job: a caller woken by it finds the worker idle, not a new thread."""


class ToolWorkers:
    """A growing pool of daemon threads; a job and its hand-off must not raise."""

    def __init__(self, keep: int, *, idle_s: float = 60.0, name: str = "footprint-tool") -> None:
        self._keep = keep
        self._idle_s = idle_s
        self._name = name
        self._closed = False
        self._fresh()

    def _fresh(self) -> None:
        self._pid = os.getpid()
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0  # idle workers no queued job is promised to
        self._started = 0

    @property
    def threads_started(self) -> int:
        """How many worker threads this pool has started."""
        return self._started

    def submit(self, job: Job) -> None:
        """Run ``job`` on an idle worker, or on a new one when none is idle."""
        if self._pid != os.getpid():  # a forked child: its parent's workers are not here
            self._fresh()
        with self._lock:
            spawn = self._idle == 0
            if spawn:
                self._started += 1
                number = self._started
            else:
                self._idle -= 1  # that worker's next job is this one
        self._jobs.put(job)
        if spawn:
            threading.Thread(target=self._work, name=f"{self._name}-{number}",
                             daemon=True).start()

    def close(self) -> None:
        """End the idle workers now, the busy ones when their call returns."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, 0
        for _ in range(idle):
            self._jobs.put(None)

    def _work(self) -> None:
        job = self._jobs.get()  # a job was promised to this new worker
        while job is not None:
            hand_off = job()
            job = self._next(hand_off)

    def _next(self, hand_off: Done) -> Job | None:
        """The next job, or ``None`` when this worker should end."""
        with self._lock:
            stay = not self._closed and self._idle < self._keep
            if stay:
                self._idle += 1
        hand_off()
        if not stay:
            return None
        while True:
            try:
                return self._jobs.get(timeout=self._idle_s)
            except queue.Empty:
                with self._lock:
                    if self._idle > 0:  # no job is promised to every idle worker: one may go
                        self._idle -= 1
                        return None
                # every idle worker has a job promised: this one's is on its way
