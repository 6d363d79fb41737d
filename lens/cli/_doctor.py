"""``footprint doctor``: list damaged store files and orphaned segments; quarantine them."""

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
                       "and killed writers' segments (exit 1 when any); --quarantine moves "
                       "damaged files aside, rebuilds the outlines and seals the segments")
    p.add_argument("--quarantine", action="store_true",
                   help="repair: move each damaged file to quarantine/ in the store (kept, not "
                        "read), set aside the runs of damaged records (their file is copied "
                        "to quarantine/ and rewritten without them), rebuild wrong cached "
                        "outlines, seal killed writers' segments")
    p.add_argument("--store", metavar="DIR", default=None,
                   help="the store directory (default: $FOOTPRINT_STORE or ./.footprint)")


def run(args: argparse.Namespace) -> int:
    from lens.cli._progress import progress
    from recorder.store._doctor import examine

    store = open_from(args)
    total = sum(map(len, (store.files.events, store.files.blobs, store.files.chain,
                          store.files.stats)))
    with progress("checking", total, "files") as advance:
        checkup = examine(store, lambda done, _: advance(done))
    print(f"checked {checkup.checked} files in {store.root}")
    for item in checkup.damaged:
        print(f"damaged  {item.path}: {item.reason}")
    for item in checkup.outlines:
        print(f"damaged  {item.path}: cached outline {item.reason}")
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
    if args.quarantine and not checkup.healthy:
        return _repair(store, checkup)
    if checkup.healthy:
        print("healthy: every file reads back whole")
        return 0
    print("run `footprint doctor --quarantine` to move damaged files aside, rebuild cached "
          "outlines and seal killed writers' segments")
    return 1


def _repair(store: Store, checkup: Checkup) -> int:
    """Move damaged files aside, rebuild outlines, seal orphans; 1 if any is left."""
    from recorder.store._doctor import orphans, quarantine, quarantine_rows
    from recorder.store._outline import outline_view
    from recorder.write._adopt import adopt_orphans

    for source, target in quarantine(store, (*checkup.damaged, *checkup.outlines)):
        print(f"moved    {source} -> {target}")
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
    return 1 if left else 0
