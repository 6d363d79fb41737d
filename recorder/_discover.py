"""Finding a store's files: sealed Parquet, live Arrow streams, and the unreadable ones."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from recorder._layout import BLOBS, CHAIN, EVENTS, LIVE, STATS, segment_of
from recorder._rows import EVENT_SCHEMA

__all__ = ["StoreFiles", "StoreWarning", "discover", "heads_of_rows_read", "read_live"]


class StoreWarning(UserWarning):
    """A store file could not be read and was skipped (the rest stays queryable)."""


@dataclass(slots=True)
class StoreFiles:
    """What one scan of a store directory found."""

    events: list[Path] = field(default_factory=list)
    blobs: list[Path] = field(default_factory=list)
    stats: list[Path] = field(default_factory=list)
    chain: list[Path] = field(default_factory=list)
    live_events: list[pa.RecordBatch] = field(default_factory=list)
    live_blobs: list[pa.RecordBatch] = field(default_factory=list)
    live_chain: list[pa.RecordBatch] = field(default_factory=list)
    skipped: list[Path] = field(default_factory=list)


def _visible(paths: list[Path]) -> list[Path]:
    return sorted(p for p in paths if not p.name.startswith((".", "_")))


def _readable_parquet(path: Path, skipped: list[Path]) -> bool:
    try:
        pq.read_metadata(path)
    except Exception as exc:  # a torn footer, garbage, or a vanished file
        if path.exists():
            warnings.warn(
                f"skipping unreadable store file {str(path)!r} ({type(exc).__name__}: {exc}); "
                "delete or restore it — every other file stays queryable",
                StoreWarning,
                stacklevel=3,
            )
            skipped.append(path)
        return False
    return True


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


def heads_of_rows_read(chain: list[pa.RecordBatch],
                        events: list[pa.RecordBatch]) -> list[pa.RecordBatch]:
    """The live heads that end on a row read: a head written after the rows were read
    (the writer went on meanwhile) would otherwise claim rows this scan does not hold."""
    if not chain:
        return []
    rows = pa.Table.from_batches(events, schema=EVENT_SCHEMA).group_by("run_id").aggregate(
        [("seq", "max")])
    last = dict(zip(rows.column("run_id").to_pylist(), rows.column("seq_max").to_pylist(),
                    strict=True))
    kept = []
    for batch in chain:
        ends = [last.get(run, -1) for run in batch.column("run_id").to_pylist()]
        mask = pc.less_equal(batch.column("last_seq"), pa.array(ends, pa.int64()))
        kept.append(batch.filter(mask))
    return kept


def discover(root: Path) -> StoreFiles:
    """Scan ``root``; a live stream hides the sealed files of its own segment."""
    found = StoreFiles()
    live_events = _visible(list((root / LIVE).glob("*.events.arrows")))
    live_blobs = _visible(list((root / LIVE).glob("*.blobs.arrows")))
    events: dict[str, list[pa.RecordBatch]] = {}
    for path in live_events:  # events before blobs: a blob is written before its events
        events[segment_of(path)] = read_live(path)
    for path in live_blobs:
        found.live_blobs.extend(read_live(path))
    chains = {segment_of(p): read_live(p)
              for p in _visible(list((root / LIVE).glob("*.chain.arrows")))
              if segment_of(p) in events}  # heads come after their rows: read them last
    live_ids: set[str] = set()
    for segment, batches in events.items():
        if (root / LIVE / f"{segment}.events.arrows").exists():
            live_ids.add(segment)
            found.live_events.extend(batches)
            found.live_chain.extend(heads_of_rows_read(chains.get(segment, []), batches))
        # else sealed while we read (its rows or heads may be cut short): its Parquet
        # files, renamed into place before the live streams go, are whole; use those
    for path in _visible(list((root / EVENTS).glob("*/*.parquet"))):
        if segment_of(path) not in live_ids and _readable_parquet(path, found.skipped):
            found.events.append(path)
    for path in _visible(list((root / BLOBS).glob("*.parquet"))):
        if _readable_parquet(path, found.skipped):
            found.blobs.append(path)
    for path in _visible(list((root / STATS).glob("*.parquet"))):
        if _readable_parquet(path, found.skipped):
            found.stats.append(path)
    for path in _visible(list((root / CHAIN).glob("*.parquet"))):
        if segment_of(path) not in live_ids and _readable_parquet(path, found.skipped):
            found.chain.append(path)
    return found
