"""One background thread per store writer for the file work: IPC appends, seals, stats.

pyarrow releases the GIL while it compresses and writes, so this work runs
beside the next batch's conversion instead of after it. Jobs run strictly
in submission order; :meth:`FileWorker.drain` waits for all of them, and a
job's failure is raised from the next ``submit``/``drain`` (once), where the
recorder counts it against the sink.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

__all__ = ["FileWorker"]

Job = Callable[[], object]


class FileWorker:
    """``submit(job)`` queues (blocking when ``depth`` jobs wait); ``drain()`` waits them out."""

    def __init__(self, name: str, *, depth: int = 4) -> None:
        self._name = name
        self._jobs: queue.Queue[Job | None] = queue.Queue(maxsize=depth)
        self._error: Exception | None = None
        self._thread: threading.Thread | None = None

    def submit(self, job: Job) -> None:
        """Queue ``job`` after every job submitted so far, then raise a pending failure
        (the job is queued all the same: an earlier failure never costs a later batch)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
            self._thread.start()
        self._jobs.put(job)
        self._raise_pending()

    def backlog(self) -> int:
        """Jobs submitted and not yet started (the one running is not counted)."""
        return self._jobs.qsize()

    def drain(self) -> None:
        """Wait until every submitted job has run; raise the first failure since the last call."""
        if self._thread is not None:
            self._jobs.join()
        self._raise_pending()

    def close(self) -> None:
        """Drain, then stop the thread. Idempotent."""
        thread, self._thread = self._thread, None
        if thread is not None:
            self._jobs.put(None)
            thread.join()
        self._raise_pending()

    def _raise_pending(self) -> None:
        error, self._error = self._error, None
        if error is not None:
            raise error

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                if job is None:
                    return
                job()
            except Exception as exc:  # surfaced to the recorder through submit/drain
                if self._error is None:
                    self._error = exc
            finally:
                self._jobs.task_done()
