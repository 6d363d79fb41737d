"""``ParquetSink``: the embedded store writer (one per process; many may share a store)."""

from __future__ import annotations

import functools
import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa

from footprint._errors import ConfigError
from footprint.events import TERMINAL_TYPES, EventBase
from recorder.write._adopt import WriterLock, adopt_orphans
from recorder.write._chain import CHAIN_FORMAT, KEY_ENV, KEYED_FORMAT
from recorder.write._chain import chain_key as _chain_key
from recorder.write._columns import offer_gil, yield_gil
from recorder.write._compact import AUTO_COMPACT_AT, compact, small_files
from recorder.write._layout import (
    CHAIN,
    EVENTS,
    LIVE,
    STATS,
    new_writer_id,
    resolve_store,
    segment_of,
)
from recorder.write._link import RunHeads
from recorder.write._merged import remove_stale_temps
from recorder.write._rows import EVENT_SCHEMA, STATS_SCHEMA, RowBuilder, RunTail
from recorder.write._segment import Segment, write_atomically
from recorder.write._sink import ExportResult
from recorder.write._upload import Uploader, is_remote, staging_root
from recorder.write._writer import FileWorker

__all__ = ["STATS_SCHEMA", "ParquetSink", "seal_seconds"]

_log = logging.getLogger("recorder")


def seal_seconds(value: object, owner: str = "ParquetSink") -> float:
    """``seal_after_s`` checked: finite seconds >= 0 (a ``ConfigError`` naming ``owner``)."""
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or not 0 <= value < float("inf"):
        raise ConfigError(f"{owner}(seal_after_s={value!r}): pass seconds >= 0 (0: seal "
                          "a segment as soon as its runs have all ended)")
    return float(value)


