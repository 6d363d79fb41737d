"""Finding a store's files: sealed Parquet, live Arrow streams, and the unreadable ones."""

from __future__ import annotations

import os
from collections.abc import Container
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from recorder.store._damage import StoreWarning, schema_problem, warn_damaged
from recorder.store._livespill import LiveSpill
from recorder.write._layout import BLOBS, CHAIN, EVENTS, LIVE, STATS, segment_of
from recorder.write._live import heads_of_rows_read, last_seqs, read_live
from recorder.write._marker import marker_problem
from recorder.write._merged import replaced_by
from recorder.write._schemas import BLOB_SCHEMA, CHAIN_SCHEMA, EVENT_SCHEMA

__all__ = ["StoreFiles", "StoreWarning", "discover"]


@dataclass(slots=True)
class StoreFiles:
    """What one scan of a store directory found."""

    events: list[Path] = field(default_factory=list)
    blobs: list[Path] = field(default_factory=list)
    stats: list[Path] = field(default_factory=list)
    chain: list[Path] = field(default_factory=list)
    live_events: list[pa.RecordBatch] = field(default_factory=list)
    live_blobs: list[pa.RecordBatch] = field(default_factory=list)
    live_event_files: list[Path] = field(default_factory=list)
    """Big live event streams spilled to Parquet (``recorder.store._livespill``)."""
    live_blob_files: list[Path] = field(default_factory=list)
    live_chain: list[pa.RecordBatch] = field(default_factory=list)
    live_segments: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per live segment read: each run's last seq in it."""
    skipped: list[Path] = field(default_factory=list)
    reasons: dict[Path, str] = field(default_factory=dict)
    """Why each skipped file was skipped."""
    replaced: set[str] = field(default_factory=set)
    """Store paths a merged file replaces (``recorder.write._compact``): never read."""

    def skip(self, path: Path, why: str) -> None:
        """Leave ``path`` out, with the one warning naming it."""
        warn_damaged(path, why, stacklevel=5)
        self.skipped.append(path)
        self.reasons[path] = why


def _listed(folder: Path, suffix: str) -> list[Path]:
    """The files of ``folder`` ending in ``suffix``; none when it does not exist. A folder
    that cannot be read raises (``PermissionError`` naming it): never read as "no runs"."""
    try:
        with os.scandir(folder) as entries:
            return [Path(e.path) for e in entries if e.name.endswith(suffix)]
    except (FileNotFoundError, NotADirectoryError):
        return []


def _partitioned(folder: Path) -> list[Path]:
    """The sealed events files of every ``date=…`` partition under ``folder``."""
    try:
        with os.scandir(folder) as entries:
            parts = [Path(e.path) for e in entries if e.is_dir()]
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [path for part in parts for path in _listed(part, ".parquet")]


def _visible(paths: list[Path], skip: Container[Path] = ()) -> list[Path]:
    return sorted(p for p in paths if not p.name.startswith((".", "_")) and p not in skip)


_REQUIRED = {
    EVENTS: (EVENT_SCHEMA, ("run_id", "seq", "ts", "type", "payload")),
    BLOBS: (BLOB_SCHEMA, ("hash", "text")),
    CHAIN: (CHAIN_SCHEMA, ("run_id", "segment", "last_seq", "head")),
    STATS: (None, ("run_id", "writer")),
}
"""Per kind of file: the schema its columns must fit, and the columns it must have."""


def _readable_parquet(path: Path, found: StoreFiles, kind: str = EVENTS) -> bool:
    """Whether the footer reads, the store's marker (``recorder.write._marker``) says
    ``kind`` and the columns fit; else one warning, skipped."""
    expected, required = _REQUIRED[kind]
    try:
        meta = pq.read_metadata(path)
        schema = meta.schema.to_arrow_schema()
        problem = (marker_problem(path, schema, meta.metadata, kind)
                   or schema_problem(schema, expected or schema, required))
        if problem is None:
            found.replaced.update(replaced_by(meta.metadata))
    except Exception as exc:  # a torn footer, garbage, or a vanished file
        if not path.exists():
            return False
        problem = f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
    if problem is None:
        return True
    found.skip(path, problem)
    return False


