"""``footprint doctor``: list damaged store files and orphaned segments; quarantine them;
count the store's redaction markers, keyed (by key id) or unkeyed (``recorder.store._redactions``).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from lens.cli._common import open_from

if TYPE_CHECKING:
    from recorder import Store
    from recorder.store._doctor import Checkup

__all__ = ["add_parser", "run"]

_ROWS_SHOWN = 20
"""Damaged records listed one by one; the rest are counted."""


def add_parser(subparsers: Any) -> None:
    """Register ``doctor`` on the CLI's sub-parsers (imports nothing heavy)."""
    p = subparsers.add_parser(
        "doctor", help="read every store file once; list damaged files, wrong cached outlines "
                       "and killed writers' segments (exit 1 when any), and count redaction "
                       "markers by key id, naming unkeyed ones; --quarantine moves damaged "
                       "files aside, rebuilds the outlines, seals the segments and removes "
                       "killed writers' lock files")
    p.add_argument("--quarantine", action="store_true",
                   help="repair: move each damaged file to quarantine/ in the store (kept, not "
                        "read), set aside the runs of damaged records (their file is copied "
                        "to quarantine/ and rewritten without them), rebuild wrong cached "
                        "outlines, seal killed writers' segments")
    p.add_argument("--store", metavar="DIR", default=None,
                   help="the store directory (default: $FOOTPRINT_STORE or ./.footprint)")


def run(args: argparse.Namespace) -> int:
    from lens.cli._doctor_compact import check_compaction
    from lens.cli._doctor_intake import check_intake
    from recorder.ingest._workdir import remote_refused

    remote_refused(args.store, "doctor", "check the bucket's files with `footprint verify "
                   "--store URI`, and a receiver's pending batches on its machine with "
                   "`footprint doctor --store` its working directory (printed at start)")
    store = open_from(args)
    checkup = _examine(store)
    _report(checkup)
    compacted = check_compaction(store, repair=args.quarantine)
    mapped = check_intake(store)
    _redactions(store)
    return _verdict(store, checkup, quarantine=args.quarantine, compacted=compacted,
                    mapped=mapped)


def _examine(store: Store) -> Checkup:
    """Read every store file once, with a progress line; print how many were checked."""
    from lens.cli._progress import progress
    from recorder.store._doctor import examine

    total = sum(map(len, (store.files.events, store.files.blobs, store.files.chain,
                          store.files.stats)))
    with progress("checking", total, "files") as advance:
        checkup = examine(store, lambda done, _: advance(done))
    print(f"checked {checkup.checked} files in {store.root}")
    return checkup


def _report(checkup: Checkup) -> None:
    """One line per finding: damaged files and outlines, edited blobs, stale locks, records
    (the first ``_ROWS_SHOWN``, the rest counted) and orphaned segments."""
    for item in checkup.damaged:
        print(f"damaged  {item.path}: {item.reason}")
    for item in checkup.outlines:
        print(f"damaged  {item.path}: cached outline {item.reason}")
    for item in checkup.edited_blobs:
        print(f"edited   {item.path}: {item.reason}")
    for lock in checkup.stale_locks:
        print(f"stale    {lock}: a killed writer's lock file (no process holds it)")
    for row in checkup.rows[:_ROWS_SHOWN]:
        print(f"damaged  {row.path}, row {row.row}: {row.reason} (run {row.run_id}, seq "
              f"{row.seq}; only that run is affected: `footprint verify {row.run_id}`)")
    if len(checkup.rows) > _ROWS_SHOWN:
        runs = len({row.run_id for row in checkup.rows})
        print(f"damaged  {len(checkup.rows) - _ROWS_SHOWN} more records ({len(checkup.rows)} "
              f"in all, of {runs} runs)")
    for orphan in checkup.orphans:
        print(f"orphaned segment {orphan.segment} (its writer, pid {orphan.pid} by its name, "
              f"holds no lock: gone; {len(orphan.files)} live files)")


def _verdict(store: Store, checkup: Checkup, *, quarantine: bool, compacted: bool,
             mapped: bool) -> int:
    """Repair when asked, else say healthy or how to repair; the exit code (0 healthy)."""
    if quarantine and not checkup.healthy:
        return max(_repair(store, checkup), 0 if compacted and mapped else 1)
    if checkup.healthy and compacted:
        if not mapped:
            return 1
        print("healthy: every file reads back whole")
        return 0
    if not quarantine and (checkup.damaged or checkup.outlines or checkup.orphans
                           or checkup.rows or checkup.stale_locks or not compacted):
        print("run `footprint doctor --quarantine` to move damaged files aside, rebuild cached "
              "outlines, seal killed writers' segments, remove their lock files and finish "
              "interrupted compactions")
    _edited_hint(checkup)
    return 1


def _redactions(store: Store) -> None:
    """One line on the store's redaction markers: keyed (by key id) or unkeyed (old)."""
    from recorder.store._redactions import marker_census
    from recorder.write._redact_key import REDACT_KEY_ENV, known_redaction_key

    census = marker_census(store)
    if not census.total:
        return
    mine = known_redaction_key()
    ids = ", ".join(f"{n} under key id {k}" + (" (yours)" if mine and mine.key_id == k else "")
                    for k, n in census.keyed.items())
    if ids:
        print(f"redaction markers: {ids}")
    if census.unkeyed:
        print(f"redaction markers: {census.unkeyed} unkeyed (sha256 of the value: anyone "
              "holding the store can test a guess, and small spaces such as card numbers fall "
              "to brute force); new records get keyed markers (a Redactor key, "
              f"${REDACT_KEY_ENV}); these stay as they are: re-keying a store is not "
              "implemented (docs/guarantees.md, 'Redaction markers')")


def _remove_locks(store: Store) -> None:
    """Remove the lock files no process holds (each taken first: a live writer's never)."""
    from recorder.write._adopt import remove_stale_locks

    for lock in remove_stale_locks(store.root):
        print(f"removed  {lock}")


def _edited_hint(checkup: Checkup) -> None:
    """What to do about edited blob copies: kept where they are (the same file holds good
    blobs), never read."""
    if checkup.edited_blobs:
        print("edited blob copies stay in place and are never read (their files hold other "
              "blobs too); `footprint verify RUN` tells whether a run reads one")


def _repair(store: Store, checkup: Checkup) -> int:
    """Move damaged files aside, rebuild outlines, seal orphans; 1 if any is left."""
    from recorder.store._doctor import orphans, quarantine, quarantine_rows
    from recorder.store._outline import outline_view
    from recorder.write._adopt import adopt_orphans

    for source, target in quarantine(store, (*checkup.damaged, *checkup.outlines)):
        print(f"moved    {source} -> {target}")
    _remove_locks(store)
    for path, run_id in quarantine_rows(store, checkup.rows):
        print(f"set aside run {run_id} from {path} (the file as found is in quarantine/)")
    if checkup.orphans:
        for segment in adopt_orphans(store.root):
            print(f"sealed   segment {segment}")
        store.refresh()
    if checkup.outlines:
        outline_view(store)
        print(f"rebuilt  {len(checkup.outlines)} cached outlines from the events files")
    left = orphans(store.root)
    for orphan in left:
        print(f"left     segment {orphan.segment}: no lock file, and pid {orphan.pid} runs "
              "(an older writer still running, or a segment no writer made); not sealed")
    _edited_hint(checkup)
    return 1 if left or checkup.edited_blobs else 0
