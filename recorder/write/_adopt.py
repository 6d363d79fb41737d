"""Orphaned segments: the live streams of a writer that was killed, sealed by someone else.

Every :class:`~recorder.ParquetSink` holds an exclusive ``flock`` on
``live/<writer>.lock`` for as long as it lives; the kernel lets go of it when
the process dies, however it dies. :func:`adopt_orphans` takes that lock for
each writer whose live segments it finds: when it can, the writer is gone,
and its segments are sealed into Parquet exactly as the writer would have
(rows up to the last whole batch; heads only over rows that are there), then
the live streams are removed; a lock file nobody holds, of a writer killed with
nothing unsealed, is removed too. A writer from before the lock files existed is
judged by its pid (on this host). A later writer runs this at start-up, on
its file thread; ``footprint doctor`` can run it too. Adopting twice, or two
adopters at once, is harmless: the lock serialises them and sealing rewrites
the same files from the same streams.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pyarrow as pa

from recorder.write._layout import BLOBS, CHAIN, EVENTS, LIVE, is_writer_lock, segment_of
from recorder.write._live import heads_of_rows_read, read_live
from recorder.write._rows import BLOB_SCHEMA, CHAIN_SCHEMA, EVENT_SCHEMA
from recorder.write._segment import by_date, write_atomically

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: liveness by pid only
    fcntl = None  # type: ignore[assignment]

__all__ = ["ADOPTED_KEY", "WriterLock", "adopt_orphans", "lock_path", "remove_stale_locks",
           "stale_locks", "writer_alive", "writer_of"]

_log = logging.getLogger("recorder")

ADOPTED_KEY = b"footprint.adopted"
"""Set in the Parquet metadata of the events files an adopter sealed (the writer died):
``verify`` reads a missing head at their end as a crash, not a tamper
(``recorder.store._stopped``)."""
_STREAMS = ("events", "blobs", "chain")


def writer_of(segment: str) -> str:
    """The writer id a segment id starts with (``<writer>-<nnnnn>``)."""
    return segment.rsplit("-", 1)[0]


def lock_path(root: Path, writer: str) -> Path:
    return root / LIVE / f"{writer}.lock"


class WriterLock:
    """The lock a live writer holds on ``live/<writer>.lock`` (released by the kernel at death)."""

    def __init__(self, root: Path, writer: str) -> None:
        self.path = lock_path(root, writer)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[bytes] | None = self._take()

    def _take(self) -> IO[bytes]:
        """Open and lock the file; again if a sweep of stale locks (:func:`remove_stale_locks`)
        removed it between the two (it takes only a lock nobody holds)."""
        for attempt in range(100):
            file = open(self.path, "ab")  # noqa: SIM115 - held for life
            if fcntl is None:
                return file
            try:
                fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # a sweep holds it for the instant it takes to remove it
                file.close()
                if attempt == 99:
                    raise
                time.sleep(0.01)
                continue
            if _same_file(file.fileno(), self.path):
                return file
            file.close()
        raise OSError(f"could not take the writer lock {str(self.path)!r}")

    def forget(self) -> None:
        """Close this process's copy of the lock without letting go (a forked child: the
        parent still holds it through its own copy)."""
        file, self._file = self._file, None
        if file is not None:
            file.close()

    def release(self) -> None:
        """Remove the lock file and let go (at a clean shutdown). Idempotent."""
        file, self._file = self._file, None
        if file is not None:
            with contextlib.suppress(OSError):
                self.path.unlink()
            file.close()


@contextlib.contextmanager
def _if_gone(root: Path, writer: str) -> Iterator[bool]:
    """``True`` (holding the writer's lock) when the writer is gone, else ``False``."""
    path = lock_path(root, writer)
    if fcntl is None:
        yield not _pid_alive(writer)
        return
    if not path.exists() and _pid_alive(writer):
        yield False  # an older writer (no lock file) that still runs
        return
    with open(path, "ab") as file:  # for an older writer this makes the file adopters share
        try:
            fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held: the writer lives (or another adopter is at work)
            yield False
            return
        yield True


def _same_file(fd: int, path: Path) -> bool:
    """Whether ``path`` still names the file open as ``fd`` (not removed, not replaced)."""
    try:
        here, there = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def stale_locks(root: Path) -> list[Path]:
    """The lock files in ``live/`` that no process holds, of writers with no live segment
    left (killed with nothing unsealed): nothing reads them, nothing removes them but
    :func:`remove_stale_locks`. A held lock is a live writer's: never listed."""
    live = root / LIVE
    if fcntl is None:  # pragma: no cover - not POSIX: no lock to tell a live writer by
        return []
    owners = {writer_of(segment_of(p)) for p in live.glob("*.arrows")}
    writers = [p.name[:-len(".lock")] for p in sorted(live.glob("*.lock"))
               if is_writer_lock(p.name)]  # never the compactor's, or another tool's
    return [lock_path(root, w) for w in writers
            if w not in owners and not writer_alive(root, w)]


def remove_stale_locks(root: str | os.PathLike[str]) -> list[Path]:
    """Remove :func:`stale_locks`, each while holding its lock (so no writer can be taking
    it meanwhile: a writer that opened it just before re-takes a new file); the removed."""
    removed = []
    for path in stale_locks(Path(root)):
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if _same_file(fd, path):
                path.unlink()
                removed.append(path)
        except OSError:
            continue  # taken meanwhile: a writer lives
        finally:
            os.close(fd)
    return removed


def writer_alive(root: Path, writer: str) -> bool:
    """Whether ``writer`` holds its lock now: the one proof a live segment's writer runs.

    A pid in a name proves nothing (reused, or made up); no lock file, or a
    lock nobody holds, is a writer that is gone."""
    try:
        fd = os.open(lock_path(root, writer), os.O_RDONLY)
    except OSError:
        return False
    try:
        if fcntl is None:  # pragma: no cover - not POSIX: the pid is all there is
            return _pid_alive(writer)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True  # held by the writer
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def _pid_alive(writer: str) -> bool:
    """A writer without a lock file (an older version): alive unless its pid is gone here."""
    try:
        pid = int(writer.split("-")[1])
        os.kill(pid, 0)
    except (IndexError, ValueError):
        return True  # not a name we wrote: leave it alone
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def adopt_orphans(root: str | os.PathLike[str], *, durable: bool = False) -> list[str]:
    """Seal every live segment whose writer is gone; return the segment ids sealed."""
    base = Path(root)
    segments = sorted({segment_of(p) for p in (base / LIVE).glob("*.arrows")
                       if not p.name.startswith((".", "_"))})
    by_writer: dict[str, list[str]] = {}
    for segment in segments:
        by_writer.setdefault(writer_of(segment), []).append(segment)
    adopted: list[str] = []
    for writer, owned in by_writer.items():
        with _if_gone(base, writer) as gone:
            if not gone:
                continue
            for segment in owned:
                _seal(base, segment, durable=durable)
                adopted.append(segment)
            with contextlib.suppress(OSError):
                lock_path(base, writer).unlink()
    if adopted:
        _log.warning("recorder: sealed %d segment(s) of writers that were killed: %s",
                     len(adopted), ", ".join(adopted))
    remove_stale_locks(base)
    return adopted


def _seal(root: Path, segment: str, *, durable: bool) -> None:
    """Seal one orphaned segment (the writer's own seal, from its streams)."""
    live = {kind: root / LIVE / f"{segment}.{kind}.arrows" for kind in _STREAMS}
    if live["events"].exists():  # else it died after sealing them: the Parquet is whole
        events = read_live(live["events"])
        blobs = read_live(live["blobs"])
        chain = heads_of_rows_read(read_live(live["chain"]), events)
        if blobs:
            write_atomically(pa.Table.from_batches(blobs, schema=BLOB_SCHEMA),
                             root / BLOBS / f"{segment}.parquet", durable=durable)
        heads = pa.Table.from_batches(chain, schema=CHAIN_SCHEMA)
        if heads.num_rows:
            write_atomically(heads, root / CHAIN / f"{segment}.parquet", durable=durable)
        rows = pa.Table.from_batches(events, schema=EVENT_SCHEMA)
        rows = rows.replace_schema_metadata({**(rows.schema.metadata or {}), ADOPTED_KEY: b"1"})
        for day, part in by_date(rows) if rows.num_rows else []:
            write_atomically(part, root / EVENTS / f"date={day}" / f"{segment}.parquet",
                             durable=durable)
    for stale in [*root.glob(f"*/.{segment}.parquet.tmp"),
                  *root.glob(f"{EVENTS}/*/.{segment}.parquet.tmp")]:
        stale.unlink(missing_ok=True)  # the dead writer's half-written files
    for kind in _STREAMS:  # events first: while it exists, readers use the streams
        live[kind].unlink(missing_ok=True)
