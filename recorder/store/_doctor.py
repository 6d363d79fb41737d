"""``examine`` a store: every damaged file, every orphaned live segment; ``quarantine`` them.

A full check reads every value of every sealed file once (DuckDB validates
each page and every string's UTF-8 on the way), adds the files discovery
already refused (torn footer, wrong column types, a live segment in another
schema), lists the live segments whose writer process is gone (a killed
writer's leftovers), and compares every cached outline with the outline
computed anew from its events file (a damaged, stale or edited cache).
:func:`quarantine` moves damaged files to ``quarantine/`` under the store
(keeping their relative path), where no reader looks.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from recorder.store._costs import call_facts
from recorder.store._damage import file_problem
from recorder.store._outline import Outlines, outline_name, outline_problem
from recorder.store._rows_check import DamagedRow, bad_rows
from recorder.write._adopt import stale_locks, writer_alive, writer_of
from recorder.write._layout import LIVE, QUARANTINE, SUMMARIES, is_live_stream, segment_of
from recorder.write._scorehead import SCORE_HEADS

if TYPE_CHECKING:
    from recorder.store._base import StoreView

__all__ = ["Checkup", "DamagedFile", "DamagedRow", "Orphan", "bad_outlines", "damaged_rows",
           "edited_blobs", "examine", "junk_live", "orphans", "quarantine", "quarantine_rows"]

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class DamagedFile:
    """A store file no reader can use, and why."""

    path: Path
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Orphan:
    """A live segment whose writer (``pid``) is no longer running."""

    segment: str
    pid: int
    files: tuple[Path, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Checkup:
    """What :func:`examine` found."""

    checked: int
    damaged: tuple[DamagedFile, ...]
    orphans: tuple[Orphan, ...]
    outlines: tuple[DamagedFile, ...] = ()
    """Cached outlines (derived data) that do not read or disagree with their events file."""
    stale_locks: tuple[Path, ...] = ()
    """Lock files of writers killed with nothing unsealed (``recorder.write._adopt``)."""
    edited_blobs: tuple[DamagedFile, ...] = ()
    """Blob files holding a copy whose text does not hash to its key (readers skip it)."""
    rows: tuple[DamagedRow, ...] = ()
    """Records of files that read back whole whose payload is damaged (one run each)."""

    @property
    def healthy(self) -> bool:
        return not (self.damaged or self.orphans or self.outlines or self.edited_blobs
                    or self.stale_locks or self.rows)


def _pid_of(segment: str) -> int | None:
    """The writer pid in a segment id (``<utc>-<pid>-<random>-<n>``), if it has one."""
    parts = segment.split("-")
    return int(parts[1]) if len(parts) >= 3 and parts[1].isdigit() else None


def orphans(root: Path) -> list[Orphan]:
    """Live segments under ``root`` whose writer does not hold its lock (killed without
    sealing them, or a segment no writer of ours made)."""
    by_segment: dict[str, list[Path]] = {}
    for path in sorted((root / LIVE).glob("*.arrows")):
        if not path.name.startswith((".", "_")):
            by_segment.setdefault(segment_of(path), []).append(path)
    found = []
    for segment, files in by_segment.items():
        if not writer_alive(root, writer_of(segment)):  # a pid in a name proves nothing
            found.append(Orphan(segment=segment, pid=_pid_of(segment) or 0, files=tuple(files)))
    return found


def examine(store: StoreView, progress: Progress | None = None) -> Checkup:
    """Read every sealed file once; return the damaged ones and the orphaned segments."""
    f = store.files
    files = [*f.events, *f.blobs, *f.chain, *f.stats]
    damaged = {p: why for p, why in store.damaged.items()}
    damaged.update({p: f.reasons.get(p, "unreadable") for p in f.skipped if p not in damaged})
    damaged.update({j.path: j.reason for j in junk_live(store.root)})
    for done, path in enumerate(files, 1):
        why = file_problem(store.con, path)
        if why is not None:
            damaged[path] = why
        if progress is not None:
            progress(done, len(files))
    heads = store.root / SCORE_HEADS
    why = file_problem(store.con, heads) if heads.exists() else None
    if why is not None:  # verify then reads every run's scores as of unknown completeness
        damaged[heads] = f"the store's score heads: {why}"
    return Checkup(
        checked=len(files) + len(f.skipped),
        damaged=tuple(DamagedFile(path=p, reason=r) for p, r in sorted(damaged.items())),
        orphans=tuple(o for o in orphans(store.root) if not damaged.keys() & set(o.files)),
        outlines=tuple(bad_outlines(store, [p for p in f.events if p not in damaged])),
        edited_blobs=tuple(edited_blobs(store, [p for p in f.blobs if p not in damaged])),
        stale_locks=tuple(stale_locks(store.root)),
        rows=tuple(damaged_rows(store, [p for p in f.events if p not in damaged])))


def junk_live(root: Path) -> list[DamagedFile]:
    """Streams in ``live/`` named like none a writer makes: no writer holds a lock for them,
    so none seals them, and no adopter may (their writer cannot be told gone)."""
    return [DamagedFile(path=path, reason="not a writer's live stream (its name is none a "
                                          "writer gives); no writer will seal it")
            for path in sorted((root / LIVE).glob("*.arrows"))
            if not path.name.startswith((".", "_")) and not is_live_stream(path.name)]


def edited_blobs(store: StoreView, blobs: Iterable[Path]) -> list[DamagedFile]:
    """The sealed blob files holding a copy whose text does not hash to its key (an
    edited text): every reader skips such a copy (``recorder.store._views.BLOB_MATCHES``)."""
    found = []
    for path in blobs:
        try:
            rows = store.con.execute(
                "SELECT hash FROM read_parquet(?) WHERE NOT coalesce(sha256(text) = hash, "
                "false) ORDER BY hash", [str(path)]).fetchall()
        except duckdb.Error:
            continue  # a file that does not read is named damaged by file_problem
        if rows:
            named = ", ".join(str(h)[:16] for (h,) in rows[:3])
            more = f" and {len(rows) - 3} more" if len(rows) > 3 else ""
            found.append(DamagedFile(path=path, reason=(
                f"{len(rows)} blob text(s) do not match their hash (edited: {named}{more}); "
                "readers skip those copies")))
    return found


def damaged_rows(store: StoreView, events: Iterable[Path]) -> list[DamagedRow]:
    """The records of the readable events files whose payload is not JSON or fails its
    row check (``recorder.store._rows_check``)."""
    found: list[DamagedRow] = []
    for path in events:
        try:
            found += bad_rows(store.con, path)
        except (duckdb.Error, OSError, pa.ArrowException):
            continue  # a file that does not read is listed as a damaged file
    return found


def _ordered(table: pa.Table) -> pa.Table:
    return table.sort_by([(n, "ascending") for n in ("level", "run_id", "iteration", "type",
                                                     "first_seq")])


def bad_outlines(store: StoreView, events: Iterable[Path]) -> list[DamagedFile]:
    """The cached outlines of ``events`` that do not read, or differ from the outline
    computed anew from their events file (damaged, stale or edited)."""
    found = []
    for path in events:
        try:
            cached = store.root / SUMMARIES / outline_name(path)
        except OSError:
            continue
        if not cached.exists():
            continue
        why = outline_problem(cached)
        if why is None:
            try:
                fresh, read = Outlines.compute(store.con, path), pq.read_table(cached)
                if not _ordered(read).equals(_ordered(fresh)) or call_facts(
                        read.schema.metadata) != call_facts(fresh.schema.metadata):
                    why = "disagrees with its events file (edited or stale)"
            except (OSError, pa.ArrowException, duckdb.Error) as exc:
                why = f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
        if why is not None:
            found.append(DamagedFile(path=cached, reason=why))
    return found


def quarantine(store: StoreView, damaged: Iterable[DamagedFile]) -> list[tuple[Path, Path]]:
    """Move each damaged file to ``quarantine/<its path in the store>``; ``(from, to)`` pairs.

    The store is rescanned afterwards, so it reads on without them.
    """
    moved = []
    for item in damaged:
        source = item.path
        try:
            relative = source.resolve().relative_to(store.root.resolve())
        except ValueError:
            continue  # not under this store: never move it
        target = store.root / QUARANTINE / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.exists():
            os.replace(source, target)
            moved.append((source, target))
    store.damaged.clear()
    store.outlines.rebuilt.clear()
    store.refresh()
    return moved


def quarantine_rows(store: StoreView, rows: Iterable[DamagedRow]) -> list[tuple[Path, str]]:
    """Set each damaged record's run aside: its file is copied whole to ``quarantine/``
    (kept as found), and rewritten in place without that run's rows, marker and metadata
    kept; the file's other runs read and verify as before. ``(file, run)`` pairs set aside.

    The run itself then verifies as missing its records (its heads remain): that is what
    it is. The store is rescanned afterwards."""
    by_file: dict[Path, set[str]] = {}
    for row in rows:
        by_file.setdefault(row.path, set()).add(row.run_id)
    moved = []
    for path, runs in sorted(by_file.items()):
        try:
            relative = path.resolve().relative_to(store.root.resolve())
        except ValueError:
            continue  # not under this store: never touch it
        table = pq.read_table(path, partitioning=None)
        kept = table.filter(pc.invert(pc.is_in(table.column("run_id"),
                                                pa.array(sorted(runs), pa.string()))))
        target = store.root / QUARANTINE / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
        temp = path.with_name(f".{path.name}.quarantine")
        pq.write_table(kept, temp)
        os.replace(temp, path)
        moved += [(path, run) for run in sorted(runs)]
    store.refresh()
    return moved
