"""Online evaluation: a judge over a deterministic sample of the runs, as they end.

``Recorder(sinks=[ParquetSink(PATH)], evaluate=JUDGE, sample=0.1)`` judges about a
tenth of the runs it records, and ``footprint receive --evaluate FILE.py:JUDGE
--sample 0.1`` of the runs it ingests, both through :class:`OnlineEvaluation`: the
same judge as ``footprint evaluate`` takes (``run -> recorder.Score``), the same
score records, on threads of its own, after the run is written. Which runs are
judged is decided by each run id's hash (:func:`sampled`), so a sample is the same
in every process and every test. The store, DuckDB and OpenTelemetry are imported
when the first sampled run is judged: a ``Recorder`` stays light to import.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from footprint._errors import ConfigError
from footprint.events import TERMINAL_TYPES, EventBase, FeedbackRecorded
from recorder.write._recorder import DEFAULT_CAPACITY, OnFull
from recorder.write._recorder import Recorder as _WriteRecorder
from recorder.write._sink import Processor, Sink

if TYPE_CHECKING:
    from recorder._evaluate import Judge
    from recorder.store._catalog import Store

__all__ = ["OnlineEvaluation", "OnlineStats", "Recorder", "sampled"]

_log = logging.getLogger("recorder")


def sampled(run_id: str, rate: float) -> bool:
    """Whether ``run_id`` is in a sample of ``rate`` (0 to 1) of the runs: the first 8
    bytes of its SHA-256 read as a fraction, below ``rate``. Deterministic: the same run
    is in or out in every process, so a test (or a second receiver) samples the same."""
    fraction = int.from_bytes(hashlib.sha256(run_id.encode()).digest()[:8], "big") / 2**64
    return fraction < rate


@dataclass(frozen=True, slots=True, kw_only=True)
class OnlineStats:
    """What an online evaluation did so far: runs that ended (``seen``), those in the
    sample, those judged, the scores written, the sampled runs still waiting to be
    judged, those never found ended in the store within the wait (``missing``), and
    every failure by run id (``"JudgeError: message"``: the judge raised, returned
    something other than scores, or the run's chain refused the score)."""

    seen: int = 0
    sampled: int = 0
    judged: int = 0
    scores: int = 0
    waiting: int = 0
    missing: int = 0
    failed: Mapping[str, str] = field(default_factory=dict)


class OnlineEvaluation:
    """Judge a deterministic sample of the runs as they end, in the background.

    ``ended(run_ids)`` only counts and queues (never raises, never blocks); a
    daemon thread waits until each sampled run is stored and ended (``flush()``
    first, when given; a run not there after ``wait_s`` is counted ``missing``),
    then judges the batch ``concurrency`` at a time with :func:`evaluate`'s
    machinery and writes the scores as feedback ``by`` the judge — the same
    records ``footprint evaluate`` writes; a run already scored ``by`` it is not
    judged again. ``on_scores`` hears the scores written, round by round. A failure
    is counted and named in :meth:`stats` (and logged), never raised. ``close()``
    judges what is queued, for at most ``timeout_s``."""

    def __init__(self, store: str | os.PathLike[str], judge: Judge, *, sample: float = 1.0,
                 by: str | None = None, chain_key: bytes | str | None = None,
                 concurrency: int = 4, flush: Callable[[], object] | None = None,
                 on_scores: Callable[[list[FeedbackRecorded]], object] | None = None,
                 wait_s: float = 30.0, poll_s: float = 0.25) -> None:
        if not callable(judge):
            raise ConfigError(f"evaluate={judge!r} is not a function; pass def JUDGE(run) -> "
                              "recorder.Score")
        if isinstance(sample, bool) or not isinstance(sample, int | float) or \
                not 0 < sample <= 1:
            raise ConfigError(f"sample={sample!r}: pass the fraction of runs to judge, "
                              "above 0 and at most 1, e.g. 0.1")
        if type(concurrency) is not int or concurrency < 1 or wait_s <= 0 or poll_s <= 0:
            raise ConfigError(f"OnlineEvaluation(concurrency={concurrency!r}, wait_s="
                              f"{wait_s!r}, poll_s={poll_s!r}): pass positive numbers")
        from recorder._evaluate import _default_by
        from recorder._feedback import _secret

        self.store, self.judge, self.sample = os.fspath(store), judge, float(sample)
        self.by = by if by is not None else _default_by(judge)
        self.key, self.concurrency, self._flush = _secret(chain_key), concurrency, flush
        self._on_scores = on_scores
        self.wait_s, self.poll_s = wait_s, poll_s
        self._queue: deque[str] = deque()
        self._waiting: dict[str, float] = {}
        self._counts = {"seen": 0, "sampled": 0, "judged": 0, "scores": 0, "missing": 0}
        self._failed: dict[str, str] = {}
        self._wake, self._closing = threading.Event(), False
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def ended(self, run_ids: Iterable[str]) -> None:
        """Runs that ended: those in the sample are queued for the judge."""
        ids = list(run_ids)
        picked = [r for r in ids if sampled(r, self.sample)]
        with self._lock:
            self._counts["seen"] += len(ids)
            self._counts["sampled"] += len(picked)
            self._queue.extend(picked)
            if picked and not self._closing and (
                    self._thread is None or not self._thread.is_alive()):
                self._thread = threading.Thread(target=self._serve, daemon=True,
                                                name="footprint-online-judge")
                self._thread.start()
        if picked:
            self._wake.set()

    def stats(self) -> OnlineStats:
        with self._lock:
            return OnlineStats(**self._counts, failed=dict(self._failed),
                               waiting=len(self._queue) + len(self._waiting))

    def close(self, timeout_s: float = 30.0) -> None:
        """Judge what is queued (at most ``timeout_s``), then stop the thread."""
        with self._lock:
            self._closing, thread = True, self._thread
        self._wake.set()
        if thread is not None:
            thread.join(timeout_s)

    def _serve(self) -> None:
        while True:
            self._wake.wait(self.poll_s)
            self._wake.clear()
            with self._lock:
                now = time.monotonic()
                while self._queue:
                    self._waiting.setdefault(self._queue.popleft(), now)
                closing = self._closing
            if self._waiting:
                try:
                    self._round(closing)
                except Exception as exc:  # the store could not be read: try again later
                    _log.warning("online evaluation: a round failed (%s: %s)",
                                 type(exc).__name__, exc)
            if closing and not self._waiting:
                return

    def _round(self, closing: bool) -> None:
        """Judge the waiting runs that are stored and ended; drop those waited too long."""
        from recorder._evaluate import _Evaluation
        from recorder.store._catalog import open_store
        from recorder.store._runlist import RunQuery, list_runs

        if self._flush is not None:
            self._flush()
        with open_store(self.store) as store:
            query = RunQuery(run_ids=tuple(self._waiting), limit=len(self._waiting),
                             newest_first=False)
            rows = [row for row in list_runs(store, query).to_pylist()
                    if row["status"] != "incomplete"]
            for row in rows:
                self._waiting.pop(row["run_id"], None)
            rows = self._judgeable(store, rows)
            work = _Evaluation(store, self.judge, by=self.by, key=self.key, mirrors=(),
                               on_error=self._fail, progress=None, notice=None)
            try:
                written = work.run(rows, self.concurrency)
            except Exception as exc:  # a judge returned something other than scores
                written = work.written
                self._fail("?", exc)
        self._count(judged=len(rows), scores=len(written))
        if written and self._on_scores is not None:
            self._on_scores(written)
        self._expire(closing)

    def _judgeable(self, store: Store, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The rows not judged ``by`` this judge yet, whose chain takes this key."""
        from recorder._feedback import _formats, _same_keying

        formats = _formats(store, [row["run_id"] for row in rows])
        judged = {str(run) for (run,) in store.rows(
            "SELECT DISTINCT run_id FROM scores WHERE given_by = ?", [self.by])}
        kept = []
        for row in rows:
            try:
                _same_keying(store, row["run_id"], self.key, formats[row["run_id"]])
            except ConfigError as exc:
                self._fail(row["run_id"], exc)
                continue
            if row["run_id"] not in judged:
                kept.append(row)
        return kept

    def _expire(self, closing: bool) -> None:
        limit = time.monotonic() - self.wait_s
        late = [r for r, since in self._waiting.items() if closing or since < limit]
        for run_id in late:
            del self._waiting[run_id]
        self._count(missing=len(late))

    def _count(self, **more: int) -> None:
        with self._lock:
            for name, n in more.items():
                self._counts[name] += n

    def _fail(self, run_id: str, error: Exception) -> None:
        said = f"{type(error).__name__}: {error}"
        with self._lock:
            self._failed[run_id] = said
            n = len(self._failed)
        if n & (n - 1) == 0:  # 1, 2, 4, 8…: logged, never a flood
            _log.warning("online evaluation: %s on run %s (%d failures so far)", said,
                         run_id, n)


class Recorder(_WriteRecorder):
    """``recorder.write``'s :class:`~recorder.write._recorder.Recorder`, which with
    ``evaluate=JUDGE`` also judges a ``sample`` of the runs it records as they end
    (:class:`OnlineEvaluation` on the store of its ``ParquetSink``; the scores given
    ``by`` the judge, default ``judge:MODULE:NAME``). The judge runs on threads of its
    own after the run's events are written: it never raises into, blocks or steers a
    run; what failed is in :meth:`evaluation`. The scores also go to the recorder's
    ``OTelSink`` sinks, as ``gen_ai.evaluation.result`` spans (exported on the
    recorder's own thread, as every event is). ``close()`` (and interpreter exit)
    judges what is queued, for at most its ``timeout_s``, before the sinks close."""

    def __init__(self, sinks: Sequence[object] = (), processors: Sequence[Processor] = (), *,
                 capacity: int = DEFAULT_CAPACITY, batch_size: int = 8192,
                 interval_s: float = 0.05, on_full: OnFull = "drop",
                 evaluate: Judge | None = None, sample: float = 1.0,
                 evaluate_by: str | None = None) -> None:
        self._online: OnlineEvaluation | None = None
        self._scored: deque[FeedbackRecorded] = deque()
        self._otel: list[Sink] = []
        if evaluate is not None:
            from recorder.write._parquet_sink import ParquetSink

            store = next((s for s in sinks if isinstance(s, ParquetSink)), None)
            if store is None:
                raise ConfigError(f"Recorder(evaluate={evaluate!r}) has no ParquetSink among "
                                  f"sinks={list(sinks)!r}: the judge reads the runs from the "
                                  "store; add ParquetSink(PATH)")
            self._online = OnlineEvaluation(
                store.root, evaluate, sample=sample, by=evaluate_by,
                chain_key=store._chain_key, flush=self.flush,  # its own key, as written
                on_scores=self._scored.extend)
        elif sample != 1.0:
            raise ConfigError(f"Recorder(sample={sample!r}) without evaluate=: pass the "
                              "judge too, e.g. Recorder(sinks, evaluate=helpful, sample=0.1)")
        super().__init__(sinks, processors, capacity=capacity, batch_size=batch_size,
                         interval_s=interval_s, on_full=on_full)
        if evaluate is not None:
            from recorder.otel._sink import OTelSink

            self._otel = [s for s in self._sinks if isinstance(s, OTelSink)]

    def _drain(self) -> None:
        super()._drain()
        if self._scored and self._otel:  # on the recorder's thread: a sink sees one caller
            events = [self._scored.popleft() for _ in range(len(self._scored))]
            for sink in self._otel:
                self._guard(sink, "export", functools.partial(sink.export, events))

    def _export(self, batch: list[EventBase]) -> None:
        super()._export(batch)
        if self._online is not None:
            ended = [e.run_id for e in batch if getattr(e, "type", None) in TERMINAL_TYPES]
            if ended:
                self._online.ended(ended)

    def evaluation(self) -> OnlineStats | None:
        """What the online judge did so far (``None`` without ``evaluate=``)."""
        return self._online.stats() if self._online is not None else None

    def close(self, timeout_s: float = 30.0) -> None:
        """Write what was recorded, judge the sampled runs queued (at most ``timeout_s``),
        then close as the base recorder does (the scores reach the OTel sinks first)."""
        if self._online is not None and not self._closed:
            self.flush(timeout_s)
            self._online.close(timeout_s)
        super().close(timeout_s)