def _fits(path: Path, batches: list[pa.RecordBatch], schema: pa.Schema,
          found: StoreFiles) -> bool:
    """Whether a live stream was written in ``schema``; else one warning, skipped."""
    if not batches or batches[0].schema.equals(schema):
        return True
    problem = schema_problem(batches[0].schema, schema, schema.names) or "another schema"
    found.skip(path, f"a live segment in another schema: {problem}")
    return False


def _live(path: Path, schema: pa.Schema,
          spill: LiveSpill | None) -> tuple[list[pa.RecordBatch], Path | None]:
    return spill.read(path, schema) if spill is not None else (read_live(path), None)


def _live_events(root: Path, found: StoreFiles, skip: Container[Path],
                 spill: LiveSpill | None) -> dict[str, dict[str, int]]:
    """Read the live event streams (kept, or spilled); per segment, its last seqs."""
    read: dict[str, tuple[Path, list[pa.RecordBatch], Path | None]] = {}
    for path in _visible(list(_listed(root / LIVE, ".events.arrows")), skip):
        batches, spilled = _live(path, EVENT_SCHEMA, spill)
        if _fits(path, batches, EVENT_SCHEMA, found):
            read[segment_of(path)] = (path, batches, spilled)
    for path in _visible(list(_listed(root / LIVE, ".blobs.arrows")), skip):
        batches, spilled = _live(path, BLOB_SCHEMA, spill)  # a blob precedes its events
        if _fits(path, batches, BLOB_SCHEMA, found):
            found.live_blobs.extend(batches)
            found.live_blob_files.extend([spilled] if spilled else [])
    lasts: dict[str, dict[str, int]] = {}
    for segment, (path, batches, spilled) in read.items():
        # sealed while we read (its rows or heads may be cut short): its Parquet
        # files, renamed into place before the live streams go, are whole; use those
        if path.exists():
            found.live_events.extend(batches)
            found.live_event_files.extend([spilled] if spilled else [])
            lasts[segment] = last_seqs(batches, spilled)
    return lasts


def _add_live_chain(root: Path, found: StoreFiles, skip: Container[Path],
                    lasts: dict[str, dict[str, int]]) -> None:
    for path in _visible(list(_listed(root / LIVE, ".chain.arrows")), skip):
        segment = segment_of(path)
        if segment in lasts:  # heads come after their rows: read them last
            batches = read_live(path)
            if _fits(path, batches, CHAIN_SCHEMA, found):
                found.live_chain.extend(heads_of_rows_read(batches, lasts[segment]))


def discover(root: Path, skip: Container[Path] = (), spill: LiveSpill | None = None,
             ) -> StoreFiles:
    """Scan ``root``; a live stream hides the sealed files of its own segment.

    Files in ``skip`` (found damaged by an earlier read) are left out silently;
    with ``spill``, big live streams are read a batch at a time into Parquet.
    """
    found = StoreFiles()
    lasts = _live_events(root, found, skip, spill)
    found.live_segments = lasts
    _add_live_chain(root, found, skip, lasts)
    live_ids = set(lasts)
    for path in _visible(list(_partitioned(root / EVENTS)), skip):
        if segment_of(path) not in live_ids and _readable_parquet(path, found):
            found.events.append(path)
    for path in _visible(list(_listed(root / BLOBS, ".parquet")), skip):
        if _readable_parquet(path, found, BLOBS):
            found.blobs.append(path)
    for path in _visible(list(_listed(root / STATS, ".parquet")), skip):
        if _readable_parquet(path, found, STATS):
            found.stats.append(path)
    for path in _visible(list(_listed(root / CHAIN, ".parquet")), skip):
        if segment_of(path) not in live_ids and _readable_parquet(path, found, CHAIN):
            found.chain.append(path)
    if found.replaced:  # a compactor merged these; its merged file holds their rows
        for name in ("events", "blobs", "stats", "chain"):
            kept = [p for p in getattr(found, name)
                    if p.relative_to(root).as_posix() not in found.replaced]
            setattr(found, name, kept)
    return found
