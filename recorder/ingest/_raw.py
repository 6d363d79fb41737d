"""The raw partition: every batch as it arrived, stored before it is mapped.

``STORE/ingest/raw/date=YYYY-MM-DD/<ns>-<pid>-<rand>.<signal>.<json|pb>`` holds the
(un-gzipped) body, written to a temp name and renamed (with ``durable``, the file and its
folder fsynced first), so a crash leaves whole files only; names sort by arrival. A batch
is first named ``….pending``, and loses that suffix only once every trace it holds is
mapped *and its run written* (after the runs, never ahead of them): a receiver that starts
maps every pending batch again, skipping the traces whose runs the store holds.
``STORE/ingest/writers`` lists the store writers that mapped them, so ``remap`` can drop
that mapping and map every raw batch again.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias

__all__ = ["MAPPED", "WRITERS", "Format", "RawBatch", "Signal", "note_writer", "quarantine",
           "raw_batches", "raw_name", "receiver_alive", "replace_raw", "settle", "store_raw",
           "worker_tag", "write_raw"]

Signal: TypeAlias = Literal["traces", "logs"]
Format: TypeAlias = Literal["json", "pb"]
RAW = Path("ingest") / "raw"
WRITERS = Path("ingest") / "writers"
MAPPED = Path("ingest") / "mapped"
"""The ledger of mapped trace ids earlier versions wrote ahead of the runs (no longer read)."""
PENDING = ".pending"
QUARANTINE = Path("ingest") / "quarantine"


@dataclass(frozen=True, slots=True)
class RawBatch:
    path: Path
    signal: Signal
    format: Format
    pending: bool = False

    def read(self) -> bytes:
        return self.path.read_bytes()


_last_ns = 0


def raw_name(store: Path, signal: Signal, fmt: Format, worker: int | None = None) -> Path:
    """A new raw batch's (pending) path; names from one process sort in the order they
    were given. A worker of ``receive --workers`` tags its batches (``-w<k>``), so its
    restart maps again its own pending batches and no other worker's."""
    global _last_ns
    ns = _last_ns = max(time.time_ns(), _last_ns + 1)
    folder = store / RAW / f"date={time.strftime('%Y-%m-%d', time.gmtime(ns / 1e9))}"
    tag = "" if worker is None else worker_tag(worker)
    return folder / (f"{ns:020d}{tag}-{os.getpid()}-{secrets.token_hex(4)}"
                     f".{signal}.{fmt}{PENDING}")


def worker_tag(worker: int) -> str:
    """What a worker's raw batch names carry after their arrival time."""
    return f"-w{worker}"


def _name_fields(name: str) -> tuple[int | None, int]:
    """The worker index (``None`` untagged) and the pid in a name :func:`raw_name` made
    (``<ns>[-w<k>]-<pid>-<rand>.…``); ``ValueError`` for a name it did not make."""
    parts = name.split(".", 1)[0].split("-")
    if len(parts) == 4 and parts[1].startswith("w"):
        return int(parts[1][1:]), int(parts[2])
    if len(parts) == 3:
        return None, int(parts[1])
    raise ValueError(f"not a raw batch name: {name!r}")


def write_raw(final: Path, body: bytes, *, durable: bool = False) -> Path:
    """Write one batch body (temp name, then rename; ``durable``: fsynced, file and folder,
    before this returns)."""
    final.parent.mkdir(parents=True, exist_ok=True)
    temp = final.with_name(final.name + ".tmp")
    with open(temp, "wb") as f:
        f.write(body)
        if durable:
            f.flush()
            os.fsync(f.fileno())
    os.replace(temp, final)
    if durable:
        _fsync_dir(final.parent)
    return final


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def store_raw(store: Path, body: bytes, signal: Signal, fmt: Format, *,
              durable: bool = False) -> Path:
    """Write one batch body into the raw partition under a new name."""
    return write_raw(raw_name(store, signal, fmt), body, durable=durable)


def settle(path: Path) -> None:
    """A pending raw batch whose runs are all written loses its ``.pending`` suffix."""
    if path.name.endswith(PENDING):
        with contextlib.suppress(FileNotFoundError):  # a remap may have settled it
            os.replace(path, path.with_name(path.name[: -len(PENDING)]))


def raw_batches(store: Path, *, pending: bool = False,
                worker: int | None = None) -> Iterator[RawBatch]:
    """Every stored batch (``pending``: only those not yet settled; ``worker``: only that
    worker's), in arrival order (torn ``.tmp`` files are skipped)."""
    for path in sorted((store / RAW).glob("date=*/*"), key=lambda p: p.name):
        parts = path.name.split(".")
        waiting = len(parts) == 4 and parts[3] == PENDING[1:]
        if (len(parts) == 3 or waiting) and parts[1] in ("traces", "logs") \
                and parts[2] in ("json", "pb") and (waiting or not pending) \
                and (worker is None or _worker_of(path.name) == worker):
            yield RawBatch(path, parts[1], parts[2], waiting)  # type: ignore[arg-type]


def _worker_of(name: str) -> int | None:
    try:
        return _name_fields(name)[0]
    except ValueError:  # not a name this module made: no worker's
        return None


def receiver_alive(raw: RawBatch) -> bool:
    """Whether the process that took ``raw`` runs (by the pid in its name, on this host):
    a running receiver maps its own pending batches; a dead one's wait for the next start."""
    try:
        pid = _name_fields(raw.path.name)[1]
        os.kill(pid, 0)
    except (IndexError, ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return pid != os.getpid()


def replace_raw(raw: RawBatch, body: bytes) -> None:
    """Rewrite a raw batch in place (temp name, fsync, rename): a redacted copy."""
    temp = raw.path.with_name(raw.path.name + ".tmp")
    with open(temp, "wb") as f:
        f.write(body)
        f.flush()
        os.fsync(f.fileno())
    os.replace(temp, raw.path)


def quarantine(store: Path, raw: RawBatch) -> Path:
    """Move a raw batch that does not decode out of the raw partition (into
    ``ingest/quarantine/``), so no remap reads it again; where it went."""
    folder = store / QUARANTINE
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / raw.path.name
    os.replace(raw.path, target)
    return target


def note_writer(store: Path, writer_id: str) -> None:
    """Remember a store writer that wrote mapped runs (one line each)."""
    path = store / WRITERS
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as f:
        f.write(writer_id + "\n")
