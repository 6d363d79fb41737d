"""One writer's in-flight segment: an append-only Arrow IPC stream, sealed into Parquet."""

from __future__ import annotations

import datetime
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from recorder.write._chain import CHAIN_FORMAT
from recorder.write._layout import BLOBS, CHAIN, EVENTS, LIVE
from recorder.write._marker import kind_of, marked, marked_schema
from recorder.write._schemas import BLOB_SCHEMA, CHAIN_SCHEMA, EVENT_SCHEMA

__all__ = ["Segment", "by_date", "parquet_options", "write_atomically"]

_IPC = pa.ipc.IpcWriteOptions(compression="lz4")


_UNIQUE = ("seq", "ts", "payload", "prev_check", "row_check", "step_id", "tool_call_id",
           "content_hash")
"""Event columns whose values rarely repeat: a dictionary would only cost time."""
_DELTA = ("seq", "ts")


BLOB_ROW_GROUP = 1_024
"""Blob rows per Parquet row group: a reader decodes a row group's texts together, and a
request blob can be many KiB (20,000 requests of 16 KiB in one group cost a reader 330 MB)."""


def parquet_options(schema: pa.Schema) -> dict[str, Any]:
    """zstd everywhere; for event tables, no dictionary on unique columns, deltas for seq/ts;
    for blob tables, small row groups."""
    options: dict[str, Any] = {"compression": "zstd", "compression_level": 3}
    if schema.get_field_index("payload") >= 0:
        options["use_dictionary"] = [n for n in schema.names if n not in _UNIQUE]
        options["column_encoding"] = dict.fromkeys(_DELTA, "DELTA_BINARY_PACKED")
    elif schema.get_field_index("text") >= 0:
        options["row_group_size"] = BLOB_ROW_GROUP
    return options


def write_atomically(table: pa.Table, final: Path, *, durable: bool,
                     row_group_size: int | None = None) -> None:
    """Write ``table`` as zstd Parquet to a dot-prefixed temp name, then rename it into place
    (marked as the store's file of its folder's kind: ``recorder.write._marker``)."""
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.with_name(f".{final.name}.tmp")
    options = parquet_options(table.schema)
    if row_group_size is not None:  # the caller's, within a blob table's own bound
        options["row_group_size"] = min(row_group_size, options.get("row_group_size",
                                                                     row_group_size))
    pq.write_table(marked(table, kind_of(final)), tmp, **options)
    if durable:
        _fsync(tmp)
    os.replace(tmp, final)
    if durable:
        _fsync(final.parent)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class _Stream:
    """An Arrow IPC stream opened lazily; every batch goes straight to the OS.

    Batches are not kept: the seal reads the closed stream back, so the
    memory of converted batches is reused instead of growing with the segment.
    """

    def __init__(self, path: Path, schema: pa.Schema) -> None:
        self.path = path
        self._schema = schema
        self._file: pa.NativeFile | None = None
        self._writer: pa.ipc.RecordBatchStreamWriter | None = None
        self.rows = 0

    def write(self, data: pa.RecordBatch | pa.Table) -> None:
        if self._writer is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = pa.OSFile(str(self.path), "wb")
            self._writer = pa.ipc.new_stream(self._file, self._schema, options=_IPC)
        self._writer.write(data)
        self.rows += data.num_rows

    def read_all(self) -> pa.Table:
        """Everything written, read back from the (closed) file."""
        with pa.memory_map(str(self.path)) as source:
            return pa.ipc.open_stream(source).read_all()

    def sync(self) -> None:
        if self._file is not None:
            os.fsync(self._file.fileno())

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        if self._file is not None:
            self._file.close()
        self._writer = self._file = None

    def unlink(self) -> None:
        self.close()
        self.path.unlink(missing_ok=True)


_ROW_GROUP = 65_536
"""Rows gathered per Parquet row group while a segment is in flight."""


class _DayFiles:
    """A segment's Parquet files, one per UTC day, encoded as its rows arrive.

    They grow under dot-prefixed temp names (invisible to every reader) and
    are renamed into place at the seal, so sealing a full segment costs a
    footer and a rename, not a second pass over its rows.
    """

    def __init__(self, root: Path, segment_id: str) -> None:
        self.root, self.id = root, segment_id
        self._writers: dict[str, pq.ParquetWriter] = {}
        self._pending: dict[str, list[pa.Table]] = {}

    def _final(self, day: str) -> Path:
        return self.root / EVENTS / f"date={day}" / f"{self.id}.parquet"

    def _tmp(self, day: str) -> Path:
        final = self._final(day)
        return final.with_name(f".{final.name}.tmp")

    def add(self, table: pa.Table) -> None:
        for day, part in by_date(table):
            parts = self._pending.setdefault(day, [])
            parts.append(part)
            if sum(p.num_rows for p in parts) >= _ROW_GROUP:
                self._flush(day)

    def _flush(self, day: str) -> None:
        parts = self._pending.pop(day, [])
        if not parts:
            return
        writer = self._writers.get(day)
        if writer is None:
            tmp = self._tmp(day)
            tmp.parent.mkdir(parents=True, exist_ok=True)
            writer = pq.ParquetWriter(tmp, marked_schema(EVENT_SCHEMA, EVENTS),
                                      **parquet_options(EVENT_SCHEMA))
            self._writers[day] = writer
        writer.write_table(pa.concat_tables(parts))

    def seal(self, *, durable: bool) -> None:
        for day in list(self._pending):
            self._flush(day)
        for day, writer in self._writers.items():
            writer.close()
            tmp, final = self._tmp(day), self._final(day)
            if durable:
                _fsync(tmp)
            os.replace(tmp, final)
            if durable:
                _fsync(final.parent)
        self._writers.clear()


