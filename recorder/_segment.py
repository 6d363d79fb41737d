"""One writer's in-flight segment: an append-only Arrow IPC stream, sealed into Parquet."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from recorder._layout import BLOBS, EVENTS, LIVE
from recorder._rows import BLOB_SCHEMA, EVENT_SCHEMA

__all__ = ["Segment", "write_atomically"]

_IPC = pa.ipc.IpcWriteOptions(compression="lz4")


def write_atomically(table: pa.Table, final: Path, *, durable: bool) -> None:
    """Write ``table`` as zstd Parquet to a dot-prefixed temp name, then rename it into place."""
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.with_name(f".{final.name}.tmp")
    pq.write_table(table, tmp, compression="zstd", compression_level=3)
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
    """An Arrow IPC stream opened lazily; every batch goes straight to the OS."""

    def __init__(self, path: Path, schema: pa.Schema) -> None:
        self.path = path
        self._schema = schema
        self._file: pa.NativeFile | None = None
        self._writer: pa.ipc.RecordBatchStreamWriter | None = None
        self.batches: list[pa.RecordBatch] = []

    def write(self, batch: pa.RecordBatch) -> None:
        if self._writer is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = pa.OSFile(str(self.path), "wb")
            self._writer = pa.ipc.new_stream(self._file, self._schema, options=_IPC)
        self._writer.write_batch(batch)
        self.batches.append(batch)

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


class Segment:
    """``live/<id>.*.arrows`` while in flight; ``events/date=…/<id>.parquet`` once sealed.

    A reader treats the live stream as the authority while it exists, so a
    crash between the renames and the unlink never shows a row twice.
    """

    def __init__(self, root: Path, segment_id: str) -> None:
        self.root = root
        self.id = segment_id
        self.events = _Stream(root / LIVE / f"{segment_id}.events.arrows", EVENT_SCHEMA)
        self.blobs = _Stream(root / LIVE / f"{segment_id}.blobs.arrows", BLOB_SCHEMA)
        self.rows = 0

    def append(self, events: pa.RecordBatch | None, blobs: pa.RecordBatch | None) -> None:
        """Blobs first, so no stored event ever points at a blob that is not there."""
        if blobs is not None:
            self.blobs.write(blobs)
        if events is not None:
            self.events.write(events)
            self.rows += events.num_rows

    def sync(self) -> None:
        self.blobs.sync()
        self.events.sync()

    def seal(self, *, durable: bool) -> None:
        """Write the Parquet files (temp + rename), then drop the live streams."""
        self.events.close()
        self.blobs.close()
        if self.blobs.batches:
            blobs = pa.Table.from_batches(self.blobs.batches, schema=BLOB_SCHEMA)
            write_atomically(blobs, self.root / BLOBS / f"{self.id}.parquet", durable=durable)
        if self.events.batches:
            table = pa.Table.from_batches(self.events.batches, schema=EVENT_SCHEMA)
            for day, part in _by_date(table):
                final = self.root / EVENTS / f"date={day}" / f"{self.id}.parquet"
                write_atomically(part, final, durable=durable)
        self.events.unlink()
        self.blobs.unlink()


def _by_date(table: pa.Table) -> list[tuple[str, pa.Table]]:
    stamps = pc.cast(table.column("ts"), pa.timestamp("ns", tz="UTC"))
    days = pc.strftime(stamps, format="%Y-%m-%d")
    unique = pc.unique(days).to_pylist()
    if len(unique) == 1:
        return [(str(unique[0]), table)]
    return [(str(d), table.filter(pc.equal(days, d))) for d in sorted(unique)]
