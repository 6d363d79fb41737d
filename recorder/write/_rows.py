"""Events -> Arrow: the store's columns, converted a batch at a time, class by class."""

from __future__ import annotations

import copy
import dataclasses
import logging
from collections.abc import Callable, Iterable
from typing import NamedTuple

import pyarrow as pa

from footprint.events import ENVELOPE_FIELDS, TERMINAL_TYPES, EventBase
from recorder.write._columns import convert, offer_gil
from recorder.write._extract import BLOB_KEY, BlobSink
from recorder.write._hot import HOT_FIELDS, hot_fields, hot_plan
from recorder.write._safe import safe_text, safe_value
from recorder.write._schemas import (
    BLOB_SCHEMA,
    CHAIN_SCHEMA,
    ENVELOPE_NAMES,
    EVENT_SCHEMA,
    STATS_SCHEMA,
)

__all__ = [
    "BLOB_KEY",
    "BLOB_SCHEMA",
    "CHAIN_SCHEMA",
    "ENVELOPE_NAMES",
    "EVENT_SCHEMA",
    "HOT_FIELDS",
    "STATS_SCHEMA",
    "RowBuilder",
    "RunTail",
    "hot_fields",
    "hot_plan",
]



_log = logging.getLogger("recorder")
_ENVELOPE = frozenset(ENVELOPE_FIELDS)


def escaped_event(event: EventBase) -> EventBase:
    """A copy of ``event`` whose every text and value can be stored (``recorder.write._safe``):
    the envelope's texts escaped, every payload value in its escaped form."""
    clean = copy.copy(event)  # set field by field: no validation may refuse the escaped form
    for f in dataclasses.fields(event):
        value = getattr(event, f.name)
        if f.name not in _ENVELOPE:
            object.__setattr__(clean, f.name, safe_value(value))
        elif isinstance(value, str):
            object.__setattr__(clean, f.name, safe_text(value))
    return clean


class RunTail(NamedTuple):
    """A run's last record so far: its seq and its type tag."""

    seq: int
    type: str


_CHUNK = 8192
"""Events converted per pass (the recorder's batch size): each pass makes a few dozen Arrow
calls whatever its size, and keeps only one envelope tuple per event alive."""


class RowBuilder:
    """Turns events into Arrow batches, keeping each run's row check between batches.

    ``add``/``add_all`` only queue; :meth:`take` converts everything queued
    in one columnar pass (grouped by event class) and continues
    ``checks`` (``run_id -> row_check`` of its last row; a run is forgotten once
    ``keep_ended`` runs have ended after it, so the map does not grow with every run).
    Blobs already written by this builder are not written again, so a repeated prompt is
    stored once per writer (the last ``seen_blob_limit`` digests are remembered:
    ``recorder.write._extract.BlobSink``).
    """

    def __init__(self, *, blob_min_chars: int = 256, seen_blob_limit: int = 32_768,
                 keep_ended: int = 1024, offer: Callable[[], object] = offer_gil) -> None:
        self.blob_min_chars = blob_min_chars
        self._offer = offer
        """Called every few hundred events converted, to let another thread take the GIL."""
        self._ended: dict[str, None] = {}
        self._keep_ended = keep_ended
        self._blobs = BlobSink(blob_min_chars, seen_blob_limit)
        self.checks: dict[str, int] = {}
        self._pending: list[EventBase] = []
        self._tails: dict[str, RunTail] = {}
        self.last_runs: list[str] = []
        """The run id of every row the last :meth:`take` returned, in emit order."""
        self.rejected: dict[str, int] = {}
        """Per run, events that could not be stored even in escaped form (dropped, counted)."""

    def __len__(self) -> int:
        return len(self._pending)

    def add(self, event: EventBase) -> None:
        self._pending.append(event)

    def add_all(self, events: Iterable[EventBase]) -> None:
        self._pending.extend(events)

    def take(self) -> tuple[list[pa.RecordBatch], pa.RecordBatch | None]:
        """The queued events as Arrow batches (one per chunk) and their new blobs (or ``None``).

        A chunk that fails to convert is split in halves until the failing event
        stands alone (``_isolate``): every other event of it is kept.
        """
        pending, self._pending = self._pending, []
        batches = []
        self.last_runs = []
        for at in range(0, len(pending), _CHUNK):
            for batch, runs, events in self._isolate(pending[at:at + _CHUNK]):
                self._note_tails(runs, events)
                batches.append(batch)
                self.last_runs += runs
        return batches, self._blob_batch()

    def _isolate(self, events: list[EventBase]) -> list[tuple[pa.RecordBatch, list[str],
                                                              list[EventBase]]]:
        """``events`` converted, in emit order; a failing one is escaped or, failing that,
        rejected (counted per run in :attr:`rejected`, and named in the log)."""
        try:
            batch, runs = convert(events, self._blobs, self.checks, EVENT_SCHEMA,
                                  self._offer)
        except Exception as exc:
            if len(events) > 1:
                half = len(events) // 2
                return self._isolate(events[:half]) + self._isolate(events[half:])
            return self._rescue(events[0], exc)
        return [(batch, runs, events)]

    def _rescue(self, event: EventBase, exc: Exception) -> list[tuple[pa.RecordBatch, list[str],
                                                                      list[EventBase]]]:
        try:
            clean = escaped_event(event)
            batch, runs = convert([clean], self._blobs, self.checks, EVENT_SCHEMA)
        except Exception as again:
            run = str(getattr(event, "run_id", "?"))
            self.rejected[run] = n = self.rejected.get(run, 0) + 1
            if n & (n - 1) == 0:  # 1, 2, 4, 8…: named, never a flood
                _log.warning("recorder: event %s seq %r of run %r cannot be stored and was "
                             "dropped (%s: %s; %d so far in this run)",
                             getattr(event, "type", type(event).__name__),
                             getattr(event, "seq", None), run, type(again).__name__, again, n)
            return []
        _log.debug("recorder: event seq %r of run %r stored in escaped form (%s)",
                   event.seq, event.run_id, exc)
        return [(batch, runs, [clean])]

    def _blob_batch(self) -> pa.RecordBatch | None:
        found = self._blobs.take()
        if not found:
            return None
        texts = list(found.values())
        return pa.RecordBatch.from_arrays(
            [pa.array(list(found), pa.string()), pa.array(list(map(len, texts)), pa.int64()),
             pa.array(texts, pa.large_string())],
            schema=BLOB_SCHEMA,
        )

    def take_tails(self) -> dict[str, RunTail]:
        """Per run, the :class:`RunTail` of the rows taken since the last call."""
        tails, self._tails = self._tails, {}
        return tails

    def _note_tails(self, runs: list[str], events: list[EventBase]) -> None:
        """Each run's last event of a chunk (emit order)."""
        if runs.count(runs[0]) == len(runs):  # one run: its last event
            last = {runs[0]: events[-1]}
        else:
            last = dict(zip(runs, events, strict=True))
        ended = self._ended
        for run, event in last.items():
            tag = getattr(event, "type", "")
            self._tails[run] = RunTail(event.seq, tag)
            ended.pop(run, None)
            if tag in TERMINAL_TYPES:
                ended[run] = None
        while len(ended) > self._keep_ended:  # as RunHeads forgets its stream: a straggler
            run = next(iter(ended))  # after that many later ends starts a new chain
            del ended[run]
            self.checks.pop(run, None)
