"""Many Parquet files merged into one sorted file in bounded memory (for compaction).

Merging a folder's small files in memory held every row twice (the tables, then their
sorted copy): 64 ingest segments, 30 MB on disk, took a receiver from 290 MB to 1.3 GB,
and the cap on one merge (256 MB on disk) let it grow to many GB. Here the rows go
through a spill file instead:

1. each file's sort key column is read alone and its values counted (a damaged file is
   left out, as before);
2. the keys, sorted, are cut into chunks of about :data:`CHUNK_BYTES` (a key's rows are
   never cut);
3. each file is read again in batches of about :data:`BATCH_BYTES` and every batch's rows
   appended to an Arrow IPC spill file, chunk by chunk;
4. chunk after chunk is read back, sorted and written, its rows cut into the same row
   groups a whole-table merge makes (``plan``: whole runs, at most 16 runs and ``cap``
   rows; fixed ``cap`` slices for a table without runs).

The output is the whole-table merge's, row for row and row group for row group: the
same stable sort on the same keys, over the same rows in the same file order. The spill
file is named like a compactor's temp, so a compactor killed meanwhile leaves nothing the
next one (:func:`recorder.write._merged.stale_temps`) does not remove.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["BATCH_BYTES", "CHUNK_BYTES", "Source", "plan_groups", "sources", "write_sorted"]

CHUNK_BYTES = 2 << 20
"""About this many bytes (uncompressed) of rows are sorted at once."""
BATCH_BYTES = 1 << 20
"""About this many bytes (uncompressed) of a file are read at once."""


@dataclass(slots=True)
class Source:
    """One readable file of a merge: its schema (no metadata), the metadata it had, its
    rows' sort key counts and its mean row size (uncompressed)."""

    path: Path
    schema: pa.Schema
    metadata: dict[bytes, bytes] | None
    key: str | None = None
    counts: Counter[object] = field(default_factory=Counter)
    rows: int = 0
    row_bytes: float = 1.0


def sources(paths: Sequence[Path], keys: Sequence[str]) -> list[Source]:
    """The files of ``paths`` whose footer and first sort key read (a damaged one is left
    out, for doctor to name), each with its key counts."""
    found = []
    for path in paths:
        try:
            file = pq.ParquetFile(path)
            schema = file.schema_arrow
            key = next((k for k in keys if k in schema.names), None)
            column = file.read(columns=[key]).column(0) if key is not None else None
        except (OSError, pa.ArrowException):
            continue
        meta = file.metadata
        rows = meta.num_rows
        size = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
        found.append(Source(
            path=path, schema=schema.remove_metadata(), metadata=schema.metadata, key=key,
            counts=Counter(column.to_pylist()) if column is not None else Counter({None: rows}),
            rows=rows, row_bytes=max(size / max(rows, 1), 1.0)))
    return found


def plan_groups(counts: Sequence[int], cap: int, runs_per_group: int,
                by_run: bool) -> list[int]:
    """The row count of each row group, from each key's rows in sorted order: whole runs,
    at most ``runs_per_group`` runs and ``cap`` rows (a bigger run alone) when ``by_run``;
    else ``cap`` rows each."""
    total = sum(counts)
    if not by_run:
        return [min(cap, total - start) for start in range(0, total, cap)]
    groups: list[int] = []
    size = runs = 0
    for n in counts:
        if runs and (runs >= runs_per_group or size + n > cap):
            groups.append(size)
            size = runs = 0
        size += n
        runs += 1
    return [*groups, size] if runs else groups


def _order(keys: Sequence[object]) -> list[object]:
    """Keys in the order Arrow sorts them (nulls last)."""
    return sorted((k for k in keys if k is not None), key=_sortable) + (
        [None] if None in keys else [])


def _sortable(key: object) -> Any:
    return key.encode("utf-8", "surrogatepass") if isinstance(key, str) else key


