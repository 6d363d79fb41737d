"""``footprint doctor``: list damaged store files and orphaned segments; quarantine them."""

from __future__ import annotations

import argparse
from typing import Any

from lens.cli._common import open_from

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> None:
    """Register ``doctor`` on the CLI's sub-parsers (imports nothing heavy)."""
    p = subparsers.add_parser(
        "doctor", help="read every store file once; list damaged files and killed writers' "
                       "segments (exit 1 when any), --quarantine moves damaged files aside")
    p.add_argument("--quarantine", action="store_true",
                   help="move each damaged file to quarantine/ in the store (kept, not read)")
    p.add_argument("--store", metavar="DIR", default=None,
                   help="the store directory (default: $FOOTPRINT_STORE or ./.footprint)")


def run(args: argparse.Namespace) -> int:
    from lens.cli._progress import progress
    from recorder.store._doctor import examine, quarantine

    store = open_from(args)
    total = sum(map(len, (store.files.events, store.files.blobs, store.files.chain,
                          store.files.stats)))
    with progress("checking", total, "files") as advance:
        checkup = examine(store, lambda done, _: advance(done))
    print(f"checked {checkup.checked} files in {store.root}")
    for item in checkup.damaged:
        print(f"damaged  {item.path}: {item.reason}")
    for orphan in checkup.orphans:
        print(f"orphaned segment {orphan.segment} (writer pid {orphan.pid} is gone; "
              f"{len(orphan.files)} live files)")
    if args.quarantine and checkup.damaged:
        for source, target in quarantine(store, checkup.damaged):
            print(f"moved    {source} -> {target}")
        return 1 if checkup.orphans else 0
    if checkup.healthy:
        print("healthy: every file reads back whole")
        return 0
    if checkup.damaged:
        print("run `footprint doctor --quarantine` to move the damaged files aside")
    return 1
