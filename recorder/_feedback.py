"""Feedback and scores on recorded runs: ``feedback(...)``, ``Score``, ``evaluate(...)``.

A score is one ``feedback.recorded`` event of the run it judges. In a store
it is appended after the run's terminal event as a segment of its own (no
sealed file is rewritten): the run's chain is walked and verified first, and
the new record continues it (its row check and the SHA-256 head), so
``footprint verify`` covers it like every other record; the store's score
heads (``recorder.write._scorehead``) make a score segment removed whole a
break too. A run recorded
with a chain key (``ParquetSink(chain_key=…)``) takes feedback only with
that key (``chain_key=…``, ``$FOOTPRINT_CHAIN_KEY``, ``--key-file``): its
head is the HMAC like the run's, and without the key nothing is written. With an
``OTelSink`` it goes out as a ``gen_ai.evaluation.result`` under the run's
root span (``recorder.otel._mapping.evaluation_span``).
"""

from __future__ import annotations

import contextlib
import datetime
import math
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from footprint._errors import ConfigError, RunError
from footprint.events import Event, FeedbackRecorded
from recorder.otel._sink import OTelSink
from recorder.store._catalog import Store, open_store
from recorder.store._filters import score_label_problem, score_name_problem
from recorder.store._runlist import RunQuery, count_runs, list_runs
from recorder.store._verify import ChainTail, chain_tail
from recorder.write._chain import CHAIN_FORMAT, KEY_ENV, KEYED_FORMAT, chain_key
from recorder.write._parquet_sink import ParquetSink
from recorder.write._scorehead import score_head, write_score_heads
from recorder.write._sink import ExportResult

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: feedback writers are not serialized
    fcntl = None  # type: ignore[assignment]

__all__ = ["Score", "StoredRun", "evaluate", "feedback", "record_scores"]

Target = Store | str | os.PathLike[str] | ParquetSink | OTelSink


@dataclass(frozen=True, slots=True, kw_only=True)
class Score:
    """What a judge (or a person) says about a run: a ``value`` and/or a ``label``."""

    name: str
    value: float | None = None
    label: str | None = None
    comment: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ConfigError(f"Score(name={self.name!r}): name the score, e.g. 'helpful'")
        problem = score_name_problem(self.name)
        if problem is not None:
            raise ConfigError(f"Score(name={self.name!r}): the name {problem}, so no filter "
                              f"('NAME<1', --score) could name it; write e.g. 'helpful' or "
                              f"'user rating'")
        value = self.value
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)
                                  or not math.isfinite(value)):
            raise ConfigError(f"Score(value={value!r}): pass a finite number, e.g. 0 or 0.75")
        for key in ("label", "comment"):
            if getattr(self, key) is not None and not isinstance(getattr(self, key), str):
                raise ConfigError(f"Score({key}={getattr(self, key)!r}): pass text or None")
        wrong = None if self.label is None else score_label_problem(self.label)
        if wrong is not None:
            raise ConfigError(f"Score(label={self.label!r}): the label {wrong}, so no filter "
                              f"('{self.name}=LABEL') could match it; write e.g. 'wrong-refund'")
        if value is None and self.label is None:
            raise ConfigError(f"Score(name={self.name!r}): give a value=… or a label=… "
                              "(or both)")


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredRun:
    """One stored run as a judge sees it: its row of ``runs`` and its events on demand."""

    run_id: str
    row: Mapping[str, Any]
    store: Store = field(repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.run_id, str) or not isinstance(self.row, Mapping) or \
                not isinstance(self.store, Store):
            raise ConfigError(f"StoredRun(run_id={self.run_id!r}, …): pass a run id, its row "
                              "of runs (a mapping) and the open Store")

    @property
    def answer(self) -> str | None:
        value = self.row.get("answer")
        return value if isinstance(value, str) else None

    @property
    def status(self) -> str:
        return str(self.row.get("status"))

    def events(self) -> list[Event]:
        """The run's typed events, in seq order."""
        return self.store.events(self.run_id)


