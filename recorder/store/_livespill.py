"""Live segments read a batch at a time; what does not fit a small budget goes to Parquet.

A killed writer's segment can hold hundreds of thousands of rows in its
Arrow stream. Reading it whole into memory cost readers 0.8–1.3 GB for
600k events; here each live stream is read one record batch at a time: the
first ``keep_rows`` rows stay in memory (small live segments, the usual
case, cost nothing more), and once a stream passes that, all its rows go
into a Parquet file in this reader's private temp directory, which the
views read with the same pushdown as sealed files. The directory goes with
the reader (:meth:`LiveSpill.close`, or when it is garbage-collected); the
reader holds a lock in it for life, so the next reader to spill removes the
folders of readers that were killed (:func:`sweep`).
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import time
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import pyarrow as pa
import pyarrow.parquet as pq

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: folders of killed readers stay
    fcntl = None  # type: ignore[assignment]

__all__ = ["LiveSpill", "iter_live", "sweep"]


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


_PREFIX = "footprint-live-"
_LOCK = ".reader.lock"
_UNLOCKED_AGE_S = 3600
"""A spill folder without a lock file (an older reader's) is left this long."""


def _hold(path: Path) -> IO[bytes]:
    """An exclusive lock its reader holds for life: the kernel lets go when it dies."""
    file = open(path, "wb")  # noqa: SIM115 - held until the folder goes
    if fcntl is not None:
        fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    return file


def _remove(folder: Path, lock: IO[bytes]) -> None:
    shutil.rmtree(folder, True)
    lock.close()


def _abandoned(folder: Path) -> bool:
    """Whether spill ``folder``'s reader is gone (its lock is free, or it has none and is old)."""
    try:
        fd = os.open(folder / _LOCK, os.O_RDONLY)
    except FileNotFoundError:
        try:
            return time.time() - folder.stat().st_mtime > _UNLOCKED_AGE_S
        except OSError:
            return False
    except OSError:
        return False
    try:
        if fcntl is None:  # pragma: no cover - not POSIX
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return False  # held: its reader lives
        return True
    finally:
        os.close(fd)


def sweep(temp: Path, keep: Path | None = None) -> list[Path]:
    """Remove the spill folders under ``temp`` whose readers were killed; the ones removed."""
    gone = []
    for folder in temp.glob(f"{_PREFIX}*"):
        if folder != keep and folder.is_dir() and _abandoned(folder):
            shutil.rmtree(folder, True)
            gone.append(folder)
    return gone


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
            self._dir = Path(tempfile.mkdtemp(prefix=_PREFIX))
            lock = _hold(self._dir / _LOCK)
            self._finalizer = weakref.finalize(self, _remove, self._dir, lock)
            sweep(self._dir.parent, keep=self._dir)
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