def _conform(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """``batch`` in the merge's schema (a column it lacks is null, as a permissive concat
    makes it)."""
    columns = []
    for f in schema:
        i = batch.schema.get_field_index(f.name)
        columns.append(pa.nulls(batch.num_rows, f.type) if i < 0 else
                       batch.column(i) if batch.schema.field(i).type == f.type else
                       batch.column(i).cast(f.type))
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def _spill(found: Sequence[Source], schema: pa.Schema, key: str | None,
           chunk_of: dict[object, int], spill: Path, batch_bytes: int) -> list[list[int]]:
    """Every row of ``found`` into the IPC file ``spill``; which batches hold each chunk."""
    where: list[list[int]] = [[] for _ in range(max(chunk_of.values(), default=0) + 1)]
    written = 0
    with pa.ipc.new_file(spill, schema) as out:
        for source in found:
            rows = max(int(batch_bytes / source.row_bytes), 1)
            for raw in pq.ParquetFile(source.path).iter_batches(batch_size=rows):
                batch = _conform(raw, schema)
                chunks = ([chunk_of[k] for k in batch.column(key).to_pylist()]
                          if key is not None else [0] * batch.num_rows)
                counted = sorted(Counter(chunks).items())
                if len(counted) > 1:
                    batch = batch.take(pa.compute.sort_indices(pa.array(chunks, pa.int32())))
                start = 0
                for chunk, n in counted:
                    out.write_batch(batch.slice(start, n))
                    where[chunk].append(written)
                    written, start = written + 1, start + n
    return where


def _chunks(order: Sequence[object], counts: Counter[object],
            row_bytes: float, chunk_bytes: int) -> dict[object, int]:
    """Each key's chunk: consecutive keys, about ``chunk_bytes`` of rows a chunk."""
    limit = max(int(chunk_bytes / row_bytes), 1)
    chunk_of: dict[object, int] = {}
    chunk = size = 0
    for k in order:
        if size and size + counts[k] > limit:
            chunk, size = chunk + 1, 0
        chunk_of[k] = chunk
        size += counts[k]
    return chunk_of


def _sorted_chunks(spill: Path, where: Sequence[Sequence[int]], schema: pa.Schema,
                   sort: list[tuple[str, str]]) -> Iterator[pa.Table]:
    with pa.OSFile(str(spill)) as handle:
        reader = pa.ipc.open_file(handle)
        for batches in where:
            table = pa.Table.from_batches([reader.get_batch(i) for i in batches], schema=schema)
            yield table.sort_by(sort) if sort else table


def write_sorted(found: Sequence[Source], out: Path, *, keys: Sequence[str],
                 metadata: dict[bytes, bytes], options: dict[str, object], cap: int,
                 runs_per_group: int, spill: Path, chunk_bytes: int = CHUNK_BYTES,
                 batch_bytes: int = BATCH_BYTES) -> int:
    """Every row of ``found`` into the Parquet file ``out``, sorted by ``keys`` (those the
    files hold), in the row groups :func:`plan_groups` makes, through the temp file
    ``spill`` (removed), sorting about ``chunk_bytes`` of rows at a time and reading
    about ``batch_bytes`` at a time; the rows written."""
    schema = pa.unify_schemas([s.schema for s in found], promote_options="permissive")
    names = [k for k in keys if k in schema.names]
    key = names[0] if names else None
    counts: Counter[object] = Counter()
    for s in found:  # a file without the merge's key holds it null (as it is merged)
        counts.update(s.counts if s.key == key else Counter({None: s.rows}))
    order = _order(list(counts))
    rows = sum(counts.values())
    row_bytes = max(sum(s.row_bytes * s.rows for s in found) / max(rows, 1), 1.0)
    groups = plan_groups([counts[k] for k in order], cap, runs_per_group,
                         by_run="run_id" in schema.names)
    try:
        where = _spill(found, schema, key, _chunks(order, counts, row_bytes, chunk_bytes),
                       spill, batch_bytes)
        with pq.ParquetWriter(out, schema.with_metadata(metadata), **options) as writer:
            _write_groups(writer, _sorted_chunks(spill, where, schema,
                                                 [(n, "ascending") for n in names]),
                          groups, cap)
    finally:
        spill.unlink(missing_ok=True)
    return rows


def _write_groups(writer: pq.ParquetWriter, tables: Iterator[pa.Table], groups: list[int],
                  cap: int) -> None:
    """The rows of ``tables`` (in order) written in row groups of the sizes ``groups``."""
    pending: pa.Table | None = None
    at = 0
    for table in tables:
        pending = table if pending is None else pa.concat_tables([pending, table])
        while at < len(groups) and pending.num_rows >= groups[at]:
            writer.write_table(pending.slice(0, groups[at]), row_group_size=cap)
            pending = pending.slice(groups[at])
            at += 1
    if at != len(groups) or (pending is not None and pending.num_rows):
        raise ValueError(f"merge wrote {at} of {len(groups)} row groups: the files changed "
                         "while they were merged")