class Segment:
    """``live/<id>.*.arrows`` while in flight; ``events/date=…/<id>.parquet`` once sealed.

    A reader treats the live stream as the authority while it exists, so a
    crash between the renames and the unlink never shows a row twice.
    """

    def __init__(self, root: Path, segment_id: str, *, chain_format: str = CHAIN_FORMAT) -> None:
        self.root = root
        self.id = segment_id
        self.chain_format = chain_format
        self.events = _Stream(root / LIVE / f"{segment_id}.events.arrows", EVENT_SCHEMA)
        self.blobs = _Stream(root / LIVE / f"{segment_id}.blobs.arrows", BLOB_SCHEMA)
        self.chain = _Stream(root / LIVE / f"{segment_id}.chain.arrows", CHAIN_SCHEMA)
        self.rows = 0
        self._days = _DayFiles(root, segment_id)

    def append(
        self,
        events: pa.Table,
        blobs: pa.RecordBatch | None,
        heads: Sequence[tuple[str, int, bytes]] = (),
    ) -> None:
        """Blobs first, so no stored event ever points at a blob that is not there;
        then ``heads`` (``(run_id, last_seq, head)`` after ``events``), then the rows.
        A writer killed between the two leaves heads whose rows are not there, which
        every reader of a live segment drops (``_live.heads_of_rows_read``): the batch is
        simply not stored. The other order left rows no head covers — an ended run that
        read as a crash (``incomplete``), and once a compaction had merged its file as a
        broken chain, while an intake taking the trace again found the run already
        stored and could not add a head to it."""
        if blobs is not None:
            self.blobs.write(blobs)
        if heads:
            self.chain.write(self._chain_batch(heads))
        if events.num_rows:
            self.events.write(events)
            self.rows += events.num_rows
            self._days.add(events)

    def sync(self) -> None:
        self.blobs.sync()
        self.events.sync()
        self.chain.sync()

    def seal(self, *, durable: bool) -> None:
        """Finish the Parquet files (temp + rename), then drop the live streams."""
        self.events.close()
        self.blobs.close()
        self.chain.close()
        if self.blobs.rows:
            write_atomically(self.blobs.read_all(), self.root / BLOBS / f"{self.id}.parquet",
                             durable=durable)
        if self.chain.rows:
            write_atomically(self.chain.read_all(), self.root / CHAIN / f"{self.id}.parquet",
                             durable=durable)
        self._days.seal(durable=durable)
        self.events.unlink()
        self.blobs.unlink()
        self.chain.unlink()

    def _chain_batch(self, heads: Sequence[tuple[str, int, bytes]]) -> pa.RecordBatch:
        runs, seqs, digests = zip(*heads, strict=True)
        return pa.RecordBatch.from_arrays(
            [pa.array(runs, pa.string()), pa.array([self.id] * len(runs), pa.string()),
             pa.array(seqs, pa.int64()), pa.array(digests, pa.binary(32)),
             pa.array([self.chain_format] * len(runs), pa.string())],
            schema=CHAIN_SCHEMA,
        )


_DAY_NS = 86_400 * 10**9
_EPOCH = datetime.date(1970, 1, 1)


def by_date(table: pa.Table) -> list[tuple[str, pa.Table]]:
    """The table split by UTC day of ``ts``; one min/max when (as usual) it is all one day."""
    import pyarrow.compute as pc  # ~60 ms to import: the writer's, not every reader's

    bounds = pc.min_max(table.column("ts")).as_py()
    first, last = bounds["min"] // _DAY_NS, bounds["max"] // _DAY_NS
    if first == last:
        return [((_EPOCH + datetime.timedelta(days=first)).isoformat(), table)]
    stamps = pc.cast(table.column("ts"), pa.timestamp("ns", tz="UTC"))
    days = pc.strftime(stamps, format="%Y-%m-%d")
    unique = pc.unique(days).to_pylist()
    return [(str(d), table.filter(pc.equal(days, d))) for d in sorted(unique)]
