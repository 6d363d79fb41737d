"""Feedback and scores on recorded runs: ``feedback(...)``, ``Score``, ``record_scores(...)``.

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
root span (``recorder.otel._mapping.evaluation_span``). A batch of scores on
many runs (``record_scores``; ``recorder._evaluate`` writes a judge's that way)
walks all their chains in a few queries (``recorder.store._tails``) and goes
into one segment, with one update of the score heads.
"""

from __future__ import annotations

import contextlib
import datetime
import math
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from footprint._errors import ConfigError, RunError
from footprint.events import FeedbackRecorded
from recorder.otel._sink import OTelSink
from recorder.store._catalog import Store, open_store
from recorder.store._filters import score_label_problem, score_name_problem
from recorder.store._tails import chain_tails
from recorder.store._verify import ChainTail, VerifyResult
from recorder.write._chain import CHAIN_FORMAT, KEY_ENV, KEYED_FORMAT, chain_key
from recorder.write._parquet_sink import ParquetSink
from recorder.write._scorehead import score_head, write_score_heads
from recorder.write._sink import ExportResult

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: feedback writers are not serialized
    fcntl = None  # type: ignore[assignment]

__all__ = ["Refused", "Score", "feedback", "record_scores"]

Target = Store | str | os.PathLike[str] | ParquetSink | OTelSink
Refused = Callable[[str, RunError], object]
"""``refused(run_id, error)``: a run whose chain cannot take feedback, left out of the batch."""


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
                  chain_key: bytes | str | None = None,
                  refused: Refused | None = None) -> list[FeedbackRecorded]:
    """Write many ``(run_id, Score)`` at once: one new segment for all of them
    (``chain_key``: as :func:`feedback` takes it). A run whose chain cannot take them
    (broken, or not ended) raises ``RunError`` before anything is written; with
    ``refused(run_id, error)`` its scores are left out, it is named to ``refused``, and
    the others are written."""
    stores, mirrors = _targets(target)
    pending = list(scores)
    events: list[FeedbackRecorded] = []
    stamp = time.time_ns() if at is None else at
    if stores:
        secret = _secret(chain_key)
        for root in stores:
            events = _append(root, pending, by, stamp, secret, refused)
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
            by: str | None, ts: int, key: bytes | None,
            refused: Refused | None = None) -> list[FeedbackRecorded]:
    store = where if isinstance(where, Store) else open_store(where)
    try:
        with _one_at_a_time(store.root):
            return _append_locked(store, pending, by, ts, key, refused)
    finally:
        if not isinstance(where, Store):
            store.close()


def _append_locked(store: Store, pending: list[tuple[str, Score]], by: str | None,
                   ts: int, key: bytes | None,
                   refused: Refused | None) -> list[FeedbackRecorded]:
    """Append ``pending`` after each run's verified chain, all in one segment (a run whose
    chain cannot take it raises, or with ``refused`` is left out and named to it)."""
    store.refresh()
    ids, turns = _resolved(store, [ref for ref, _ in pending])
    tails = _tails(store, sorted(set(ids)), key, refused)
    events: list[FeedbackRecorded] = []
    taken: Counter[str] = Counter()
    for run_id, (_, score) in zip(ids, pending, strict=True):
        if run_id in tails:
            seq = tails[run_id].next_seq + taken[run_id]
            taken[run_id] += 1
            events.append(_event(run_id, score, by, ts, seq=seq, turn=turns[run_id]))
    if not events:
        return []
    _write(store.root, events, list(tails.values()), key)
    store.refresh()
    _score_heads(store, sorted(tails), key)
    return events


def _resolved(store: Store, refs: list[str]) -> tuple[list[str], dict[str, int]]:
    """Each ref's full run id (a full id, a unique prefix or ``last``) and each run's last
    turn, the full ids found in one query."""
    turns = {str(run): int(turn or 0) for run, turn in store.rows(
        "SELECT run_id, max(turn) FROM _events_all WHERE run_id IN ? GROUP BY run_id",
        [sorted(set(refs))])} if refs else {}
    ids = [ref if ref in turns else store.resolve_run(ref) for ref in refs]
    for run_id in set(ids) - turns.keys():
        turns[run_id] = _turn(store, run_id)
    return ids, turns


def _tails(store: Store, runs: list[str], key: bytes | None,
           refused: Refused | None) -> dict[str, ChainTail]:
    """The runs' verified chain tails; a keying that differs from a run's is refused
    before anything is walked."""
    kinds = _formats(store, runs)
    for run_id in runs:
        _same_keying(store, run_id, key, kinds[run_id])
    usable: dict[str, ChainTail] = {}
    for run_id, tail in chain_tails(store, runs, key=key).items():
        problem = _unusable(run_id, tail)
        if problem is None and isinstance(tail, ChainTail):
            usable[run_id] = tail
        elif refused is None:
            raise problem or RunError(f"run {run_id!r} cannot take feedback")
        else:
            refused(run_id, problem or RunError(f"run {run_id!r} cannot take feedback"))
    return usable


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


def _unusable(run_id: str, tail: ChainTail | VerifyResult) -> RunError | None:
    """Why feedback cannot continue the run's chain, or ``None``."""
    if not isinstance(tail, ChainTail):
        return RunError(f"run {run_id!r} cannot take feedback: its chain is {tail.summary()}; "
                        f"see `footprint verify {run_id}`")
    if not tail.ended:
        return RunError(f"run {run_id!r} has not ended (still running, or cut off); "
                        "feedback goes on a run that ended")
    return None


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
