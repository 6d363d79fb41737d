"""A crash is not a tamper: the unheaded tail a killed writer leaves, told apart from a head
removed.

A writer appends a batch's rows, then its heads (``recorder.write._segment``).
Killed between the two, it leaves the batch's rows with no head over them,
forever: its segment stays live until a later writer (or ``footprint
doctor --quarantine``) seals it by adoption (``recorder.write._adopt``, which
marks the files it seals with :data:`~recorder.write._adopt.ADOPTED_KEY`).
:func:`stopped_writer` says whether a run's unheaded rows are exactly that:

* they are all in one segment, and are its last rows: no head of that
  segment (of any run) ends on a row written after the first of them;
* the segment's chain file is not among the damaged files (a lost chain
  file is damage, not a crash);
* the segment is live with its writer gone, or sealed by adoption and its
  writer wrote no later segment (a writer that went on sealed it itself,
  heads and all).

Anything else — a head missing in the middle of a segment, a segment sealed
by its own writer, a compacted file — stays a broken chain. The rows are
then *not proven*: nothing binds them (a forger could have written them),
which the verdict says.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from recorder.store._damage import guarded
from recorder.write._adopt import ADOPTED_KEY, writer_alive, writer_of
from recorder.write._layout import CHAIN, LIVE, segment_of
from recorder.write._live import read_live

if TYPE_CHECKING:
    from recorder.store._catalog import Store

__all__ = ["stopped_writer"]


def _quoted(paths: list[Path]) -> str:
    return "[" + ", ".join("'" + str(p).replace("'", "''") + "'" for p in paths) + "]"


def _holder(store: Store, run_id: str, block: int) -> tuple[str, Path, bool] | None:
    """``(segment, file, live)`` of the one file holding the run's rows from ``block`` on."""
    live = [s for s, lasts in store.files.live_segments.items()
            if lasts.get(run_id, -1) >= block]
    if live:
        return (live[0], store.root / LIVE / f"{live[0]}.events.arrows", True) \
            if len(live) == 1 else None
    if not store.files.events:
        return None

    def files() -> list[tuple[str]]:  # the file list of the scan the query runs on
        return store.con.execute(
            f"SELECT DISTINCT filename FROM read_parquet({_quoted(store.files.events)}, "
            "union_by_name = true, filename = true) WHERE run_id = ? AND seq >= ?",
            [run_id, block]).fetchall()

    names = {str(n) for (n,) in guarded(store, files)}
    if len(names) != 1:
        return None
    path = Path(names.pop())
    return segment_of(path), path, False


def _rows(path: Path, live: bool) -> list[tuple[str, int]]:
    """``(run_id, seq)`` of every row of the file, in the order the writer wrote them."""
    if live:
        table = pa.Table.from_batches(read_live(path)) if path.exists() else pa.table({})
    else:
        table = pq.read_table(path, columns=["run_id", "seq"], partitioning=None)
    if not table.num_rows:
        return []
    return list(zip(table.column("run_id").to_pylist(), table.column("seq").to_pylist(),
                    strict=True))


def _later_segment(store: Store, segment: str) -> bool:
    """Whether the segment's writer wrote a segment after it (sealed or live)."""
    writer, number = writer_of(segment), segment.rsplit("-", 1)[-1]
    names = {segment_of(p) for p in store.files.events} | set(store.files.live_segments)
    return any(writer_of(n) == writer and n.rsplit("-", 1)[-1] > number for n in names)


def _chain_damaged(store: Store, segment: str) -> bool:
    damaged = {*store.damaged, *store.files.reasons}
    return any(segment_of(p) == segment and (p.parent.name in (CHAIN, LIVE))
               for p in damaged)


def stopped_writer(store: Store, run_id: str, block: int, last: int) -> str | None:
    """Why the run's unheaded seqs ``block..last`` are a killed writer's last batch (the
    segment, and how it stands), or ``None`` when they are not, or when that cannot be
    read now (a file sealed or merged meanwhile): the chain then reads as broken."""
    try:
        return _stopped(store, run_id, block, last)
    except (OSError, duckdb.Error, pa.ArrowException):
        return None


def _stopped(store: Store, run_id: str, block: int, last: int) -> str | None:
    found = _holder(store, run_id, block)
    if found is None:
        return None
    segment, path, live = found
    if _chain_damaged(store, segment):
        return None
    if live:
        if writer_alive(store.root, writer_of(segment)):
            return None
        how = "still live, its writer gone"
    else:
        meta = pq.read_metadata(path).metadata or {}
        if ADOPTED_KEY not in meta or _later_segment(store, segment):
            return None
        how = "sealed by adoption after its writer died"
    rows = _rows(path, live)
    try:
        first = rows.index((run_id, block))
    except ValueError:
        return None
    position = {row: at for at, row in enumerate(rows)}
    ends = store.rows("SELECT run_id, last_seq FROM _chain_all WHERE segment = ?", [segment])
    if any(position.get((str(r), int(s)), -1) >= first for r, s in ends):
        return None  # a head after them: the writer went on, so theirs was removed
    if not all(block <= seq <= last for run, seq in rows[first:] if run == run_id):
        return None
    return f"segment {segment}, {how}; rows {first}..{len(rows) - 1} of {path}"
