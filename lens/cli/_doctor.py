"""``footprint doctor``: list damaged store files and orphaned segments; quarantine them."""

from __future__ import annotations

import argparse
from typing import Any

from lens.cli._common import open_from

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> None:
    """Register ``doctor`` on the CLI's sub-parsers (imports nothing heavy)."""
    p = subparsers.add_parser(
        "doctor", help="read every store file once; list damaged files, wrong cached outlines "
                       "and killed writers' segments (exit 1 when any), --quarantine moves "
                       "damaged files aside and rebuilds the outlines")
    p.add_argument("--quarantine", action="store_true",
                   help="move each damaged file to quarantine/ in the store (kept, not read)")
    p.add_argument("--store", metavar="DIR", default=None,
                   help="the store directory (default: $FOOTPRINT_STORE or ./.footprint)")


def run(args: argparse.Namespace) -> int:
    from lens.cli._progress import progress
    from recorder.store._doctor import examine, quarantine
    from recorder.store._outline import outline_view as rebuild_outlines

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
    for orphan in checkup.orphans:
        print(f"orphaned segment {orphan.segment} (writer pid {orphan.pid} is gone; "
              f"{len(orphan.files)} live files)")
    if args.quarantine and (checkup.damaged or checkup.outlines):
        for source, target in quarantine(store, (*checkup.damaged, *checkup.outlines)):
            print(f"moved    {source} -> {target}")
        if checkup.outlines:
            rebuild_outlines(store)
            print(f"rebuilt  {len(checkup.outlines)} cached outlines from the events files")
        return 1 if checkup.orphans else 0
    if checkup.healthy:
        print("healthy: every file reads back whole")
        return 0
    if checkup.damaged or checkup.outlines:
        print("run `footprint doctor --quarantine` to move the damaged files aside "
              "(and rebuild the cached outlines)")
    return 1
