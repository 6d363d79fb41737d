"""The raw partition: every batch as it arrived, stored before it is mapped.

``STORE/ingest/raw/date=YYYY-MM-DD/<ns>-<pid>-<rand>.<signal>.<json|pb>`` holds the
(un-gzipped) body, written to a temp name and renamed, so a crash leaves whole files
only; names sort by arrival. ``STORE/ingest/writers`` lists the store writers that
mapped them, so ``remap`` can drop that mapping and map every raw batch again, and
``STORE/ingest/mapped`` the trace ids whose runs are in the store, so a trace that comes
again (the same file ingested twice, an exporter's retry) is not stored a second time.
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias

__all__ = ["Format", "RawBatch", "Signal", "forget_mapping", "mapped_traces", "note_mapped",
           "note_writer", "quarantine", "raw_batches", "replace_raw", "store_raw"]

Signal: TypeAlias = Literal["traces", "logs"]
Format: TypeAlias = Literal["json", "pb"]
RAW = Path("ingest") / "raw"
WRITERS = Path("ingest") / "writers"
MAPPED = Path("ingest") / "mapped"
QUARANTINE = Path("ingest") / "quarantine"
_MAPPED_DIRS = ("events", "blobs", "chain", "summaries", "stats", "live")


@dataclass(frozen=True, slots=True)
class RawBatch:
    path: Path
    signal: Signal
    format: Format

    def read(self) -> bytes:
        return self.path.read_bytes()


def store_raw(store: Path, body: bytes, signal: Signal, fmt: Format, *,
              durable: bool = False) -> Path:
    """Write one batch body into the raw partition (temp name, then rename)."""
    ns = time.time_ns()
    folder = store / RAW / f"date={time.strftime('%Y-%m-%d', time.gmtime(ns / 1e9))}"
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / f"{ns:020d}-{os.getpid()}-{secrets.token_hex(4)}.{signal}.{fmt}"
    temp = final.with_name(final.name + ".tmp")
    with open(temp, "wb") as f:
        f.write(body)
        if durable:
            f.flush()
            os.fsync(f.fileno())
    os.replace(temp, final)
    return final


def raw_batches(store: Path) -> Iterator[RawBatch]:
    """Every stored batch, in arrival order (torn ``.tmp`` files are skipped)."""
    for path in sorted((store / RAW).glob("date=*/*"), key=lambda p: p.name):
        parts = path.name.split(".")
        if len(parts) == 3 and parts[1] in ("traces", "logs") and parts[2] in ("json", "pb"):
            yield RawBatch(path, parts[1], parts[2])  # type: ignore[arg-type]


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


_LINE_BYTES = 64
"""At least the bytes one ledger line takes (a trace id is 32 hex digits and a newline)."""


def mapped_traces(store: Path, last: int) -> list[str]:
    """The ``last`` trace ids most recently noted as mapped into ``store``, oldest first.

    Only the ledger's tail is read: a receiver that has taken in millions of traces
    starts as fast as a new one."""
    try:
        with open(store / MAPPED, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            start = max(size - last * _LINE_BYTES, 0)
            f.seek(start)
            lines = f.read().decode("utf-8", "replace").split("\n")
    except FileNotFoundError:
        return []
    if start:
        lines = lines[1:]  # the first line read may be the end of an earlier one
    return [t for t in (line.strip() for line in lines) if t][-last:]


def note_mapped(store: Path, trace_ids: Iterable[str]) -> None:
    """Remember traces whose runs were written (one line each, one append per call)."""
    text = "".join(f"{t}\n" for t in trace_ids)
    if not text:
        return
    path = store / MAPPED
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)


def forget_mapping(store: Path) -> int:
    """Delete every store file the mapping writers wrote; how many files went."""
    (store / MAPPED).unlink(missing_ok=True)
    path = store / WRITERS
    if not path.exists():
        return 0
    writers = tuple(w for w in path.read_text(encoding="utf-8").split() if w)
    gone = 0
    for folder in _MAPPED_DIRS:
        for file in (store / folder).rglob("*"):
            if file.is_file() and file.name.startswith(writers):
                file.unlink()
                gone += 1
    path.unlink()
    return gone
