"""``evaluate(store, judge, …)``: a judge over stored runs, many at a time, its scores
kept as they come.

The runs that match ``where`` and ended are judged ``concurrency`` at a time on
a thread pool (a judge that asks a model spends its time waiting for it). Each
judge call gets a :class:`StoredRun`; what it returns is written as it comes,
in batches: every :data:`FLUSH_SCORES` scores or :data:`FLUSH_S` seconds,
whichever is first, one ``record_scores`` batch (one segment, its chains
walked together, one update of the score heads; ``recorder._feedback``).

A run already holding a score given by this judge (``scores.given_by`` is
``by``) is skipped unless ``force``: running an evaluation again judges what is
left. Ctrl-C while ``evaluate`` runs on the main thread: no new run is
started, the runs being judged finish, every score is written, then
:class:`EvaluateInterrupted` (a ``KeyboardInterrupt``) is raised. A second
Ctrl-C stops waiting: the finished scores are written and the judges still
running are abandoned (their threads end when the judge returns).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from footprint._errors import ConfigError, RunError
from footprint.events import Event, FeedbackRecorded
from recorder._feedback import Score, _formats, _same_keying, _secret, record_scores
from recorder.otel._sink import OTelSink
from recorder.store._catalog import Store, open_store
from recorder.store._runlist import RunQuery, list_runs

__all__ = ["FLUSH_S", "FLUSH_SCORES", "EvaluateInterrupted", "Judge", "StoredRun", "evaluate"]

FLUSH_SCORES = 500
"""Scores held before they are written."""
FLUSH_S = 2.0
"""Seconds a finished score waits at most before it is written."""
_POLL_S = 0.1


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredRun:
    """One stored run as a judge sees it: its row of ``runs`` and its events on demand.

    ``lock``: held while :meth:`events` reads the store (``evaluate`` judges many runs at
    once on threads over one store; a DuckDB connection serves one thread at a time)."""

    run_id: str
    row: Mapping[str, Any]
    store: Store = field(repr=False)
    lock: contextlib.AbstractContextManager[Any] | None = field(default=None, repr=False,
                                                                compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.run_id, str) or not isinstance(self.row, Mapping) or \
                not isinstance(self.store, Store):
            raise ConfigError(f"StoredRun(run_id={self.run_id!r}, …): pass a run id, its row "
                              "of runs (a mapping) and the open Store")
        if self.lock is not None and not hasattr(self.lock, "__enter__"):
            raise ConfigError(f"StoredRun(lock={self.lock!r}): pass a threading.Lock or None")

    @property
    def answer(self) -> str | None:
        value = self.row.get("answer")
        return value if isinstance(value, str) else None

    @property
    def status(self) -> str:
        return str(self.row.get("status"))

    def events(self) -> list[Event]:
        """The run's typed events, in seq order."""
        with self.lock if self.lock is not None else contextlib.nullcontext():
            return self.store.events(self.run_id)


Judge = Callable[[StoredRun], "Score | Iterable[Score] | None"]
OnJudgeError = Callable[[str, Exception], object]


class EvaluateInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped :func:`evaluate`: ``recorded`` is every score it wrote (all kept),
    ``abandoned`` how many judges were still running when a second Ctrl-C stopped it."""

    def __init__(self, recorded: list[FeedbackRecorded], abandoned: int) -> None:
        super().__init__(f"evaluation interrupted: {len(recorded)} scores recorded, "
                         f"{abandoned} judges abandoned")
        self.recorded, self.abandoned = recorded, abandoned


def evaluate(store: Store | str | os.PathLike[str], judge: Judge, *,
             where: str | Mapping[str, object] | None = None, by: str | None = None,
             progress: Callable[[int, int], object] | None = None,
             mirrors: Sequence[OTelSink] = (),
             chain_key: bytes | str | None = None,
             on_error: OnJudgeError | None = None, concurrency: int = 8,
             force: bool = False, skipped: Callable[[list[str]], object] | None = None,
             notice: Callable[[str], object] | None = None) -> list[FeedbackRecorded]:
    """Run ``judge(run) -> Score`` (or several, or ``None``) over the stored runs that
    match ``where`` and ended, ``concurrency`` at a time, and record what it returns as
    feedback given ``by`` the judge (default ``judge:MODULE:NAME``), batch by batch as
    they come; the scores written, in the order written.

    A run already holding a score given ``by`` this judge is skipped (``skipped`` hears
    their ids) unless ``force``. ``progress(done, total)`` hears each judged run (``total``:
    the runs to judge); ``chain_key`` as ``feedback`` takes it (a keyed run without it is
    refused before any judge runs). A judge that raises on a run, or a run whose chain
    cannot take a score: with ``on_error(run_id, error)`` that run is left unscored and
    the others are scored; without it, no new run is started, the scores finished are
    written, and a ``RunError`` names the run. A judge returning something other than
    scores: the same, with a ``ConfigError``. Ctrl-C: see the module; ``notice`` hears
    what an interrupt does, in a sentence."""
    if type(concurrency) is not int or concurrency < 1:
        raise ConfigError(f"evaluate(concurrency={concurrency!r}): pass a whole number >= 1, "
                          "e.g. 8")
    secret = _secret(chain_key)
    given_by = by if by is not None else _default_by(judge)
    opened = store if isinstance(store, Store) else open_store(store)
    try:
        query = RunQuery.from_where(where or {}, limit=10**9, newest_first=False)
        rows = _to_judge(opened, query, given_by, secret, force, skipped)
        work = _Evaluation(opened, judge, by=given_by, key=secret, mirrors=mirrors,
                           on_error=on_error, progress=progress, notice=notice)
        return work.run(rows, concurrency)
    finally:
        if not isinstance(store, Store):
            opened.close()


def _default_by(judge: object) -> str:
    module = getattr(judge, "__module__", None) or "?"
    name = getattr(judge, "__qualname__", None) or type(judge).__qualname__
    return f"judge:{module}:{name}"


def _to_judge(store: Store, query: RunQuery, by: str, key: bytes | None, force: bool,
              skipped: Callable[[list[str]], object] | None) -> list[dict[str, Any]]:
    """The rows of the runs to judge, oldest first: matching ``query``, ended, keyed as
    ``key`` is (else ``ConfigError`` before any judge runs), not yet judged ``by``
    (unless ``force``)."""
    rows = [row for row in list_runs(store, query).to_pylist()
            if row["status"] != "incomplete"]  # still running or cut off: nothing to judge
    formats = _formats(store, [row["run_id"] for row in rows])
    for row in rows:
        _same_keying(store, row["run_id"], key, formats[row["run_id"]])
    if force or not rows:
        return rows
    judged = {str(run) for (run,) in store.rows(
        "SELECT DISTINCT run_id FROM scores WHERE given_by = ?", [by])}
    if skipped is not None:
        skipped([row["run_id"] for row in rows if row["run_id"] in judged])
    return [row for row in rows if row["run_id"] not in judged]


class _Evaluation:
    """One evaluation's loop: judges on a pool, scores gathered and written in batches,
    on the calling thread (see the module)."""

    def __init__(self, store: Store, judge: Judge, *, by: str, key: bytes | None,
                 mirrors: Sequence[OTelSink], on_error: OnJudgeError | None,
                 progress: Callable[[int, int], object] | None,
                 notice: Callable[[str], object] | None) -> None:
        self.store, self.judge, self.by, self.key, self.mirrors = store, judge, by, key, mirrors
        self.on_error, self.progress, self.notice = on_error, progress, notice
        self.lock = threading.Lock()
        self.pending: list[tuple[str, Score]] = []
        self.since = 0.0
        self.written: list[FeedbackRecorded] = []
        self.failure: Exception | None = None
        self.stops, self.told = 0, 0
        self.running: dict[Future[list[Score] | Exception], dict[str, Any]] = {}

    def run(self, rows: list[dict[str, Any]], concurrency: int) -> list[FeedbackRecorded]:
        todo, done = iter(rows), 0
        if self.progress is not None:
            self.progress(0, len(rows))
        pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="footprint-judge")
        try:
            with _ctrl_c(self.interrupt):
                while True:
                    self._heed()
                    self._start(pool, todo, 2 * concurrency)
                    if not self.running or self.stops >= 2:
                        break
                    finished, _ = wait(self.running, timeout=_POLL_S,
                                       return_when=FIRST_COMPLETED)
                    for future in finished:
                        self._take(self.running.pop(future), future.result())
                        done += 1
                        if self.progress is not None:
                            self.progress(done, len(rows))
                    if len(self.pending) >= FLUSH_SCORES or (
                            self.pending and time.monotonic() - self.since >= FLUSH_S):
                        self._flush()
                self._flush()
        finally:
            pool.shutdown(wait=self.stops < 2, cancel_futures=True)
        return self._outcome()

    def _start(self, pool: ThreadPoolExecutor, todo: Iterator[dict[str, Any]],
               most: int) -> None:
        """Start judging runs until ``most`` are running (none once told to stop)."""
        while not self.stops and self.failure is None and len(self.running) < most:
            row = next(todo, None)
            if row is None:
                return
            run = StoredRun(run_id=row["run_id"], row=row, store=self.store, lock=self.lock)
            self.running[pool.submit(_ask, self.judge, run)] = row

    def _take(self, row: dict[str, Any], said: list[Score] | Exception) -> None:
        run_id = str(row["run_id"])
        if isinstance(said, list):
            if said and not self.pending:
                self.since = time.monotonic()
            self.pending += [(run_id, score) for score in said]
        elif isinstance(said, _WrongReturn):
            self._fail(ConfigError(f"judge returned {said.args[0]!r} for run {run_id!r}; "
                                   "return a recorder.Score (or a list of them, or None)"))
        elif self.on_error is not None:
            self.on_error(run_id, said)
        else:
            error = RunError(f"the judge raised {type(said).__name__} on run {run_id!r}: "
                             f"{said}; fix the judge, or pass on_error= to score the other "
                             "runs and hear which failed")
            error.__cause__ = said
            self._fail(error)

    def _fail(self, error: Exception) -> None:
        """Stop starting runs; the first failure is raised once the running ones finish."""
        if self.failure is None:
            self.failure = error

    def _refused(self, run_id: str, error: RunError) -> None:
        if self.on_error is not None:
            self.on_error(run_id, error)
        else:
            self._fail(error)

    def _flush(self) -> None:
        if not self.pending:
            return
        batch, self.pending = self.pending, []
        with self.lock:
            self.written += record_scores([self.store, *self.mirrors], batch, by=self.by,
                                          chain_key=self.key, refused=self._refused)

    def interrupt(self) -> None:
        """Ctrl-C (the signal handler): the first stops starting runs, the second stops
        waiting for them; the loop acts on it (:meth:`_heed`)."""
        self.stops += 1

    def _heed(self) -> None:
        """Act on a new Ctrl-C: drop the runs queued but not started, say what happens."""
        if self.told >= self.stops:
            return
        self.told = self.stops
        for future in [f for f in self.running if f.cancel()]:
            del self.running[future]
        if self.notice is None:
            return
        if self.told == 1:
            self.notice(f"stopping: waiting for the {len(self.running)} judges running, then "
                        "writing every score (Ctrl-C again to stop now)")
        else:
            self.notice(f"stopping now: writing the finished scores; {len(self.running)} "
                        "judges abandoned")

    def _outcome(self) -> list[FeedbackRecorded]:
        if self.stops:
            raise EvaluateInterrupted(self.written, len(self.running))
        if self.failure is not None:
            raise self.failure
        return self.written


@contextlib.contextmanager
def _ctrl_c(interrupt: Callable[[], None]) -> Iterator[None]:
    """SIGINT calls ``interrupt()`` instead of raising, while the block runs on the main
    thread (elsewhere no handler can be set: a ``KeyboardInterrupt`` stays one)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, lambda _signum, _frame: interrupt())
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler if previous is None
                      else previous)


def _ask(judge: Judge, run: StoredRun) -> list[Score] | Exception:
    """What ``judge`` says of one run, as a list of scores, or what it raised (a
    :class:`_WrongReturn` for something other than scores)."""
    try:
        said = judge(run)
        return [said] if isinstance(said, Score) else _many(said)
    except Exception as exc:
        return exc


class _WrongReturn(Exception):
    """A judge returned something other than scores (its ``args[0]``)."""


def _many(said: object) -> list[Score]:
    if said is None:
        return []
    if isinstance(said, str | bytes | Mapping) or not isinstance(said, Iterable):
        raise _WrongReturn(said)
    many = list(said)
    for score in many:
        if not isinstance(score, Score):
            raise _WrongReturn(score)
    return many