def _moment(at: datetime.datetime | int | None) -> int:
    if at is None:
        return time.time_ns()
    if isinstance(at, datetime.datetime):
        aware = at if at.tzinfo else at.replace(tzinfo=datetime.UTC)
        return int(aware.timestamp() * 10**6) * 1000
    if type(at) is int and at >= 0:
        return at
    raise ConfigError(f"feedback(at={at!r}): pass a datetime or UTC nanoseconds (or None: now)")


def feedback(target: Target | Sequence[Target], run_id: str, name: str, *,
             value: float | None = None, label: str | None = None,
             comment: str | None = None, by: str | None = None,
             at: datetime.datetime | int | None = None,
             chain_key: bytes | str | None = None) -> FeedbackRecorded:
    """Attach a score to a recorded run; returns the ``feedback.recorded`` event written.

    ``target``: a store (``Store``, a path, or the ``ParquetSink`` that wrote
    it), an ``OTelSink``, or a sequence of those. In a store the run is found
    by id (a unique prefix or ``last`` works), its chain verified, and the
    event appended after its end in a new segment. ``at`` defaults to now.
    ``chain_key`` (default ``$FOOTPRINT_CHAIN_KEY``): the key a keyed run was
    recorded with; a keyed run without it, or a plain run with one, is refused.
    """
    score = Score(name=name, value=value, label=label, comment=comment)
    if by is not None and not isinstance(by, str):
        raise ConfigError(f"feedback(by={by!r}): pass who gave it as text (a user id)")
    return record_scores(target, [(run_id, score)], by=by, at=_moment(at),
                         chain_key=chain_key)[0]


def record_scores(target: Target | Sequence[Target], scores: Iterable[tuple[str, Score]], *,
                  by: str | None = None, at: int | None = None,
                  chain_key: bytes | str | None = None) -> list[FeedbackRecorded]:
    """Write many ``(run_id, Score)`` at once: one new segment for all of them
    (``chain_key``: as :func:`feedback` takes it)."""
    stores, mirrors = _targets(target)
    pending = list(scores)
    events: list[FeedbackRecorded] = []
    stamp = time.time_ns() if at is None else at
    if stores:
        secret = _secret(chain_key)
        for root in stores:
            events = _append(root, pending, by, stamp, secret)
    else:
        events = [_event(run, score, by, stamp, seq=0, turn=0) for run, score in pending]
    for sink in mirrors:
        if sink.export(events) is not ExportResult.SUCCESS:
            raise RunError(f"the OTelSink {sink!r} refused the feedback (it was shut down); "
                           "pass an open one")
        sink.force_flush()
    return events


def _targets(target: object) -> tuple[list[Store | str | os.PathLike[str]], list[OTelSink]]:
    many = target if isinstance(target, list | tuple) else [target]
    stores: list[Store | str | os.PathLike[str]] = []
    mirrors: list[OTelSink] = []
    for one in many:
        if isinstance(one, OTelSink):
            mirrors.append(one)
        elif isinstance(one, ParquetSink):
            one.force_flush()
            stores.append(one.root)
        elif isinstance(one, Store | str | os.PathLike):
            stores.append(one)
        else:
            raise ConfigError(f"feedback target {one!r}: pass a store (Store, path or "
                              "ParquetSink), an OTelSink, or a list of them")
    if len(stores) > 1:
        raise ConfigError(f"feedback: {len(stores)} stores given; a score belongs to one store")
    return stores, mirrors


def _secret(given: bytes | str | None) -> bytes | None:
    """The key feedback is chained with: ``given``, else ``$FOOTPRINT_CHAIN_KEY``, else none."""
    raw = given if given is not None else os.environ.get(KEY_ENV) or None
    try:
        return chain_key(raw, origin="feedback(chain_key=…)" if given is not None
                         else f"${KEY_ENV}")
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def _event(run_id: str, score: Score, by: str | None, ts: int, *, seq: int,
           turn: int) -> FeedbackRecorded:
    return FeedbackRecorded(
        run_id=run_id, seq=seq, ts=ts, turn=turn, step_id=f"feedback#{seq}",
        name=score.name, value=None if score.value is None else float(score.value),
        label=score.label, comment=score.comment, by=by)


