"""Compaction: many small sealed files merged into few, the chain and readers unharmed.

Each writer seals a segment into its own files, so a store written by many
short-lived writers (or a writer sealing often) piles up small files, and
every read pays for each footer. :func:`compact` merges the small sealed
files of each folder (each ``events/date=…/`` partition, ``chain/``,
``blobs/``, ``stats/``) into one file per folder (or several: at most
:data:`MAX_RUNS` runs and 256 MB each), rows sorted (events by run and seq, so
a run's rows sit together and a read by run skips the rest).

Compaction is a transaction (``recorder.write._merged``): the merged file is
written under a temp name, fsynced, renamed into place and its folder
fsynced, always; it names the files it replaces, by path, in its key-value
metadata (``footprint.replaces``), and only then are the originals deleted.
Readers and later compactions honour that record: a replaced file is never
read or merged again, and each compaction first finishes an interrupted one
(deletes the originals left, unread). A compactor killed anywhere, or a
power loss, leaves every row stored once. Only the store's own files are
merged (named, marked and shaped as footprint writes them); a stray file
stays for ``footprint doctor`` to name. A merged file's row groups hold
whole runs, at most :data:`RUNS_PER_GROUP` of them, so a damaged row group
costs the runs it holds, not the file's. The rows are copied byte for byte
(payloads, row checks, heads), so every run verifies as before. Live
segments are never touched; one compactor at a time (``live/compact.lock``).
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from footprint._errors import ConfigError
from recorder.write._layout import (
    BLOBS,
    CHAIN,
    EVENTS,
    LIVE,
    STATS,
    SUMMARIES,
    new_writer_id,
    segment_of,
)
from recorder.write._marker import MARKER_KEY, kind_of
from recorder.write._merged import (
    REPLACES_KEY,
    compaction_lock,
    effective_files,
    finish,
    finish_in,
    folders,
    fsync,
    own_files,
    own_name,
    replaced_by,
    stale_temps,
)
from recorder.write._sorted import Source, sources, write_sorted

__all__ = ["AUTO_COMPACT_AT", "MAX_RUNS", "REPLACES_KEY", "RUNS_PER_GROUP", "SMALL_BYTES",
           "Compacted", "compact", "finish_compactions", "replaced_by", "row_groups", "small_files"]

SMALL_BYTES = 8 << 20
"""A sealed file smaller than this is merged by :func:`compact`."""
AUTO_COMPACT_AT = 64
"""A writer compacts once a folder it sealed into holds this many small files."""
_MERGED_BYTES = 256 << 20
"""At most this much (on disk) merged into one file."""
MAX_RUNS = 4096
"""At most this many runs merged into one file (their files counted whole). Writing a
merged file holds its footer in memory, a few hundred bytes per column of each row group
(at most :data:`RUNS_PER_GROUP` runs): 30,000 runs' events took ~90 MB to write, this many
~15 MB. A file of the store holding more runs alone is not merged again."""
_ROW_GROUP = 65_536
RUNS_PER_GROUP = 16
"""At most this many runs in one row group of a merged file (a run is never split, unless
it alone passes 65,536 rows): a damaged row group costs at most these runs."""
_SORT = {EVENTS: ("run_id", "seq"), CHAIN: ("run_id", "last_seq"), BLOBS: ("hash",),
         STATS: ("run_id", "written_ns")}


@dataclass(frozen=True, slots=True, kw_only=True)
class Compacted:
    """One merged file and the files it replaced (deleted since)."""

    merged: Path
    replaced: tuple[Path, ...]
    rows: int


def small_files(folder: Path, live: set[str], small: int = SMALL_BYTES) -> list[Path]:
    """The sealed files of ``folder`` named like the store's own, smaller than ``small``
    bytes, that no live segment owns (a cheap count: no file is opened)."""
    found = []
    for path in sorted(folder.glob("*.parquet")) if folder.is_dir() else []:
        if not own_name(path) or segment_of(path) in live:
            continue
        with contextlib.suppress(OSError):
            if path.stat().st_size < small:
                found.append(path)
    return found


def finish_compactions(root: str | os.PathLike[str]) -> list[Path]:
    """Finish what killed compactors left: delete the originals each merged file replaces
    (never reading them). The files deleted; none while another compactor works."""
    with compaction_lock(Path(root)) as held:
        return finish(root) if held else []


def compact(root: str | os.PathLike[str], *, small: int = SMALL_BYTES,
            min_files: int = 2, max_runs: int = MAX_RUNS) -> list[Compacted]:
    """Merge the small sealed files of every folder of the store at ``root``; what was merged.

    First removes dead writers' temp files and finishes interrupted compactions.
    A folder with fewer than ``min_files`` small files is left alone. A merged file holds
    at most ``max_runs`` runs (:data:`MAX_RUNS`). Returns nothing when another compactor
    holds the store's compaction lock.
    """
    if type(max_runs) is not int or max_runs < 1:
        raise ConfigError(f"compact(max_runs={max_runs!r}): pass a run count >= 1 "
                          f"(default {MAX_RUNS})")
    base = Path(root)
    done: list[Compacted] = []
    with compaction_lock(base) as held:
        if not held:
            return done
        for temp in stale_temps(base, locked=True):
            temp.unlink(missing_ok=True)
        live = {segment_of(p) for p in (base / LIVE).glob("*.arrows")}
        outlines = _outlines(base)
        for folder in folders(base):
            owned = own_files(folder)
            finish_in(base, folder, owned)  # a killed compactor's originals: deleted unread
            files = [p for p in effective_files(base, folder, owned)
                     if segment_of(p) not in live and _size(p) < small
                     and not _full(p, max_runs)]
            for group in _groups(files):
                if len(group) >= min_files:
                    done.extend(_merge(base, folder, group, outlines, max_runs))
    return done


def _outlines(root: Path) -> dict[str, list[Path]]:
    """The cached outlines (``summaries/``) by the segment of the events file they outline."""
    found: dict[str, list[Path]] = {}
    for path in (root / SUMMARIES).glob("*.parquet"):
        found.setdefault(segment_of(path), []).append(path)
    return found


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 1 << 62  # gone meanwhile: never merged


def _full(path: Path, max_runs: int) -> bool:
    """Whether ``path`` holds row groups of ``max_runs`` runs or more: a merged file as
    full as one gets, never merged again."""
    try:
        groups: int = pq.read_metadata(path).num_row_groups
    except (OSError, pa.ArrowException):
        return False
    return groups >= max(max_runs // RUNS_PER_GROUP, 2)


def _groups(files: list[Path]) -> list[list[Path]]:
    groups: list[list[Path]] = [[]]
    size = 0
    for path in files:
        add = _size(path)
        if groups[-1] and size + add > _MERGED_BYTES:
            groups.append([])
            size = 0
        groups[-1].append(path)
        size += add
    return [g for g in groups if g]


def _merge(root: Path, folder: Path, group: list[Path], outlines: dict[str, list[Path]],
           max_runs: int) -> list[Compacted]:
    kind = kind_of(group[0])
    found = sources(group, _SORT[kind])  # a damaged file is left where it is, for doctor
    done = [_merge_one(root, folder, part, kind, outlines)
            for part in _parts(found, max_runs if "run_id" in _SORT[kind] else None)
            if len(part) >= 2]
    return done or [Compacted(merged=folder / f"{new_writer_id()}-c0000.parquet",
                              replaced=(), rows=0)]


def _parts(found: list[Source], max_runs: int | None) -> list[list[Source]]:
    """``found`` cut, in order, into parts of at most ``max_runs`` runs each (counted per
    file; a file alone may hold more, and then stays as it is)."""
    if max_runs is None:
        return [found]
    parts: list[list[Source]] = [[]]
    runs = 0
    for source in found:
        if parts[-1] and runs + len(source.counts) > max_runs:
            parts.append([])
            runs = 0
        parts[-1].append(source)
        runs += len(source.counts)
    return parts


def _merge_one(root: Path, folder: Path, found: list[Source], kind: str,
               outlines: dict[str, list[Path]]) -> Compacted:
    final = folder / f"{new_writer_id()}-c0000.parquet"
    replaced = {s.path.relative_to(root).as_posix() for s in found}
    for s in found:
        replaced.update(replaced_by(s.metadata))
    rows = _write_durably(found, final, kind, sorted(replaced))
    for s in found:  # the merged file is on disk and names them: readers skip them
        s.path.unlink(missing_ok=True)
        for outline in outlines.get(segment_of(s.path), []) if kind == EVENTS else []:
            outline.unlink(missing_ok=True)
    return Compacted(merged=final, replaced=tuple(s.path for s in found), rows=rows)


def _write_durably(found: list[Source], final: Path, kind: str, replaced: list[str]) -> int:
    """Merge ``found`` sorted into a temp name in row groups of whole runs (in bounded
    memory: ``recorder.write._sorted``), fsync it, rename it into place and fsync its
    folder: on disk before any original goes. The rows written."""
    from recorder.write._segment import parquet_options  # its chain needs the event catalog

    tmp = final.with_name(f".{final.name}.tmp")
    options = parquet_options(pa.unify_schemas([s.schema for s in found],
                                               promote_options="permissive"))
    cap = min(int(options.pop("row_group_size", _ROW_GROUP)), _ROW_GROUP)
    metadata = {REPLACES_KEY: json.dumps(replaced).encode(), MARKER_KEY: kind.encode()}
    try:
        rows = write_sorted(found, tmp, keys=_SORT[kind], metadata=metadata, options=options,
                            cap=cap, runs_per_group=RUNS_PER_GROUP,
                            spill=final.with_name(f".{final.name[:-len('0.parquet')]}1"
                                                  ".parquet.tmp"))
        fsync(tmp)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, final)
    fsync(final.parent)
    return rows


def row_groups(table: pa.Table, cap: int = _ROW_GROUP) -> list[tuple[int, int]]:
    """``(start, stop)`` of each row group of a merged file: whole runs of a table sorted by
    run, at most :data:`RUNS_PER_GROUP` runs and ``cap`` rows (a bigger run alone)."""
    n = table.num_rows
    if "run_id" not in table.column_names:
        return [(s, min(s + cap, n)) for s in range(0, n, cap)]
    if n == 0:
        return []
    ids = table.column("run_id").combine_chunks()
    changed = pc.indices_nonzero(pc.not_equal(ids.slice(1), ids.slice(0, n - 1))).to_pylist()
    starts = [0, *(int(i) + 1 for i in changed)]
    groups, begin, runs = [], 0, 0
    for start, stop in zip(starts, [*starts[1:], n], strict=True):
        if runs and (runs >= RUNS_PER_GROUP or stop - begin > cap):
            groups.append((begin, start))
            begin, runs = start, 0
        runs += 1
    return [*groups, (begin, n)]
