"""Compaction: many small sealed files merged into few, the chain and readers unharmed.

Each writer seals a segment into its own files, so a store written by many
short-lived writers (or a writer sealing often) piles up small files, and
every read pays for each footer. :func:`compact` merges the small sealed
files of each folder (each ``events/date=…/`` partition, ``chain/``,
``blobs/``, ``stats/``) into one file per folder, rows sorted (events by run
and seq, so a run's rows sit together and a read by run skips the rest).

Nothing is rewritten in place: the merged file is written beside the
originals (temp name, rename) and lists them, by path, in its key-value
metadata (``footprint.replaces``); discovery leaves out every file a merged
file replaces, so a reader sees either the originals or the merged file,
never both, and a crash between the rename and the deletions leaves a
store that reads the same. The rows are copied byte for byte (payloads,
row checks, heads), so every run verifies as before. Live segments are
never touched; one compactor at a time (``live/compact.lock``).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

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

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no compaction lock
    fcntl = None  # type: ignore[assignment]

__all__ = ["AUTO_COMPACT_AT", "REPLACES_KEY", "SMALL_BYTES", "Compacted", "compact",
           "replaced_by", "small_files"]

REPLACES_KEY = b"footprint.replaces"
"""Metadata key of a merged file: the JSON list of the store paths it replaces."""
SMALL_BYTES = 8 << 20
"""A sealed file smaller than this is merged by :func:`compact`."""
AUTO_COMPACT_AT = 64
"""A writer compacts once a folder it sealed into holds this many small files."""
_MERGED_BYTES = 256 << 20
"""At most this much (on disk) merged into one file."""
_ROW_GROUP = 65_536
_SORT = {EVENTS: ("run_id", "seq"), CHAIN: ("run_id", "last_seq"), BLOBS: ("hash",),
         STATS: ("run_id", "written_ns")}


@dataclass(frozen=True, slots=True, kw_only=True)
class Compacted:
    """One merged file and the files it replaced (deleted since)."""

    merged: Path
    replaced: tuple[Path, ...]
    rows: int


def replaced_by(metadata: dict[bytes, bytes] | None) -> list[str]:
    """The store paths a merged file replaces (empty for any other file)."""
    raw = (metadata or {}).get(REPLACES_KEY)
    if raw is None:
        return []
    try:
        listed = json.loads(raw)
    except ValueError:
        return []
    return [p for p in listed if isinstance(p, str)] if isinstance(listed, list) else []


def _folders(root: Path) -> list[Path]:
    return [*sorted((root / EVENTS).glob("date=*")), root / CHAIN, root / BLOBS, root / STATS]


def small_files(folder: Path, live: set[str], small: int = SMALL_BYTES) -> list[Path]:
    """The sealed files of ``folder`` smaller than ``small`` bytes that no live segment owns."""
    found = []
    for path in sorted(folder.glob("*.parquet")) if folder.is_dir() else []:
        if path.name.startswith((".", "_")) or segment_of(path) in live:
            continue
        with contextlib.suppress(OSError):
            if path.stat().st_size < small:
                found.append(path)
    return found


@contextlib.contextmanager
def _lock(root: Path) -> Iterator[bool]:
    path = root / LIVE / "compact.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as file:
        if fcntl is not None:
            try:
                fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                yield False  # another compactor is at work
                return
        yield True


def compact(root: str | os.PathLike[str], *, durable: bool = False,
            small: int = SMALL_BYTES, min_files: int = 2) -> list[Compacted]:
    """Merge the small sealed files of every folder of the store at ``root``; what was merged.

    A folder with fewer than ``min_files`` small files is left alone. Returns
    nothing when another compactor holds the store's compaction lock.
    """
    base = Path(root)
    done: list[Compacted] = []
    with _lock(base) as held:
        if not held:
            return done
        live = {segment_of(p) for p in (base / LIVE).glob("*.arrows")}
        for folder in _folders(base):
            files = small_files(folder, live, small)
            for group in _groups(files):
                if len(group) >= min_files:
                    done.append(_merge(base, folder, group, durable=durable))
    return done


def _groups(files: list[Path]) -> list[list[Path]]:
    groups: list[list[Path]] = [[]]
    size = 0
    for path in files:
        try:
            add = path.stat().st_size
        except OSError:
            continue
        if groups[-1] and size + add > _MERGED_BYTES:
            groups.append([])
            size = 0
        groups[-1].append(path)
        size += add
    return [g for g in groups if g]


def _read(path: Path, kind: str) -> tuple[pa.Table, list[str]] | None:
    """The rows of one of the store's files and what it replaced; ``None`` for a file that
    is not the store's own (marker of another kind) or that does not read whole."""
    try:
        meta = pq.read_metadata(path).metadata or {}
        marker = meta.get(MARKER_KEY)
        if marker is not None and marker.decode("utf-8", "replace") != kind:
            return None
        table = pq.read_table(path, partitioning=None)
    except (OSError, pa.ArrowException):
        return None  # damaged: left where it is, for doctor to name
    return table.replace_schema_metadata(None), replaced_by(meta)


def _merge(root: Path, folder: Path, group: list[Path], *, durable: bool) -> Compacted:
    kind = kind_of(group[0])
    tables, replaced, used = [], set(), []
    for path in group:
        read = _read(path, kind)
        if read is not None:
            tables.append(read[0])
            replaced.update(read[1])
            replaced.add(path.relative_to(root).as_posix())
            used.append(path)
    merged = pa.concat_tables(tables, promote_options="permissive") if tables else None
    final = folder / f"{new_writer_id()}-c0000.parquet"
    if merged is None or len(used) < 2:
        return Compacted(merged=final, replaced=(), rows=0)
    names = [n for n in _SORT[kind] if n in merged.column_names]
    merged = merged.sort_by([(n, "ascending") for n in names]).replace_schema_metadata(
        {REPLACES_KEY: json.dumps(sorted(replaced)).encode()})
    from recorder.write._segment import write_atomically  # its chain needs the event catalog

    write_atomically(merged, final, durable=durable, row_group_size=_ROW_GROUP)
    for path in used:  # the merged file is in place and names them: readers skip them
        path.unlink(missing_ok=True)
        if kind == EVENTS:
            for outline in (root / SUMMARIES).glob(f"{segment_of(path)}.*.parquet"):
                outline.unlink(missing_ok=True)
    return Compacted(merged=final, replaced=tuple(used), rows=merged.num_rows)
