"""Reading a live segment back: its whole batches, and the chain heads that cover them.

A live segment is an Arrow IPC stream the writer appends to; a crash can
tear its tail. Adoption (sealing a dead writer's segments) and discovery
(readers listing live rows) both read it here.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from recorder.write._schemas import EVENT_SCHEMA

__all__ = ["heads_of_rows_read", "last_seqs", "read_live"]


def read_live(path: Path) -> list[pa.RecordBatch]:
    """Every complete batch of an Arrow IPC stream; a torn tail (a crash) just ends it."""
    batches: list[pa.RecordBatch] = []
    try:
        with pa.OSFile(str(path), "rb") as source:
            reader = pa.ipc.open_stream(source)
            while True:
                try:
                    batches.append(reader.read_next_batch())
                except StopIteration:
                    break
    except (OSError, pa.ArrowInvalid, pa.ArrowException):
        pass  # empty (opened, nothing written yet), torn, or sealed meanwhile
    return batches


def last_seqs(events: list[pa.RecordBatch], spilled: Path | None = None) -> dict[str, int]:
    """Per run, the last seq among the rows read (in memory, or spilled to Parquet)."""
    if spilled is not None:
        table = pq.read_table(spilled, columns=["run_id", "seq"])
    else:
        table = pa.Table.from_batches(events, schema=EVENT_SCHEMA).select(["run_id", "seq"])
    rows = table.group_by("run_id").aggregate([("seq", "max")])
    return dict(zip(rows.column("run_id").to_pylist(), rows.column("seq_max").to_pylist(),
                    strict=True))


def heads_of_rows_read(chain: list[pa.RecordBatch],
                       events: list[pa.RecordBatch] | dict[str, int]) -> list[pa.RecordBatch]:
    """The live heads that end on a row read: a head written after the rows were read
    (the writer went on meanwhile) would otherwise claim rows this scan does not hold.

    ``events`` are the rows read, or already their last seq per run.
    """
    if not chain:
        return []
    import pyarrow.compute as pc  # ~60 ms to import: only when there are live heads

    last = events if isinstance(events, dict) else last_seqs(events)
    kept = []
    for batch in chain:
        ends = [last.get(run, -1) for run in batch.column("run_id").to_pylist()]
        mask = pc.less_equal(batch.column("last_seq"), pa.array(ends, pa.int64()))
        kept.append(batch.filter(mask))
    return kept