@contextlib.contextmanager
def _one_at_a_time(root: Path) -> Iterator[None]:
    """Hold ``<store>/feedback.lock``: two feedback writers on one machine never take the
    same seq of a run (each reads the run's tail, then appends after it)."""
    with open(root / "feedback.lock", "ab") as file:
        if fcntl is not None:
            fcntl.flock(file.fileno(), fcntl.LOCK_EX)
        yield


def _append(where: Store | str | os.PathLike[str], pending: list[tuple[str, Score]],
            by: str | None, ts: int, key: bytes | None) -> list[FeedbackRecorded]:
    store = where if isinstance(where, Store) else open_store(where)
    try:
        with _one_at_a_time(store.root):
            return _append_locked(store, pending, by, ts, key)
    finally:
        if not isinstance(where, Store):
            store.close()


def _append_locked(store: Store, pending: list[tuple[str, Score]], by: str | None,
                   ts: int, key: bytes | None) -> list[FeedbackRecorded]:
    store.refresh()
    tails: dict[str, tuple[ChainTail, int]] = {}
    events: list[FeedbackRecorded] = []
    for ref, score in pending:
        run_id = store.resolve_run(ref)
        if run_id not in tails:
            tails[run_id] = (_tail(store, run_id, key), _turn(store, run_id))
        tail, turn = tails[run_id]
        seq = tail.next_seq + len([e for e in events if e.run_id == run_id])
        events.append(_event(run_id, score, by, ts, seq=seq, turn=turn))
    _write(store.root, events, [t for t, _ in tails.values()], key)
    store.refresh()
    _score_heads(store, sorted(tails), key)
    return events


def _score_heads(store: Store, runs: list[str], key: bytes | None) -> None:
    """Record where each scored run's chain now ends (``recorder.write._scorehead``), so
    removing a score segment later is a break ``verify`` names."""
    latest = store.rows(
        "SELECT run_id, last_seq, head FROM _chain_all WHERE run_id IN ? "
        "QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY last_seq DESC) = 1", [runs])
    counts = dict(store.rows("SELECT run_id, count(*) FILTER (WHERE type = "
                             "'feedback.recorded') FROM _events_all WHERE run_id IN ? "
                             "GROUP BY run_id", [runs]))
    ends = dict(store.rows("SELECT run_id, max(seq) FROM _events_all WHERE run_id IN ? "
                           "GROUP BY run_id", [runs]))
    heads = {str(run): (int(seq), int(counts[run]), score_head(key, bytes(head),
                                                              int(counts[run])))
             for run, seq, head in latest if int(seq) == ends.get(run)}
    write_score_heads(store.root, heads, KEYED_FORMAT if key is not None else CHAIN_FORMAT)


def _tail(store: Store, run_id: str, key: bytes | None) -> ChainTail:
    _same_keying(store, run_id, key)
    tail = chain_tail(store, run_id, key=key)
    if not isinstance(tail, ChainTail):
        raise RunError(f"run {run_id!r} cannot take feedback: its chain is {tail.summary()}; "
                       f"see `footprint verify {run_id}`")
    if not tail.ended:
        raise RunError(f"run {run_id!r} has not ended (still running, or cut off); "
                       "feedback goes on a run that ended")
    return tail


def _formats(store: Store, run_ids: list[str]) -> dict[str, set[str]]:
    """The chain head formats of each run (one query for them all)."""
    out: dict[str, set[str]] = {run_id: set() for run_id in run_ids}
    if run_ids:
        for run_id, fmt in store.rows("SELECT DISTINCT run_id, format FROM _chain_all "
                                      "WHERE run_id IN ?", [run_ids]):
            out[run_id].add(fmt)
    return out


def _same_keying(store: Store, run_id: str, key: bytes | None,
                 kinds: set[str] | None = None) -> None:
    """Refuse feedback whose head would not be the kind the run's heads are: HMACs under
    the key for a keyed run, plain digests for a plain one (``kinds``: the run's head
    formats, when the caller read them already)."""
    if kinds is None:
        kinds = _formats(store, [run_id])[run_id]
    where = str(store.root)
    if KEYED_FORMAT in kinds and key is None:
        raise ConfigError(
            f"run {run_id!r} in store {where!r} was recorded with a chain key, and its "
            "feedback must be chained with the same key: pass `--key-file FILE` (footprint "
            f"feedback/evaluate), chain_key=… (recorder.feedback/evaluate) or ${KEY_ENV}")
    if kinds and KEYED_FORMAT not in kinds and key is not None:
        raise ConfigError(
            f"run {run_id!r} in store {where!r} was recorded without a chain key, but a key "
            f"was given (--key-file, chain_key=… or ${KEY_ENV}); drop it so the feedback is "
            "chained like the run")