class ParquetSink:
    """Writes events into a store directory (default ``$FOOTPRINT_STORE`` or ``./.footprint``).

    Every export appends one Arrow batch to this writer's live segment (an
    Arrow IPC stream that survives SIGKILL batch by batch); the file work,
    the runs' SHA-256 heads included (``_link``), runs on the sink's own
    thread, and ``force_flush`` waits for it. The segment is sealed into
    Hive-partitioned Parquet — temp name, then rename — when it
    reaches ``seal_rows``, when every run in it has ended, and at shutdown.
    ``seal_after_s`` holds a segment whose runs have all ended until it is that
    old (sealed then by the next export or flush): fewer, larger files, which
    matters where nothing merges them (a store on object storage).
    ``durable=True`` adds fsyncs for power loss. ``chain_key`` (default
    ``$FOOTPRINT_CHAIN_KEY``; 16 bytes or more, kept outside the store) stores
    every chain head as an HMAC under it, so only the key holder can forge
    one (``recorder.write._chain``). After a seal, once a folder of the store holds
    ``compact_at`` small sealed files, the writer merges them
    (``recorder.write._compact``; ``None``: never). File names carry the UTC
    time, the pid and a random suffix: writers never touch each other's files,
    except that a new writer first seals the segments of writers that were
    killed (``adopt=True``, on its file thread; :func:`recorder.adopt_orphans`)
    and removes the temp files killed writers and compactors left.
    ``path`` may be an object-storage URI (``s3://bucket/prefix``): live
    segments then stay in a local staging store and each sealed file is
    uploaded (see ``recorder.write._upload``).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        seal_rows: int = 250_000,
        blob_min_chars: int = 256,
        durable: bool = False,
        adopt: bool = True,
        chain_key: bytes | str | None = None,
        compact_at: int | None = AUTO_COMPACT_AT,
        seal_after_s: float = 0.0,
    ) -> None:
        if compact_at is not None and (type(compact_at) is not int or compact_at < 2):
            raise ConfigError(f"ParquetSink(compact_at={compact_at!r}): pass a file count >= 2 "
                              f"(default {AUTO_COMPACT_AT}), or None to never compact")
        self.compact_at = compact_at
        self._left: set[Path] = set()
        """Small files a compaction left as they were: not counted towards the next one."""
        if seal_rows < 1 or blob_min_chars < 1:
            raise ConfigError(
                f"ParquetSink(seal_rows={seal_rows!r}, blob_min_chars={blob_min_chars!r}): "
                "both must be positive integers; use the defaults (250000, 256)"
            )
        try:
            key = chain_key if chain_key is not None else os.environ.get(KEY_ENV) or None
            self._chain_key = _chain_key(key, origin="ParquetSink(chain_key=…)"
                                         if chain_key is not None else f"${KEY_ENV}")
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        self._location = location = (os.fspath(path) if path is not None
                                     else os.environ.get("FOOTPRINT_STORE"))
        self.root = (staging_root(location) if location is not None and is_remote(location)
                     else resolve_store(path))
        self.root.mkdir(parents=True, exist_ok=True)
        self.seal_rows = seal_rows
        self.seal_after_s = seal_seconds(seal_after_s)
        self.durable = durable
        self._blob_min_chars = blob_min_chars
        self._start(adopt=adopt)

    def _start(self, *, adopt: bool) -> None:
        """This process's writer: its id, lock, file thread and an empty segment state."""
        self.writer_id = new_writer_id()
        self._upload: Uploader | None = None
        if is_remote(self._location):
            assert self._location is not None
            self._upload = Uploader(self._location, self.root, self.writer_id)
        self._builder = RowBuilder(blob_min_chars=self._blob_min_chars, offer=self._offer_gil)
        self._count = 0
        self._segment: Segment | None = None
        self._segment_rows = 0
        self._opened = 0.0  # when the segment began (time.monotonic())
        self._files = FileWorker(f"footprint-store-{self.writer_id}")
        self._heads = RunHeads(key=self._chain_key)  # used on the file thread only
        self._open_runs: set[str] = set()
        self._drops: dict[str, tuple[int, int, int, int]] = {}
        self._noted: tuple[dict[str, int], dict[str, int], dict[str, int]] = ({}, {}, {})
        self._drops_dirty = False
        self._stats_n = 0
        self._closed = False
        self._lock = WriterLock(self.root, self.writer_id)  # tells adopters this writer lives
        if adopt:
            self._files.submit(self._adopt)

    def after_fork(self) -> None:
        """In a child process after ``fork()``: a writer of its own (new id, lock, file
        thread, segment); the parent's segment, lock and buffered rows stay the parent's."""
        self._lock.forget()  # our copy of the parent's lock: closed, never unlocked
        closed = self._closed
        self._start(adopt=False)
        self._closed = closed

    # -- Sink ----------------------------------------------------------------
    def export(self, batch: Sequence[EventBase]) -> ExportResult:
        if self._closed:
            return ExportResult.FAILURE
        if not batch:
            return ExportResult.SUCCESS
        self._builder.add_all(batch)
        events, blobs = self._builder.take()
        tails = self._builder.take_tails()
        self._track_runs(tails)
        segment = self._current()
        last = {run: tail.seq for run, tail in tails.items()}
        done = [run for run, tail in tails.items() if tail.type in TERMINAL_TYPES]
        table = pa.Table.from_batches(events, schema=EVENT_SCHEMA)
        self._files.submit(functools.partial(
            self._write, segment, table, blobs, self._builder.last_runs, last, done))
        self._segment_rows += sum(b.num_rows for b in events)
        if self._segment_rows >= self.seal_rows:
            self._seal()
        elif tails and not self._open_runs:  # a run ended, and every run in it has
            self._seal_when_old()
        return ExportResult.SUCCESS

    def resume_chain(self, run_id: str, *, check: int, stream: object, records: int) -> None:
        """Link this writer's next records of ``run_id`` onto the chain stored so far:
        ``check`` the run's last row check, ``stream`` the SHA-256 over its ``records``
        stored records (``recorder.store._verify.chain_tail``). For feedback on a run
        that ended, written as a segment of its own; sealed files are never rewritten."""
        self._builder.checks[run_id] = check
        self._files.submit(functools.partial(self._heads.resume, run_id, stream, records))

    def force_flush(self, timeout_s: float = 10.0) -> bool:
        """Wait until every exported batch is in the OS (and on disk when ``durable``); a
        segment held for ``seal_after_s`` and old enough by now is sealed first."""
        if self._segment_rows and not self._open_runs:  # held: its runs have all ended
            self._seal_when_old()
        if self._segment is not None and self.durable:
            self._files.submit(self._segment.sync)
        self._write_stats()
        failures = self._upload.failures if self._upload is not None else 0
        if self._upload is not None:
            self._files.submit(self._upload.sync)
        self._files.drain()
        return self._upload is None or self._upload.failures == failures

    def shutdown(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._seal()
        self._write_stats()
        if self._upload is not None:
            self._files.submit(self._upload.sync)
        try:
            self._files.close()
        finally:
            self._lock.release()

    def _offer_gil(self) -> None:
        """Between parts of a conversion: hand the GIL to the file thread. ``sched_yield``
        while the file thread keeps up (at most one job waiting), ``sleep(0)`` once it
        falls behind: the sleep lets it wake and take the GIL even when the yield would
        take it back first (``recorder.write._columns``)."""
        if self._files.backlog() > 1:
            offer_gil()
        else:
            yield_gil()

    def _adopt(self) -> None:
        try:
            adopt_orphans(self.root, durable=self.durable)
            remove_stale_temps(self.root)  # killed writers' and compactors' temp files
            if self._upload is not None:  # what killed writers sealed, or we just sealed
                self._upload.sync(orphans=True)
        except Exception:  # a damaged orphan never costs this writer its own batches
            _log.exception("recorder: sealing the segments of killed writers in %s failed",
                           self.root)

    # -- StatsAware ------------------------------------------------------------
    def note_drops(self, overflow: dict[str, int], processed: dict[str, int],
                   sink_drops: dict[str, int] | None = None) -> None:
        self._noted = (dict(overflow), dict(processed), dict(sink_drops or {}))
        self._refresh_drops()

    def _refresh_drops(self) -> None:
        overflow, processed, lost = self._noted
        rejected = self._builder.rejected
        for run in overflow.keys() | processed.keys() | lost.keys() | rejected.keys():
            counts = (overflow.get(run, 0), processed.get(run, 0), lost.get(run, 0),
                      rejected.get(run, 0))
            if self._drops.get(run) != counts:
                self._drops[run] = counts
                self._drops_dirty = True

    # -- internals ---------------------------------------------------------------
    def _track_runs(self, tails: dict[str, RunTail]) -> None:
        """Update the open runs (each run's last event decides)."""
        for run, tail in tails.items():
            if tail.type in TERMINAL_TYPES:
                self._open_runs.discard(run)
            else:
                self._open_runs.add(run)

    def _write(self, segment: Segment, table: pa.Table, blobs: pa.RecordBatch | None,
               runs: list[str], last: dict[str, int], done: list[str]) -> None:
        """The file thread's job per export: link the runs' heads, then append it all.

        One table for the whole export, so each step is one call that
        releases the GIL once (every retake of the GIL can wait a switch
        interval behind the converting thread).
        """
        try:
            heads = self._heads.link(table, runs, last, done)
        except Exception:
            segment.append(table, blobs)  # the rows are kept; verify will flag their runs
            raise
        segment.append(table, blobs, heads)

    def _current(self) -> Segment:
        if self._segment is None:
            self._count += 1
            self._segment = Segment(
                self.root, f"{self.writer_id}-{self._count:05d}",
                chain_format=KEYED_FORMAT if self._chain_key else CHAIN_FORMAT)
            self._opened = time.monotonic()
        return self._segment

    def _seal_when_old(self) -> None:
        """Every run of the segment has ended: seal it, or hold it until it is
        ``seal_after_s`` old."""
        if time.monotonic() - self._opened >= self.seal_after_s:
            self._seal()

    def _seal(self) -> None:
        if self._segment is not None:
            self._files.submit(functools.partial(self._segment.seal, durable=self.durable))
            self._segment, self._segment_rows = None, 0
            if self._upload is not None:
                self._files.submit(self._upload.sync)
            elif self.compact_at is not None:
                self._files.submit(self._compact_if_many)

    def _compact_if_many(self) -> None:
        """On the file thread, after a seal: merge the store's small sealed files once a
        folder holds ``compact_at`` of them (``recorder.write._compact``)."""
        assert self.compact_at is not None
        live = {segment_of(p) for p in (self.root / LIVE).glob("*.arrows")}
        folders = [self.root / CHAIN, *(self.root / EVENTS).glob("date=*")]
        if not any(len([p for p in small_files(f, live) if p not in self._left]) >=
                   self.compact_at for f in folders):
            return
        try:
            compact(self.root)  # always fsynced: it deletes the originals
        except Exception:  # compaction is housekeeping: never costs the run its rows
            _log.exception("recorder: compacting %s failed", self.root)
        # what is still small was not merged (full merged files, a file of another kind):
        # counted again, a folder of many full files would compact at every seal
        self._left = {p for f in folders for p in small_files(f, live)}

    def _write_stats(self) -> None:
        if self._builder.rejected:
            self._refresh_drops()
        if not self._drops_dirty:
            return
        runs = sorted(self._drops)
        now = time.time_ns()
        table = pa.table(
            {
                "run_id": runs,
                "writer": [self.writer_id] * len(runs),
                "overflow": [self._drops[r][0] for r in runs],
                "processor_drops": [self._drops[r][1] for r in runs],
                "sink_drops": [self._drops[r][2] for r in runs],
                "written_ns": [now] * len(runs),
                "unencodable": [self._drops[r][3] for r in runs],
            },
            schema=STATS_SCHEMA,
        )
        self._stats_n += 1
        final = self.root / STATS / f"{self.writer_id}-{self._stats_n:05d}.parquet"
        self._drops_dirty = False
        self._files.submit(functools.partial(
            write_atomically, table, final, durable=self.durable))
