"""Live segments read a batch at a time; what does not fit a small budget goes to Parquet.

A killed writer's segment can hold hundreds of thousands of rows in its
Arrow stream. Reading it whole into memory cost readers 0.8–1.3 GB for
600k events; here each live stream is read one record batch at a time: the
first ``keep_rows`` rows stay in memory (small live segments, the usual
case, cost nothing more), and once a stream passes that, all its rows go
into a Parquet file in this reader's private temp directory, which the
views read with the same pushdown as sealed files. The directory goes with
the reader (:meth:`LiveSpill.close`, or when it is garbage-collected).
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["LiveSpill", "iter_live"]


def iter_live(path: Path) -> Iterator[pa.RecordBatch]:
    """Every complete batch of an Arrow IPC stream, one at a time; a torn tail ends it."""
    try:
        with pa.OSFile(str(path), "rb") as source:
            reader = pa.ipc.open_stream(source)
            while True:
                try:
                    yield reader.read_next_batch()
                except StopIteration:
                    return
    except (OSError, pa.ArrowInvalid, pa.ArrowException):
        return  # empty (opened, nothing written yet), torn, or sealed meanwhile


class LiveSpill:
    """Where one reader's big live streams are spilled (see the module docstring)."""

    def __init__(self, keep_rows: int = 65_536) -> None:
        self.keep_rows = keep_rows
        self._dir: Path | None = None
        self._generation = itertools.count()
        self._current: list[Path] = []
        self._finalizer: Callable[[], object] | None = None

    def read(self, path: Path, schema: pa.Schema) -> tuple[list[pa.RecordBatch], Path | None]:
        """The stream's batches kept in memory, or the Parquet file holding all of them.

        A stream written in another schema comes back whole in memory (its
        first batch is enough for the caller to refuse it).
        """
        kept: list[pa.RecordBatch] = []
        rows = 0
        batches = iter_live(path)
        for batch in batches:
            kept.append(batch)
            rows += batch.num_rows
            if not batch.schema.equals(schema):
                return kept, None
            if rows > self.keep_rows:
                return [], self._spill(path, schema, kept, batches)
        return kept, None

    def _spill(self, path: Path, schema: pa.Schema, kept: list[pa.RecordBatch],
               rest: Iterator[pa.RecordBatch]) -> Path:
        target = self._folder() / f"{next(self._generation)}-{path.name}.parquet"
        with pq.ParquetWriter(target, schema, compression="lz4") as writer:
            writer.write_table(pa.Table.from_batches(kept, schema=schema))
            kept.clear()
            for batch in rest:
                if batch.schema.equals(schema):
                    writer.write_batch(batch)
        self._current.append(target)
        return target

    def _folder(self) -> Path:
        if self._dir is None:
            self._dir = Path(tempfile.mkdtemp(prefix="footprint-live-"))
            self._finalizer = weakref.finalize(self, shutil.rmtree, self._dir, True)
        return self._dir

    def begin(self) -> list[Path]:
        """Start a new scan; returns the files of the previous one (to delete after the
        views stop reading them: :meth:`forget`)."""
        previous, self._current = self._current, []
        return previous

    @staticmethod
    def forget(paths: list[Path]) -> None:
        for path in paths:
            path.unlink(missing_ok=True)

    def close(self) -> None:
        """Delete every spilled file."""
        if self._finalizer is not None:
            self._finalizer()
        self._dir = None
        self._current = []
