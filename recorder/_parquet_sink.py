"""``ParquetSink``: the embedded store writer (one per process; many may share a store)."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

import pyarrow as pa

from footprint._errors import ConfigError
from footprint.events import EventBase
from recorder._layout import STATS, new_writer_id, resolve_store
from recorder._rows import RowBuilder
from recorder._segment import Segment, write_atomically
from recorder._sink import ExportResult

__all__ = ["STATS_SCHEMA", "ParquetSink"]

STATS_SCHEMA = pa.schema(
    [
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("writer", pa.string(), nullable=False),
        pa.field("overflow", pa.int64(), nullable=False),
        pa.field("processor_drops", pa.int64(), nullable=False),
        pa.field("written_ns", pa.int64(), nullable=False),
    ]
)

_TERMINAL = frozenset({"run.end", "run.error"})


class ParquetSink:
    """Writes events into a store directory (default ``$FOOTPRINT_STORE`` or ``./.footprint``).

    Every export appends one Arrow batch to this writer's live segment (an
    Arrow IPC stream that survives SIGKILL batch by batch). The segment is
    sealed into Hive-partitioned Parquet — temp name, then rename — when it
    reaches ``seal_rows``, when every run in it has ended, and at shutdown.
    ``durable=True`` adds fsyncs for power loss. File names carry the UTC
    time, the pid and a random suffix: writers never touch each other's files.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        seal_rows: int = 250_000,
        blob_min_chars: int = 256,
        durable: bool = False,
    ) -> None:
        if seal_rows < 1 or blob_min_chars < 1:
            raise ConfigError(
                f"ParquetSink(seal_rows={seal_rows!r}, blob_min_chars={blob_min_chars!r}): "
                "both must be positive integers; use the defaults (250000, 256)"
            )
        self.root = resolve_store(path)
        self.root.mkdir(parents=True, exist_ok=True)
        self.writer_id = new_writer_id()
        self.seal_rows = seal_rows
        self.durable = durable
        self._builder = RowBuilder(blob_min_chars=blob_min_chars)
        self._count = 0
        self._segment: Segment | None = None
        self._open_runs: set[str] = set()
        self._drops: dict[str, tuple[int, int]] = {}
        self._drops_dirty = False
        self._stats_n = 0
        self._closed = False

    # -- Sink ----------------------------------------------------------------
    def export(self, batch: Sequence[EventBase]) -> ExportResult:
        if self._closed:
            return ExportResult.FAILURE
        if not batch:
            return ExportResult.SUCCESS
        ended = False
        for event in batch:
            self._builder.add(event)
            if getattr(event, "type", "") in _TERMINAL:
                self._open_runs.discard(event.run_id)
                ended = True
            else:
                self._open_runs.add(event.run_id)
        events, blobs = self._builder.take()
        segment = self._current()
        segment.append(events, blobs)
        if segment.rows >= self.seal_rows or (ended and not self._open_runs):
            self._seal()
        return ExportResult.SUCCESS

    def force_flush(self, timeout_s: float = 10.0) -> bool:
        if self._segment is not None and self.durable:
            self._segment.sync()
        self._write_stats()
        return True

    def shutdown(self) -> None:
        if self._closed:
            return
        self._seal()
        self._write_stats()
        self._closed = True

    # -- StatsAware ------------------------------------------------------------
    def note_drops(self, overflow: dict[str, int], processed: dict[str, int]) -> None:
        for run in overflow.keys() | processed.keys():
            counts = (overflow.get(run, 0), processed.get(run, 0))
            if self._drops.get(run) != counts:
                self._drops[run] = counts
                self._drops_dirty = True

    # -- internals ---------------------------------------------------------------
    def _current(self) -> Segment:
        if self._segment is None:
            self._count += 1
            self._segment = Segment(self.root, f"{self.writer_id}-{self._count:05d}")
        return self._segment

    def _seal(self) -> None:
        if self._segment is not None:
            self._segment.seal(durable=self.durable)
            self._segment = None

    def _write_stats(self) -> None:
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
                "written_ns": [now] * len(runs),
            },
            schema=STATS_SCHEMA,
        )
        self._stats_n += 1
        final = self.root / STATS / f"{self.writer_id}-{self._stats_n:05d}.parquet"
        write_atomically(table, final, durable=self.durable)
        self._drops_dirty = False