def _turn(store: Store, run_id: str) -> int:
    found = store.rows("SELECT max(turn) FROM _events_all WHERE run_id = ?", [run_id])
    return int(found[0][0] or 0)


def _write(root: Any, events: list[FeedbackRecorded], tails: list[ChainTail],
           key: bytes | None) -> None:
    sink = ParquetSink(root, adopt=False, chain_key=key)
    try:
        for tail in tails:
            sink.resume_chain(tail.run_id, check=tail.check, stream=tail.stream,
                              records=tail.records)
        sink.export(events)
    finally:
        sink.shutdown()


Judge = Callable[[StoredRun], "Score | Iterable[Score] | None"]
OnJudgeError = Callable[[str, Exception], object]


def evaluate(store: Store | str | os.PathLike[str], judge: Judge, *,
             where: str | Mapping[str, object] | None = None, by: str | None = None,
             progress: Callable[[int, int], object] | None = None,
             mirrors: Sequence[OTelSink] = (),
             chain_key: bytes | str | None = None,
             on_error: OnJudgeError | None = None) -> list[FeedbackRecorded]:
    """Run ``judge(run) -> Score`` (or several, or ``None``) over the stored runs that
    match ``where`` and record what it returns as feedback (``by``: the judge's name).
    ``progress(done, total)`` hears each run; ``chain_key`` as :func:`feedback` takes it.
    A judge that raises on a run: with ``on_error(run_id, error)`` that run is skipped
    (``on_error`` hears why) and the others are scored; without it, a ``RunError`` naming
    the run and the judge's error, before anything is written."""
    secret = _secret(chain_key)
    opened = store if isinstance(store, Store) else open_store(store)
    try:
        scores = list(_judged(opened, judge, where, progress, secret, on_error))
        if not scores:
            return []
        return record_scores([opened, *mirrors], scores, by=by, chain_key=secret)
    finally:
        if not isinstance(store, Store):
            opened.close()


def _judged(store: Store, judge: Judge, where: str | Mapping[str, object] | None,
            progress: Callable[[int, int], object] | None, key: bytes | None,
            on_error: OnJudgeError | None) -> Iterator[tuple[str, Score]]:
    query = RunQuery.from_where(where or {}, limit=10**9, newest_first=False)
    total = count_runs(store, query)
    rows = list_runs(store, query).to_pylist()
    formats = _formats(store, [r["run_id"] for r in rows if r["status"] != "incomplete"])
    for done, row in enumerate(rows, 1):
        if row["status"] != "incomplete":  # still running or cut off: nothing to judge yet
            # refused before the judge spends anything on it
            _same_keying(store, row["run_id"], key, formats[row["run_id"]])
            for score in _judge_one(store, judge, row, on_error):
                yield row["run_id"], score
        if progress is not None:
            progress(done, total)


def _judge_one(store: Store, judge: Judge, row: dict[str, Any],
               on_error: OnJudgeError | None) -> list[Score]:
    """What ``judge`` says of one run, as a list of scores (``[]`` when it raised and
    ``on_error`` heard it)."""
    run_id = row["run_id"]
    try:
        said = judge(StoredRun(run_id=run_id, row=row, store=store))
        many = [said] if isinstance(said, Score) else _many(said)
    except _WrongReturn as wrong:
        raise ConfigError(f"judge returned {wrong.args[0]!r} for run {run_id!r}; return a "
                          "recorder.Score (or a list of them, or None)") from None
    except Exception as exc:
        if on_error is None:
            raise RunError(f"the judge raised {type(exc).__name__} on run {run_id!r}: {exc}; "
                           "fix the judge, or pass on_error= to score the other runs and "
                           "hear which failed") from exc
        on_error(run_id, exc)
        return []
    return many


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
