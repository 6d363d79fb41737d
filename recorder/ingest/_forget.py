"""What ``remap`` drops of the earlier mappings, and what it keeps: never a run twice.

The runs a mapping wrote are in files named by its writers (``STORE/ingest/writers``),
which a remap deletes, unless a compaction merged them (the receiver's own, or
``footprint compact``) into files under the compactor's id, beside other runs: those runs
stay as stored, and so does every mapping file holding a part of one of them (its events
or its heads), and so on (a run is kept whole or dropped whole). Only what readers read
counts (``recorder.write._merged.effective_files``: a file a merged one replaces is
gone), after any interrupted compaction is finished. The foreign traces of the runs kept
are then skipped by the remap, so each is stored once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from recorder.ingest._raw import MAPPED, WRITERS
from recorder.write._adopt import adopt_orphans
from recorder.write._compact import finish_compactions
from recorder.write._layout import BLOBS, CHAIN, EVENTS, STATS, SUMMARIES, segment_of
from recorder.write._merged import effective_files

__all__ = ["Forgotten", "forget_mapping"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Forgotten:
    """What a remap dropped (files deleted) and kept (foreign trace ids of runs a compaction
    merged, which the remap skips)."""

    gone: int
    kept: frozenset[str]


def _writers(store: Path) -> tuple[str, ...]:
    path = store / WRITERS
    return tuple(w for w in path.read_text(encoding="utf-8").split() if w) \
        if path.exists() else ()


def _runs(path: Path) -> set[str]:
    column = pq.read_table(path, columns=["run_id"], partitioning=None).column("run_id")
    return {str(r) for r in column.unique().to_pylist()}


def _kept(merged: list[Path], mine: list[Path]) -> set[Path]:
    """The mapping's files holding a part of a run that a merged file holds (to a fixed
    point: a file kept keeps its other runs whole too)."""
    held: set[str] = set().union(*map(_runs, merged)) if merged else set()
    if not held:
        return set()
    runs = {path: _runs(path) for path in mine}
    kept: set[Path] = set()
    grew = True
    while grew:
        grew = False
        for path in mine:
            if path not in kept and runs[path] & held:
                kept.add(path)
                held |= runs[path]
                grew = True
    return kept


def _delete(store: Path, writers: tuple[str, ...], gone: list[Path]) -> int:
    """Delete ``gone``, their cached outlines and the mapping's stats; its blobs too unless
    a mapped run is kept (its text may be there; a blob stored twice is harmless)."""
    segments = {segment_of(p) for p in gone}
    extra = [p for p in (store / SUMMARIES).glob("*.parquet") if segment_of(p) in segments]
    extra += [p for p in (store / STATS).glob("*.parquet") if p.name.startswith(writers)]
    for path in [*gone, *extra]:
        path.unlink(missing_ok=True)
    blobs = [] if _kept_traces(store) else [
        p for p in (store / BLOBS).glob("*.parquet") if p.name.startswith(writers)]
    for path in blobs:
        path.unlink(missing_ok=True)
    return len(gone) + len(extra) + len(blobs)


def _kept_traces(store: Path) -> frozenset[str]:
    from recorder.store._catalog import open_store

    if not (store / EVENTS).is_dir():
        return frozenset()
    with open_store(store) as s:
        rows = s.rows("SELECT DISTINCT foreign_trace_id FROM run_sources "
                      "WHERE foreign_trace_id IS NOT NULL")
    return frozenset(str(t) for (t,) in rows)


def forget_mapping(store: Path) -> Forgotten:
    """Delete the earlier mappings' files a remap may drop; the traces of the runs kept."""
    writers = _writers(store)
    (store / MAPPED).unlink(missing_ok=True)
    if not writers:
        return Forgotten(gone=0, kept=_kept_traces(store))
    adopt_orphans(store)  # killed mapping writers' segments: sealed, then judged like any
    finish_compactions(store)
    folders = [*sorted((store / EVENTS).glob("date=*")), store / CHAIN]
    files = [p for folder in folders for p in effective_files(store, folder)]
    mine = [p for p in files if p.name.startswith(writers)]
    merged = [p for p in files if not p.name.startswith(writers)
              and segment_of(p).rsplit("-", 1)[-1].startswith("c")]
    kept = _kept(merged, mine)
    gone = _delete(store, writers, [p for p in mine if p not in kept])
    (store / WRITERS).unlink()
    return Forgotten(gone=gone, kept=_kept_traces(store))
